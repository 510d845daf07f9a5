/* history: appends one compact JSON line per run to a history file (cron/systemd timers), safely: one write, O_APPEND, locked, fsync. */
#ifndef BM_HISTORY_H
#define BM_HISTORY_H

#include "client/model/result.h"

/* Writes r to path; 0, or -1 after logging one clear sentence. Reads r only. */
int history_append(const struct test_result *r, const char *path);
/* The same for a run that measured nothing: one line with status "failed" and its error. */
int history_append_failed(const struct test_result *r, const char *path);

#endif

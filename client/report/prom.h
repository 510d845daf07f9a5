/* prom: a Prometheus node_exporter textfile of a run, written atomically (temp file + rename). */
#ifndef BM_PROM_H
#define BM_PROM_H

#include "client/model/result.h"

/* Writes r to path; 0, or -1 after logging one clear sentence. Reads r only. */
int prom_write(const struct test_result *r, const char *path);

#endif

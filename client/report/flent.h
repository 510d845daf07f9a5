/* flent: a gzip'd flent data file (version 4, rrul series names) that flent 2.1.1 can plot. */
#ifndef BM_FLENT_H
#define BM_FLENT_H

#include "client/model/result.h"

/* Writes r to path; 0, or -1 after logging one clear sentence. Reads r only. */
int flent_write(const struct test_result *r, const char *path);

#endif

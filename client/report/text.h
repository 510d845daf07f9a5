/* text: the human summary of a test_result. Only reads the result. Layer: client/report;
 * called by the command line. */
#ifndef BM_REPORT_TEXT_H
#define BM_REPORT_TEXT_H

#include <stdio.h>

#include "client/model/result.h"

/* Prints the summary (header, per-phase table, buffers, warnings, lab truth) to out. */
void report_text(const struct test_result *r, FILE *out);

#endif

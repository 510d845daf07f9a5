/* text_probes: the text summary's part for the auxiliary probe kinds. Layer: client/report;
 * called by client/report/text.c. */
#ifndef BM_REPORT_TEXT_PROBES_H
#define BM_REPORT_TEXT_PROBES_H

#include <stdio.h>

#include "client/model/result.h"

/* The per-probe-kind table, RPM and ICMP lines of the text summary (nothing without them). */
void report_text_probes(const struct test_result *r, FILE *out);

#endif

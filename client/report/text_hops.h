/* text_hops: the text summary's per-hop section (--per-hop): a table of the hops in the judged
 * phase and the queue location with its evidence. Layer: client/report; called by text.c. */
#ifndef BM_REPORT_TEXT_HOPS_H
#define BM_REPORT_TEXT_HOPS_H

#include <stdio.h>

#include "client/model/result.h"

/* Prints the section; nothing when --per-hop was not given or could not run. */
void report_text_hops(const struct test_result *r, FILE *out);

#endif

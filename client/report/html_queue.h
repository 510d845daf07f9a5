/* html_queue: the HTML page's section on the queue — what manages it in each loaded direction
 * (the queue verdict with its evidence and advice), ECN (--ecn: marks or drops), and where it
 * builds (--per-hop: each hop's RTT by phase and the verdict naming the hop). Reads the result
 * only; writes nothing when none of them ran. Layer: client/report; called by html.c. */
#ifndef BM_REPORT_HTML_QUEUE_H
#define BM_REPORT_HTML_QUEUE_H

#include "client/model/result.h"
#include "client/report/svg.h"

void html_queue_section(struct svg_buf *b, const struct test_result *r);

#endif

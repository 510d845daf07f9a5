/* queuewords: the queue verdict (client/analysis/queueverdict) in words — a short phrase for the
 * verdict block and per-direction advice on what to change. Reads the result only. Layer:
 * client/report; used by verdict.c, text.c and html.c. */
#ifndef BM_REPORT_QUEUEWORDS_H
#define BM_REPORT_QUEUEWORDS_H

#include <stddef.h>

#include "client/model/result.h"

/* "tail-drop FIFO, 100 ms", "AQM near 5 ms, marks", "flow queuing", "policer", "unknown". */
void queuewords_phrase(const struct queue_verdict *v, char *buf, size_t len);
/* What to change for this verdict; shaper_mbps is the 90 % advice (NAN unknown). Empty for
 * unknown. */
void queuewords_advice(const struct queue_verdict *v, double shaper_mbps, char *buf, size_t len);

#endif

/* queuewords: the queue verdict (client/analysis/queueverdict) in words — a short phrase for the
 * verdict block and per-direction advice on what to change. Reads the result only. Layer:
 * client/report; used by verdict.c, text.c and html.c. */
#ifndef BM_REPORT_QUEUEWORDS_H
#define BM_REPORT_QUEUEWORDS_H

#include <stddef.h>

#include "client/model/result.h"

/* "tail-drop FIFO, 100 ms", "AQM near 5 ms, marks", "flow queuing", "policer", "unknown". b is
 * the same direction's buffer estimate (NULL: none): where it is a lower bound, the FIFO's size
 * is one too and reads "≥" the buffer's figure, as the buffer line does, not the verdict's top
 * (the point estimate before the bound raised it). */
void queuewords_phrase(const struct queue_verdict *v, const struct buffer_estimate *b, char *buf,
		       size_t len);
/* What to change for this verdict; shaper_mbps is the 90 % advice (NAN unknown). Empty for
 * unknown. */
void queuewords_advice(const struct queue_verdict *v, double shaper_mbps, char *buf, size_t len);

#endif

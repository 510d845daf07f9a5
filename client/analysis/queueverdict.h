/* queueverdict: what manages the queue of one loaded direction — a tail-drop FIFO, an AQM, flow
 * queuing, a policer, or unknown — from figures the analysis already made (the probes' queueing
 * delay, where the probes were lost, the load flows' own RTT, drops and CE marks), with one
 * evidence sentence. Pure functions; client/analysis calls it, the writers read the result. */
#ifndef BM_QUEUEVERDICT_H
#define BM_QUEUEVERDICT_H

#include <stddef.h>
#include <stdint.h>

#include "client/model/result.h"

/* One loaded direction's evidence (NAN where unknown). */
struct queueverdict_input {
	int saturated;            /* the phase reached the link's rate */
	double rate_mbps;         /* IP-level rate of the direction */
	double q_p50_ms;          /* the probes' queueing delay in the steady window: standing queue */
	double q_p95_ms;
	double floor_ms;          /* median of the probes' 100 ms minima: the queue's floor */
	double top_ms;            /* the top of the queue: the buffer estimate (median of 1 s maxima) */
	double sustained_ms;      /* the second-highest 1 s maximum */
	size_t lost;              /* probes this direction lost in the steady window */
	double q_before_ms;       /* median queueing delay just before those losses' periods (the
				   * steady window's, as the top: not slow start's overshoot) */
	int64_t retrans;          /* load flows' retransmissions (-1 unknown) */
	int64_t ce;               /* CE-marked packets seen this way (-1 unknown) */
	double flow_q_ms;         /* the load flows' in-flow queueing delay (TCP RTT p50 − idle RTT) */
};

/* Classifies into v (verdict, evidence, standing_ms, ...). */
void queueverdict_classify(const struct queueverdict_input *in, struct queue_verdict *v);

#endif

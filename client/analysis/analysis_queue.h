/* analysis_queue: gathers each loaded direction's evidence from the run (probes' queueing delay,
 * the load flows' TCP_INFO RTT, drops, CE marks) and has queueverdict classify it into
 * r->queue_down / r->queue_up; a definite verdict sets the direction's estimates' `managed`
 * (fifo: no; aqm, fq, policer: yes). Layer: client/analysis; called by analysis_run after the buffer
 * estimates, drop patterns and analysis_ecn, before lowerbound_apply raises the estimates. */
#ifndef BM_ANALYSIS_QUEUE_H
#define BM_ANALYSIS_QUEUE_H

#include "client/model/result.h"

/* floor_*_ms: the queue's floor in the download / upload phase (analysis.c measures it from
 * the probes; NAN unknown). */
void analysis_queue(struct test_result *r, double floor_down_ms, double floor_up_ms);

#endif

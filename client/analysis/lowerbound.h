/* lowerbound: honesty about the buffer estimates. Where the evidence says a direction's queue
 * did not sit at its top — a delay-based congestion control such as bbr, loss at random rather
 * than at a full queue, a managed queue, an unstable top — the estimate becomes a lower bound
 * with its reason and a warning; every lower bound then reports the highest sustained queue
 * seen. Pure. Layer: client/analysis; called by analysis_run once the loss patterns are
 * known. */
#ifndef BM_LOWERBOUND_H
#define BM_LOWERBOUND_H

#include "client/model/result.h"

/* Whether the congestion control named cc keeps the bottleneck queue short by design (bbr and
 * the delay-based ones), so the queue's top is not reached. */
int lowerbound_cc_short_queue(const char *cc);

/* Marks and raises the buffer estimates of r (see above). */
void lowerbound_apply(struct test_result *r);

#endif

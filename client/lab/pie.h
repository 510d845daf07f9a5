/* pie: PIE, RFC 8033 — a drop (or, with ECN, mark) probability updated every t_update from the
 * queue delay's distance to its reference and its trend, applied at enqueue, with a burst
 * allowance. The queue delay is the head packet's sojourn time (timestamps, RFC 8033 section
 * 5.2's alternative to the departure-rate estimate). Pure (time passed in); called by the lab
 * shaper loop. */
#ifndef BM_LAB_PIE_H
#define BM_LAB_PIE_H

#include <stdint.h>

#include "client/lab/fifoq.h"

#define PIE_QDELAY_REF_NS 15000000ull  /* RFC 8033 section 4.1: 15 ms */
#define PIE_T_UPDATE_NS 15000000ull    /* 15 ms */
#define PIE_MAX_BURST_NS 150000000ull  /* 150 ms */

struct pie {
	uint64_t qdelay_ref_ns, t_update_ns;
	double alpha, beta;         /* per second: 0.125 and 1.25 */
	int ecn;                    /* mark ECT packets while drop_prob <= 10 % */
	double drop_prob;
	uint64_t qdelay_old_ns;
	uint64_t burst_allowance_ns;
	uint64_t next_update_ns;
	uint64_t rng;               /* xorshift64 state: reproducible runs */
	uint64_t drops, marks;
};

void pie_init(struct pie *p, int ecn, uint64_t seed, uint64_t now_ns);

/* The queue delay q has now: the head packet's sojourn, 0 when empty. */
uint64_t pie_qdelay(const struct fifoq *q, uint64_t now_ns);

/* Runs the probability updates due by now_ns (one per t_update elapsed). */
void pie_update(struct pie *p, const struct fifoq *q, uint64_t now_ns);

/* Enqueues pkt on q unless PIE (or q's byte limit) drops it: 0 queued (perhaps CE-marked),
 * -1 dropped (and freed). */
int pie_enqueue(struct pie *p, struct fifoq *q, struct lab_pkt *pkt, uint64_t now_ns);

#endif

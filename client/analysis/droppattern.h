/* droppattern: which direction lost each probe, loss periods and distances (RFC 3357), the
 * Gilbert model, the queueing delay just before losses, and a drop-pattern classification
 * (outage, random, policer, AQM, tail-drop, mixed) with its evidence. Pure functions. */
#ifndef BM_DROPPATTERN_H
#define BM_DROPPATTERN_H

#include <stddef.h>
#include <stdint.h>

#include "client/model/result.h"

/* For every probe, the probability that it was lost upstream (0 for received probes): within
 * a run of losses between two replies, the server's received-counts say how many of the run
 * were lost upstream; the tail is resolved with final_count (0 = unknown: upstream). */
void droppattern_shares(const struct probe_rec *p, size_t n, uint64_t final_count, double *up_share);

/* Measures one direction's losses among probes sent in [from, to): a probe counts as lost
 * upstream when its share is at least 0.5, downstream otherwise. q_ms[i] is probe i's
 * queueing delay in this direction (NAN if not received); "before a loss" is the last reply
 * within 1 s before a period starts. Leaves cls/confidence/evidence empty. */
void droppattern_measure(const struct probe_rec *p, size_t n, const double *up_share, int upstream,
			 int64_t from, int64_t to, const double *q_ms, struct loss_pattern *lp);

#define DROPPATTERN_GMIN 16 /* RFC 3611's default minimum gap */

/* What the classifier needs beyond the pattern itself. */
struct droppattern_context {
	int loaded;             /* the phase carried load (in any direction) */
	double interval_ms;     /* probe interval */
	double loss_pct;        /* this direction's loss in this phase */
	double idle_loss_pct;   /* the same direction in the idle phase (NAN if none) */
	double q_p95_ms;        /* this direction's queueing delay in the phase's window */
	double q_top_ms;        /* the top of its standing queue (the buffer estimate made in
				 * this phase and direction); 0 or NAN: none, use q_p95_ms */
};

/* Classifies, in order: outage (a period of ≥ 500 ms), random (idle or loss no higher than
 * idle's, short runs), policer (loaded, q p95 < 15 ms), AQM (q p95 < 30 ms, q before losses
 * < half the p95), tail-drop (q before losses ≥ 0.8 × the top of the queue, or × q p95 where
 * no buffer estimate was made), else mixed; with evidence numbers and a confidence that grows
 * with the number of loss periods (10 or more: 1). The references are never the p99 or max:
 * host stalls of 5–25 ms inflate them on small VMs (and at times the p95 too, hence the top). */
void droppattern_classify(struct loss_pattern *lp, const struct droppattern_context *ctx);

#endif

/* droppattern: per-direction loss structure and its classification. */
#include "client/analysis/droppattern.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/stats.h"

/* Upstream share of the losses between replies s1 < s2 (s1 = -1: start; s2 = n: the end,
 * counted with the server's final count). The server received c2 - c1 of the s2 - s1
 * requests s1+1..s2, so (s2 - s1) - (c2 - c1) of them were lost upstream. */
static double gap_up_share(long s1, uint64_t c1, long s2, uint64_t c2)
{
	double lost = (double)(s2 - s1 - 1);
	double up = (double)(s2 - s1) - ((double)c2 - (double)c1);

	if (lost <= 0)
		return 0;
	if (up < 0) /* reordering or duplicates: clamp */
		up = 0;
	if (up > lost)
		up = lost;
	return up / lost;
}

void droppattern_shares(const struct probe_rec *p, size_t n, uint64_t final_count, double *up_share)
{
	long prev = -1;
	uint64_t prev_count = 0;

	for (size_t i = 0; i < n; i++) {
		size_t next = i;
		uint64_t next_count;
		double share;

		up_share[i] = 0;
		if (p[i].received) {
			prev = (long)i;
			prev_count = p[i].srv_count;
			continue;
		}
		while (next < n && !p[next].received)
			next++;
		if (next < n)
			next_count = p[next].srv_count;
		else
			next_count = final_count ? final_count + 1 : prev_count + 1;
		share = next < n || final_count ? gap_up_share(prev, prev_count, (long)next, next_count)
						: 1.0; /* unknown: blame upstream */
		for (size_t j = i; j < next; j++)
			up_share[j] = share;
		i = next - 1;
	}
}

/* Is probe i lost in this direction? */
static int lost_here(const struct probe_rec *p, const double *up_share, size_t i, int upstream)
{
	return !p[i].received && (up_share[i] >= 0.5) == (upstream != 0);
}

/* Queueing delay of the last reply within 1 s before probe i, or NAN. */
static double q_before(const struct probe_rec *p, const double *q_ms, size_t i)
{
	for (size_t j = i; j-- > 0;) {
		if (p[i].send_ns - p[j].send_ns > NS_PER_SEC)
			break;
		if (p[j].received && !isnan(q_ms[j]))
			return q_ms[j];
	}
	return NAN;
}

/* RFC 3611 burst/gap: a burst runs from a loss to the last loss that follows with fewer than
 * Gmin probes received in between, and holds at least two losses; isolated losses belong to
 * the gaps. Fills bursts and the two densities. */
static void burst_gap(const struct probe_rec *p, size_t n, const double *up_share, int upstream,
		      int64_t from, int64_t to, struct loss_pattern *lp)
{
	size_t total = 0, first = 0, last = 0, in_losses = 0, burst_probes = 0, burst_losses = 0;
	size_t since = 0, all_losses = 0;
	int open = 0;

	lp->bursts = 0;
	for (size_t i = 0; i <= n; i++) {
		int end = i == n || p[i].send_ns >= to;
		int in = !end && p[i].send_ns >= from;

		if (in && !lost_here(p, up_share, i, upstream)) {
			total++;
			since++;
			continue;
		}
		if (in) {
			total++;
			all_losses++;
			if (open && since < DROPPATTERN_GMIN) {
				last = total;
				in_losses++;
				since = 0;
				continue;
			}
		}
		/* close the open cluster: a burst if it held two losses or more */
		if (open && in_losses >= 2) {
			lp->bursts++;
			burst_probes += last - first + 1;
			burst_losses += in_losses;
		}
		open = in;
		first = last = total;
		in_losses = 1;
		since = 0;
		if (end)
			break;
	}
	lp->burst_density = burst_probes ? (double)burst_losses / (double)burst_probes : NAN;
	lp->gap_density = total > burst_probes
				  ? (double)(all_losses - burst_losses) / (double)(total - burst_probes) : NAN;
}

void droppattern_measure(const struct probe_rec *p, size_t n, const double *up_share, int upstream,
			 int64_t from, int64_t to, const double *q_ms, struct loss_pattern *lp)
{
	size_t run = 0, last_start = 0, zeros = 0, ones = 0, t01 = 0, t10 = 0, nq = 0, dist_n = 0;
	double dist_sum = 0, *qb = malloc((n + 1) * sizeof(*qb));
	int prev = -1, have_start = 0;

	memset(lp, 0, sizeof(*lp));
	lp->mean_distance = lp->gilbert_p = lp->gilbert_r = lp->q_before_ms = NAN;
	for (size_t i = 0; i < n; i++) {
		int l;

		if (p[i].send_ns < from || p[i].send_ns >= to)
			continue;
		l = lost_here(p, up_share, i, upstream);
		if (prev == 0) { /* Gilbert: transitions out of the good and the bad state */
			zeros++;
			t01 += (size_t)l;
		} else if (prev == 1) {
			ones++;
			t10 += (size_t)!l;
		}
		if (l) {
			lp->lost++;
			if (prev != 1) { /* a period starts */
				lp->periods++;
				if (have_start) {
					dist_sum += (double)(i - last_start);
					dist_n++;
				}
				last_start = i;
				have_start = 1;
				double qbl = q_before(p, q_ms, i);

				if (qb && !isnan(qbl))
					qb[nq++] = qbl;
			}
			run++;
			if (run > lp->max_period)
				lp->max_period = run;
		} else {
			run = 0;
		}
		prev = l;
	}
	if (lp->periods)
		lp->mean_period = (double)lp->lost / (double)lp->periods;
	if (dist_n)
		lp->mean_distance = dist_sum / (double)dist_n;
	if (zeros)
		lp->gilbert_p = (double)t01 / (double)zeros;
	if (ones)
		lp->gilbert_r = (double)t10 / (double)ones;
	if (qb && nq)
		lp->q_before_ms = stats_percentile(qb, nq, 50);
	free(qb);
	burst_gap(p, n, up_share, upstream, from, to, lp);
}

static void classify_as(struct loss_pattern *lp, const char *cls, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void classify_as(struct loss_pattern *lp, const char *cls, const char *fmt, ...)
{
	va_list ap;

	lp->cls = cls;
	va_start(ap, fmt);
	vsnprintf(lp->evidence, sizeof(lp->evidence), fmt, ap);
	va_end(ap);
}

void droppattern_classify(struct loss_pattern *lp, const struct droppattern_context *ctx)
{
	double outage_probes = ceil(500.0 / ctx->interval_ms);
	int top = ctx->q_top_ms > 0; /* false for NAN too */
	double ref = top ? ctx->q_top_ms : ctx->q_p95_ms;

	lp->confidence = fmin(1.0, (double)lp->periods / 10.0);
	if (lp->lost == 0) {
		lp->confidence = 1.0;
		classify_as(lp, "none", "no probe lost");
	} else if ((double)lp->max_period >= outage_probes) {
		classify_as(lp, "outage", "%zu consecutive probes (%.0f ms) lost", lp->max_period,
			    (double)lp->max_period * ctx->interval_ms);
	} else if (lp->mean_period <= 1.5 &&
		   (!ctx->loaded || (!isnan(ctx->idle_loss_pct) && ctx->idle_loss_pct > 0 &&
				     ctx->loss_pct <= 2 * ctx->idle_loss_pct + 0.2))) {
		classify_as(lp, "random", "loss %.2f %% (idle %.2f %%), mean run %.2f probes",
			    ctx->loss_pct, ctx->idle_loss_pct, lp->mean_period);
	} else if (ctx->q_p95_ms < 15) {
		classify_as(lp, "policer", "loss %.2f %% under load with queueing p95 only %.1f ms",
			    ctx->loss_pct, ctx->q_p95_ms);
	} else if (ctx->q_p95_ms < 30 && !isnan(lp->q_before_ms) &&
		   lp->q_before_ms < 0.5 * ctx->q_p95_ms) {
		classify_as(lp, "aqm", "drops at %.1f ms queueing while the queue p95 is %.1f ms",
			    lp->q_before_ms, ctx->q_p95_ms);
	} else if (!isnan(lp->q_before_ms) && lp->q_before_ms >= 0.8 * ref) {
		classify_as(lp, "tail-drop", "drops at %.1f ms queueing, %.0f %% of the %s %.1f ms",
			    lp->q_before_ms, 100 * lp->q_before_ms / ref, top ? "queue top" : "p95", ref);
	} else {
		classify_as(lp, "mixed", "loss %.2f %%, %zu periods, q before loss %.1f ms, q p95 %.1f ms",
			    ctx->loss_pct, lp->periods, lp->q_before_ms, ctx->q_p95_ms);
	}
}

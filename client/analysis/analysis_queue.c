/* analysis_queue: the queue verdict's inputs, from the run's series. */
#include "client/analysis/analysis_queue.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "client/analysis/queueverdict.h"
#include "common/stats.h"

/* Median of the n values in v (ms), or NAN without any. */
static double median_ms(double *v, size_t n)
{
	struct stats_summary s;

	return n > 0 && stats_summarize(v, n, &s) == 0 ? s.p50 : NAN;
}

/* The load flows' own RTT (ms) in [from, to), as their sender measures it: the client's
 * TCP_INFO of upload flows; the server's (its stats, one mean per 100 ms) of download flows.
 * Not the client's receive-side estimate of a download flow, which loss recovery inflates: a
 * policer's ~1400 retransmissions in 8 s read 208 ms with no queue (lab, CI). Median, or NAN
 * without samples (an older server). */
static double flow_rtt_ms(const struct test_result *r, int up, int64_t from, int64_t to)
{
	size_t cap = up ? r->nflows : r->nup;
	double *v = malloc((cap + 1) * sizeof(*v)), med;
	size_t n = 0;

	if (v == NULL)
		return NAN;
	for (size_t i = 0; up && i < r->nflows; i++) {
		const struct flow_sample *f = &r->flows[i];

		if (f->up && f->t_ns >= from && f->t_ns < to && f->rtt_us > 0)
			v[n++] = f->rtt_us / 1e3;
	}
	for (size_t i = 0; !up && r->srv_srtt_us != NULL && i < r->nup; i++)
		if (r->up[i].t_ns >= from && r->up[i].t_ns < to && r->srv_srtt_us[i] > 0)
			v[n++] = r->srv_srtt_us[i] / 1e3;
	med = median_ms(v, n);
	free(v);
	return med;
}

static void analysis_queue_dir(struct test_result *r, const struct phase_result *ph, int up,
			       const struct buffer_estimate *b, double floor_ms,
			       struct queue_verdict *v)
{
	const struct stats_summary *q = up ? &ph->q_up_ms : &ph->q_down_ms;
	const struct loss_pattern *lp = up ? &ph->loss_up : &ph->loss_down;
	double rtt = flow_rtt_ms(r, up, result_window_start(ph), ph->end_ns);
	double rate = up ? ph->up_mbps : ph->down_mbps;
	struct queueverdict_input in = {
		.saturated = ph->saturated,
		.rate_mbps = rate * (isnan(r->ip_overhead) ? 1.0 : r->ip_overhead),
		.top_ms = b->valid ? b->ms : NAN,
		.sustained_ms = b->valid ? b->sustained_ms : NAN,
		.lost = lp->steady_lost,
		.q_before_ms = lp->steady_q_before_ms,
		.retrans = up ? ph->retrans_up : ph->retrans_down,
		.ce = -1,
		.floor_ms = floor_ms,
		.flow_q_ms = isfinite(rtt) && isfinite(r->rtt0_ms) ? rtt - r->rtt0_ms : NAN,
	};

	if (q->n > 0) { /* one-way delays */
		in.q_p50_ms = q->p50;
		in.q_p95_ms = q->p95;
	} else if (ph->rtt_ms.n > 0 && isfinite(r->rtt0_ms)) { /* the round trip, both ways */
		in.q_p50_ms = ph->rtt_ms.p50 - r->rtt0_ms;
		in.q_p95_ms = ph->rtt_ms.p95 - r->rtt0_ms;
	} else {
		in.q_p50_ms = in.q_p95_ms = NAN;
	}
	if (r->ecn.requested) /* the whole run's CE marks this way (analysis_ecn) */
		in.ce = up ? r->ecn.ce_up : r->ecn.ce_down;
	else if (r->capture.ran) /* the capture's, at the client */
		in.ce = (int64_t)(up ? r->capture.sum.up.ce : r->capture.sum.down.ce);
	queueverdict_classify(&in, v);
}

/* The verdict, where it is definite, decides whether the direction's estimates report a
 * managed queue: better evidence than the earlier "short, with drops" hint
 * (analysis_buffer_for), which called a full 5 ms FIFO at 500 Mbit/s managed. An unknown
 * verdict leaves the hint: a short queue with drops may still be kept off its top. */
static void managed_from_verdict(const struct queue_verdict *v, struct buffer_estimate *b,
				 struct buffer_estimate *bidir)
{
	int managed;

	if (v->verdict == NULL || strcmp(v->verdict, "unknown") == 0)
		return;
	managed = strcmp(v->verdict, "fifo") != 0;
	b->managed = managed;
	bidir->managed = managed;
}

void analysis_queue(struct test_result *r, double floor_down_ms, double floor_up_ms)
{
	const struct phase_result *d = result_find_phase(r, PHASE_DOWNLOAD);
	const struct phase_result *u = result_find_phase(r, PHASE_UPLOAD);

	r->queue_down.verdict = r->queue_up.verdict = NULL;
	if (d != NULL && !r->http)
		analysis_queue_dir(r, d, 0, &r->buffer_down, floor_down_ms, &r->queue_down);
	if (u != NULL && !r->http)
		analysis_queue_dir(r, u, 1, &r->buffer_up, floor_up_ms, &r->queue_up);
	managed_from_verdict(&r->queue_down, &r->buffer_down, &r->buffer_bidir_down);
	managed_from_verdict(&r->queue_up, &r->buffer_up, &r->buffer_bidir_up);
}

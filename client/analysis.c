/* analysis: steady-window detection, goodput, RTT summaries, loss split and the buffer
 * estimator (see docs/methods.md). */
#include "client/analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"

#define BUFFER_METHOD "p95 of queueing delay (RTT - idle min RTT) over the steady window; bytes = ms x IP-level goodput"

/* Cumulative bytes at time t, interpolated; NAN outside the series. */
static double bytes_at(const struct tput_rec *s, size_t n, int64_t t)
{
	size_t lo = 0, hi;

	if (n == 0 || t < s[0].t_ns || t > s[n - 1].t_ns)
		return NAN;
	hi = n - 1;
	while (hi - lo > 1) { /* s is ordered by time */
		size_t mid = (lo + hi) / 2;

		if (s[mid].t_ns <= t)
			lo = mid;
		else
			hi = mid;
	}
	if (s[hi].t_ns == s[lo].t_ns)
		return (double)s[hi].bytes;
	return (double)s[lo].bytes + (double)(s[hi].bytes - s[lo].bytes) *
					     (double)(t - s[lo].t_ns) / (double)(s[hi].t_ns - s[lo].t_ns);
}

double analysis_rate_bps(const struct tput_rec *s, size_t n, int64_t from, int64_t to)
{
	double a = bytes_at(s, n, from), b = bytes_at(s, n, to);

	if (to <= from || isnan(a) || isnan(b))
		return NAN;
	return (b - a) * 8.0 * NS_PER_SEC / (double)(to - from);
}

int64_t analysis_steady_start(const struct tput_rec *s, size_t n, int64_t from, int64_t to,
			      int64_t iv, double tol)
{
	double r[ANALYSIS_STEADY_INTERVALS];

	for (int k = 0; from + (int64_t)(k + 1) * iv <= to; k++) {
		double mean = 0;
		int stable = 1;

		r[k % ANALYSIS_STEADY_INTERVALS] =
			analysis_rate_bps(s, n, from + (int64_t)k * iv, from + (int64_t)(k + 1) * iv);
		if (k + 1 < ANALYSIS_STEADY_INTERVALS)
			continue;
		for (int i = 0; i < ANALYSIS_STEADY_INTERVALS; i++)
			mean += r[i] / ANALYSIS_STEADY_INTERVALS;
		if (isnan(mean) || mean <= 0)
			continue;
		for (int i = 0; i < ANALYSIS_STEADY_INTERVALS; i++)
			if (fabs(r[i] - mean) > tol * mean)
				stable = 0;
		if (stable)
			return from + (int64_t)(k + 1) * iv;
	}
	return -1;
}

/* Index range [*a, *b) of probes sent in [from, to); probes are in send order. */
static void probe_range(const struct probe_rec *p, size_t n, int64_t from, int64_t to, size_t *a,
			size_t *b)
{
	size_t i = 0;

	while (i < n && p[i].send_ns < from)
		i++;
	*a = i;
	while (i < n && p[i].send_ns < to)
		i++;
	*b = i;
}

void analysis_rtt(const struct probe_rec *p, size_t n, int64_t from, int64_t to,
		  struct stats_summary *out)
{
	size_t a, b, m = 0;
	double *v;

	probe_range(p, n, from, to, &a, &b);
	memset(out, 0, sizeof(*out));
	v = malloc((b - a + 1) * sizeof(*v));
	if (v == NULL)
		return;
	for (size_t i = a; i < b; i++)
		if (p[i].received)
			v[m++] = ns_to_ms(p[i].rtt_ns);
	(void)stats_summarize(v, m, out);
	free(v);
}

/* Upstream share of the losses between two received replies s1 < s2 (s1 = -1: start;
 * s2 = n: end, with the server's final count). The server received c2 - c1 of the s2 - s1
 * requests numbered s1+1..s2, so (s2 - s1) - (c2 - c1) of them were lost upstream. */
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

void analysis_loss(const struct probe_rec *p, size_t n, uint64_t final_count, int64_t from,
		   int64_t to, struct phase_result *ph)
{
	size_t a, b;
	double up = 0, down = 0;
	long prev = -1;
	uint64_t prev_count = 0;

	probe_range(p, n, from, to, &a, &b);
	ph->probes_sent = b - a;
	ph->probes_received = 0;
	for (size_t i = 0; i < n && i < b; i++) {
		long next;
		uint64_t next_count;
		double share;

		if (p[i].received) {
			prev = (long)i;
			prev_count = p[i].srv_count;
			ph->probes_received += i >= a;
			continue;
		}
		/* Find the gap's far end once, then account for every lost probe in it. */
		next = (long)i;
		while ((size_t)next < n && !p[next].received)
			next++;
		if ((size_t)next < n)
			next_count = p[next].srv_count;
		else
			next_count = final_count ? final_count + 1 : prev_count + 1;
		share = (size_t)next < n || final_count ? gap_up_share(prev, prev_count, next, next_count)
							: 1.0; /* unknown: blame upstream */
		for (size_t j = i; j < (size_t)next && j < b; j++) {
			if (j < a)
				continue;
			up += share;
			down += 1 - share;
		}
		i = (size_t)next - 1;
	}
	/* Round the total, then split it, so fractional shares never count a probe twice. */
	ph->lost_up = (size_t)llround(up);
	ph->lost_down = (size_t)llround(up + down) - ph->lost_up;
	ph->loss_up_pct = ph->probes_sent ? 100.0 * up / (double)ph->probes_sent : NAN;
	/* Downstream loss is conditional: replies lost out of requests that reached the server. */
	ph->loss_down_pct = (double)ph->probes_sent - up > 0
				    ? 100.0 * down / ((double)ph->probes_sent - up) : NAN;
}

int analysis_buffer(const struct probe_rec *p, size_t n, int64_t from, int64_t to, double rtt0_ms,
		    double ip_rate_bps, struct buffer_estimate *out)
{
	size_t a, b, m = 0;
	double *q;

	memset(out, 0, sizeof(*out));
	out->method = BUFFER_METHOD;
	probe_range(p, n, from, to, &a, &b);
	q = malloc((b - a + 1) * sizeof(*q));
	if (q == NULL || isnan(rtt0_ms))
		goto none;
	for (size_t i = a; i < b; i++)
		if (p[i].received)
			q[m++] = ns_to_ms(p[i].rtt_ns) - rtt0_ms;
	if (m == 0)
		goto none;
	stats_sort(q, m);
	out->valid = 1;
	out->samples = m;
	out->ms = stats_percentile_sorted(q, m, ANALYSIS_BUFFER_PERCENTILE);
	if (out->ms < 0)
		out->ms = 0;
	out->q_p50_ms = stats_percentile_sorted(q, m, 50);
	out->q_p99_ms = stats_percentile_sorted(q, m, 99);
	out->bytes = isnan(ip_rate_bps) ? NAN : out->ms / 1000.0 * ip_rate_bps / 8.0;
	free(q);
	return 0;
none:
	free(q);
	return -1;
}

/* The window over which a loaded phase is judged: from saturation of every loaded direction
 * to the end. Falls back to the second half (and says so) when it never saturated. */
static void analysis_window(struct test_result *r, struct phase_result *ph)
{
	int64_t sd = -1, su = -1, start;
	int down = ph->kind == PHASE_DOWNLOAD || ph->kind == PHASE_BIDIR;
	int up = ph->kind == PHASE_UPLOAD || ph->kind == PHASE_BIDIR;

	if (down)
		sd = analysis_steady_start(r->down, r->ndown, ph->start_ns, ph->end_ns,
					   ANALYSIS_STEADY_INTERVAL_NS, ANALYSIS_STEADY_TOLERANCE);
	if (up)
		su = analysis_steady_start(r->up, r->nup, ph->start_ns, ph->end_ns,
					   ANALYSIS_STEADY_INTERVAL_NS, ANALYSIS_STEADY_TOLERANCE);
	ph->saturated = (!down || sd >= 0) && (!up || su >= 0);
	start = sd > su ? sd : su;
	if (!ph->saturated) {
		start = ph->start_ns + (ph->end_ns - ph->start_ns) / 2;
		result_warn(r, "the %s phase never reached stable goodput; its figures use the second half of the phase and its buffer estimate is a lower bound",
			    phase_name(ph->kind));
	}
	ph->steady_start_ns = ph->saturated ? start : -1;
	ph->down_mbps = down ? analysis_rate_bps(r->down, r->ndown, start, ph->end_ns) / 1e6 : NAN;
	ph->up_mbps = up ? analysis_rate_bps(r->up, r->nup, start, ph->end_ns) / 1e6 : NAN;
}

static int64_t window_start(const struct phase_result *ph)
{
	if (ph->kind == PHASE_IDLE)
		return ph->start_ns;
	if (ph->steady_start_ns >= 0)
		return ph->steady_start_ns;
	return ph->start_ns + (ph->end_ns - ph->start_ns) / 2;
}

/* Baseline RTT: the idle phase's minimum, else the whole run's minimum (flagged). */
static void analysis_baseline(struct test_result *r, double *idle_p50)
{
	*idle_p50 = NAN;
	for (int i = 0; i < r->nphases; i++) {
		if (r->phases[i].kind == PHASE_IDLE && r->phases[i].rtt_ms.n > 0) {
			r->rtt0_ms = r->phases[i].rtt_ms.min;
			*idle_p50 = r->phases[i].rtt_ms.p50;
			return;
		}
	}
	for (size_t i = 0; i < r->nprobes; i++)
		if (r->probes[i].received &&
		    (isnan(r->rtt0_ms) || ns_to_ms(r->probes[i].rtt_ns) < r->rtt0_ms))
			r->rtt0_ms = ns_to_ms(r->probes[i].rtt_ns);
	result_warn(r, "no idle phase: the baseline RTT is the minimum of the whole run");
}

static void analysis_buffers(struct test_result *r)
{
	for (int i = 0; i < r->nphases; i++) {
		struct phase_result *ph = &r->phases[i];
		struct buffer_estimate *b;
		double rate;

		if (ph->kind == PHASE_DOWNLOAD) {
			b = &r->buffer_down;
			rate = ph->down_mbps * 1e6;
		} else if (ph->kind == PHASE_UPLOAD) {
			b = &r->buffer_up;
			rate = ph->up_mbps * 1e6;
		} else {
			continue;
		}
		(void)analysis_buffer(r->probes, r->nprobes, window_start(ph), ph->end_ns, r->rtt0_ms,
				      rate * (isnan(r->ip_overhead) ? 1.0 : r->ip_overhead), b);
		b->phase = ph->kind;
		b->lower_bound = !ph->saturated;
	}
}

static void analysis_check_timestamps(struct test_result *r)
{
	size_t received = 0;

	for (size_t i = 0; i < r->nprobes; i++)
		received += r->probes[i].received;
	if (received > 0 && r->probes_kernel_ts * 2 < received)
		result_warn(r, "most probe replies were timed in user space (no kernel timestamps)");
}

void analysis_run(struct test_result *r)
{
	double idle_p50;

	for (int i = 0; i < r->nphases; i++) {
		struct phase_result *ph = &r->phases[i];

		ph->steady_start_ns = -1;
		ph->down_mbps = ph->up_mbps = NAN;
		if (ph->kind != PHASE_IDLE)
			analysis_window(r, ph);
		analysis_rtt(r->probes, r->nprobes, window_start(ph), ph->end_ns, &ph->rtt_ms);
		analysis_loss(r->probes, r->nprobes, r->srv_probe_count, ph->start_ns, ph->end_ns, ph);
	}
	analysis_baseline(r, &idle_p50);
	for (int i = 0; i < r->nphases; i++) {
		struct phase_result *ph = &r->phases[i];

		ph->latency_increase_ms = ph->kind == PHASE_IDLE || ph->rtt_ms.n == 0
						  ? NAN : ph->rtt_ms.p50 - idle_p50;
	}
	analysis_buffers(r);
	analysis_check_timestamps(r);
}

/* analysis: steady-window detection, goodput, RTT summaries, loss split and the buffer
 * estimator (see docs/methods.md). */
#include "client/analysis/analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "client/analysis/analysis_ecn.h"
#include "client/analysis/analysis_hops.h"
#include "client/analysis/analysis_probes.h"
#include "client/analysis/analysis_queue.h"
#include "client/analysis/probeshare.h"
#include "client/analysis/bootstrap.h"
#include "client/analysis/clocksync.h"
#include "client/analysis/delivered.h"
#include "client/analysis/droppattern.h"
#include "client/analysis/lowerbound.h"
#include "client/analysis/probestats.h"
#include "client/analysis/sawtooth.h"
#include "client/analysis/stall.h"
#include "client/analysis/tcpfallback.h"
#include "common/clock.h"
#include "common/stats.h"

static const char *const buffer_method[] = {
	[DELAY_RTT] = "the larger of the median of the 1 s maxima and the median level before the senders' back-offs, of queueing delay (RTT - idle min RTT) over the steady window, less the probes in flight while this host stalled; bytes = ms x IP-level goodput",
	[DELAY_UP] = "the larger of the median of the 1 s maxima and the median level before the senders' back-offs, of upstream one-way queueing delay (OWD - idle min OWD, clock offset and drift removed) over the steady window, less the probes in flight while this host stalled; bytes = ms x IP-level goodput",
	[DELAY_DOWN] = "the larger of the median of the 1 s maxima and the median level before the senders' back-offs, of downstream one-way queueing delay (OWD - idle min OWD, clock offset and drift removed) over the steady window, less the probes in flight while this host stalled; bytes = ms x IP-level goodput",
};

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

static double mean_of(const double *v, int n)
{
	double m = 0;

	for (int i = 0; i < n; i++)
		m += v[i] / n;
	return m;
}

int64_t analysis_steady_start(const struct tput_rec *s, size_t n, int64_t from, int64_t to,
			      int64_t iv, double tol)
{
	enum { W = ANALYSIS_STEADY_INTERVALS };
	double g[W], ma[W];

	for (int k = 0; from + (int64_t)(k + 1) * iv <= to; k++) {
		double mean;
		int stable = 1;

		g[k % W] = analysis_rate_bps(s, n, from + (int64_t)k * iv, from + (int64_t)(k + 1) * iv);
		if (k + 1 < W)
			continue;
		ma[(k + 1 - W) % W] = mean_of(g, W); /* moving average over the last W intervals */
		if (k + 2 < 2 * W)
			continue; /* need W moving averages */
		mean = mean_of(ma, W);
		if (isnan(mean) || mean <= 0)
			continue;
		for (int i = 0; i < W; i++)
			if (fabs(ma[i] - mean) > tol * mean)
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

/* value(probe) of the replies to probes sent in [from, to), in send order (caller frees); NULL
 * when out of memory. */
static double *window_values(const struct probe_rec *p, size_t n, int64_t from, int64_t to,
			     double (*value)(const struct probe_rec *), size_t *m)
{
	size_t a, b;
	double *v;

	probe_range(p, n, from, to, &a, &b);
	*m = 0;
	v = malloc((b - a + 1) * sizeof(*v));
	if (v == NULL)
		return NULL;
	for (size_t i = a; i < b; i++)
		if (p[i].received)
			v[(*m)++] = value(&p[i]);
	return v;
}

/* The summary of value(probe) over the replies to probes sent in [from, to). */
static void analysis_window_summary(const struct probe_rec *p, size_t n, int64_t from, int64_t to,
				    double (*value)(const struct probe_rec *),
				    struct stats_summary *out)
{
	size_t m;
	double *v = window_values(p, n, from, to, value, &m);

	memset(out, 0, sizeof(*out));
	if (v == NULL)
		return;
	(void)stats_summarize(v, m, out);
	free(v);
}

static double probe_rtt_ms(const struct probe_rec *p)
{
	return ns_to_ms(p->rtt_ns);
}

/* Server hold time (µs, reply send − request receive on the server's clock); the reply check
 * guarantees tx ≥ rx. */
static double probe_hold_us(const struct probe_rec *p)
{
	return (double)(p->srv_tx_ns - p->srv_rx_ns) / 1e3;
}

void analysis_rtt(const struct probe_rec *p, size_t n, int64_t from, int64_t to,
		  struct stats_summary *out)
{
	analysis_window_summary(p, n, from, to, probe_rtt_ms, out);
}

static void analysis_server_hold(const struct probe_rec *p, size_t n, int64_t from, int64_t to,
				 struct stats_summary *out)
{
	analysis_window_summary(p, n, from, to, probe_hold_us, out);
}

double analysis_jitter(const struct probe_rec *p, size_t n, int64_t from, int64_t to)
{
	size_t m;
	double *v = window_values(p, n, from, to, probe_rtt_ms, &m), j;

	if (v == NULL)
		return NAN;
	j = probestats_jitter(v, m);
	free(v);
	return j;
}

void analysis_loss(const struct probe_rec *p, size_t n, uint64_t final_count, int64_t from,
		   int64_t to, struct phase_result *ph)
{
	double up = 0, down = 0, *share = malloc((n + 1) * sizeof(*share));
	size_t a, b;

	probe_range(p, n, from, to, &a, &b);
	ph->probes_sent = b - a;
	ph->probes_received = 0;
	if (share)
		droppattern_shares(p, n, final_count, share);
	for (size_t i = a; i < b; i++) {
		if (p[i].received) {
			ph->probes_received++;
			continue;
		}
		up += share ? share[i] : 1.0;
		down += share ? 1 - share[i] : 0.0;
	}
	free(share);
	/* Round the total, then split it, so fractional shares never count a probe twice. */
	ph->lost_up = (size_t)llround(up);
	ph->lost_down = (size_t)llround(up + down) - ph->lost_up;
	ph->loss_up_pct = ph->probes_sent ? 100.0 * up / (double)ph->probes_sent : NAN;
	/* Downstream loss is conditional: replies lost out of requests that reached the server. */
	ph->loss_down_pct = (double)ph->probes_sent - up > 0
				    ? 100.0 * down / ((double)ph->probes_sent - up) : NAN;
}

static double probe_delay_ms(const struct probe_rec *p, const struct delay_ref *ref)
{
	switch (ref->kind) {
	case DELAY_UP:
		return clocksync_owd_up(ref->sync, p) / 1e6;
	case DELAY_DOWN:
		return clocksync_owd_down(ref->sync, p) / 1e6;
	case DELAY_RTT:
		break;
	}
	return ns_to_ms(p->rtt_ns);
}

/* Queueing delays (and, with t, send times) of the replies p[a..b) not marked in skip (NULL:
 * none); how many. */
static size_t queue_samples_of(const struct probe_rec *p, size_t a, size_t b,
			       const struct delay_ref *ref, const uint8_t *skip, double *q,
			       int64_t *t)
{
	size_t m = 0;

	for (size_t i = a; i < b; i++) {
		if (!p[i].received || (skip && skip[i - a]))
			continue;
		if (t)
			t[m] = p[i].send_ns;
		q[m++] = probe_delay_ms(&p[i], ref) - ref->base_ms;
	}
	return m;
}

size_t analysis_queue_samples(const struct probe_rec *p, size_t n, int64_t from, int64_t to,
			      const struct delay_ref *ref, double *q)
{
	size_t a, b;

	probe_range(p, n, from, to, &a, &b);
	return queue_samples_of(p, a, b, ref, NULL, q, NULL);
}

/* The buffer estimate's samples: the queueing delays and send times of the replies in [from,
 * to), without the probes a host stall held (stall.h). Their count goes to *held; -1 when out
 * of memory, else how many samples. */
static ssize_t analysis_buffer_samples(const struct probe_rec *p, size_t n, int64_t from,
				       int64_t to, const struct delay_ref *ref, double *q,
				       int64_t *t, size_t *held)
{
	size_t a, b, m;
	uint8_t *h;

	probe_range(p, n, from, to, &a, &b);
	if ((h = malloc(b - a + 1)) == NULL)
		return -1;
	*held = stall_held(p + a, b - a, h);
	m = queue_samples_of(p, a, b, ref, h, q, t);
	free(h);
	return (ssize_t)m;
}

/* The highest of v[0..n) (rank 1) or the second-highest (rank 2; the highest when n is 1). */
static double ranked_of(const double *v, size_t n, size_t rank)
{
	double hi, second;

	stats_top2(v, n, &hi, &second);
	return rank >= 2 && n >= 2 ? second : hi;
}

/* Maxima (rank 1) or second-highest values (rank 2) of consecutive blocks of `block` samples of
 * the time-ordered q (a last block shorter than half a block is dropped: its maximum would see
 * too little of the sawtooth). A window shorter than half a block is one block. */
size_t analysis_block_maxima(const double *q, size_t m, size_t block, size_t rank, double *out)
{
	size_t nb = 0;

	if (m == 0)
		return 0;
	if (block == 0)
		block = 1;
	for (size_t i = 0; i < m; i += block) {
		size_t end = i + block < m ? i + block : m;

		if (end - i < (block + 1) / 2)
			break;
		out[nb++] = ranked_of(q + i, end - i, rank);
	}
	if (nb == 0)
		out[nb++] = ranked_of(q, m, rank);
	return nb;
}

/* The top is steady, whatever the spread of the 1 s levels mx (sorted), when the back-offs
 * stood at one level (peaks_steady), or when the one back-off a slow sawtooth gave in the
 * window stood where the queue also stood in another second: two or more seconds' levels within
 * 5 % (or two packets) of it and none above (CI, one cubic flow, 100 ms buffer: one back-off
 * at 98.2 ms, seconds at 97.6, 98.2 and 99.5 ms, the rest of its 45-91 ms climb read
 * "unstable"). */
static int analysis_top_steady(const struct buffer_estimate *b, const double *mx, size_t nb,
			       double two_pkts)
{
	double band = fmax(0.05 * b->peak_ms, two_pkts);
	size_t near = 0;

	if (b->peaks_steady)
		return 1;
	if (b->peaks != 1 || nb == 0 || mx[nb - 1] > b->peak_ms + band)
		return 0;
	for (size_t i = 0; i < nb; i++)
		near += mx[i] >= b->peak_ms - band;
	return near >= 2;
}

/* The 95 % interval over the sorted 1 s maxima mx. Low: a bootstrap of the median (the
 * maxima are 1 s apart, so nearly independent). High: that bootstrap describes how the seconds
 * vary, not how far the queue's top lies above them — a CUBIC sawtooth reaches the top only
 * every few seconds, so most seconds' maxima lie below it. The top is at least the highest
 * second's maximum and at most two packets above it (analysis_buffer_resolution); from four
 * seconds on the second highest stands in for it, so that one second a host stall raised
 * cannot stretch the interval. The high end starts from the larger of the two. Bytes follow
 * at the same rate. */
static void analysis_buffer_ci(const double *mx, const double *tops, size_t nb,
			       double ip_rate_bps, struct buffer_estimate *out)
{
	double lo, hi, top = tops[nb >= 4 ? nb - 2 : nb - 1];
	/* A slow sawtooth visits its top only at its few back-offs, one of which may be the
	 * highest second alone (lab, one flow: 99.2 ms against 98.4 for a 100 ms buffer): the
	 * highest second counts unless it stands more than two packets above the next, as a
	 * host stall's does. */
	double two_pkts = 2 * ANALYSIS_DEFAULT_PACKET_BYTES * 8.0 / ip_rate_bps * 1000.0;

	if (nb >= 4 && out->peaks_steady && tops[nb - 1] - top <= two_pkts)
		top = tops[nb - 1];
	if (bootstrap_percentile_ci(mx, nb, 1, ANALYSIS_BLOCK_MAX_QUANTILE, 400, 0.95,
				    0x626c6f61746d6574ULL ^ nb, &lo, &hi) < 0)
		return;
	out->unstable = (hi - lo) / 2 > 0.2 * fabs(out->ms) &&
			!(analysis_top_steady(out, mx, nb, two_pkts) && out->from_peaks);
	hi = fmax(hi, fmax(top, out->ms)); /* the interval holds the point (back-off peaks) */
	out->has_ci = 1;
	out->ci_low_ms = lo < 0 ? 0 : lo;
	out->ci_high_ms = hi < 0 ? 0 : hi;
	out->ci_low_bytes = isnan(ip_rate_bps) ? NAN : out->ci_low_ms / 1000.0 * ip_rate_bps / 8.0;
	out->ci_high_bytes = isnan(ip_rate_bps) ? NAN : out->ci_high_ms / 1000.0 * ip_rate_bps / 8.0;
}

/* The level the queue stood at before its senders' back-offs (sawtooth.h): where a slow
 * sawtooth leaves most seconds' maxima under the top, this is the top. */
static void analysis_buffer_peaks(const int64_t *t, const double *q, size_t m,
				  struct buffer_estimate *out)
{
	struct sawtooth_peaks pk;

	sawtooth_peaks(t, q, m, &pk);
	out->peak_ms = pk.median;
	out->peaks = pk.n;
	/* Back-offs at levels within ±20 % of their median: the top is steady, however far the
	 * seconds between them fall (the 1 s maxima's spread is the sawtooth's, not the top's). */
	out->peaks_steady = pk.n >= 2 && pk.low >= 0.8 * pk.median && pk.high <= 1.2 * pk.median;
}

/* The highest level the queue held for a tenth of a second or more, not one probe a host
 * stall delayed: the second-highest of the 1 s blocks' 90th percentiles (the highest below
 * four blocks). A lower bound reports it (lowerbound.c); a plain maximum there once claimed
 * ≥ 144 ms for a 100 ms buffer when the host stalled. */
static double analysis_sustained(const double *q, size_t m, size_t block, double *scratch)
{
	double *p90;
	size_t nb = 0;

	block = block < m ? block : m; /* scratch holds m + m / block + 1 values */
	p90 = scratch + block;

	for (size_t i = 0; i < m; i += block) {
		size_t len = i + block < m ? block : m - i;

		if (len < (block + 1) / 2 && nb > 0)
			break;
		memcpy(scratch, q + i, len * sizeof(*q));
		stats_sort(scratch, len);
		p90[nb++] = stats_percentile_sorted(scratch, len, 90);
	}
	stats_sort(p90, nb);
	return p90[nb >= 4 ? nb - 2 : nb - 1];
}

int analysis_buffer(const struct probe_rec *p, size_t n, int64_t from, int64_t to,
		    const struct delay_ref *ref, double ip_rate_bps, struct buffer_estimate *out)
{
	size_t m = 0, nb, block;
	ssize_t got;
	double *q = malloc(5 * (n + 1) * sizeof(*q)), *mx, *tops;
	int64_t *t = malloc((n + 1) * sizeof(*t));

	memset(out, 0, sizeof(*out));
	out->method = buffer_method[ref->kind];
	if (q == NULL || t == NULL || isnan(ref->base_ms))
		goto none;
	mx = q + n + 1;
	tops = mx + n + 1;
	got = analysis_buffer_samples(p, n, from, to, ref, q, t, &out->stall_held);
	if (got <= 0)
		goto none;
	m = (size_t)got;
	/* Samples per second of the window: blocks of 1 s hold one or more sawtooth tops. */
	block = to > from ? (size_t)llround((double)m * NS_PER_SEC / (double)(to - from)) : m;
	/* Each second's second-highest probe: a level two probes reached, not one a sub-interval
	 * host stall delayed (500 Mbit/s, 5 ms: spikes of 0.2-2 ms above the top in most seconds
	 * read +3.8 % and an `unstable` interval from the maxima). */
	nb = analysis_block_maxima(q, m, block ? block : 1, 2, mx);
	(void)analysis_block_maxima(q, m, block ? block : 1, 1, tops); /* the top seen */
	if (nb == 0)
		goto none;
	analysis_buffer_peaks(t, q, m, out);
	stats_sort(mx, nb);
	stats_sort(tops, nb);
	out->ms = stats_percentile_sorted(mx, nb, ANALYSIS_BLOCK_MAX_QUANTILE);
	out->sustained_ms = analysis_sustained(q, m, block ? block : 1, tops + n + 1);
	out->from_peaks = out->peak_ms > out->ms;
	if (out->from_peaks)
		out->ms = out->peak_ms;
	analysis_buffer_ci(mx, tops, nb, ip_rate_bps, out);
	stats_sort(q, m);
	out->q_max_ms = q[m - 1];
	out->valid = 1;
	out->samples = m;
	if (out->ms < 0)
		out->ms = 0;
	out->q_p50_ms = stats_percentile_sorted(q, m, 50);
	out->q_p99_ms = stats_percentile_sorted(q, m, 99);
	out->bytes = isnan(ip_rate_bps) ? NAN : out->ms / 1000.0 * ip_rate_bps / 8.0;
	free(q);
	free(t);
	return 0;
none:
	free(q);
	free(t);
	return -1;
}

/* One loaded direction's byte series: its senders' delivered bytes where known (delivered.h),
 * else the receiver's bytes. */
struct dir_series {
	const struct tput_rec *s;
	size_t n;
	struct tput_rec *own; /* the delivered series, to free */
};

static void dir_series_get(const struct test_result *r, int up, const struct phase_result *ph,
			   struct dir_series *d)
{
	d->n = delivered_series(r, up, ph->start_ns, ph->end_ns, &d->own);
	d->s = d->own;
	if (d->n == 0) {
		d->s = up ? r->up : r->down;
		d->n = up ? r->nup : r->ndown;
	}
}

/* Goodput (bit/s) over [from, to]. The senders' last sample may fall up to one sampling
 * period before the phase's end; the rate then ends there. */
static double dir_series_rate(const struct dir_series *d, int64_t from, int64_t to)
{
	if (d->own == NULL)
		return analysis_rate_bps(d->s, d->n, from, to);
	if (d->s[d->n - 1].t_ns < to)
		to = d->s[d->n - 1].t_ns;
	return to - from < NS_PER_SEC / 2 ? NAN : analysis_rate_bps(d->s, d->n, from, to);
}

/* The window over which a loaded phase is judged: from saturation of every loaded direction
 * to the end. Falls back to the second half (and says so) when it never saturated. Saturation
 * and goodput rest on the senders' delivered bytes where known: the receiver's in-order bytes
 * come in bursts a round trip after each loss, which at long RTTs and low rates moved a
 * window's goodput by -38 to +24 % (500 kbit/s, 1000 ms of buffer). */
static void analysis_window(struct test_result *r, struct phase_result *ph)
{
	int64_t sd = -1, su = -1, start;
	int down = ph->kind == PHASE_DOWNLOAD || ph->kind == PHASE_BIDIR;
	int up = ph->kind == PHASE_UPLOAD || ph->kind == PHASE_BIDIR;
	struct dir_series ds = { 0 }, us = { 0 };

	if (down) {
		dir_series_get(r, 0, ph, &ds);
		sd = analysis_steady_start(ds.s, ds.n, ph->start_ns, ph->end_ns,
					   ANALYSIS_STEADY_INTERVAL_NS, ANALYSIS_STEADY_TOLERANCE);
	}
	if (up) {
		dir_series_get(r, 1, ph, &us);
		su = analysis_steady_start(us.s, us.n, ph->start_ns, ph->end_ns,
					   ANALYSIS_STEADY_INTERVAL_NS, ANALYSIS_STEADY_TOLERANCE);
	}
	ph->saturated = (!down || sd >= 0) && (!up || su >= 0);
	start = sd > su ? sd : su;
	/* The probe budget lengthened the intervals in this phase: its goodput before then
	 * carried the probes' earlier share, so the window starts once they settled. */
	if (ph->saturated && ph->probe_settled_ns > start && ph->probe_settled_ns < ph->end_ns)
		start = ph->probe_settled_ns;
	if (!ph->saturated) {
		start = ph->start_ns + (ph->end_ns - ph->start_ns) / 2;
		result_warn(r, "the %s phase never reached stable goodput; its figures use the second half of the phase and its buffer estimate is a lower bound",
			    phase_name(ph->kind));
	}
	ph->steady_start_ns = ph->saturated ? start : -1;
	ph->down_mbps = down ? dir_series_rate(&ds, start, ph->end_ns) / 1e6 : NAN;
	ph->up_mbps = up ? dir_series_rate(&us, start, ph->end_ns) / 1e6 : NAN;
	free(ds.own);
	free(us.own);
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
	if (r->udp_blocked) {
		/* The idle phase ran, but neither UDP nor a TCP connect probe timed it. */
		for (int i = 0; i < r->nphases; i++)
			if (r->phases[i].rtt_ms.n > 0 &&
			    (isnan(r->rtt0_ms) || r->phases[i].rtt_ms.min < r->rtt0_ms))
				r->rtt0_ms = r->phases[i].rtt_ms.min;
		result_warn(r, "no idle RTT (UDP blocked, no tcp probe): the baseline RTT is the minimum of the whole run; no latency increase");
		return;
	}
	result_warn(r, "no idle phase: the baseline RTT is the minimum of the whole run and one-way delays are unavailable");
}

static struct delay_ref delay_ref_for(const struct test_result *r, enum delay_kind oneway);

/* Minimum one-way delays (ms) of replies to probes sent in [from, to). */
static void owd_minimum(const struct test_result *r, int64_t from, int64_t to, double *up,
			double *down)
{
	*up = *down = NAN;
	for (size_t i = 0; i < r->nprobes; i++) {
		const struct probe_rec *p = &r->probes[i];
		double u, d;

		if (!p->received || p->send_ns < from || p->send_ns >= to)
			continue;
		u = clocksync_owd_up(&r->sync, p) / 1e6;
		d = clocksync_owd_down(&r->sync, p) / 1e6;
		if (isnan(*up) || u < *up)
			*up = u;
		if (isnan(*down) || d < *down)
			*down = d;
	}
}

/* Clock offset from the idle phase (before the load) and the drain after the last loaded
 * phase (after it), then the one-way baselines. Leaves r->sync invalid, with a warning, when
 * one-way delays cannot be trusted; the estimates then fall back to RTT. */
static void analysis_sync(struct test_result *r)
{
	const struct phase_result *idle = result_find_phase(r, PHASE_IDLE);
	int64_t last_end = INT64_MIN;

	if (idle == NULL || r->http)
		return; /* analysis_baseline already said so; HTTP mode has no server stamps */
	for (int i = 0; i < r->nphases; i++)
		if (r->phases[i].kind != PHASE_IDLE && r->phases[i].end_ns > last_end)
			last_end = r->phases[i].end_ns;
	/* The drain after the load, once the queue has had half the gap to empty. */
	if (last_end == INT64_MIN || clocksync_fit(r->probes, r->nprobes, idle->start_ns, idle->end_ns,
				   last_end + (int64_t)(r->cfg.gap_s / 2 * NS_PER_SEC), INT64_MAX,
				   &r->sync) < 0) {
		memset(&r->sync, 0, sizeof(r->sync));
		result_warn(r, "too few idle exchanges for clock sync: per-direction figures use RTT");
		return;
	}
	if (!r->sync.drift_fitted)
		result_warn(r, "no drain period after the load: clock drift is not corrected");
	owd_minimum(r, idle->start_ns, idle->end_ns, &r->owd0_up_ms, &r->owd0_down_ms);
}

/* One-way queueing delay summaries of each phase's window. */
static void analysis_oneway(struct test_result *r)
{
	double *q = malloc((r->nprobes + 1) * sizeof(*q));

	if (q == NULL || !r->sync.valid) {
		free(q);
		return;
	}
	for (int i = 0; i < r->nphases; i++) {
		struct phase_result *ph = &r->phases[i];
		struct delay_ref up = delay_ref_for(r, DELAY_UP), down = delay_ref_for(r, DELAY_DOWN);
		size_t m;

		m = analysis_queue_samples(r->probes, r->nprobes, result_window_start(ph), ph->end_ns, &up, q);
		(void)stats_summarize(q, m, &ph->q_up_ms);
		m = analysis_queue_samples(r->probes, r->nprobes, result_window_start(ph), ph->end_ns, &down, q);
		(void)stats_summarize(q, m, &ph->q_down_ms);
	}
	free(q);
}

/* The reference for a direction's queueing delay: one-way when the clocks are synced. */
static struct delay_ref delay_ref_for(const struct test_result *r, enum delay_kind oneway)
{
	struct delay_ref ref = { DELAY_RTT, r->rtt0_ms, NULL };

	if (r->sync.valid) {
		ref.kind = oneway;
		ref.base_ms = oneway == DELAY_UP ? r->owd0_up_ms : r->owd0_down_ms;
		ref.sync = &r->sync;
	}
	return ref;
}

/* The senders of this direction spent > 10 % of their busy time limited by the peer's
 * receive window or their own send buffer, or an end's load loop was CPU-bound: the queue may
 * not have filled, so the estimate is a lower bound (and the report says why). The warning's
 * "% of the time" is the limited share, or the loop's share of a core for CPU. */
/* Goodput at this share of the server's max-rate or more: the server's cap, not the path,
 * set the rate (pacing keeps a capped flow a little under its cap). */
#define ANALYSIS_RATE_CAP_SHARE 0.9

/* The direction ran at the server's rate limit: the bottleneck may never have filled, so the
 * estimate is a lower bound with its own reason (checked before the TCP_INFO limits: a client
 * that ignores the cap is throttled by the server's reads and looks receive-window limited).
 * 1 if it applies. */
static int analysis_rate_capped(struct test_result *r, const struct phase_result *ph,
				enum delay_kind dir, struct buffer_estimate *b)
{
	double mbps = dir == DELAY_DOWN ? ph->down_mbps : ph->up_mbps;
	double cap = (double)r->server_max_rate_bps / 1e6;

	if (r->server_max_rate_bps == 0 || !b->valid || isnan(mbps) ||
	    mbps < ANALYSIS_RATE_CAP_SHARE * cap)
		return 0;
	b->lower_bound = 1;
	b->lower_bound_why = "server rate limit";
	result_warn(r, "the %s flows of the %s phase ran at the server's rate limit of %.1f Mbit/s (%.1f Mbit/s); the %s buffer estimate is a lower bound",
		    dir == DELAY_DOWN ? "download" : "upload", phase_name(ph->kind), cap, mbps,
		    dir == DELAY_DOWN ? "downlink" : "uplink");
	return 1;
}

static void analysis_limits(struct test_result *r, const struct phase_result *ph,
			    enum delay_kind dir, struct buffer_estimate *b)
{
	double rwnd = dir == DELAY_DOWN ? ph->rwnd_limited_down : ph->rwnd_limited_up;
	double sndbuf = dir == DELAY_DOWN ? ph->sndbuf_limited_down : ph->sndbuf_limited_up;
	const char *why = NULL;
	double share = 0;

	if (analysis_rate_capped(r, ph, dir, b))
		return;
	if (rwnd > 0.1) {
		why = "receive window";
		share = rwnd;
	} else if (sndbuf > 0.1) {
		why = "send buffer";
		share = sndbuf;
	} else if (ph->cpu_client >= ANALYSIS_CPU_BOUND) {
		why = "client CPU";
		share = ph->cpu_client;
	} else if (ph->cpu_server >= ANALYSIS_CPU_BOUND) {
		why = "server CPU";
		share = ph->cpu_server;
	}
	if (why == NULL || !b->valid)
		return;
	b->lower_bound = 1;
	b->lower_bound_why = why;
	result_warn(r, "the %s flows of the %s phase were limited by the %s %.0f %% of the time; the %s buffer estimate is a lower bound",
		    dir == DELAY_DOWN ? "download" : "upload", phase_name(ph->kind), why, 100 * share,
		    dir == DELAY_DOWN ? "downlink" : "uplink");
}

/* A probe meets a full tail-drop queue of L bytes up to two packets short of L / rate: the
 * queue holds between L − one packet and L bytes (the packet whose arrival would overflow it
 * is dropped), and a shaper's head packet waits for its tokens inside the queue, already
 * credited with up to one packet's worth. The highest delay seen therefore lies up to two
 * packet times under the buffer, and the interval's upper end is raised by that step
 * (docs/methods.md). */
static void analysis_buffer_resolution(const struct test_result *r, double ip_rate_bps,
				       struct buffer_estimate *b)
{
	double pkt = r->mss > 0 && !isnan(r->ip_overhead) ? r->mss * r->ip_overhead
							  : ANALYSIS_DEFAULT_PACKET_BYTES;

	b->resolution_ms = NAN;
	if (!b->valid || !b->has_ci || !(ip_rate_bps > 0))
		return;
	b->resolution_ms = 2 * pkt * 8.0 / ip_rate_bps * 1000.0;
	b->ci_high_ms += b->resolution_ms;
	b->ci_high_bytes += 2 * pkt;
}

static void analysis_buffer_for(struct test_result *r, const struct phase_result *ph,
				enum delay_kind dir, struct buffer_estimate *b)
{
	struct delay_ref ref = delay_ref_for(r, dir);
	double rate = (dir == DELAY_DOWN ? ph->down_mbps : ph->up_mbps) * 1e6;
	double ip_rate = rate * (isnan(r->ip_overhead) ? 1.0 : r->ip_overhead);
	double link = ph->link_mbps[dir == DELAY_DOWN ? 0 : 1] * 1e6;

	/* The queue drains at the link's whole IP rate: the probes and ACKs in it too. */
	if (link > ip_rate)
		ip_rate = link;

	(void)analysis_buffer(r->probes, r->nprobes, result_window_start(ph), ph->end_ns, &ref,
			      ip_rate, b);
	analysis_buffer_resolution(r, ip_rate, b);
	b->phase = ph->kind;
	b->lower_bound = !ph->saturated;
	b->lower_bound_why = b->lower_bound ? "never saturated" : NULL;
	analysis_limits(r, ph, dir, b);
	/* A hint of a managed queue: the link is full but the queue stays short while packets are
	 * still dropped (probes lost or TCP retransmitting). The drop patterns use it; the queue
	 * verdict, where definite, then decides (analysis_queue.c). */
	if (b->valid && ph->saturated && b->ms < 30) {
		int64_t retrans = dir == DELAY_DOWN ? ph->retrans_down : ph->retrans_up;
		size_t lost = dir == DELAY_DOWN ? ph->lost_down : ph->lost_up;

		b->managed = retrans > 0 || lost > 0;
	}
}

/* Download phase → downlink, upload phase → uplink; with one-way delays also both directions
 * from the bidirectional phase. */
static void analysis_buffers(struct test_result *r)
{
	for (int i = 0; i < r->nphases; i++) {
		const struct phase_result *ph = &r->phases[i];

		if (ph->kind == PHASE_DOWNLOAD)
			analysis_buffer_for(r, ph, DELAY_DOWN, &r->buffer_down);
		else if (ph->kind == PHASE_UPLOAD)
			analysis_buffer_for(r, ph, DELAY_UP, &r->buffer_up);
		else if (ph->kind == PHASE_BIDIR && r->sync.valid) {
			analysis_buffer_for(r, ph, DELAY_DOWN, &r->buffer_bidir_down);
			analysis_buffer_for(r, ph, DELAY_UP, &r->buffer_bidir_up);
		}
	}
}

/* Per-probe queueing delay (ms) in one direction: one-way with clock sync, else RTT − rtt0
 * for both directions. NAN for lost probes. */
static void direction_q(const struct test_result *r, int upstream, double *q)
{
	struct delay_ref ref = delay_ref_for(r, upstream ? DELAY_UP : DELAY_DOWN);

	for (size_t i = 0; i < r->nprobes; i++)
		q[i] = r->probes[i].received ? probe_delay_ms(&r->probes[i], &ref) - ref.base_ms : NAN;
}

/* The direction's queueing delay summary in a phase's window. */
static const struct stats_summary *phase_q(const struct phase_result *ph, int upstream,
					   struct stats_summary *rtt_q, double rtt0)
{
	if (ph->q_up_ms.n > 0 || ph->q_down_ms.n > 0)
		return upstream ? &ph->q_up_ms : &ph->q_down_ms;
	*rtt_q = ph->rtt_ms; /* no one-way delays: the round trip, both directions alike */
	rtt_q->p95 -= rtt0;
	return rtt_q;
}

/* Loss structure and class of both directions in every phase. */
/* The buffer estimate made in this phase for this direction (the top of the standing
 * queue), or NAN. */
static double queue_top(const struct test_result *r, enum phase_kind kind, int up)
{
	const struct buffer_estimate *b = NULL;

	if (kind == PHASE_DOWNLOAD && !up)
		b = &r->buffer_down;
	else if (kind == PHASE_UPLOAD && up)
		b = &r->buffer_up;
	else if (kind == PHASE_BIDIR)
		b = up ? &r->buffer_bidir_up : &r->buffer_bidir_down;
	return b && b->valid && !b->managed ? b->ms : NAN;
}

/* The probes lost in the phase's steady window and the queue before them: what the queue
 * verdict compares with the steady window's top. Slow start overshoots the buffer (with 100 ms
 * of RTT, CoDel's own byte limit) and its losses at that height would read as drops at the top. */
static void steady_losses(const struct test_result *r, const struct phase_result *ph,
			  const double *share, int up, const double *q, struct loss_pattern *lp)
{
	struct loss_pattern steady;

	droppattern_measure(r->probes, r->nprobes, share, up, result_window_start(ph), ph->end_ns,
			    q, &steady);
	lp->steady_lost = steady.lost;
	lp->steady_q_before_ms = steady.q_before_ms;
}

static void analysis_patterns(struct test_result *r)
{
	double *share = malloc((r->nprobes + 1) * sizeof(*share));
	double *q = malloc((r->nprobes + 1) * sizeof(*q));
	const struct phase_result *idle = result_find_phase(r, PHASE_IDLE);

	if (share == NULL || q == NULL || r->http) /* HTTP mode: no per-direction loss */
		goto out;
	droppattern_shares(r->probes, r->nprobes, r->srv_probe_count, share);
	for (int up = 0; up <= 1; up++) {
		direction_q(r, up, q);
		for (int i = 0; i < r->nphases; i++) {
			struct phase_result *ph = &r->phases[i];
			struct loss_pattern *lp = up ? &ph->loss_up : &ph->loss_down;
			struct stats_summary tmp;
			const struct stats_summary *qs = phase_q(ph, up, &tmp, r->rtt0_ms);
			struct droppattern_context ctx = {
				.loaded = ph->kind != PHASE_IDLE,
				.interval_ms = r->cfg.interval_ms,
				.loss_pct = up ? ph->loss_up_pct : ph->loss_down_pct,
				.idle_loss_pct = idle ? (up ? idle->loss_up_pct : idle->loss_down_pct) : NAN,
				.q_p95_ms = qs->n ? qs->p95 : NAN,
				.q_top_ms = queue_top(r, ph->kind, up),
			};

			droppattern_measure(r->probes, r->nprobes, share, up, ph->start_ns, ph->end_ns, q, lp);
			droppattern_classify(lp, &ctx);
			steady_losses(r, ph, share, up, q, lp);
		}
	}
out:
	free(share);
	free(q);
}

/* How long after the load stopped the RTT came back near idle: the first probe from which
 * 5 consecutive replies stay within the idle p99 + 1 ms. NAN if not before the next phase. */
static void analysis_recovery(struct test_result *r)
{
	const struct phase_result *idle = result_find_phase(r, PHASE_IDLE);
	double limit = idle && idle->rtt_ms.n ? idle->rtt_ms.p99 + 1.0 : NAN;

	for (int i = 0; i < r->nphases; i++) {
		struct phase_result *ph = &r->phases[i];
		int64_t until = i + 1 < r->nphases ? r->phases[i + 1].start_ns : INT64_MAX;
		size_t a, b, good = 0, run_start = 0;

		ph->recovery_ms = NAN;
		if (ph->kind == PHASE_IDLE || isnan(limit))
			continue;
		probe_range(r->probes, r->nprobes, ph->end_ns, until, &a, &b);
		for (size_t k = a; k < b; k++) {
			if (!r->probes[k].received)
				continue;
			if (ns_to_ms(r->probes[k].rtt_ns) > limit) {
				good = 0;
				continue;
			}
			if (good++ == 0)
				run_start = k;
			if (good == 5) {
				ph->recovery_ms = ns_to_ms(r->probes[run_start].send_ns - ph->end_ns);
				break;
			}
		}
	}
}

#define FLOOR_BLOCK_MS 100.0 /* CoDel's interval: it keeps each interval's minimum near target */

/* The floor of the queue: the median over 100 ms blocks of the probes' smallest queueing delay
 * in the block — what CoDel keeps near its target (RFC 8289: the minimum sojourn time over an
 * interval). NAN without samples. */
static double queue_floor_ms(const struct test_result *r, const struct phase_result *ph, int up)
{
	struct delay_ref ref = delay_ref_for(r, up ? DELAY_UP : DELAY_DOWN);
	double *q = malloc((r->nprobes + 1) * sizeof(*q));
	double *mins = malloc((r->nprobes + 1) * sizeof(*mins));
	size_t block = r->cfg.interval_ms > 0 ? (size_t)(FLOOR_BLOCK_MS / r->cfg.interval_ms) : 10;
	double floor_ms = NAN;

	if (q != NULL && mins != NULL) {
		size_t m = analysis_queue_samples(r->probes, r->nprobes, result_window_start(ph),
						  ph->end_ns, &ref, q);
		size_t k;
		struct stats_summary s;

		for (size_t i = 0; i < m; i++) /* minima as maxima of the negated series */
			q[i] = -q[i];
		k = analysis_block_maxima(q, m, block > 0 ? block : 1, 1, mins);
		for (size_t i = 0; i < k; i++)
			mins[i] = -mins[i];
		if (k > 0 && stats_summarize(mins, k, &s) == 0)
			floor_ms = s.p50;
	}
	free(q);
	free(mins);
	return floor_ms;
}

/* The floor in the download phase's downlink and the upload phase's uplink. */
static void analysis_queue_floors(struct test_result *r)
{
	const struct phase_result *d = result_find_phase(r, PHASE_DOWNLOAD);
	const struct phase_result *u = result_find_phase(r, PHASE_UPLOAD);

	analysis_queue(r, d ? queue_floor_ms(r, d, 0) : NAN, u ? queue_floor_ms(r, u, 1) : NAN);
}

/* DSLReports bands on latency increase: A+ < 5 ms, A < 30, B < 60, C < 200, D < 400, F. */
const char *analysis_grade(double increase_ms)
{
	if (isnan(increase_ms))
		return NULL;
	if (increase_ms < 5)
		return "A+";
	if (increase_ms < 30)
		return "A";
	if (increase_ms < 60)
		return "B";
	if (increase_ms < 200)
		return "C";
	if (increase_ms < 400)
		return "D";
	return "F";
}

/* Per phase; per direction from the download and upload phases; overall from the worse. */
static void analysis_grades(struct test_result *r)
{
	double worst = NAN;

	for (int i = 0; i < r->nphases; i++) {
		struct phase_result *ph = &r->phases[i];

		ph->grade = ph->kind == PHASE_IDLE ? NULL : analysis_grade(ph->latency_increase_ms);
		if (ph->kind == PHASE_DOWNLOAD)
			r->grade_down = ph->grade;
		if (ph->kind == PHASE_UPLOAD)
			r->grade_up = ph->grade;
		if (ph->kind != PHASE_IDLE && !isnan(ph->latency_increase_ms) &&
		    (isnan(worst) || ph->latency_increase_ms > worst))
			worst = ph->latency_increase_ms;
	}
	r->worst_increase_ms = worst;
	r->grade_overall = analysis_grade(worst);
}

/* SQM/cake users shape a little below the bottleneck so the queue forms in their own, managed
 * router instead: 90 % of the measured IP-level rate of each direction. */
static void analysis_advice(struct test_result *r)
{
	double ovh = isnan(r->ip_overhead) ? 1.0 : r->ip_overhead;
	const struct phase_result *d = result_find_phase(r, PHASE_DOWNLOAD);
	const struct phase_result *u = result_find_phase(r, PHASE_UPLOAD);

	r->shaper_down_mbps = d ? 0.9 * d->down_mbps * ovh : NAN;
	r->shaper_up_mbps = u ? 0.9 * u->up_mbps * ovh : NAN;
}

static void analysis_check_timestamps(struct test_result *r)
{
	size_t received = result_replies(r);

	if (r->http)
		return; /* handshakes are timed by libcurl, never by kernel stamps */
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
		analysis_rtt(r->probes, r->nprobes, result_window_start(ph), ph->end_ns, &ph->rtt_ms);
		ph->jitter_ms = analysis_jitter(r->probes, r->nprobes, result_window_start(ph),
						ph->end_ns);
		analysis_server_hold(r->probes, r->nprobes, result_window_start(ph), ph->end_ns,
				     &ph->server_hold_us);
		analysis_loss(r->probes, r->nprobes, r->srv_probe_count, ph->start_ns, ph->end_ns, ph);
		if (r->http) { /* no server count to split the loss with: only its total is known */
			ph->loss_up_pct = ph->loss_down_pct = NAN;
			ph->lost_up = ph->lost_down = 0;
		}
	}
	tcpfallback_rtt(r); /* UDP blocked: the phases' RTT from TCP-based probes */
	analysis_baseline(r, &idle_p50);
	analysis_sync(r);
	analysis_oneway(r);
	for (int i = 0; i < r->nphases; i++) {
		struct phase_result *ph = &r->phases[i];

		ph->latency_increase_ms = ph->kind == PHASE_IDLE || ph->rtt_ms.n == 0
						  ? NAN : ph->rtt_ms.p50 - idle_p50;
	}
	if (r->server_max_rate_bps > 0)
		result_warn(r, "the server limits each direction of a test to %.1f Mbit/s (its max-rate)",
			    (double)r->server_max_rate_bps / 1e6);
	probeshare_phases(r);
	analysis_buffers(r);
	analysis_patterns(r);
	analysis_ecn(r);
	analysis_queue_floors(r);
	lowerbound_apply(r);
	analysis_recovery(r);
	analysis_grades(r);
	analysis_advice(r);
	analysis_check_timestamps(r);
	analysis_probes(r);
	analysis_hops(r);
}

/* test_analysis: the analysis on synthetic traces whose truth is known — goodput, saturation,
 * the loss split, the buffer estimator and a whole run. Expected values are computed here from
 * the generated data (own sort, own percentile), never copied from the code under test. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "client/analysis/analysis.h"
#include "client/analysis/analysis_queue.h"
#include "client/model/config.h"
#include "client/model/result.h"

#define MS (1000000LL)
#define SEC (1000000000LL)
#define T0 (1000 * SEC)           /* an arbitrary non-zero monotonic origin */
#define RATE_BPS 2500000.0        /* bytes per second: 20 Mbit/s */
#define IV ANALYSIS_STEADY_INTERVAL_NS
#define STEP (10 * MS)            /* throughput sample and probe interval */
#define SAW_PERIOD (1300 * MS)    /* sawtooth period, deliberately off the probe grid */

static void assert_close(double got, double want, double tol, const char *what)
{
	if (!(fabs(got - want) <= tol))
		fail_msg("%s: got %.9f, want %.9f (tolerance %g)", what, got, want, tol);
}

/* ---- independent reference: insertion sort + type-7 percentile ---- */

static void ref_sort(double *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		double x = v[i];
		size_t j = i;

		while (j > 0 && v[j - 1] > x) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
}

static double ref_percentile(double *v, size_t n, double p)
{
	double rank = p / 100.0 * (double)(n - 1);
	size_t lo = (size_t)floor(rank);

	ref_sort(v, n);
	if (lo + 1 >= n)
		return v[n - 1];
	return v[lo] + (rank - (double)lo) * (v[lo + 1] - v[lo]);
}

/* Lower quartile of the maxima of consecutive 1 s blocks of the time-ordered q[0..m) sampled over
 * [from, to) — written out independently of analysis_block_maxima. Call before sorting q. */
/* The 1 s blocks' second-highest values of q (as the buffer estimate takes them), sorted;
 * returns how many. */
static size_t ref_block_maxima(const double *q, size_t m, int64_t from, int64_t to, double *mx)
{
	size_t block = (size_t)llround((double)m * 1e9 / (double)(to - from)), nb = 0;

	for (size_t i = 0; i + (block + 1) / 2 <= m && nb < 64; i += block) {
		double x = -INFINITY, second = -INFINITY;

		for (size_t j = i; j < i + block && j < m; j++) {
			second = fmax(second, fmin(x, q[j]));
			x = fmax(x, q[j]);
		}
		mx[nb++] = second;
	}
	ref_sort(mx, nb);
	return nb;
}

static double ref_block_median(const double *q, size_t m, int64_t from, int64_t to)
{
	double mx[64];
	size_t nb = ref_block_maxima(q, m, from, to, mx);

	return ref_percentile(mx, nb, ANALYSIS_BLOCK_MAX_QUANTILE);
}

/* The highest sustained queue: the second-highest of the 1 s blocks' 90th percentiles (the
 * highest below four). */
static double ref_sustained(const double *q, size_t m, int64_t from, int64_t to)
{
	size_t block = (size_t)llround((double)m * 1e9 / (double)(to - from)), nb = 0;
	double p90[64], v[1024];

	for (size_t i = 0; i + (block + 1) / 2 <= m && nb < 64; i += block) {
		size_t k = 0;

		for (size_t j = i; j < i + block && j < m && k < 1024; j++)
			v[k++] = q[j];
		ref_sort(v, k);
		p90[nb++] = ref_percentile(v, k, 90);
	}
	ref_sort(p90, nb);
	return p90[nb >= 4 ? nb - 2 : nb - 1];
}

/* ---- generators ---- */

/* Queueing delay of a tail-drop queue under CUBIC: ramps 70 -> 100 ms, drops, repeats. */
static int64_t sawtooth_q(int64_t t)
{
	return 70 * MS + 30 * MS * (t % SAW_PERIOD) / SAW_PERIOD;
}

/* Cumulative bytes at t (relative, ns) of a flow whose rate rises linearly from 0 to R over
 * ramp_ns, then stays at R. */
static double ramp_bytes(int64_t t, int64_t ramp_ns)
{
	double ts = (double)t / SEC, rs = (double)ramp_ns / SEC;

	if (t <= ramp_ns)
		return RATE_BPS * ts * ts / (2 * rs);
	return RATE_BPS * rs / 2 + RATE_BPS * (ts - rs);
}

/* A series sampled every STEP from start over dur; ramp_ns = 0 means constant rate. */
static struct tput_rec *ramp_series(int64_t start, int64_t dur, int64_t ramp_ns, size_t *n)
{
	size_t m = (size_t)(dur / STEP) + 1;
	struct tput_rec *s = calloc(m, sizeof(*s));

	assert_non_null(s);
	for (size_t i = 0; i < m; i++) {
		int64_t t = (int64_t)i * STEP;

		s[i].t_ns = start + t;
		s[i].bytes = (uint64_t)llround(ramp_ns > 0 ? ramp_bytes(t, ramp_ns)
							    : RATE_BPS * (double)t / SEC);
	}
	*n = m;
	return s;
}

/* A series whose rate over interval k (of IV) is R * factor(k, arg). */
static struct tput_rec *interval_series(int64_t start, int64_t dur, double (*factor)(int, double),
					double arg, size_t *n)
{
	size_t m = (size_t)(dur / STEP) + 1;
	struct tput_rec *s = calloc(m, sizeof(*s));
	double bytes = 0;

	assert_non_null(s);
	for (size_t i = 0; i < m; i++) {
		int64_t t = (int64_t)i * STEP;

		if (i > 0)
			bytes += RATE_BPS * factor((int)((t - STEP) / IV), arg) * (double)STEP / SEC;
		s[i].t_ns = start + t;
		s[i].bytes = (uint64_t)llround(bytes);
	}
	*n = m;
	return s;
}

/* Alternates R(1 + a) and R(1 - a) from one interval to the next. */
static double alternating_factor(int k, double a)
{
	return k % 2 ? 1 - a : 1 + a;
}

static struct tput_rec *alternating_series(int64_t start, int64_t dur, double a, size_t *n)
{
	return interval_series(start, dur, alternating_factor, a, n);
}

/* Grows by a factor g per interval, like slow start: never stable. */
static double exp_factor(int k, double g)
{
	return pow(g, k);
}

/* Grows linearly by c per interval: moving averages M_k = R(1 + c(k − 1.5)); the last four
 * deviate from their mean by at most 1.5cR / (1 + c(k − 3)) relative. */
static double linear_factor(int k, double c)
{
	return 1 + c * k;
}

/* ---- analysis_rate_bps ---- */

static void test_rate_linear(void **state)
{
	size_t n;
	struct tput_rec *s = ramp_series(T0, 2 * SEC, 0, &n);

	assert_close(analysis_rate_bps(s, n, T0 + 500 * MS, T0 + 1500 * MS), 20e6, 1e-3, "rate");
	assert_close(analysis_rate_bps(s, n, T0, T0 + 2 * SEC), 20e6, 1e-3, "rate whole series");
	/* between samples: interpolation keeps a linear series exact */
	assert_close(analysis_rate_bps(s, n, T0 + 505 * MS + 1234, T0 + 1234567890), 20e6, 1e-2,
		     "rate between samples");
	/* outside coverage */
	assert_true(isnan(analysis_rate_bps(s, n, T0 - 1, T0 + SEC)));
	assert_true(isnan(analysis_rate_bps(s, n, T0 + SEC, T0 + 2 * SEC + 1)));
	assert_true(isnan(analysis_rate_bps(s, n, T0 + 3 * SEC, T0 + 4 * SEC)));
	/* empty or reversed interval, empty series */
	assert_true(isnan(analysis_rate_bps(s, n, T0 + SEC, T0 + SEC)));
	assert_true(isnan(analysis_rate_bps(s, n, T0 + SEC, T0 + SEC / 2)));
	assert_true(isnan(analysis_rate_bps(s, 0, T0, T0 + SEC)));
	free(s);
}

/* A 2-point series: the rate is the slope, whatever the sample spacing. */
static void test_rate_two_points(void **state)
{
	const struct tput_rec s[] = { { T0, 1000 }, { T0 + 4 * SEC, 1000 + 10000000 } };

	/* 10 MB in 4 s = 20 Mbit/s */
	assert_close(analysis_rate_bps(s, 2, T0 + SEC, T0 + 3 * SEC), 20e6, 1e-3, "slope");
}

/* ---- analysis_steady_start ---- */

static void test_steady_after_ramp(void **state)
{
	size_t n;
	struct tput_rec *s = ramp_series(T0, 5 * SEC, SEC, &n);
	int64_t got = analysis_steady_start(s, n, T0, T0 + 5 * SEC, IV, ANALYSIS_STEADY_TOLERANCE);

	/* The ramp ends at 1 s = 4 IV. Moving averages of intervals 3..6 and later are within
	 * 3.2 % of R; at the latest the 4 averages of the flat intervals 4..10 qualify. Worked out:
	 * interval 3 averages 7/8 R, so M6 = 0.96875 R, M7..M9 = R: mean 0.992 R, deviation
	 * 2.4 % < 5 %, and M5 = 0.875 R is too far: saturated at the end of interval 9. */
	assert_int_equal(got, T0 + 10 * IV);
	free(s);
}

static void test_steady_flat(void **state)
{
	size_t n;
	struct tput_rec *s = ramp_series(T0, 3 * SEC, 0, &n);

	/* flat from the first byte: 4 moving averages need 7 intervals */
	assert_int_equal(analysis_steady_start(s, n, T0, T0 + 3 * SEC, IV, 0.05), T0 + 7 * IV);
	/* fewer than 7 whole intervals fit: never */
	assert_int_equal(analysis_steady_start(s, n, T0, T0 + 7 * IV - 1, IV, 0.05), -1);
	/* no throughput data in range */
	assert_int_equal(analysis_steady_start(s, n, T0 + 10 * SEC, T0 + 20 * SEC, IV, 0.05), -1);
	free(s);
}

static void test_steady_never(void **state)
{
	size_t n;
	/* +5 % per interval: 4 consecutive averages spread 7.4 % around their mean, always */
	struct tput_rec *s = interval_series(T0, 5 * SEC, exp_factor, 1.05, &n);

	assert_int_equal(analysis_steady_start(s, n, T0, T0 + 5 * SEC, IV, ANALYSIS_STEADY_TOLERANCE),
			 -1);
	free(s);
}

/* Averaging: ±20 % alternation between intervals is stable on average (saturated), and the
 * tolerance is applied as given on a linear growth whose spread is known exactly. */
static void test_steady_tolerance(void **state)
{
	size_t n;
	struct tput_rec *s = alternating_series(T0, 3 * SEC, 0.20, &n);

	assert_int_equal(analysis_steady_start(s, n, T0, T0 + 3 * SEC, IV, 0.05), T0 + 7 * IV);
	free(s);
	/* c = 3 %: at k = 6 the spread is 0.045 / 1.09 = 4.1 %: passes 5 %, fails 3 % (which needs
	 * 1 + 0.03 (k − 3) >= 1.5, k >= 20, beyond 3 s = 12 intervals). */
	s = interval_series(T0, 3 * SEC, linear_factor, 0.03, &n);
	assert_int_equal(analysis_steady_start(s, n, T0, T0 + 3 * SEC, IV, 0.05), T0 + 7 * IV);
	assert_int_equal(analysis_steady_start(s, n, T0, T0 + 3 * SEC, IV, 0.03), -1);
	free(s);
}

/* ---- analysis_buffer ---- */

/* Round-trip queueing delay references: baseline 20 ms, and no baseline at all. */
static const struct delay_ref RTT20 = { DELAY_RTT, 20.0, NULL };
static const struct delay_ref RTT_NOBASE = { DELAY_RTT, NAN, NULL };

#define BUF_N 1000
#define RTT0_NS (20 * MS)

/* BUF_N probes every STEP from T0 with RTT = rtt0 + q_ns(t since T0, ctx); with lose, every
 * 7th is lost (its RTT field holds a poison value). */
static struct probe_rec *probes_of(int64_t (*q_ns)(int64_t t, const void *ctx), const void *ctx,
				   int lose)
{
	struct probe_rec *p = calloc(BUF_N, sizeof(*p));

	assert_non_null(p);
	for (int i = 0; i < BUF_N; i++) {
		int64_t t = (int64_t)i * STEP;

		p[i].seq = (uint32_t)i;
		p[i].send_ns = T0 + t;
		p[i].received = !lose || i % 7 != 3;
		p[i].rtt_ns = p[i].received ? RTT0_NS + q_ns(t, ctx) : 5 * SEC;
	}
	return p;
}

/* The sawtooth, after a first second at a 400 ms queue that the window must exclude. */
static int64_t buffer_q(int64_t t, const void *ctx)
{
	(void)ctx;
	return t < SEC ? 400 * MS : sawtooth_q(t);
}

static struct probe_rec *buffer_probes(void)
{
	return probes_of(buffer_q, NULL, 1);
}

/* q (ms) of the received probes sent in [from, to), from the generator, not the records. */
static size_t expected_q(int64_t from, int64_t to, double *q)
{
	size_t m = 0;

	for (int i = 0; i < BUF_N; i++) {
		int64_t t = (int64_t)i * STEP;

		if (T0 + t < from || T0 + t >= to || i % 7 == 3)
			continue;
		q[m++] = (double)buffer_q(t, NULL) / 1e6;
	}
	return m;
}

static void test_buffer_sawtooth(void **state)
{
	struct probe_rec *p = buffer_probes();
	struct buffer_estimate b;
	int64_t from = T0 + SEC, to = T0 + 9 * SEC;
	double q[BUF_N], want_ms, want_p50, want_p99, want_top;
	size_t m = expected_q(from, to, q);

	want_ms = ref_block_median(q, m, from, to);
	want_top = ref_sustained(q, m, from, to); /* before the percentiles sort q */
	want_p50 = ref_percentile(q, m, 50);
	want_p99 = ref_percentile(q, m, 99);
	assert_int_equal(analysis_buffer(p, BUF_N, from, to, &RTT20, 20e6, &b), 0);
	assert_int_equal(b.valid, 1);
	assert_int_equal(b.samples, m);
	assert_int_equal(m, 685); /* 800 probes in 100..899, minus the 115 with i % 7 == 3 */
	assert_close(b.ms, fmax(want_ms, b.peak_ms), 1e-6,
		     "buffer ms (median of the 1 s blocks' second-highest q, or the back-offs' level)");
	assert_true(b.ms > 97.0 && b.ms <= 100.0); /* the sawtooth's top is 100 ms */
	assert_close(b.q_p50_ms, want_p50, 1e-6, "q p50");
	assert_close(b.q_p99_ms, want_p99, 1e-6, "q p99");
	assert_close(b.q_max_ms, ref_percentile(q, m, 100), 1e-9, "q max");
	assert_close(b.sustained_ms, want_top, 1e-6, "sustained top");
	assert_true(b.ci_high_ms >= b.q_max_ms);
	/* bytes = ms x rate: 20 Mbit/s = 2.5 MB/s, so 1 ms holds 2500 bytes */
	assert_close(b.bytes, b.ms * 2500.0, 1e-3, "buffer bytes");
	assert_non_null(b.method);

	/* unknown rate: the delay is still valid, the size is not known */
	assert_int_equal(analysis_buffer(p, BUF_N, from, to, &RTT20, NAN, &b), 0);
	assert_true(isnan(b.bytes));
	assert_close(b.ms, fmax(want_ms, b.peak_ms), 1e-6, "buffer ms without rate");
	free(p);
}

/* A loaded host stalls once a second for 40 ms: the sender skips four slots, and the probes in
 * flight across each gap come back 40 ms late. Every second's maximum then reads 140 ms for a
 * queue that stood at 100 ms; without those probes the estimate is the queue's (the old code
 * read 140 ms). */
static void test_buffer_stalls_every_second(void **state)
{
	struct probe_rec *p = calloc(BUF_N, sizeof(*p));
	struct buffer_estimate b;
	size_t n = 0;

	assert_non_null(p);
	for (int i = 0; i < BUF_N; i++) {
		int64_t t = (int64_t)i * STEP, in_s = t % SEC;

		if (in_s >= 500 * MS && in_s < 540 * MS)
			continue; /* the stall: no slot sent */
		p[n].seq = (uint32_t)n;
		p[n].send_ns = T0 + t;
		p[n].received = 1;
		/* in flight at 490..540 ms of the second: held for the stall */
		p[n].rtt_ns = RTT0_NS + 100 * MS + (in_s >= 380 * MS && in_s <= 540 * MS ? 40 * MS : 0);
		n++;
	}
	assert_int_equal(analysis_buffer(p, n, T0, T0 + 9 * SEC, &RTT20, 20e6, &b), 0);
	assert_true(b.stall_held >= 9 * 12);
	assert_close(b.ms, 100.0, 1e-9, "the queue, not the stalls");
	assert_close(b.q_max_ms, 100.0, 1e-9, "no held probe in the samples");
	free(p);
}

/* A full queue at 100 ms, and in every second one probe a sub-interval host stall delayed by
 * 2 ms more (no slot skipped): the maxima of all seconds read 102 ms (the old estimate, +2 %);
 * the seconds' second-highest probes read the queue. */
static void test_buffer_lone_spikes_every_second(void **state)
{
	struct probe_rec *p = calloc(BUF_N, sizeof(*p));
	struct buffer_estimate b;

	assert_non_null(p);
	for (int i = 0; i < BUF_N; i++) {
		p[i].seq = (uint32_t)i;
		p[i].send_ns = T0 + (int64_t)i * STEP;
		p[i].received = 1;
		p[i].rtt_ns = RTT0_NS + 100 * MS + (i % 100 == 37 ? 2 * MS : 0);
	}
	assert_int_equal(analysis_buffer(p, BUF_N, T0, T0 + 9 * SEC, &RTT20, 20e6, &b), 0);
	assert_close(b.q_max_ms, 102.0, 1e-9, "the spikes are the maxima");
	assert_close(b.ms, 100.0, 1e-9, "the queue, not the spikes");
	assert_false(b.unstable);
	free(p);
}

/* Block maxima: full blocks, a trailing block kept only from half a block on, and a window
 * shorter than half a block taken as one block. */
static void test_block_maxima(void **state)
{
	const double q[] = { 1, 5, 2, 7, 3, 4, 9, 0, 6, 8, 2 };
	double out[8];

	assert_int_equal(analysis_block_maxima(q, 11, 4, 1, out), 3); /* 4 + 4 + 3 (≥ 2) */
	assert_true(out[0] == 7 && out[1] == 9 && out[2] == 8);
	assert_int_equal(analysis_block_maxima(q, 9, 4, 1, out), 2);  /* the ninth alone is < 2 */
	assert_true(out[0] == 7 && out[1] == 9);
	assert_int_equal(analysis_block_maxima(q, 3, 10, 1, out), 1); /* short window: one block */
	assert_true(out[0] == 5);
	assert_int_equal(analysis_block_maxima(q, 0, 4, 1, out), 0);
	/* rank 2: each block's second-highest (1 5 2 7 | 3 4 9 0 | 6 8 2), a lone sample its own */
	assert_int_equal(analysis_block_maxima(q, 11, 4, 2, out), 3);
	assert_true(out[0] == 5 && out[1] == 4 && out[2] == 6);
	assert_int_equal(analysis_block_maxima(q, 1, 4, 2, out), 1);
	assert_true(out[0] == 1);
}

/* Probes every STEP from T0, all answered: RTT = 20 ms + a CUBIC-like sawtooth that reaches
 * the 100 ms top only once every 3 s (60 ms after each backoff, rising slowly). */
static struct probe_rec *slow_sawtooth_probes(void)
{
	struct probe_rec *p = calloc(BUF_N, sizeof(*p));
	const int64_t period = 3 * SEC;

	assert_non_null(p);
	for (int i = 0; i < BUF_N; i++) {
		int64_t t = (int64_t)i * STEP;

		p[i].seq = (uint32_t)i;
		p[i].send_ns = T0 + t;
		p[i].received = 1;
		p[i].rtt_ns = RTT0_NS + 60 * MS + 40 * MS * (t % period + STEP) / period;
	}
	return p;
}

/* Most seconds' maxima lie well below the top, so their median reads low (< 90 ms); the
 * level before the two back-offs inside the window (at 3 s and 6 s; the one at 9 s has no
 * probes after it) is the top, and the estimate; the interval's upper end reaches the top. */
static void test_buffer_ci_slow_sawtooth(void **state)
{
	struct probe_rec *p = slow_sawtooth_probes();
	struct buffer_estimate b;

	assert_int_equal(analysis_buffer(p, BUF_N, T0, T0 + 9 * SEC, &RTT20, 20e6, &b), 0);
	assert_close(b.q_max_ms, 100.0, 1e-9, "the top is seen once per period");
	assert_int_equal(b.peaks, 2);
	/* the second-highest probe before each back-off: one step (40 ms / 300) under the top */
	assert_close(b.peak_ms, 100.0 - 40.0 / 300.0, 1e-6, "level before the back-offs");
	assert_close(b.ms, b.peak_ms, 1e-9, "the back-offs' level is the estimate");
	assert_close(b.bytes, b.ms / 1000.0 * 20e6 / 8.0, 1e-6, "bytes at that level");
	assert_int_equal(b.has_ci, 1);
	assert_true(b.ci_low_ms <= b.ms);
	assert_close(b.ci_high_ms, 100.0, 1e-9, "the upper end starts from the top seen");
	assert_close(b.ci_high_bytes, 100.0 / 1000.0 * 20e6 / 8.0, 1e-6, "its bytes at the rate");
	free(p);
}

/* A slow sawtooth that reached its top in one second only (the later back-offs 0.8 ms lower):
 * that second is no stall (less than two packets above the next), so the interval's upper end
 * starts from it. */
static void test_buffer_ci_one_top_visit(void **state)
{
	struct probe_rec *p = slow_sawtooth_probes();
	struct buffer_estimate b;

	for (int i = 0; i < BUF_N; i++)
		if ((int64_t)i * STEP >= 5 * SEC)
			p[i].rtt_ns -= 800000;
	assert_int_equal(analysis_buffer(p, BUF_N, T0, T0 + 9 * SEC, &RTT20, 20e6, &b), 0);
	assert_int_equal(b.peaks, 2);
	assert_close(b.ci_high_ms, 100.0, 1e-9, "the one second at the top");
	free(p);
}

/* A host stall raises one probe of one second to 250 ms: the maximum shows it, but the
 * interval's upper end ignores that one second (the second-highest second's maximum still
 * reaches the top); a second stalled second counts. */
static void test_buffer_ci_one_stall(void **state)
{
	struct probe_rec *p = slow_sawtooth_probes();
	struct buffer_estimate b;

	p[450].rtt_ns = RTT0_NS + 250 * MS;
	assert_int_equal(analysis_buffer(p, BUF_N, T0, T0 + 9 * SEC, &RTT20, 20e6, &b), 0);
	assert_close(b.q_max_ms, 250.0, 1e-9, "the stall is the maximum");
	assert_close(b.ci_high_ms, 100.0, 1e-9, "one stalled second does not stretch the interval");
	p[650].rtt_ns = RTT0_NS + 200 * MS;
	assert_int_equal(analysis_buffer(p, BUF_N, T0, T0 + 9 * SEC, &RTT20, 20e6, &b), 0);
	assert_close(b.ci_high_ms, 200.0, 1e-9, "two do");
	free(p);
}

/* Queueing delay (ms) at t, linear between knots (t in s, q in ms; the last knot holds). */
static double knots_q(const double (*k)[2], size_t n, double t)
{
	for (size_t i = 1; i < n; i++)
		if (t < k[i][0])
			return k[i - 1][1] + (k[i][1] - k[i - 1][1]) * (t - k[i - 1][0]) /
						     (k[i][0] - k[i - 1][0]);
	return k[n - 1][1];
}

struct knots {
	const double (*k)[2];
	size_t n;
};

static int64_t knots_q_ns(int64_t t, const void *ctx)
{
	const struct knots *kn = ctx;

	return (int64_t)(knots_q(kn->k, kn->n, (double)t / SEC) * MS);
}

static struct probe_rec *knots_probes(const double (*k)[2], size_t n)
{
	struct knots kn = { k, n };

	return probes_of(knots_q_ns, &kn, 0);
}

/* One cubic flow's slow climb (CI lab run, 100 ms buffer): one back-off from 98.3 ms at 5.9 s,
 * then the queue stands at that level again in the last two seconds. The seconds' levels
 * spread from 25 to 99.5 ms, but the top is steady: not unstable ("unstable" on the old rule,
 * which wanted two back-offs). When the queue never comes back (the second climb ends at
 * 90 ms), it is unstable. */
static void test_buffer_one_backoff_steady(void **state)
{
	static const double back[][2] = { { 0, 20 }, { 1, 25 }, { 2, 30 }, { 3, 35 }, { 4, 40 },
					  { 5, 87 }, { 5.9, 98.3 }, { 5.91, 72 }, { 7, 91 },
					  { 8, 97.7 }, { 9, 99.5 } };
	static const double never[][2] = { { 0, 20 }, { 1, 25 }, { 2, 30 }, { 3, 35 }, { 4, 40 },
					   { 5, 87 }, { 5.9, 98.3 }, { 5.91, 72 }, { 7, 80 },
					   { 8, 85 }, { 9, 90 } };
	struct probe_rec *p = knots_probes(back, sizeof(back) / sizeof(back[0]));
	struct buffer_estimate b;

	(void)state;
	assert_int_equal(analysis_buffer(p, BUF_N, T0, T0 + 9 * SEC + STEP, &RTT20, 20e6, &b), 0);
	assert_int_equal(b.peaks, 1);
	assert_true(b.from_peaks);
	assert_true(b.ms > 97.5 && b.ms <= 98.3);
	assert_true(b.ci_high_ms - b.ci_low_ms > 0.4 * b.ms); /* wide: the old rule's "unstable" */
	assert_false(b.unstable);
	free(p);
	p = knots_probes(never, sizeof(never) / sizeof(never[0]));
	assert_int_equal(analysis_buffer(p, BUF_N, T0, T0 + 9 * SEC + STEP, &RTT20, 20e6, &b), 0);
	assert_int_equal(b.peaks, 1);
	assert_true(b.unstable);
	free(p);
}

static void test_buffer_no_samples(void **state)
{
	struct probe_rec *p = buffer_probes();
	struct buffer_estimate b;

	/* empty window */
	memset(&b, 0x5a, sizeof(b));
	assert_int_equal(analysis_buffer(p, BUF_N, T0 + SEC, T0 + SEC, &RTT20, 20e6, &b), -1);
	assert_int_equal(b.valid, 0);
	/* window after the last probe */
	assert_int_equal(analysis_buffer(p, BUF_N, T0 + 20 * SEC, T0 + 30 * SEC, &RTT20, 20e6, &b), -1);
	assert_int_equal(b.valid, 0);
	/* every probe lost */
	for (int i = 0; i < BUF_N; i++)
		p[i].received = 0;
	assert_int_equal(analysis_buffer(p, BUF_N, T0, T0 + 20 * SEC, &RTT20, 20e6, &b), -1);
	assert_int_equal(b.valid, 0);
	assert_int_equal(b.samples, 0);
	/* no probes at all */
	assert_int_equal(analysis_buffer(p, 0, T0, T0 + 20 * SEC, &RTT20, 20e6, &b), -1);
	assert_int_equal(b.valid, 0);
	free(p);
}

static void test_buffer_no_baseline(void **state)
{
	struct probe_rec *p = buffer_probes();
	struct buffer_estimate b;

	assert_int_equal(analysis_buffer(p, BUF_N, T0, T0 + 20 * SEC, &RTT_NOBASE, 20e6, &b), -1);
	assert_int_equal(b.valid, 0);
	free(p);
}

/* ---- analysis_loss ---- */

/* Builds probes from a fate string: '.' answered, 'U' lost on the way to the server (not
 * counted there), 'D' lost on the way back (counted). Models the server's counter. Returns
 * the server's final count. */
static uint64_t loss_probes(const char *fates, struct probe_rec *p)
{
	uint64_t count = 0;
	size_t n = strlen(fates);

	memset(p, 0, n * sizeof(*p));
	for (size_t i = 0; i < n; i++) {
		p[i].seq = (uint32_t)i;
		p[i].send_ns = T0 + (int64_t)i * STEP;
		if (fates[i] != 'U')
			count++;
		if (fates[i] == '.') {
			p[i].received = 1;
			p[i].rtt_ns = 30 * MS;
			p[i].srv_count = count;
		}
	}
	return count;
}

static void check_loss(const struct phase_result *ph, size_t sent, size_t up, size_t down)
{
	assert_int_equal(ph->probes_sent, sent);
	assert_int_equal(ph->probes_received, sent - up - down);
	assert_int_equal(ph->lost_up, up);
	assert_int_equal(ph->lost_down, down);
	/* up % of everything sent; down % of what reached the server */
	assert_close(ph->loss_up_pct, 100.0 * (double)up / (double)sent, 1e-9, "loss up %");
	assert_close(ph->loss_down_pct, 100.0 * (double)down / (double)(sent - up), 1e-9,
		     "loss down %");
}

static void test_loss_none(void **state)
{
	struct probe_rec p[10];
	struct phase_result ph;
	uint64_t fin = loss_probes("..........", p);

	memset(&ph, 0, sizeof(ph));
	analysis_loss(p, 10, fin, T0, T0 + SEC, &ph);
	check_loss(&ph, 10, 0, 0);
}

static void test_loss_upstream(void **state)
{
	struct probe_rec p[10];
	struct phase_result ph;
	uint64_t fin = loss_probes("...U......", p);

	/* the generator matches the story: counts 1,2,3,_,4,5,... */
	assert_int_equal(p[2].srv_count, 3);
	assert_int_equal(p[4].srv_count, 4);
	assert_int_equal(p[9].srv_count, 9);
	memset(&ph, 0, sizeof(ph));
	analysis_loss(p, 10, fin, T0, T0 + SEC, &ph);
	check_loss(&ph, 10, 1, 0);
	assert_close(ph.loss_up_pct, 10.0, 1e-9, "10 % up");
	assert_close(ph.loss_down_pct, 0.0, 1e-9, "0 % down");
}

static void test_loss_downstream(void **state)
{
	struct probe_rec p[10];
	struct phase_result ph;
	uint64_t fin = loss_probes("...D......", p);

	assert_int_equal(p[4].srv_count, 5); /* the server counted #3 */
	memset(&ph, 0, sizeof(ph));
	analysis_loss(p, 10, fin, T0, T0 + SEC, &ph);
	check_loss(&ph, 10, 0, 1);
	assert_close(ph.loss_down_pct, 10.0, 1e-9, "10 % down");
}

static void test_loss_mixed_run(void **state)
{
	struct probe_rec p[10];
	struct phase_result ph;
	uint64_t fin = loss_probes("...UDDU...", p);

	memset(&ph, 0, sizeof(ph));
	analysis_loss(p, 10, fin, T0, T0 + SEC, &ph);
	check_loss(&ph, 10, 2, 2);
	assert_close(ph.loss_up_pct, 20.0, 1e-9, "20 % up");
	assert_close(ph.loss_down_pct, 25.0, 1e-9, "25 % down"); /* 2 of the 8 that arrived */
}

static void test_loss_at_start(void **state)
{
	struct probe_rec p[10];
	struct phase_result ph;
	uint64_t fin = loss_probes("DU........", p);

	memset(&ph, 0, sizeof(ph));
	analysis_loss(p, 10, fin, T0, T0 + SEC, &ph);
	check_loss(&ph, 10, 1, 1);
}

/* Losses after the last reply can only be split with the server's final count. */
static void test_loss_at_end(void **state)
{
	struct probe_rec p[10];
	struct phase_result ph;
	uint64_t fin = loss_probes(".......UDU", p);

	assert_int_equal(fin, 8);
	memset(&ph, 0, sizeof(ph));
	analysis_loss(p, 10, fin, T0, T0 + SEC, &ph);
	check_loss(&ph, 10, 2, 1);
	assert_close(ph.loss_down_pct, 12.5, 1e-9, "12.5 % down");

	/* all three reached the server: all lost downstream */
	fin = loss_probes(".......DDD", p);
	memset(&ph, 0, sizeof(ph));
	analysis_loss(p, 10, fin, T0, T0 + SEC, &ph);
	check_loss(&ph, 10, 0, 3);

	/* final count unknown: the split is a guess, but every loss is still counted once */
	loss_probes(".......UDU", p);
	memset(&ph, 0, sizeof(ph));
	analysis_loss(p, 10, 0, T0, T0 + SEC, &ph);
	assert_int_equal(ph.probes_sent, 10);
	assert_int_equal(ph.probes_received, 7);
	assert_int_equal(ph.lost_up + ph.lost_down, 3);
}

static void test_loss_all_lost(void **state)
{
	struct probe_rec p[4];
	struct phase_result ph;
	uint64_t fin = loss_probes("UDUD", p);

	assert_int_equal(fin, 2);
	memset(&ph, 0, sizeof(ph));
	analysis_loss(p, 4, fin, T0, T0 + SEC, &ph);
	check_loss(&ph, 4, 2, 2);
}

/* Only probes sent in [from, to) count; losses just outside (including one sent exactly at
 * `to`) are not charged to the window. */
static void test_loss_window(void **state)
{
	static const char fates[] = "........." "U" /* 0..9: #9 lost just before the window */
				    "..D..UD..." /* 10..19: the window */
				    "U....U....";   /* 20..29: #20 sent exactly at `to` */
	struct probe_rec p[30];
	struct phase_result ph;
	uint64_t fin = loss_probes(fates, p);

	memset(&ph, 0, sizeof(ph));
	analysis_loss(p, 30, fin, T0 + 10 * STEP, T0 + 20 * STEP, &ph);
	check_loss(&ph, 10, 1, 2);
	assert_close(ph.loss_down_pct, 100.0 * 2 / 9, 1e-9, "down % of 9 arrived");

	/* the whole run sees all six */
	memset(&ph, 0, sizeof(ph));
	analysis_loss(p, 30, fin, T0, T0 + 30 * STEP, &ph);
	check_loss(&ph, 30, 4, 2);

	/* an empty window: nothing sent, percentages undefined */
	memset(&ph, 0, sizeof(ph));
	analysis_loss(p, 30, fin, T0 + 100 * SEC, T0 + 200 * SEC, &ph);
	assert_int_equal(ph.probes_sent, 0);
	assert_int_equal(ph.probes_received, 0);
	assert_int_equal(ph.lost_up + ph.lost_down, 0);
	assert_true(isnan(ph.loss_up_pct));
}

/* A window edge inside a run of losses hands the window a fractional share of each lost probe;
 * the rounded up and down counts must still add up to the probes lost in the window. */
static void test_loss_window_splits_run(void **state)
{
	struct probe_rec p[10];
	struct phase_result ph;
	uint64_t fin = loss_probes("..UD......", p);

	/* [3, 10): one lost probe (#3) of a two-probe run that is half upstream */
	memset(&ph, 0, sizeof(ph));
	analysis_loss(p, 10, fin, T0 + 3 * STEP, T0 + 10 * STEP, &ph);
	assert_int_equal(ph.probes_sent, 7);
	assert_int_equal(ph.probes_received, 6);
	assert_int_equal(ph.lost_up + ph.lost_down, 1);
	/* [0, 3): the other half of the run */
	memset(&ph, 0, sizeof(ph));
	analysis_loss(p, 10, fin, T0, T0 + 3 * STEP, &ph);
	assert_int_equal(ph.probes_sent, 3);
	assert_int_equal(ph.probes_received, 2);
	assert_int_equal(ph.lost_up + ph.lost_down, 1);
}

/* ---- the queue verdict decides "managed" ---- */

/* One saturated download phase with the given standing queue, and a downlink estimate that
 * the "short, with drops" hint called managed. */
static void make_verdict_run(struct test_result *r, double p50, double p95, double top)
{
	struct client_config cfg;

	config_defaults(&cfg);
	result_init(r, &cfg);
	r->phases[0] = (struct phase_result){ .kind = PHASE_DOWNLOAD, .start_ns = T0,
					      .end_ns = T0 + 10 * SEC, .steady_start_ns = T0 + SEC,
					      .saturated = 1, .down_mbps = 470, .retrans_down = 900 };
	r->phases[0].q_down_ms = (struct stats_summary){ .n = 900, .p50 = p50, .p95 = p95 };
	r->nphases = 1;
	r->ip_overhead = 1.05;
	r->buffer_down = (struct buffer_estimate){ .valid = 1, .ms = top, .sustained_ms = top,
						   .managed = 1 };
	r->buffer_bidir_down.managed = 1;
}

static void test_verdict_decides_managed(void **state)
{
	struct test_result r;

	(void)state;
	/* A full 5 ms FIFO at 500 Mbit/s (the lab's figures): not managed, bidir estimate too. */
	make_verdict_run(&r, 4.744, 4.9, 4.953);
	analysis_queue(&r, 4.525, NAN);
	assert_string_equal(r.queue_down.verdict, "fifo");
	assert_false(r.buffer_down.managed);
	assert_false(r.buffer_bidir_down.managed);
	result_free(&r);
	/* CoDel-like: probes lost at the standing queue, far below the top: managed. */
	make_verdict_run(&r, 5, 12, 20);
	r.buffer_down.managed = 0;
	r.phases[0].loss_down.steady_lost = 3;
	r.phases[0].loss_down.steady_q_before_ms = 6;
	analysis_queue(&r, 2, NAN);
	assert_string_equal(r.queue_down.verdict, "aqm");
	assert_true(r.buffer_down.managed);
	result_free(&r);
	/* Unknown (drops, but no probe placed them): the hint stands. */
	make_verdict_run(&r, 10, 15, 20);
	analysis_queue(&r, 3, NAN);
	assert_string_equal(r.queue_down.verdict, "unknown");
	assert_true(r.buffer_down.managed);
	result_free(&r);
}

/* A download phase of make_verdict_run with 10 s of load-flow readings: the client's
 * receive-side RTT estimate at rcv_ms, the server's sender-side smoothed RTT at srtt_ms. */
static void add_flow_rtts(struct test_result *r, double rcv_ms, double srtt_ms)
{
	size_t n = 100;

	r->rtt0_ms = 0.3;
	r->flows = calloc(n, sizeof(*r->flows));
	r->up = calloc(n, sizeof(*r->up));
	r->srv_srtt_us = calloc(n, sizeof(*r->srv_srtt_us));
	assert_non_null(r->flows);
	assert_non_null(r->up);
	assert_non_null(r->srv_srtt_us);
	for (size_t i = 0; i < n; i++) {
		int64_t t = T0 + (int64_t)i * SEC / 10;

		r->flows[i] = (struct flow_sample){ .t_ns = t, .rtt_us = 300,
						    .rcv_rtt_us = (uint32_t)(rcv_ms * 1e3) };
		r->up[i].t_ns = t;
		r->srv_srtt_us[i] = (uint32_t)(srtt_ms * 1e3);
	}
	r->nflows = r->nup = n;
}

/* A policer drops ~1400 segments with no queue; loss recovery inflates the receiver's RTT
 * estimate of the download flows (208 ms in CI), not the sender's: no flow queuing. */
static void test_verdict_policer_not_fq(void **state)
{
	struct test_result r;

	(void)state;
	make_verdict_run(&r, 0.2, 1.1, 1.5);
	r.phases[0].retrans_down = 1429;
	add_flow_rtts(&r, 208, 0.9);
	analysis_queue(&r, 0.05, NAN);
	assert_string_equal(r.queue_down.verdict, "policer");
	assert_close(r.queue_down.flow_q_ms, 0.6, 0.01, "the sender's RTT rise");
	result_free(&r);
	/* Flow queuing: the sender's own RTT rises while the probes see no queue. */
	make_verdict_run(&r, 0.2, 1.1, 1.5);
	add_flow_rtts(&r, 60, 40.3);
	analysis_queue(&r, 0.05, NAN);
	assert_string_equal(r.queue_down.verdict, "fq");
	result_free(&r);
	/* No server readings (an older server): no flow-queuing claim for the downlink. */
	make_verdict_run(&r, 0.2, 1.1, 1.5);
	add_flow_rtts(&r, 208, 0.9);
	free(r.srv_srtt_us);
	r.srv_srtt_us = NULL;
	analysis_queue(&r, 0.05, NAN);
	assert_string_equal(r.queue_down.verdict, "policer");
	result_free(&r);
}

/* ---- analysis_run on a whole synthetic test ---- */

#define RUN_IDLE (2 * SEC)
#define RUN_LOAD (10 * SEC)
#define RUN_RAMP SEC
#define RUN_DRAIN (2 * SEC) /* probes after the load: the clock sync's second window */
#define RUN_N ((size_t)((RUN_IDLE + RUN_LOAD + RUN_DRAIN) / STEP))
#define RUN_SRV_OFFSET (777 * SEC) /* server clock − client clock */
#define RUN_UP (10 * MS)           /* constant upstream delay: all queueing is downstream */
#define RUN_HOLD 10000             /* server hold time, ns */

/* Idle RTT: 20.0 .. 20.9 ms, minimum at the first probe. */
static int64_t idle_rtt(size_t i)
{
	return RTT0_NS + (int64_t)((i * 7) % 10) * 100000;
}

/* Queueing delay t ns into the download phase: builds up to 70 ms during the ramp, then the
 * sawtooth between 70 and 100 ms. */
static int64_t load_q(int64_t t)
{
	return t < RUN_RAMP ? 70 * MS * t / RUN_RAMP : sawtooth_q(t - RUN_RAMP);
}

static int run_lost(size_t i)
{
	int64_t t = (int64_t)i * STEP;

	return t >= RUN_IDLE && t < RUN_IDLE + RUN_LOAD && i % 50 == 25;
}

/* Fills r with an idle phase then a download phase (or only the download phase). */
static void make_run(struct test_result *r, int with_idle, int steady)
{
	struct client_config cfg;
	int64_t load_start = T0 + RUN_IDLE;
	uint64_t count = 0;
	int k = 0;

	config_defaults(&cfg);
	result_init(r, &cfg);
	if (with_idle)
		r->phases[k++] = (struct phase_result){ .kind = PHASE_IDLE, .start_ns = T0,
							.end_ns = load_start };
	r->phases[k++] = (struct phase_result){ .kind = PHASE_DOWNLOAD, .start_ns = load_start,
						.end_ns = load_start + RUN_LOAD };
	r->nphases = k;
	r->ip_overhead = 1.05;

	r->probes = calloc(RUN_N, sizeof(*r->probes));
	assert_non_null(r->probes);
	r->nprobes = RUN_N;
	for (size_t i = 0; i < RUN_N; i++) {
		struct probe_rec *p = &r->probes[i];
		int64_t t = (int64_t)i * STEP;

		p->seq = (uint32_t)i;
		p->send_ns = T0 + t;
		if (run_lost(i))
			continue; /* lost upstream: the server never counts it */
		count++;
		p->received = 1;
		p->ts_kernel = 1;
		p->srv_count = count;
		p->rtt_ns = t < RUN_IDLE || t >= RUN_IDLE + RUN_LOAD ? idle_rtt(i)
								       : RTT0_NS + load_q(t - RUN_IDLE);
		p->srv_rx_ns = p->send_ns + RUN_UP + RUN_SRV_OFFSET;
		p->srv_tx_ns = p->srv_rx_ns + RUN_HOLD;
		r->probes_kernel_ts++;
	}
	r->srv_probe_count = count;
	r->down = steady ? ramp_series(load_start, RUN_LOAD, RUN_RAMP, &r->ndown)
			 : interval_series(load_start, RUN_LOAD, exp_factor, 1.05, &r->ndown);
}

/* Expected RTT (ms) and q (ms, against rtt0 = 20 ms) of received probes sent in [from, to). */
static size_t run_expected(int64_t from, int64_t to, double *rtt, double *q)
{
	size_t m = 0;

	for (size_t i = 0; i < RUN_N; i++) {
		int64_t t = (int64_t)i * STEP;
		int64_t v;

		if (T0 + t < from || T0 + t >= to || run_lost(i))
			continue;
		v = t < RUN_IDLE ? idle_rtt(i) : RTT0_NS + load_q(t - RUN_IDLE);
		rtt[m] = (double)v / 1e6;
		q[m] = (double)(v - RTT0_NS) / 1e6;
		m++;
	}
	return m;
}

static void test_run_complete(void **state)
{
	static double rtt[RUN_N], q[RUN_N];
	struct test_result r;
	struct phase_result *idle, *down;
	int64_t load_start = T0 + RUN_IDLE, steady;
	double idle_p50, down_p50, want_ms, want_p95;
	size_t m, lost = 0;

	make_run(&r, 1, 1);
	analysis_run(&r);
	idle = &r.phases[0];
	down = &r.phases[1];

	/* baseline: the idle minimum */
	assert_close(r.rtt0_ms, 20.0, 1e-9, "rtt0");

	/* saturation: ramp for 1 s, then 4 flat intervals */
	steady = load_start + 10 * IV; /* see test_steady_after_ramp */
	assert_int_equal(down->saturated, 1);
	assert_int_equal(down->steady_start_ns, steady);
	assert_close(down->down_mbps, 20.0, 1e-6, "download Mbit/s");
	assert_true(isnan(down->up_mbps));

	/* RTT and latency increase: download p50 over the steady window minus idle p50 */
	m = run_expected(T0, load_start, rtt, q);
	assert_int_equal(idle->rtt_ms.n, m);
	idle_p50 = ref_percentile(rtt, m, 50);
	assert_close(idle->rtt_ms.p50, idle_p50, 1e-9, "idle p50");
	assert_close(idle->rtt_ms.min, 20.0, 1e-9, "idle min");
	m = run_expected(steady, load_start + RUN_LOAD, rtt, q);
	assert_int_equal(down->rtt_ms.n, m);
	down_p50 = ref_percentile(rtt, m, 50);
	assert_close(down->latency_increase_ms, down_p50 - idle_p50, 1e-6, "latency increase");
	assert_true(down->latency_increase_ms > 60 && down->latency_increase_ms < 90);
	assert_true(isnan(idle->latency_increase_ms));

	/* downstream buffer: median of the 1 s maxima of q over the steady window, size at the
	 * IP-level rate */
	want_ms = ref_block_median(q, m, steady, load_start + RUN_LOAD);
	want_p95 = ref_percentile(q, m, 95);
	assert_int_equal(r.buffer_down.valid, 1);
	assert_int_equal(r.buffer_down.phase, PHASE_DOWNLOAD);
	assert_int_equal(r.buffer_down.lower_bound, 0);
	assert_int_equal(r.buffer_down.samples, m);
	assert_close(r.buffer_down.ms, want_ms, 1e-6, "buffer_down ms");
	assert_true(r.buffer_down.ms > 97.0 && r.buffer_down.ms <= 100.0);
	assert_close(r.buffer_down.bytes, want_ms / 1000.0 * 20e6 * 1.05 / 8.0, 1e-2,
		     "buffer_down bytes");
	/* the interval: its upper end raised by two packet times (1500 B as the MSS is unknown)
	 * at the IP-level rate */
	assert_int_equal(r.buffer_down.has_ci, 1);
	assert_close(r.buffer_down.resolution_ms, 2 * 1500 * 8.0 / (20e6 * 1.05) * 1e3, 1e-9,
		     "two packet times");
	assert_true(r.buffer_down.ci_low_ms <= r.buffer_down.ms);
	assert_true(r.buffer_down.ci_high_ms - r.buffer_down.resolution_ms >= r.buffer_down.ms);
	assert_close(r.buffer_down.ci_high_bytes - r.buffer_down.ci_high_ms / 1000.0 * 20e6 * 1.05 / 8.0,
		     0.0, 1e-6, "bytes interval at the same rate");
	/* no upload phase: no upstream estimate */
	assert_int_equal(r.buffer_up.valid, 0);

	/* clock sync from idle + drain recovers the offset; all queueing shows downstream */
	assert_int_equal(r.sync.valid, 1);
	assert_int_equal(r.sync.drift_fitted, 1);
	assert_true(fabs(r.sync.drift) < 1e-9);
	assert_close(r.owd0_up_ms, 10.0, 0.51, "upstream base 10 ms (offset error ≤ half the RTT spread)");
	assert_close(down->q_up_ms.p99, 0.0, 1e-6, "no upstream queueing");
	assert_close(down->q_down_ms.p95, want_p95, 1e-6, "downstream queueing p95");
	assert_true(strstr(r.buffer_down.method, "one-way") != NULL);

	/* loss: every 50th load probe, all upstream */
	for (size_t i = 0; i < RUN_N; i++)
		lost += run_lost(i);
	assert_int_equal(idle->probes_sent, RUN_IDLE / STEP);
	assert_int_equal(idle->lost_up + idle->lost_down, 0);
	assert_int_equal(down->probes_sent, RUN_LOAD / STEP);
	assert_int_equal(down->lost_up, lost);
	assert_int_equal(down->lost_down, 0);

	/* a clean run has nothing to warn about */
	if (r.nwarnings != 0)
		fail_msg("unexpected warning: %s", r.warnings[0]);
	result_free(&r);
}

/* No idle phase and a load that never settles: the baseline is the run's minimum, the window
 * is the second half of the phase, the estimate is a lower bound, and both are said. */
static void test_run_degraded(void **state)
{
	static double rtt[RUN_N], q[RUN_N];
	struct test_result r;
	struct phase_result *down;
	int64_t load_start = T0 + RUN_IDLE, half = load_start + RUN_LOAD / 2;
	double min_rtt = INFINITY, want_mbps;
	size_t m;

	make_run(&r, 0, 0);
	analysis_run(&r);
	down = &r.phases[0];

	/* the run's minimum: its first probe, sent before the download phase, at 20 ms */
	m = run_expected(T0, load_start + RUN_LOAD, rtt, q);
	for (size_t i = 0; i < m; i++)
		min_rtt = fmin(min_rtt, rtt[i]);
	assert_close(min_rtt, 20.0, 1e-9, "generator minimum");
	assert_close(r.rtt0_ms, min_rtt, 1e-9, "rtt0 from the whole run");

	assert_int_equal(down->saturated, 0);
	assert_true(down->steady_start_ns == -1);
	assert_true(isnan(down->latency_increase_ms));

	m = run_expected(half, load_start + RUN_LOAD, rtt, q);
	assert_int_equal(r.buffer_down.valid, 1);
	assert_int_equal(r.buffer_down.lower_bound, 1);
	assert_int_equal(r.buffer_down.samples, m);
	/* A lower bound reports the highest sustained queue of the window, not its median
	 * (issue 15): the real buffer is at least that — the largest of the median of the 1 s
	 * maxima, the level before the back-offs and the 1 s blocks' 90th percentiles. */
	assert_true(r.buffer_down.peaks >= 2);
	assert_close(r.buffer_down.ms,
		     fmax(fmax(ref_sustained(q, m, half, load_start + RUN_LOAD), r.buffer_down.peak_ms),
			  ref_block_median(q, m, half, load_start + RUN_LOAD)),
		     1e-6, "buffer over second half");
	assert_true(r.buffer_down.ms <= 100.0);
	assert_true(r.buffer_down.ms >= ref_block_median(q, m, half, load_start + RUN_LOAD));
	/* goodput over the second half: intervals 20..39 of the +5 %-per-interval growth */
	want_mbps = 0;
	for (int k = 20; k < 40; k++)
		want_mbps += RATE_BPS * 8 / 1e6 * pow(1.05, k) / 20;
	assert_close(down->down_mbps, want_mbps, 1e-3, "download Mbit/s over the second half");
	assert_int_equal(r.buffer_up.valid, 0);
	assert_int_equal(r.nwarnings, 2); /* no idle phase; never stable */
	result_free(&r);
}

/* Senders limited by the receive window for half their busy time: the estimate stays, but as a
 * lower bound with the reason, and the report warns. 10 % is the threshold. */
static void test_run_window_limited(void **state)
{
	struct test_result r;

	make_run(&r, 1, 1);
	r.phases[1].rwnd_limited_down = 0.5;
	analysis_run(&r);
	assert_int_equal(r.buffer_down.valid, 1);
	assert_int_equal(r.buffer_down.lower_bound, 1);
	assert_string_equal(r.buffer_down.lower_bound_why, "receive window");
	assert_int_equal(r.nwarnings, 1);
	assert_non_null(strstr(r.warnings[0], "receive window 50 %"));
	result_free(&r);

	make_run(&r, 1, 1);
	r.phases[1].sndbuf_limited_down = 0.09; /* under the threshold: not a limit */
	analysis_run(&r);
	assert_int_equal(r.buffer_down.lower_bound, 0);
	assert_null(r.buffer_down.lower_bound_why);
	result_free(&r);
}

/* The receiver's bytes come in bursts (make_run's unsteady series: never saturated), but the
 * server's stats say its download flows delivered 20 Mbit/s from the start: the phase
 * saturated, judged and its goodput taken on the senders' count (delivered.h). */
static void test_run_delivered_steadies(void **state)
{
	struct test_result r;
	int64_t load_start = T0 + RUN_IDLE;
	size_t n = (size_t)(RUN_LOAD / (100 * MS)) + 1;

	(void)state;
	make_run(&r, 1, 0);
	analysis_run(&r);
	assert_int_equal(r.phases[1].saturated, 0); /* the receiver's bytes alone */
	result_free(&r);

	make_run(&r, 1, 0);
	r.up = calloc(n, sizeof(*r.up));
	r.srv_dlv_bytes = calloc(n, sizeof(*r.srv_dlv_bytes));
	assert_non_null(r.up);
	assert_non_null(r.srv_dlv_bytes);
	for (size_t i = 0; i < n; i++) {
		r.up[i].t_ns = load_start + (int64_t)i * 100 * MS;
		r.srv_dlv_bytes[i] = 1 + (uint64_t)i * 250000; /* 20 Mbit/s */
	}
	r.nup = n;
	analysis_run(&r);
	assert_int_equal(r.phases[1].saturated, 1);
	assert_int_equal(r.phases[1].steady_start_ns, load_start + 7 * IV);
	assert_close(r.phases[1].down_mbps, 20.0, 1e-9, "goodput from the senders' count");
	result_free(&r);
}

/* Probe i of a make_run run lost downstream: the server counted it, the reply never came. */
static void lose_downstream(struct test_result *r, size_t i)
{
	r->probes[i].received = 0;
	for (size_t j = i + 1; j < r->nprobes; j++)
		if (r->probes[j].received)
			r->probes[j].srv_count++;
	r->srv_probe_count++;
}

/* Slow start overshoots the buffer and loses probes there; the queue verdict compares where
 * the probes were lost with the steady window's top, so it takes the losses (and the queue
 * before them) of the steady window only, while the phase's loss pattern keeps them all. */
static void test_run_verdict_steady_losses(void **state)
{
	struct test_result r;
	const struct phase_result *down;
	size_t ramp = (size_t)((RUN_IDLE + RUN_RAMP / 2) / STEP);
	size_t steady = (size_t)((RUN_IDLE + 3 * SEC) / STEP) + 3; /* past the ramp's 10 IV */
	double want = 0;

	(void)state;
	make_run(&r, 1, 1);
	for (size_t k = 0; k < 3; k++) { /* three overshoots to 150 ms, each losing the next probe */
		r.probes[ramp + 4 * k].rtt_ns = RTT0_NS + 150 * MS;
		lose_downstream(&r, ramp + 4 * k + 1);
	}
	for (size_t k = 0; k < 2; k++) { /* two steady losses, 2 s apart */
		size_t i = steady + k * (size_t)(2 * SEC / STEP);

		lose_downstream(&r, i);
		want += (double)(r.probes[i - 1].rtt_ns - RTT0_NS) / 1e6 / 2;
	}
	analysis_run(&r);
	down = &r.phases[1];
	assert_true(down->steady_start_ns <= r.probes[steady].send_ns);
	assert_true(down->steady_start_ns > r.probes[ramp + 9].send_ns);
	assert_int_equal(down->loss_down.lost, 5);
	assert_close(down->loss_down.q_before_ms, 150.0, 0.6, "the phase's q before loss");
	assert_int_equal(down->loss_down.steady_lost, 2);
	assert_int_equal(r.queue_down.probe_losses, 2);
	assert_close(r.queue_down.q_before_loss_ms, want, 0.6, "the verdict's: steady window only");
	result_free(&r);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verdict_decides_managed),
		cmocka_unit_test(test_verdict_policer_not_fq),
		cmocka_unit_test(test_buffer_one_backoff_steady),
		cmocka_unit_test(test_rate_linear),
		cmocka_unit_test(test_rate_two_points),
		cmocka_unit_test(test_steady_after_ramp),
		cmocka_unit_test(test_steady_flat),
		cmocka_unit_test(test_steady_never),
		cmocka_unit_test(test_steady_tolerance),
		cmocka_unit_test(test_buffer_sawtooth),
		cmocka_unit_test(test_block_maxima),
		cmocka_unit_test(test_buffer_ci_slow_sawtooth),
		cmocka_unit_test(test_buffer_ci_one_stall),
		cmocka_unit_test(test_buffer_stalls_every_second),
		cmocka_unit_test(test_buffer_lone_spikes_every_second),
		cmocka_unit_test(test_buffer_ci_one_top_visit),
		cmocka_unit_test(test_buffer_no_samples),
		cmocka_unit_test(test_buffer_no_baseline),
		cmocka_unit_test(test_loss_none),
		cmocka_unit_test(test_loss_upstream),
		cmocka_unit_test(test_loss_downstream),
		cmocka_unit_test(test_loss_mixed_run),
		cmocka_unit_test(test_loss_at_start),
		cmocka_unit_test(test_loss_at_end),
		cmocka_unit_test(test_loss_all_lost),
		cmocka_unit_test(test_loss_window),
		cmocka_unit_test(test_run_complete),
		cmocka_unit_test(test_run_delivered_steadies),
		cmocka_unit_test(test_run_degraded),
		cmocka_unit_test(test_loss_window_splits_run),
		cmocka_unit_test(test_run_window_limited),
		cmocka_unit_test(test_run_verdict_steady_losses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for client/analysis/clocksync.c: offset and drift recovered from synthetic exchanges with
 * a known offset, drift and path delays, and one-way delays computed from the fit. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "client/analysis/clocksync.h"

#define MS 1000000LL
#define SEC 1000000000LL
#define N 3000 /* 30 s of probes every 10 ms */

/* Truth: server clock = client clock + OFFSET + DRIFT × t. */
#define OFFSET (123456789.0 * MS) /* arbitrary: monotonic clocks share no epoch */
#define DRIFT 20e-6               /* 20 ppm, a poor crystal */

static double server_clock(double client_t)
{
	return client_t + OFFSET + DRIFT * client_t;
}

/* Exchanges with base delays up/down (ms) plus extra queueing: the first 10 s and the last 5 s
 * idle (jitter only), in between `load_up`/`load_down` ms of queueing. The server holds each
 * request 20 µs. Deterministic pseudo-random jitter. */
static struct probe_rec *exchanges(double up, double down, double load_up, double load_down)
{
	struct probe_rec *p = calloc(N, sizeof(*p));
	unsigned seed = 7;

	for (int i = 0; i < N; i++) {
		double t = (double)(i * 10 * MS), j1, j2, qu = 0, qd = 0, srx, stx, crx;

		seed = seed * 1103515245u + 12345u;
		j1 = (double)(seed >> 16 & 0x3ff) / 1023.0 * 0.5 * MS; /* 0..0.5 ms */
		seed = seed * 1103515245u + 12345u;
		j2 = (double)(seed >> 16 & 0x3ff) / 1023.0 * 0.5 * MS;
		if (t >= 10 * SEC && t < 25 * SEC) {
			qu = load_up * MS;
			qd = load_down * MS;
		}
		srx = server_clock(t + up * MS + j1 + qu);
		stx = srx + 0.02 * MS;
		crx = t + up * MS + j1 + qu + 0.02 * MS + down * MS + j2 + qd;
		p[i].seq = (uint32_t)i;
		p[i].received = 1;
		p[i].send_ns = (int64_t)t;
		p[i].rtt_ns = (int64_t)(crx - t);
		p[i].srv_rx_ns = (int64_t)srx;
		p[i].srv_tx_ns = (int64_t)stx;
	}
	return p;
}

static void test_offset_and_drift(void **state)
{
	struct probe_rec *p = exchanges(5, 5, 80, 20);
	struct clock_fit f;

	assert_int_equal(clocksync_fit(p, N, 0, 10 * SEC, 25 * SEC, 30 * SEC, &f), 0);
	assert_true(f.valid && f.drift_fitted);
	/* Symmetric paths: the offset at any time is recovered to within the jitter asymmetry. */
	for (int64_t t = 0; t <= 30 * SEC; t += 5 * SEC) {
		double want = OFFSET + DRIFT * (double)t;

		assert_true(fabs(clocksync_offset(&f, t) - want) < 0.1 * MS);
	}
	assert_true(fabs(f.drift - DRIFT) < 1e-6);
	/* The bound covers the true error and is about half the fastest RTT (5+5 ms). */
	assert_true(f.error_ns > 4.9 * MS && f.error_ns < 5.5 * MS);
	assert_int_equal(f.n_pre, 1000 / 3);
	assert_int_equal(f.n_post, 500 / 3);
	free(p);
}

/* Under load the one-way delays attribute the queueing to the right direction. */
static void test_oneway_attribution(void **state)
{
	struct probe_rec *p = exchanges(5, 5, 80, 20);
	struct clock_fit f;
	double up = 0, down = 0;

	assert_int_equal(clocksync_fit(p, N, 0, 10 * SEC, 25 * SEC, 30 * SEC, &f), 0);
	for (int i = 1500; i < 1600; i++) { /* t = 15..16 s: loaded */
		up += clocksync_owd_up(&f, &p[i]) / 100;
		down += clocksync_owd_down(&f, &p[i]) / 100;
	}
	/* base 5 ms + mean jitter 0.25 ms + queueing 80 (up) / 20 (down) ms */
	assert_true(fabs(up - 85.25 * MS) < 0.3 * MS);
	assert_true(fabs(down - 25.25 * MS) < 0.3 * MS);
	free(p);
}

/* Asymmetric base delays cannot be seen (the method's limit): the error is within the bound. */
static void test_asymmetric_base_within_bound(void **state)
{
	struct probe_rec *p = exchanges(2, 8, 0, 0);
	struct clock_fit f;
	double err;

	assert_int_equal(clocksync_fit(p, N, 0, 10 * SEC, 25 * SEC, 30 * SEC, &f), 0);
	err = fabs(clocksync_offset(&f, 12 * SEC) - (OFFSET + DRIFT * 12.0 * SEC));
	assert_true(err > 2.5 * MS);       /* really off by (8 − 2) / 2 = 3 ms … */
	assert_true(err <= f.error_ns);    /* … and the reported bound says so */
	free(p);
}

static void test_windows(void **state)
{
	struct probe_rec *p = exchanges(5, 5, 0, 0);
	struct clock_fit f;

	/* No post window: offset only, drift not fitted. */
	assert_int_equal(clocksync_fit(p, N, 0, 10 * SEC, 0, 0, &f), 0);
	assert_true(f.valid && !f.drift_fitted);
	assert_true(f.drift == 0);
	/* Too few exchanges (< 30) in the first window. */
	assert_int_equal(clocksync_fit(p, N, 0, 200 * MS, 25 * SEC, 30 * SEC, &f), -1);
	assert_false(f.valid);
	/* Lost replies are ignored. */
	for (int i = 0; i < 1000; i++)
		p[i].received = i % 50 == 0;
	assert_int_equal(clocksync_fit(p, N, 0, 10 * SEC, 25 * SEC, 30 * SEC, &f), -1);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offset_and_drift),
		cmocka_unit_test(test_oneway_attribution),
		cmocka_unit_test(test_asymmetric_base_within_bound),
		cmocka_unit_test(test_windows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for client/analysis/probestats.c and client/analysis/rpm.c: window statistics of a probe series
 * (loss, errors, jitter), the trimmed mean, and RPM on series with known values. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "client/analysis/probestats.h"
#include "client/analysis/rpm.h"
#include "client/model/result.h"
#include "common/clock.h"

static void add(struct probe_series *ps, int64_t t_ms, double rtt_ms, enum sample_status st,
		int32_t aux)
{
	long i = series_push(ps, t_ms * NS_PER_MS);

	assert_true(i >= 0);
	series_complete(ps, i, (int64_t)(rtt_ms * NS_PER_MS), st);
	ps->s[i].aux = aux;
}

static void test_window(void **state)
{
	struct probe_series ps;
	struct series_phase sp;

	series_init(&ps, "icmp", "x");
	add(&ps, 0, 10, SAMPLE_OK, 0);     /* before the window */
	add(&ps, 100, 20, SAMPLE_OK, 0);
	add(&ps, 200, 30, SAMPLE_OK, 0);
	add(&ps, 300, 0, SAMPLE_LOST, 0);
	add(&ps, 400, 0, SAMPLE_ERROR, 0);
	add(&ps, 500, 26, SAMPLE_OK, 0);
	(void)series_push(&ps, 600 * NS_PER_MS); /* pending: counts as lost after close */
	series_close(&ps);
	probestats_window(&ps, 100 * NS_PER_MS, 1000 * NS_PER_MS, &sp);
	assert_int_equal(sp.sent, 6);
	assert_int_equal(sp.ok, 3);
	assert_int_equal(sp.lost, 2);
	assert_int_equal(sp.errors, 1);
	assert_true(fabs(sp.loss_pct - 40.0) < 1e-9);     /* 2 of 5 non-error samples */
	assert_true(fabs(sp.jitter_ms - 7.0) < 1e-6);     /* |30-20| and |26-30| → 7 */
	assert_true(fabs(sp.rtt_ms.p50 - 26.0) < 1e-6);
	assert_true(isnan(sp.increase_ms));
	series_free(&ps);
}

static void test_trimmed_mean(void **state)
{
	double v[20];

	for (int i = 0; i < 20; i++)
		v[i] = i < 19 ? 10.0 : 1000.0; /* one outlier in 20: the slowest 5 % is dropped */
	assert_true(fabs(probestats_trimmed_mean(v, 20, 0.95) - 10.0) < 1e-9);
	assert_true(isnan(probestats_trimmed_mean(v, 0, 0.95)));
	assert_true(isnan(probestats_jitter(v, 1)));
}

/* Handshake 20 ms, request 30 ms → foreign 25 ms; in-flow 100 ms:
 * RPM = (60000/25 + 60000/100) / 2 = 1500 (good). */
static void test_rpm(void **state)
{
	static struct test_result r;
	struct client_config cfg;
	struct probe_series *f, *d;
	struct rpm_result m;

	config_defaults(&cfg);
	result_init(&r, &cfg);
	f = result_add_series(&r, "tcp_connect", "s");
	d = result_add_series(&r, "inflow_down", "s");
	assert_non_null(f);
	assert_non_null(d);
	for (int i = 0; i < 40; i++) {
		add(f, i * 100, 50, SAMPLE_OK, 20000);
		add(d, i * 100, 100, SAMPLE_OK, 0);
	}
	rpm_compute(&r, PHASE_DOWNLOAD, 0, 4000 * NS_PER_MS, &m);
	assert_true(m.valid);
	assert_true(fabs(m.tm_connect_ms - 20) < 1e-9);
	assert_true(fabs(m.tm_request_ms - 30) < 1e-9);
	assert_true(fabs(m.rpm - 1500) < 1e-6);
	assert_string_equal(m.cls, "good");
	/* The upload phase has no in-flow samples here: no score. */
	rpm_compute(&r, PHASE_UPLOAD, 0, 4000 * NS_PER_MS, &m);
	assert_false(m.valid);
	assert_string_equal(rpm_class(299), "poor");
	assert_string_equal(rpm_class(6000), "excellent");
	result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_trimmed_mean),
		cmocka_unit_test(test_rpm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

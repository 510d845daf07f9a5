/* Unit tests for client/analysis/tcpfallback.c: on a UDP-blocked path each phase without a UDP
 * figure takes its RTT from the right TCP-based series, in order; otherwise nothing changes. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "client/analysis/tcpfallback.h"
#include "client/model/result.h"
#include "common/clock.h"

/* One OK sample of rtt_ms every 100 ms in [from_s, to_s). */
static void fill(struct test_result *r, const char *name, double from_s, double to_s,
		 double rtt_ms)
{
	const struct probe_series *found = result_find_series(r, name, NULL);
	struct probe_series *ps = found ? &r->series[found - r->series]
					: result_add_series(r, name, "x");

	assert_non_null(ps);
	ps->available = 1;
	for (double t = from_s; t < to_s - 1e-9; t += 0.1) {
		long i = series_push(ps, (int64_t)(t * NS_PER_SEC));

		assert_true(i >= 0);
		series_complete(ps, i, (int64_t)(rtt_ms * NS_PER_MS), SAMPLE_OK);
	}
}

/* idle 0-2 s, download 2-6 s, upload 6-10 s, bidirectional 10-14 s; steady from mid-phase. */
static void setup_run(struct test_result *r)
{
	static const enum phase_kind k[4] = { PHASE_IDLE, PHASE_DOWNLOAD, PHASE_UPLOAD, PHASE_BIDIR };
	struct client_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	result_init(r, &cfg);
	for (int i = 0; i < 4; i++) {
		struct phase_result *ph = &r->phases[r->nphases++];

		ph->kind = k[i];
		ph->start_ns = (int64_t)(i == 0 ? 0 : 2 + 4 * (i - 1)) * NS_PER_SEC;
		ph->end_ns = (int64_t)(i == 0 ? 2 : 2 + 4 * i) * NS_PER_SEC;
		ph->steady_start_ns = -1;
	}
	fill(r, "tcp_connect", 0, 14, 5);
	fill(r, "inflow_down", 2, 6, 50);
	fill(r, "inflow_up", 6, 10, 70);
	fill(r, "inflow_up", 10, 14, 90); /* bidirectional: no download sample, the upload's */
}

static void test_blocked(void **state)
{
	struct test_result *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	setup_run(r);
	r->udp_blocked = 1;
	tcpfallback_rtt(r);
	assert_true(fabs(r->phases[0].rtt_ms.p50 - 5) < 1e-6);  /* idle: tcp_connect */
	assert_true(fabs(r->phases[1].rtt_ms.p50 - 50) < 1e-6); /* download: inflow_down */
	assert_true(fabs(r->phases[2].rtt_ms.p50 - 70) < 1e-6); /* upload: inflow_up */
	assert_true(fabs(r->phases[3].rtt_ms.p50 - 90) < 1e-6); /* bidir: inflow_up, down empty */
	assert_int_equal(r->phases[1].rtt_ms.n, 20);            /* the steady half of 4 s */
	result_free(r);
	free(r);
}

static void test_not_blocked_or_udp_present(void **state)
{
	struct test_result *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	setup_run(r);
	tcpfallback_rtt(r); /* UDP answered: nothing is taken from TCP */
	for (int i = 0; i < 4; i++)
		assert_int_equal(r->phases[i].rtt_ms.n, 0);
	r->udp_blocked = 1;
	r->phases[1].rtt_ms.n = 3; /* a phase with its own UDP figure keeps it */
	r->phases[1].rtt_ms.p50 = 1;
	r->series[2].available = 0; /* inflow_up could not run: the connect probe stands in */
	tcpfallback_rtt(r);
	assert_true(fabs(r->phases[1].rtt_ms.p50 - 1) < 1e-6);
	assert_true(fabs(r->phases[2].rtt_ms.p50 - 5) < 1e-6);
	result_free(r);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blocked),
		cmocka_unit_test(test_not_blocked_or_udp_present),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for client/analysis/probeshare.c: what the probes cost a loaded phase. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "client/analysis/probeshare.h"
#include "client/model/config.h"

#define SEC (1000000000LL)
/* Unlike assert_float_equal, fails on NaN. */
#define assert_close(got, want) assert_true(fabs((got) - (want)) <= 1e-9 * fabs(want))
#define MS (1000000LL)

/* An HTTP-mode upload phase of 10 s (window from 5 s) at 4.5 Mbit/s of goodput, with a
 * latency request every 50 ms whose connection carried 1200 bytes up and 1300 down. */
static void http_upload_run(struct test_result *r, struct client_config *cfg)
{
	struct phase_result *ph = &r->phases[0];

	config_defaults(cfg);
	result_init(r, cfg);
	r->http = 1;
	r->mss = 1448;
	r->ip_overhead = 1500.0 / 1448.0;
	r->nphases = 1;
	*ph = (struct phase_result){ .kind = PHASE_UPLOAD, .start_ns = 0, .end_ns = 10 * SEC,
				     .steady_start_ns = 5 * SEC, .down_mbps = NAN,
				     .up_mbps = 4.5 };
	r->nprobes = 200;
	r->probes = calloc(r->nprobes, sizeof(*r->probes));
	r->probe_wire = calloc(r->nprobes, sizeof(*r->probe_wire));
	assert_non_null(r->probes);
	assert_non_null(r->probe_wire);
	for (size_t i = 0; i < r->nprobes; i++) {
		r->probes[i].send_ns = (int64_t)i * 50 * MS;
		r->probe_wire[i] = (struct probe_wire){ .up = 1200, .down = 1300 };
	}
}

/* The HTTP mode's requests are its probes: their measured bytes in the window (100 of them in
 * 5 s: 192 kbit/s up, 208 down) make the uplink's share, and over 2 % a warning says so. */
static void test_http_requests_are_counted(void **state)
{
	struct client_config cfg;
	struct test_result r;
	const struct phase_result *ph = &r.phases[0];
	double link;

	(void)state;
	http_upload_run(&r, &cfg);
	probeshare_phases(&r);
	assert_close(ph->probe_kbps[1], 192.0);
	assert_close(ph->probe_kbps[0], 208.0);
	link = 4.5e6 * r.ip_overhead + 192e3;
	assert_close(ph->link_mbps[1], link / 1e6);
	assert_close(ph->probe_share[1], 192e3 / link);
	assert_true(isnan(ph->probe_share[0])); /* no load down: no share */
	assert_int_equal(r.nwarnings, 1);
	result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_http_requests_are_counted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

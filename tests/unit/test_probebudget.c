/* Unit tests for client/model/probebudget.c: the probes' wire cost and the intervals that fit
 * 2 % of a link, down to the floor. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "client/model/probebudget.h"

/* The defaults: UDP 100 B every 10 ms, one ICMP target every 100 ms, DNS and TCP every
 * 200 ms, in-flow every 100 ms on download flows, IPv4. */
static struct budget_mix defaults(void)
{
	struct budget_mix m = { .udp_size = 100, .ip_hdr = 20,
				.base_ms = { 10, 100, 200, 200, 100, BUDGET_HOP_BASE_MS } };

	for (int k = 0; k < BUDGET_HOP; k++)
		m.streams[k] = 1;
	m.inflow_dir[0] = 1;
	return m;
}

static void test_udp_costs_its_datagram_each_way(void **state)
{
	struct budget_mix m = defaults();
	double b[2];

	(void)state;
	budget_probe_bytes(&m, BUDGET_UDP, b);
	assert_true(b[0] == 128 && b[1] == 128);
	m.ip_hdr = 40;
	budget_probe_bytes(&m, BUDGET_UDP, b);
	assert_true(b[0] == 148 && b[1] == 148);
}

static void test_fast_link_keeps_the_configured_intervals(void **state)
{
	struct budget_mix m = defaults();
	double ms[BUDGET_KINDS], scale, cap[2] = { 100e6, 20e6 };

	(void)state;
	assert_int_equal(budget_fit(&m, cap, BUDGET_SHARE, 10, ms, &scale), 0);
	assert_true(scale == 1 && ms[BUDGET_UDP] == 10 && ms[BUDGET_DNS] == 200);
}

static void test_1mbit_fits_2_percent_above_the_floor(void **state)
{
	struct budget_mix m = defaults();
	double ms[BUDGET_KINDS], bps[2], scale, cap[2] = { 1e6, 0 };

	(void)state;
	budget_bps(&m, m.base_ms, bps);
	assert_true(bps[0] > 0.1 * cap[0]); /* the defaults would take > 10 % */
	assert_int_equal(budget_fit(&m, cap, BUDGET_SHARE, 10, ms, &scale), 0);
	budget_bps(&m, ms, bps);
	assert_true(bps[0] <= BUDGET_SHARE * cap[0]);
	assert_true(bps[0] > 0.95 * BUDGET_SHARE * cap[0]); /* no longer than needed */
	assert_true(scale > 1 && ms[BUDGET_UDP] < BUDGET_UDP_MAX_MS);
	for (int k = 0; k < BUDGET_KINDS; k++)
		assert_true(ms[k] >= m.base_ms[k] && ms[k] <= budget_ceiling_ms(&m, k, 10));
}

static void test_500kbit_stops_at_the_floor(void **state)
{
	struct budget_mix m = defaults();
	double ms[BUDGET_KINDS], scale, cap[2] = { 0, 500e3 };

	(void)state;
	assert_int_equal(budget_fit(&m, cap, BUDGET_SHARE, 10, ms, &scale), 1);
	assert_true(ms[BUDGET_UDP] == 100 && ms[BUDGET_DNS] == 500);
	/* A longer phase allows fewer UDP samples per second only down to 10/s. */
	assert_true(budget_ceiling_ms(&m, BUDGET_UDP, 60) == BUDGET_UDP_MAX_MS);
	assert_true(budget_ceiling_ms(&m, BUDGET_UDP, 5) == 50);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_udp_costs_its_datagram_each_way),
		cmocka_unit_test(test_fast_link_keeps_the_configured_intervals),
		cmocka_unit_test(test_1mbit_fits_2_percent_above_the_floor),
		cmocka_unit_test(test_500kbit_stops_at_the_floor),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

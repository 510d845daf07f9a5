/* Unit tests for client/model/httpbudget.c: the HTTP mode's latency-request interval. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "client/model/httpbudget.h"

/* Over HTTPS on a 5 Mbit/s uplink (1200 bytes up a request) 2 % allows one every 96 ms; on
 * 20 Mbit/s down (1300 bytes) 26 ms, so the uplink sets it. */
static void test_slowest_direction_sets_it(void **state)
{
	const double req[2] = { 1300, 1200 }, cap[2] = { 20e6, 5e6 };
	int floor = -1;

	(void)state;
	assert_float_equal(httpbudget_interval_ms(req, cap, 50, &floor), 96.0, 1e-9);
	assert_int_equal(floor, 0);
}

/* A fast link keeps the base interval; an unloaded or unknown direction sets nothing. */
static void test_base_when_cheap(void **state)
{
	const double req[2] = { 1300, 1200 }, cap[2] = { 100e6, 0 };
	int floor = -1;

	(void)state;
	assert_float_equal(httpbudget_interval_ms(req, cap, 50, &floor), 50.0, 1e-9);
	assert_int_equal(floor, 0);
}

/* 1 Mbit/s up would want 480 ms: the floor (ten a second) binds, and says so. */
static void test_floor_binds(void **state)
{
	const double req[2] = { 1300, 1200 }, cap[2] = { 0, 1e6 };
	int floor = 0;

	(void)state;
	assert_float_equal(httpbudget_interval_ms(req, cap, 50, &floor), 100.0, 1e-9);
	assert_int_equal(floor, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slowest_direction_sets_it),
		cmocka_unit_test(test_base_when_cheap),
		cmocka_unit_test(test_floor_binds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

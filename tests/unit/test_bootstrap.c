/* Unit tests for client/analysis/bootstrap.c: degenerate and known distributions, determinism, and
 * input limits. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "client/analysis/bootstrap.h"

#define N 1000

static void test_constant(void **state)
{
	double v[N], lo, hi;

	for (int i = 0; i < N; i++)
		v[i] = 42.0;
	assert_int_equal(bootstrap_percentile_ci(v, N, 100, 95, 200, 0.95, 1, &lo, &hi), 0);
	assert_true(lo == 42.0 && hi == 42.0);
}

/* A uniform sweep 0..999 repeated in blocks: the p95 (≈ 949) must lie inside the interval,
 * the interval must be narrow relative to the range, and the same seed gives the same result. */
static void test_known(void **state)
{
	double v[N], lo, hi, lo2, hi2;
	unsigned seed = 3;

	for (int i = 0; i < N; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = (double)(seed >> 8 & 0xffff) / 65535.0 * 1000.0; /* iid uniform 0..1000 */
	}
	assert_int_equal(bootstrap_percentile_ci(v, N, 10, 95, 400, 0.95, 7, &lo, &hi), 0);
	assert_true(lo <= hi);
	assert_true(lo < 950 && hi > 950); /* true p95 of U(0, 1000) */
	assert_true(hi - lo < 60);         /* SE of the p95 with n = 1000 is about 7 */
	assert_int_equal(bootstrap_percentile_ci(v, N, 10, 95, 400, 0.95, 7, &lo2, &hi2), 0);
	assert_true(lo == lo2 && hi == hi2);
}

static void test_limits(void **state)
{
	double v[10] = { 0 }, lo, hi;

	assert_int_equal(bootstrap_percentile_ci(v, 10, 6, 95, 100, 0.95, 1, &lo, &hi), -1);
	assert_int_equal(bootstrap_percentile_ci(v, 10, 0, 95, 100, 0.95, 1, &lo, &hi), -1);
	assert_int_equal(bootstrap_percentile_ci(v, 10, 5, 95, 100, 0.95, 1, &lo, &hi), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constant),
		cmocka_unit_test(test_known),
		cmocka_unit_test(test_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

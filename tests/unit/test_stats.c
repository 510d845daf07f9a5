/* test_stats: percentiles (type 7) and summaries on arrays whose answers are known by hand. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/stats.h"

#define EPS 1e-9

/* 1..100: rank = p/100 * 99, so p50 = 50.5, p90 = 90.1, p95 = 95.05, p99 = 99.01. */
static void test_percentile_one_to_hundred(void **state)
{
	double v[100];

	for (int i = 0; i < 100; i++)
		v[i] = i + 1;
	assert_float_equal(stats_percentile_sorted(v, 100, 50), 50.5, EPS);
	assert_float_equal(stats_percentile_sorted(v, 100, 90), 90.1, EPS);
	assert_float_equal(stats_percentile_sorted(v, 100, 95), 95.05, EPS);
	assert_float_equal(stats_percentile_sorted(v, 100, 99), 99.01, EPS);
	assert_float_equal(stats_percentile_sorted(v, 100, 0), 1.0, EPS);
	assert_float_equal(stats_percentile_sorted(v, 100, 100), 100.0, EPS);
	assert_float_equal(stats_percentile_sorted(v, 100, 25), 25.75, EPS);
}

/* Between two samples the result is the straight line between them. */
static void test_percentile_interpolates(void **state)
{
	const double v[] = { 10, 20 };
	const double w[] = { 0, 10, 30 };

	assert_float_equal(stats_percentile_sorted(v, 2, 50), 15.0, EPS);
	assert_float_equal(stats_percentile_sorted(v, 2, 30), 13.0, EPS);
	/* rank = 0.75 * 2 = 1.5: halfway between 10 and 30 */
	assert_float_equal(stats_percentile_sorted(w, 3, 75), 20.0, EPS);
	assert_float_equal(stats_percentile_sorted(w, 3, 50), 10.0, EPS);
}

static void test_percentile_single(void **state)
{
	const double v[] = { 42.5 };

	assert_float_equal(stats_percentile_sorted(v, 1, 0), 42.5, EPS);
	assert_float_equal(stats_percentile_sorted(v, 1, 50), 42.5, EPS);
	assert_float_equal(stats_percentile_sorted(v, 1, 99), 42.5, EPS);
	assert_float_equal(stats_percentile_sorted(v, 1, 100), 42.5, EPS);
	assert_float_equal(stats_percentile(v, 1, 95), 42.5, EPS);
}

static void test_empty(void **state)
{
	struct stats_summary s;
	double v[1] = { 7 };

	memset(&s, 0xa5, sizeof(s));
	assert_int_equal(stats_summarize(v, 0, &s), -1);
	assert_int_equal(s.n, 0);
	assert_true(s.min == 0 && s.max == 0 && s.mean == 0 && s.p50 == 0 && s.p99 == 0);
	assert_true(isnan(stats_percentile(v, 0, 50)));
	assert_true(isnan(stats_percentile_sorted(v, 0, 50)));
}

/* stats_percentile sorts a copy: the answer is the sorted one and the input is untouched. */
static void test_percentile_unsorted(void **state)
{
	const double orig[] = { 9, 1, 8, 2, 7, 3, 6, 4, 5, 10 };
	double v[10];

	memcpy(v, orig, sizeof(v));
	assert_float_equal(stats_percentile(v, 10, 50), 5.5, EPS);
	/* rank = 0.9 * 9 = 8.1 between 9 and 10 */
	assert_float_equal(stats_percentile(v, 10, 90), 9.1, EPS);
	assert_float_equal(stats_percentile(v, 10, 0), 1.0, EPS);
	assert_memory_equal(v, orig, sizeof(v));
}

static void test_sort(void **state)
{
	double v[] = { 3.5, -1, 0, 1e9, -1e9, 2, 2 };
	const double want[] = { -1e9, -1, 0, 2, 2, 3.5, 1e9 };

	stats_sort(v, 7);
	assert_memory_equal(v, want, sizeof(v));
	stats_sort(v, 0); /* must not touch anything */
}

static void test_duplicates(void **state)
{
	const double same[] = { 5, 5, 5, 5 };
	const double v[] = { 2, 3, 1, 2, 2 };

	assert_float_equal(stats_percentile(same, 4, 0), 5.0, EPS);
	assert_float_equal(stats_percentile(same, 4, 37), 5.0, EPS);
	assert_float_equal(stats_percentile(same, 4, 99), 5.0, EPS);
	/* sorted 1 2 2 2 3: rank(25) = 1, rank(50) = 2, rank(75) = 3 */
	assert_float_equal(stats_percentile(v, 5, 25), 2.0, EPS);
	assert_float_equal(stats_percentile(v, 5, 50), 2.0, EPS);
	assert_float_equal(stats_percentile(v, 5, 75), 2.0, EPS);
	/* rank(90) = 3.6: 2 + 0.6 * (3 - 2) */
	assert_float_equal(stats_percentile(v, 5, 90), 2.6, EPS);
}

static void test_summary(void **state)
{
	double v[] = { 4, -2, 10, 0, 3 }; /* sorted: -2 0 3 4 10, sum 15 */
	struct stats_summary s;

	assert_int_equal(stats_summarize(v, 5, &s), 0);
	assert_int_equal(s.n, 5);
	assert_float_equal(s.min, -2.0, EPS);
	assert_float_equal(s.max, 10.0, EPS);
	assert_float_equal(s.mean, 3.0, EPS);
	assert_float_equal(s.p50, 3.0, EPS);
	/* rank(90) = 3.6: 4 + 0.6 * 6 = 7.6; rank(95) = 3.8: 8.8; rank(99) = 3.96: 9.76 */
	assert_float_equal(s.p90, 7.6, EPS);
	assert_float_equal(s.p95, 8.8, EPS);
	assert_float_equal(s.p99, 9.76, EPS);
	/* summarize sorts in place (documented) */
	assert_float_equal(v[0], -2.0, EPS);
	assert_float_equal(v[4], 10.0, EPS);
}

static void test_summary_one(void **state)
{
	double v[] = { 12.25 };
	struct stats_summary s;

	assert_int_equal(stats_summarize(v, 1, &s), 0);
	assert_int_equal(s.n, 1);
	assert_float_equal(s.min, 12.25, EPS);
	assert_float_equal(s.max, 12.25, EPS);
	assert_float_equal(s.mean, 12.25, EPS);
	assert_float_equal(s.p50, 12.25, EPS);
	assert_float_equal(s.p99, 12.25, EPS);
}

static void test_top2(void **state)
{
	double v[] = { 3.0, 9.5, -1.0, 9.5, 7.0 }, w[] = { 4.0, 1.0, 2.0 }, one[] = { 5.5 };
	double hi, second;

	(void)state;
	stats_top2(v, 5, &hi, &second);
	assert_float_equal(hi, 9.5, EPS);
	assert_float_equal(second, 9.5, EPS); /* a value that occurs twice is both */
	stats_top2(w, 3, &hi, &second);
	assert_float_equal(hi, 4.0, EPS);
	assert_float_equal(second, 2.0, EPS);
	stats_top2(one, 1, &hi, &second);
	assert_float_equal(hi, 5.5, EPS);
	assert_true(isinf(second) && second < 0);
	stats_top2(one, 0, &hi, &second);
	assert_true(isinf(hi) && hi < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_percentile_one_to_hundred),
		cmocka_unit_test(test_percentile_interpolates),
		cmocka_unit_test(test_percentile_single),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_percentile_unsorted),
		cmocka_unit_test(test_sort),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_summary_one),
		cmocka_unit_test(test_top2),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

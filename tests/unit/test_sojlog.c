/* Unit tests for client/lab/sojlog.c, the lab bottleneck's per-packet sojourn log: percentiles
 * over a window count only the packets that left inside it; the floor is the median of each
 * block's smallest sojourn; a full ring keeps the newest records; times outside the log's
 * range are not recorded. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "client/lab/sojlog.h"

#define US 1000ull
#define MS 1000000ull
#define BASE (7 * 1000 * MS)

static struct sojlog *new_log(void)
{
	struct sojlog *l = calloc(1, sizeof(*l));

	assert_non_null(l);
	sojlog_init(l, BASE);
	return l;
}

static void test_window_percentiles(void **state)
{
	struct sojlog *l = new_log();
	struct sojlog_summary s;

	(void)state;
	/* 1000 packets 1 ms apart with sojourns 1..1000 µs, then 10 outside the window. */
	for (uint64_t i = 1; i <= 1000; i++)
		sojlog_add(l, BASE + i * MS, i * US);
	for (uint64_t i = 1; i <= 10; i++)
		sojlog_add(l, BASE + 2000 * MS + i * MS, 900 * MS);
	assert_int_equal(sojlog_summarize(l, BASE + 1 * MS, BASE + 1001 * MS, 100 * MS, &s), 0);
	assert_int_equal(s.samples, 1000);
	assert_true(fabs(s.p50_ms - 0.5005) < 0.001);
	assert_true(fabs(s.p95_ms - 0.950) < 0.002);
	assert_true(fabs(s.max_ms - 1.0) < 1e-9);
	/* Blocks of 100 ms from 1 ms: minima 1, 101, ..., 901 µs; their median 451..501 µs. */
	assert_true(s.floor_ms >= 0.451 && s.floor_ms <= 0.501);
	/* An empty window says so. */
	assert_int_equal(sojlog_summarize(l, BASE + 5000 * MS, BASE + 6000 * MS, 100 * MS, &s), 0);
	assert_int_equal(s.samples, 0);
	assert_true(isnan(s.p50_ms) && isnan(s.floor_ms));
	free(l);
}

static void test_ring_keeps_newest(void **state)
{
	struct sojlog *l = new_log();
	struct sojlog_summary s;

	(void)state;
	/* Twice the capacity, 1 µs apart: only the second half remains. */
	for (uint64_t i = 0; i < 2ull * SOJLOG_CAP; i++)
		sojlog_add(l, BASE + i * US, i < SOJLOG_CAP ? 1 * MS : 2 * MS);
	assert_int_equal(sojlog_summarize(l, BASE, BASE + 2ull * SOJLOG_CAP * US, 1 * MS, &s), 0);
	assert_int_equal(s.samples, SOJLOG_CAP);
	assert_true(fabs(s.p50_ms - 2.0) < 1e-9 && fabs(s.floor_ms - 2.0) < 1e-9);
	free(l);
}

static void test_out_of_range(void **state)
{
	struct sojlog *l = new_log();
	struct sojlog_summary s;

	(void)state;
	sojlog_add(l, BASE - 1, 1 * MS);                       /* before time 0 */
	sojlog_add(l, BASE + (1ull << 32) * US, 1 * MS);        /* past 71 minutes */
	sojlog_add(l, BASE + 5 * MS, 5000ull * 1000 * MS);      /* 5000 s: capped */
	assert_int_equal(sojlog_summarize(l, 0, UINT64_MAX, 100 * MS, &s), 0);
	assert_int_equal(s.samples, 1);
	assert_true(fabs(s.max_ms - 4294967.295) < 1e-6);
	free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_percentiles),
		cmocka_unit_test(test_ring_keeps_newest),
		cmocka_unit_test(test_out_of_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

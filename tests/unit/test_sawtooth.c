/* Unit tests for client/analysis/sawtooth.c: the level before the senders' back-offs of a slow
 * sawtooth, and what must not count as one (a flat full queue, a lone delayed probe, a stall at
 * the top, too few probes). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "client/analysis/sawtooth.h"

#define MS 1000000LL
#define STEP (10 * MS) /* one probe every 10 ms, as bloatmeter sends them */
#define N 1000         /* 10 s */

struct series {
	int64_t t[N];
	double q[N];
};

/* A single CUBIC/Reno flow on a 100 ms tail-drop buffer: the queue rises from 75 ms to its
 * 100 ms top over `rise` ms, stays full for 100 ms (one round trip until the sender sees the
 * loss) with ±1 ms of probe jitter, then falls back to 75 ms. */
static void slow_sawtooth(struct series *s, int64_t rise)
{
	int64_t period = rise + 100;

	for (int i = 0; i < N; i++) {
		int64_t ms = (int64_t)i * 10 % period;

		s->t[i] = 5000 * MS + (int64_t)i * STEP;
		s->q[i] = ms < rise ? 75.0 + 25.0 * (double)ms / (double)rise
				    : 100.0 - (i % 3 == 0 ? 1.0 : 0.0);
	}
}

static void test_slow_sawtooth(void **state)
{
	struct series s;
	struct sawtooth_peaks pk;

	(void)state;
	slow_sawtooth(&s, 2900); /* back-offs at 3, 6 and 9 s (the series runs 10 s) */
	sawtooth_peaks(s.t, s.q, N, &pk);
	assert_int_equal(pk.n, 3);
	assert_true(pk.median >= 99.0 && pk.median <= 100.0);
	assert_true(pk.low >= 99.0 && pk.high <= 100.0 && pk.low <= pk.median && pk.median <= pk.high);
}

/* Many desynchronised flows keep the queue at its top with jitter: nothing falls. */
static void test_flat_full_queue(void **state)
{
	struct series s;
	struct sawtooth_peaks pk = { 99, 0, 0, 0 };

	(void)state;
	for (int i = 0; i < N; i++) {
		s.t[i] = (int64_t)i * STEP;
		s.q[i] = 98.0 + (i * 7 % 5) * 0.5;
	}
	sawtooth_peaks(s.t, s.q, N, &pk);
	assert_int_equal(pk.n, 0);
	assert_true(isnan(pk.median));
}

/* A host stall delays one probe, or three in a row, far above the queue: the queue did not
 * stand there, so it is not a back-off. */
static void test_lone_stall(void **state)
{
	struct series s;
	struct sawtooth_peaks pk = { 99, 0, 0, 0 };

	(void)state;
	for (int i = 0; i < N; i++) {
		s.t[i] = (int64_t)i * STEP;
		s.q[i] = 80.0;
	}
	s.q[300] = 250.0;
	s.q[600] = s.q[601] = s.q[602] = 150.0;
	sawtooth_peaks(s.t, s.q, N, &pk);
	assert_int_equal(pk.n, 0);
	assert_true(isnan(pk.median));
}

/* A stall that delays one probe at the top of two of the three cycles does not raise the
 * level (the median over cycles alone would not reject two of three): the queue did not
 * stand at the stall's level before it. */
static void test_stall_at_top(void **state)
{
	struct series s;
	struct sawtooth_peaks pk;

	(void)state;
	slow_sawtooth(&s, 2900);
	s.q[295] = 180.0; /* inside the first full stretch (2.90-3.00 s) */
	s.q[595] = 170.0; /* and the second */
	sawtooth_peaks(s.t, s.q, N, &pk);
	assert_true(pk.high <= 100.0);
	assert_int_equal(pk.n, 3);
}

/* Many flows hold the queue at 48 ms, then at 47 ms; a stall lifts three probes to 53 ms just
 * before. Measured from the stall's level the queue "fell" 11 %, from where it stood only 2 %:
 * no back-off (lab: one such moment read 52.0 ms for a 50 ms buffer). */
static void test_stall_before_small_swing(void **state)
{
	struct series s;
	struct sawtooth_peaks pk = { 99, 0, 0, 0 };

	(void)state;
	for (int i = 0; i < N; i++) {
		s.t[i] = (int64_t)i * STEP;
		s.q[i] = i < 520 ? 48.0 : 47.0;
	}
	s.q[498] = s.q[499] = s.q[500] = 53.0;
	sawtooth_peaks(s.t, s.q, N, &pk);
	assert_int_equal(pk.n, 0);
}

/* The steady window opens on the last four probes a 15 ms router stall delayed (CI, IPv6 lab,
 * 80 ms buffer: 94.4, 93.5, 93.2 and 88.9 ms, then the queue at its 79 ms top). The window
 * before them is cut off by the series' start, so it holds only the stall: not a level the
 * queue stood at (the old code read a 93.4 ms back-off and reported it). */
static void test_stall_at_window_start(void **state)
{
	static const double stall[] = { 94.4, 93.5, 93.2, 88.9 };
	struct series s;
	struct sawtooth_peaks pk = { 99, 0, 0, 0 };

	(void)state;
	for (int i = 0; i < N; i++) {
		s.t[i] = 6750 * MS + (int64_t)i * STEP;
		s.q[i] = i < 4 ? stall[i] : 78.5 + (i * 7 % 5) * 0.25;
	}
	sawtooth_peaks(s.t, s.q, N, &pk);
	assert_int_equal(pk.n, 0);
	assert_true(isnan(pk.median));
}

/* A queue that falls only 5 %: no back-off. */
static void test_shallow_dip(void **state)
{
	struct series s;
	struct sawtooth_peaks pk = { 99, 0, 0, 0 };

	(void)state;
	for (int i = 0; i < N; i++) {
		s.t[i] = (int64_t)i * STEP;
		s.q[i] = (i / 100) % 2 ? 95.0 : 100.0;
	}
	sawtooth_peaks(s.t, s.q, N, &pk);
	assert_int_equal(pk.n, 0);
	assert_true(isnan(pk.median));
}

/* Probes once a second: too few in each window to see a level. None at all: nothing. */
static void test_sparse_and_empty(void **state)
{
	struct series s;
	struct sawtooth_peaks pk = { 99, 0, 0, 0 };

	(void)state;
	slow_sawtooth(&s, 2900);
	for (int i = 0; i < N; i++)
		s.t[i] = (int64_t)i * 1000 * MS;
	sawtooth_peaks(s.t, s.q, N, &pk);
	assert_int_equal(pk.n, 0);
	assert_true(isnan(pk.median));
	pk.n = 99;
	sawtooth_peaks(s.t, s.q, 0, &pk);
	assert_int_equal(pk.n, 0);
	assert_true(isnan(pk.median));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slow_sawtooth),   cmocka_unit_test(test_flat_full_queue),
		cmocka_unit_test(test_lone_stall),      cmocka_unit_test(test_stall_at_top),
		cmocka_unit_test(test_shallow_dip),     cmocka_unit_test(test_stall_before_small_swing),     cmocka_unit_test(test_sparse_and_empty),
		cmocka_unit_test(test_stall_at_window_start),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

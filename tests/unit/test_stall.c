/* Unit tests for client/analysis/stall.c: the probes a host stall held are those in flight
 * across a gap in the probe schedule; jitter is no gap, and lost probes are not marked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "client/analysis/stall.h"

#define MS 1000000LL
#define N 100

/* Probes every 10 ms with a 95 ms round trip; from index `gap_at` on, every send is `gap` ms
 * later (the sender skipped slots there). */
static void fill(struct probe_rec *p, size_t gap_at, int64_t gap)
{
	memset(p, 0, N * sizeof(*p));
	for (size_t i = 0; i < N; i++) {
		p[i].seq = (uint32_t)i;
		p[i].received = 1;
		p[i].send_ns = 1000 * MS + (int64_t)i * 10 * MS + (i >= gap_at ? gap * MS : 0);
		p[i].rtt_ns = 95 * MS;
	}
}

static void test_no_gap(void **state)
{
	struct probe_rec p[N];
	uint8_t held[N];

	(void)state;
	fill(p, N, 0);
	assert_int_equal(stall_held(p, N, held), 0);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(held[i], 0);
	fill(p, 50, 4); /* a 14 ms step: jitter, no slot skipped */
	assert_int_equal(stall_held(p, N, held), 0);
}

/* A 115 ms stall after probe 49 (sent at 490 ms): probes 40..49 were still in flight then
 * (sent at 400 ms or later, back 95 ms later), and probe 50 ended the gap. */
static void test_gap_holds_probes_in_flight(void **state)
{
	struct probe_rec p[N];
	uint8_t held[N];

	(void)state;
	fill(p, 50, 105);
	assert_int_equal(stall_held(p, N, held), 11);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(held[i], i >= 40 && i <= 50);
}

/* A lost probe in flight is not marked (it has no delay to leave out); a long flight that
 * started well before the gap is. */
static void test_lost_and_long_flights(void **state)
{
	struct probe_rec p[N];
	uint8_t held[N];

	(void)state;
	fill(p, 50, 105);
	p[45].received = 0;
	p[20].rtt_ns = 400 * MS; /* sent at 200 ms, back at 600 ms: across the gap */
	assert_int_equal(stall_held(p, N, held), 11);
	assert_int_equal(held[45], 0);
	assert_int_equal(held[20], 1);
}

static void test_too_few(void **state)
{
	struct probe_rec p[N];
	uint8_t held[N] = { 1 };

	(void)state;
	fill(p, N, 0);
	assert_int_equal(stall_held(p, 1, held), 0);
	assert_int_equal(held[0], 0);
	assert_int_equal(stall_held(p, 0, held), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_gap),
		cmocka_unit_test(test_gap_holds_probes_in_flight),
		cmocka_unit_test(test_lost_and_long_flights),
		cmocka_unit_test(test_too_few),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

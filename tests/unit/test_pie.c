/* Unit tests for client/lab/pie.c against RFC 8033: no drop probability while the queue delay
 * stays below half the 15 ms reference; a probability rising with the delay above it, faster
 * for a longer queue; early drops at that probability once the burst allowance is spent; CE
 * marks instead with ECN while it is low; decay once the queue empties. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "client/lab/fifoq.h"
#include "client/lab/pie.h"
#include "client/lab/pkt.h"
#include "lab_pktbuild.h"

#define MS 1000000ull

/* From start to end in 1 ms steps, a queue of four packets that arrived delay ago. */
static void pie_hold(struct pie *p, struct fifoq *q, uint64_t delay, uint64_t start, uint64_t end)
{
	struct lab_pkt *k;

	for (uint64_t t = start; t < end; t += MS) {
		while ((k = fifoq_pop(q)) != NULL)
			free(k);
		for (int i = 0; i < 4; i++)
			assert_int_equal(fifoq_push(q, lab_new4(1500, 0, 1), t - delay), 0);
		pie_update(p, q, t);
	}
}

static void test_below_reference(void **state)
{
	struct pie p;
	struct fifoq q;

	(void)state;
	assert_int_equal(fifoq_init(&q, 16, 1 << 20), 0);
	pie_init(&p, 0, 1, 1000 * MS);
	pie_hold(&p, &q, 5 * MS, 1000 * MS, 3000 * MS);
	assert_true(p.drop_prob == 0);
	assert_int_equal(p.burst_allowance_ns, PIE_MAX_BURST_NS);
	fifoq_free(&q);
}

static void test_rising_with_delay(void **state)
{
	struct pie p30, p60;
	struct fifoq q;
	struct lab_pkt *k;
	double at[4];

	(void)state;
	assert_int_equal(fifoq_init(&q, 16, 1 << 20), 0);
	pie_init(&p30, 0, 1, 1000 * MS);
	pie_init(&p60, 0, 1, 1000 * MS);
	for (int i = 0; i < 4; i++) {
		pie_hold(&p30, &q, 30 * MS, (1000 + 500 * i) * MS, (1500 + 500 * i) * MS);
		at[i] = p30.drop_prob;
	}
	assert_true(at[0] > 0);
	for (int i = 1; i < 4; i++)
		assert_true(at[i] > at[i - 1]);
	pie_hold(&p60, &q, 60 * MS, 1000 * MS, 3000 * MS);
	assert_true(p60.drop_prob > at[3]);
	/* The queue empties: the probability decays towards zero. */
	while ((k = fifoq_pop(&q)) != NULL)
		free(k);
	pie_update(&p60, &q, 13000 * MS);
	assert_true(p60.drop_prob < 0.01);
	fifoq_free(&q);
}

/* After 3 s at 60 ms, the fraction of n enqueues PIE refuses, with packets of the given ECN. */
static double pie_refused(struct pie *p, int ecn, int n)
{
	struct fifoq q;
	struct lab_pkt *k;
	int refused = 0;

	assert_int_equal(fifoq_init(&q, 16, 1 << 20), 0);
	pie_hold(p, &q, 60 * MS, 1000 * MS, 4000 * MS);
	for (int i = 0; i < n; i++) {
		if (pie_enqueue(p, &q, lab_new4(1500, ecn, 1), 4000 * MS) != 0)
			refused++;
		else if ((k = fifoq_pop(&q)) != NULL)
			free(k);
	}
	fifoq_free(&q);
	return (double)refused / n;
}

static void test_early_drop(void **state)
{
	struct pie p;
	double frac;

	(void)state;
	pie_init(&p, 0, 7, 1000 * MS);
	frac = pie_refused(&p, 0, 20000);
	assert_int_equal(p.burst_allowance_ns, 0);
	assert_true(p.drop_prob > 0.01);
	assert_true(fabs(frac - p.drop_prob) < 0.01);
	assert_int_equal(p.marks, 0);
}

/* Enqueues n packets of the given ECN at a frozen probability on a standing queue; returns how
 * many PIE refused and counts CE on the packets it let through. */
static int pie_frozen(struct pie *p, int ecn, int n, int *ce)
{
	struct fifoq q;
	struct lab_pkt *k;
	int refused = 0;

	assert_int_equal(fifoq_init(&q, 16, 1 << 20), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(fifoq_push(&q, lab_new4(1500, ecn, 1), 0), 0);
	for (int i = 0; i < n; i++) {
		if (pie_enqueue(p, &q, lab_new4(1500, ecn, 1), 1400 * MS) != 0)
			refused++;
		k = fifoq_pop(&q);
		*ce += (k->data[1] & 3) == PKT_CE;
		free(k);
	}
	fifoq_free(&q);
	return refused;
}

static void test_ecn_marks(void **state)
{
	struct pie p, saved;
	struct fifoq q;
	int ce = 0;

	(void)state;
	assert_int_equal(fifoq_init(&q, 16, 1 << 20), 0);
	pie_init(&p, 1, 7, 1000 * MS);
	/* Long enough to spend the burst allowance, short enough to stay below 10 %. */
	pie_hold(&p, &q, 30 * MS, 1000 * MS, 1400 * MS);
	fifoq_free(&q);
	assert_true(p.drop_prob > 0 && p.drop_prob <= 0.1);
	assert_int_equal(p.burst_allowance_ns, 0);
	p.next_update_ns = UINT64_MAX;   /* hold the probability where it is */
	saved = p;
	assert_int_equal(pie_frozen(&p, PKT_ECT0, 50000, &ce), 0);
	assert_true(p.marks > 0);
	assert_int_equal(p.drops, 0);
	assert_true(ce >= (int)p.marks - 4);
	/* Not-ECT packets are dropped at the same probability. */
	ce = 0;
	p = saved;
	assert_true(pie_frozen(&p, PKT_NOT_ECT, 50000, &ce) > 0);
	assert_int_equal(p.marks, 0);
	assert_int_equal(ce, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_below_reference),
		cmocka_unit_test(test_rising_with_delay),
		cmocka_unit_test(test_early_drop),
		cmocka_unit_test(test_ecn_marks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for client/lab/codel.c against RFC 8289: no drops while sojourn < target; the
 * first drop once sojourn has stayed >= target for an interval; drop spacing shrinking as
 * interval/sqrt(count); CE marks instead of drops for ECT packets with ECN on; re-entering
 * the dropping state resumes the last episode's drop count when it ended recently (within 16
 * intervals, measured as a signed time, so a drop_next still ahead counts as recent). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "client/lab/codel.h"
#include "client/lab/fifoq.h"
#include "client/lab/pkt.h"
#include "lab_pktbuild.h"

#define MS 1000000ull
#define STEP (MS / 10)   /* one dequeue every 0.1 ms */
#define MAX_SIGNALS 256

/* What a run saw: when each drop or mark happened, and CE on sent packets. */
struct codel_run {
	uint64_t at[MAX_SIGNALS];
	size_t n;
	uint64_t ce_sent;
};

/* Sojourn time the test imposes at time t. */
typedef uint64_t (*sojourn_fn)(uint64_t t);

/* From start to end: before each dequeue the queue holds four packets that arrived sojourn(t)
 * ago, so CoDel sees exactly that sojourn time and a queue above one MTU. */
static void codel_run(struct codel *c, sojourn_fn sojourn, uint64_t start, uint64_t end,
		      int ecn, struct codel_run *out)
{
	struct fifoq q;
	struct lab_pkt *p;

	assert_int_equal(fifoq_init(&q, 8, 1 << 20), 0);
	for (uint64_t t = start; t < end; t += STEP) {
		uint64_t before = c->drops + c->marks;

		while ((p = fifoq_pop(&q)) != NULL)
			free(p);
		for (int i = 0; i < 4; i++)
			assert_int_equal(fifoq_push(&q, lab_new4(1500, ecn, 1), t - sojourn(t)), 0);
		p = codel_dequeue(c, &q, t);
		if (p != NULL && (p->data[1] & 3) == PKT_CE)
			out->ce_sent++;
		free(p);
		for (uint64_t k = before; k < c->drops + c->marks && out->n < MAX_SIGNALS; k++)
			out->at[out->n++] = t;
	}
	fifoq_free(&q);
}

static uint64_t below_target(uint64_t t)
{
	(void)t;
	return 4900000;
}

static uint64_t above_from_1s(uint64_t t)
{
	return t >= 1000 * MS ? 10 * MS : 1 * MS;
}

/* Above target for 90 ms at a time, then 20 ms below: never an interval in a row. */
static uint64_t bursts_short(uint64_t t)
{
	return (t / MS) % 110 < 90 ? 20 * MS : 1 * MS;
}

static uint64_t standing(uint64_t t)
{
	(void)t;
	return 50 * MS;
}

static void test_no_drop_below_target(void **state)
{
	struct codel c;
	struct codel_run r = {0};

	(void)state;
	codel_init(&c, CODEL_TARGET_NS, CODEL_INTERVAL_NS, 0);
	codel_run(&c, below_target, 1000 * MS, 3000 * MS, 0, &r);
	assert_int_equal(c.drops, 0);
	codel_init(&c, CODEL_TARGET_NS, CODEL_INTERVAL_NS, 0);
	codel_run(&c, bursts_short, 1000 * MS, 3000 * MS, 0, &r);
	assert_int_equal(c.drops, 0);
}

static void test_first_drop_after_interval(void **state)
{
	struct codel c;
	struct codel_run r = {0};

	(void)state;
	codel_init(&c, CODEL_TARGET_NS, CODEL_INTERVAL_NS, 0);
	codel_run(&c, above_from_1s, 500 * MS, 1500 * MS, 0, &r);
	assert_true(r.n > 0);
	/* Sojourn >= target from 1000 ms: the first drop is one interval later, to the step. */
	assert_true(r.at[0] >= 1100 * MS);
	assert_true(r.at[0] <= 1100 * MS + STEP);
}

static void test_drop_spacing(void **state)
{
	struct codel c;
	struct codel_run r = {0};

	(void)state;
	codel_init(&c, CODEL_TARGET_NS, CODEL_INTERVAL_NS, 0);
	codel_run(&c, standing, 1000 * MS, 2500 * MS, 0, &r);
	assert_true(r.n >= 12);
	/* The gap after the k-th drop of the episode is interval/sqrt(k). */
	for (size_t k = 1; k < 12; k++) {
		double gap = (double)(r.at[k] - r.at[k - 1]);
		double want = (double)CODEL_INTERVAL_NS / sqrt((double)k);

		assert_true(fabs(gap - want) <= STEP);
	}
	assert_int_equal(c.marks, 0);
}

static void test_ecn_marks(void **state)
{
	struct codel c;
	struct codel_run r = {0};

	(void)state;
	codel_init(&c, CODEL_TARGET_NS, CODEL_INTERVAL_NS, 1);
	codel_run(&c, standing, 1000 * MS, 2500 * MS, PKT_ECT0, &r);
	assert_true(c.marks >= 12);
	assert_int_equal(c.drops, 0);
	assert_int_equal(r.ce_sent, c.marks);
	/* Marks follow the same control law as drops. */
	for (size_t k = 1; k < 12; k++) {
		double gap = (double)(r.at[k] - r.at[k - 1]);

		assert_true(fabs(gap - (double)CODEL_INTERVAL_NS / sqrt((double)k)) <= STEP);
	}
	/* Not-ECT packets are dropped even with ECN on. */
	codel_init(&c, CODEL_TARGET_NS, CODEL_INTERVAL_NS, 1);
	r = (struct codel_run){0};
	codel_run(&c, standing, 1000 * MS, 2500 * MS, PKT_NOT_ECT, &r);
	assert_true(c.drops >= 12);
	assert_int_equal(c.marks, 0);
	assert_int_equal(r.ce_sent, 0);
}

/* Enters the dropping state at now with a standing queue, after an episode of 8 drops
 * (count 10, lastcount 2) whose next drop was scheduled at drop_next; returns the new count. */
static uint32_t codel_reenter(uint64_t now, uint64_t drop_next)
{
	struct codel c;
	struct fifoq q;
	struct lab_pkt *p;
	uint32_t count;

	codel_init(&c, CODEL_TARGET_NS, CODEL_INTERVAL_NS, 0);
	c.count = 10;
	c.lastcount = 2;
	c.drop_next = drop_next;
	c.first_above_time = now - MS; /* above target for an interval already */
	assert_int_equal(fifoq_init(&q, 8, 1 << 20), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(fifoq_push(&q, lab_new4(1500, 0, 1), now - 50 * MS), 0);
	p = codel_dequeue(&c, &q, now);
	assert_non_null(p);
	free(p);
	assert_int_equal(c.dropping, 1);
	assert_int_equal(c.drops, 1);
	count = c.count;
	fifoq_free(&q);
	return count;
}

static void test_reentry_count(void **state)
{
	uint64_t now = 10000 * MS;

	(void)state;
	/* RFC 8289 section 5.5: the last episode's 8 drops are the starting point... */
	assert_int_equal(codel_reenter(now, now - 10 * CODEL_INTERVAL_NS), 8);
	/* ...unless it ended 16 intervals ago or more. */
	assert_int_equal(codel_reenter(now, now - 16 * CODEL_INTERVAL_NS), 1);
	/* A drop_next still ahead of now is recent (Linux: a signed comparison). */
	assert_int_equal(codel_reenter(now, now + 20 * MS), 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_drop_below_target),
		cmocka_unit_test(test_first_drop_after_interval),
		cmocka_unit_test(test_drop_spacing),
		cmocka_unit_test(test_ecn_marks),
		cmocka_unit_test(test_reentry_count),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

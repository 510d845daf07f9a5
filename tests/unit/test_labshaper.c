/* Unit tests for client/lab/shaper.c and client/lab/fifoq.c: the token bucket's rate over a
 * simulated second at 20, 100 and 500 Mbit/s, and the FIFO's byte limit with tail-drop. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "client/lab/fifoq.h"
#include "client/lab/shaper.h"
#include "lab_pktbuild.h"

/* Bytes a greedy sender gets through the shaper in one simulated second. */
static uint64_t shaper_second(uint64_t rate_bps)
{
	struct shaper s;
	uint64_t t = 0, sent = 0;

	shaper_init(&s, rate_bps, 1514, 0);
	while (t < 1000000000ull) {
		uint64_t wait = shaper_take(&s, t, 1500);

		if (wait == 0)
			sent += 1500;
		else
			t += wait;
	}
	return sent;
}

static void test_rate(void **state)
{
	static const uint64_t rates[] = { 20000000ull, 100000000ull, 500000000ull };

	(void)state;
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		double got = (double)shaper_second(rates[i]) * 8;

		assert_true(got > rates[i] * 0.99 && got < rates[i] * 1.01);
	}
}

static void test_wait(void **state)
{
	struct shaper s;

	(void)state;
	shaper_init(&s, 8000000, 1514, 0);   /* 1 byte per microsecond */
	assert_int_equal(shaper_take(&s, 0, 1500), 0);
	/* 14 bytes of credit left: 986 more take 986 us. */
	assert_int_equal(shaper_take(&s, 0, 1000), 986000);
	assert_int_not_equal(shaper_take(&s, 985000, 1000), 0);
	assert_int_equal(shaper_take(&s, 986000, 1000), 0);
}

static void test_fifo_taildrop(void **state)
{
	struct fifoq q;
	struct lab_pkt *p;

	(void)state;
	assert_int_equal(fifoq_init(&q, 16, 3000), 0);
	assert_int_equal(fifoq_push(&q, lab_new4(1500, 0, 1), 10), 0);
	assert_int_equal(fifoq_push(&q, lab_new4(1400, 0, 2), 20), 0);
	assert_int_equal(fifoq_push(&q, lab_new4(200, 0, 3), 30), -1);
	assert_int_equal(q.tail_drops, 1);
	assert_int_equal(q.bytes, 2900);
	p = fifoq_pop(&q);
	assert_int_equal(p->len, 1500);
	assert_int_equal(p->enq_ns, 10);
	free(p);
	assert_int_equal(fifoq_push(&q, lab_new4(100, 0, 3), 40), 0);
	p = fifoq_pop(&q);
	assert_int_equal(p->len, 1400);
	free(p);
	fifoq_free(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate),
		cmocka_unit_test(test_wait),
		cmocka_unit_test(test_fifo_taildrop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

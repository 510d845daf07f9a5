/* Unit tests for client/run/liveness.c: any channel's new data is a sign of life; only
 * LIVENESS_OUTAGE_NS of silence on all of them is an outage, dated from the last sign. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "client/run/liveness.h"
#include "common/clock.h"

static void test_silence_on_every_channel_is_an_outage(void **state)
{
	struct liveness l;
	int64_t t0 = 100 * NS_PER_SEC;

	(void)state;
	liveness_init(&l, t0);
	assert_false(liveness_outage(&l, t0 + LIVENESS_OUTAGE_NS - 1));
	assert_true(liveness_outage(&l, t0 + LIVENESS_OUTAGE_NS));
	/* Each channel alone keeps it alive. */
	liveness_update(&l, t0 + 4 * NS_PER_SEC, 1, 0, 0);
	assert_false(liveness_outage(&l, t0 + 8 * NS_PER_SEC));
	liveness_update(&l, t0 + 8 * NS_PER_SEC, 1, 7, 0);
	assert_false(liveness_outage(&l, t0 + 12 * NS_PER_SEC));
	liveness_update(&l, t0 + 12 * NS_PER_SEC, 1, 7, 1500);
	assert_int_equal(l.last_ns, t0 + 12 * NS_PER_SEC);
	/* Unchanged counts are no sign of life: the outage dates from the last change. */
	liveness_update(&l, t0 + 14 * NS_PER_SEC, 1, 7, 1500);
	assert_int_equal(l.last_ns, t0 + 12 * NS_PER_SEC);
	assert_false(liveness_outage(&l, t0 + 17 * NS_PER_SEC - 1));
	assert_true(liveness_outage(&l, t0 + 17 * NS_PER_SEC));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_silence_on_every_channel_is_an_outage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

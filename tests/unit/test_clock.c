/* Unit tests for common/clock.c: converting a kernel (CLOCK_REALTIME) stamp to the monotonic
 * clock keeps its age. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/clock.h"

/* A stamp taken now converts to (about) monotonic now, one taken 5 ms ago to 5 ms earlier:
 * the bound is loose (a preempted test thread), the sign and the scale are not. */
static void test_real_to_mono(void **state)
{
	for (int i = 0; i < 1000; i++) {
		int64_t m0 = clock_mono_ns();
		int64_t now = clock_real_to_mono(clock_real_ns());
		int64_t ago = clock_real_to_mono(clock_real_ns() - 5000000);
		int64_t m1 = clock_mono_ns();

		assert_true(now >= m0 - 1000 && now <= m1 + 1000);
		assert_true(ago >= m0 - 5000000 - 1000 && ago <= m1 - 5000000 + 1000);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_to_mono),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* clock: thin wrappers so every caller reads the same clocks the same way. */
#include "common/clock.h"

#include <stdint.h>
#include <time.h>

static int64_t clock_read(clockid_t id)
{
	struct timespec ts;

	/* clock_gettime on these ids cannot fail on Linux; 0 would be an obvious bad sample. */
	if (clock_gettime(id, &ts) != 0)
		return 0;
	return (int64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

int64_t clock_mono_ns(void)
{
	return clock_read(CLOCK_MONOTONIC);
}

int64_t clock_thread_cpu_ns(void)
{
	return clock_read(CLOCK_THREAD_CPUTIME_ID);
}

int64_t clock_real_ns(void)
{
	return clock_read(CLOCK_REALTIME);
}

/* The kernel stamps packets in CLOCK_REALTIME; the age of the stamp is measured in that clock
 * (a few microseconds, so NTP slewing cannot matter) and subtracted from monotonic now. */
int64_t clock_real_to_mono(int64_t real_ns)
{
	int64_t best_gap = INT64_MAX, best = 0;

	/* A preemption between the two clock reads would shift the result by its length (seen:
	 * a reply stamped before its request was sent). Bracket the realtime read with two
	 * monotonic reads and keep the tightest of a few brackets (not the last: on a busy host
	 * the last may be the one preempted); within 2 µs the midpoint is within 1 µs. */
	for (int i = 0; i < 8 && best_gap > 2000; i++) {
		int64_t m0 = clock_mono_ns(), real = clock_real_ns(), m1 = clock_mono_ns();

		if (m1 - m0 < best_gap) {
			best_gap = m1 - m0;
			best = m0 + (m1 - m0) / 2 - (real - real_ns);
		}
	}
	return best;
}

double ns_to_ms(int64_t ns)
{
	return (double)ns / 1e6;
}

const char *ts_source_name(enum ts_source src)
{
	return src == TS_SRC_KERNEL ? "kernel" : "user";
}

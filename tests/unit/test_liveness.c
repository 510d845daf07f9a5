/* Unit tests for client/run/liveness.c: any channel's new data is a sign of life; only
 * LIVENESS_OUTAGE_NS of silence on all of them is an outage, dated from the last sign; UDP
 * silent while TCP is heard is a UDP block, but not before UDP ever answered, not with too
 * few probes sent, and not when TCP is silent too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "client/run/liveness.h"
#include "common/clock.h"

/* The counts: control frames, UDP replies, UDP probes sent, download bytes. */
static void upd(struct liveness *l, int64_t now, uint64_t ctrl, uint64_t replies, uint64_t sent,
		uint64_t down)
{
	struct liveness_counts c = { ctrl, replies, sent, down };

	liveness_update(l, now, &c);
}

static void test_silence_on_every_channel_is_an_outage(void **state)
{
	struct liveness l;
	int64_t t0 = 100 * NS_PER_SEC;

	(void)state;
	liveness_init(&l, t0);
	assert_false(liveness_outage(&l, t0 + LIVENESS_OUTAGE_NS - 1));
	assert_true(liveness_outage(&l, t0 + LIVENESS_OUTAGE_NS));
	/* Each channel alone keeps it alive. */
	upd(&l, t0 + 4 * NS_PER_SEC, 1, 0, 0, 0);
	assert_false(liveness_outage(&l, t0 + 8 * NS_PER_SEC));
	upd(&l, t0 + 8 * NS_PER_SEC, 1, 7, 0, 0);
	assert_false(liveness_outage(&l, t0 + 12 * NS_PER_SEC));
	upd(&l, t0 + 12 * NS_PER_SEC, 1, 7, 0, 1500);
	assert_int_equal(l.last_ns, t0 + 12 * NS_PER_SEC);
	/* Unchanged counts are no sign of life: the outage dates from the last change. */
	upd(&l, t0 + 14 * NS_PER_SEC, 1, 7, 0, 1500);
	assert_int_equal(l.last_ns, t0 + 12 * NS_PER_SEC);
	assert_false(liveness_outage(&l, t0 + 17 * NS_PER_SEC - 1));
	assert_true(liveness_outage(&l, t0 + 17 * NS_PER_SEC));
}

/* Probes every 10 ms answered until 5 s, then none, while the download goes on: UDP silent
 * from 8 s (3 s after the last reply), dated at 5 s. */
static void test_udp_silent_while_tcp_heard(void **state)
{
	struct liveness l;
	int64_t t0 = 100 * NS_PER_SEC, ms = NS_PER_MS;

	(void)state;
	liveness_init(&l, t0);
	for (int64_t t = 0; t <= 10000; t += 100) {
		uint64_t sent = (uint64_t)t / 10, replies = t <= 5000 ? sent : 500;

		upd(&l, t0 + t * ms, 3, replies, sent, (uint64_t)t * 1000);
		assert_int_equal(liveness_udp_silent(&l, t0 + t * ms), t >= 8000);
	}
	assert_int_equal(l.udp_last_ns, t0 + 5000 * ms);
	assert_false(liveness_outage(&l, t0 + 10000 * ms));
}

/* No verdict without evidence: UDP never answered (the idle-phase rule's case), too few probes
 * since the last reply (a slow probe schedule), or TCP silent too (an outage, not a block). */
static void test_udp_silent_needs_evidence(void **state)
{
	struct liveness l;
	int64_t t0 = 100 * NS_PER_SEC;

	(void)state;
	liveness_init(&l, t0);
	upd(&l, t0 + NS_PER_SEC, 1, 0, 300, 10);
	upd(&l, t0 + 4 * NS_PER_SEC, 2, 0, 600, 20);
	assert_false(liveness_udp_silent(&l, t0 + 4 * NS_PER_SEC));
	liveness_init(&l, t0);
	upd(&l, t0 + NS_PER_SEC, 1, 5, 5, 10);
	upd(&l, t0 + 4 * NS_PER_SEC, 2, 5, 5 + LIVENESS_UDP_MIN_SENT - 1, 20);
	assert_false(liveness_udp_silent(&l, t0 + 4 * NS_PER_SEC));
	upd(&l, t0 + 5 * NS_PER_SEC, 3, 5, 5 + LIVENESS_UDP_MIN_SENT, 30);
	assert_true(liveness_udp_silent(&l, t0 + 5 * NS_PER_SEC));
	liveness_init(&l, t0);
	upd(&l, t0 + NS_PER_SEC, 1, 5, 5, 10);
	upd(&l, t0 + 2 * NS_PER_SEC, 1, 5, 500, 10);
	assert_false(liveness_udp_silent(&l, t0 + 5 * NS_PER_SEC)); /* TCP silent since 1 s */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_silence_on_every_channel_is_an_outage),
		cmocka_unit_test(test_udp_silent_while_tcp_heard),
		cmocka_unit_test(test_udp_silent_needs_evidence),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

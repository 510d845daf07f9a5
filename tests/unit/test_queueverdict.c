/* Unit tests for client/analysis/queueverdict.c: each verdict on the figures of its queue, and
 * that a tail-drop FIFO is never called an AQM whatever its size. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "client/analysis/queueverdict.h"

/* A saturated 20 Mbit/s direction with no drops, no marks and no figures yet. */
static struct queueverdict_input base(void)
{
	struct queueverdict_input in = {
		.saturated = 1, .rate_mbps = 20, .q_p50_ms = NAN, .q_p95_ms = NAN, .top_ms = NAN,
		.sustained_ms = NAN, .floor_ms = NAN, .lost = 0, .q_before_ms = NAN, .retrans = 0, .ce = -1,
		.flow_q_ms = NAN,
	};
	return in;
}

static void test_fifo_drops_at_top(void **state)
{
	struct queueverdict_input in = base();
	struct queue_verdict v;

	(void)state;
	in.q_p50_ms = 92, in.q_p95_ms = 99, in.top_ms = 100, in.lost = 12, in.q_before_ms = 97;
	in.retrans = 300, in.flow_q_ms = 95;
	queueverdict_classify(&in, &v);
	assert_string_equal(v.verdict, "fifo");
	assert_string_equal(v.signal, "drops");
	assert_non_null(strstr(v.evidence, "FIFO of 100.0 ms"));
	assert_non_null(strstr(v.evidence, "97.0 ms queued"));
}

/* A FIFO so short that its standing queue is as low as an AQM's still drops at its top. */
static void test_short_fifo_is_fifo(void **state)
{
	struct queueverdict_input in = base();
	struct queue_verdict v;

	(void)state;
	in.q_p50_ms = 6, in.q_p95_ms = 9.5, in.top_ms = 10, in.lost = 40, in.q_before_ms = 9;
	in.retrans = 800, in.flow_q_ms = 7;
	queueverdict_classify(&in, &v);
	assert_string_equal(v.verdict, "fifo");
}

/* Whatever its size and however full it stands, a queue that loses probes at its top is a FIFO. */
static void test_fifo_never_aqm(void **state)
{
	(void)state;
	for (double top = 3; top <= 400; top *= 1.3)
		for (double f = 0.8; f <= 1.2; f += 0.05)
			for (double s = 0.1; s <= 1.0; s += 0.15) {
				struct queueverdict_input in = base();
				struct queue_verdict v;

				in.top_ms = top, in.q_before_ms = f * top, in.q_p50_ms = s * top;
				in.q_p95_ms = top, in.lost = 5, in.retrans = 50, in.flow_q_ms = s * top;
				queueverdict_classify(&in, &v);
				assert_string_equal(v.verdict, "fifo");
			}
}

static void test_codel_is_aqm(void **state)
{
	struct queueverdict_input in = base();
	struct queue_verdict v;

	(void)state;
	in.q_p50_ms = 5.2, in.q_p95_ms = 14, in.top_ms = 22, in.lost = 6, in.q_before_ms = 6;
	in.retrans = 150, in.flow_q_ms = 7;
	queueverdict_classify(&in, &v);
	assert_string_equal(v.verdict, "aqm");
	assert_non_null(strstr(v.evidence, "near 5.2 ms"));
	assert_non_null(strstr(v.evidence, "6 probes lost, 150 retransmissions"));
}

/* A 30 ms FIFO limited in bytes under four reno flows (lab: 50 Mbit/s): the load's segments
 * are dropped, the small probes never are, and the queue never drains far below its top. An
 * AQM would have drained it toward its target (CoDel in the lab: floor 9.5 of a 19.4 ms top). */
static void test_full_fifo_without_probe_loss(void **state)
{
	struct queueverdict_input in = base();
	struct queue_verdict v;

	(void)state;
	in.q_p50_ms = 28.1, in.q_p95_ms = 29.6, in.top_ms = 30.0, in.floor_ms = 26.0;
	in.retrans = 700, in.flow_q_ms = 29;
	queueverdict_classify(&in, &v);
	assert_string_equal(v.verdict, "fifo");
	assert_non_null(strstr(v.evidence, "stood near its top of 30.0 ms"));
	/* no floor known: the median stands for it */
	in.floor_ms = NAN;
	queueverdict_classify(&in, &v);
	assert_string_equal(v.verdict, "fifo");
	/* CoDel's figures from the lab stay an AQM */
	in = base();
	in.q_p50_ms = 11.6, in.q_p95_ms = 16, in.top_ms = 19.4, in.floor_ms = 9.5, in.lost = 5;
	in.q_before_ms = 12, in.retrans = 300, in.flow_q_ms = 13;
	queueverdict_classify(&in, &v);
	assert_string_equal(v.verdict, "aqm");
}

/* PIE drops at random around its target: the queue before the losses is the standing queue,
 * more than half the top (the lab's PIE at 20 Mbit/s). */
static void test_pie_is_aqm(void **state)
{
	struct queueverdict_input in = base();
	struct queue_verdict v;

	(void)state;
	in.q_p50_ms = 14.4, in.q_p95_ms = 19, in.top_ms = 20.8, in.lost = 58, in.q_before_ms = 14.8;
	in.retrans = 900, in.flow_q_ms = 17, in.floor_ms = 11.9;
	queueverdict_classify(&in, &v);
	assert_string_equal(v.verdict, "aqm");
	assert_non_null(strstr(v.evidence, "near 14.4 ms (floor 11.9 ms)"));
}

static void test_marking_aqm(void **state)
{
	struct queueverdict_input in = base();
	struct queue_verdict v;

	(void)state;
	in.q_p50_ms = 5, in.q_p95_ms = 12, in.top_ms = 20, in.ce = 900, in.flow_q_ms = 6;
	queueverdict_classify(&in, &v);
	assert_string_equal(v.verdict, "aqm");
	assert_string_equal(v.signal, "marks");
	assert_non_null(strstr(v.evidence, "marks instead of dropping"));
}

static void test_flow_queuing(void **state)
{
	struct queueverdict_input in = base();
	struct queue_verdict v;

	(void)state;
	in.q_p50_ms = 0.4, in.q_p95_ms = 1.5, in.top_ms = 3, in.retrans = 200, in.flow_q_ms = 9;
	queueverdict_classify(&in, &v);
	assert_string_equal(v.verdict, "fq");
	assert_non_null(strstr(v.evidence, "rose 9.0 ms"));
	/* The same probes with the load flows' RTT flat too: nothing queues anywhere. */
	in.flow_q_ms = 1;
	queueverdict_classify(&in, &v);
	assert_string_equal(v.verdict, "policer");
}

static void test_policer(void **state)
{
	struct queueverdict_input in = base();
	struct queue_verdict v;

	(void)state;
	in.q_p50_ms = 0.3, in.q_p95_ms = 1.2, in.top_ms = 2, in.lost = 30, in.q_before_ms = 0.3;
	in.retrans = 400, in.flow_q_ms = 0.8;
	queueverdict_classify(&in, &v);
	assert_string_equal(v.verdict, "policer");
	assert_non_null(strstr(v.evidence, "20.0 Mbit/s"));
}

/* A full 5 ms FIFO at 500 Mbit/s (lab, -P 16: no probe lost, the load's segments dropped) is a
 * FIFO, not a policer, though its whole queue is under QV_NO_QUEUE_MS. */
static void test_small_full_fifo_fast_link(void **state)
{
	struct queueverdict_input in = base();
	struct queue_verdict v;

	(void)state;
	in.rate_mbps = 495.2, in.q_p50_ms = 4.744, in.q_p95_ms = 4.9, in.floor_ms = 4.525;
	in.top_ms = 4.953, in.retrans = 15766, in.flow_q_ms = 4.349;
	queueverdict_classify(&in, &v);
	assert_string_equal(v.verdict, "fifo");
	/* The same figures a hundred times smaller are no queue: a policer's jitter. */
	in.q_p50_ms /= 100, in.q_p95_ms /= 100, in.floor_ms /= 100, in.top_ms /= 100;
	in.flow_q_ms /= 100;
	queueverdict_classify(&in, &v);
	assert_string_equal(v.verdict, "policer");
}

static void test_unknown(void **state)
{
	struct queueverdict_input in = base();
	struct queue_verdict v;

	(void)state;
	in.q_p50_ms = 5, in.q_p95_ms = 12, in.top_ms = 20, in.lost = 3, in.q_before_ms = 6;
	in.saturated = 0;
	queueverdict_classify(&in, &v);
	assert_string_equal(v.verdict, "unknown"); /* never saturated */
	in.saturated = 1, in.lost = 0, in.retrans = 0;
	queueverdict_classify(&in, &v);
	assert_string_equal(v.verdict, "unknown"); /* no drops or marks */
	assert_string_equal(v.signal, "none");
	in.retrans = 40;
	queueverdict_classify(&in, &v);
	assert_string_equal(v.verdict, "unknown"); /* drops, but none of the probes placed them */
	in.lost = 4, in.q_before_ms = 13; /* below the top, but well above the standing queue */
	queueverdict_classify(&in, &v);
	assert_string_equal(v.verdict, "unknown");
}

/* A long standing queue without a probe loss is still unmanaged. */
static void test_standing_queue_is_fifo(void **state)
{
	struct queueverdict_input in = base();
	struct queue_verdict v;

	(void)state;
	in.q_p50_ms = 180, in.q_p95_ms = 195, in.top_ms = 200, in.retrans = 20, in.flow_q_ms = 185;
	queueverdict_classify(&in, &v);
	assert_string_equal(v.verdict, "fifo");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_drops_at_top),
		cmocka_unit_test(test_short_fifo_is_fifo),
		cmocka_unit_test(test_fifo_never_aqm),
		cmocka_unit_test(test_codel_is_aqm),
		cmocka_unit_test(test_pie_is_aqm),
		cmocka_unit_test(test_full_fifo_without_probe_loss),
		cmocka_unit_test(test_marking_aqm),
		cmocka_unit_test(test_flow_queuing),
		cmocka_unit_test(test_policer),
		cmocka_unit_test(test_small_full_fifo_fast_link),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_standing_queue_is_fifo),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for client/analysis/lowerbound.c: every piece of evidence that the queue stayed
 * below its top turns the estimate into a lower bound with its reason and a warning, raised
 * to the highest sustained queue; a cubic run into a tail-drop queue stays a point value. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "client/analysis/lowerbound.h"
#include "client/model/config.h"
#include "client/model/result.h"

/* A run with a download phase whose estimate is 67 ms (≈ 418 750 bytes at 50 Mbit/s) while
 * the queue was seen at 169 ms in at least two seconds, and an upload phase at 40 ms. */
static void setup(struct test_result *r, const char *server_cc, const char *down_cls)
{
	struct client_config cfg;

	config_defaults(&cfg);
	result_init(r, &cfg);
	snprintf(r->cc.requested, sizeof(r->cc.requested), "cubic");
	r->cc.client_ok = 1;
	snprintf(r->cc.client_used, sizeof(r->cc.client_used), "cubic");
	r->cc.server_ok = strcmp(server_cc, "cubic") == 0;
	snprintf(r->cc.server_used, sizeof(r->cc.server_used), "%s", server_cc);
	r->nphases = 2;
	r->phases[0].kind = PHASE_DOWNLOAD;
	r->phases[0].saturated = 1;
	r->phases[0].loss_down.cls = down_cls;
	r->phases[0].loss_up.cls = "none";
	r->phases[1].kind = PHASE_UPLOAD;
	r->phases[1].saturated = 1;
	r->phases[1].loss_down.cls = "none";
	r->phases[1].loss_up.cls = "tail-drop";
	r->buffer_down = (struct buffer_estimate){ .valid = 1, .phase = PHASE_DOWNLOAD, .ms = 67,
						   .bytes = 418750, .sustained_ms = 169 };
	r->buffer_up = (struct buffer_estimate){ .valid = 1, .phase = PHASE_UPLOAD, .ms = 40,
						 .bytes = 50000, .sustained_ms = 40.5 };
}

static void test_cubic_tail_drop_stays_a_point(void **state)
{
	struct test_result r;

	(void)state;
	setup(&r, "cubic", "tail-drop");
	lowerbound_apply(&r);
	assert_false(r.buffer_down.lower_bound);
	assert_true(r.buffer_down.ms == 67);
	assert_false(r.buffer_up.lower_bound);
	assert_true(r.buffer_up.ms == 40);
	assert_int_equal(r.nwarnings, 0);
	result_free(&r);
}

static void test_random_loss(void **state)
{
	struct test_result r;

	(void)state;
	setup(&r, "cubic", "random");
	lowerbound_apply(&r);
	assert_true(r.buffer_down.lower_bound);
	assert_string_equal(r.buffer_down.lower_bound_why, "random loss");
	assert_true(r.buffer_down.ms == 169);
	assert_true(fabs(r.buffer_down.bytes - 418750.0 * 169 / 67) < 1e-6);
	assert_false(r.buffer_up.lower_bound);
	assert_int_equal(r.nwarnings, 1);
	assert_non_null(strstr(r.warnings[0], "downlink buffer is at least 169.0 ms"));
	result_free(&r);
}

static void test_bbr_sender(void **state)
{
	struct test_result r;

	(void)state;
	setup(&r, "bbr", "tail-drop");
	lowerbound_apply(&r);
	assert_true(r.buffer_down.lower_bound);
	assert_string_equal(r.buffer_down.lower_bound_why, "bbr");
	assert_true(r.buffer_down.ms == 169);
	assert_non_null(strstr(r.warnings[0], "bbr keeps the queue short"));
	/* The upload's sender, the client, ran cubic. */
	assert_false(r.buffer_up.lower_bound);
	result_free(&r);
}

/* HTTP mode: the download's sender is the server's; a server that does not name its
 * algorithm may run bbr, so its download buffer is a bound; one that names cubic is not. */
static void test_http_server_cc(void **state)
{
	struct test_result r;

	(void)state;
	setup(&r, "", "tail-drop");
	r.http = 1; /* cc.server_ok stays 0, as the HTTP mode leaves it */
	lowerbound_apply(&r);
	assert_true(r.buffer_down.lower_bound);
	assert_string_equal(r.buffer_down.lower_bound_why, "unknown congestion control");
	assert_true(r.buffer_down.ms == 169);
	assert_non_null(strstr(r.warnings[0], "does not say which congestion control"));
	assert_false(r.buffer_up.lower_bound); /* the client sends the upload: cubic */
	result_free(&r);

	setup(&r, "cubic", "tail-drop");
	r.http = 1;
	lowerbound_apply(&r);
	assert_false(r.buffer_down.lower_bound);
	assert_int_equal(r.nwarnings, 0);
	result_free(&r);
}

static void test_managed_and_unstable(void **state)
{
	struct test_result r;

	(void)state;
	setup(&r, "cubic", "tail-drop");
	r.buffer_down.managed = 1;
	r.buffer_up.unstable = 1;
	lowerbound_apply(&r);
	assert_string_equal(r.buffer_down.lower_bound_why, "managed queue");
	assert_string_equal(r.buffer_up.lower_bound_why, "unstable");
	assert_true(r.buffer_up.ms == 40.5);
	assert_int_equal(r.nwarnings, 2);
	result_free(&r);
}

/* A short tail-drop queue looks managed (short, with drops), but its probes were lost at the
 * queue's top: the estimate is that top, a point value. */
static void test_managed_but_drops_at_top(void **state)
{
	struct test_result r;

	(void)state;
	setup(&r, "cubic", "policer");
	r.buffer_down.ms = 9.9;
	r.buffer_down.sustained_ms = 9.95;
	r.buffer_down.managed = 1;
	r.phases[0].loss_down.lost = 12;
	r.phases[0].loss_down.q_before_ms = 9.8;
	lowerbound_apply(&r);
	assert_false(r.buffer_down.lower_bound);
	assert_true(r.buffer_down.ms == 9.9);
	result_free(&r);
	/* Drops well below the top: an AQM's signature, so a lower bound. */
	setup(&r, "cubic", "aqm");
	r.buffer_down.ms = 20;
	r.buffer_down.sustained_ms = 22;
	r.buffer_down.managed = 1;
	r.phases[0].loss_down.lost = 12;
	r.phases[0].loss_down.q_before_ms = 6;
	lowerbound_apply(&r);
	assert_string_equal(r.buffer_down.lower_bound_why, "managed queue");
	assert_true(r.buffer_down.ms == 22);
	result_free(&r);
	/* Short with drops, no probe lost, but the queue verdict found a FIFO standing at its
	 * top: a point value. */
	setup(&r, "cubic", "tail-drop");
	r.buffer_down.ms = 29.7;
	r.buffer_down.sustained_ms = 29.9;
	r.buffer_down.managed = 1;
	r.queue_down.verdict = "fifo";
	lowerbound_apply(&r);
	assert_false(r.buffer_down.lower_bound);
	result_free(&r);
}

/* An earlier reason (never saturated) is kept, and the value still raised; a sustained level
 * below the estimate never lowers it. */
static void test_existing_reason_and_no_lowering(void **state)
{
	struct test_result r;

	(void)state;
	setup(&r, "cubic", "tail-drop");
	r.buffer_down.lower_bound = 1;
	r.buffer_down.lower_bound_why = "never saturated";
	r.buffer_up.lower_bound = 1;
	r.buffer_up.lower_bound_why = "receive window";
	r.buffer_up.sustained_ms = 30;
	lowerbound_apply(&r);
	assert_string_equal(r.buffer_down.lower_bound_why, "never saturated");
	assert_true(r.buffer_down.ms == 169);
	assert_true(r.buffer_up.ms == 40);
	assert_int_equal(r.nwarnings, 0);
	result_free(&r);
}

static void test_cc_names(void **state)
{
	(void)state;
	assert_true(lowerbound_cc_short_queue("bbr"));
	assert_true(lowerbound_cc_short_queue("bbr2"));
	assert_true(lowerbound_cc_short_queue("vegas"));
	assert_false(lowerbound_cc_short_queue("cubic"));
	assert_false(lowerbound_cc_short_queue("reno"));
	assert_false(lowerbound_cc_short_queue(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cubic_tail_drop_stays_a_point),
		cmocka_unit_test(test_random_loss),
		cmocka_unit_test(test_bbr_sender),
		cmocka_unit_test(test_http_server_cc),
		cmocka_unit_test(test_managed_and_unstable),
		cmocka_unit_test(test_managed_but_drops_at_top),
		cmocka_unit_test(test_existing_reason_and_no_lowering),
		cmocka_unit_test(test_cc_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for client/analysis/hops.c on fixture traces: a bottleneck after hop 2, one at the
 * first link, a hop that rate-limits its ICMP replies, one that deprioritises them (slow own
 * replies, later hops fine), a silent hop, an unloaded path and no data. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "client/analysis/hops.h"

/* Hop h: idle median idle_ms (all 20 answered), phase-0 median loaded_ms with replies of 20. */
static void hop(struct hop_in *in, const char *addr, double idle_ms, double loaded_ms,
		unsigned replies)
{
	memset(in, 0, sizeof(*in));
	snprintf(in->addr, sizeof(in->addr), "%s", addr);
	in->idle = (struct hop_sample){idle_ms, 20, 20};
	in->loaded[0] = (struct hop_sample){replies ? loaded_ms : NAN, 20, replies};
}

static void test_bottleneck_after_hop2(void **state)
{
	struct hop_in in[3];
	struct hop_out out[3];
	struct hops_verdict v;

	(void)state;
	hop(&in[0], "10.0.1.1", 0.3, 0.5, 20);
	hop(&in[1], "198.51.100.1", 0.6, 1.1, 20);
	hop(&in[2], "203.0.113.5", 0.9, 81.0, 19);
	hops_analyse(in, 3, 1, (const char *const[]){"upload"}, out, &v);
	assert_int_equal(v.first_hop, 3);
	assert_int_equal(v.phase, 0);
	assert_true(strncmp(v.evidence, "upload: hop 3 +80.1 ms", 22) == 0);
	assert_string_equal(v.text, "the queue builds between hop 2 (198.51.100.1) and hop 3 "
				    "(203.0.113.5)");
	assert_true(strstr(v.evidence, "hop 3 +80.1 ms, hop 2 before it +0.5 ms") != NULL);
	assert_float_equal(out[2].loss_pct[0], 5.0, 1e-9);
	assert_float_equal(out[1].increase_ms[0], 0.5, 1e-9);
	for (int h = 0; h < 3; h++)
		assert_false(out[h].icmp_limited);
}

static void test_first_link(void **state)
{
	struct hop_in in[2];
	struct hop_out out[2];
	struct hops_verdict v;

	(void)state;
	hop(&in[0], "192.168.1.1", 1.0, 60.0, 20);
	hop(&in[1], "203.0.113.5", 5.0, 66.0, 20);
	hops_analyse(in, 2, 1, NULL, out, &v);
	assert_int_equal(v.first_hop, 1);
	assert_string_equal(v.text, "the queue builds between this host and hop 1 (192.168.1.1)");
	assert_true(strstr(v.evidence, "every later hop too (hop 2 +61.0 ms)") != NULL);
}

/* Hop 1 drops most of its own replies (icmp_ratelimit), hop 2 deprioritises its replies (slow
 * under load though hop 3 is fine at hop 2's level): neither is the queue. */
static void test_rate_limiting_hops(void **state)
{
	struct hop_in in[4];
	struct hop_out out[4];
	struct hops_verdict v;

	(void)state;
	hop(&in[0], "10.0.1.1", 0.3, 0.4, 6);
	hop(&in[1], "10.0.2.1", 0.6, 45.0, 20);
	hop(&in[2], "10.0.3.1", 0.9, 1.5, 20);
	hop(&in[3], "10.0.4.2", 1.2, 70.0, 20);
	hops_analyse(in, 4, 1, NULL, out, &v);
	assert_int_equal(v.first_hop, 4);
	assert_string_equal(v.text, "the queue builds between hop 3 (10.0.3.1) and hop 4 (10.0.4.2)");
	assert_true(out[0].icmp_limited);
	assert_true(out[1].icmp_limited);
	assert_false(out[2].icmp_limited);
	assert_true(strstr(v.evidence, "hop 1 (10.0.1.1) rate-limits or deprioritises its ICMP "
				       "replies: 70% of them lost while a later hop lost 0%") != NULL);
	assert_true(strstr(v.evidence, "hop 2 (10.0.2.1) deprioritises its ICMP replies") != NULL);
}

/* A hop that never answers ("*") between two that do: the queue is placed after it by the
 * hops beyond, and it is reported as silent, not as the queue. */
static void test_silent_hop(void **state)
{
	struct hop_in in[3];
	struct hop_out out[3];
	struct hops_verdict v;

	(void)state;
	hop(&in[0], "10.0.1.1", 0.3, 0.4, 20);
	hop(&in[1], "", NAN, NAN, 0);
	in[1].idle.replies = 0;
	hop(&in[2], "10.0.3.2", 0.9, 50.0, 20);
	hops_analyse(in, 3, 1, NULL, out, &v);
	assert_int_equal(v.first_hop, 3);
	assert_string_equal(v.text, "the queue builds between hop 2 (*) and hop 3 (10.0.3.2)");
	assert_true(out[1].icmp_limited);
	assert_true(isnan(out[1].increase_ms[0]));
}

/* Two phases: the one with the larger rise at the end is judged. */
static void test_phase_choice_and_quiet(void **state)
{
	struct hop_in in[2];
	struct hop_out out[2];
	struct hops_verdict v;

	(void)state;
	hop(&in[0], "10.0.1.1", 0.3, 0.4, 20);
	hop(&in[1], "10.0.2.2", 0.6, 2.0, 20);
	hops_analyse(in, 2, 1, NULL, out, &v);
	assert_int_equal(v.first_hop, 0);
	assert_string_equal(v.text, "no hop's round trip rose by 5 ms or more under load "
				    "(hop 2: +1.4 ms)");
	in[0].loaded[1] = (struct hop_sample){30.0, 20, 20};
	in[1].loaded[1] = (struct hop_sample){31.0, 20, 20};
	hops_analyse(in, 2, 2, NULL, out, &v);
	assert_int_equal(v.phase, 1);
	assert_int_equal(v.first_hop, 1);
	assert_float_equal(v.increase_ms, 29.7, 1e-9);
	/* no data at all */
	in[0].idle.replies = in[1].idle.replies = 0;
	hops_analyse(in, 2, 2, NULL, out, &v);
	assert_int_equal(v.first_hop, 0);
	assert_int_equal(v.phase, -1);
	assert_string_equal(v.text, "no hop answered both idle and under load");
	hops_analyse(in, 0, 0, NULL, out, &v);
	assert_int_equal(v.first_hop, 0);
}

/* A hop before the queue that got faster under load shows its sign once ("-0.4", not "+-0.4"). */
static void test_negative_rise_before(void **state)
{
	struct hop_in in[2];
	struct hop_out out[2];
	struct hops_verdict v;

	(void)state;
	hop(&in[0], "10.0.1.1", 0.9, 0.5, 20);
	hop(&in[1], "203.0.113.5", 1.0, 41.0, 20);
	hops_analyse(in, 2, 1, (const char *const[]){"download"}, out, &v);
	assert_int_equal(v.first_hop, 2);
	assert_string_equal(v.evidence, "download: hop 2 +40.0 ms, hop 1 before it -0.4 ms");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bottleneck_after_hop2),
		cmocka_unit_test(test_first_link),
		cmocka_unit_test(test_rate_limiting_hops),
		cmocka_unit_test(test_silent_hop),
		cmocka_unit_test(test_phase_choice_and_quiet),
		cmocka_unit_test(test_negative_rise_before),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

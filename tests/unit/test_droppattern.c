/* Unit tests for client/analysis/droppattern.c and the grade bands: loss periods, distances and the
 * Gilbert model on traces with known structure, and each classification rule. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "client/analysis/analysis.h"
#include "client/analysis/droppattern.h"

#define MS 1000000LL
#define STEP (10 * MS)

/* Probes from a fate string ('.' answered, 'U' lost upstream, 'D' lost downstream), with the
 * server's counter as the reflector keeps it; q[i] = queueing delay of answered probes. */
static uint64_t trace(const char *fates, struct probe_rec *p, double *q, double qval)
{
	uint64_t count = 0;

	for (size_t i = 0; fates[i]; i++) {
		memset(&p[i], 0, sizeof(p[i]));
		p[i].seq = (uint32_t)i;
		p[i].send_ns = (int64_t)i * STEP;
		count += fates[i] != 'U';
		q[i] = NAN;
		if (fates[i] == '.') {
			p[i].received = 1;
			p[i].srv_count = count;
			q[i] = qval;
		}
	}
	return count;
}

static void measure(const char *fates, int upstream, double qval, struct loss_pattern *lp)
{
	size_t n = strlen(fates);
	struct probe_rec *p = calloc(n, sizeof(*p));
	double *q = calloc(n, sizeof(*q)), *share = calloc(n, sizeof(*share));
	uint64_t fin = trace(fates, p, q, qval);

	droppattern_shares(p, n, fin, share);
	droppattern_measure(p, n, share, upstream, 0, (int64_t)n * STEP, q, lp);
	free(p);
	free(q);
	free(share);
}

static void test_periods_and_gilbert(void **state)
{
	struct loss_pattern lp;

	/* downstream: periods of 2 and 1 at probes 3 and 9: distance 6 */
	measure("...DD....D..", 0, 50.0, &lp);
	assert_int_equal(lp.lost, 3);
	assert_int_equal(lp.periods, 2);
	assert_int_equal(lp.max_period, 2);
	assert_true(fabs(lp.mean_period - 1.5) < 1e-12);
	assert_true(fabs(lp.mean_distance - 6.0) < 1e-12);
	/* 11 transitions: from good 8 times (2 into loss), from bad 3 times (2 back to good) */
	assert_true(fabs(lp.gilbert_p - 2.0 / 8.0) < 1e-12);
	assert_true(fabs(lp.gilbert_r - 2.0 / 3.0) < 1e-12);
	assert_true(fabs(lp.q_before_ms - 50.0) < 1e-12);
	/* RFC 3611 (Gmin 16): losses at 3, 4, 9 are one burst spanning 3..9 (7 probes, 3 lost);
	 * the 5 probes outside it lost nothing */
	assert_int_equal(lp.bursts, 1);
	assert_true(fabs(lp.burst_density - 3.0 / 7.0) < 1e-12);
	assert_true(fabs(lp.gap_density - 0.0) < 1e-12);
	/* the same trace has no upstream loss */
	measure("...DD....D..", 1, 50.0, &lp);
	assert_int_equal(lp.lost, 0);
	assert_int_equal(lp.periods, 0);
	assert_true(isnan(lp.mean_distance));
}

/* Isolated losses at least Gmin apart are gap losses; two close ones and a run form bursts. */
static void test_burst_gap(void **state)
{
	struct loss_pattern lp;
	const char *apart = ".D....................D....................";

	measure(apart, 0, 10.0, &lp);
	assert_int_equal(lp.bursts, 0);
	assert_true(isnan(lp.burst_density));
	assert_true(fabs(lp.gap_density - 2.0 / (double)strlen(apart)) < 1e-12);
	/* burst 1: probes 2..5 (DD.D, 3 lost of 4); 20 received; burst 2: 26..27 (DD); 10 after */
	measure("..DD.D....................DD..........", 0, 10.0, &lp);
	assert_int_equal(lp.bursts, 2);
	assert_true(fabs(lp.burst_density - 5.0 / 6.0) < 1e-12);
	assert_true(fabs(lp.gap_density - 0.0) < 1e-12);
}

static void test_direction_split(void **state)
{
	struct loss_pattern up, down;

	measure("..U..D..UU..", 1, 10.0, &up);
	measure("..U..D..UU..", 0, 10.0, &down);
	assert_int_equal(up.lost, 3);
	assert_int_equal(up.periods, 2);
	assert_int_equal(down.lost, 1);
}

static struct droppattern_context ctx(int loaded, double loss, double idle_loss, double p95)
{
	struct droppattern_context c = { loaded, 10.0, loss, idle_loss, p95, NAN };

	return c;
}

static void test_classes(void **state)
{
	struct loss_pattern lp;
	struct droppattern_context c;
	char run[80];

	/* outage: 50 consecutive probes = 500 ms */
	memset(run, '.', sizeof(run));
	memset(run + 10, 'D', 50);
	run[79] = '\0';
	measure(run, 0, 5.0, &lp);
	c = ctx(1, 60, 0, 5);
	droppattern_classify(&lp, &c);
	assert_string_equal(lp.cls, "outage");

	/* random: single losses, as frequent loaded as idle */
	measure("....D......D.....D....", 0, 80.0, &lp);
	c = ctx(1, 1.0, 0.9, 90);
	droppattern_classify(&lp, &c);
	assert_string_equal(lp.cls, "random");
	/* … and never random in the idle phase's absence if loaded loss is much higher */
	c = ctx(1, 5.0, 0.5, 90);
	droppattern_classify(&lp, &c);
	assert_string_equal(lp.cls, "tail-drop"); /* drops at q 80 ≥ 0.8 × 90 */

	/* policer: loss under load without a queue */
	measure("...DD....DD...", 0, 1.0, &lp);
	c = ctx(1, 4.0, 0, 3.0);
	droppattern_classify(&lp, &c);
	assert_string_equal(lp.cls, "policer");

	/* AQM: a modest queue, drops while it is low */
	measure("...DD....DD...", 0, 6.0, &lp);
	c = ctx(1, 4.0, 0, 20.0);
	droppattern_classify(&lp, &c);
	assert_string_equal(lp.cls, "aqm");

	/* tail-drop: drops when the queue is at its top */
	measure("...DD....DD...", 0, 98.0, &lp);
	c = ctx(1, 4.0, 0, 97.0);
	droppattern_classify(&lp, &c);
	assert_string_equal(lp.cls, "tail-drop");
	assert_true(strstr(lp.evidence, "98.0 ms") != NULL);

	/* mixed: deep queue but drops in the middle of it */
	measure("...DD....DD...", 0, 50.0, &lp);
	c = ctx(1, 4.0, 0, 97.0);
	droppattern_classify(&lp, &c);
	assert_string_equal(lp.cls, "mixed");
	assert_true(fabs(lp.confidence - 0.2) < 1e-12); /* 2 periods of the 10 for full confidence */

	/* tail-drop against the top of the queue: a host stall inflated the p95 (66.5 ms for a
	 * 50 ms buffer, seen in the lab) but the buffer estimate still says where the top is */
	measure("...DD....DD...", 0, 50.4, &lp);
	c = ctx(1, 4.9, 0, 66.5);
	droppattern_classify(&lp, &c);
	assert_string_equal(lp.cls, "mixed");
	c.q_top_ms = 49.6;
	droppattern_classify(&lp, &c);
	assert_string_equal(lp.cls, "tail-drop");
	assert_true(strstr(lp.evidence, "queue top 49.6 ms") != NULL);

	/* none */
	measure("..........", 0, 50.0, &lp);
	c = ctx(1, 0, 0, 97.0);
	droppattern_classify(&lp, &c);
	assert_string_equal(lp.cls, "none");
}

static void test_grades(void **state)
{
	assert_null(analysis_grade(NAN));
	assert_string_equal(analysis_grade(-1), "A+");
	assert_string_equal(analysis_grade(4.99), "A+");
	assert_string_equal(analysis_grade(5), "A");
	assert_string_equal(analysis_grade(29.9), "A");
	assert_string_equal(analysis_grade(30), "B");
	assert_string_equal(analysis_grade(60), "C");
	assert_string_equal(analysis_grade(199), "C");
	assert_string_equal(analysis_grade(200), "D");
	assert_string_equal(analysis_grade(400), "F");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_periods_and_gilbert),
		cmocka_unit_test(test_direction_split),
		cmocka_unit_test(test_burst_gap),
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_grades),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

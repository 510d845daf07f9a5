/* Unit tests for analysis_ecn_judge (client/analysis/analysis_ecn.c): marks, drops, not
 * negotiated and unknown from the counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "client/analysis/analysis_ecn.h"

static struct ecn_report report(int flows_ecn, int64_t ce_down, int64_t ce_up, int64_t retrans)
{
	struct ecn_report e;

	memset(&e, 0, sizeof(e));
	e.requested = e.enabled = 1;
	e.flows = 16, e.flows_ecn = flows_ecn;
	e.ce_down = ce_down, e.ce_up = ce_up, e.retrans = retrans;
	return e;
}

static void test_marks(void **state)
{
	struct ecn_report e = report(16, 1400, 5200, 0);

	(void)state;
	analysis_ecn_judge(&e);
	assert_string_equal(e.verdict, "marks");
	assert_non_null(strstr(e.evidence, "6600 CE marks (1400 down, 5200 up) against 0 retransmissions"));
}

static void test_drops(void **state)
{
	struct ecn_report e = report(16, 0, 0, 1800);

	(void)state;
	analysis_ecn_judge(&e);
	assert_string_equal(e.verdict, "drops");
	/* A few marks do not outweigh many drops. */
	e = report(16, 10, -1, 900);
	analysis_ecn_judge(&e);
	assert_string_equal(e.verdict, "drops");
}

static void test_not_negotiated(void **state)
{
	struct ecn_report e = report(0, 0, 0, 500);

	(void)state;
	analysis_ecn_judge(&e);
	assert_string_equal(e.verdict, "not negotiated");
}

static void test_unknown(void **state)
{
	struct ecn_report e = report(16, -1, -1, 0);

	(void)state;
	analysis_ecn_judge(&e);
	assert_string_equal(e.verdict, "unknown");
	assert_non_null(strstr(e.evidence, "--probes pcap"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_marks),
		cmocka_unit_test(test_drops),
		cmocka_unit_test(test_not_negotiated),
		cmocka_unit_test(test_unknown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

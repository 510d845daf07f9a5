/* test_httphdr: the HTTP mode's reading of Bloatmeter-Congestion-Control from any server's
 * response: the accepted forms, and every other line refused without touching the output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "client/model/httphdr.h"

static void expect_cc(const char *line, const char *want)
{
	char out[HTTPHDR_CC_MAX] = "";

	assert_int_equal(httphdr_cc(line, strlen(line), out, sizeof(out)), 1);
	assert_string_equal(out, want);
}

static void expect_none(const char *line)
{
	char out[HTTPHDR_CC_MAX] = "unchanged";

	assert_int_equal(httphdr_cc(line, strlen(line), out, sizeof(out)), 0);
	assert_string_equal(out, "unchanged");
}

static void test_accepts(void **state)
{
	(void)state;
	expect_cc("Bloatmeter-Congestion-Control: cubic\r\n", "cubic");
	expect_cc("bloatmeter-congestion-control:bbr\r\n", "bbr");
	expect_cc("BLOATMETER-CONGESTION-CONTROL: \t reno \t\r\n", "reno");
	expect_cc("Bloatmeter-Congestion-Control: bbr2", "bbr2");
	expect_cc("Bloatmeter-Congestion-Control: abcdefghijklmno\r\n", "abcdefghijklmno");
}

static void test_refuses(void **state)
{
	char out[HTTPHDR_CC_MAX];

	(void)state;
	expect_none("Content-Length: 100\r\n");
	expect_none("Bloatmeter-Congestion-Control\r\n");
	expect_none("Bloatmeter-Congestion-Control: \r\n");
	expect_none("Bloatmeter-Congestion-Control : cubic\r\n");
	expect_none("Bloatmeter-Congestion-Controls: cubic\r\n");
	expect_none("X-Bloatmeter-Congestion-Control: cubic\r\n");
	expect_none("Bloatmeter-Congestion-Control: abcdefghijklmnop\r\n"); /* 16: too long */
	expect_none("Bloatmeter-Congestion-Control: CUBIC\r\n");
	expect_none("Bloatmeter-Congestion-Control: cu bic\r\n");
	expect_none("Bloatmeter-Congestion-Control: cubic\x1b[2J\r\n");
	expect_none("Bloatmeter-Congestion-Control: ../../x\r\n");
	expect_none("HTTP/1.1 200 OK\r\n");
	/* The length bounds the read: a name cut by len is what len says. */
	assert_int_equal(httphdr_cc("Bloatmeter-Congestion-Control: cubicXYZ", 36, out,
				    sizeof(out)), 1);
	assert_string_equal(out, "cubic");
	assert_int_equal(httphdr_cc("Bloatmeter-Congestion-Control: cubic", 29, out, sizeof(out)),
			 0);
	assert_int_equal(httphdr_cc("Bloatmeter-Congestion-Control: cubic", 36, out, 8), 0);
	assert_int_equal(httphdr_cc(NULL, 0, out, sizeof(out)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepts),
		cmocka_unit_test(test_refuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_util: the user-input parsers (rates, numbers), time formatting and random bytes. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/util.h"

static void assert_rate(const char *s, uint64_t want)
{
	uint64_t bps = 0;

	if (util_parse_rate(s, &bps) != 0)
		fail_msg("util_parse_rate(\"%s\") rejected, want %llu", s, (unsigned long long)want);
	if (bps != want)
		fail_msg("util_parse_rate(\"%s\") = %llu, want %llu", s, (unsigned long long)bps,
			 (unsigned long long)want);
}

static void assert_rate_rejected(const char *s)
{
	uint64_t bps = 4242;

	if (util_parse_rate(s, &bps) == 0)
		fail_msg("util_parse_rate(\"%s\") accepted as %llu", s, (unsigned long long)bps);
	assert_int_equal(bps, 4242); /* no side effect */
}

static void test_parse_rate(void **state)
{
	assert_rate("20mbit", 20000000ULL);
	assert_rate("1.5gbit", 1500000000ULL);
	assert_rate("800kbit", 800000ULL);
	assert_rate("20M", 20000000ULL);
	assert_rate("20m", 20000000ULL);
	assert_rate("20Mbit", 20000000ULL);
	assert_rate("100", 100ULL);
	assert_rate("100bit", 100ULL);
	assert_rate("2k", 2000ULL);
	assert_rate("1g", 1000000000ULL);
	assert_rate("0.5kbit", 500ULL);
	assert_rate("1", 1ULL);
	assert_rate("1000gbit", 1000000000000ULL); /* the upper bound itself */
	assert_rate("1e12", 1000000000000ULL);
}

static void test_parse_rate_rejects(void **state)
{
	assert_rate_rejected("");
	assert_rate_rejected("abc");
	assert_rate_rejected("mbit");
	assert_rate_rejected("-5mbit");
	assert_rate_rejected("0");
	assert_rate_rejected("0mbit");
	assert_rate_rejected("0.5");       /* below 1 bit/s */
	assert_rate_rejected("20xbit");
	assert_rate_rejected("20 mbit");
	assert_rate_rejected("20mbitx");
	assert_rate_rejected("20mbit ");
	assert_rate_rejected("1e13");      /* above 1e12 */
	assert_rate_rejected("1001gbit");
	assert_rate_rejected("1e400");
	assert_rate_rejected("inf");
	assert_rate_rejected("nan");
	assert_rate_rejected("nanmbit");
}

static void test_parse_long(void **state)
{
	long v = 0;

	assert_int_equal(util_parse_long("42", 0, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(util_parse_long("0", 0, 100, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(util_parse_long("100", 0, 100, &v), 0);
	assert_int_equal(v, 100);
	assert_int_equal(util_parse_long("-7", -10, 10, &v), 0);
	assert_int_equal(v, -7);
	assert_int_equal(util_parse_long("9223372036854775807", 0, LONG_MAX, &v), 0);
	assert_true(v == LONG_MAX);

	v = 55;
	assert_int_equal(util_parse_long("101", 0, 100, &v), -1);
	assert_int_equal(util_parse_long("-1", 0, 100, &v), -1);
	assert_int_equal(util_parse_long("", 0, 100, &v), -1);
	assert_int_equal(util_parse_long("12x", 0, 100, &v), -1);
	assert_int_equal(util_parse_long("12 ", 0, 100, &v), -1);
	assert_int_equal(util_parse_long("1.5", 0, 100, &v), -1);
	assert_int_equal(util_parse_long("x", 0, 100, &v), -1);
	assert_int_equal(util_parse_long("99999999999999999999", 0, LONG_MAX, &v), -1);
	assert_int_equal(util_parse_long("-99999999999999999999", LONG_MIN, 0, &v), -1);
	assert_int_equal(util_parse_long(NULL, 0, 100, &v), -1);
	assert_int_equal(v, 55);
}

static void test_parse_double(void **state)
{
	double v = 0;

	assert_int_equal(util_parse_double("1.5", 0, 10, &v), 0);
	assert_float_equal(v, 1.5, 1e-12);
	assert_int_equal(util_parse_double("1e3", 0, 1e4, &v), 0);
	assert_float_equal(v, 1000.0, 1e-12);
	assert_int_equal(util_parse_double("0", 0, 10, &v), 0);
	assert_float_equal(v, 0.0, 1e-12);
	assert_int_equal(util_parse_double("10", 0, 10, &v), 0);
	assert_float_equal(v, 10.0, 1e-12);
	assert_int_equal(util_parse_double("-2.25", -5, 5, &v), 0);
	assert_float_equal(v, -2.25, 1e-12);

	v = 3;
	assert_int_equal(util_parse_double("10.001", 0, 10, &v), -1);
	assert_int_equal(util_parse_double("-0.1", 0, 10, &v), -1);
	assert_int_equal(util_parse_double("", 0, 10, &v), -1);
	assert_int_equal(util_parse_double("1.5s", 0, 10, &v), -1);
	assert_int_equal(util_parse_double("1.5 ", 0, 10, &v), -1);
	assert_int_equal(util_parse_double("abc", 0, 10, &v), -1);
	assert_int_equal(util_parse_double("nan", -1e300, 1e300, &v), -1);
	assert_int_equal(util_parse_double("inf", -1e300, 1e300, &v), -1);
	assert_int_equal(util_parse_double("1e400", -1e300, 1e300, &v), -1);
	assert_int_equal(util_parse_double(NULL, 0, 10, &v), -1);
	assert_float_equal(v, 3.0, 1e-12);
}

static void test_iso8601(void **state)
{
	char buf[64];

	util_iso8601(0, buf, sizeof(buf));
	assert_string_equal(buf, "1970-01-01T00:00:00.000Z");
	/* 1700000000 s is 2023-11-14 22:13:20 UTC */
	util_iso8601(1700000000123456789LL, buf, sizeof(buf));
	assert_string_equal(buf, "2023-11-14T22:13:20.123Z");
	util_iso8601(951782400999000000LL, buf, sizeof(buf)); /* leap day 2000 */
	assert_string_equal(buf, "2000-02-29T00:00:00.999Z");
}

static void test_random(void **state)
{
	uint8_t a[32], b[32], zero[32];

	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	memset(zero, 0, sizeof(zero));
	assert_int_equal(util_random(a, sizeof(a)), 0);
	assert_int_equal(util_random(b, sizeof(b)), 0);
	/* 2^-256 chance of a false failure */
	assert_memory_not_equal(a, b, sizeof(a));
	assert_memory_not_equal(a, zero, sizeof(a));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_rate),
		cmocka_unit_test(test_parse_rate_rejects),
		cmocka_unit_test(test_parse_long),
		cmocka_unit_test(test_parse_double),
		cmocka_unit_test(test_iso8601),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

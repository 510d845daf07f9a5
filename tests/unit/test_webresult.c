/* test_webresult: the validator of browser results (server/webresult.c) — the contract's
 * shape accepted, anything else refused — and the per-client and global rate bounds. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <cmocka.h>

#include "server/webresult.h"

static int check(const char *json, struct webresult *r)
{
	const char *why;

	return webresult_parse(json, strlen(json), r, &why);
}

static void test_valid(void **state)
{
	struct webresult r;

	assert_int_equal(check("{\"version\":1,\"grade\":\"A+\",\"idle_ms\":12.5,"
			       "\"down\":{\"mbps\":95.5,\"loaded_ms\":20,\"increase_ms\":7.5},"
			       "\"up\":{\"mbps\":null,\"loaded_ms\":null,\"increase_ms\":null},"
			       "\"engine\":\"@cloudflare/speedtest 1.14.1\"}", &r), 0);
	assert_true(r.sum.valid);
	assert_string_equal(r.sum.grade, "A+");
	assert_true(r.sum.idle_ms == 12.5);
	assert_true(r.sum.throughput_bps[0] == 95.5e6);
	assert_true(r.sum.increase_ms[0] == 7.5);
	assert_true(isnan(r.sum.increase_ms[1]));
	assert_true(isnan(r.sum.throughput_bps[1]));
	assert_string_equal(r.engine, "@cloudflare/speedtest 1.14.1");
}

static void test_invalid(void **state)
{
	static const char *const bad[] = {
		"",
		"[]",
		"{\"version\":2,\"grade\":\"A\"}",
		"{\"grade\":\"A\"}",
		"{\"version\":1,\"grade\":\"E\"}",
		"{\"version\":1,\"grade\":\"A\",\"idle_ms\":-1}",
		"{\"version\":1,\"grade\":\"A\",\"idle_ms\":\"5\"}",
		"{\"version\":1,\"grade\":\"A\",\"idle_ms\":1e400}",
		"{\"version\":1,\"grade\":\"A\",\"extra\":1}",
		"{\"version\":1,\"grade\":\"A\",\"down\":{\"mbps\":1,\"rtt\":2}}",
		"{\"version\":1,\"grade\":\"A\",\"down\":[1]}",
		"{\"version\":1,\"grade\":\"A\",\"engine\":\"x\\u0001\"}",
		/* One literal split over two lines (parenthesised: clang warns otherwise). */
		("{\"version\":1,\"grade\":\"A\",\"engine\":"
		 "\"12345678901234567890123456789012345678901234567890123456789012345\"}"),
		"{\"version\":1,\"grade\":\"A\"} {}",
		"{\"version\":1,\"grade\":\"A\",\"down\":{\"mbps\":{\"a\":{\"b\":{\"c\":1}}}}}",
	};
	struct webresult r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (check(bad[i], &r) == 0)
			fail_msg("accepted %s", bad[i]);
}

static void test_rate(void **state)
{
	struct webresult_limiter *l = test_malloc(sizeof(*l));
	struct sockaddr_in a = { .sin_family = AF_INET }, b = a;
	int64_t t = 1000000000;
	int ok = 0;

	inet_pton(AF_INET, "192.0.2.1", &a.sin_addr);
	inet_pton(AF_INET, "198.51.100.1", &b.sin_addr);
	webresult_limiter_init(l, t);
	for (int i = 0; i < 20; i++)
		ok += webresult_limiter_take(l, (struct sockaddr *)&a, t);
	assert_int_equal(ok, WEBRESULT_PER_CLIENT_PER_MIN);
	/* Another client is not held back by the first. */
	assert_int_equal(webresult_limiter_take(l, (struct sockaddr *)&b, t), 1);
	/* A minute later the first may post again. */
	assert_int_equal(webresult_limiter_take(l, (struct sockaddr *)&a, t + 60000000000LL), 1);
	/* The global bound holds against many addresses at once. */
	ok = 0;
	for (int i = 0; i < 1000; i++) {
		struct sockaddr_in c = { .sin_family = AF_INET };

		c.sin_addr.s_addr = htonl(0x0a000000u + ((uint32_t)i << 8));
		ok += webresult_limiter_take(l, (struct sockaddr *)&c, t + 60000000000LL);
	}
	assert_true(ok <= WEBRESULT_ALL_PER_MIN);
	test_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_rate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

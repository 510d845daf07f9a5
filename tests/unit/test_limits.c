/* test_limits: the daemon's limits as pure functions — the token bucket with a fake clock,
 * rate values, pacing shares, the busy estimate, sysfs counters and the egress meter — and the
 * probe rate of the session table driven through the reflector with fake receive times. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/clock.h"
#include "common/wire.h"
#include "server/ctx.h"
#include "server/limits.h"
#include "server/reflector.h"
#include "server/session.h"

#define MS NS_PER_MS

static void test_bucket_burst_then_rate(void **state)
{
	struct limits_bucket b;
	int64_t t = 5 * NS_PER_SEC;
	int n = 0;

	limits_bucket_init(&b, 100, 25, t);
	while (limits_bucket_take(&b, t, 1))
		n++;
	assert_int_equal(n, 25); /* the burst, all at once */
	assert_false(limits_bucket_take(&b, t + 9 * MS, 1));
	assert_true(limits_bucket_take(&b, t + 10 * MS, 1)); /* 100/s: one per 10 ms */
	assert_false(limits_bucket_take(&b, t + 19 * MS, 1));
	/* A long pause refills at most the burst. */
	n = 0;
	t += 10 * NS_PER_SEC;
	while (limits_bucket_take(&b, t, 1))
		n++;
	assert_int_equal(n, 25);
	/* Over one second of steady offers at 1000/s, about rate + burst pass. */
	n = 0;
	limits_bucket_init(&b, 100, 25, 0);
	for (int i = 0; i < 1000; i++)
		n += limits_bucket_take(&b, (int64_t)i * MS, 1);
	assert_in_range(n, 123, 126);
}

static void test_bucket_clock_back_and_unlimited(void **state)
{
	struct limits_bucket b;

	limits_bucket_init(&b, 10, 2, 1000 * MS);
	assert_true(limits_bucket_take(&b, 1000 * MS, 2));
	/* A clock that steps back neither refills nor breaks the bucket. */
	assert_false(limits_bucket_take(&b, 500 * MS, 1));
	assert_false(limits_bucket_take(&b, 1050 * MS, 1));
	assert_true(limits_bucket_take(&b, 1100 * MS, 1));
	/* rate 0: unlimited. */
	limits_bucket_init(&b, 0, 0, 0);
	for (int i = 0; i < 10000; i++)
		assert_true(limits_bucket_take(&b, 0, 1e6));
	assert_true(limits_bucket_avail(&b, 0) > 1e15);
}

static void test_bucket_charge_debt_and_set(void **state)
{
	struct limits_bucket b;

	/* Bytes: 1000 B/s, burst 500. A read of 800 leaves a debt of 300: 0.8 s until 500. */
	limits_bucket_init(&b, 1000, 500, 0);
	limits_bucket_charge(&b, 0, 800);
	assert_true(limits_bucket_avail(&b, 0) < 0);
	assert_true(limits_bucket_avail(&b, 299 * MS) < 0);
	assert_true(limits_bucket_avail(&b, 301 * MS) > 0);
	assert_true(limits_bucket_avail(&b, 800 * MS) >= 499.9);
	assert_true(limits_bucket_avail(&b, 5 * NS_PER_SEC) <= 500);
	/* A reload lowering the burst clamps the tokens. */
	limits_bucket_set(&b, 1000, 100);
	assert_true(limits_bucket_avail(&b, 5 * NS_PER_SEC) <= 100);
	assert_int_equal((int)limits_probe_burst(2000), 500);
	assert_int_equal((int)limits_probe_burst(12), 10);
}

static void test_parse_rate(void **state)
{
	uint64_t v = 1;

	assert_int_equal(limits_parse_rate("0", &v), 0);
	assert_true(v == 0);
	assert_int_equal(limits_parse_rate("20M", &v), 0);
	assert_true(v == 20000000);
	assert_int_equal(limits_parse_rate("20mbit", &v), 0);
	assert_true(v == 20000000);
	assert_int_equal(limits_parse_rate("1.5G", &v), 0);
	assert_true(v == 1500000000);
	assert_int_equal(limits_parse_rate("800k", &v), 0);
	assert_true(v == 800000);
	assert_int_equal(limits_parse_rate("1000", &v), 0);
	assert_true(v == 1000);
	assert_int_equal(limits_parse_rate("", &v), -1);
	assert_int_equal(limits_parse_rate("-5M", &v), -1);
	assert_int_equal(limits_parse_rate("20 X", &v), -1);
	assert_int_equal(limits_parse_rate("2000G", &v), -1);
	assert_int_equal(limits_parse_rate("0M", &v), -1);
}

static void test_format_rate(void **state)
{
	char buf[32];

	limits_format_rate(0, buf, sizeof(buf));
	assert_string_equal(buf, "none");
	limits_format_rate(20000000, buf, sizeof(buf));
	assert_string_equal(buf, "20 Mbit/s");
	limits_format_rate(2500000000ULL, buf, sizeof(buf));
	assert_string_equal(buf, "2.5 Gbit/s");
	limits_format_rate(800000, buf, sizeof(buf));
	assert_string_equal(buf, "800 kbit/s");
}

static void test_pacing_share(void **state)
{
	int fd;

	assert_true(sock_pacing_share(0, 4) == 0);
	assert_true(sock_pacing_share(20000000, 0) == 0);
	assert_true(sock_pacing_share(20000000, 1) == 2500000);
	assert_true(sock_pacing_share(20000000, 4) == 625000);
	assert_true(sock_pacing_share(7, 4) == 1); /* never 0, which would lift the cap */
	/* The kernel takes the value (and the lifted cap) on a TCP socket. */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(sock_set_pacing(fd, 2500000), 0);
	assert_int_equal(sock_set_pacing(fd, 0), 0);
	assert_int_equal(sock_set_pacing(fd, 1ULL << 40), 0);
	close(fd);
}

static void test_retry_after(void **state)
{
	int64_t now = 100 * NS_PER_SEC;

	assert_int_equal(limits_retry_after_s(0, now, 1, 300), 1); /* nothing known */
	assert_int_equal(limits_retry_after_s(now + 42 * NS_PER_SEC, now, 1, 300), 42);
	assert_int_equal(limits_retry_after_s(now + 41 * NS_PER_SEC + 1, now, 1, 300), 42);
	assert_int_equal(limits_retry_after_s(now - NS_PER_SEC, now, 1, 300), 1); /* overdue */
	assert_int_equal(limits_retry_after_s(now + 1000 * NS_PER_SEC, now, 1, 300), 300);
	assert_int_equal(limits_retry_after_s(now + 2 * NS_PER_SEC, now, 5, 30), 5);
	assert_int_equal(limits_retry_after_s(now + 99 * NS_PER_SEC, now, 5, 30), 30);
	assert_int_equal(limits_retry_after_s(0, now, 5, 30), 5);
}

static void test_ifname(void **state)
{
	assert_true(limits_ifname_ok("eth0"));
	assert_true(limits_ifname_ok("lo"));
	assert_true(limits_ifname_ok("enp0s31f6"));
	assert_true(limits_ifname_ok("abcdefghijklmno")); /* 15 */
	assert_false(limits_ifname_ok("abcdefghijklmnop"));
	assert_false(limits_ifname_ok(""));
	assert_false(limits_ifname_ok("."));
	assert_false(limits_ifname_ok(".."));
	assert_false(limits_ifname_ok("../etc"));
	assert_false(limits_ifname_ok("eth 0"));
	assert_false(limits_ifname_ok("eth0:1"));
	assert_false(limits_ifname_ok("eth\n"));
}

static void test_parse_counter(void **state)
{
	uint64_t v = 0;

	assert_int_equal(limits_parse_counter("12345\n", 6, &v), 0);
	assert_true(v == 12345);
	assert_int_equal(limits_parse_counter("0", 1, &v), 0);
	assert_true(v == 0);
	assert_int_equal(limits_parse_counter("18446744073709551615\n", 21, &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(limits_parse_counter("18446744073709551616\n", 21, &v), -1);
	assert_int_equal(limits_parse_counter("", 0, &v), -1);
	assert_int_equal(limits_parse_counter("\n", 1, &v), -1);
	assert_int_equal(limits_parse_counter("12a\n", 4, &v), -1);
	assert_int_equal(limits_parse_counter("12\n\n", 4, &v), -1);
	assert_int_equal(limits_parse_counter("-1\n", 3, &v), -1);
	/* Only len bytes count: "123" of "1234". */
	assert_int_equal(limits_parse_counter("1234", 3, &v), 0);
	assert_true(v == 123);
	assert_int_equal(limits_parse_counter("1111111111111111111111111", 25, &v), -1);
}

static void test_meter(void **state)
{
	struct limits_meter m;

	memset(&m, 0, sizeof(m));
	limits_meter_update(&m, 1000, NS_PER_SEC);
	assert_true(m.bps == 0); /* one reading: no rate yet */
	limits_meter_update(&m, 1000 + 2500000, 2 * NS_PER_SEC);
	assert_true(m.bps > 19999999 && m.bps < 20000001); /* 2.5 MB in 1 s = 20 Mbit/s */
	limits_meter_update(&m, 1000 + 2500000 + 1250000, 2500 * MS);
	assert_true(m.bps > 19999999 && m.bps < 20000001);
	/* The counter went back (interface re-created): start over, no bogus rate. */
	limits_meter_update(&m, 10, 3 * NS_PER_SEC);
	assert_true(m.bps == 0);
	limits_meter_update(&m, 10 + 125, 4 * NS_PER_SEC);
	assert_true(m.bps > 999 && m.bps < 1001);
	/* No time passed: no rate. */
	limits_meter_update(&m, 1000000, 4 * NS_PER_SEC);
	assert_true(m.bps == 0);
}

/* The reflector path with a fake clock: receive times are the bucket's time. */
struct table_fixture {
	struct session_table table;
	struct server_counters counters;
	struct sockaddr_storage client;
};

static const uint8_t tok[WIRE_TOKEN_LEN] = { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6 };
static const uint8_t tok2[WIRE_TOKEN_LEN] = { 0x42 };

static size_t probe_at(struct table_fixture *f, const uint8_t *token, int64_t rx_ns)
{
	uint8_t req[WIRE_PROBE_MIN], reply[WIRE_PROBE_MIN];
	struct wire_probe p = { .kind = WIRE_PROBE_REQ, .seq = 1, .client_send_ns = 1 };

	memcpy(p.token, token, WIRE_TOKEN_LEN);
	wire_probe_encode(&p, req, sizeof(req));
	return reflector_answer(&f->table, &f->counters, req, sizeof(req),
				(const struct sockaddr *)&f->client, rx_ns, reply);
}

static void test_table_probe_rate(void **state)
{
	static struct table_fixture f;
	struct sockaddr_in *sin = (struct sockaddr_in *)&f.client;
	int64_t t = 7 * NS_PER_SEC;
	int answered = 0;

	memset(&f, 0, sizeof(f));
	assert_int_equal(session_table_init(&f.table, 4), 0);
	sin->sin_family = AF_INET;
	sin->sin_port = htons(40000);
	assert_int_equal(inet_pton(AF_INET, "192.0.2.7", &sin->sin_addr), 1);
	/* Unlimited until a rate is set: the table's initial state. */
	assert_int_equal(session_table_add(&f.table, tok, (struct sockaddr *)&f.client), 0);
	for (int i = 0; i < 5000; i++)
		assert_true(probe_at(&f, tok, t) > 0);
	assert_true(atomic_load(&f.counters.udp_ratelimited) == 0);

	/* 100/s (burst 25) for live and new sessions alike. */
	session_table_set_probe_rate(&f.table, 100);
	assert_int_equal(session_table_add(&f.table, tok2, (struct sockaddr *)&f.client), 0);
	for (int i = 0; i < 40; i++)
		answered += probe_at(&f, tok2, t) > 0;
	assert_int_equal(answered, 25);
	assert_true(atomic_load(&f.counters.udp_ratelimited) == 15);
	/* Dropped probes are not counted: the server's count is what it answered. */
	assert_true(session_table_probe_count(&f.table, tok2) == 25);
	/* 10 ms later one more is allowed. */
	assert_true(probe_at(&f, tok2, t + 10 * MS) > 0);
	assert_true(probe_at(&f, tok2, t + 10 * MS) == 0);
	/* One second of a flood at 10 000/s: about the rate gets through, per session. */
	answered = 0;
	for (int i = 1; i <= 10000; i++)
		answered += probe_at(&f, tok2, t + 10 * MS + (int64_t)i * 100 * 1000) > 0;
	assert_in_range(answered, 99, 101);
	/* The live session tok (added before the rate) got the rate too: its bucket is full. */
	answered = 0;
	for (int i = 0; i < 40; i++)
		answered += probe_at(&f, tok, t + 2 * NS_PER_SEC) > 0;
	assert_int_equal(answered, 25);
	/* A removed session's probes are unknown, not rate-limited. */
	session_table_remove(&f.table, tok2);
	assert_true(probe_at(&f, tok2, t + 3 * NS_PER_SEC) == 0);
	assert_true(atomic_load(&f.counters.udp_unknown) == 1);
	session_table_free(&f.table);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bucket_burst_then_rate),
		cmocka_unit_test(test_bucket_clock_back_and_unlimited),
		cmocka_unit_test(test_bucket_charge_debt_and_set),
		cmocka_unit_test(test_parse_rate),
		cmocka_unit_test(test_format_rate),
		cmocka_unit_test(test_pacing_share),
		cmocka_unit_test(test_retry_after),
		cmocka_unit_test(test_ifname),
		cmocka_unit_test(test_parse_counter),
		cmocka_unit_test(test_meter),
		cmocka_unit_test(test_table_probe_rate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

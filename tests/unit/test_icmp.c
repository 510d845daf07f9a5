/* test_icmp: the ICMP reply parser on crafted packets (raw IPv4 with options, ping-socket
 * form, IPv6, errors quoting our echo, truncation, wrong types, garbage), the checksum, and one
 * live echo series over loopback when this process may open an ICMP socket. */
#include <arpa/inet.h>
#include <event2/thread.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "common/bytes.h"
#include "common/clock.h"
#include "probes/icmp.h"
#include "probes/runner.h"
#include "probes/series.h"

#define COOKIE 0x0123456789abcdefULL
#define ID 0x4242
#define PAYLOAD 56

/* An IPv4 header of ihl 32-bit words (options are NOPs) in front of plen bytes. */
static size_t ipv4_header(uint8_t *b, int ihl, uint8_t proto, size_t plen)
{
	size_t hl = (size_t)ihl * 4;

	memset(b, 0, hl);
	b[0] = (uint8_t)(0x40 | ihl);
	bytes_put_be16(b + 2, (uint16_t)(hl + plen));
	b[8] = 64;
	b[9] = proto;
	b[12] = 198; b[13] = 18; b[14] = 1; b[15] = 1;
	b[16] = 198; b[17] = 18; b[18] = 1; b[19] = 2;
	memset(b + 20, 1, hl - 20); /* NOP options */
	bytes_put_be16(b + 10, icmp_checksum(b, hl));
	return hl;
}

/* An IPv6 header (40 bytes) with next header nh. */
static size_t ipv6_header(uint8_t *b, uint8_t nh, size_t plen)
{
	memset(b, 0, 40);
	b[0] = 0x60;
	bytes_put_be16(b + 4, (uint16_t)plen);
	b[6] = nh;
	b[7] = 64;
	b[8] = 0x20; b[9] = 0x01; b[11] = 0x02; b[23] = 1;
	b[24] = 0x20; b[25] = 0x01; b[27] = 0x02; b[39] = 2;
	return 40;
}

/* Our echo turned into a reply (type changed, IPv4 checksum redone). */
static size_t echo_reply(int family, uint8_t *b, uint32_t seq32, size_t payload)
{
	size_t len = icmp_build_echo(family, ID, seq32, COOKIE, b, payload);

	b[0] = family == AF_INET6 ? 129 : 0;
	b[2] = b[3] = 0;
	if (family == AF_INET)
		bytes_put_be16(b + 2, icmp_checksum(b, len));
	return len;
}

/* An ICMP error of type/code quoting an IPv4 packet carrying our echo, cut to quote bytes of
 * the echo. */
static size_t error_v4(uint8_t *b, uint8_t type, uint8_t code, uint8_t proto, size_t quote)
{
	uint8_t echo[ICMP_HDR_LEN + PAYLOAD];
	size_t hl;

	icmp_build_echo(AF_INET, ID, 70000, COOKIE, echo, PAYLOAD);
	memset(b, 0, ICMP_HDR_LEN);
	b[0] = type;
	b[1] = code;
	hl = ipv4_header(b + ICMP_HDR_LEN, 5, proto, sizeof(echo));
	memcpy(b + ICMP_HDR_LEN + hl, echo, quote);
	bytes_put_be16(b + 2, icmp_checksum(b, ICMP_HDR_LEN + hl + quote));
	return ICMP_HDR_LEN + hl + quote;
}

static void assert_echo_fields(const struct icmp_parsed *m, uint16_t seq, uint32_t seq32)
{
	assert_int_equal(m->id, ID);
	assert_int_equal(m->seq, seq);
	assert_true(m->has_cookie);
	assert_true(m->cookie == COOKIE);
	assert_int_equal(m->seq32, seq32);
}

static void test_checksum(void **state)
{
	/* RFC 1071 section 3 example: the sum is 0xddf2, the checksum its complement. */
	static const uint8_t rfc[] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };
	static const uint8_t odd[] = { 0x01, 0x02, 0x03 }; /* 0x0102 + 0x0300 */
	uint8_t b[ICMP_HDR_LEN + 101];
	size_t len;

	assert_int_equal(icmp_checksum(rfc, sizeof(rfc)), 0x220d);
	assert_int_equal(icmp_checksum(odd, sizeof(odd)), (uint16_t)~0x0402);
	assert_int_equal(icmp_checksum(b, 0), 0xffff);
	/* A built IPv4 echo verifies to zero, at odd lengths too. */
	len = icmp_build_echo(AF_INET, ID, 7, COOKIE, b, 101);
	assert_int_equal(len, ICMP_HDR_LEN + 101);
	assert_int_equal(icmp_checksum(b, len), 0);
	assert_int_equal(b[0], 8);
	/* ICMPv6: the kernel fills the checksum. */
	icmp_build_echo(AF_INET6, ID, 7, COOKIE, b, 12);
	assert_int_equal(b[0], 128);
	assert_int_equal(b[2] | b[3], 0);
}

static void test_reply_v4_raw_options(void **state)
{
	uint8_t b[60 + ICMP_HDR_LEN + PAYLOAD];
	struct icmp_parsed m;

	for (int ihl = 5; ihl <= 15; ihl++) {
		size_t hl = ipv4_header(b, ihl, IPPROTO_ICMP, ICMP_HDR_LEN + PAYLOAD);
		size_t len = hl + echo_reply(AF_INET, b + hl, 0x12345, PAYLOAD);

		assert_int_equal(icmp_parse(AF_INET, 1, b, len, &m), ICMP_PARSE_REPLY);
		assert_echo_fields(&m, 0x2345, 0x12345);
		assert_int_equal(m.type, 0);
		assert_int_equal(m.payload_len, PAYLOAD);
	}
}

static void test_reply_v4_raw_rejects(void **state)
{
	uint8_t b[24 + ICMP_HDR_LEN + PAYLOAD + 4];
	struct icmp_parsed m;
	size_t hl = ipv4_header(b, 6, IPPROTO_ICMP, ICMP_HDR_LEN + PAYLOAD);
	size_t len = hl + echo_reply(AF_INET, b + hl, 3, PAYLOAD);

	/* Bytes after the IPv4 total length are not part of the echo... */
	memset(b + len, 0xee, 4);
	assert_int_equal(icmp_parse(AF_INET, 1, b, len + 4, &m), ICMP_PARSE_REPLY);
	assert_int_equal(m.payload_len, PAYLOAD);
	/* ...and a total length beyond what arrived means the packet was cut. */
	bytes_put_be16(b + 2, (uint16_t)(len + 1));
	assert_int_equal(icmp_parse(AF_INET, 1, b, len, &m), ICMP_PARSE_BAD);
	bytes_put_be16(b + 2, (uint16_t)(hl + 7)); /* not even an ICMP header */
	assert_int_equal(icmp_parse(AF_INET, 1, b, len, &m), ICMP_PARSE_BAD);
	bytes_put_be16(b + 2, (uint16_t)len);

	b[hl + 20] ^= 0x40; /* one payload bit: the checksum no longer holds */
	assert_int_equal(icmp_parse(AF_INET, 1, b, len, &m), ICMP_PARSE_BAD);
	b[hl + 20] ^= 0x40;
	assert_int_equal(icmp_parse(AF_INET, 1, b, len, &m), ICMP_PARSE_REPLY);
	b[9] = IPPROTO_UDP;
	assert_int_equal(icmp_parse(AF_INET, 1, b, len, &m), ICMP_PARSE_BAD);
	b[9] = IPPROTO_ICMP;
	b[0] = 0x46 | 0x10; /* version 5 */
	assert_int_equal(icmp_parse(AF_INET, 1, b, len, &m), ICMP_PARSE_BAD);
	b[0] = 0x44; /* ihl 4: shorter than the fixed header */
	assert_int_equal(icmp_parse(AF_INET, 1, b, len, &m), ICMP_PARSE_BAD);
	b[0] = 0x4f; /* ihl 15 = 60 bytes: more than this packet before the ICMP header */
	assert_int_equal(icmp_parse(AF_INET, 1, b, 40, &m), ICMP_PARSE_BAD);
	/* The ping-socket form handed to the raw parser is not an IPv4 header. */
	assert_int_equal(icmp_parse(AF_INET, 1, b + hl, len - hl, &m), ICMP_PARSE_BAD);
}

static void test_reply_ping_socket(void **state)
{
	uint8_t b[ICMP_HDR_LEN + PAYLOAD];
	struct icmp_parsed m;
	size_t len = echo_reply(AF_INET, b, 65536 + 9, PAYLOAD);

	b[2] = b[3] = 0; /* the kernel checked it; the parser does not look */
	assert_int_equal(icmp_parse(AF_INET, 0, b, len, &m), ICMP_PARSE_REPLY);
	assert_echo_fields(&m, 9, 65536 + 9);
	/* A minimal payload still carries cookie and sequence; one byte less does not. */
	len = echo_reply(AF_INET, b, 5, ICMP_PAYLOAD_MIN);
	assert_int_equal(icmp_parse(AF_INET, 0, b, len, &m), ICMP_PARSE_REPLY);
	assert_true(m.has_cookie);
	assert_int_equal(icmp_parse(AF_INET, 0, b, len - 1, &m), ICMP_PARSE_REPLY);
	assert_false(m.has_cookie);
	/* A reply with a non-zero code is not an echo reply. */
	b[1] = 1;
	assert_int_equal(icmp_parse(AF_INET, 0, b, len, &m), ICMP_PARSE_BAD);
}

static void test_reply_v6(void **state)
{
	uint8_t b[ICMP_HDR_LEN + PAYLOAD];
	struct icmp_parsed m;
	size_t len = echo_reply(AF_INET6, b, 77, PAYLOAD);

	for (int raw = 0; raw <= 1; raw++) { /* raw IPv6 sockets start at the ICMPv6 header too */
		assert_int_equal(icmp_parse(AF_INET6, raw, b, len, &m), ICMP_PARSE_REPLY);
		assert_echo_fields(&m, 77, 77);
		assert_int_equal(m.type, 129);
	}
	/* An IPv4 echo reply type means nothing in ICMPv6. */
	b[0] = 0;
	assert_int_equal(icmp_parse(AF_INET6, 0, b, len, &m), ICMP_PARSE_OTHER);
}

static void test_unreach_v4(void **state)
{
	uint8_t b[20 + ICMP_HDR_LEN + 20 + ICMP_HDR_LEN + PAYLOAD];
	uint8_t *icmp = b + 20;
	struct icmp_parsed m;
	size_t n, hl;

	/* Linux routers quote the whole echo: cookie and 32-bit sequence included. */
	n = error_v4(icmp, 3, 1, IPPROTO_ICMP, ICMP_HDR_LEN + PAYLOAD);
	hl = ipv4_header(b, 5, IPPROTO_ICMP, n);
	assert_int_equal(icmp_parse(AF_INET, 1, b, hl + n, &m), ICMP_PARSE_ERROR);
	assert_int_equal(m.type, 3);
	assert_int_equal(m.code, 1);
	assert_echo_fields(&m, (uint16_t)70000, 70000);
	assert_int_equal(icmp_parse(AF_INET, 0, icmp, n, &m), ICMP_PARSE_ERROR);
	assert_echo_fields(&m, (uint16_t)70000, 70000);

	/* RFC 792 minimum: only the 8-byte header, so no cookie. */
	n = error_v4(icmp, 11, 0, IPPROTO_ICMP, ICMP_HDR_LEN);
	assert_int_equal(icmp_parse(AF_INET, 0, icmp, n, &m), ICMP_PARSE_ERROR);
	assert_int_equal(m.type, 11);
	assert_int_equal(m.id, ID);
	assert_int_equal(m.seq, (uint16_t)70000);
	assert_false(m.has_cookie);

	/* Less than the echo header quoted: malformed. */
	n = error_v4(icmp, 3, 0, IPPROTO_ICMP, ICMP_HDR_LEN - 1);
	assert_int_equal(icmp_parse(AF_INET, 0, icmp, n, &m), ICMP_PARSE_BAD);

	/* An error about a UDP datagram, or a later fragment, is not about an echo. */
	n = error_v4(icmp, 3, 3, IPPROTO_UDP, ICMP_HDR_LEN);
	assert_int_equal(icmp_parse(AF_INET, 0, icmp, n, &m), ICMP_PARSE_OTHER);
	n = error_v4(icmp, 3, 3, IPPROTO_ICMP, ICMP_HDR_LEN);
	bytes_put_be16(icmp + ICMP_HDR_LEN + 6, 0x0010); /* fragment offset 16 */
	assert_int_equal(icmp_parse(AF_INET, 0, icmp, n, &m), ICMP_PARSE_OTHER);

	/* An error quoting an echo reply (not a request) is not about our echo. */
	n = error_v4(icmp, 3, 1, IPPROTO_ICMP, ICMP_HDR_LEN + PAYLOAD);
	icmp[ICMP_HDR_LEN + 20] = 0;
	assert_int_equal(icmp_parse(AF_INET, 0, icmp, n, &m), ICMP_PARSE_OTHER);
}

static void test_unreach_v6(void **state)
{
	uint8_t b[ICMP_HDR_LEN + 40 + ICMP_HDR_LEN + PAYLOAD];
	size_t n = ICMP_HDR_LEN;
	struct icmp_parsed m;

	memset(b, 0, ICMP_HDR_LEN);
	b[0] = 1; /* destination unreachable */
	b[1] = 0; /* no route */
	n += ipv6_header(b + n, IPPROTO_ICMPV6, ICMP_HDR_LEN + PAYLOAD);
	n += icmp_build_echo(AF_INET6, ID, 5, COOKIE, b + n, PAYLOAD);
	assert_int_equal(icmp_parse(AF_INET6, 0, b, n, &m), ICMP_PARSE_ERROR);
	assert_int_equal(m.type, 1);
	assert_echo_fields(&m, 5, 5);
	/* Time exceeded and packet too big are errors about the echo as well. */
	b[0] = 3;
	assert_int_equal(icmp_parse(AF_INET6, 1, b, n, &m), ICMP_PARSE_ERROR);
	b[0] = 2;
	assert_int_equal(icmp_parse(AF_INET6, 1, b, n, &m), ICMP_PARSE_ERROR);
	/* The quoted IPv6 header cut short. */
	assert_int_equal(icmp_parse(AF_INET6, 0, b, ICMP_HDR_LEN + 39, &m), ICMP_PARSE_BAD);
	/* A quoted packet with an extension header (never ours). */
	b[ICMP_HDR_LEN + 6] = 0; /* hop-by-hop */
	assert_int_equal(icmp_parse(AF_INET6, 0, b, n, &m), ICMP_PARSE_OTHER);
	/* A quoted IPv4 packet in an ICMPv6 error. */
	b[ICMP_HDR_LEN + 6] = IPPROTO_ICMPV6;
	b[ICMP_HDR_LEN] = 0x45;
	assert_int_equal(icmp_parse(AF_INET6, 0, b, n, &m), ICMP_PARSE_BAD);
}

static void test_quoted_echo(void **state)
{
	uint8_t b[ICMP_HDR_LEN + PAYLOAD];
	struct icmp_parsed m;
	size_t len = icmp_build_echo(AF_INET, ID, 9, COOKIE, b, PAYLOAD);

	/* What a ping socket's error queue returns: the echo as sent. */
	assert_int_equal(icmp_parse_quoted_echo(AF_INET, b, len, &m), ICMP_PARSE_ERROR);
	assert_echo_fields(&m, 9, 9);
	assert_int_equal(icmp_parse_quoted_echo(AF_INET, b, ICMP_HDR_LEN, &m), ICMP_PARSE_ERROR);
	assert_false(m.has_cookie);
	assert_int_equal(icmp_parse_quoted_echo(AF_INET, b, ICMP_HDR_LEN - 1, &m), ICMP_PARSE_BAD);
	assert_int_equal(icmp_parse_quoted_echo(AF_INET6, b, len, &m), ICMP_PARSE_OTHER);
	icmp_build_echo(AF_INET6, ID, 9, COOKIE, b, PAYLOAD);
	assert_int_equal(icmp_parse_quoted_echo(AF_INET6, b, len, &m), ICMP_PARSE_ERROR);
}

static void test_wrong_type(void **state)
{
	uint8_t b[ICMP_HDR_LEN + PAYLOAD];
	struct icmp_parsed m;
	size_t len = icmp_build_echo(AF_INET, ID, 1, COOKIE, b, PAYLOAD);

	/* Our own request (a raw socket may see it on loopback) is not a reply. */
	assert_int_equal(icmp_parse(AF_INET, 0, b, len, &m), ICMP_PARSE_OTHER);
	b[0] = 13; /* timestamp */
	assert_int_equal(icmp_parse(AF_INET, 0, b, len, &m), ICMP_PARSE_OTHER);
	b[0] = 5; /* redirect: not an error about delivery of the echo */
	assert_int_equal(icmp_parse(AF_INET, 0, b, len, &m), ICMP_PARSE_OTHER);
	icmp_build_echo(AF_INET6, ID, 1, COOKIE, b, PAYLOAD);
	assert_int_equal(icmp_parse(AF_INET6, 0, b, len, &m), ICMP_PARSE_OTHER);
	b[0] = 135; /* neighbour solicitation */
	assert_int_equal(icmp_parse(AF_INET6, 0, b, len, &m), ICMP_PARSE_OTHER);
	/* Neither family. */
	assert_int_equal(icmp_parse(AF_UNIX, 0, b, len, &m), ICMP_PARSE_BAD);
}

/* Every prefix of valid messages, each in an exact-size heap copy (ASan catches any read
 * past the end): short ones are rejected, none is misread. */
static void test_truncated(void **state)
{
	uint8_t b[40 + ICMP_HDR_LEN + 40 + ICMP_HDR_LEN + PAYLOAD];
	size_t hl, n;

	hl = ipv4_header(b, 8, IPPROTO_ICMP, ICMP_HDR_LEN + PAYLOAD);
	n = hl + echo_reply(AF_INET, b + hl, 1, PAYLOAD);
	for (size_t cut = 0; cut <= n; cut++) {
		uint8_t *c = malloc(cut ? cut : 1);
		struct icmp_parsed m;
		enum icmp_parse_result r;

		assert_non_null(c);
		memcpy(c, b, cut);
		r = icmp_parse(AF_INET, 1, c, cut, &m);
		/* Shorter than the IPv4 total length: cut, whatever the checksum says (our
		 * zero padding sums to nothing). */
		assert_int_equal(r, cut == n ? ICMP_PARSE_REPLY : ICMP_PARSE_BAD);
		free(c);
	}
	n = error_v4(b, 3, 1, IPPROTO_ICMP, ICMP_HDR_LEN + PAYLOAD);
	for (size_t cut = 0; cut <= n; cut++) {
		uint8_t *c = malloc(cut ? cut : 1);
		struct icmp_parsed m;
		enum icmp_parse_result r;

		assert_non_null(c);
		memcpy(c, b, cut);
		r = icmp_parse(AF_INET, 0, c, cut, &m);
		if (cut < ICMP_HDR_LEN + 20 + ICMP_HDR_LEN)
			assert_int_equal(r, ICMP_PARSE_BAD);
		else
			assert_int_equal(r, ICMP_PARSE_ERROR);
		assert_int_equal(m.has_cookie, cut >= ICMP_HDR_LEN + 20 + ICMP_HDR_LEN + 12);
		free(c);
	}
}

static void test_garbage(void **state)
{
	uint8_t b[512];
	uint32_t x = 2463534242u;
	struct icmp_parsed m;

	/* xorshift noise: the parser answers something for every input and stays in bounds. */
	for (int round = 0; round < 2000; round++) {
		size_t len = x % sizeof(b);

		for (size_t i = 0; i < len; i++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			b[i] = (uint8_t)x;
		}
		for (int mode = 0; mode < 3; mode++) {
			int family = mode == 2 ? AF_INET6 : AF_INET;
			enum icmp_parse_result r = icmp_parse(family, mode == 0, b, len, &m);

			assert_true(r >= ICMP_PARSE_BAD && r <= ICMP_PARSE_ERROR);
			if (r == ICMP_PARSE_BAD || r == ICMP_PARSE_OTHER)
				continue;
			assert_true(m.payload_len < len);
		}
	}
	memset(b, 0, sizeof(b));
	assert_int_equal(icmp_parse(AF_INET, 1, b, sizeof(b), &m), ICMP_PARSE_BAD);
	assert_int_equal(icmp_parse(AF_INET, 0, b, 0, &m), ICMP_PARSE_BAD);
	assert_int_equal(icmp_parse(AF_INET6, 0, b, 7, &m), ICMP_PARSE_BAD);
}

/* Live: echoes every 5 ms for 150 ms to 127.0.0.1 through the runner, when this process may
 * open a ping or raw socket. */
static void test_probe_loopback(void **state)
{
	struct icmp_probe_config cfg = { .interval_ns = 5 * NS_PER_MS, .timeout_ns = NS_PER_SEC,
					 .size = 0, .dscp = 10 };
	struct sockaddr_in *sin = (struct sockaddr_in *)&cfg.target;
	/* 120 slots for the 20 echoes asked below: on a loaded host (CI, parallel builds) the
	 * runner's thread starts late and skips slots; 150 ms gave only 13 echoes there. */
	struct timespec wait = { 0, 600 * NS_PER_MS };
	struct probe_series ps;
	struct probe_runner *r;
	struct icmp_probe *p;
	char err[256];
	size_t ok = 0;

	assert_int_equal(evthread_use_pthreads(), 0);
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cfg.target_len = sizeof(*sin);
	series_init(&ps, "icmp", "127.0.0.1");
	r = runner_new(err, sizeof(err));
	assert_non_null(r);
	p = icmp_probe_start(runner_base(r), &cfg, &ps, err, sizeof(err));
	if (p == NULL) {
		print_message("skipped: %s\n", err);
		assert_int_equal(ps.available, 0);
		assert_string_equal(ps.note, err);
		runner_free(r);
		skip();
	}
	assert_int_equal(runner_add(r, p, &icmp_probe_ops), 0);
	assert_int_equal(runner_start(r, err, sizeof(err)), 0);
	nanosleep(&wait, NULL);
	runner_stop(r, 200 * NS_PER_MS);
	runner_free(r);
	for (size_t i = 0; i < ps.n; i++) {
		if (ps.s[i].status != SAMPLE_OK)
			continue;
		ok++;
		assert_true(ps.s[i].rtt_ns > 0 && ps.s[i].rtt_ns < 50 * NS_PER_MS);
	}
	print_message("%s: %zu of %zu ok, bad %llu\n", ps.method, ok, ps.n,
		      (unsigned long long)ps.bad_replies);
	assert_true(ps.available);
	assert_true(ps.n >= 20);
	assert_true(ok == ps.n);
	assert_int_equal(ps.bad_replies, 0);
	series_free(&ps);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checksum),
		cmocka_unit_test(test_reply_v4_raw_options),
		cmocka_unit_test(test_reply_v4_raw_rejects),
		cmocka_unit_test(test_reply_ping_socket),
		cmocka_unit_test(test_reply_v6),
		cmocka_unit_test(test_unreach_v4),
		cmocka_unit_test(test_unreach_v6),
		cmocka_unit_test(test_quoted_echo),
		cmocka_unit_test(test_wrong_type),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_probe_loopback),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

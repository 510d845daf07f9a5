/* Unit tests for probes/icmperr.c: time-exceeded and port-unreachable quoting UDP and echo
 * probes over IPv4 and IPv6 (with an extension header), echo replies, and hostile inputs. */
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "probes/icmperr.h"

/* An ICMPv4 error of type/code quoting an IPv4 packet of proto with an 8-byte transport
 * header t; returns its length. */
static size_t v4_error(uint8_t *b, uint8_t type, uint8_t code, uint8_t proto, const uint8_t *t)
{
	memset(b, 0, 64);
	b[0] = type;
	b[1] = code;
	b[8] = 0x45;
	b[8 + 8] = 1;      /* TTL left in the quote */
	b[8 + 9] = proto;
	memcpy(b + 8 + 16, (const uint8_t[]){198, 51, 100, 7}, 4);
	memcpy(b + 28, t, 8);
	return 36;
}

static void test_v4_udp_time_exceeded(void **state)
{
	uint8_t b[64], udp[8] = {0x9c, 0x40, 0x82, 0x9b, 0, 8, 0, 0};
	struct icmperr_msg m;
	size_t n = v4_error(b, 11, 0, IPPROTO_UDP, udp);

	(void)state;
	assert_int_equal(icmperr_parse(AF_INET, b, n, &m), ICMPERR_TIME_EXCEEDED);
	assert_int_equal(m.proto, ICMPERR_Q_UDP);
	assert_int_equal(m.sport, 40000);
	assert_int_equal(m.dport, 33435);
	assert_int_equal(m.qdst_len, 4);
	assert_int_equal(m.qdst[3], 7);
	/* the destination: port unreachable */
	n = v4_error(b, 3, 3, IPPROTO_UDP, udp);
	assert_int_equal(icmperr_parse(AF_INET, b, n, &m), ICMPERR_UNREACH);
	assert_int_equal(m.code, 3);
	/* quoting less than 8 transport bytes is malformed */
	assert_int_equal(icmperr_parse(AF_INET, b, n - 1, &m), ICMPERR_BAD);
	assert_int_equal(m.proto, ICMPERR_Q_NONE);
}

static void test_v4_echo(void **state)
{
	uint8_t b[64], echo[8] = {8, 0, 0, 0, 0x12, 0x34, 0x00, 0x05};
	struct icmperr_msg m;
	size_t n = v4_error(b, 11, 0, IPPROTO_ICMP, echo);

	(void)state;
	assert_int_equal(icmperr_parse(AF_INET, b, n, &m), ICMPERR_TIME_EXCEEDED);
	assert_int_equal(m.proto, ICMPERR_Q_ECHO);
	assert_int_equal(m.id, 0x1234);
	assert_int_equal(m.seq, 5);
	/* an echo reply from the destination */
	memcpy(b, (const uint8_t[]){0, 0, 0, 0, 0x12, 0x34, 0, 9}, 8);
	assert_int_equal(icmperr_parse(AF_INET, b, 8, &m), ICMPERR_ECHO_REPLY);
	assert_int_equal(m.seq, 9);
	/* an error about some other protocol, and a quoted later fragment, are not ours */
	n = v4_error(b, 11, 0, IPPROTO_TCP, echo);
	assert_int_equal(icmperr_parse(AF_INET, b, n, &m), ICMPERR_OTHER);
	n = v4_error(b, 11, 0, IPPROTO_UDP, echo);
	b[8 + 7] = 0x10;
	assert_int_equal(icmperr_parse(AF_INET, b, n, &m), ICMPERR_OTHER);
	/* an echo request and a redirect are not answers */
	b[0] = 8;
	assert_int_equal(icmperr_parse(AF_INET, b, n, &m), ICMPERR_OTHER);
}

/* ICMPv6 time exceeded quoting a UDP probe behind a destination-options header. */
static void test_v6_ext(void **state)
{
	uint8_t b[128] = {3, 0};
	struct icmperr_msg m;
	size_t q = 8;

	(void)state;
	b[q] = 0x60;
	b[q + 6] = 60;                       /* destination options */
	b[q + 24] = 0x20;                    /* 2001:db8::1 */
	b[q + 25] = 0x01;
	b[q + 39] = 1;
	b[q + 40] = IPPROTO_UDP;             /* its next header */
	b[q + 41] = 0;                       /* 8 bytes long */
	memcpy(b + q + 48, (const uint8_t[]){0x9c, 0x41, 0x82, 0x9c, 0, 8, 0, 0}, 8);
	assert_int_equal(icmperr_parse(AF_INET6, b, q + 56, &m), ICMPERR_TIME_EXCEEDED);
	assert_int_equal(m.proto, ICMPERR_Q_UDP);
	assert_int_equal(m.dport, 33436);
	assert_int_equal(m.qdst_len, 16);
	assert_int_equal(m.qdst[15], 1);
	/* an extension header claiming more bytes than there are */
	b[q + 41] = 200;
	assert_int_equal(icmperr_parse(AF_INET6, b, q + 56, &m), ICMPERR_BAD);
	/* a plain echo quote */
	b[q + 6] = IPPROTO_ICMPV6;
	memcpy(b + q + 40, (const uint8_t[]){128, 0, 0, 0, 0, 7, 0, 3}, 8);
	assert_int_equal(icmperr_parse(AF_INET6, b, q + 48, &m), ICMPERR_TIME_EXCEEDED);
	assert_int_equal(m.proto, ICMPERR_Q_ECHO);
	assert_int_equal(m.id, 7);
	assert_int_equal(m.seq, 3);
	b[0] = 1; /* port unreachable */
	assert_int_equal(icmperr_parse(AF_INET6, b, q + 48, &m), ICMPERR_UNREACH);
	b[0] = 129;
	assert_int_equal(icmperr_parse(AF_INET6, b, 8, &m), ICMPERR_ECHO_REPLY);
}

static void test_hostile(void **state)
{
	uint8_t b[64] = {11, 0};
	struct icmperr_msg m;

	(void)state;
	for (size_t n = 0; n < 36; n++)
		assert_true(icmperr_parse(AF_INET, b, n, &m) != ICMPERR_TIME_EXCEEDED);
	b[8] = 0x4f; /* IHL 60 bytes, beyond the buffer */
	assert_int_equal(icmperr_parse(AF_INET, b, 40, &m), ICMPERR_BAD);
	b[8] = 0x44; /* IHL below 20 */
	assert_int_equal(icmperr_parse(AF_INET, b, 40, &m), ICMPERR_BAD);
	assert_int_equal(icmperr_parse(AF_UNIX, b, 40, &m), ICMPERR_BAD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v4_udp_time_exceeded),
		cmocka_unit_test(test_v4_echo),
		cmocka_unit_test(test_v6_ext),
		cmocka_unit_test(test_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

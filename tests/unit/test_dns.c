/* test_dns: the DNS codec (names, query, reply checks, compression-pointer loops, truncated
 * and garbage input), every rule of the authoritative responder and its size bound, the
 * resolv.conf reader, the responder's per-source rate limiter, and the client probe against a
 * scripted server on loopback (matching, rcodes, losses, bad and duplicate replies). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/bytes.h"
#include "common/clock.h"
#include "common/dns.h"
#include "probes/dns.h"
#include "probes/runner.h"
#include "probes/series.h"
#include "server/dns.h"

#define ZONE "probe.bloatmeter.test"

struct addrs {
	struct sockaddr_storage local4, local6, mapped4, peer4, peer6, peer_mapped;
};

static void set_v4(struct sockaddr_storage *ss, const char *ip, uint16_t port)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	assert_int_equal(inet_pton(AF_INET, ip, &sin->sin_addr), 1);
}

static void set_v6(struct sockaddr_storage *ss, const char *ip, uint16_t port)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(port);
	assert_int_equal(inet_pton(AF_INET6, ip, &sin6->sin6_addr), 1);
}

static void addrs_init(struct addrs *a)
{
	set_v4(&a->local4, "192.0.2.53", 53);
	set_v6(&a->local6, "2001:db8::53", 53);
	set_v6(&a->mapped4, "::ffff:192.0.2.54", 53);
	set_v4(&a->peer4, "198.51.100.7", 40000);
	set_v6(&a->peer6, "2001:db8:1:2::7", 40000);
	set_v6(&a->peer_mapped, "::ffff:198.51.100.8", 40000);
}

static const struct sockaddr *sa(const struct sockaddr_storage *ss)
{
	return (const struct sockaddr *)ss;
}

static struct dns_zone zone(void)
{
	struct dns_zone z;

	assert_int_equal(dns_zone_init(&z, ZONE), 0);
	return z;
}

static size_t query(uint8_t *q, uint16_t id, const char *name, uint16_t qtype)
{
	size_t n = dns_build_query(q, DNS_QUERY_MAX, id, name, qtype, 1);

	assert_true(n > DNS_HDR_LEN);
	return n;
}

/* Asks the responder; checks the size bound every answer must keep. */
static size_t ask(const uint8_t *q, size_t qlen, const struct sockaddr *local,
		  const struct sockaddr *peer, uint8_t *out)
{
	struct dns_zone z = zone();
	size_t n = dns_answer(&z, q, qlen, local, peer, out, DNS_UDP_MAX);

	assert_true(n <= qlen); /* never an amplifier */
	assert_true(n <= DNS_UDP_MAX);
	return n;
}

static void test_names(void **state)
{
	uint8_t w[DNS_NAME_MAX];
	char longname[300];
	struct dns_zone z;

	assert_int_equal(dns_name_from_text("a.bc", w, sizeof(w)), 6);
	assert_memory_equal(w, "\1a\2bc\0", 6);
	assert_int_equal(dns_name_from_text("a.bc.", w, sizeof(w)), 6);
	assert_int_equal(dns_name_from_text("", w, sizeof(w)), -1);
	assert_int_equal(dns_name_from_text(".", w, sizeof(w)), -1);
	assert_int_equal(dns_name_from_text("a..b", w, sizeof(w)), -1);
	assert_int_equal(dns_name_from_text(".a", w, sizeof(w)), -1);
	assert_int_equal(dns_name_from_text("a..", w, sizeof(w)), -1);
	assert_int_equal(dns_name_from_text("a b", w, sizeof(w)), -1);
	assert_int_equal(dns_name_from_text("a\\.b", w, sizeof(w)), -1);
	assert_int_equal(dns_name_from_text("_srv-1.x", w, sizeof(w)), 10);
	assert_int_equal(dns_name_from_text("a.bc", w, 5), -1); /* does not fit cap */
	/* labels: 63 bytes fine, 64 not */
	memset(longname, 'a', 64);
	longname[64] = '\0';
	assert_int_equal(dns_name_from_text(longname, w, sizeof(w)), -1);
	longname[63] = '\0';
	assert_int_equal(dns_name_from_text(longname, w, sizeof(w)), 65);
	/* names: 253 text characters (255 in wire form) fine, 254 not */
	for (int i = 0; i < 253; i++)
		longname[i] = (i % 2) ? '.' : 'a';
	longname[253] = '\0';
	assert_int_equal(dns_name_from_text(longname, w, sizeof(w)), 255);
	longname[253] = 'b';
	longname[254] = '\0';
	assert_int_equal(dns_name_from_text(longname, w, sizeof(w)), -1);
	/* zones are stored in lower case with their label count */
	assert_int_equal(dns_zone_init(&z, "Probe.Example.TEST."), 0);
	assert_int_equal(z.labels, 3);
	assert_int_equal(z.len, 20);
	assert_memory_equal(z.wire, "\5probe\7example\4test\0", 20);
	assert_int_equal(dns_zone_init(&z, "bad..zone"), -1);
}

static void test_build_query(void **state)
{
	uint8_t q[DNS_QUERY_MAX];
	size_t n = dns_build_query(q, sizeof(q), 0xbeef, "x." ZONE, DNS_TYPE_AAAA, 1);

	assert_int_equal(n, DNS_HDR_LEN + 25 + 4);
	assert_int_equal(bytes_be16(q), 0xbeef);
	assert_int_equal(bytes_be16(q + 2), 0x0100); /* RD only */
	assert_int_equal(bytes_be16(q + 4), 1);
	assert_int_equal(bytes_be16(q + 6) | bytes_be16(q + 8) | bytes_be16(q + 10), 0);
	assert_memory_equal(q + 12, "\1x\5probe\12bloatmeter\4test\0", 25);
	assert_int_equal(bytes_be16(q + 37), DNS_TYPE_AAAA);
	assert_int_equal(bytes_be16(q + 39), DNS_CLASS_IN);
	n = dns_build_query(q, sizeof(q), 1, "x." ZONE, DNS_TYPE_A, 0);
	assert_int_equal(bytes_be16(q + 2), 0);
	assert_int_equal(dns_build_query(q, 20, 1, "x." ZONE, DNS_TYPE_A, 0), 0);
	assert_int_equal(dns_build_query(q, sizeof(q), 1, "bad name", DNS_TYPE_A, 0), 0);
}

/* Query -> responder -> reply parser, for each record type. */
static void test_round_trip(void **state)
{
	uint8_t q[DNS_QUERY_MAX], out[DNS_UDP_MAX];
	struct dns_reply r;
	struct addrs a;
	size_t qn, qp, n;

	addrs_init(&a);
	qn = query(q, 0x1234, "17-0badcafe." ZONE, DNS_TYPE_A);
	qp = dns_query_pad(q, qn, sizeof(q));
	n = ask(q, qp, sa(&a.local4), sa(&a.peer4), out);
	assert_int_equal(n, qn + 16);
	assert_int_equal(dns_parse_reply(out, n, q, qn, &r), DNS_REPLY_OK);
	assert_int_equal(r.id, 0x1234);
	assert_int_equal(r.rcode, DNS_RCODE_NOERROR);
	assert_int_equal(r.aa, 1);
	assert_int_equal(r.ra, 0);
	assert_int_equal(r.tc, 0);
	assert_int_equal(r.ancount, 1);
	assert_int_equal(r.answers, 1);
	assert_memory_equal(out + n - 4, "\xc0\x00\x02\x35", 4); /* 192.0.2.53 */

	qn = query(q, 7, "x." ZONE, DNS_TYPE_AAAA);
	qp = dns_query_pad(q, qn, sizeof(q));
	n = ask(q, qp, sa(&a.local6), sa(&a.peer6), out);
	assert_int_equal(dns_parse_reply(out, n, q, qn, &r), DNS_REPLY_OK);
	assert_int_equal(r.answers, 1);
	assert_memory_equal(out + n - 16, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x53", 16);

	qn = query(q, 8, "x." ZONE, DNS_TYPE_TXT);
	qp = dns_query_pad(q, qn, sizeof(q));
	n = ask(q, qp, sa(&a.local4), sa(&a.peer4), out);
	assert_int_equal(dns_parse_reply(out, n, q, qn, &r), DNS_REPLY_OK);
	assert_int_equal(r.answers, 1);
}

static void test_reply_mismatch(void **state)
{
	uint8_t q[DNS_QUERY_MAX], q2[DNS_QUERY_MAX], out[DNS_UDP_MAX];
	struct dns_reply r;
	struct addrs a;
	size_t qn, qp, q2n, n;

	addrs_init(&a);
	qn = query(q, 0x4242, "1-00000000." ZONE, DNS_TYPE_A);
	qp = dns_query_pad(q, qn, sizeof(q));
	n = ask(q, qp, sa(&a.local4), sa(&a.peer4), out);
	/* another id */
	q2n = query(q2, 0x4243, "1-00000000." ZONE, DNS_TYPE_A);
	assert_int_equal(dns_parse_reply(out, n, q2, q2n, &r), DNS_REPLY_MISMATCH);
	/* same id, another name */
	q2n = query(q2, 0x4242, "2-00000000." ZONE, DNS_TYPE_A);
	assert_int_equal(dns_parse_reply(out, n, q2, q2n, &r), DNS_REPLY_MISMATCH);
	/* same id and name, another type */
	q2n = query(q2, 0x4242, "1-00000000." ZONE, DNS_TYPE_AAAA);
	assert_int_equal(dns_parse_reply(out, n, q2, q2n, &r), DNS_REPLY_MISMATCH);
	/* the name in another case still matches (resolvers may apply 0x20 and restore it) */
	q2n = query(q2, 0x4242, "1-00000000.PROBE.bloatmeter.test", DNS_TYPE_A);
	assert_int_equal(dns_parse_reply(out, n, q2, q2n, &r), DNS_REPLY_OK);
	/* a query is not a reply */
	assert_int_equal(dns_parse_reply(q, qn, q, qn, &r), DNS_REPLY_MALFORMED);
	/* a reply without the question */
	out[5] = 0;
	assert_int_equal(dns_parse_reply(out, n, q, qn, &r), DNS_REPLY_MALFORMED);
	out[5] = 2;
	assert_int_equal(dns_parse_reply(out, n, q, qn, &r), DNS_REPLY_MALFORMED);
	out[5] = 1;
	/* an answer record whose data runs past the end */
	out[n - 5] = 5;
	assert_int_equal(dns_parse_reply(out, n, q, qn, &r), DNS_REPLY_MALFORMED);
	/* ... which does not matter when the reply says it is truncated */
	out[2] |= 0x02;
	assert_int_equal(dns_parse_reply(out, n, q, qn, &r), DNS_REPLY_OK);
	assert_int_equal(r.tc, 1);
	assert_int_equal(r.answers, 0);
}

/* Builds a reply to q by hand: q's id, flags, one question, an answers, then the body. */
static size_t handmade(uint8_t *m, const uint8_t *q, uint16_t flags, uint16_t an, const void *body,
		       size_t len)
{
	memset(m, 0, DNS_HDR_LEN);
	memcpy(m, q, 2);
	m[2] = (uint8_t)(flags >> 8);
	m[3] = (uint8_t)flags;
	m[5] = 1;
	m[7] = (uint8_t)an;
	memcpy(m + DNS_HDR_LEN, body, len);
	return DNS_HDR_LEN + len;
}

static void test_compression(void **state)
{
	uint8_t q[DNS_QUERY_MAX], m[600];
	struct dns_reply r;
	size_t qn, n;

	qn = dns_build_query(q, sizeof(q), 99, "a.b", DNS_TYPE_A, 0);
	/* a normal compressed answer: owner = pointer to the question name, then another record
	 * whose owner is "x" + pointer to "b" inside the question */
	{
		static const uint8_t body[] = { 1, 'a', 1, 'b', 0, 0, 1, 0, 1,
						0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 1, 2, 3, 4,
						1, 'x', 0xc0, 14, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 5, 6, 7, 8 };

		n = handmade(m, q, 0x8180, 2, body, sizeof(body));
		assert_int_equal(dns_parse_reply(m, n, q, qn, &r), DNS_REPLY_OK);
		assert_int_equal(r.ancount, 2);
		assert_int_equal(r.answers, 1);
	}
	/* question name compressed to point into itself: loop */
	{
		static const uint8_t body[] = { 0xc0, 12, 0, 1, 0, 1 };

		n = handmade(m, q, 0x8180, 0, body, sizeof(body));
		assert_int_equal(dns_parse_reply(m, n, q, qn, &r), DNS_REPLY_MALFORMED);
	}
	/* an owner name of label + pointer back to that label's start: a loop through a label */
	{
		static const uint8_t body[] = { 1, 'a', 1, 'b', 0, 0, 1, 0, 1,
						1, 'z', 0xc0, 21, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0 };

		n = handmade(m, q, 0x8180, 1, body, sizeof(body));
		assert_int_equal(dns_parse_reply(m, n, q, qn, &r), DNS_REPLY_MALFORMED);
	}
	/* two pointers pointing at each other */
	{
		static const uint8_t body[] = { 1, 'a', 1, 'b', 0, 0, 1, 0, 1,
						0xc0, 23, 0xc0, 21, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0 };

		n = handmade(m, q, 0x8180, 1, body, sizeof(body));
		assert_int_equal(dns_parse_reply(m, n, q, qn, &r), DNS_REPLY_MALFORMED);
	}
	/* a forward pointer, and one past the end */
	{
		static const uint8_t body[] = { 1, 'a', 1, 'b', 0, 0, 1, 0, 1,
						0xc0, 23, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1, 'a', 0 };

		n = handmade(m, q, 0x8180, 1, body, sizeof(body));
		assert_int_equal(dns_parse_reply(m, n, q, qn, &r), DNS_REPLY_MALFORMED);
		m[22] = 0xff;
		assert_int_equal(dns_parse_reply(m, n, q, qn, &r), DNS_REPLY_MALFORMED);
	}
	/* a pointer cut in half at the end of the message */
	{
		static const uint8_t body[] = { 1, 'a', 1, 'b', 0, 0, 1, 0, 1, 0xc0 };

		n = handmade(m, q, 0x8180, 1, body, sizeof(body));
		assert_int_equal(dns_parse_reply(m, n, q, qn, &r), DNS_REPLY_MALFORMED);
	}
	/* extended label types are refused */
	{
		static const uint8_t body[] = { 0x41, 'a', 1, 'b', 0, 0, 1, 0, 1 };

		n = handmade(m, q, 0x8180, 0, body, sizeof(body));
		assert_int_equal(dns_parse_reply(m, n, q, qn, &r), DNS_REPLY_MALFORMED);
	}
}

/* A reply whose second answer's owner is reached through a chain of pointers kept in the
 * first answer's data, jumps pointers long; more than 32 make it malformed. */
static size_t chain_reply(uint8_t *m, const uint8_t *q, int jumps)
{
	size_t off = DNS_HDR_LEN, last;

	memset(m, 0, DNS_HDR_LEN);
	memcpy(m, q, 2);
	m[2] = 0x81;
	m[5] = 1;
	m[7] = 2;
	memcpy(m + off, "\1a\1b\0\0\1\0\1", 9);
	off += 9;
	/* answer 1: owner -> question name, type 99, data = the chain */
	memcpy(m + off, "\xc0\x0c\0\x63\0\1\0\0\0\0", 10);
	off += 10;
	m[off++] = (uint8_t)(2 * (jumps - 1) >> 8);
	m[off++] = (uint8_t)(2 * (jumps - 1));
	for (int k = 0; k < jumps - 1; k++) {
		size_t target = k ? off - 2 : DNS_HDR_LEN;

		m[off++] = (uint8_t)(0xc0 | target >> 8);
		m[off++] = (uint8_t)target;
	}
	/* answer 2: owner -> the last link, type A, no data */
	last = off - 2;
	m[off++] = (uint8_t)(0xc0 | last >> 8);
	m[off++] = (uint8_t)last;
	memcpy(m + off, "\0\1\0\1\0\0\0\0\0\0", 10);
	return off + 10;
}

static void test_pointer_chain(void **state)
{
	uint8_t q[DNS_QUERY_MAX], m[600];
	struct dns_reply r;
	size_t qn = dns_build_query(q, sizeof(q), 5, "a.b", DNS_TYPE_A, 0), n;

	n = chain_reply(m, q, 32);
	assert_int_equal(dns_parse_reply(m, n, q, qn, &r), DNS_REPLY_OK);
	assert_int_equal(r.answers, 1);
	n = chain_reply(m, q, 33);
	assert_int_equal(dns_parse_reply(m, n, q, qn, &r), DNS_REPLY_MALFORMED);
}

static void test_responder_rules(void **state)
{
	uint8_t q[DNS_QUERY_MAX], out[DNS_UDP_MAX];
	struct addrs a;
	size_t qn, qp, n;

	addrs_init(&a);
	/* the apex exists */
	qn = query(q, 1, ZONE, DNS_TYPE_A);
	qp = dns_query_pad(q, qn, sizeof(q));
	n = ask(q, qp, sa(&a.local4), sa(&a.peer4), out);
	assert_int_equal(out[3] & 0xf, DNS_RCODE_NOERROR);
	assert_int_equal(bytes_be16(out + 6), 1);
	assert_true(out[2] & 0x04);      /* AA */
	assert_false(out[3] & 0x80);     /* RA */
	assert_true(out[2] & 0x01);      /* RD copied */
	assert_true(out[2] & 0x80);      /* QR */
	/* one label below exists, any case; the question comes back exactly as asked */
	qn = query(q, 2, "AbC." ZONE, DNS_TYPE_A);
	qp = dns_query_pad(q, qn, sizeof(q));
	n = ask(q, qp, sa(&a.mapped4), sa(&a.peer4), out);
	assert_int_equal(out[3] & 0xf, DNS_RCODE_NOERROR);
	assert_int_equal(bytes_be16(out + 6), 1);
	assert_memory_equal(out + 12, q + 12, qn - 12);
	assert_memory_equal(out + n - 4, "\xc0\x00\x02\x36", 4); /* mapped 192.0.2.54 */
	qn = query(q, 2, "x.PROBE.BloatMeter.TEST", DNS_TYPE_A);
	qp = dns_query_pad(q, qn, sizeof(q));
	n = ask(q, qp, sa(&a.local4), sa(&a.peer4), out);
	assert_int_equal(out[3] & 0xf, DNS_RCODE_NOERROR);
	/* two or more labels below: NXDOMAIN, authoritative */
	qn = query(q, 3, "a.b." ZONE, DNS_TYPE_A);
	qp = dns_query_pad(q, qn, sizeof(q));
	n = ask(q, qp, sa(&a.local4), sa(&a.peer4), out);
	assert_int_equal(n, qn);
	assert_int_equal(out[3] & 0xf, DNS_RCODE_NXDOMAIN);
	assert_true(out[2] & 0x04);
	assert_int_equal(bytes_be16(out + 6), 0);
	qn = query(q, 3, "a.b.c.d." ZONE, DNS_TYPE_TXT);
	qp = dns_query_pad(q, qn, sizeof(q));
	n = ask(q, qp, sa(&a.local4), sa(&a.peer4), out);
	assert_int_equal(out[3] & 0xf, DNS_RCODE_NXDOMAIN);
	/* outside the zone: REFUSED, not authoritative; also a name that only ends like it */
	qn = query(q, 4, "example.com", DNS_TYPE_A);
	qp = dns_query_pad(q, qn, sizeof(q));
	n = ask(q, qp, sa(&a.local4), sa(&a.peer4), out);
	assert_int_equal(out[3] & 0xf, DNS_RCODE_REFUSED);
	assert_false(out[2] & 0x04);
	qn = query(q, 4, "xprobe.bloatmeter.test", DNS_TYPE_A);
	qp = dns_query_pad(q, qn, sizeof(q));
	n = ask(q, qp, sa(&a.local4), sa(&a.peer4), out);
	assert_int_equal(out[3] & 0xf, DNS_RCODE_REFUSED);
	qn = query(q, 4, "bloatmeter.test", DNS_TYPE_A);
	qp = dns_query_pad(q, qn, sizeof(q));
	n = ask(q, qp, sa(&a.local4), sa(&a.peer4), out);
	assert_int_equal(out[3] & 0xf, DNS_RCODE_REFUSED);
	/* ANY and zone transfers: REFUSED */
	qn = query(q, 5, "x." ZONE, DNS_TYPE_ANY);
	qp = dns_query_pad(q, qn, sizeof(q));
	n = ask(q, qp, sa(&a.local4), sa(&a.peer4), out);
	assert_int_equal(out[3] & 0xf, DNS_RCODE_REFUSED);
	assert_int_equal(bytes_be16(out + 6), 0);
	qn = query(q, 5, ZONE, DNS_TYPE_AXFR);
	qp = dns_query_pad(q, qn, sizeof(q));
	n = ask(q, qp, sa(&a.local4), sa(&a.peer4), out);
	assert_int_equal(out[3] & 0xf, DNS_RCODE_REFUSED);
	/* class CH (version.bind and friends): REFUSED */
	qn = query(q, 6, "x." ZONE, DNS_TYPE_TXT);
	qp = dns_query_pad(q, qn, sizeof(q));
	q[qn - 1] = 3;
	n = ask(q, qp, sa(&a.local4), sa(&a.peer4), out);
	assert_int_equal(out[3] & 0xf, DNS_RCODE_REFUSED);
	/* other types of existing names: NOERROR, no answer */
	qn = query(q, 7, "x." ZONE, 15 /* MX */);
	qp = dns_query_pad(q, qn, sizeof(q));
	n = ask(q, qp, sa(&a.local4), sa(&a.peer4), out);
	assert_int_equal(n, qn);
	assert_int_equal(out[3] & 0xf, DNS_RCODE_NOERROR);
	assert_int_equal(bytes_be16(out + 6), 0);
}

static void test_responder_addresses(void **state)
{
	uint8_t q[DNS_QUERY_MAX], out[DNS_UDP_MAX];
	struct addrs a;
	size_t qn, qp, n;

	addrs_init(&a);
	/* AAAA: the local IPv6 address; none on an IPv4 (or mapped) arrival */
	qn = query(q, 1, "x." ZONE, DNS_TYPE_AAAA);
	qp = dns_query_pad(q, qn, sizeof(q));
	qp = dns_query_pad(q, qn, sizeof(q));
	n = ask(q, qp, sa(&a.local6), sa(&a.peer6), out);
	assert_int_equal(n, qn + 28);
	assert_int_equal(bytes_be16(out + n - 18), 16);
	n = ask(q, qp, sa(&a.mapped4), sa(&a.peer4), out);
	assert_int_equal(n, qn);
	assert_int_equal(out[3] & 0xf, DNS_RCODE_NOERROR);
	n = ask(q, qp, NULL, sa(&a.peer4), out);
	assert_int_equal(n, qn);
	/* A: none on an IPv6 arrival */
	qn = query(q, 2, "x." ZONE, DNS_TYPE_A);
	qp = dns_query_pad(q, qn, sizeof(q));
	qp = dns_query_pad(q, qn, sizeof(q));
	n = ask(q, qp, sa(&a.local6), sa(&a.peer6), out);
	assert_int_equal(n, qn);
	/* TXT whoami: the peer's address as text; mapped IPv4 shown as IPv4 */
	qn = query(q, 3, "x." ZONE, DNS_TYPE_TXT);
	qp = dns_query_pad(q, qn, sizeof(q));
	qp = dns_query_pad(q, qn, sizeof(q));
	n = ask(q, qp, sa(&a.local4), sa(&a.peer4), out);
	assert_int_equal(n, qn + 12 + 1 + 12);
	assert_int_equal(out[qn + 12], 12);
	assert_memory_equal(out + qn + 13, "198.51.100.7", 12);
	n = ask(q, qp, sa(&a.local6), sa(&a.peer6), out);
	assert_int_equal(out[qn + 12], strlen("2001:db8:1:2::7"));
	assert_memory_equal(out + qn + 13, "2001:db8:1:2::7", strlen("2001:db8:1:2::7"));
	n = ask(q, qp, sa(&a.mapped4), sa(&a.peer_mapped), out);
	assert_memory_equal(out + qn + 13, "198.51.100.8", 12);
	n = ask(q, qp, sa(&a.local4), NULL, out);
	assert_int_equal(n, qn);
	/* TTL 0 and the owner is a pointer to the question */
	n = ask(q, qp, sa(&a.local4), sa(&a.peer4), out);
	assert_memory_equal(out + qn, "\xc0\x0c\x00\x10\x00\x01\0\0\0\0", 10);
}

/* Issue 16: an answer is never larger than its query. A short (unpadded) query whose answer
 * would add a record gets the question alone with TC set; the same query padded with EDNS(0)
 * (RFC 7830) gets the record. */
static void test_no_amplification(void **state)
{
	uint8_t q[DNS_QUERY_MAX], out[DNS_UDP_MAX];
	static const uint16_t types[] = { DNS_TYPE_A, DNS_TYPE_AAAA, DNS_TYPE_TXT };
	struct dns_reply r;
	struct addrs a;
	struct dns_zone z = zone();

	(void)state;
	addrs_init(&a);
	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		for (int v6 = 0; v6 <= 1; v6++) {
			const struct sockaddr *loc = v6 ? sa(&a.local6) : sa(&a.local4);
			const struct sockaddr *peer = v6 ? sa(&a.peer6) : sa(&a.peer4);
			size_t qn = query(q, 7, "x." ZONE, types[t]), qp, n;

			n = dns_answer(&z, q, qn, loc, peer, out, sizeof(out));
			assert_true(n > 0 && n <= qn);
			assert_int_equal(dns_parse_reply(out, n, q, qn, &r), DNS_REPLY_OK);
			assert_int_equal(r.rcode, DNS_RCODE_NOERROR);
			assert_int_equal(r.answers, 0);
			qp = dns_query_pad(q, qn, sizeof(q));
			assert_int_equal(qp, qn + DNS_PAD_OPT_LEN);
			if ((types[t] == DNS_TYPE_A && v6) || (types[t] == DNS_TYPE_AAAA && !v6))
				continue; /* no such local address: no record to make room for */
			n = dns_answer(&z, q, qp, loc, peer, out, sizeof(out));
			assert_true(n > qn && n <= qp);
			assert_int_equal(dns_parse_reply(out, n, q, qp, &r), DNS_REPLY_OK);
			assert_int_equal(r.tc, 0);
			assert_int_equal(r.answers, 1);
		}
	}
	/* The largest answer (TXT of an IPv6 peer) cut to the query's size, flagged TC. */
	{
		size_t qn = query(q, 8, "x." ZONE, DNS_TYPE_TXT);
		size_t n = dns_answer(&z, q, qn, sa(&a.local6), sa(&a.peer6), out, sizeof(out));

		assert_int_equal(n, qn);
		assert_int_equal(dns_parse_reply(out, n, q, qn, &r), DNS_REPLY_OK);
		assert_int_equal(r.tc, 1);
	}
	/* No room for the padding: nothing. */
	assert_int_equal(dns_query_pad(q, 30, 30 + DNS_PAD_OPT_LEN - 1), 0);
}

static void test_responder_header(void **state)
{
	uint8_t q[DNS_QUERY_MAX + 16], out[DNS_UDP_MAX];
	struct addrs a;
	size_t qn, n;

	addrs_init(&a);
	qn = query(q, 0x5150, "x." ZONE, DNS_TYPE_A);
	/* QR=1: never answered */
	q[2] |= 0x80;
	assert_int_equal(ask(q, qn, sa(&a.local4), sa(&a.peer4), out), 0);
	q[2] &= 0x7f;
	/* opcode != 0: NOTIMP, header only, opcode echoed */
	q[2] |= 2 << 3; /* STATUS */
	n = ask(q, qn, sa(&a.local4), sa(&a.peer4), out);
	assert_int_equal(n, DNS_HDR_LEN);
	assert_int_equal(bytes_be16(out), 0x5150);
	assert_int_equal(out[3] & 0xf, DNS_RCODE_NOTIMP);
	assert_int_equal((out[2] >> 3) & 0xf, 2);
	assert_int_equal(bytes_be16(out + 4), 0);
	q[2] &= (uint8_t)~(0xf << 3);
	/* qdcount 0 or 2: FORMERR, header only */
	q[5] = 0;
	n = ask(q, qn, sa(&a.local4), sa(&a.peer4), out);
	assert_int_equal(n, DNS_HDR_LEN);
	assert_int_equal(out[3] & 0xf, DNS_RCODE_FORMERR);
	q[5] = 2;
	n = ask(q, qn, sa(&a.local4), sa(&a.peer4), out);
	assert_int_equal(out[3] & 0xf, DNS_RCODE_FORMERR);
	q[5] = 1;
	/* shorter than a header: nothing */
	assert_int_equal(ask(q, 11, sa(&a.local4), sa(&a.peer4), out), 0);
	/* a compression pointer in the question: FORMERR */
	{
		static const uint8_t ptrq[] = { 0, 9, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0,
						0xc0, 0, 0, 1, 0, 1 };

		n = ask(ptrq, sizeof(ptrq), sa(&a.local4), sa(&a.peer4), out);
		assert_int_equal(n, DNS_HDR_LEN);
		assert_int_equal(out[3] & 0xf, DNS_RCODE_FORMERR);
	}
	/* EDNS: an OPT record in the additional section is accepted and not echoed */
	{
		static const uint8_t opt[] = { 0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0 };

		memcpy(q + qn, opt, sizeof(opt));
		q[11] = 1;
		/* 11 bytes do not make room for the 16-byte A record: the question, TC set */
		n = ask(q, qn + sizeof(opt), sa(&a.local4), sa(&a.peer4), out);
		assert_int_equal(n, qn);
		assert_true(out[2] & 0x02);
		assert_int_equal(out[3] & 0xf, DNS_RCODE_NOERROR);
		assert_int_equal(bytes_be16(out + 10), 0); /* ARCOUNT */
		q[11] = 0;
	}
}

/* Every answer stays within min(qlen + 64, 512), also for the longest names and the longest
 * TXT text; and a too small buffer gets nothing rather than a partial answer. */
static void test_size_bound(void **state)
{
	uint8_t q[DNS_QUERY_MAX], out[DNS_UDP_MAX];
	char name[300];
	struct addrs a;
	struct dns_zone z = zone();
	size_t qn, qp, n, zl = strlen(ZONE);
	static const uint16_t types[] = { DNS_TYPE_A, DNS_TYPE_AAAA, DNS_TYPE_TXT, 15, DNS_TYPE_ANY };

	addrs_init(&a);
	set_v6(&a.peer6, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe", 1); /* 39 characters */
	/* one label of every length 1..63 below the apex, and a long deep name */
	for (size_t len = 1; len <= 63; len++) {
		memset(name, 'a', len);
		name[len] = '.';
		memcpy(name + len + 1, ZONE, zl + 1);
		for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
			qn = query(q, 1, name, types[t]);
	qp = dns_query_pad(q, qn, sizeof(q));
			n = ask(q, qp, sa(&a.local6), sa(&a.peer6), out);
			assert_true(n > 0);
			n = ask(q, qp, sa(&a.local4), sa(&a.peer_mapped), out);
			assert_true(n > 0);
		}
	}
	/* The largest answer: TXT of a 39-character IPv6 address = question + 12 + 40. */
	qn = query(q, 1, "x." ZONE, DNS_TYPE_TXT);
	qp = dns_query_pad(q, qn, sizeof(q));
	n = ask(q, qp, sa(&a.local6), sa(&a.peer6), out);
	assert_int_equal(n, qn + 52);
	/* too small a buffer: nothing */
	assert_int_equal(dns_answer(&z, q, qn, sa(&a.local6), sa(&a.peer6), out, qn + 10), 0);
	assert_int_equal(dns_answer(&z, q, qn, sa(&a.local6), sa(&a.peer6), out, 11), 0);
}

/* Every prefix of a valid message, and random bytes: no crash, no read past the end (ASan),
 * the size bound holds, and a cut reply is never accepted. */
static void test_truncated_and_garbage(void **state)
{
	uint8_t q[DNS_QUERY_MAX], out[DNS_UDP_MAX], buf[600];
	struct dns_reply r;
	struct addrs a;
	size_t qn, n;
	unsigned int seed = 12345;

	addrs_init(&a);
	qn = query(q, 77, "x." ZONE, DNS_TYPE_TXT);
	n = ask(q, qn, sa(&a.local4), sa(&a.peer4), out);
	for (size_t len = 0; len < n; len++) {
		uint8_t *cut = malloc(len ? len : 1);
		uint8_t junk[DNS_UDP_MAX];

		assert_non_null(cut);
		memcpy(cut, out, len);
		assert_int_not_equal(dns_parse_reply(cut, len, q, qn, &r), DNS_REPLY_OK);
		free(cut);
		cut = malloc(len ? len : 1);
		assert_non_null(cut);
		memcpy(cut, q, len < qn ? len : qn);
		(void)ask(cut, len < qn ? len : qn, sa(&a.local4), sa(&a.peer4), junk);
		free(cut);
	}
	assert_int_equal(dns_parse_reply(out, n, q, qn, &r), DNS_REPLY_OK);
	for (int i = 0; i < 20000; i++) {
		size_t len = (size_t)(rand_r(&seed) % (int)sizeof(buf));

		for (size_t k = 0; k < len; k++)
			buf[k] = (uint8_t)rand_r(&seed);
		if (i & 1) {
			buf[2] = 0x81; /* mostly a reply header ... */
			buf[4] = 0;
			buf[5] = 1;
			memcpy(buf, q, 2); /* ... with our id */
		}
		(void)dns_parse_reply(buf, len, q, qn, &r);
		buf[2] &= 0x07; /* a query, opcode 0 */
		(void)ask(buf, len, sa(&a.local6), sa(&a.peer6), out);
	}
}

static void test_resolv_conf(void **state)
{
	char addr[64], small[8];
	static const char conf1[] = "# generated\n; comment\nsearch example.com\n"
				    "options ndots:2\nnameserver 192.0.2.53\nnameserver 192.0.2.54\n";
	static const char conf2[] = "  nameserver\t2001:db8::1  # primary\n";
	static const char conf3[] = "nameserver fe80::1%eth0";
	static const char conf4[] = "nameserver not-an-address\nnameserver 198.51.100.1";
	static const char conf5[] = "nameservers 192.0.2.1\nnameserver\nnameserver \n";
	static const char conf6[] = "nameserver 203.0.113.99";

	assert_int_equal(dns_system_resolver(conf1, strlen(conf1), addr, sizeof(addr)), 0);
	assert_string_equal(addr, "192.0.2.53");
	assert_int_equal(dns_system_resolver(conf2, strlen(conf2), addr, sizeof(addr)), 0);
	assert_string_equal(addr, "2001:db8::1");
	assert_int_equal(dns_system_resolver(conf3, strlen(conf3), addr, sizeof(addr)), 0);
	assert_string_equal(addr, "fe80::1%eth0");
	assert_int_equal(dns_system_resolver(conf4, strlen(conf4), addr, sizeof(addr)), 0);
	assert_string_equal(addr, "198.51.100.1");
	assert_int_equal(dns_system_resolver(conf5, strlen(conf5), addr, sizeof(addr)), -1);
	assert_int_equal(dns_system_resolver("", 0, addr, sizeof(addr)), -1);
	/* not NUL-terminated: only len bytes count ("203.0.113.99" cut to "203.0.113.9") */
	assert_int_equal(dns_system_resolver(conf6, strlen(conf6) - 1, addr, sizeof(addr)), 0);
	assert_string_equal(addr, "203.0.113.9");
	assert_int_equal(dns_system_resolver(conf6, 12, addr, sizeof(addr)), -1);
	/* does not fit the caller's buffer */
	assert_int_equal(dns_system_resolver(conf6, strlen(conf6), small, sizeof(small)), -1);
	/* a NUL inside the address */
	assert_int_equal(dns_system_resolver("nameserver 1.2.3.4\0x\n", 21, addr, sizeof(addr)), -1);
}

static void test_ratelimit(void **state)
{
	static struct dns_ratelimit rl;
	struct sockaddr_storage a, b, a_mapped, v6a, v6b, v6other;
	int64_t t = 1000 * NS_PER_SEC;
	int allowed = 0;

	set_v4(&a, "198.51.100.7", 1);
	set_v4(&b, "198.51.100.9", 1);
	set_v6(&a_mapped, "::ffff:198.51.100.7", 2);
	set_v6(&v6a, "2001:db8:1:2::1", 1);
	set_v6(&v6b, "2001:db8:1:2:ffff::1", 1);
	set_v6(&v6other, "2001:db8:1:3::1", 1);
	dns_ratelimit_init(&rl, 0x0123456789abcdefULL);
	/* a burst of DNS_RL_BURST at one instant, then nothing */
	for (int i = 0; i < 2 * DNS_RL_BURST; i++)
		allowed += dns_ratelimit_allow(&rl, sa(&a), t);
	assert_int_equal(allowed, DNS_RL_BURST);
	/* the same host through a mapped address shares the bucket */
	assert_false(dns_ratelimit_allow(&rl, sa(&a_mapped), t));
	/* another host is not affected (these two do not share a bucket with this key) */
	assert_true(dns_ratelimit_allow(&rl, sa(&b), t));
	/* one query more per 1/DNS_RL_RATE s */
	assert_false(dns_ratelimit_allow(&rl, sa(&a), t + NS_PER_SEC / DNS_RL_RATE - 1));
	assert_true(dns_ratelimit_allow(&rl, sa(&a), t + NS_PER_SEC / DNS_RL_RATE));
	assert_false(dns_ratelimit_allow(&rl, sa(&a), t + NS_PER_SEC / DNS_RL_RATE));
	/* a steady DNS_RL_RATE per second passes in full */
	allowed = 0;
	t += 10 * NS_PER_SEC;
	for (int i = 0; i < 10 * DNS_RL_RATE; i++)
		allowed += dns_ratelimit_allow(&rl, sa(&a),
					       t + (int64_t)i * (NS_PER_SEC / DNS_RL_RATE));
	assert_int_equal(allowed, 10 * DNS_RL_RATE);
	/* IPv6: one /64 is one source */
	allowed = 0;
	for (int i = 0; i < DNS_RL_BURST; i++)
		allowed += dns_ratelimit_allow(&rl, sa(&v6a), t);
	assert_int_equal(allowed, DNS_RL_BURST);
	assert_false(dns_ratelimit_allow(&rl, sa(&v6b), t));
	assert_true(dns_ratelimit_allow(&rl, sa(&v6other), t));
}

/* The scripted server: answers the probe's k-th query as the test needs. */
static void fake_server_answer(int fd, int k, const struct sockaddr_storage *peer, socklen_t plen,
			       const uint8_t *q, size_t qn)
{
	static const uint8_t garbage[] = { 'x', 'y', 'z' };
	struct sockaddr_storage local;
	struct dns_zone z = zone();
	uint8_t out[DNS_UDP_MAX];
	size_t n;

	set_v4(&local, "127.0.0.1", 0);
	n = dns_answer(&z, q, qn, sa(&local), sa(peer), out, sizeof(out));
	assert_true(n > DNS_HDR_LEN);
	switch (k) {
	case 0: /* garbage first (bad), then the answer */
		assert_int_equal(sendto(fd, garbage, sizeof(garbage), 0, (const struct sockaddr *)peer,
					plen), sizeof(garbage));
		break;
	case 1: /* only an answer with another id (bad): lost */
		out[1] ^= 0x5a;
		break;
	case 2: /* SERVFAIL: an error */
		out[3] = (uint8_t)((out[3] & 0xf0) | DNS_RCODE_SERVFAIL);
		break;
	case 3: /* NXDOMAIN: an answer */
		out[3] = (uint8_t)((out[3] & 0xf0) | DNS_RCODE_NXDOMAIN);
		break;
	case 4: /* twice: the duplicate is ignored, not bad */
		assert_int_equal(sendto(fd, out, n, 0, (const struct sockaddr *)peer, plen),
				 (ssize_t)n);
		break;
	default:
		return; /* no answer: lost */
	}
	assert_int_equal(sendto(fd, out, n, 0, (const struct sockaddr *)peer, plen), (ssize_t)n);
}

static void test_probe_scripted_server(void **state)
{
	struct dns_probe_config cfg;
	struct probe_series ps;
	struct probe_runner *r;
	struct dns_probe *p;
	struct sockaddr_storage srv;
	socklen_t slen = sizeof(srv);
	char err[256];
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int k = 0;

	assert_true(fd >= 0);
	set_v4(&srv, "127.0.0.1", 0);
	assert_int_equal(bind(fd, sa(&srv), sizeof(struct sockaddr_in)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&srv, &slen), 0);
	memset(&cfg, 0, sizeof(cfg));
	cfg.server = srv;
	cfg.server_len = slen;
	snprintf(cfg.zone, sizeof(cfg.zone), "%s", ZONE);
	cfg.interval_ns = 20 * NS_PER_MS;
	cfg.timeout_ns = 150 * NS_PER_MS;
	cfg.dscp = -1;
	series_init(&ps, "dns", "");
	r = runner_new(err, sizeof(err));
	assert_non_null(r);
	p = dns_probe_start(runner_base(r), &cfg, &ps, err, sizeof(err));
	assert_non_null(p);
	assert_int_equal(runner_add(r, p, &dns_probe_ops), 0);
	assert_int_equal(runner_start(r, err, sizeof(err)), 0);
	while (k < 8) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		struct sockaddr_storage peer;
		socklen_t plen = sizeof(peer);
		uint8_t q[DNS_UDP_MAX];
		ssize_t n;

		assert_int_equal(poll(&pfd, 1, 2000), 1);
		n = recvfrom(fd, q, sizeof(q), 0, (struct sockaddr *)&peer, &plen);
		assert_true(n > DNS_HDR_LEN);
		/* names are <seq>-<8 hex>.<zone>, the k-th query carries seq k */
		assert_int_equal(q[DNS_HDR_LEN + 1], '0' + k);
		assert_int_equal(q[DNS_HDR_LEN + 2], '-');
		fake_server_answer(fd, k++, &peer, plen, q, (size_t)n);
	}
	runner_stop(r, 300 * NS_PER_MS);
	runner_free(r);
	close(fd);
	assert_true(ps.n >= 8);
	assert_string_equal(ps.method, "udp");
	assert_int_equal(ps.available, 1);
	assert_int_equal(ps.s[0].status, SAMPLE_OK);
	assert_int_equal(ps.s[0].aux, DNS_RCODE_NOERROR);
	assert_true(ps.s[0].rtt_ns > 0 && ps.s[0].rtt_ns < 100 * NS_PER_MS);
	assert_int_equal(ps.s[1].status, SAMPLE_LOST);
	assert_int_equal(ps.s[2].status, SAMPLE_ERROR);
	assert_int_equal(ps.s[2].aux, DNS_RCODE_SERVFAIL);
	assert_int_equal(ps.s[3].status, SAMPLE_OK);
	assert_int_equal(ps.s[3].aux, DNS_RCODE_NXDOMAIN);
	assert_int_equal(ps.s[4].status, SAMPLE_OK);
	for (size_t i = 5; i < ps.n; i++)
		assert_int_equal(ps.s[i].status, SAMPLE_LOST);
	assert_int_equal(ps.bad_replies, 2);
	series_free(&ps);
}

/* A zone too long for probe names, and no server address: refused with a reason. */
static void test_probe_bad_config(void **state)
{
	struct dns_probe_config cfg;
	struct probe_series ps;
	char err[256];
	struct probe_runner *r = runner_new(err, sizeof(err));

	assert_non_null(r);
	memset(&cfg, 0, sizeof(cfg));
	set_v4(&cfg.server, "127.0.0.1", 53);
	cfg.server_len = sizeof(struct sockaddr_in);
	cfg.interval_ns = cfg.timeout_ns = NS_PER_SEC;
	cfg.dscp = -1;
	for (int i = 0; i < 230; i++)
		cfg.zone[i] = (i % 50 == 49) ? '.' : 'a';
	series_init(&ps, "dns", "");
	assert_null(dns_probe_start(runner_base(r), &cfg, &ps, err, sizeof(err)));
	assert_int_equal(ps.available, 0);
	assert_true(strstr(ps.note, "zone") != NULL);
	snprintf(cfg.zone, sizeof(cfg.zone), "%s", ZONE);
	cfg.server.ss_family = AF_UNIX;
	assert_null(dns_probe_start(runner_base(r), &cfg, &ps, err, sizeof(err)));
	runner_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_build_query),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_reply_mismatch),
		cmocka_unit_test(test_compression),
		cmocka_unit_test(test_pointer_chain),
		cmocka_unit_test(test_responder_rules),
		cmocka_unit_test(test_responder_addresses),
		cmocka_unit_test(test_responder_header),
		cmocka_unit_test(test_no_amplification),
		cmocka_unit_test(test_size_bound),
		cmocka_unit_test(test_truncated_and_garbage),
		cmocka_unit_test(test_resolv_conf),
		cmocka_unit_test(test_ratelimit),
		cmocka_unit_test(test_probe_scripted_server),
		cmocka_unit_test(test_probe_bad_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

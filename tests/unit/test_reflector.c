/* test_reflector: who the UDP reflector answers (and how), against a real session table; and
 * the client's named checks on a reply. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/clock.h"
#include "common/wire.h"
#include "probes/udp.h"
#include "server/ctx.h"
#include "server/reflector.h"
#include "server/session.h"

struct fixture {
	struct session_table table;
	struct server_counters counters;
	struct sockaddr_storage client4, other4, mapped4, client6, other6;
};

static const uint8_t tok_a[WIRE_TOKEN_LEN] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
static const uint8_t tok_b[WIRE_TOKEN_LEN] = { 0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7,
					       0xb8, 0xb9, 0xba, 0xbb, 0xbc, 0xbd, 0xbe, 0xbf };
static const uint8_t tok_c[WIRE_TOKEN_LEN] = { 0xc0 };

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

static int setup(void **state)
{
	static struct fixture f;

	memset(&f, 0, sizeof(f));
	if (session_table_init(&f.table, 4) != 0)
		return -1;
	set_v4(&f.client4, "192.0.2.1", 40000);
	set_v4(&f.other4, "192.0.2.2", 40000);
	set_v6(&f.mapped4, "::ffff:192.0.2.1", 50000);
	set_v6(&f.client6, "2001:db8::1", 40000);
	set_v6(&f.other6, "2001:db8::2", 40000);
	if (session_table_add(&f.table, tok_a, (struct sockaddr *)&f.client4) != 0 ||
	    session_table_add(&f.table, tok_b, (struct sockaddr *)&f.client6) != 0)
		return -1;
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	session_table_free(&f->table);
	return 0;
}

/* A request of len bytes with the given token and sequence number; padding is 0xAA. */
static void make_request(uint8_t *buf, size_t len, const uint8_t *tok, uint32_t seq,
			 uint8_t kind)
{
	struct wire_probe p;

	memset(&p, 0, sizeof(p));
	p.kind = kind;
	memcpy(p.token, tok, WIRE_TOKEN_LEN);
	p.seq = seq;
	p.client_send_ns = 1000000000LL + seq;
	wire_probe_encode(&p, buf, len);
	memset(buf + WIRE_PROBE_MIN, 0xaa, len - WIRE_PROBE_MIN);
}

static size_t answer(struct fixture *f, const uint8_t *req, size_t len,
		     const struct sockaddr_storage *src, int64_t rx, uint8_t *reply)
{
	return reflector_answer(&f->table, &f->counters, req, len, (const struct sockaddr *)src, rx,
				reply);
}

static void test_valid_request(void **state)
{
	struct fixture *f = *state;
	uint8_t req[200], reply[WIRE_PROBE_MAX];
	struct wire_probe w;

	for (uint32_t seq = 0; seq < 3; seq++) {
		int64_t rx = clock_mono_ns();

		make_request(req, sizeof(req), tok_a, seq, WIRE_PROBE_REQ);
		memset(reply, 0x55, sizeof(reply));
		assert_int_equal(answer(f, req, sizeof(req), &f->client4, rx, reply), sizeof(req));
		assert_int_equal(wire_probe_decode(reply, sizeof(req), &w), 0);
		assert_int_equal(w.kind, WIRE_PROBE_REPLY);
		assert_memory_equal(w.token, tok_a, WIRE_TOKEN_LEN);
		assert_int_equal(w.seq, seq);
		assert_true(w.client_send_ns == 1000000000LL + seq);
		assert_true(w.server_rx_ns == rx);
		assert_true(w.server_tx_ns >= w.server_rx_ns);
		assert_int_equal(w.server_rx_count, seq + 1);
		/* the reflector does not echo the client's padding */
		for (size_t i = WIRE_PROBE_MIN; i < sizeof(req); i++)
			assert_int_equal(reply[i], 0);
		/* and writes nothing past the request length */
		assert_int_equal(reply[sizeof(req)], 0x55);
	}
	assert_int_equal(session_table_probe_count(&f->table, tok_a), 3);
	assert_int_equal(atomic_load(&f->counters.udp_bad), 0);
	assert_int_equal(atomic_load(&f->counters.udp_unknown), 0);
}

/* Same length in, same length out, for the extreme sizes. */
static void test_reply_length(void **state)
{
	struct fixture *f = *state;
	uint8_t req[WIRE_PROBE_MAX + 1], reply[WIRE_PROBE_MAX + 1];

	make_request(req, WIRE_PROBE_MIN, tok_a, 1, WIRE_PROBE_REQ);
	assert_int_equal(answer(f, req, WIRE_PROBE_MIN, &f->client4, 1, reply), WIRE_PROBE_MIN);
	make_request(req, WIRE_PROBE_MAX, tok_a, 2, WIRE_PROBE_REQ);
	assert_int_equal(answer(f, req, WIRE_PROBE_MAX, &f->client4, 1, reply), WIRE_PROBE_MAX);
	/* too long and too short: never answered */
	make_request(req, WIRE_PROBE_MAX + 1, tok_a, 3, WIRE_PROBE_REQ);
	assert_int_equal(answer(f, req, WIRE_PROBE_MAX + 1, &f->client4, 1, reply), 0);
	assert_int_equal(answer(f, req, WIRE_PROBE_MIN - 1, &f->client4, 1, reply), 0);
	assert_int_equal(atomic_load(&f->counters.udp_bad), 2);
	assert_int_equal(session_table_probe_count(&f->table, tok_a), 2);
}

static void test_wrong_token(void **state)
{
	struct fixture *f = *state;
	uint8_t req[100], reply[100];

	make_request(req, sizeof(req), tok_c, 0, WIRE_PROBE_REQ);
	assert_int_equal(answer(f, req, sizeof(req), &f->client4, 1, reply), 0);
	assert_int_equal(atomic_load(&f->counters.udp_unknown), 1);
	assert_int_equal(atomic_load(&f->counters.udp_bad), 0);
	/* tok_b is live, but registered for the IPv6 client */
	make_request(req, sizeof(req), tok_b, 0, WIRE_PROBE_REQ);
	assert_int_equal(answer(f, req, sizeof(req), &f->client4, 1, reply), 0);
	assert_int_equal(atomic_load(&f->counters.udp_unknown), 2);
	assert_int_equal(session_table_probe_count(&f->table, tok_a), 0);
	assert_int_equal(session_table_probe_count(&f->table, tok_b), 0);
}

static void test_other_address(void **state)
{
	struct fixture *f = *state;
	uint8_t req[100], reply[100];

	make_request(req, sizeof(req), tok_a, 0, WIRE_PROBE_REQ);
	assert_int_equal(answer(f, req, sizeof(req), &f->other4, 1, reply), 0);
	assert_int_equal(answer(f, req, sizeof(req), &f->other6, 1, reply), 0);
	assert_int_equal(answer(f, req, sizeof(req), &f->client6, 1, reply), 0);
	make_request(req, sizeof(req), tok_b, 0, WIRE_PROBE_REQ);
	assert_int_equal(answer(f, req, sizeof(req), &f->other6, 1, reply), 0);
	assert_int_equal(atomic_load(&f->counters.udp_unknown), 4);
	assert_int_equal(session_table_probe_count(&f->table, tok_a), 0);
	assert_int_equal(session_table_probe_count(&f->table, tok_b), 0);
	/* the session's IP from another port is the same client */
	{
		struct sockaddr_storage port2;

		set_v4(&port2, "192.0.2.1", 1);
		make_request(req, sizeof(req), tok_a, 0, WIRE_PROBE_REQ);
		assert_int_equal(answer(f, req, sizeof(req), &port2, 1, reply), sizeof(req));
	}
}

static void test_garbage(void **state)
{
	struct fixture *f = *state;
	uint8_t req[100], reply[100];

	memset(req, 0x41, sizeof(req));
	assert_int_equal(answer(f, req, sizeof(req), &f->client4, 1, reply), 0);
	assert_int_equal(atomic_load(&f->counters.udp_bad), 1);
	/* valid except for the version byte */
	make_request(req, sizeof(req), tok_a, 0, WIRE_PROBE_REQ);
	req[4] ^= 0xff;
	assert_int_equal(answer(f, req, sizeof(req), &f->client4, 1, reply), 0);
	assert_int_equal(atomic_load(&f->counters.udp_bad), 2);
	assert_int_equal(atomic_load(&f->counters.udp_unknown), 0);
	assert_int_equal(session_table_probe_count(&f->table, tok_a), 0);
}

/* A reply must never be reflected, even with a valid token from the right address:
 * otherwise two reflectors could be made to bounce packets between them forever. */
static void test_never_reflect_replies(void **state)
{
	struct fixture *f = *state;
	uint8_t req[100], reply[100];

	make_request(req, sizeof(req), tok_a, 0, WIRE_PROBE_REPLY);
	assert_int_equal(answer(f, req, sizeof(req), &f->client4, 1, reply), 0);
	assert_int_equal(session_table_probe_count(&f->table, tok_a), 0);
	assert_int_equal(atomic_load(&f->counters.udp_bad) + atomic_load(&f->counters.udp_unknown), 1);
}

/* A dual-stack socket sees IPv4 clients as ::ffff:a.b.c.d. */
static void test_mapped_ipv4(void **state)
{
	struct fixture *f = *state;
	uint8_t req[100], reply[100];
	struct wire_probe w;

	make_request(req, sizeof(req), tok_a, 7, WIRE_PROBE_REQ);
	assert_int_equal(answer(f, req, sizeof(req), &f->mapped4, 5, reply), sizeof(req));
	assert_int_equal(wire_probe_decode(reply, sizeof(req), &w), 0);
	assert_int_equal(w.server_rx_count, 1);
	/* ... and the other way round: registered as mapped, probing over plain IPv4 */
	session_table_remove(&f->table, tok_a);
	assert_int_equal(session_table_add(&f->table, tok_a, (struct sockaddr *)&f->mapped4), 0);
	assert_int_equal(answer(f, req, sizeof(req), &f->client4, 5, reply), sizeof(req));
	/* a mapped address of another IPv4 host does not match */
	{
		struct sockaddr_storage m2;

		set_v6(&m2, "::ffff:192.0.2.2", 1);
		assert_int_equal(answer(f, req, sizeof(req), &m2, 5, reply), 0);
	}
}

static void test_ipv6_session(void **state)
{
	struct fixture *f = *state;
	uint8_t req[100], reply[100];
	struct wire_probe w;

	make_request(req, sizeof(req), tok_b, 3, WIRE_PROBE_REQ);
	assert_int_equal(answer(f, req, sizeof(req), &f->client6, 9, reply), sizeof(req));
	assert_int_equal(wire_probe_decode(reply, sizeof(req), &w), 0);
	assert_memory_equal(w.token, tok_b, WIRE_TOKEN_LEN);
	assert_int_equal(w.server_rx_count, 1);
	assert_int_equal(session_table_probe_count(&f->table, tok_a), 0);
}

/* Counts are per session, and a removed session is never answered again. */
static void test_counts_and_removal(void **state)
{
	struct fixture *f = *state;
	uint8_t req[100], reply[100];
	struct wire_probe w;

	make_request(req, sizeof(req), tok_a, 0, WIRE_PROBE_REQ);
	for (int i = 0; i < 5; i++)
		assert_int_equal(answer(f, req, sizeof(req), &f->client4, 1, reply), sizeof(req));
	make_request(req, sizeof(req), tok_b, 0, WIRE_PROBE_REQ);
	assert_int_equal(answer(f, req, sizeof(req), &f->client6, 1, reply), sizeof(req));
	assert_int_equal(wire_probe_decode(reply, sizeof(req), &w), 0);
	assert_int_equal(w.server_rx_count, 1);
	assert_int_equal(session_table_probe_count(&f->table, tok_a), 5);

	session_table_remove(&f->table, tok_a);
	make_request(req, sizeof(req), tok_a, 0, WIRE_PROBE_REQ);
	assert_int_equal(answer(f, req, sizeof(req), &f->client4, 1, reply), 0);
	assert_int_equal(atomic_load(&f->counters.udp_unknown), 1);
	assert_int_equal(session_table_probe_count(&f->table, tok_a), 0);
}

/* ---- client side: named checks on a reply ---- */

static struct wire_probe good_reply(void)
{
	struct wire_probe w;

	memset(&w, 0, sizeof(w));
	w.kind = WIRE_PROBE_REPLY;
	memcpy(w.token, tok_a, WIRE_TOKEN_LEN);
	w.seq = 9;
	w.server_rx_ns = 1000;
	w.server_tx_ns = 1500;
	w.server_rx_count = 3;
	return w;
}

static void test_reply_valid(void **state)
{
	struct wire_probe w = good_reply();

	assert_true(udp_probe_reply_valid(&w, tok_a, 10, 200, 200));
	/* a request bounced back */
	w.kind = WIRE_PROBE_REQ;
	assert_false(udp_probe_reply_valid(&w, tok_a, 10, 200, 200));
	/* another session's token */
	w = good_reply();
	assert_false(udp_probe_reply_valid(&w, tok_b, 10, 200, 200));
	/* a sequence number not sent yet: 9 is the 10th probe */
	assert_false(udp_probe_reply_valid(&w, tok_a, 9, 200, 200));
	assert_false(udp_probe_reply_valid(&w, tok_a, 0, 200, 200));
	w.seq = UINT32_MAX;
	assert_false(udp_probe_reply_valid(&w, tok_a, 10, 200, 200));
	/* size changed on the way, either way */
	w = good_reply();
	assert_false(udp_probe_reply_valid(&w, tok_a, 10, 201, 200));
	assert_false(udp_probe_reply_valid(&w, tok_a, 10, 199, 200));
	/* negative server hold time */
	w.server_tx_ns = w.server_rx_ns - 1;
	assert_false(udp_probe_reply_valid(&w, tok_a, 10, 200, 200));
	/* zero hold time is fine */
	w.server_tx_ns = w.server_rx_ns;
	assert_true(udp_probe_reply_valid(&w, tok_a, 10, 200, 200));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_valid_request, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reply_length, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_token, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_address, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_never_reflect_replies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mapped_ipv4, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ipv6_session, setup, teardown),
		cmocka_unit_test_setup_teardown(test_counts_and_removal, setup, teardown),
		cmocka_unit_test(test_reply_valid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

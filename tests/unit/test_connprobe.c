/* test_connprobe: the connect-probe request and response codecs — exact layout, round trips,
 * and every way a request or answer can be wrong — and the server's verdict on a request
 * (token, client IP, per-session rate and open limits). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <arpa/inet.h>

#include "common/clock.h"
#include "common/wire.h"
#include "server/connprobe.h"
#include "server/ctx.h"

static const uint8_t tok_a[WIRE_TOKEN_LEN] = { 0x00, 0x01, 0x7f, 0x80, 0xff, 0x10, 0x20, 0x30,
					       0xde, 0xad, 0xbe, 0xef, 0xca, 0xfe, 0xba, 0xbe };

static struct wire_connprobe_req sample_req(void)
{
	struct wire_connprobe_req r;

	memset(&r, 0, sizeof(r));
	r.version = WIRE_VERSION;
	memcpy(r.token, tok_a, WIRE_TOKEN_LEN);
	r.seq = 0xfedcba98u;
	return r;
}

static void test_req_layout(void **state)
{
	struct wire_connprobe_req in = sample_req();
	uint8_t buf[WIRE_CONNPROBE_REQ_LEN];
	static const uint8_t head[8] = { 'B', 'M', 'C', '1', WIRE_VERSION, 0, 0, 0 };
	static const uint8_t seq[4] = { 0xfe, 0xdc, 0xba, 0x98 };
	static const uint8_t zero[4] = { 0, 0, 0, 0 };

	memset(buf, 0xee, sizeof(buf));
	wire_connprobe_req_encode(&in, buf);
	assert_memory_equal(buf, head, sizeof(head));
	assert_memory_equal(buf + 8, tok_a, WIRE_TOKEN_LEN);
	assert_memory_equal(buf + 24, seq, sizeof(seq));
	assert_memory_equal(buf + 28, zero, sizeof(zero));
	assert_true(wire_is_connprobe_magic(buf, sizeof(buf)));
	assert_false(wire_is_data_magic(buf, sizeof(buf)));
}

static void test_req_round_trip(void **state)
{
	struct wire_connprobe_req in = sample_req(), out;
	uint8_t buf[WIRE_CONNPROBE_REQ_LEN];
	const uint32_t seqs[] = { 0, 1, 0x7fffffffu, UINT32_MAX };

	for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++) {
		in.seq = seqs[i];
		wire_connprobe_req_encode(&in, buf);
		memset(&out, 0x55, sizeof(out));
		assert_int_equal(wire_connprobe_req_decode(buf, sizeof(buf), &out), 0);
		assert_int_equal(out.version, WIRE_VERSION);
		assert_memory_equal(out.token, tok_a, WIRE_TOKEN_LEN);
		assert_int_equal(out.seq, seqs[i]);
	}
}

/* Wrong length, magic, version or any reserved byte: refused, and *out is left alone. */
static void test_req_rejects(void **state)
{
	struct wire_connprobe_req in = sample_req(), out, before;
	uint8_t buf[WIRE_CONNPROBE_REQ_LEN + 1], bad[WIRE_CONNPROBE_REQ_LEN];
	static const size_t reserved[] = { 5, 6, 7, 28, 29, 30, 31 };

	memset(&before, 0x55, sizeof(before));
	out = before;
	wire_connprobe_req_encode(&in, buf);
	buf[WIRE_CONNPROBE_REQ_LEN] = 0;
	assert_int_equal(wire_connprobe_req_decode(buf, WIRE_CONNPROBE_REQ_LEN - 1, &out), -1);
	assert_int_equal(wire_connprobe_req_decode(buf, WIRE_CONNPROBE_REQ_LEN + 1, &out), -1);
	assert_int_equal(wire_connprobe_req_decode(buf, 0, &out), -1);
	for (size_t i = 0; i < 4; i++) { /* every magic byte matters */
		memcpy(bad, buf, sizeof(bad));
		bad[i] ^= 0x20;
		assert_int_equal(wire_connprobe_req_decode(bad, sizeof(bad), &out), -1);
	}
	memcpy(bad, buf, sizeof(bad));
	bad[4] = WIRE_VERSION + 1;
	assert_int_equal(wire_connprobe_req_decode(bad, sizeof(bad), &out), -1);
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
		memcpy(bad, buf, sizeof(bad));
		bad[reserved[i]] = 1;
		assert_int_equal(wire_connprobe_req_decode(bad, sizeof(bad), &out), -1);
	}
	/* a data hello is not a connect probe, nor the other way round */
	{
		struct wire_data_hello h = { .version = WIRE_VERSION, .dir = WIRE_DIR_DOWN };
		struct wire_data_hello hout;

		wire_data_hello_encode(&h, bad);
		assert_int_equal(wire_connprobe_req_decode(bad, sizeof(bad), &out), -1);
		assert_int_equal(wire_data_hello_decode(buf, WIRE_CONNPROBE_REQ_LEN, &hout), -1);
	}
	assert_memory_equal(&out, &before, sizeof(out));
	assert_false(wire_is_connprobe_magic(buf, 3));
}

/* Read as a control length, the magic is 0x424d4331 > WIRE_CTRL_MAX: never a frame. */
static void test_magic_not_a_frame(void **state)
{
	struct wire_connprobe_req in = sample_req();
	uint8_t buf[WIRE_CONNPROBE_REQ_LEN];
	size_t body = 12345;

	wire_connprobe_req_encode(&in, buf);
	assert_int_equal(wire_frame_peek(buf, sizeof(buf), &body), WIRE_FRAME_BAD);
	assert_int_equal(body, 12345);
	assert_true(0x424d4331u > WIRE_CTRL_MAX);
}

static void test_resp(void **state)
{
	uint8_t buf[WIRE_CONNPROBE_RESP_LEN + 1], bad[WIRE_CONNPROBE_RESP_LEN];
	static const uint8_t expect[WIRE_CONNPROBE_RESP_LEN] = { 'B', 'M', 'C', '1',
								 0x01, 0x02, 0x03, 0x04 };
	uint32_t seq = 7;

	/* the server never sends more than it received */
	assert_true(WIRE_CONNPROBE_RESP_LEN < WIRE_CONNPROBE_REQ_LEN);
	memset(buf, 0xee, sizeof(buf));
	wire_connprobe_resp_encode(0x01020304u, buf);
	assert_memory_equal(buf, expect, sizeof(expect));
	assert_int_equal(buf[WIRE_CONNPROBE_RESP_LEN], 0xee); /* writes exactly 8 bytes */
	assert_int_equal(wire_connprobe_resp_decode(buf, WIRE_CONNPROBE_RESP_LEN, &seq), 0);
	assert_int_equal(seq, 0x01020304u);
	wire_connprobe_resp_encode(UINT32_MAX, buf);
	assert_int_equal(wire_connprobe_resp_decode(buf, WIRE_CONNPROBE_RESP_LEN, &seq), 0);
	assert_int_equal(seq, UINT32_MAX);

	seq = 7;
	assert_int_equal(wire_connprobe_resp_decode(buf, WIRE_CONNPROBE_RESP_LEN - 1, &seq), -1);
	assert_int_equal(wire_connprobe_resp_decode(buf, WIRE_CONNPROBE_RESP_LEN + 1, &seq), -1);
	assert_int_equal(wire_connprobe_resp_decode(buf, 0, &seq), -1);
	for (size_t i = 0; i < 4; i++) {
		memcpy(bad, buf, sizeof(bad));
		bad[i] ^= 0x01;
		assert_int_equal(wire_connprobe_resp_decode(bad, sizeof(bad), &seq), -1);
	}
	assert_int_equal(seq, 7);
}

static struct sockaddr_in addr4(const char *ip)
{
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons(40000);
	assert_int_equal(inet_pton(AF_INET, ip, &a.sin_addr), 1);
	return a;
}

static enum connprobe_verdict judge(struct server_ctx *srv, const struct sockaddr_in *from,
				    const uint8_t *tok, uint32_t seq, int64_t now,
				    struct wire_connprobe_req *got)
{
	struct wire_connprobe_req r = sample_req();
	uint8_t buf[WIRE_CONNPROBE_REQ_LEN];
	const char *why = NULL;
	enum connprobe_verdict v;

	memcpy(r.token, tok, WIRE_TOKEN_LEN);
	r.seq = seq;
	wire_connprobe_req_encode(&r, buf);
	v = connprobe_judge(srv, buf, sizeof(buf), (const struct sockaddr *)from, now, got, &why);
	assert_true((v == CONNPROBE_ANSWER) == (why == NULL));
	return v;
}

/* One live session for 192.0.2.1: only its token from its IP is answered. */
static void test_judge_identity(void **state)
{
	struct server_ctx srv;
	struct session s;
	struct sockaddr_in client = addr4("192.0.2.1"), other = addr4("192.0.2.2");
	struct wire_connprobe_req got;
	uint8_t wrong[WIRE_TOKEN_LEN], buf[WIRE_CONNPROBE_REQ_LEN + 1];
	struct wire_connprobe_req r = sample_req();
	const char *why;

	memset(&srv, 0, sizeof(srv));
	memset(&s, 0, sizeof(s));
	memcpy(s.token, tok_a, WIRE_TOKEN_LEN);
	memcpy(&s.peer, &client, sizeof(client));
	srv.sessions = &s;
	memcpy(wrong, tok_a, WIRE_TOKEN_LEN);
	wrong[15] ^= 1;

	assert_int_equal(judge(&srv, &client, tok_a, 42, NS_PER_SEC, &got), CONNPROBE_ANSWER);
	assert_int_equal(got.seq, 42);
	assert_int_equal(s.cprobe_open, 1);
	assert_int_equal(judge(&srv, &other, tok_a, 43, NS_PER_SEC, &got), CONNPROBE_BAD);
	assert_int_equal(judge(&srv, &client, wrong, 44, NS_PER_SEC, &got), CONNPROBE_BAD);
	/* trailing bytes after the request */
	wire_connprobe_req_encode(&r, buf);
	buf[WIRE_CONNPROBE_REQ_LEN] = 0;
	assert_int_equal(connprobe_judge(&srv, buf, sizeof(buf), (struct sockaddr *)&client,
					 NS_PER_SEC, &got, &why),
			 CONNPROBE_BAD);
	/* refusals charge nothing */
	assert_int_equal(s.cprobe_open, 1);
	assert_int_equal(s.cprobe_window_n, 1);
}

/* At most CONNPROBE_RATE_MAX per 1 s window and CONNPROBE_OPEN_MAX open at once. */
static void test_judge_limits(void **state)
{
	struct server_ctx srv;
	struct session s;
	struct sockaddr_in client = addr4("192.0.2.1");
	struct wire_connprobe_req got;
	int64_t t0 = 5 * NS_PER_SEC;
	int answered = 0;

	memset(&srv, 0, sizeof(srv));
	memset(&s, 0, sizeof(s));
	memcpy(s.token, tok_a, WIRE_TOKEN_LEN);
	memcpy(&s.peer, &client, sizeof(client));
	srv.sessions = &s;

	/* open limit: nobody closes */
	for (int i = 0; i < CONNPROBE_OPEN_MAX + 5; i++)
		answered += judge(&srv, &client, tok_a, (uint32_t)i, t0, &got) == CONNPROBE_ANSWER;
	assert_int_equal(answered, CONNPROBE_OPEN_MAX);
	assert_int_equal(judge(&srv, &client, tok_a, 0, t0, &got), CONNPROBE_LIMITED);

	/* rate limit: every connection closes at once, all within one window */
	answered = CONNPROBE_OPEN_MAX;
	for (int i = 0; i < 2 * CONNPROBE_RATE_MAX; i++) {
		s.cprobe_open = 0;
		answered += judge(&srv, &client, tok_a, (uint32_t)i, t0 + NS_PER_SEC - 1, &got) ==
			    CONNPROBE_ANSWER;
	}
	assert_int_equal(answered, CONNPROBE_RATE_MAX);
	/* a new window one second later */
	s.cprobe_open = 0;
	assert_int_equal(judge(&srv, &client, tok_a, 1, t0 + NS_PER_SEC, &got), CONNPROBE_ANSWER);
	assert_int_equal(s.cprobe_window_n, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_req_layout),
		cmocka_unit_test(test_req_round_trip),
		cmocka_unit_test(test_req_rejects),
		cmocka_unit_test(test_magic_not_a_frame),
		cmocka_unit_test(test_resp),
		cmocka_unit_test(test_judge_identity),
		cmocka_unit_test(test_judge_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

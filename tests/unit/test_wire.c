/* test_wire: the probe packet, data hello and control frame codecs, valid and hostile input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/wire.h"

static const uint8_t tok_a[WIRE_TOKEN_LEN] = { 0x00, 0x01, 0x7f, 0x80, 0xff, 0x10, 0x20, 0x30,
					       0xde, 0xad, 0xbe, 0xef, 0xca, 0xfe, 0xba, 0xbe };

static struct wire_probe sample_probe(void)
{
	struct wire_probe p;

	memset(&p, 0, sizeof(p));
	p.kind = WIRE_PROBE_REPLY;
	memcpy(p.token, tok_a, WIRE_TOKEN_LEN);
	p.seq = 0xfedcba98u;
	p.client_send_ns = INT64_MAX;
	p.server_rx_ns = INT64_MIN;
	p.server_tx_ns = -1;
	p.server_rx_count = UINT64_MAX - 1;
	return p;
}

static void assert_probe_equal(const struct wire_probe *a, const struct wire_probe *b)
{
	assert_int_equal(a->kind, b->kind);
	assert_memory_equal(a->token, b->token, WIRE_TOKEN_LEN);
	assert_int_equal(a->seq, b->seq);
	assert_true(a->client_send_ns == b->client_send_ns);
	assert_true(a->server_rx_ns == b->server_rx_ns);
	assert_true(a->server_tx_ns == b->server_tx_ns);
	assert_true(a->server_rx_count == b->server_rx_count);
}

/* ---- probe ---- */

static void test_probe_round_trip(void **state)
{
	struct wire_probe in = sample_probe(), out;
	uint8_t buf[WIRE_PROBE_MAX];
	const size_t sizes[] = { WIRE_PROBE_MIN, 100, WIRE_PROBE_MAX };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		memset(buf, 0xee, sizeof(buf));
		wire_probe_encode(&in, buf, sizes[i]);
		assert_int_equal(wire_probe_decode(buf, sizes[i], &out), 0);
		assert_probe_equal(&in, &out);
		/* padding after the 64-byte header is zeroed */
		for (size_t j = WIRE_PROBE_MIN; j < sizes[i]; j++)
			assert_int_equal(buf[j], 0);
	}
	in.kind = WIRE_PROBE_REQ;
	in.client_send_ns = 123456789012345LL;
	in.server_rx_ns = 0;
	in.server_tx_ns = 0;
	in.server_rx_count = 0;
	wire_probe_encode(&in, buf, 200);
	assert_int_equal(wire_probe_decode(buf, 200, &out), 0);
	assert_probe_equal(&in, &out);
}

/* The header layout is fixed: magic "BMP1", version, kind, token at 8, big-endian fields. */
static void test_probe_layout(void **state)
{
	struct wire_probe in = sample_probe();
	uint8_t buf[WIRE_PROBE_MIN];

	in.seq = 0x01020304;
	in.client_send_ns = 0x0102030405060708LL;
	wire_probe_encode(&in, buf, sizeof(buf));
	assert_memory_equal(buf, "BMP1", 4);
	assert_int_equal(buf[4], WIRE_VERSION);
	assert_int_equal(buf[5], WIRE_PROBE_REPLY);
	assert_memory_equal(buf + 8, tok_a, WIRE_TOKEN_LEN);
	assert_memory_equal(buf + 24, "\x01\x02\x03\x04", 4);
	assert_memory_equal(buf + 32, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
}

static void test_probe_rejects(void **state)
{
	struct wire_probe in = sample_probe(), out;
	uint8_t buf[WIRE_PROBE_MAX + 1], bad[WIRE_PROBE_MAX + 1];

	wire_probe_encode(&in, buf, sizeof(buf));
	/* sizes: 64..1400 only */
	assert_int_equal(wire_probe_decode(buf, WIRE_PROBE_MIN - 1, &out), -1);
	assert_int_equal(wire_probe_decode(buf, WIRE_PROBE_MAX + 1, &out), -1);
	assert_int_equal(wire_probe_decode(buf, 0, &out), -1);
	assert_int_equal(wire_probe_decode(buf, WIRE_PROBE_MIN, &out), 0);
	assert_int_equal(wire_probe_decode(buf, WIRE_PROBE_MAX, &out), 0);

	/* magic, each byte */
	for (int i = 0; i < 4; i++) {
		memcpy(bad, buf, sizeof(bad));
		bad[i] ^= 0x20;
		assert_int_equal(wire_probe_decode(bad, 100, &out), -1);
	}
	/* version */
	memcpy(bad, buf, sizeof(bad));
	bad[4] = WIRE_VERSION + 1;
	assert_int_equal(wire_probe_decode(bad, 100, &out), -1);
	bad[4] = 0;
	assert_int_equal(wire_probe_decode(bad, 100, &out), -1);
	/* kind: only 1 (request) and 2 (reply) */
	memcpy(bad, buf, sizeof(bad));
	for (int k = 0; k < 256; k++) {
		bad[5] = (uint8_t)k;
		assert_int_equal(wire_probe_decode(bad, 100, &out),
				 k == WIRE_PROBE_REQ || k == WIRE_PROBE_REPLY ? 0 : -1);
	}
}

/* A failed decode leaves no half-written result behind (decode into a zeroed temporary). */
static void test_probe_reject_no_side_effects(void **state)
{
	struct wire_probe in = sample_probe(), out, before;
	uint8_t buf[100];

	wire_probe_encode(&in, buf, sizeof(buf));
	buf[5] = 9;
	memset(&out, 0x5a, sizeof(out));
	before = out;
	assert_int_equal(wire_probe_decode(buf, sizeof(buf), &out), -1);
	assert_memory_equal(&out, &before, sizeof(out));
}

/* ---- data hello ---- */

static void test_data_hello_round_trip(void **state)
{
	struct wire_data_hello in, out;
	uint8_t buf[WIRE_DATA_HELLO_LEN];

	memset(&in, 0, sizeof(in));
	in.version = WIRE_VERSION;
	in.dir = WIRE_DIR_UP;
	in.flow_id = 0xbeef;
	memcpy(in.token, tok_a, WIRE_TOKEN_LEN);
	wire_data_hello_encode(&in, buf);
	assert_memory_equal(buf, "BMD1", 4);
	assert_true(wire_is_data_magic(buf, sizeof(buf)));
	assert_int_equal(wire_data_hello_decode(buf, sizeof(buf), &out), 0);
	assert_int_equal(out.version, WIRE_VERSION);
	assert_int_equal(out.dir, WIRE_DIR_UP);
	assert_int_equal(out.flow_id, 0xbeef);
	assert_memory_equal(out.token, tok_a, WIRE_TOKEN_LEN);

	in.dir = WIRE_DIR_DOWN;
	in.flow_id = 0;
	wire_data_hello_encode(&in, buf);
	assert_int_equal(wire_data_hello_decode(buf, sizeof(buf), &out), 0);
	assert_int_equal(out.dir, WIRE_DIR_DOWN);
	assert_int_equal(out.flow_id, 0);
}

static void test_data_hello_rejects(void **state)
{
	struct wire_data_hello in, out;
	uint8_t buf[WIRE_DATA_HELLO_LEN + 1], bad[WIRE_DATA_HELLO_LEN + 1];

	memset(&in, 0, sizeof(in));
	in.version = WIRE_VERSION;
	in.dir = WIRE_DIR_DOWN;
	memcpy(in.token, tok_a, WIRE_TOKEN_LEN);
	memset(buf, 0, sizeof(buf));
	wire_data_hello_encode(&in, buf);

	/* length must be exactly 32 */
	assert_int_equal(wire_data_hello_decode(buf, WIRE_DATA_HELLO_LEN - 1, &out), -1);
	assert_int_equal(wire_data_hello_decode(buf, WIRE_DATA_HELLO_LEN + 1, &out), -1);
	assert_int_equal(wire_data_hello_decode(buf, 0, &out), -1);
	/* magic */
	memcpy(bad, buf, sizeof(bad));
	bad[3] = '2';
	assert_false(wire_is_data_magic(bad, WIRE_DATA_HELLO_LEN));
	assert_int_equal(wire_data_hello_decode(bad, WIRE_DATA_HELLO_LEN, &out), -1);
	/* version */
	memcpy(bad, buf, sizeof(bad));
	bad[4] = WIRE_VERSION + 1;
	assert_int_equal(wire_data_hello_decode(bad, WIRE_DATA_HELLO_LEN, &out), -1);
	/* direction: only 'D' and 'U' */
	memcpy(bad, buf, sizeof(bad));
	for (int d = 0; d < 256; d++) {
		bad[5] = (uint8_t)d;
		assert_int_equal(wire_data_hello_decode(bad, WIRE_DATA_HELLO_LEN, &out),
				 d == 'D' || d == 'U' ? 0 : -1);
	}
	/* every reserved byte (24..31) must be zero */
	for (int i = 24; i < WIRE_DATA_HELLO_LEN; i++) {
		memcpy(bad, buf, sizeof(bad));
		bad[i] = 1;
		assert_int_equal(wire_data_hello_decode(bad, WIRE_DATA_HELLO_LEN, &out), -1);
	}
	assert_false(wire_is_data_magic(buf, 3));
}

/* The data magic read as a control length is 0x424d4431 > WIRE_CTRL_MAX: never a frame. */
static void test_data_magic_not_a_frame(void **state)
{
	struct wire_data_hello in;
	uint8_t buf[WIRE_DATA_HELLO_LEN];
	size_t body = 12345;

	memset(&in, 0, sizeof(in));
	in.version = WIRE_VERSION;
	in.dir = WIRE_DIR_DOWN;
	wire_data_hello_encode(&in, buf);
	assert_int_equal(wire_frame_peek(buf, sizeof(buf), &body), WIRE_FRAME_BAD);
	assert_int_equal(body, 12345);
	assert_true(0x424d4431u > WIRE_CTRL_MAX);
}

/* ---- control frames ---- */

static void test_frame_peek(void **state)
{
	uint8_t h[8] = { 0 };
	size_t body = 777;

	assert_int_equal(wire_frame_peek(h, 0, &body), WIRE_FRAME_NEED_MORE);
	assert_int_equal(wire_frame_peek(h, 3, &body), WIRE_FRAME_NEED_MORE);
	/* length 0 */
	assert_int_equal(wire_frame_peek(h, 4, &body), WIRE_FRAME_BAD);
	/* length 1 */
	h[3] = 1;
	assert_int_equal(wire_frame_peek(h, 4, &body), WIRE_FRAME_OK);
	assert_int_equal(body, 1);
	/* exactly WIRE_CTRL_MAX = 0x00010000 */
	memcpy(h, "\x00\x01\x00\x00", 4);
	assert_int_equal(wire_frame_peek(h, 8, &body), WIRE_FRAME_OK);
	assert_int_equal(body, WIRE_CTRL_MAX);
	/* one above */
	memcpy(h, "\x00\x01\x00\x01", 4);
	body = 777;
	assert_int_equal(wire_frame_peek(h, 4, &body), WIRE_FRAME_BAD);
	assert_int_equal(body, 777);
	/* big-endian: 0x00000102 = 258 */
	memcpy(h, "\x00\x00\x01\x02", 4);
	assert_int_equal(wire_frame_peek(h, 4, &body), WIRE_FRAME_OK);
	assert_int_equal(body, 258);
	memcpy(h, "\xff\xff\xff\xff", 4);
	assert_int_equal(wire_frame_peek(h, 4, &body), WIRE_FRAME_BAD);
}

static json_object *parse_str(const char *s)
{
	char err[128] = "";

	return wire_ctrl_parse((const uint8_t *)s, strlen(s), err, sizeof(err));
}

/* Expects a rejection with a non-empty reason. */
static void assert_rejected(const uint8_t *body, size_t len)
{
	char err[128] = "";
	json_object *m = wire_ctrl_parse(body, len, err, sizeof(err));

	if (m != NULL) {
		json_object_put(m);
		fail_msg("accepted: %.*s", (int)(len > 80 ? 80 : len), (const char *)body);
	}
	assert_true(err[0] != '\0');
}

static void assert_rejected_str(const char *s)
{
	assert_rejected((const uint8_t *)s, strlen(s));
}

static void test_ctrl_parse_accepts(void **state)
{
	json_object *m = parse_str("{\"v\":1,\"type\":\"hello\"}");

	assert_non_null(m);
	assert_string_equal(wire_ctrl_type(m), "hello");
	json_object_put(m);

	m = parse_str(" { \"type\" : \"stats\", \"v\" : 1, \"x\": [1, {\"y\": null}] }");
	assert_non_null(m);
	assert_string_equal(wire_ctrl_type(m), "stats");
	json_object_put(m);

	/* a type of exactly 32 characters is allowed */
	m = parse_str("{\"v\":1,\"type\":\"abcdefghijklmnopqrstuvwxyz012345\"}");
	assert_non_null(m);
	json_object_put(m);
}

static void test_ctrl_parse_rejects(void **state)
{
	static const char with_nul[] = "{\"v\":1,\"type\":\"hello\"}\0";
	static const char nul_inside[] = "{\"v\":1,\"type\":\"he\0llo\"}";

	assert_rejected_str("{\"v\":2,\"type\":\"hello\"}");     /* wrong version */
	assert_rejected_str("{\"v\":0,\"type\":\"hello\"}");
	assert_rejected_str("{\"v\":\"1\",\"type\":\"hello\"}"); /* version must be an integer */
	assert_rejected_str("{\"v\":1.0,\"type\":\"hello\"}");
	assert_rejected_str("{\"type\":\"hello\"}");             /* no version */
	assert_rejected_str("{\"v\":1}");                        /* no type */
	assert_rejected_str("{\"v\":1,\"type\":\"\"}");          /* empty type */
	assert_rejected_str("{\"v\":1,\"type\":5}");             /* type not a string */
	assert_rejected_str("{\"v\":1,\"type\":null}");
	assert_rejected_str("{\"v\":1,\"type\":\"abcdefghijklmnopqrstuvwxyz0123456\"}"); /* 33 */
	assert_rejected_str("[{\"v\":1,\"type\":\"hello\"}]");   /* not an object */
	assert_rejected_str("\"hello\"");
	assert_rejected_str("1");
	assert_rejected_str("null");
	assert_rejected_str("{\"v\":1,\"type\":\"hello\"}x");    /* trailing garbage */
	assert_rejected_str("{\"v\":1,\"type\":\"hello\"}{}");   /* two values */
	assert_rejected_str("{\"v\":1,\"type\":\"hello\"");      /* truncated */
	assert_rejected_str("{\"v\":1,\"type\":\"hello\",}x");
	assert_rejected((const uint8_t *)with_nul, sizeof(with_nul) - 1); /* NUL after the object */
	assert_rejected((const uint8_t *)nul_inside, sizeof(nul_inside) - 1);
	assert_rejected((const uint8_t *)"", 0);
}

/* Builds {"v":1,"type":"deep","a":[[...[]...]]} with `depth` nested arrays under "a". */
static char *nested(int depth)
{
	size_t n = 64 + 2 * (size_t)depth;
	char *s = malloc(n);
	size_t o;

	assert_non_null(s);
	o = (size_t)snprintf(s, n, "{\"v\":1,\"type\":\"deep\",\"a\":");
	for (int i = 0; i < depth; i++)
		s[o++] = '[';
	for (int i = 0; i < depth; i++)
		s[o++] = ']';
	s[o++] = '}';
	s[o] = '\0';
	return s;
}

/* The outer object is level 1: up to 16 levels pass, more than 16 levels fail. */
static void test_ctrl_parse_depth(void **state)
{
	char *s = nested(3);
	json_object *m = parse_str(s);

	assert_non_null(m);
	json_object_put(m);
	free(s);

	s = nested(15); /* 16 levels in total */
	m = parse_str(s);
	assert_non_null(m);
	json_object_put(m);
	free(s);

	s = nested(16); /* 17 levels in total */
	assert_rejected_str(s);
	free(s);

	s = nested(5000);
	assert_rejected_str(s);
	free(s);
}

static void test_ctrl_parse_size_limit(void **state)
{
	static const char head[] = "{\"v\":1,\"type\":\"hello\",\"p\":\"";
	size_t n = WIRE_CTRL_MAX + 1, hl = sizeof(head) - 1;
	uint8_t *big = malloc(n);
	char err[64];
	json_object *m;

	assert_non_null(big);
	/* {"v":1,"type":"hello","p":"xxx...x"} exactly WIRE_CTRL_MAX bytes long: accepted */
	memcpy(big, head, hl);
	memset(big + hl, 'x', WIRE_CTRL_MAX - hl - 2);
	memcpy(big + WIRE_CTRL_MAX - 2, "\"}", 2);
	m = wire_ctrl_parse(big, WIRE_CTRL_MAX, err, sizeof(err));
	assert_non_null(m);
	json_object_put(m);
	/* one byte longer: rejected before parsing */
	memcpy(big + WIRE_CTRL_MAX - 2, "x\"}", 3);
	assert_rejected(big, n);
	free(big);
}

static void test_ctrl_encode_round_trip(void **state)
{
	json_object *m = wire_ctrl_new("stats"), *back;
	uint8_t *buf;
	size_t len = 0, body = 0;
	int64_t i;
	const char *s;
	int b;
	char err[128];

	assert_non_null(m);
	json_object_object_add(m, "big", json_object_new_int64(INT64_MAX));
	json_object_object_add(m, "neg", json_object_new_int64(INT64_MIN));
	json_object_object_add(m, "name", json_object_new_string("a\"b\\c\n"));
	json_object_object_add(m, "final", json_object_new_boolean(1));
	buf = wire_ctrl_encode(m, &len);
	assert_non_null(buf);
	assert_true(len > WIRE_CTRL_HDR);
	assert_int_equal(wire_frame_peek(buf, len, &body), WIRE_FRAME_OK);
	assert_int_equal(body, len - WIRE_CTRL_HDR);
	back = wire_ctrl_parse(buf + WIRE_CTRL_HDR, body, err, sizeof(err));
	assert_non_null(back);
	assert_string_equal(wire_ctrl_type(back), "stats");
	assert_int_equal(wire_get_int(back, "v", 1, 1, &i), 0);
	assert_int_equal(wire_get_int(back, "big", INT64_MIN, INT64_MAX, &i), 0);
	assert_true(i == INT64_MAX);
	assert_int_equal(wire_get_int(back, "neg", INT64_MIN, INT64_MAX, &i), 0);
	assert_true(i == INT64_MIN);
	assert_int_equal(wire_get_str(back, "name", 64, &s), 0);
	assert_string_equal(s, "a\"b\\c\n");
	assert_int_equal(wire_get_bool(back, "final", &b), 0);
	assert_int_equal(b, 1);
	json_object_put(back);
	json_object_put(m);
	free(buf);
}

/* A message whose JSON exceeds the cap cannot be encoded. */
static void test_ctrl_encode_too_large(void **state)
{
	json_object *m = wire_ctrl_new("big");
	char *s = malloc(WIRE_CTRL_MAX + 1);
	size_t len = 0;

	assert_non_null(s);
	memset(s, 'x', WIRE_CTRL_MAX);
	s[WIRE_CTRL_MAX] = '\0';
	json_object_object_add(m, "pad", json_object_new_string(s));
	assert_null(wire_ctrl_encode(m, &len));
	json_object_put(m);
	free(s);
}

static void test_get_int_bounds(void **state)
{
	json_object *m = parse_str("{\"v\":1,\"type\":\"t\",\"n\":5,\"s\":\"5\",\"d\":5.5,\"b\":true,"
				   "\"neg\":-3,\"max\":9223372036854775807}");
	int64_t x = 99;

	assert_non_null(m);
	assert_int_equal(wire_get_int(m, "n", 5, 5, &x), 0);
	assert_int_equal(x, 5);
	assert_int_equal(wire_get_int(m, "n", 0, 100, &x), 0);
	x = 99;
	assert_int_equal(wire_get_int(m, "n", 6, 100, &x), -1); /* below lo */
	assert_int_equal(wire_get_int(m, "n", 0, 4, &x), -1);   /* above hi */
	assert_int_equal(x, 99);                                /* untouched on failure */
	assert_int_equal(wire_get_int(m, "missing", 0, 100, &x), -1);
	assert_int_equal(wire_get_int(m, "s", 0, 100, &x), -1); /* a string is not an int */
	assert_int_equal(wire_get_int(m, "d", 0, 100, &x), -1); /* nor a double */
	assert_int_equal(wire_get_int(m, "b", 0, 100, &x), -1);
	assert_int_equal(wire_get_int(m, "neg", 0, INT64_MAX, &x), -1);
	assert_int_equal(wire_get_int(m, "neg", -3, -3, &x), 0);
	assert_int_equal(x, -3);
	assert_int_equal(wire_get_int(m, "max", 0, INT64_MAX, &x), 0);
	assert_true(x == INT64_MAX);
	assert_int_equal(wire_get_int(m, "max", 0, INT64_MAX - 1, &x), -1);
	json_object_put(m);
}

static void test_get_str_bool(void **state)
{
	json_object *m = parse_str("{\"v\":1,\"type\":\"t\",\"s\":\"abcd\",\"b\":false,\"n\":1}");
	const char *s = NULL;
	int b = 7;

	assert_non_null(m);
	assert_int_equal(wire_get_str(m, "s", 4, &s), 0);
	assert_string_equal(s, "abcd");
	s = NULL;
	assert_int_equal(wire_get_str(m, "s", 3, &s), -1);
	assert_null(s);
	assert_int_equal(wire_get_str(m, "n", 10, &s), -1);
	assert_int_equal(wire_get_str(m, "missing", 10, &s), -1);
	assert_int_equal(wire_get_bool(m, "b", &b), 0);
	assert_int_equal(b, 0);
	assert_int_equal(wire_get_bool(m, "n", &b), -1); /* 1 is not a boolean */
	assert_int_equal(wire_get_bool(m, "s", &b), -1);
	json_object_put(m);
}

/* ---- token ---- */

static void test_token_hex(void **state)
{
	char hex[2 * WIRE_TOKEN_LEN + 1];
	uint8_t back[WIRE_TOKEN_LEN];

	wire_token_to_hex(tok_a, hex);
	assert_string_equal(hex, "00017f80ff102030deadbeefcafebabe");
	assert_int_equal(wire_token_from_hex(hex, back), 0);
	assert_memory_equal(back, tok_a, WIRE_TOKEN_LEN);
}

static void test_token_hex_rejects(void **state)
{
	uint8_t tok[WIRE_TOKEN_LEN], before[WIRE_TOKEN_LEN];

	memset(tok, 0x77, sizeof(tok));
	memcpy(before, tok, sizeof(tok));
	/* 31 and 33 characters */
	assert_int_equal(wire_token_from_hex("00017f80ff102030deadbeefcafebab", tok), -1);
	assert_int_equal(wire_token_from_hex("00017f80ff102030deadbeefcafebabe0", tok), -1);
	assert_int_equal(wire_token_from_hex("", tok), -1);
	/* non-hex characters, at the start, middle and end */
	assert_int_equal(wire_token_from_hex("g0017f80ff102030deadbeefcafebabe", tok), -1);
	assert_int_equal(wire_token_from_hex("00017f80ff1020 0deadbeefcafebabe", tok), -1);
	assert_int_equal(wire_token_from_hex("00017f80ff102030deadbeefcafebab-", tok), -1);
	/* the wire format is lowercase */
	assert_int_equal(wire_token_from_hex("00017F80FF102030DEADBEEFCAFEBABE", tok), -1);
	/* failure leaves the output untouched */
	assert_memory_equal(tok, before, sizeof(tok));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe_round_trip),
		cmocka_unit_test(test_probe_layout),
		cmocka_unit_test(test_probe_rejects),
		cmocka_unit_test(test_probe_reject_no_side_effects),
		cmocka_unit_test(test_data_hello_round_trip),
		cmocka_unit_test(test_data_hello_rejects),
		cmocka_unit_test(test_data_magic_not_a_frame),
		cmocka_unit_test(test_frame_peek),
		cmocka_unit_test(test_ctrl_parse_accepts),
		cmocka_unit_test(test_ctrl_parse_rejects),
		cmocka_unit_test(test_ctrl_parse_depth),
		cmocka_unit_test(test_ctrl_parse_size_limit),
		cmocka_unit_test(test_ctrl_encode_round_trip),
		cmocka_unit_test(test_ctrl_encode_too_large),
		cmocka_unit_test(test_get_int_bounds),
		cmocka_unit_test(test_get_str_bool),
		cmocka_unit_test(test_token_hex),
		cmocka_unit_test(test_token_hex_rejects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

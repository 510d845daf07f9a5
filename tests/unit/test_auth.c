/* test_auth: pre-shared-key authentication — HMAC-SHA256 against RFC 4231, the key file
 * parser and its permission check, both MACs (good, wrong key, unknown id, changed hello,
 * replayed nonces), the message codecs, and how a TLS connection is told from a plain one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/auth.h"
#include "common/tls.h"
#include "common/wire.h"

#define KEY_A "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
#define KEY_B "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100"
#define SNONCE "0123456789abcdef0123456789abcdef"
#define CNONCE "fedcba9876543210fedcba9876543210"
#define TOKEN "000102030405060708090a0b0c0d0e0f"

static void hex_of(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

static void assert_hmac(const uint8_t *key, size_t keylen, const char *msg, const char *want)
{
	uint8_t mac[AUTH_MAC_LEN];
	char hex[AUTH_MAC_HEX + 1];

	assert_int_equal(auth_hmac(key, keylen, (const uint8_t *)msg, strlen(msg), mac), 0);
	hex_of(mac, sizeof(mac), hex);
	assert_string_equal(hex, want);
}

/* RFC 4231 test cases 1, 2 and 6 (a key longer than the block size). */
static void test_hmac_rfc4231(void **state)
{
	uint8_t k1[20], k6[131];

	memset(k1, 0x0b, sizeof(k1));
	memset(k6, 0xaa, sizeof(k6));
	assert_hmac(k1, sizeof(k1), "Hi There",
		    "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
	assert_hmac((const uint8_t *)"Jefe", 4, "what do ya want for nothing?",
		    "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	assert_hmac(k6, sizeof(k6), "Test Using Larger Than Block-Size Key - Hash Key First",
		    "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

static void parse_ok(const char *text, size_t max, struct auth_keys *k)
{
	char err[256] = "";

	if (auth_parse_keys(text, strlen(text), max, k, err, sizeof(err)) != 0)
		fail_msg("rejected: %s", err);
}

/* Refused, with an error starting with want (a line number, or the whole-file reason). */
static void parse_bad(const char *text, const char *want)
{
	struct auth_keys k = { NULL, 0 };
	char err[256] = "";

	if (auth_parse_keys(text, strlen(text), 16, &k, err, sizeof(err)) == 0)
		fail_msg("accepted: \"%s\"", text);
	assert_null(k.v);
	assert_int_equal(k.n, 0);
	if (strncmp(err, want, strlen(want)) != 0)
		fail_msg("error \"%s\", want it to start with \"%s\"", err, want);
}

static void test_parse_keys(void **state)
{
	struct auth_keys k = { NULL, 0 };
	const struct auth_key *a;

	parse_ok("# keys\n\nalice " KEY_A "\r\n  bob.2_x-Y\t" KEY_B "   # comment\n", 16, &k);
	assert_int_equal(k.n, 2);
	a = auth_keys_find(&k, "alice");
	assert_non_null(a);
	assert_int_equal(a->len, 32);
	assert_int_equal(a->key[0], 0x00);
	assert_int_equal(a->key[31], 0xff);
	assert_non_null(auth_keys_find(&k, "bob.2_x-Y"));
	assert_null(auth_keys_find(&k, "bob"));
	auth_keys_free(&k);
	assert_null(k.v);
	/* Upper-case hex, the longest key, no newline at the end. */
	{
		char text[600];
		char key[2 * AUTH_KEY_MAX + 1];

		memset(key, 'A', sizeof(key) - 1);
		key[sizeof(key) - 1] = '\0';
		snprintf(text, sizeof(text), "x %s", key);
		parse_ok(text, 1, &k);
		assert_int_equal(k.n, 1);
		assert_int_equal(k.v[0].len, AUTH_KEY_MAX);
		assert_int_equal(k.v[0].key[AUTH_KEY_MAX - 1], 0xaa);
		auth_keys_free(&k);
		snprintf(text, sizeof(text), "x %sAA", key);
		parse_bad(text, "1: the key of \"x\" must be 64 to 256 hex digits");
	}
	/* Many keys grow the table. */
	{
		char text[4096];
		size_t n = 0;

		for (int i = 0; i < 20; i++)
			n += (size_t)snprintf(text + n, sizeof(text) - n, "id%d %s\n", i, KEY_A);
		parse_ok(text, 20, &k);
		assert_int_equal(k.n, 20);
		assert_non_null(auth_keys_find(&k, "id19"));
		auth_keys_free(&k);
	}
}

static void test_parse_keys_rejects(void **state)
{
	char text[2048];

	parse_bad("", "no key in the file");
	parse_bad("# only a comment\n\n", "no key in the file");
	parse_bad("alice\n", "1: expected \"ID KEY\"");
	parse_bad("\nalice " KEY_A " extra\n", "2: expected \"ID KEY\"");
	parse_bad("al!ce " KEY_A "\n", "1: invalid key id");
	parse_bad("alice " KEY_A "0\n", "1: the key of \"alice\""); /* odd length */
	parse_bad("alice 0011\n", "1: the key of \"alice\"");         /* too short */
	parse_bad("alice " KEY_A "#x\n", "1: the key of \"alice\"");  /* '#' after no blank */
	parse_bad("alice g" KEY_A "\n", "1: the key of \"alice\"");
	parse_bad("alice " KEY_A "\nalice " KEY_B "\n", "2: key id \"alice\" given twice");
	/* 65 characters of id */
	memset(text, 'i', 65);
	snprintf(text + 65, sizeof(text) - 65, " %s", KEY_A);
	parse_bad(text, "1: invalid key id");
	/* a line over the limit */
	memset(text, ' ', AUTH_MAX_LINE + 1);
	snprintf(text + AUTH_MAX_LINE + 1, sizeof(text) - AUTH_MAX_LINE - 1, "a %s", KEY_A);
	parse_bad(text, "1: line longer than");
	/* more keys than allowed (the client's files hold one) */
	{
		struct auth_keys k = { NULL, 0 };
		char err[128];
		const char *two = "a " KEY_A "\nb " KEY_B "\n";

		assert_int_equal(auth_parse_keys(two, strlen(two), 1, &k, err, sizeof(err)), -1);
		assert_string_equal(err, "2: more than 1 key");
		assert_null(k.v);
	}
}

/* A NUL byte inside the text is refused with its line (strlen would stop before it). */
static void test_parse_keys_nul(void **state)
{
	static const char text[] = "a " KEY_A "\nb\0 " KEY_B "\n";
	struct auth_keys k = { NULL, 0 };
	char err[128];

	assert_int_equal(auth_parse_keys(text, sizeof(text) - 1, 4, &k, err, sizeof(err)), -1);
	assert_string_equal(err, "2: NUL byte in the line");
}

static void test_load_keys_mode(void **state)
{
	char path[] = "/tmp/bm-test-auth-XXXXXX", dir[] = "/tmp/bm-test-authd-XXXXXX";
	const char *text = "alice " KEY_A "\n";
	struct auth_keys k = { NULL, 0 };
	char err[512];
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(auth_load_keys(path, 1, &k, err, sizeof(err)), 0);
	assert_int_equal(k.n, 1);
	auth_keys_free(&k);
	assert_int_equal(chmod(path, 0640), 0); /* the group may read: root:bloatmeter 0640 */
	assert_int_equal(auth_load_keys(path, 1, &k, err, sizeof(err)), 0);
	auth_keys_free(&k);
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(auth_load_keys(path, 1, &k, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is accessible to other users (mode 0644)"));
	assert_int_equal(chmod(path, 0602), 0);
	assert_int_equal(auth_load_keys(path, 1, &k, err, sizeof(err)), -1);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(auth_load_keys(path, 1, &k, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot open"));
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0700), 0);
	assert_int_equal(auth_load_keys(dir, 1, &k, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a regular file"));
	assert_int_equal(rmdir(dir), 0);
}

static void two_keys(struct auth_keys *k)
{
	parse_ok("alice " KEY_A "\nbob " KEY_B "\n", 4, k);
}

static void test_client_mac(void **state)
{
	struct auth_keys k;
	struct auth_hello h = { "cubic", 40 }, h2;
	struct auth_response r;
	char mac2[AUTH_MAC_HEX + 1];

	two_keys(&k);
	memset(&r, 0, sizeof(r));
	strcpy(r.id, "alice");
	strcpy(r.cnonce, CNONCE);
	assert_int_equal(auth_client_mac(auth_keys_find(&k, "alice"), SNONCE, CNONCE, &h, r.mac), 0);
	assert_true(auth_is_hex(r.mac, AUTH_MAC_HEX));
	assert_ptr_equal(auth_verify_response(&k, SNONCE, &h, &r), auth_keys_find(&k, "alice"));
	/* The same inputs always give the same MAC; another key another one. */
	assert_int_equal(auth_client_mac(auth_keys_find(&k, "alice"), SNONCE, CNONCE, &h, mac2), 0);
	assert_string_equal(mac2, r.mac);
	assert_int_equal(auth_client_mac(auth_keys_find(&k, "bob"), SNONCE, CNONCE, &h, mac2), 0);
	assert_string_not_equal(mac2, r.mac);
	/* bob's id with alice's MAC: wrong key. */
	strcpy(r.id, "bob");
	assert_null(auth_verify_response(&k, SNONCE, &h, &r));
	/* An id the server does not know. */
	strcpy(r.id, "mallory");
	assert_null(auth_verify_response(&k, SNONCE, &h, &r));
	strcpy(r.id, "alice");
	/* A hello changed on the way: another cc or duration. */
	h2 = h;
	h2.cc = "reno";
	assert_null(auth_verify_response(&k, SNONCE, &h2, &r));
	h2 = h;
	h2.duration_s = 41;
	assert_null(auth_verify_response(&k, SNONCE, &h2, &r));
	/* A flipped MAC digit. */
	r.mac[10] = r.mac[10] == '0' ? '1' : '0';
	assert_null(auth_verify_response(&k, SNONCE, &h, &r));
	auth_keys_free(&k);
}

/* An answer recorded once is worth nothing against the next challenge, and a welcome proof
 * recorded once is worth nothing for the next client nonce. */
static void test_replay(void **state)
{
	struct auth_keys k;
	struct auth_hello h = { "cubic", 40 };
	struct auth_response r;
	char snonce2[AUTH_NONCE_HEX + 1], cnonce2[AUTH_NONCE_HEX + 1], smac[AUTH_MAC_HEX + 1];
	const struct auth_key *a;

	two_keys(&k);
	a = auth_keys_find(&k, "alice");
	memset(&r, 0, sizeof(r));
	strcpy(r.id, "alice");
	strcpy(r.cnonce, CNONCE);
	assert_int_equal(auth_client_mac(a, SNONCE, CNONCE, &h, r.mac), 0);
	assert_int_equal(auth_nonce(snonce2), 0);
	assert_true(auth_is_hex(snonce2, AUTH_NONCE_HEX));
	assert_string_not_equal(snonce2, SNONCE);
	assert_null(auth_verify_response(&k, snonce2, &h, &r));

	assert_int_equal(auth_server_mac(a, SNONCE, CNONCE, TOKEN, smac), 0);
	assert_int_equal(auth_verify_server(a, SNONCE, CNONCE, TOKEN, smac), 0);
	assert_int_equal(auth_nonce(cnonce2), 0);
	assert_int_equal(auth_verify_server(a, SNONCE, cnonce2, TOKEN, smac), -1);
	assert_int_equal(auth_verify_server(a, snonce2, CNONCE, TOKEN, smac), -1);
	assert_int_equal(auth_verify_server(a, SNONCE, CNONCE, "ff0102030405060708090a0b0c0d0e0f",
					    smac), -1);
	assert_int_equal(auth_verify_server(auth_keys_find(&k, "bob"), SNONCE, CNONCE, TOKEN, smac),
			 -1);
	/* The client's MAC never passes as the server's (different role in the transcript). */
	assert_int_equal(auth_verify_server(a, SNONCE, CNONCE, TOKEN, r.mac), -1);
	assert_int_equal(auth_verify_server(a, SNONCE, CNONCE, TOKEN, NULL), -1);
	assert_int_equal(auth_verify_server(a, SNONCE, CNONCE, TOKEN, "abc"), -1);
	auth_keys_free(&k);
}

/* Encodes msg as a frame and parses it back, as the peer would see it. */
static json_object *roundtrip(json_object *msg)
{
	size_t len;
	uint8_t *buf = wire_ctrl_encode(msg, &len);
	char err[128];
	json_object *back;

	json_object_put(msg);
	assert_non_null(buf);
	back = wire_ctrl_parse(buf + WIRE_CTRL_HDR, len - WIRE_CTRL_HDR, err, sizeof(err));
	free(buf);
	assert_non_null(back);
	return back;
}

static json_object *parse_json(const char *s)
{
	char err[128];
	json_object *m = wire_ctrl_parse((const uint8_t *)s, strlen(s), err, sizeof(err));

	assert_non_null(m);
	return m;
}

static void test_messages(void **state)
{
	struct auth_response r = { "alice", CNONCE, "" }, back;
	char snonce[AUTH_NONCE_HEX + 1];
	json_object *m;

	m = roundtrip(auth_challenge_new(SNONCE));
	assert_int_equal(auth_challenge_parse(m, snonce), 0);
	assert_string_equal(snonce, SNONCE);
	assert_int_equal(auth_response_parse(m, &back), -1); /* not an auth message */
	json_object_put(m);

	memset(r.mac, 'a', AUTH_MAC_HEX);
	r.mac[AUTH_MAC_HEX] = '\0';
	m = roundtrip(auth_response_new(&r));
	assert_int_equal(auth_response_parse(m, &back), 0);
	assert_string_equal(back.id, "alice");
	assert_string_equal(back.cnonce, CNONCE);
	assert_string_equal(back.mac, r.mac);
	assert_int_equal(auth_challenge_parse(m, snonce), -1);
	json_object_put(m);

	static const char *const bad_challenges[] = {
		"{\"v\":1,\"type\":\"challenge\"}",
		"{\"v\":1,\"type\":\"challenge\",\"nonce\":\"0123456789ABCDEF0123456789abcdef\"}",
		"{\"v\":1,\"type\":\"challenge\",\"nonce\":\"0123456789abcdef0123456789abcde\"}",
		"{\"v\":1,\"type\":\"challenge\",\"nonce\":\"0123456789abcdef0123456789abcdef0\"}",
		"{\"v\":1,\"type\":\"challenge\",\"nonce\":12}",
	};
	for (size_t i = 0; i < sizeof(bad_challenges) / sizeof(bad_challenges[0]); i++) {
		m = parse_json(bad_challenges[i]);
		if (auth_challenge_parse(m, snonce) != -1)
			fail_msg("accepted %s", bad_challenges[i]);
		json_object_put(m);
	}
	static const char *const bad_auth[] = {
		"{\"v\":1,\"type\":\"auth\",\"cnonce\":\"" CNONCE "\",\"mac\":\"" SNONCE SNONCE "\"}",
		"{\"v\":1,\"type\":\"auth\",\"id\":\"\",\"cnonce\":\"" CNONCE "\",\"mac\":\"" SNONCE SNONCE "\"}",
		"{\"v\":1,\"type\":\"auth\",\"id\":\"a b\",\"cnonce\":\"" CNONCE "\",\"mac\":\"" SNONCE SNONCE "\"}",
		"{\"v\":1,\"type\":\"auth\",\"id\":\"a\",\"cnonce\":\"" CNONCE "\",\"mac\":\"" SNONCE "\"}",
		"{\"v\":1,\"type\":\"auth\",\"id\":\"a\",\"cnonce\":\"xyz\",\"mac\":\"" SNONCE SNONCE "\"}",
		"{\"v\":1,\"type\":\"auth\",\"id\":[1],\"cnonce\":\"" CNONCE "\",\"mac\":\"" SNONCE SNONCE "\"}",
	};
	for (size_t i = 0; i < sizeof(bad_auth) / sizeof(bad_auth[0]); i++) {
		m = parse_json(bad_auth[i]);
		if (auth_response_parse(m, &back) != -1)
			fail_msg("accepted %s", bad_auth[i]);
		json_object_put(m);
	}
}

static void test_ids(void **state)
{
	char id[AUTH_ID_MAX + 2];

	assert_true(auth_id_valid("a"));
	assert_true(auth_id_valid("Site-7.probe_01"));
	assert_false(auth_id_valid(""));
	assert_false(auth_id_valid("a/b"));
	assert_false(auth_id_valid("a\n"));
	memset(id, 'x', AUTH_ID_MAX);
	id[AUTH_ID_MAX] = '\0';
	assert_true(auth_id_valid(id));
	id[AUTH_ID_MAX] = 'x';
	id[AUTH_ID_MAX + 1] = '\0';
	assert_false(auth_id_valid(id));
}

/* A TLS record header can never be a plain control frame's length prefix. */
static void test_tls_detect(void **state)
{
	static const uint8_t hello[] = { 0x16, 0x03, 0x01, 0x02 };
	static const uint8_t frame[] = { 0x00, 0x00, 0x00, 0x40 };
	static const uint8_t other[] = { 0x16, 0x02, 0x01, 0x02 };
	size_t len;

	assert_true(tls_is_handshake(hello, sizeof(hello)));
	/* One peeked byte decides: 0x16 starts no plain first message. */
	assert_true(tls_is_handshake(hello, 1));
	assert_false(tls_is_handshake(frame, 1));
	assert_false(tls_is_handshake(hello, 0));
	assert_false(tls_is_handshake(frame, sizeof(frame)));
	assert_false(tls_is_handshake(other, sizeof(other)));
	assert_int_equal(wire_frame_peek(hello, sizeof(hello), &len), WIRE_FRAME_BAD);
	assert_false(wire_is_data_magic(hello, sizeof(hello)));
	assert_false(wire_is_connprobe_magic(hello, sizeof(hello)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hmac_rfc4231),
		cmocka_unit_test(test_parse_keys),
		cmocka_unit_test(test_parse_keys_rejects),
		cmocka_unit_test(test_parse_keys_nul),
		cmocka_unit_test(test_load_keys_mode),
		cmocka_unit_test(test_client_mac),
		cmocka_unit_test(test_replay),
		cmocka_unit_test(test_messages),
		cmocka_unit_test(test_ids),
		cmocka_unit_test(test_tls_detect),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

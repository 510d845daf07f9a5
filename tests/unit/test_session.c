/* test_session: the reflector's token table (server/session.c) — tokens that share a hash
 * bucket stay apart, removal from the middle of a chain, a full table, re-use of freed slots
 * and growth (SIGHUP) keeping every live entry and its count. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "server/session.h"

#define N 64

/* Token i; with same_bucket, all share their first 4 bytes (the hash) and differ after. */
static void token_of(int i, int same_bucket, uint8_t tok[WIRE_TOKEN_LEN])
{
	memset(tok, 0, WIRE_TOKEN_LEN);
	if (!same_bucket)
		tok[0] = (uint8_t)i;
	tok[5] = (uint8_t)i;
	tok[15] = 0xa5;
}

static void client_of(struct sockaddr_storage *ss)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(40000);
	assert_int_equal(inet_pton(AF_INET, "192.0.2.9", &sin->sin_addr), 1);
}

/* Sends probes_of(i) probes for token i, so each entry's count names it. */
static int probes_of(int i)
{
	return i % 7 + 1;
}

static void probe_all(struct session_table *t, int n, int same, const struct sockaddr *src)
{
	uint8_t tok[WIRE_TOKEN_LEN];
	uint64_t c;

	for (int i = 0; i < n; i++) {
		token_of(i, same, tok);
		for (int k = 0; k < probes_of(i); k++)
			assert_int_equal(session_table_count_probe(t, tok, src, 1, &c), 1);
	}
}

static void check_counts(struct session_table *t, int n, int same, int removed_from)
{
	uint8_t tok[WIRE_TOKEN_LEN];

	for (int i = 0; i < n; i++) {
		token_of(i, same, tok);
		if (i >= removed_from && i % 2 == 0)
			assert_true(session_table_probe_count(t, tok) == 0);
		else
			assert_true(session_table_probe_count(t, tok) == (uint64_t)probes_of(i));
	}
}

static void run_table(int same)
{
	struct session_table t;
	struct sockaddr_storage cl;
	uint8_t tok[WIRE_TOKEN_LEN];
	uint64_t c;

	client_of(&cl);
	assert_int_equal(session_table_init(&t, N), 0);
	for (int i = 0; i < N; i++) {
		token_of(i, same, tok);
		assert_int_equal(session_table_add(&t, tok, (struct sockaddr *)&cl), 0);
	}
	token_of(N, same, tok);
	assert_int_equal(session_table_add(&t, tok, (struct sockaddr *)&cl), -1); /* full */
	probe_all(&t, N, same, (struct sockaddr *)&cl);
	check_counts(&t, N, same, N);
	/* Every second entry of the upper half goes: ends and middles of chains alike. */
	for (int i = N / 2; i < N; i += 2) {
		token_of(i, same, tok);
		session_table_remove(&t, tok);
		assert_int_equal(session_table_count_probe(&t, tok, (struct sockaddr *)&cl, 1, &c), 0);
	}
	check_counts(&t, N, same, N / 2);
	/* Removing what is not there changes nothing. */
	token_of(N + 1, same, tok);
	session_table_remove(&t, tok);
	check_counts(&t, N, same, N / 2);
	/* Growth keeps every live entry, its count and its place in a chain. */
	assert_int_equal(session_table_grow(&t, 4 * N), 0);
	check_counts(&t, N, same, N / 2);
	/* Freed slots and the new ones take new sessions, which count from zero. */
	for (int i = N; i < 3 * N; i++) {
		token_of(i, same, tok);
		assert_int_equal(session_table_add(&t, tok, (struct sockaddr *)&cl), 0);
		assert_int_equal(session_table_count_probe(&t, tok, (struct sockaddr *)&cl, 1, &c), 1);
		assert_true(c == 1);
	}
	check_counts(&t, N, same, N / 2);
	session_table_free(&t);
}

static void test_spread_tokens(void **state)
{
	run_table(0);
}

/* All in one bucket: one long chain, the worst a lookup can meet. */
static void test_one_bucket(void **state)
{
	run_table(1);
}

/* Another address with a live token is not the session's client. */
static void test_wrong_source(void **state)
{
	struct session_table t;
	struct sockaddr_storage cl, other;
	uint8_t tok[WIRE_TOKEN_LEN];
	uint64_t c;

	client_of(&cl);
	client_of(&other);
	((struct sockaddr_in *)&other)->sin_addr.s_addr ^= htonl(1);
	token_of(3, 0, tok);
	assert_int_equal(session_table_init(&t, 4), 0);
	assert_int_equal(session_table_add(&t, tok, (struct sockaddr *)&cl), 0);
	assert_int_equal(session_table_count_probe(&t, tok, (struct sockaddr *)&other, 1, &c), 0);
	assert_true(session_table_probe_count(&t, tok) == 0);
	session_table_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spread_tokens),
		cmocka_unit_test(test_one_bucket),
		cmocka_unit_test(test_wrong_source),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

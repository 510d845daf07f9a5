/* test_fleet: the server-list parsers (entries, --servers lists, --server-list files with their
 * line numbers), the median and choice rules, and one real race on loopback: a listener wins
 * over a port that refuses. */
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "client/model/fleet.h"
#include "client/run/fleetrace.h"
#include "common/clock.h"

static struct fleet *new_fleet(void)
{
	struct fleet *f = malloc(sizeof(*f));

	assert_non_null(f);
	fleet_init(f);
	return f;
}

/* s must parse as one entry giving host and port. */
static void expect_entry(const char *s, const char *host, uint16_t port)
{
	struct fleet *f = new_fleet();
	char err[FLEET_ERR_MAX] = "";

	assert_int_equal(fleet_add_entry(f, s, strlen(s), 4750, err, sizeof(err)), 0);
	assert_int_equal(f->n, 1);
	assert_string_equal(f->cand[0].host, host);
	assert_int_equal(f->cand[0].port, port);
	free(f);
}

/* s must be refused with exactly want. */
static void expect_bad_entry(const char *s, size_t n, const char *want)
{
	struct fleet *f = new_fleet();
	char err[FLEET_ERR_MAX] = "";

	assert_int_equal(fleet_add_entry(f, s, n, 4750, err, sizeof(err)), -1);
	assert_int_equal(f->n, 0);
	assert_string_equal(err, want);
	free(f);
}

#define BAD(s, want) expect_bad_entry(s, sizeof(s) - 1, want)

static void test_entries(void **state)
{
	(void)state;
	expect_entry("bm1.example.net", "bm1.example.net", 4750);
	expect_entry("bm1.example.net:4800", "bm1.example.net", 4800);
	expect_entry("  192.0.2.7:1 \t", "192.0.2.7", 1);
	expect_entry("192.0.2.7:65535", "192.0.2.7", 65535);
	expect_entry("[2001:db8::1]:4752", "2001:db8::1", 4752);
	expect_entry("[2001:db8::1]", "2001:db8::1", 4750);
	expect_entry("2001:db8::1", "2001:db8::1", 4750);     /* bare IPv6: no port */
	expect_entry("::1", "::1", 4750);
	expect_entry("[fe80::1%eth0]:80", "fe80::1%eth0", 80);
	expect_entry("[::ffff:192.0.2.1]:9", "::ffff:192.0.2.1", 9);
}

static void test_bad_entries(void **state)
{
	(void)state;
	BAD("", "empty server entry");
	BAD("  \t", "empty server entry");
	BAD("host:", "bad server \"host:\": invalid port (1-65535)");
	BAD("host:0", "bad server \"host:0\": invalid port (1-65535)");
	BAD("host:65536", "bad server \"host:65536\": invalid port (1-65535)");
	BAD("host:+80", "bad server \"host:+80\": invalid port (1-65535)");
	BAD("host:80x", "bad server \"host:80x\": invalid port (1-65535)");
	BAD("host: 80", "bad server \"host: 80\": invalid port (1-65535)");
	BAD(":4750", "bad server \":4750\": not a host name or address");
	BAD("-x", "bad server \"-x\": not a host name or address");
	BAD("two words", "bad server \"two words\": not a host name or address");
	BAD("a:b:c", "bad server \"a:b:c\": not a valid IPv6 address");
	BAD("[2001:db8::1", "bad server \"[2001:db8::1\": missing ']'");
	BAD("[2001:db8::1]x", "bad server \"[2001:db8::1]x\": unexpected text after ']'");
	BAD("[2001:db8::1]:", "bad server \"[2001:db8::1]:\": invalid port (1-65535)");
	BAD("[host]:80", "bad server \"[host]:80\": not an IPv6 address inside [ ]");
	BAD("[192.0.2.1]:80", "bad server \"[192.0.2.1]:80\": not an IPv6 address inside [ ]");
	BAD("[]:80", "bad server \"[]:80\": not an IPv6 address inside [ ]");
	BAD("[fe80::1%]:80", "bad server \"[fe80::1%]:80\": not an IPv6 address inside [ ]");
	BAD("[fe80::1%a/b]", "bad server \"[fe80::1%a/b]\": not an IPv6 address inside [ ]");
	BAD("a\0b", "NUL byte in server entry \"a?b\"");
	BAD("h\x01st", "bad server \"h?st\": not a host name or address");
}

static void test_entry_limits(void **state)
{
	struct fleet *f = new_fleet();
	char err[FLEET_ERR_MAX] = "", name[32], big[400];

	(void)state;
	for (int i = 0; i < FLEET_MAX; i++) {
		snprintf(name, sizeof(name), "s%d.example", i);
		assert_int_equal(fleet_add_entry(f, name, strlen(name), 4750, err, sizeof(err)), 0);
	}
	assert_int_equal(fleet_add_entry(f, "one-more", 8, 4750, err, sizeof(err)), -1);
	assert_string_equal(err, "more than 64 servers");
	fleet_init(f);
	assert_int_equal(fleet_add_entry(f, "a.example", 9, 4750, err, sizeof(err)), 0);
	assert_int_equal(fleet_add_entry(f, "A.EXAMPLE:4750", 14, 4750, err, sizeof(err)), -1);
	assert_string_equal(err, "server \"A.EXAMPLE:4750\" is listed twice");
	assert_int_equal(fleet_add_entry(f, "a.example:4751", 14, 4750, err, sizeof(err)), 0);
	memset(big, 'a', sizeof(big));
	assert_int_equal(fleet_add_entry(f, big, 254, 4750, err, sizeof(err)), -1); /* > 253 */
	assert_int_equal(fleet_add_entry(f, big, sizeof(big), 4750, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "longer than 262 bytes"));
	assert_int_equal(f->n, 2);
	free(f);
}

static void test_list(void **state)
{
	struct fleet *f = new_fleet();
	char err[FLEET_ERR_MAX] = "", str[64];

	(void)state;
	assert_int_equal(fleet_parse_list(f, "a.example, b.example:4800,[2001:db8::2]:9", 4751,
					  err, sizeof(err)), 0);
	assert_int_equal(f->n, 3);
	assert_string_equal(f->cand[1].host, "b.example");
	assert_int_equal(f->cand[0].port, 4751);
	fleet_entry_str(&f->cand[2], str, sizeof(str));
	assert_string_equal(str, "[2001:db8::2]:9");
	fleet_entry_str(&f->cand[0], str, sizeof(str));
	assert_string_equal(str, "a.example:4751");
	fleet_init(f);
	assert_int_equal(fleet_parse_list(f, "a,,b", 4750, err, sizeof(err)), -1);
	assert_string_equal(err, "empty server entry");
	fleet_init(f);
	assert_int_equal(fleet_parse_list(f, "a,", 4750, err, sizeof(err)), -1);
	fleet_init(f);
	assert_int_equal(fleet_parse_list(f, "", 4750, err, sizeof(err)), -1);
	free(f);
}

static void test_text(void **state)
{
	static const char good[] = "# fleet\n\n  bm1.example.net   # primary\r\n"
				   "bm2.example.net:4800\n[2001:db8::5]:4750\n\t\n192.0.2.9";
	struct fleet *f = new_fleet();
	char err[FLEET_ERR_MAX] = "", line[FLEET_MAX_LINE + 2];

	(void)state;
	assert_int_equal(fleet_parse_text(f, good, sizeof(good) - 1, 4750, err, sizeof(err)), 0);
	assert_int_equal(f->n, 4);
	assert_string_equal(f->cand[0].host, "bm1.example.net");
	assert_string_equal(f->cand[3].host, "192.0.2.9"); /* last line without a newline */
	fleet_init(f);
	assert_int_equal(fleet_parse_text(f, "a\n\nb:99999\n", 11, 4750, err, sizeof(err)), -1);
	assert_string_equal(err, "3: bad server \"b:99999\": invalid port (1-65535)");
	fleet_init(f);
	assert_int_equal(fleet_parse_text(f, "# nothing\n\n", 11, 4750, err, sizeof(err)), -1);
	assert_string_equal(err, "no servers listed");
	fleet_init(f);
	assert_int_equal(fleet_parse_text(f, "", 0, 4750, err, sizeof(err)), -1);
	fleet_init(f);
	assert_int_equal(fleet_parse_text(f, "a\nb c\n", 6, 4750, err, sizeof(err)), -1);
	assert_string_equal(err, "2: bad server \"b c\": not a host name or address");
	fleet_init(f);
	assert_int_equal(fleet_parse_text(f, "a\0b\n", 4, 4750, err, sizeof(err)), -1);
	assert_string_equal(err, "1: NUL byte in server entry \"a?b\"");
	memset(line, 'x', sizeof(line));
	fleet_init(f);
	assert_int_equal(fleet_parse_text(f, line, sizeof(line), 4750, err, sizeof(err)), -1);
	assert_string_equal(err, "1: line longer than 300 bytes");
	/* Only the length given is read: the 'b' behind it is not part of the text. */
	fleet_init(f);
	assert_int_equal(fleet_parse_text(f, "a\nb", 2, 4750, err, sizeof(err)), 0);
	assert_int_equal(f->n, 1);
	free(f);
}

static void test_load_file(void **state)
{
	struct fleet *f = new_fleet();
	char path[] = "/tmp/test_fleet.XXXXXX", err[FLEET_ERR_MAX + 64] = "", want[128];
	int fd = mkstemp(path);
	static const char text[] = "a.example\nb.example:1\n";

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
	assert_int_equal(fleet_load_file(f, path, 4750, err, sizeof(err)), 0);
	assert_int_equal(f->n, 2);
	assert_int_equal(write(fd, "c:0\n", 4), 4);
	fleet_init(f);
	assert_int_equal(fleet_load_file(f, path, 4750, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s:3: bad server \"c:0\": invalid port (1-65535)", path);
	assert_string_equal(err, want);
	assert_int_equal(ftruncate(fd, 0), 0);
	fleet_init(f);
	assert_int_equal(fleet_load_file(f, path, 4750, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: no servers listed", path);
	assert_string_equal(err, want);
	assert_int_equal(ftruncate(fd, FLEET_MAX_FILE + 1), 0);
	fleet_init(f);
	assert_int_equal(fleet_load_file(f, path, 4750, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: larger than 64 KiB", path);
	assert_string_equal(err, want);
	close(fd);
	unlink(path);
	assert_int_equal(fleet_load_file(f, path, 4750, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: cannot open: No such file or directory", path);
	assert_string_equal(err, want);
	free(f);
}

static void test_median(void **state)
{
	double a[] = { 3, 1, 2 }, b[] = { 4, 1, 3, 2 }, c[] = { INFINITY, 1, INFINITY, 2, 5 };
	double d[] = { INFINITY, 1, INFINITY, INFINITY, 5 }, e[] = { 1, INFINITY };

	(void)state;
	assert_true(fleet_median(a, 3) == 2);
	assert_true(fleet_median(b, 4) == 2.5);
	assert_true(fleet_median(c, 5) == 5);       /* two failures rank last */
	assert_true(isinf(fleet_median(d, 5)));     /* most failed */
	assert_true(isinf(fleet_median(e, 2)));
	assert_true(isnan(fleet_median(a, 0)));
}

/* Gives candidate i of f the samples v (INFINITY: failed) and summarises it. */
static void give(struct fleet *f, int i, const double *v, int n, const char *last_error)
{
	struct fleet_candidate *c = &f->cand[i];

	for (int k = 0; k < n; k++)
		c->sample_ms[k] = v[k];
	c->attempts = n;
	snprintf(c->error, sizeof(c->error), "%s", last_error);
	fleet_summarise(c);
}

static void test_choice(void **state)
{
	static const double slow[] = { 9, 8, 10, 9.5, 8.5 }, fast[] = { 2, 2.5, 1.5, INFINITY, 3 };
	static const double flaky[] = { 0.1, INFINITY, INFINITY, 0.2, INFINITY };
	static const double same[] = { 2.0004, 2.5, 1.5, 2.4, 2.0 };
	static const double none[] = { INFINITY, INFINITY, INFINITY, INFINITY, INFINITY };
	struct fleet *f = new_fleet();
	char err[FLEET_ERR_MAX], s[FLEET_ERR_MAX * 2];

	(void)state;
	assert_int_equal(fleet_parse_list(f, "slow,fast,flaky,same", 4750, err, sizeof(err)), 0);
	assert_int_equal(fleet_choose(f), -1); /* nothing measured yet */
	give(f, 0, slow, 5, "");
	give(f, 1, fast, 5, "connection reset by peer");
	give(f, 2, flaky, 5, "no answer within 2000 ms");
	give(f, 3, same, 5, "");
	assert_true(f->cand[1].median_ms == 2.5);
	assert_true(f->cand[1].min_ms == 1.5);
	assert_int_equal(f->cand[1].samples, 4);
	assert_int_equal(f->cand[1].failed, 1);
	assert_string_equal(f->cand[1].error, ""); /* reachable: no error */
	assert_true(isnan(f->cand[2].median_ms));  /* 3 of 5 failed: unreachable... */
	assert_true(f->cand[2].min_ms == 0.1);     /* ...even though its best was the fastest */
	assert_string_equal(f->cand[2].error,
			    "3 of 5 handshakes failed (no answer within 2000 ms)");
	/* 2.4 vs 2.5: "same" has the lower median and wins. */
	assert_int_equal(fleet_choose(f), 3);
	/* A median equal to the reported microsecond ties; the first listed wins. */
	give(f, 3, (const double[]){ 2.5, 2.5, 2.5004, 2.6, 2.6 }, 5, "");
	assert_true(f->cand[3].median_ms == 2.5004);
	give(f, 1, (const double[]){ 2.5003, 2.5003, 2.5003 }, 3, "");
	assert_int_equal(fleet_choose(f), 1);
	give(f, 3, (const double[]){ 2.4994, 2.4994, 2.4994 }, 3, "");
	assert_int_equal(fleet_choose(f), 3); /* 2.499 < 2.500 */
	give(f, 0, none, 5, "connection refused");
	give(f, 1, none, 5, "connection refused");
	give(f, 3, none, 0, "cannot resolve same: Name or service not known");
	assert_string_equal(f->cand[0].error, "connection refused");
	assert_int_equal(fleet_choose(f), -1);
	fleet_unreachable_sentence(f, s, sizeof(s));
	assert_string_equal(s, "none of the 4 servers could be reached: slow:4750 (connection "
			       "refused), fast:4750 (connection refused), flaky:4750 (3 of 5 "
			       "handshakes failed (no answer within 2000 ms)), same:4750 (cannot "
			       "resolve same: Name or service not known)");
	fleet_unreachable_sentence(f, s, 40); /* cut short, still terminated */
	assert_int_equal(strlen(s), 39);
	assert_string_equal(s + 36, "...");
	free(f);
}

/* A loopback socket bound to a free port; listening or not (then connects are refused). */
static int loopback_socket(int listening, uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	if (listening)
		assert_int_equal(listen(fd, 16), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

static void test_race_loopback(void **state)
{
	struct fleet_timing t = { .samples = 3, .spacing_ms = 20, .timeout_ms = 1000 };
	struct fleet *f = new_fleet();
	char err[FLEET_ERR_MAX * 2] = "", list[96];
	uint16_t live, dead;
	int lfd = loopback_socket(1, &live), dfd = loopback_socket(0, &dead);

	(void)state;
	snprintf(list, sizeof(list), "127.0.0.1:%u,127.0.0.1:%u", dead, live);
	assert_int_equal(fleet_parse_list(f, list, 4750, err, sizeof(err)), 0);
	assert_int_equal(fleet_measure(f, &t, NULL, err, sizeof(err)), 1);
	assert_int_equal(f->chosen, 1);
	assert_string_equal(f->cand[1].numeric, "127.0.0.1");
	assert_int_equal(f->cand[1].samples, 3);
	assert_true(f->cand[1].median_ms > 0 && f->cand[1].median_ms < 100);
	assert_true(f->cand[1].min_ms <= f->cand[1].median_ms);
	assert_string_equal(f->cand[0].error, "connection refused");
	assert_int_equal(f->cand[0].failed, 3);
	/* Nobody listening anywhere: one sentence, no choice. */
	fleet_init(f);
	snprintf(list, sizeof(list), "127.0.0.1:%u", dead);
	assert_int_equal(fleet_parse_list(f, list, 4750, err, sizeof(err)), 0);
	assert_int_equal(fleet_measure(f, &t, NULL, err, sizeof(err)), -1);
	snprintf(list, sizeof(list), "the server 127.0.0.1:%u could not be reached "
		 "(connection refused)", dead);
	assert_string_equal(err, list);
	close(lfd);
	close(dfd);
	free(f);
}

/* Every attempt fails inside connect() itself (TCP to a multicast address is ENETUNREACH at
 * once, as is any address on a host without a route): the race must end when the last one
 * has, not wait in poll with nothing open. The old loop slept forever here. */
static void test_race_fails_at_once(void **state)
{
	struct fleet_timing t = { .samples = 2, .spacing_ms = 10, .timeout_ms = 500 };
	struct fleet *f = new_fleet();
	char err[FLEET_ERR_MAX * 2] = "";
	int64_t t0 = clock_mono_ns();

	(void)state;
	assert_int_equal(fleet_parse_list(f, "224.0.0.1:4750", 4750, err, sizeof(err)), 0);
	assert_int_equal(fleet_measure(f, &t, NULL, err, sizeof(err)), -1);
	assert_true(clock_mono_ns() - t0 < 2 * NS_PER_SEC);
	assert_int_equal(f->cand[0].failed, 2);
	assert_non_null(strstr(err, "the server 224.0.0.1:4750 could not be reached"));
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entries),
		cmocka_unit_test(test_bad_entries),
		cmocka_unit_test(test_entry_limits),
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_median),
		cmocka_unit_test(test_choice),
		cmocka_unit_test(test_race_loopback),
		cmocka_unit_test(test_race_fails_at_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

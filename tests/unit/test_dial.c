/* Unit tests for common/dial.c: RFC 8305's family interleaving, and the connection race on
 * loopback: an address whose SYNs go unanswered (a listener with a full accept queue) must not
 * delay the next address by more than the stagger, and every failure must be reported. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/clock.h"
#include "common/dial.h"

static struct sockaddr_storage v4(uint16_t port)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *a = (struct sockaddr_in *)&ss;

	memset(&ss, 0, sizeof(ss));
	a->sin_family = AF_INET;
	a->sin_port = htons(port);
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return ss;
}

static struct sockaddr_storage v6(uint16_t port)
{
	struct sockaddr_storage ss;
	struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

	memset(&ss, 0, sizeof(ss));
	a->sin6_family = AF_INET6;
	a->sin6_port = htons(port);
	a->sin6_addr = in6addr_loopback;
	return ss;
}

static uint16_t port_of(const struct sockaddr_storage *ss)
{
	return ntohs(((const struct sockaddr_in *)ss)->sin_port); /* same offset in sockaddr_in6 */
}

/* 6 6 6 4 4 → 6 4 6 4 6: alternate from the first family, each in its order. */
static void test_interleave(void **state)
{
	struct sockaddr_storage sa[5] = { v6(1), v6(2), v6(3), v4(4), v4(5) };
	socklen_t len[5] = { 28, 28, 28, 16, 16 };
	static const uint16_t want[5] = { 1, 4, 2, 5, 3 };

	(void)state;
	dial_interleave(sa, len, 5);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(port_of(&sa[i]), want[i]);
		assert_int_equal(len[i], sa[i].ss_family == AF_INET6 ? 28 : 16);
	}
}

/* A listener on a free loopback port with the given backlog; its port in *port. */
static int listener(int backlog, uint16_t *port)
{
	struct sockaddr_storage ss = v4(0);
	socklen_t sl = sizeof(struct sockaddr_in);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&ss, sl), 0);
	assert_int_equal(listen(fd, backlog), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&ss, &sl), 0);
	*port = port_of(&ss);
	return fd;
}

/* A port with nothing listening (bound, never listened: connects are refused at once). */
static int closed_port(uint16_t *port)
{
	struct sockaddr_storage ss = v4(0);
	socklen_t sl = sizeof(struct sockaddr_in);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&ss, sl), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&ss, &sl), 0);
	*port = port_of(&ss);
	return fd;
}

/* The first address answers no SYN (its accept queue is full, so the kernel drops them); the
 * second connects. The race must pick the second after one stagger, not after the timeout. */
static void test_race_skips_silent_address(void **state)
{
	uint16_t silent, good;
	int ls = listener(0, &silent), lg = listener(4, &good), fill[2], won = -1, fd;
	struct sockaddr_storage sa[2] = { v4(silent), v4(good) };
	socklen_t len[2] = { sizeof(struct sockaddr_in), sizeof(struct sockaddr_in) };
	char err[200];
	int64_t t0;

	(void)state;
	/* Backlog 0 holds one completed connection; the next handshake is left unanswered. */
	for (int i = 0; i < 2; i++) {
		fill[i] = dial_race(sa, len, 1, NULL, DIAL_STAGGER_MS, 200, &won, err, sizeof(err));
		if (i == 0)
			assert_true(fill[0] >= 0);
	}
	t0 = clock_mono_ns();
	fd = dial_race(sa, len, 2, NULL, DIAL_STAGGER_MS, 5000, &won, err, sizeof(err));
	assert_true(fd >= 0);
	assert_int_equal(won, 1);
	/* One stagger (250 ms) and the handshake; far below the 5 s a sequential try takes. */
	assert_true(clock_mono_ns() - t0 < 2000 * NS_PER_MS);
	close(fd);
	for (int i = 0; i < 2; i++)
		if (fill[i] >= 0)
			close(fill[i]);
	close(ls);
	close(lg);
}

/* A refused address hands over to the next at once; when all fail, err names the last. */
static void test_race_all_refused(void **state)
{
	uint16_t a, b;
	int fa = closed_port(&a), fb = closed_port(&b), won = -1;
	struct sockaddr_storage sa[2] = { v4(a), v4(b) };
	socklen_t len[2] = { sizeof(struct sockaddr_in), sizeof(struct sockaddr_in) };
	char err[200], want[64];
	int64_t t0 = clock_mono_ns();

	(void)state;
	assert_int_equal(dial_race(sa, len, 2, NULL, DIAL_STAGGER_MS, 5000, &won, err, sizeof(err)), -1);
	assert_true(clock_mono_ns() - t0 < DIAL_STAGGER_MS * NS_PER_MS);
	snprintf(want, sizeof(want), "cannot connect to 127.0.0.1:%u: Connection refused", b);
	assert_string_equal(err, want);
	close(fa);
	close(fb);
}

/* An attempt that never completes ends at its timeout with a sentence saying so. */
static void test_race_timeout(void **state)
{
	uint16_t silent;
	int ls = listener(0, &silent), fill[2], won;
	struct sockaddr_storage sa[1] = { v4(silent) };
	socklen_t len[1] = { sizeof(struct sockaddr_in) };
	char err[200];

	(void)state;
	for (int i = 0; i < 2; i++)
		fill[i] = dial_race(sa, len, 1, NULL, DIAL_STAGGER_MS, 200, &won, err, sizeof(err));
	assert_int_equal(dial_race(sa, len, 1, NULL, DIAL_STAGGER_MS, 300, &won, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "timed out after 300 ms"));
	for (int i = 0; i < 2; i++)
		if (fill[i] >= 0)
			close(fill[i]);
	close(ls);
}

/* -B: the connection leaves from the local address asked for (127.0.0.2, also on lo), as
 * the listener sees it; an IPv6 local address for an IPv4 server fails that attempt. */
static void test_race_from_local(void **state)
{
	uint16_t port;
	int ls = listener(4, &port), won = -1, fd, afd;
	struct sockaddr_storage sa[1] = { v4(port) }, local = v4(0), peer, six = v6(0);
	socklen_t len[1] = { sizeof(struct sockaddr_in) }, pl = sizeof(peer);
	char err[256];

	(void)state;
	((struct sockaddr_in *)&local)->sin_addr.s_addr = htonl(0x7f000002);
	fd = dial_race(sa, len, 1, &local, DIAL_STAGGER_MS, 2000, &won, err, sizeof(err));
	assert_true(fd >= 0);
	afd = accept(ls, (struct sockaddr *)&peer, &pl);
	assert_true(afd >= 0);
	assert_int_equal(ntohl(((struct sockaddr_in *)&peer)->sin_addr.s_addr), 0x7f000002);
	close(afd);
	close(fd);
	assert_int_equal(dial_race(sa, len, 1, &six, DIAL_STAGGER_MS, 2000, &won, err, sizeof(err)),
			 -1);
	close(ls);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interleave),
		cmocka_unit_test(test_race_skips_silent_address),
		cmocka_unit_test(test_race_all_refused),
		cmocka_unit_test(test_race_timeout),
		cmocka_unit_test(test_race_from_local),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for common/sock.c address helpers: which peers count as the same client for the
 * daemon's per-client session limit, and how addresses print; and the check of a congestion
 * control name against the kernel's list of available ones. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/sock.h"

static struct sockaddr_storage addr(const char *s, uint16_t port)
{
	struct sockaddr_storage ss;

	memset(&ss, 0, sizeof(ss));
	if (strchr(s, ':')) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_port = htons(port);
		assert_int_equal(inet_pton(AF_INET6, s, &a->sin6_addr), 1);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_port = htons(port);
		assert_int_equal(inet_pton(AF_INET, s, &a->sin_addr), 1);
	}
	return ss;
}

static int same(const char *a, const char *b)
{
	struct sockaddr_storage x = addr(a, 1000), y = addr(b, 2000);

	return sock_same_client((struct sockaddr *)&x, (struct sockaddr *)&y);
}

static void test_same_client(void **state)
{
	assert_true(same("192.0.2.1", "192.0.2.1"));           /* ports differ: same client */
	assert_false(same("192.0.2.1", "192.0.2.2"));          /* IPv4: the address itself */
	assert_true(same("192.0.2.1", "::ffff:192.0.2.1"));    /* mapped is the same address */
	assert_false(same("192.0.2.1", "::ffff:192.0.2.2"));
	assert_true(same("2001:db8:1:2::1", "2001:db8:1:2:aaaa::5")); /* same /64 */
	assert_false(same("2001:db8:1:2::1", "2001:db8:1:3::1"));     /* next /64 */
	assert_false(same("2001:db8:1:2::1", "192.0.2.1"));
}

/* Addresses print with and without the port; a mapped address prints as IPv4. */
static void test_addr_str(void **state)
{
	static const struct {
		const char *in, *ip, *full;
	} c[] = {
		{ "192.0.2.1", "192.0.2.1", "192.0.2.1:4750" },
		{ "::ffff:192.0.2.7", "192.0.2.7", "192.0.2.7:4750" },
		{ "2001:db8::1", "2001:db8::1", "[2001:db8::1]:4750" },
	};
	char buf[64];
	struct sockaddr_storage ss;

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		ss = addr(c[i].in, 4750);
		sock_ip_str((struct sockaddr *)&ss, buf, sizeof(buf));
		assert_string_equal(buf, c[i].ip);
		sock_addr_str((struct sockaddr *)&ss, buf, sizeof(buf));
		assert_string_equal(buf, c[i].full);
	}
	memset(&ss, 0, sizeof(ss));
	sock_ip_str((struct sockaddr *)&ss, buf, sizeof(buf));
	assert_string_equal(buf, "?");
	ss = addr("2001:db8::1", 1);
	sock_ip_str((struct sockaddr *)&ss, buf, 4); /* too small: "?" rather than a cut address */
	assert_string_equal(buf, "?");
}

/* Whole words of the kernel's list only: a prefix, a longer name or an empty one is not in it
 * (the daemon must never set a name the kernel would load a module for). */
static void test_cc_listed(void **state)
{
	const char *list = "reno cubic bbr\n";

	assert_true(sock_cc_listed(list, "reno"));
	assert_true(sock_cc_listed(list, "cubic"));
	assert_true(sock_cc_listed(list, "bbr"));
	assert_false(sock_cc_listed(list, "bb"));
	assert_false(sock_cc_listed(list, "bbr2"));
	assert_false(sock_cc_listed(list, "htcp"));
	assert_false(sock_cc_listed(list, ""));
	assert_false(sock_cc_listed("", "reno"));
	assert_true(sock_cc_listed("  reno\tcubic ", "cubic"));
	/* Every kernel has reno built in. */
	assert_true(sock_cc_available("reno"));
	assert_false(sock_cc_available("bm_no_such_cc"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_client),
		cmocka_unit_test(test_addr_str),
		cmocka_unit_test(test_cc_listed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

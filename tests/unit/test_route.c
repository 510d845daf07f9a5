/* test_route: the rtnetlink route answer parser on crafted RTM_NEWROUTE messages (gateway,
 * on-link, IPv6 link-local gateway, RTA_VIA, errors, truncation), and one live loopback
 * lookup. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/route.h"

#define SEQ 4711

/* A netlink buffer built message by message (aligned like a receive buffer). */
struct nlbuf {
	union {
		struct nlmsghdr align;
		uint8_t b[1024];
	} u;
	size_t len;
	struct nlmsghdr *cur;
};

static struct nlmsghdr *nl_begin(struct nlbuf *nb, uint16_t type, uint32_t seq)
{
	struct nlmsghdr *nh = (struct nlmsghdr *)(nb->u.b + nb->len);

	memset(nh, 0, NLMSG_HDRLEN);
	nh->nlmsg_len = NLMSG_HDRLEN;
	nh->nlmsg_type = type;
	nh->nlmsg_seq = seq;
	nb->cur = nh;
	return nh;
}

static void nl_put(struct nlbuf *nb, const void *data, size_t len)
{
	uint8_t *at = (uint8_t *)nb->cur + nb->cur->nlmsg_len;

	memcpy(at, data, len);
	memset(at + len, 0, NLMSG_ALIGN(len) - len);
	nb->cur->nlmsg_len += (uint32_t)NLMSG_ALIGN(len);
}

static void nl_attr(struct nlbuf *nb, unsigned short type, const void *data, size_t len)
{
	struct rtattr rta = { .rta_len = (unsigned short)RTA_LENGTH(len), .rta_type = type };
	uint8_t tmp[64];

	assert_true(RTA_SPACE(len) <= sizeof(tmp));
	memset(tmp, 0, sizeof(tmp));
	memcpy(tmp, &rta, sizeof(rta));
	memcpy(tmp + RTA_LENGTH(0), data, len);
	nl_put(nb, tmp, RTA_SPACE(len));
}

static void nl_end(struct nlbuf *nb)
{
	nb->len += NLMSG_ALIGN(nb->cur->nlmsg_len);
}

static void nl_route(struct nlbuf *nb, uint32_t seq, int family, unsigned char type)
{
	struct rtmsg rt = { .rtm_family = (unsigned char)family, .rtm_type = type,
			    .rtm_dst_len = family == AF_INET ? 32 : 128,
			    .rtm_table = RT_TABLE_MAIN };

	nl_begin(nb, RTM_NEWROUTE, seq);
	nl_put(nb, &rt, sizeof(rt));
}

static void addr4(const char *s, struct in_addr *a)
{
	assert_int_equal(inet_pton(AF_INET, s, a), 1);
}

static void addr6(const char *s, struct in6_addr *a)
{
	assert_int_equal(inet_pton(AF_INET6, s, a), 1);
}

static void assert_ip(const struct sockaddr_storage *ss, const char *want)
{
	char buf[INET6_ADDRSTRLEN];
	const void *a = ss->ss_family == AF_INET6 ?
				(const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr :
				(const void *)&((const struct sockaddr_in *)ss)->sin_addr;

	assert_non_null(inet_ntop(ss->ss_family, a, buf, sizeof(buf)));
	assert_string_equal(buf, want);
}

static void test_gateway_v4(void **state)
{
	struct nlbuf nb = { .len = 0 };
	struct route_info ri;
	struct in_addr dst, gw, src;
	uint32_t table = RT_TABLE_MAIN;
	int oif = 7;
	char err[128];

	addr4("198.18.42.2", &dst);
	addr4("198.18.41.1", &gw);
	addr4("198.18.41.2", &src);
	nl_route(&nb, SEQ, AF_INET, RTN_UNICAST);
	nl_attr(&nb, RTA_TABLE, &table, sizeof(table));
	nl_attr(&nb, RTA_DST, &dst, sizeof(dst));
	nl_attr(&nb, RTA_OIF, &oif, sizeof(oif));
	nl_attr(&nb, RTA_PREFSRC, &src, sizeof(src));
	nl_attr(&nb, RTA_GATEWAY, &gw, sizeof(gw));
	nl_end(&nb);
	assert_int_equal(route_parse_reply(nb.u.b, nb.len, SEQ, AF_INET, &ri, err, sizeof(err)), 1);
	assert_true(ri.has_gateway);
	assert_ip(&ri.gateway, "198.18.41.1");
	assert_int_equal(ri.gateway_len, sizeof(struct sockaddr_in));
	assert_ip(&ri.src, "198.18.41.2");
	assert_int_equal(ri.ifindex, 7);
	assert_string_equal(ri.ifname, ""); /* the parser never asks the kernel */
}

static void test_onlink_v4(void **state)
{
	struct nlbuf nb = { .len = 0 };
	struct route_info ri;
	struct in_addr dst;
	int oif = 3;
	char err[128];

	addr4("198.18.41.1", &dst);
	nl_route(&nb, SEQ, AF_INET, RTN_UNICAST);
	nl_attr(&nb, RTA_DST, &dst, sizeof(dst));
	nl_attr(&nb, RTA_OIF, &oif, sizeof(oif));
	nl_end(&nb);
	assert_int_equal(route_parse_reply(nb.u.b, nb.len, SEQ, AF_INET, &ri, err, sizeof(err)), 1);
	assert_false(ri.has_gateway);
	assert_int_equal(ri.ifindex, 3);
	assert_int_equal(ri.src.ss_family, AF_UNSPEC);
}

static void test_gateway_v6_link_local(void **state)
{
	struct nlbuf nb = { .len = 0 };
	struct route_info ri;
	struct in6_addr gw, src;
	int oif = 12;
	char err[128];

	addr6("fe80::1", &gw);
	addr6("2001:2:0:41::2", &src);
	nl_route(&nb, SEQ, AF_INET6, RTN_UNICAST);
	nl_attr(&nb, RTA_GATEWAY, &gw, sizeof(gw)); /* before RTA_OIF: order must not matter */
	nl_attr(&nb, RTA_OIF, &oif, sizeof(oif));
	nl_attr(&nb, RTA_PREFSRC, &src, sizeof(src));
	nl_end(&nb);
	assert_int_equal(route_parse_reply(nb.u.b, nb.len, SEQ, AF_INET6, &ri, err, sizeof(err)),
			 1);
	assert_true(ri.has_gateway);
	assert_ip(&ri.gateway, "fe80::1");
	assert_int_equal(((struct sockaddr_in6 *)&ri.gateway)->sin6_scope_id, 12);
	assert_int_equal(ri.gateway_len, sizeof(struct sockaddr_in6));
	assert_ip(&ri.src, "2001:2:0:41::2");
}

static void test_via_v6_for_v4(void **state)
{
	struct nlbuf nb = { .len = 0 };
	struct route_info ri;
	uint8_t via[2 + 16];
	uint16_t fam = AF_INET6;
	struct in6_addr gw;
	char err[128];

	addr6("2001:2:0:41::1", &gw);
	memcpy(via, &fam, 2);
	memcpy(via + 2, &gw, 16);
	nl_route(&nb, SEQ, AF_INET, RTN_UNICAST);
	nl_attr(&nb, RTA_VIA, via, sizeof(via));
	nl_end(&nb);
	assert_int_equal(route_parse_reply(nb.u.b, nb.len, SEQ, AF_INET, &ri, err, sizeof(err)), 1);
	assert_true(ri.has_gateway);
	assert_ip(&ri.gateway, "2001:2:0:41::1");
	/* A via with a short address is malformed. */
	nb.len = 0;
	nl_route(&nb, SEQ, AF_INET, RTN_UNICAST);
	nl_attr(&nb, RTA_VIA, via, 2 + 3);
	nl_end(&nb);
	assert_int_equal(route_parse_reply(nb.u.b, nb.len, SEQ, AF_INET, &ri, err, sizeof(err)), -1);
}

static void test_truncated_attributes(void **state)
{
	struct nlbuf nb = { .len = 0 };
	struct route_info ri;
	struct in_addr gw;
	struct rtattr *rta;
	char err[128];

	addr4("198.18.41.1", &gw);
	/* An address attribute of the wrong size. */
	nl_route(&nb, SEQ, AF_INET, RTN_UNICAST);
	nl_attr(&nb, RTA_GATEWAY, &gw, 3);
	nl_end(&nb);
	assert_int_equal(route_parse_reply(nb.u.b, nb.len, SEQ, AF_INET, &ri, err, sizeof(err)), -1);
	assert_string_equal(err, "the kernel's route answer has a malformed attribute");
	/* An attribute claiming more than its message holds ends the walk before it. */
	nb.len = 0;
	nl_route(&nb, SEQ, AF_INET, RTN_UNICAST);
	nl_attr(&nb, RTA_GATEWAY, &gw, sizeof(gw));
	nl_end(&nb);
	rta = (struct rtattr *)(nb.u.b + NLMSG_SPACE(sizeof(struct rtmsg)));
	rta->rta_len = 200;
	assert_int_equal(route_parse_reply(nb.u.b, nb.len, SEQ, AF_INET, &ri, err, sizeof(err)), 1);
	assert_false(ri.has_gateway);
	rta->rta_len = 2; /* shorter than its own header */
	assert_int_equal(route_parse_reply(nb.u.b, nb.len, SEQ, AF_INET, &ri, err, sizeof(err)), 1);
	assert_false(ri.has_gateway);
	/* The message cut inside its route header. */
	nb.cur->nlmsg_len = NLMSG_HDRLEN + 4;
	assert_int_equal(route_parse_reply(nb.u.b, nb.len, SEQ, AF_INET, &ri, err, sizeof(err)), -1);
	/* A message longer than the buffer is not a message. */
	nb.cur->nlmsg_len = (uint32_t)nb.len + 4;
	assert_int_equal(route_parse_reply(nb.u.b, nb.len, SEQ, AF_INET, &ri, err, sizeof(err)), 0);
	/* Every shorter buffer: no message, or a truncated one, never a read past the end. */
	nb.cur->nlmsg_len = (uint32_t)nb.len;
	rta->rta_len = RTA_LENGTH(sizeof(gw));
	for (size_t cut = 0; cut < nb.len; cut++) {
		uint8_t *c = malloc(cut ? cut : 1);

		assert_non_null(c);
		memcpy(c, nb.u.b, cut);
		assert_int_equal(route_parse_reply(c, cut, SEQ, AF_INET, &ri, err, sizeof(err)), 0);
		free(c);
	}
}

static void test_errors(void **state)
{
	struct nlbuf nb = { .len = 0 };
	struct route_info ri;
	struct nlmsgerr e = { .error = -ENETUNREACH };
	char err[128];

	nl_begin(&nb, NLMSG_ERROR, SEQ);
	nl_put(&nb, &e, sizeof(e));
	nl_end(&nb);
	assert_int_equal(route_parse_reply(nb.u.b, nb.len, SEQ, AF_INET, &ri, err, sizeof(err)), -1);
	assert_string_equal(err, strerror(ENETUNREACH));
	/* Another request's error is not ours. */
	assert_int_equal(route_parse_reply(nb.u.b, nb.len, SEQ + 1, AF_INET, &ri, err, sizeof(err)),
			 0);
	/* IPv6 answers an unreachable route with the route itself. */
	nb.len = 0;
	nl_route(&nb, SEQ, AF_INET6, RTN_UNREACHABLE);
	nl_end(&nb);
	assert_int_equal(route_parse_reply(nb.u.b, nb.len, SEQ, AF_INET6, &ri, err, sizeof(err)),
			 -1);
	assert_string_equal(err, "the route is unreachable");
	/* The wrong family. */
	assert_int_equal(route_parse_reply(nb.u.b, nb.len, SEQ, AF_INET, &ri, err, sizeof(err)), -1);
	/* An error message too short for its struct. */
	nb.len = 0;
	nl_begin(&nb, NLMSG_ERROR, SEQ);
	nl_put(&nb, &e, 4);
	nl_end(&nb);
	assert_int_equal(route_parse_reply(nb.u.b, nb.len, SEQ, AF_INET, &ri, err, sizeof(err)), -1);
	/* Done without a route. */
	nb.len = 0;
	nl_begin(&nb, NLMSG_DONE, SEQ);
	nl_end(&nb);
	assert_int_equal(route_parse_reply(nb.u.b, nb.len, SEQ, AF_INET, &ri, err, sizeof(err)), -1);
}

static void test_skips_other_messages(void **state)
{
	struct nlbuf nb = { .len = 0 };
	struct route_info ri;
	struct in_addr gw;
	char err[128];

	addr4("198.18.41.1", &gw);
	nl_route(&nb, SEQ - 1, AF_INET, RTN_UNICAST); /* a stale answer */
	nl_end(&nb);
	nl_begin(&nb, NLMSG_NOOP, SEQ);
	nl_end(&nb);
	nl_route(&nb, SEQ, AF_INET, RTN_UNICAST);
	nl_attr(&nb, RTA_GATEWAY, &gw, sizeof(gw));
	nl_end(&nb);
	assert_int_equal(route_parse_reply(nb.u.b, nb.len, SEQ, AF_INET, &ri, err, sizeof(err)), 1);
	assert_true(ri.has_gateway);
	assert_int_equal(route_parse_reply(nb.u.b, 0, SEQ, AF_INET, &ri, err, sizeof(err)), 0);
}

/* Live: the kernel's own answer for loopback (on-link via lo). */
static void test_lookup_loopback(void **state)
{
	struct sockaddr_storage dst;
	struct sockaddr_in *sin = (struct sockaddr_in *)&dst;
	struct route_info ri;
	char err[256];

	memset(&dst, 0, sizeof(dst));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (route_lookup(&dst, &ri, err, sizeof(err)) != 0)
		fail_msg("route_lookup(127.0.0.1): %s", err);
	assert_false(ri.has_gateway);
	assert_string_equal(ri.ifname, "lo");
	assert_ip(&ri.src, "127.0.0.1");
	dst.ss_family = AF_UNIX;
	assert_int_equal(route_lookup(&dst, &ri, err, sizeof(err)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gateway_v4),
		cmocka_unit_test(test_onlink_v4),
		cmocka_unit_test(test_gateway_v6_link_local),
		cmocka_unit_test(test_via_v6_for_v4),
		cmocka_unit_test(test_truncated_attributes),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_skips_other_messages),
		cmocka_unit_test(test_lookup_loopback),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

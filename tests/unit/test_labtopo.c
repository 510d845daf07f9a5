/* Unit tests for client/lab/labtopo.c, the lab's chain plan: one router gives the classic
 * lab's names and addresses; a chain gives each link its own subnet, routers veth-c/veth-s
 * ports, the bottleneck router the "r" namespace, and routes that reach both ends; out-of-range
 * hop counts are refused; namespace suffixes are recognised for stale-namespace cleanup. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "client/lab/labtopo.h"

/* Node n's route k: IPv4 destination and next hop. */
static void assert_route4(const struct labtopo *t, int n, int k, const char *dst, const char *via)
{
	assert_true(k < t->nodes[n].nroutes);
	assert_string_equal(t->nodes[n].routes[k].v4_dst, dst);
	assert_string_equal(t->nodes[n].routes[k].v4_via, via);
}

static void test_one_router_is_classic(void **state)
{
	struct labtopo t;

	(void)state;
	assert_int_equal(labtopo_plan(1, 1, &t), 0);
	assert_int_equal(t.nnodes, 3);
	assert_int_equal(t.nlinks, 2);
	assert_string_equal(t.nodes[0].suffix, "c");
	assert_string_equal(t.nodes[1].suffix, "r");
	assert_string_equal(t.nodes[2].suffix, "s");
	assert_string_equal(t.links[0].a.dev, "veth-r");
	assert_string_equal(t.links[0].a.v4, "198.18.1.2/24");
	assert_string_equal(t.links[0].b.dev, "veth-c");
	assert_string_equal(t.links[0].b.v4, "198.18.1.1/24");
	assert_string_equal(t.links[1].a.dev, "veth-s");
	assert_string_equal(t.links[1].a.v6, "2001:2:0:2::1/64");
	assert_string_equal(t.links[1].b.dev, "veth-r");
	assert_string_equal(t.server_v4, "198.18.2.2");
	assert_string_equal(t.server_v6, "2001:2:0:2::2");
	/* the router needs no route: both its subnets are its own */
	assert_int_equal(t.nodes[1].nroutes, 0);
	assert_route4(&t, 0, 0, "default", "198.18.1.1");
	assert_string_equal(t.nodes[2].routes[0].v6_via, "2001:2:0:2::1");
}

static void test_chain_of_three(void **state)
{
	struct labtopo t;

	(void)state;
	assert_int_equal(labtopo_plan(3, 2, &t), 0);
	assert_int_equal(t.nnodes, 5);
	assert_string_equal(t.nodes[1].suffix, "h1");
	assert_string_equal(t.nodes[2].suffix, "r");
	assert_string_equal(t.nodes[3].suffix, "h3");
	assert_string_equal(t.nodes[4].suffix, "s");
	/* r1—r2: r1's server-side port, r2's client-side port, subnet 2 */
	assert_int_equal(t.links[1].a.node, 1);
	assert_string_equal(t.links[1].a.dev, "veth-s");
	assert_string_equal(t.links[1].a.v4, "198.18.2.1/24");
	assert_int_equal(t.links[1].b.node, 2);
	assert_string_equal(t.links[1].b.dev, "veth-c");
	assert_string_equal(t.links[1].b.v4, "198.18.2.2/24");
	assert_string_equal(t.links[3].b.dev, "veth-r");
	assert_string_equal(t.server_v4, "198.18.4.2");
	/* router 1: on toward the server only; router 2: both ways; router 3: back only */
	assert_int_equal(t.nodes[1].nroutes, 1);
	assert_route4(&t, 1, 0, "default", "198.18.2.2");
	assert_int_equal(t.nodes[2].nroutes, 2);
	assert_route4(&t, 2, 0, "default", "198.18.3.2");
	assert_route4(&t, 2, 1, "198.18.1.0/24", "198.18.2.1");
	assert_int_equal(t.nodes[3].nroutes, 1);
	assert_string_equal(t.nodes[3].routes[0].v6_dst, "2001:2:0:1::/64");
	assert_string_equal(t.nodes[3].routes[0].v6_via, "2001:2:0:3::1");
	assert_route4(&t, 4, 0, "default", "198.18.4.1");
}

static void test_out_of_range(void **state)
{
	struct labtopo t;

	(void)state;
	assert_false(labtopo_valid(2, 3));
	assert_true(labtopo_valid(3, 3));
	assert_int_equal(labtopo_plan(0, 1, &t), -1);
	assert_int_equal(labtopo_plan(LABTOPO_MAX_HOPS + 1, 1, &t), -1);
	assert_int_equal(labtopo_plan(2, 3, &t), -1);
	assert_int_equal(labtopo_plan(2, 0, &t), -1);
	assert_int_equal(labtopo_plan(LABTOPO_MAX_HOPS, LABTOPO_MAX_HOPS, &t), 0);
	assert_string_equal(t.server_v6, "2001:2:0:9::2");
}

static void test_suffixes(void **state)
{
	(void)state;
	assert_true(labtopo_suffix_valid("c"));
	assert_true(labtopo_suffix_valid("r"));
	assert_true(labtopo_suffix_valid("s"));
	assert_true(labtopo_suffix_valid("h1"));
	assert_true(labtopo_suffix_valid("h8"));
	assert_false(labtopo_suffix_valid("h9"));
	assert_false(labtopo_suffix_valid("h0"));
	assert_false(labtopo_suffix_valid("h"));
	assert_false(labtopo_suffix_valid("h12"));
	assert_false(labtopo_suffix_valid("x"));
	assert_false(labtopo_suffix_valid(""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_router_is_classic),
		cmocka_unit_test(test_chain_of_three),
		cmocka_unit_test(test_out_of_range),
		cmocka_unit_test(test_suffixes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

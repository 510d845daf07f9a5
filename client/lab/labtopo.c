/* labtopo: the chain's names, devices, addresses (RFC 2544 198.18.0.0/15, RFC 5180
 * 2001:2::/48: benchmarking ranges only) and routes. */
#include "client/lab/labtopo.h"

#include <stdio.h>
#include <string.h>

/* The host part of node `node`'s address on link i: the client is .2 on link 1 and its router
 * .1 (the classic lab's addresses); on every later link the client's side is .1 and the far
 * side .2, so the server is always .2. */
static int labtopo_host(int link, int node)
{
	int client_side = node == link - 1;

	if (link == 1)
		return client_side ? 2 : 1;
	return client_side ? 1 : 2;
}

static void labtopo_addr(int link, int host, int prefix, char *v4, size_t v4len, char *v6,
			 size_t v6len)
{
	if (prefix) {
		snprintf(v4, v4len, "198.18.%d.%d/24", link, host);
		snprintf(v6, v6len, "2001:2:0:%x::%d/64", (unsigned)link, host);
	} else {
		snprintf(v4, v4len, "198.18.%d.%d", link, host);
		snprintf(v6, v6len, "2001:2:0:%x::%d", (unsigned)link, host);
	}
}

static void labtopo_end(int link, int node, const char *dev, struct labtopo_end *e)
{
	e->node = node;
	snprintf(e->dev, sizeof(e->dev), "%s", dev);
	labtopo_addr(link, labtopo_host(link, node), 1, e->v4, sizeof(e->v4), e->v6,
		     sizeof(e->v6));
}

/* A route to dst (NULL: default) via node `via`'s address on link `link`. */
static void labtopo_route(struct labtopo_node *n, int link, int via, int to_client)
{
	struct labtopo_route *r = &n->routes[n->nroutes++];

	labtopo_addr(link, labtopo_host(link, via), 0, r->v4_via, sizeof(r->v4_via), r->v6_via,
		     sizeof(r->v6_via));
	snprintf(r->v4_dst, sizeof(r->v4_dst), "%s", to_client ? "198.18.1.0/24" : "default");
	snprintf(r->v6_dst, sizeof(r->v6_dst), "%s", to_client ? "2001:2:0:1::/64" : "default");
}

/* Routers' ports are veth-c (toward the client) and veth-s (toward the server), so the
 * bottleneck's qdiscs sit on the same names at any hop; the client's and the server's port is
 * veth-r. */
static void labtopo_links(struct labtopo *t)
{
	for (int i = 1; i <= t->nlinks; i++) {
		struct labtopo_link *l = &t->links[i - 1];

		labtopo_end(i, i - 1, i == 1 ? "veth-r" : "veth-s", &l->a);
		labtopo_end(i, i, i == t->nlinks ? "veth-r" : "veth-c", &l->b);
	}
}

/* The client and the server route everything to their router; router j sends on toward the
 * server by default and back toward the client's subnet through router j - 1. */
static void labtopo_routes(struct labtopo *t)
{
	int server = t->hops + 1;

	labtopo_route(&t->nodes[0], 1, 1, 0);
	labtopo_route(&t->nodes[server], server, server - 1, 0);
	for (int j = 1; j <= t->hops; j++) {
		if (j < t->hops)
			labtopo_route(&t->nodes[j], j + 1, j + 1, 0);
		if (j > 1)
			labtopo_route(&t->nodes[j], j, j - 1, 1);
	}
}

/* One digit per hop in the namespace suffix (h1..h9). */
_Static_assert(LABTOPO_MAX_HOPS <= 9, "hop suffixes are one digit");

int labtopo_valid(int hops, int bneck_hop)
{
	return hops >= 1 && hops <= LABTOPO_MAX_HOPS && bneck_hop >= 1 && bneck_hop <= hops;
}

int labtopo_plan(int hops, int bneck_hop, struct labtopo *t)
{
	if (!labtopo_valid(hops, bneck_hop))
		return -1;
	memset(t, 0, sizeof(*t));
	t->hops = hops;
	t->bneck_hop = bneck_hop;
	t->nnodes = hops + 2;
	t->nlinks = hops + 1;
	for (int i = 0; i < t->nnodes; i++) {
		struct labtopo_node *n = &t->nodes[i];

		n->router = i > 0 && i <= hops;
		if (!n->router)
			snprintf(n->suffix, sizeof(n->suffix), "%s", i == 0 ? "c" : "s");
		else if (i == bneck_hop)
			snprintf(n->suffix, sizeof(n->suffix), "r");
		else
			snprintf(n->suffix, sizeof(n->suffix), "h%c", (char)('0' + i));
	}
	labtopo_links(t);
	labtopo_routes(t);
	labtopo_addr(t->nlinks, 2, 0, t->server_v4, sizeof(t->server_v4), t->server_v6,
		     sizeof(t->server_v6));
	return 0;
}

int labtopo_suffix_valid(const char *s)
{
	if (strcmp(s, "c") == 0 || strcmp(s, "r") == 0 || strcmp(s, "s") == 0)
		return 1;
	return s[0] == 'h' && s[1] >= '1' && s[1] <= '0' + LABTOPO_MAX_HOPS && s[2] == '\0';
}

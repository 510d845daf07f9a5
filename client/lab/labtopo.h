/* labtopo: the lab's chain of namespaces as a plan — the client, routers at hops 1..N (one of
 * them the bottleneck), the server — with each link's devices and addresses and each node's
 * routes. Pure (no system calls); lab.c carries the plan out with ip(8). Layer: client/lab;
 * called by lab.c and its unit test. */
#ifndef BM_LABTOPO_H
#define BM_LABTOPO_H

#define LABTOPO_MAX_HOPS 8
#define LABTOPO_MAX_NODES (LABTOPO_MAX_HOPS + 2)
#define LABTOPO_MAX_ROUTES 2

/* One end of a veth pair: its node (0 = client, 1..N = routers, N + 1 = server), device name
 * and addresses with prefix length. */
struct labtopo_end {
	int node;
	char dev[16];
	char v4[24];
	char v6[48];
};

/* Link i joins node i - 1 (end a, toward the client) and node i (end b). */
struct labtopo_link {
	struct labtopo_end a, b;
};

/* A route: destination ("default" or a prefix) and next hop, per family. */
struct labtopo_route {
	char v4_dst[24], v4_via[24];
	char v6_dst[48], v6_via[48];
};

struct labtopo_node {
	char suffix[8];     /* namespace name suffix: c, s, r (the bottleneck router), h<hop> */
	int router;
	int nroutes;
	struct labtopo_route routes[LABTOPO_MAX_ROUTES];
};

struct labtopo {
	int hops;           /* routers between client and server */
	int bneck_hop;      /* the router that holds the bottleneck, 1..hops */
	int nnodes;         /* hops + 2 */
	int nlinks;         /* hops + 1 */
	struct labtopo_node nodes[LABTOPO_MAX_NODES];
	struct labtopo_link links[LABTOPO_MAX_NODES - 1];
	char server_v4[16], server_v6[40]; /* the server's address, without prefix */
};

/* Whether a chain of hops routers (1..LABTOPO_MAX_HOPS) with the bottleneck at bneck_hop
 * (1..hops) can be planned. */
int labtopo_valid(int hops, int bneck_hop);
/* Plans a chain of hops routers (1..LABTOPO_MAX_HOPS) with the bottleneck at bneck_hop
 * (1..hops). Returns 0, or -1 if either is out of range. With one router the plan is the
 * classic lab: client 198.18.1.2 — router — server 198.18.2.2. */
int labtopo_plan(int hops, int bneck_hop, struct labtopo *t);
/* Whether s is a suffix some plan gives a namespace (c, r, s, h1..h8). */
int labtopo_suffix_valid(const char *s);

#endif

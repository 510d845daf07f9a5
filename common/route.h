/* route: the first hop towards a destination as the kernel would route it (rtnetlink
 * RTM_GETROUTE), so the client can probe its gateway next to the server. */
#ifndef BM_ROUTE_H
#define BM_ROUTE_H

#include <net/if.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct route_info {
	int has_gateway;                 /* 0: the destination is on-link (or local) */
	struct sockaddr_storage gateway; /* valid when has_gateway; link-local IPv6 carries the
					  * outgoing interface as its scope id */
	socklen_t gateway_len;
	char ifname[IFNAMSIZ];           /* outgoing interface ("" if the kernel named none) */
	int ifindex;                     /* 0 if the kernel named none */
	struct sockaddr_storage src;     /* preferred source address (AF_UNSPEC if none) */
};

/* Asks the kernel for the route to dst (IPv4, IPv6, or IPv4-mapped IPv6). Returns 0, or -1
 * with one sentence in err (no route, unreachable route, netlink failure). */
int route_lookup(const struct sockaddr_storage *dst, struct route_info *out, char *err,
		 size_t errlen);

/* Parses the kernel's answer to an RTM_GETROUTE request with sequence number seq for family
 * (AF_INET or AF_INET6). Pure and bounded: reads only buf[0..len). Fills everything but
 * ifname. Returns 1 when the answer was found and parsed, 0 when buf holds no message for
 * this request (read more), -1 with one sentence in err when the kernel refused or the answer
 * is malformed. Exposed for tests and the fuzzer. */
int route_parse_reply(const void *buf, size_t len, uint32_t seq, int family,
		      struct route_info *out, char *err, size_t errlen);

#endif

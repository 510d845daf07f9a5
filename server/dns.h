/* dns (server): the daemon's authoritative DNS responder for the probe zone, on its own thread
 * like the reflector, so load never delays an answer; plus its per-source rate limiter. */
#ifndef BM_SERVER_DNS_H
#define BM_SERVER_DNS_H

#include <stdint.h>
#include <sys/socket.h>

#include "server/ctx.h"

#define DNS_RL_SLOTS 4096        /* buckets; sources hash into them with a secret key */
#define DNS_RL_RATE 200          /* queries per second and source */
#define DNS_RL_BURST 100         /* queries a quiet source may send at once */

/* Per-source token buckets kept as "theoretical arrival times" (GCRA): one int64 per bucket.
 * A source is its IPv4 address or its IPv6 /64 (one subscriber's usual share). Sources that
 * hash to the same bucket share it; with a secret key nobody can aim at another's bucket. */
struct dns_ratelimit {
	uint64_t key;
	int64_t tat[DNS_RL_SLOTS];
};

/* Starts with every bucket full; key is the secret hash key. */
void dns_ratelimit_init(struct dns_ratelimit *rl, uint64_t key);
/* 1 if src may be answered at now_ns (CLOCK_MONOTONIC), 0 if it is over its rate. */
int dns_ratelimit_allow(struct dns_ratelimit *rl, const struct sockaddr *src, int64_t now_ns);

struct dns_responder;

/* Answers DNS queries on udp_fd (a bound UDP socket, owned by the responder from now on) for
 * the zone srv->cfg->dns_zone (NULL: DNS_DEFAULT_ZONE). NULL on failure (fd closed). */
struct dns_responder *dns_responder_start(struct server_ctx *srv, int udp_fd);
/* Stops the thread, logs the counters, closes the socket, frees. NULL is fine. */
void dns_responder_stop(struct dns_responder *d);

#endif

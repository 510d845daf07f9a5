/* pendcap: the caps on connections that are not yet sessions (docs/protocol.md, "Telling
 * connections apart"). A connection holds a slot from accept until its first whole message
 * classified it and, for a control connection, on through the hello stage (the hello, with a
 * psk-file the challenge and auth) until its welcome or refusal: silent, trickling or
 * unauthenticated peers can then hold neither an unbounded number of sockets and buffers nor
 * the whole budget. The accept stage (server/accept.c) takes a slot; whoever owns the
 * connection when its stage ends releases it (server/accept.c, server/hello.c). Any thread:
 * the slots are listed under server_ctx.lock. */
#ifndef BM_PENDCAP_H
#define BM_PENDCAP_H

#include <sys/socket.h>

#include "server/ctx.h"

struct pendcap_slot;

/* Connections one client (IPv4 address or IPv6 /64) may hold in these stages, a running
 * session or not: 2 × max-flows + 16, so its own bursts (every flow of a bidirectional phase
 * at once, connect probes, its control connection) fit. */
int pendcap_client_max(const struct server_ctx *srv);
/* Connections all clients may hold: 4 × max-sessions + 64 (every session's control and data
 * connections arriving at once), and at least two clients' caps, so one source never takes
 * more than half of it. */
int pendcap_max(const struct server_ctx *srv);
/* A slot for a new connection from peer, or NULL: *over_cap 1 when a cap refused it (0 when
 * memory ran out). */
struct pendcap_slot *pendcap_take(struct server_ctx *srv, const struct sockaddr_storage *peer,
				  int *over_cap);
/* Gives slot back and frees it; NULL does nothing. */
void pendcap_release(struct server_ctx *srv, struct pendcap_slot *slot);

#endif

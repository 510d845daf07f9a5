/* hello: a control connection from its first byte to its session (docs/protocol.md,
 * "Control"): hello, with a psk-file the challenge and auth that precede the welcome, the
 * hello's fields checked, admission (server/admission.c), then the session created and
 * started with its welcome (server/sessionlife.c). Every refusal is one error or busy reply
 * and a close. The accept stage (server/accept.c) hands connections over here. */
#ifndef BM_HELLO_H
#define BM_HELLO_H

#include <sys/socket.h>

#include <event2/bufferevent.h>

#include "server/ctx.h"

struct pendcap_slot;

/* Takes over a connection classified as control (bytes may already be buffered), on the
 * thread of worker, whose base bev is on, with its place under the pending caps (slot, given
 * back when the stage ends; NULL: none) and the accept stage's deadline (CLOCK_MONOTONIC ns):
 * the whole exchange up to the welcome or refusal ends by then, however the peer trickles,
 * or the connection is closed and counted (ctrl_timeout). */
void hello_start(struct server_ctx *srv, int worker, struct bufferevent *bev,
		 const struct sockaddr *peer, struct pendcap_slot *slot, int64_t deadline_ns);

#endif

/* ctrlmsg: control messages on one connection (a bufferevent): queueing one, taking the next
 * whole one, and the last reply before a close (an error or busy, flushed, then a lingering
 * close that discards what the peer still sends until it closes or LINGER_S pass; at most
 * ctrlmsg_linger_max such at once). The control stages call it on the thread of the
 * connection's worker: server/hello.c, server/admission.c and server/sessionlife.c. */
#ifndef BM_CTRLMSG_H
#define BM_CTRLMSG_H

#include <stddef.h>

#include <event2/bufferevent.h>
#include <json-c/json.h>

struct server_ctx;

/* Queues msg as one frame on bev's output and releases msg. 0 or -1. */
int ctrlmsg_send(struct bufferevent *bev, json_object *msg);
/* Takes the next whole message from bev's input: 1 with *msg (the caller puts it), 0 when
 * more bytes are needed, -1 on a protocol error with the reason in err. */
int ctrlmsg_take(struct bufferevent *bev, json_object **msg, char *err, size_t errlen)
	__attribute__((warn_unused_result));
/* An `error` message with reason (docs/protocol.md: the server closes after it). */
json_object *ctrlmsg_error(const char *reason);
/* Sends msg (released) as the last reply and closes (public-server discipline: one reply,
 * then close). Takes bev over: the caller must not touch it again. */
void ctrlmsg_reply_and_close(struct server_ctx *srv, struct bufferevent *bev, json_object *msg);
/* ctrlmsg_reply_and_close with ctrlmsg_error(reason). */
void ctrlmsg_fail(struct server_ctx *srv, struct bufferevent *bev, const char *reason);
/* At most this many connections linger at once (server_ctx.nlingering): as many as may be
 * pending (pendcap_max). A new one over it resets the oldest of its own thread, or is itself
 * reset without its reply when that thread has none; counted in linger_dropped. */
int ctrlmsg_linger_max(const struct server_ctx *srv);

#endif

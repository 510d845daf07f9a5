/* connprobe: the server side of the connect probe — a new TCP connection that carries one
 * 32-byte request, gets an 8-byte answer and is closed by the client. */
#ifndef BM_CONNPROBE_H
#define BM_CONNPROBE_H

#include <sys/socket.h>

#include <event2/bufferevent.h>

#include "server/ctx.h"

#define CONNPROBE_TIMEOUT_S 5   /* the whole exchange, from classification to close */
#define CONNPROBE_RATE_MAX 50   /* answered connect probes per session and second */
#define CONNPROBE_OPEN_MAX 16   /* answered connect probes per session still open */

enum connprobe_verdict { CONNPROBE_ANSWER, CONNPROBE_BAD, CONNPROBE_LIMITED };

/* Judges one complete request (buf holds everything received so far) from peer at now_ns:
 * ANSWER with *req decoded and the session's rate window and open count charged, or BAD
 * (undecodable, trailing bytes, unknown token, wrong IP) or LIMITED, with *why. Pure apart
 * from the session's limit fields; exposed for the fuzzer. */
enum connprobe_verdict connprobe_judge(struct server_ctx *srv, const uint8_t *buf, size_t len,
				       const struct sockaddr *peer, int64_t now_ns,
				       struct wire_connprobe_req *req, const char **why);

/* Takes over a connection whose buffered input starts with a whole connect-probe request
 * (accept.c's pending stage guarantees it, and times out the others). Owns and frees bev. */
void connprobe_start(struct server_ctx *srv, struct bufferevent *bev, const struct sockaddr *peer);
/* Counts and logs a connection that began a connect probe but did not complete the request
 * within the pending deadline (server.c holds connections until their first whole message). */
void connprobe_incomplete(struct server_ctx *srv, const struct sockaddr *peer);

#endif

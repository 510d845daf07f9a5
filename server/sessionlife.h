/* sessionlife: a session's life from its creation after an admitted hello to its end: the
 * stats pushed every 100 ms with the deadline (in every state), idle-timeout, the closing
 * bound, the unread backlog cap and the upload limit enforced, the
 * client's summary, bye and its final stats, the shutdown notice, and the end itself (the
 * test recorded, flows closed, token and list entry removed). server/hello.c creates and
 * starts sessions; server/server.c sends the shutdown notice (through the worker pool) and
 * closes what is left at exit. Everything on the session's worker unless said. */
#ifndef BM_SESSIONLIFE_H
#define BM_SESSIONLIFE_H

#include <stdint.h>
#include <sys/socket.h>

#include <event2/bufferevent.h>
#include <json-c/json.h>

#include "server/ctx.h"

#define SESSIONLIFE_CC_USED_LEN 16 /* a congestion control name and its NUL */
/* A closing session (after bye, or the shutdown notice) ends once its last message is
 * flushed, and at the latest this many seconds (or idle-timeout, if shorter) after it began
 * to close: a client that never reads cannot keep its place. */
#define SESSIONLIFE_CLOSE_S 5
#define SESSIONLIFE_CC_WHY_LEN 128
/* An active session whose control connection holds this many unsent bytes (past what the
 * kernel buffers) ends: its client does not read its stats, which would otherwise queue
 * (~2.4 kB/s) until the deadline. A reading client never comes near it: stats are a few
 * hundred bytes every 100 ms, and even a path's full kernel buffers take them. */
#define SESSIONLIFE_BACKLOG_MAX (16 * 1024)

/* A new session for peer on bev, run by worker, in the place admission_admit reserved: its
 * token registered for the reflector, linked into the server's list (admission_link). NULL
 * when out of memory or table space, or over the per-client limit after all (*busy_until
 * set, else left 0); the place is then given back. Whether this host can set cc goes into
 * the session; used (SESSIONLIFE_CC_USED_LEN) gets what a socket really ends up with and why
 * (SESSIONLIFE_CC_WHY_LEN) the reason it could not, for the welcome. */
struct session *sessionlife_new(struct server_ctx *srv, int worker, struct bufferevent *bev,
				const struct sockaddr_storage *peer, const char *cc,
				int64_t duration, char *used, char *why, int64_t *busy_until);
/* Starts s's life on its connection: its callbacks and stats tick, then sends welcome
 * (released) and handles what the client pipelined behind its hello. On failure ends s. */
void sessionlife_start(struct session *s, json_object *welcome);
/* Ends s: its test goes into the ring of recent tests, its flows, token and connection go,
 * and it is freed. */
void sessionlife_end(struct session *s);
/* Shutdown: tells every active session of worker its client "server shutting down" (one
 * error message) and stops its stats and new flows; sessions end when their clients close. */
void sessionlife_shutdown_all(struct server_ctx *srv, int worker);
/* Ends every session (daemon shutdown, once the worker threads are stopped; main thread). */
void sessionlife_close_all(struct server_ctx *srv);

#endif

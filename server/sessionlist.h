/* sessionlist: the daemon's list of live sessions (server_ctx.sessions, every worker's), under
 * server_ctx.lock: the lookups by token that route a data connection or connect probe to its
 * session (server/accept.c, server/connprobe.c), the count the drain on SIGTERM waits for
 * (server/server.c), the per-client figures admission checks (server/admission.c), and
 * linking and unlinking (admission and server/sessionlife.c). Any thread unless said. */
#ifndef BM_SESSIONLIST_H
#define BM_SESSIONLIST_H

#include <stdint.h>
#include <sys/socket.h>

#include "server/ctx.h"

/* The live session with token, or NULL. It may be used only on the thread of its worker
 * (session.worker): another may free it at any time. */
struct session *sessionlist_find(struct server_ctx *srv, const uint8_t *token);
/* The worker of the live session with token whose client has peer's IP address (peer NULL:
 * any), or -1: where a data connection or connect probe must go. */
int sessionlist_worker(struct server_ctx *srv, const uint8_t *token, const struct sockaddr *peer);
/* Running sessions, with the places reserved by hellos being admitted (server_ctx.nsessions). */
int sessionlist_count(struct server_ctx *srv);

/* The caller holds srv->lock for these three. */
/* Running sessions of the client at peer (one IPv4 address or IPv6 /64). */
int sessionlist_client_sessions_locked(const struct server_ctx *srv, const struct sockaddr *peer);
/* The earliest expected end (start + requested duration) among the running sessions, or only
 * those of the client at peer (NULL: all); 0 when there are none. */
int64_t sessionlist_earliest_end_locked(const struct server_ctx *srv, const struct sockaddr *peer);
/* Gives s the next session id and links it (into a place admission reserved). */
void sessionlist_link_locked(struct server_ctx *srv, struct session *s);

/* Unlinks s and gives back its place. On s's worker, as s ends. */
void sessionlist_unlink(struct server_ctx *srv, struct session *s);

#endif

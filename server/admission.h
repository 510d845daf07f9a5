/* admission: whether a hello may start a session (max-duration, the shutdown drain,
 * max-sessions, max-sessions-per-client, the host egress limit of limits_admission) and the
 * reply when it may not: an error, or busy with retry_after_s. Admitting takes one of
 * max-sessions' places (server_ctx.nsessions) under server_ctx.lock, so two workers cannot
 * both take the last one; the new session then links into it (admission_link) or gives it
 * back (admission_unreserve). Called by server/hello.c and server/sessionlife.c, on the
 * thread of the connection's worker. */
#ifndef BM_ADMISSION_H
#define BM_ADMISSION_H

#include <stdint.h>
#include <sys/socket.h>

#include <event2/bufferevent.h>

#include "server/ctx.h"

/* The limits a new session for peer, asking for duration seconds, must pass: 0 with a place
 * reserved, or -1 after an error or busy reply on bev (counted by reason). A busy client
 * learns when the first session in its way ends. */
int admission_admit(struct server_ctx *srv, struct bufferevent *bev, const struct sockaddr *peer,
		    int64_t duration);
/* Gives back a place admission_admit reserved for a session that was not created. */
void admission_unreserve(struct server_ctx *srv);
/* Links s into the server's list in the place admission_admit reserved, checking the
 * per-client limit again: two hellos of one client on two workers may both have passed
 * admission_admit, but sessions are linked one at a time. 0, or -1 with *busy_until the
 * earliest end among the client's sessions (the place is still reserved). */
int admission_link(struct server_ctx *srv, struct session *s, int64_t *busy_until);
/* The busy reply on bev (taken over) to a client over max-sessions-per-client whose first
 * session ends at busy_until (CLOCK_MONOTONIC ns); counted. */
void admission_refuse_client(struct server_ctx *srv, struct bufferevent *bev, int64_t busy_until);

#endif

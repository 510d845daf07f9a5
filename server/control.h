/* control: the server side of the control protocol — hello/welcome, periodic stats, bye —
 * and the lifetime of the session it creates. */
#ifndef BM_CONTROL_H
#define BM_CONTROL_H

#include <event2/bufferevent.h>

#include "server/ctx.h"

/* Takes over a connection classified as control (bytes may already be buffered). */
void control_start(struct server_ctx *srv, struct bufferevent *bev, const struct sockaddr *peer);
/* Finds a live session by token (for attaching data connections). */
struct session *control_find_session(struct server_ctx *srv, const uint8_t *token);
/* Ends every session (daemon shutdown). */
void control_close_all(struct server_ctx *srv);
/* Shutdown: tells every active session's client "server shutting down" (one error message)
 * and stops its stats and new flows; sessions end when their clients close. */
void control_shutdown_all(struct server_ctx *srv);

#endif

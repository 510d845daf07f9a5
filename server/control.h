/* control: the server side of the control protocol — hello/welcome, periodic stats, bye —
 * and the lifetime of the session it creates. */
#ifndef BM_CONTROL_H
#define BM_CONTROL_H

#include <event2/bufferevent.h>

#include "server/ctx.h"

/* Takes over a connection classified as control (bytes may already be buffered), on the
 * thread of worker, whose base bev is on. */
void control_start(struct server_ctx *srv, int worker, struct bufferevent *bev,
		   const struct sockaddr *peer);
/* Finds a live session by token. The session may be used only on the thread of its worker
 * (session.worker): another may free it at any time. */
struct session *control_find_session(struct server_ctx *srv, const uint8_t *token);
/* The worker of the live session with token whose client has peer's IP address (peer NULL:
 * any), or -1: where a data connection or connect probe must go. Any thread. */
int control_session_worker(struct server_ctx *srv, const uint8_t *token,
			   const struct sockaddr *peer);
/* Running sessions (with places reserved by hellos being admitted). Any thread. */
int control_count(struct server_ctx *srv);
/* Ends every session (daemon shutdown, once the worker threads are stopped). */
void control_close_all(struct server_ctx *srv);
/* Shutdown: tells every active session of worker its client "server shutting down" (one
 * error message) and stops its stats and new flows; sessions end when their clients close.
 * On that worker's thread. */
void control_shutdown_all(struct server_ctx *srv, int worker);

#endif

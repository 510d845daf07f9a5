/* accept: takes new TCP connections on the daemon's port through their first whole message
 * (bounded in number and time) and hands each to hello, bulk or connprobe. */
#ifndef BM_ACCEPT_H
#define BM_ACCEPT_H

#include <event2/event.h>

#include "server/ctx.h"
#include "server/worker.h"

/* The listener's read callback; arg is the server_ctx. Accepts up to 64 connections a call. */
void accept_callback(evutil_socket_t lfd, short what, void *arg);
/* On worker's thread (base its base): takes over a connection the main thread handed over,
 * and frees j. */
void accept_job_run(struct server_ctx *srv, int worker, struct event_base *base,
		    struct worker_job *j);
/* At shutdown, once the loops have stopped: frees the pending connections still on the main
 * thread (those queued for or on a worker go with the pool, worker_pool_free). */
void accept_close_main(struct server_ctx *srv);
/* Closes a connection that was never taken over (the pool stopped), and frees j. */
void accept_job_drop(struct server_ctx *srv, struct worker_job *j);

#endif

/* worker: the pool of worker threads, each with its own event base, that run control sessions
 * and their bulk flows; the main thread accepts and hands connections over to them. */
#ifndef BM_WORKER_H
#define BM_WORKER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <event2/event.h>

struct server_ctx;
struct pending_conn;
struct pendcap_slot;
struct ssl_st;
struct worker_pool;

#define WORKER_MAX 64
#define WORKER_AUTO_MAX 8 /* workers = 0: one per online CPU, at most this many */

/* An object a worker's loop owns between stages (a TLS handshake, a control connection
 * before its session, a connect probe, a closing reply), listed on its worker so that the
 * pool's shutdown frees it after the threads stopped: close frees it (worker_obj_remove
 * included). Linked and unlinked on the worker's thread only; worker_obj_init makes it
 * unlinked, and removing an unlinked one does nothing. */
struct worker_obj {
	struct worker_obj *prev, *next;
	void (*close)(struct worker_obj *o);
};

/* The object of type that embeds o as member (for the close functions). */
#define WORKER_OBJ_OF(o, type, member) ((type *)(void *)((char *)(o) - offsetof(type, member)))

void worker_obj_init(struct worker_obj *o, void (*close)(struct worker_obj *o));
/* Lists o on worker i (p NULL: not at all, as in unit tests). */
void worker_obj_add(struct worker_pool *p, int i, struct worker_obj *o);
/* Lists o on the worker whose base is base; not at all if none is. */
void worker_obj_add_base(struct worker_pool *p, const struct event_base *base,
			 struct worker_obj *o);
void worker_obj_remove(struct worker_obj *o);

/* What a handed-over connection is, judged by its first whole message (server/accept.c). */
enum worker_job_kind {
	WORKER_JOB_CONTROL,   /* a plain control connection */
	WORKER_JOB_TLS,       /* a TLS ClientHello: the handshake runs on the worker */
	WORKER_JOB_DATA,      /* a data connection of a session on that worker (plain, or TLS
			       * past its handshake: ssl) */
	WORKER_JOB_CONNPROBE, /* a connect probe (judged against the session on that worker) */
};

/* One connection on its way to a worker: its socket and the bytes already read from it. */
struct worker_job {
	struct worker_job *next;
	enum worker_job_kind kind;
	int fd;
	struct ssl_st *ssl;      /* DATA of a TLS load: the established SSL on fd; else NULL */
	struct sockaddr_storage peer;
	struct pending_conn *pc; /* TLS: still a pending connection (counted under the caps) */
	struct pendcap_slot *slot; /* CONTROL: its place under the caps, which the hello stage
				    * keeps (server/pendcap.h); else NULL */
	int64_t deadline_ns;     /* CONTROL: when its hello stage must be done (CLOCK_MONOTONIC) */
	size_t len;
	uint8_t data[];
};

/* What the pool does with what it carries, handed over by its owner (server/server.c) so the
 * pool knows nothing of the stages above it: run takes over a job on worker's thread (base
 * its base) and frees it; drop closes a job never taken over (the pool stopped) and frees it;
 * shutdown sends the shutdown notice to worker's sessions, on its thread. */
struct worker_ops {
	void (*run)(struct server_ctx *srv, int worker, struct event_base *base,
		    struct worker_job *j);
	void (*drop)(struct server_ctx *srv, struct worker_job *j);
	void (*shutdown)(struct server_ctx *srv, int worker);
};

/* Starts n workers (n ≥ 1). With n = 1 the only worker is the main thread's base (no thread,
 * as before workers existed); otherwise n threads with a base each. NULL after logging. */
struct worker_pool *worker_pool_start(struct server_ctx *srv, struct event_base *main_base, int n,
				       const struct worker_ops *ops);
/* Stops and joins the threads (their sessions stay, for the caller to close). */
void worker_pool_stop(struct worker_pool *p);
/* Frees the pool and the bases; call after the sessions are closed. Closes queued jobs and
 * the objects listed on the workers. */
void worker_pool_free(struct worker_pool *p);
int worker_pool_size(const struct worker_pool *p);
/* Whether workers run in threads of their own (n > 1). */
int worker_pool_threaded(const struct worker_pool *p);
/* The worker for a new control connection: fewest running sessions, ties in turn. Main
 * thread only. */
int worker_pick(struct worker_pool *p);
/* Queues job for worker i and wakes it; it then owns job and its fd. -1 (job untouched) if
 * the pool is stopping. */
int worker_submit(struct worker_pool *p, int i, struct worker_job *job);
/* Tells every worker to send the shutdown notice to its sessions (ops->shutdown). */
void worker_pool_shutdown(struct worker_pool *p);
/* The base of worker i. */
struct event_base *worker_base(const struct worker_pool *p, int i);
/* Session counting per worker, for worker_pick and /metrics (p may be NULL: no-ops, 0). */
void worker_session_started(struct worker_pool *p, int i);
void worker_session_ended(struct worker_pool *p, int i);
uint64_t worker_sessions_total(const struct worker_pool *p, int i);
/* The default worker count: online CPUs, 1..WORKER_AUTO_MAX. */
int worker_auto_count(void);

#endif

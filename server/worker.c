/* worker: worker threads with an event base each. The main thread hands a connection over
 * through the worker's locked job queue and an event_active on its base (libevent, set up with
 * evthread_use_pthreads, wakes the loop); from then on only that worker touches it. */
#include "server/worker.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/log.h"

struct worker {
	int index;
	struct worker_pool *pool;
	struct event_base *base;
	int own_base;                 /* created here (threaded); else the main thread's */
	pthread_t thread;
	int started;
	pthread_mutex_t qlock;        /* guards q and q_tail, written by the main thread */
	struct worker_job *q, **q_tail;
	struct event *q_ev;           /* activated by worker_submit */
	struct event *shutdown_ev;    /* activated by worker_pool_shutdown */
	struct event *stop_ev;        /* activated by worker_pool_stop: leaves the loop */
	atomic_int nsessions;
	atomic_uint_least64_t sessions_total;
	struct worker_obj objs;       /* the list's head (worker_obj_add) */
};

struct worker_pool {
	struct server_ctx *srv;
	struct worker_ops ops;
	int n;
	int threaded;
	unsigned next;                /* worker_pick's turn (main thread only) */
	atomic_int stopping;
	struct worker w[];
};

int worker_auto_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		return 1;
	return n > WORKER_AUTO_MAX ? WORKER_AUTO_MAX : (int)n;
}

/* Takes the whole queue at once, so the lock is held only for the swap. */
static void worker_queue_callback(evutil_socket_t fd, short what, void *arg)
{
	struct worker *w = arg;
	struct worker_job *j;

	pthread_mutex_lock(&w->qlock);
	j = w->q;
	w->q = NULL;
	w->q_tail = &w->q;
	pthread_mutex_unlock(&w->qlock);
	while (j != NULL) {
		struct worker_job *next = j->next;

		w->pool->ops.run(w->pool->srv, w->index, w->base, j);
		j = next;
	}
}

static void worker_shutdown_callback(evutil_socket_t fd, short what, void *arg)
{
	struct worker *w = arg;

	w->pool->ops.shutdown(w->pool->srv, w->index);
}

static void worker_stop_callback(evutil_socket_t fd, short what, void *arg)
{
	struct worker *w = arg;

	event_base_loopbreak(w->base);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char name[16];
	sigset_t all;

	/* Signals are the main thread's (libevent's evsignal there). */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	/* A name for top -H and /proc/PID/task/TID/comm: the operator sees each worker's CPU. */
	snprintf(name, sizeof(name), "bmd-worker%d", w->index);
	(void)pthread_setname_np(pthread_self(), name);
	/* The loop must outlive quiet spells without any added event. */
	if (event_base_loop(w->base, EVLOOP_NO_EXIT_ON_EMPTY) < 0)
		log_warnx("worker %d: event loop failed", w->index);
	return NULL;
}

void worker_obj_init(struct worker_obj *o, void (*close)(struct worker_obj *o))
{
	o->prev = o->next = o;
	o->close = close;
}

void worker_obj_add(struct worker_pool *p, int i, struct worker_obj *o)
{
	struct worker_obj *head;

	if (p == NULL || i < 0 || i >= p->n)
		return;
	head = &p->w[i].objs;
	o->next = head->next;
	o->prev = head;
	head->next->prev = o;
	head->next = o;
}

void worker_obj_add_base(struct worker_pool *p, const struct event_base *base,
			 struct worker_obj *o)
{
	for (int i = 0; p != NULL && i < p->n; i++)
		if (p->w[i].base == base) {
			worker_obj_add(p, i, o);
			return;
		}
}

void worker_obj_remove(struct worker_obj *o)
{
	o->prev->next = o->next;
	o->next->prev = o->prev;
	o->prev = o->next = o;
}

/* Closes what is still listed on w: its loop has stopped, its base is still there. */
static void worker_close_objs(struct worker *w)
{
	while (w->objs.next != &w->objs) {
		struct worker_obj *o = w->objs.next;

		worker_obj_remove(o);
		o->close(o);
	}
}

static int worker_init(struct worker_pool *p, struct worker *w, int i, struct event_base *main_base)
{
	worker_obj_init(&w->objs, NULL);
	w->index = i;
	w->pool = p;
	w->q_tail = &w->q;
	if (pthread_mutex_init(&w->qlock, NULL) != 0)
		return -1;
	w->own_base = p->threaded;
	w->base = p->threaded ? event_base_new() : main_base;
	if (w->base == NULL)
		return -1;
	w->q_ev = event_new(w->base, -1, 0, worker_queue_callback, w);
	w->shutdown_ev = event_new(w->base, -1, 0, worker_shutdown_callback, w);
	w->stop_ev = event_new(w->base, -1, 0, worker_stop_callback, w);
	return w->q_ev && w->shutdown_ev && w->stop_ev ? 0 : -1;
}

struct worker_pool *worker_pool_start(struct server_ctx *srv, struct event_base *main_base, int n,
				       const struct worker_ops *ops)
{
	struct worker_pool *p;

	if (n < 1)
		n = 1;
	p = calloc(1, sizeof(*p) + (size_t)n * sizeof(p->w[0]));
	if (p == NULL) {
		log_error("cannot start the workers: out of memory");
		return NULL;
	}
	p->srv = srv;
	p->ops = *ops;
	p->n = n;
	p->threaded = n > 1;
	for (int i = 0; i < n; i++) {
		if (worker_init(p, &p->w[i], i, main_base) < 0) {
			log_error("cannot start worker %d", i);
			p->n = i + 1;
			worker_pool_free(p);
			return NULL;
		}
	}
	for (int i = 0; i < n && p->threaded; i++) {
		int e = pthread_create(&p->w[i].thread, NULL, worker_main, &p->w[i]);

		if (e != 0) {
			log_error("cannot start worker thread %d", i);
			worker_pool_stop(p);
			worker_pool_free(p);
			return NULL;
		}
		p->w[i].started = 1;
	}
	return p;
}

void worker_pool_stop(struct worker_pool *p)
{
	if (p == NULL)
		return;
	atomic_store(&p->stopping, 1);
	for (int i = 0; i < p->n; i++)
		if (p->w[i].started)
			event_active(p->w[i].stop_ev, EV_TIMEOUT, 0);
	for (int i = 0; i < p->n; i++) {
		if (p->w[i].started && pthread_join(p->w[i].thread, NULL) != 0)
			log_warnx("cannot join worker %d", i);
		p->w[i].started = 0;
	}
}

void worker_pool_free(struct worker_pool *p)
{
	if (p == NULL)
		return;
	for (int i = 0; i < p->n; i++) {
		struct worker *w = &p->w[i];

		while (w->q != NULL) {
			struct worker_job *j = w->q;

			w->q = j->next;
			p->ops.drop(p->srv, j);
		}
		worker_close_objs(w);
		if (w->q_ev)
			event_free(w->q_ev);
		if (w->shutdown_ev)
			event_free(w->shutdown_ev);
		if (w->stop_ev)
			event_free(w->stop_ev);
		if (w->own_base && w->base)
			event_base_free(w->base);
		pthread_mutex_destroy(&w->qlock);
	}
	free(p);
}

int worker_pool_size(const struct worker_pool *p)
{
	return p != NULL ? p->n : 0;
}

int worker_pool_threaded(const struct worker_pool *p)
{
	return p != NULL && p->threaded;
}

int worker_pick(struct worker_pool *p)
{
	int best = -1, best_n = 0;

	for (int k = 0; k < p->n; k++) {
		int i = (int)((p->next + (unsigned)k) % (unsigned)p->n);
		int n = atomic_load(&p->w[i].nsessions);

		if (best < 0 || n < best_n) {
			best = i;
			best_n = n;
		}
	}
	/* The next pick starts after this one: a burst of hellos, not yet sessions, spreads. */
	p->next = (unsigned)best + 1;
	return best;
}

int worker_submit(struct worker_pool *p, int i, struct worker_job *job)
{
	struct worker *w = &p->w[i];

	if (atomic_load(&p->stopping))
		return -1;
	job->next = NULL;
	pthread_mutex_lock(&w->qlock);
	*w->q_tail = job;
	w->q_tail = &job->next;
	pthread_mutex_unlock(&w->qlock);
	event_active(w->q_ev, EV_TIMEOUT, 0);
	return 0;
}

void worker_pool_shutdown(struct worker_pool *p)
{
	for (int i = 0; p != NULL && i < p->n; i++)
		event_active(p->w[i].shutdown_ev, EV_TIMEOUT, 0);
}

struct event_base *worker_base(const struct worker_pool *p, int i)
{
	return p->w[i].base;
}

void worker_session_started(struct worker_pool *p, int i)
{
	if (p == NULL || i < 0 || i >= p->n)
		return;
	atomic_fetch_add(&p->w[i].nsessions, 1);
	atomic_fetch_add(&p->w[i].sessions_total, 1);
}

void worker_session_ended(struct worker_pool *p, int i)
{
	if (p == NULL || i < 0 || i >= p->n)
		return;
	atomic_fetch_sub(&p->w[i].nsessions, 1);
}

uint64_t worker_sessions_total(const struct worker_pool *p, int i)
{
	if (p == NULL || i < 0 || i >= p->n)
		return 0;
	return (uint64_t)atomic_load(&p->w[i].sessions_total);
}

/* ctrlmsg: framing on a bufferevent (common/frame.c) and the lingering close after a last
 * reply, its number capped. */
#include "server/ctrlmsg.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "common/frame.h"
#include "common/log.h"
#include "common/sock.h"
#include "common/wire.h"
#include "server/ctx.h"
#include "server/pendcap.h"
#include "server/worker.h"

/* A connection we are closing after one reply: it lives at most LINGER_S from the reply, a
 * fixed deadline (a read timeout would restart on every byte a peer trickles), and is listed
 * (oldest first) so that their number stays under ctrlmsg_linger_max. */
struct ctrl_linger {
	struct server_ctx *srv;
	struct bufferevent *bev;
	struct event *deadline;
	struct worker_obj obj;        /* listed on its worker for shutdown */
	const struct event_base *base; /* its thread's: only that one may free it */
	int linked;                   /* on srv->lingering */
	TAILQ_ENTRY(ctrl_linger) link;
};

#define LINGER_S 2

int ctrlmsg_send(struct bufferevent *bev, json_object *msg)
{
	return frame_put(bufferevent_get_output(bev), msg);
}

int ctrlmsg_take(struct bufferevent *bev, json_object **msg, char *err, size_t errlen)
{
	return frame_take(bufferevent_get_input(bev), msg, err, errlen);
}

json_object *ctrlmsg_error(const char *reason)
{
	json_object *msg = wire_ctrl_new("error");

	json_object_object_add(msg, "reason", json_object_new_string(reason));
	return msg;
}

int ctrlmsg_linger_max(const struct server_ctx *srv)
{
	return pendcap_max(srv);
}

/* Takes l off srv->lingering if it is on it. Caller holds srv->lock. */
static void linger_unlink_locked(struct ctrl_linger *l)
{
	struct server_ctx *srv = l->srv;

	if (!l->linked)
		return;
	TAILQ_REMOVE(&srv->lingering, l, link);
	l->linked = 0;
	srv->nlingering--;
}

static void linger_free(struct ctrl_linger *l)
{
	pthread_mutex_lock(&l->srv->lock);
	linger_unlink_locked(l);
	pthread_mutex_unlock(&l->srv->lock);
	worker_obj_remove(&l->obj);
	if (l->deadline)
		event_free(l->deadline);
	bufferevent_free(l->bev);
	free(l);
}

static void linger_deadline_callback(evutil_socket_t fd, short what, void *arg)
{
	linger_free(arg);
}

static void linger_obj_close(struct worker_obj *o)
{
	linger_free(WORKER_OBJ_OF(o, struct ctrl_linger, obj));
}

static void linger_read_callback(struct bufferevent *bev, void *arg)
{
	struct evbuffer *in = bufferevent_get_input(bev);

	evbuffer_drain(in, evbuffer_get_length(in));
}

static void linger_event_callback(struct bufferevent *bev, short what, void *arg)
{
	linger_free(arg);
}

/* The reply is flushed (in the kernel, over TLS too: the SSL writes to the socket itself):
 * half-close, then discard what the peer still sends until it closes or the deadline. Closing
 * with unread input would send a reset that can destroy our reply in the peer's receive queue
 * before it reads it. */
static void linger_write_callback(struct bufferevent *bev, void *arg)
{
	if (shutdown(bufferevent_getfd(bev), SHUT_WR) < 0) {
		linger_free(arg);
		return;
	}
	bufferevent_setcb(bev, linger_read_callback, NULL, linger_event_callback, arg);
	bufferevent_enable(bev, EV_READ);
}

/* Closes bev with a reset (SO_LINGER 0): no reply, no lingering, no TIME_WAIT. */
static void linger_reset(struct bufferevent *bev)
{
	(void)sock_set_abortive_close(bufferevent_getfd(bev));
	bufferevent_free(bev);
}

/* Lists l as the newest lingering connection. At the cap, the oldest one on l's thread goes
 * (reset) to make room; when this thread has none, l is refused: 0, or -1 to reset l's
 * connection instead. Both counted (linger_dropped). */
static int linger_link(struct server_ctx *srv, struct ctrl_linger *l)
{
	struct ctrl_linger *old = NULL;

	pthread_mutex_lock(&srv->lock);
	if (srv->lingering.tqh_last == NULL) /* the first one: server_ctx starts zeroed */
		TAILQ_INIT(&srv->lingering);
	if (srv->nlingering >= ctrlmsg_linger_max(srv)) {
		/* The walk is bounded by the cap; it runs only at the cap. */
		TAILQ_FOREACH(old, &srv->lingering, link)
			if (old->base == l->base)
				break;
		if (old == NULL) {
			pthread_mutex_unlock(&srv->lock);
			atomic_fetch_add(&srv->counters.linger_dropped, 1);
			return -1;
		}
		linger_unlink_locked(old);
	}
	TAILQ_INSERT_TAIL(&srv->lingering, l, link);
	l->linked = 1;
	srv->nlingering++;
	pthread_mutex_unlock(&srv->lock);
	if (old != NULL) {
		atomic_fetch_add(&srv->counters.linger_dropped, 1);
		log_debug("lingering connections at their cap (%d): the oldest one is reset",
			  ctrlmsg_linger_max(srv));
		(void)sock_set_abortive_close(bufferevent_getfd(old->bev));
		linger_free(old);
	}
	return 0;
}

/* Takes over bev for its last moments: freed at the fixed deadline at the latest. NULL (bev
 * freed, with a reset over the cap) when out of memory or events, or refused over the cap. */
static struct ctrl_linger *linger_new(struct server_ctx *srv, struct bufferevent *bev)
{
	struct timeval tmo = { LINGER_S, 0 };
	struct ctrl_linger *l = calloc(1, sizeof(*l));

	bufferevent_set_timeouts(bev, NULL, NULL);
	if (l == NULL) {
		bufferevent_free(bev);
		return NULL;
	}
	l->srv = srv;
	l->bev = bev;
	l->base = bufferevent_get_base(bev);
	if (linger_link(srv, l) < 0) {
		linger_reset(bev);
		free(l);
		return NULL;
	}
	worker_obj_init(&l->obj, linger_obj_close);
	worker_obj_add_base(srv->workers, bufferevent_get_base(bev), &l->obj);
	l->deadline = evtimer_new(bufferevent_get_base(bev), linger_deadline_callback, l);
	if (l->deadline == NULL || evtimer_add(l->deadline, &tmo) < 0) {
		linger_free(l);
		return NULL;
	}
	return l;
}

void ctrlmsg_reply_and_close(struct server_ctx *srv, struct bufferevent *bev, json_object *msg)
{
	struct evbuffer *in = bufferevent_get_input(bev);
	struct ctrl_linger *l;

	evbuffer_drain(in, evbuffer_get_length(in));
	bufferevent_disable(bev, EV_READ);
	l = linger_new(srv, bev);
	if (l == NULL) {
		json_object_put(msg);
		return;
	}
	bufferevent_setcb(bev, NULL, linger_write_callback, linger_event_callback, l);
	bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
	if (ctrlmsg_send(bev, msg) < 0 || bufferevent_enable(bev, EV_WRITE) < 0)
		linger_free(l);
}

void ctrlmsg_fail(struct server_ctx *srv, struct bufferevent *bev, const char *reason)
{
	ctrlmsg_reply_and_close(srv, bev, ctrlmsg_error(reason));
}

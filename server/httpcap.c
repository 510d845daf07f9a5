/* httpcap: counting evhttp's connections, and closing each at its deadline, through public
 * libevent 2.1 calls only. evhttp gives no hook when it accepts a connection, but it asks our
 * bevcb for the connection's bufferevent: that is the count's +1. Inside bevcb the connection
 * object does not exist yet, so we hold a reference on the bufferevent (it must not vanish
 * under us) and, once the loop runs on, find the connection as the bufferevent's callback
 * argument (evhttp sets it to the connection, and evhttp_connection_get_bufferevent confirms
 * it) and set its close callback, the count's -1, and a timer that frees the connection
 * HTTPCAP_CONN_MAX_S later (evhttp_connection_free calls the close callback of a server
 * connection). A connection evhttp freed before that has no callbacks left (bufferevent_free
 * clears them): its -1 comes at once. */
#include "server/httpcap.h"

#include <stdlib.h>

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "common/log.h"

/* A connection between bevcb and its adoption. */
struct httpcap_fresh {
	struct bufferevent *bev; /* one reference ours */
	struct httpcap_fresh *next;
};

struct httpcap {
	struct server_ctx *srv;
	struct evconnlistener *listener; /* NULL once detached */
	struct event *adopt;             /* runs once the loop has left evhttp's accept */
	struct httpcap_fresh *fresh;
	int paused;                      /* the listener is disabled at the cap */
};

/* A connection evhttp holds, from its adoption to its close callback: counted, and closed at
 * its fixed deadline (evhttp's own timeout is one of inactivity, which a peer trickling its
 * headers restarts with every byte). */
struct httpcap_conn {
	struct httpcap *c;
	struct evhttp_connection *evcon;
	struct event *deadline;
};

/* Pauses the listener at the cap, resumes it below (http-max-connections, reloadable). */
static void httpcap_update(struct httpcap *c)
{
	uint64_t open = atomic_load(&c->srv->counters.http_open);
	uint64_t max = (uint64_t)c->srv->cfg->http_max_conns;

	if (c->listener == NULL)
		return;
	if (!c->paused && open >= max) {
		if (evconnlistener_disable(c->listener) == 0) {
			c->paused = 1;
			atomic_fetch_add(&c->srv->counters.http_full, 1);
			log_debug("HTTP listener paused: %llu connections (http-max-connections)",
				  (unsigned long long)open);
		}
	} else if (c->paused && open < max && evconnlistener_enable(c->listener) == 0) {
		c->paused = 0;
	}
}

/* One connection fewer. */
static void httpcap_count_down(struct httpcap *c)
{
	atomic_fetch_sub(&c->srv->counters.http_open, 1);
	httpcap_update(c);
}

/* evhttp closes a connection (itself, at our deadline, or in evhttp_free). */
static void httpcap_closed(struct evhttp_connection *evcon, void *arg)
{
	struct httpcap_conn *k = arg;
	struct httpcap *c = k->c;

	if (k->deadline)
		event_free(k->deadline);
	free(k);
	httpcap_count_down(c);
}

static void httpcap_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct httpcap_conn *k = arg;

	log_debug("HTTP connection closed at its %d s deadline", HTTPCAP_CONN_MAX_S);
	evhttp_connection_free(k->evcon); /* calls httpcap_closed, which frees k */
}

/* Takes over counting evcon's close and sets its deadline. */
static void httpcap_watch(struct httpcap *c, struct evhttp_connection *evcon)
{
	struct timeval tmo = { HTTPCAP_CONN_MAX_S, 0 };
	struct httpcap_conn *k = calloc(1, sizeof(*k));

	if (k == NULL || (k->deadline = evtimer_new(c->srv->base, httpcap_deadline, k)) == NULL ||
	    evtimer_add(k->deadline, &tmo) < 0) {
		/* Nothing to keep it bounded with: it goes now. */
		if (k != NULL && k->deadline != NULL)
			event_free(k->deadline);
		free(k);
		evhttp_connection_free(evcon);
		httpcap_count_down(c);
		return;
	}
	k->c = c;
	k->evcon = evcon;
	evhttp_connection_set_closecb(evcon, httpcap_closed, k);
}

static void httpcap_adopt(evutil_socket_t fd, short what, void *arg)
{
	struct httpcap *c = arg;

	while (c->fresh != NULL) {
		struct httpcap_fresh *f = c->fresh;
		bufferevent_data_cb readcb = NULL;
		void *evcon = NULL;

		c->fresh = f->next;
		bufferevent_getcb(f->bev, &readcb, NULL, NULL, &evcon);
		if (readcb != NULL && evcon != NULL && evhttp_connection_get_bufferevent(evcon) == f->bev)
			httpcap_watch(c, evcon);
		else
			httpcap_count_down(c); /* evhttp has let it go already */
		bufferevent_decref(f->bev);
		free(f);
	}
}

/* evhttp's bufferevent factory: the same kind it makes itself, counted. On failure evhttp
 * makes its own, which then goes uncounted. */
static struct bufferevent *httpcap_bevcb(struct event_base *base, void *arg)
{
	struct httpcap *c = arg;
	struct httpcap_fresh *f = malloc(sizeof(*f));
	struct bufferevent *bev = f ? bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE) : NULL;

	if (bev == NULL) {
		free(f);
		return NULL;
	}
	bufferevent_incref(bev);
	f->bev = bev;
	f->next = c->fresh;
	c->fresh = f;
	event_active(c->adopt, EV_TIMEOUT, 0);
	atomic_fetch_add(&c->srv->counters.http_open, 1);
	httpcap_update(c);
	return bev;
}

struct httpcap *httpcap_start(struct server_ctx *srv, struct evhttp *http,
			      struct evhttp_bound_socket *bound)
{
	struct httpcap *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->srv = srv;
	c->listener = evhttp_bound_socket_get_listener(bound);
	c->adopt = event_new(srv->base, -1, 0, httpcap_adopt, c);
	if (c->listener == NULL || c->adopt == NULL) {
		httpcap_free(c);
		return NULL;
	}
	evhttp_set_bevcb(http, httpcap_bevcb, c);
	return c;
}

void httpcap_detach(struct httpcap *c)
{
	if (c != NULL)
		c->listener = NULL;
}

void httpcap_free(struct httpcap *c)
{
	if (c == NULL)
		return;
	httpcap_adopt(-1, 0, c); /* evhttp_free let every connection go: each counts -1 */
	if (c->adopt)
		event_free(c->adopt);
	free(c);
}

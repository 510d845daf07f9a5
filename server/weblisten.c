/* weblisten: the public test listener's socket and caps. A connection holds its place from
 * accept to close: web-max-connections in all, and per client address (IPv4, IPv6 /64)
 * max-sessions-per-client × WEB_CONNS_PER_SESSION, so one source cannot take every place.
 * Over a cap the connection is closed at once (counted), and the listener keeps accepting:
 * a flood is refused without stopping the next client. */
#include "server/weblisten.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <openssl/ssl.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/sock.h"
#include "server/ctx.h"
#include "server/webconn.h"
#include "server/webresult.h"
#include "server/webroute.h"

struct weblisten {
	struct server_ctx *srv;
	struct evconnlistener *listener;
	LIST_HEAD(, webconn) conns;
	int nconns;
	struct webresult_limiter results;
};

static void weblisten_closed(struct webconn *c, void *arg)
{
	struct weblisten *w = arg;

	LIST_REMOVE(c, link);
	w->nconns--;
	atomic_fetch_sub(&w->srv->counters.web_open, 1);
}

/* Which cap, if any, a new connection from peer is over. */
static int weblisten_over_cap(const struct weblisten *w, const struct sockaddr *peer,
			      enum webreject *why)
{
	const struct server_config *cfg = w->srv->cfg;
	int per_client = cfg->max_sessions_per_client * WEB_CONNS_PER_SESSION, n = 0;
	const struct webconn *c;

	if (w->nconns >= cfg->web_max_conns) {
		*why = WEBREJECT_CONN_CAP;
		return 1;
	}
	LIST_FOREACH(c, &w->conns, link)
		n += sock_same_client((const struct sockaddr *)&c->peer, peer);
	*why = WEBREJECT_CLIENT_CAP;
	return n >= per_client;
}

static struct bufferevent *weblisten_bev(struct weblisten *w, evutil_socket_t fd)
{
	struct event_base *base = w->srv->base;
	struct bufferevent *bev;
	SSL *ssl;

	if (!w->srv->cfg->web_tls)
		return bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
	if ((ssl = SSL_new(w->srv->tls)) == NULL)
		return NULL;
	/* libevent 2.1 frees ssl itself when this fails (BEV_OPT_CLOSE_ON_FREE), not fd. */
	bev = bufferevent_openssl_socket_new(base, fd, ssl, BUFFEREVENT_SSL_ACCEPTING,
					     BEV_OPT_CLOSE_ON_FREE);
	if (bev != NULL)
		bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	return bev;
}

static void weblisten_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
			     int salen, void *arg)
{
	struct weblisten *w = arg;
	struct sockaddr_storage peer;
	struct bufferevent *bev;
	struct webconn *c;
	enum webreject why;

	memset(&peer, 0, sizeof(peer));
	memcpy(&peer, sa, (size_t)salen < sizeof(peer) ? (size_t)salen : sizeof(peer));
	atomic_fetch_add(&w->srv->counters.web_conns, 1);
	if (weblisten_over_cap(w, (const struct sockaddr *)&peer, &why)) {
		webconn_count_reject(w->srv, why);
		(void)sock_set_abortive_close(fd);
		close(fd);
		return;
	}
	(void)sock_set_nodelay(fd);
	if ((bev = weblisten_bev(w, fd)) == NULL) {
		log_warnx("public listener: cannot set up a connection");
		close(fd);
		return;
	}
	if ((c = webconn_new(w->srv, bev, &peer, weblisten_closed, w)) == NULL)
		return;
	c->tls = w->srv->cfg->web_tls;
	if (sock_get_cc(fd, c->cc, sizeof(c->cc)) != 0)
		c->cc[0] = '\0';
	c->results = &w->results;
	LIST_INSERT_HEAD(&w->conns, c, link);
	w->nconns++;
	atomic_fetch_add(&w->srv->counters.web_open, 1);
	webroute_attach(c);
}

/* The page's downloads must fill the bottleneck's buffer the way a user's own transfers do, or
 * the test hides the bloat it is there to show: a loss-based sender (cubic) does, BBR (a common
 * server default) keeps the queue short on purpose. Set on the listening socket, accepted
 * connections inherit it. The CLI's sessions choose theirs (--cc); the page cannot. */
#define WEBLISTEN_CC "cubic"

static void weblisten_set_cc(int fd)
{
	if (sock_set_cc(fd, WEBLISTEN_CC) == 0)
		return;
	log_warnx("public listener: cannot use %s congestion control; browser downloads use the "
		  "system default, which may keep a bloated buffer from filling", WEBLISTEN_CC);
}

static void weblisten_error(struct evconnlistener *l, void *arg)
{
	/* EMFILE and the like: the connection stays in the queue; say so, keep listening. */
	log_warn("public listener: accept failed");
}

struct weblisten *weblisten_start(struct server_ctx *srv)
{
	const struct server_config *cfg = srv->cfg;
	const char *bind = cfg->web_bind[0] ? cfg->web_bind : NULL;
	struct weblisten *w;
	char err[256];
	int fd;

	if (cfg->web_tls && srv->tls == NULL) {
		log_error("web-tls = yes needs tls-cert and tls-key");
		return NULL;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		log_error("cannot start the public listener: out of memory");
		return NULL;
	}
	w->srv = srv;
	LIST_INIT(&w->conns);
	webresult_limiter_init(&w->results, clock_mono_ns());
	if ((fd = sock_listen_tcp(bind, cfg->web_port, err, sizeof(err))) < 0) {
		log_error("%s (public listener; web-port 0 turns it off)", err);
		free(w);
		return NULL;
	}
	weblisten_set_cc(fd);
	w->listener = evconnlistener_new(srv->base, weblisten_accept, w,
					 LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd);
	if (w->listener == NULL) {
		log_error("cannot start the public listener on port %u", cfg->web_port);
		close(fd);
		free(w);
		return NULL;
	}
	evconnlistener_set_error_cb(w->listener, weblisten_error);
	log_info("public test listener (%s) on %s port %u", cfg->web_tls ? "HTTPS" : "HTTP",
		 bind ? bind : "all addresses", cfg->web_port);
	return w;
}

void weblisten_stop(struct weblisten *w)
{
	if (w == NULL)
		return;
	evconnlistener_free(w->listener);
	while (!LIST_EMPTY(&w->conns))
		webconn_close(LIST_FIRST(&w->conns));
	free(w);
}

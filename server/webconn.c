/* webconn: one public test connection's life. States: HEAD (waiting for a request head, under
 * an absolute deadline), BODY (discarding an /__up body or reading a result post), DOWN
 * (sending /__down's zeros), CLOSING (the last answer leaves, then close). Every state has a
 * deadline: HEAD its absolute one, the others idle-timeout of no progress (bufferevent
 * timeouts), so a silent, trickling or stalled peer never holds the connection. */
#include "server/webconn.h"

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "common/clock.h"
#include "common/log.h"
#include "server/ctx.h"
#include "server/webhttp.h"

_Static_assert(WEBREJECT_COUNT <= SERVER_WEB_SLOTS, "web reject counters");

static void webconn_deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct webconn *c = arg;

	webconn_count_reject(c->srv, WEBREJECT_TIMEOUT);
	webconn_close(c);
}

void webconn_count_reject(struct server_ctx *srv, enum webreject why)
{
	atomic_fetch_add(&srv->counters.web_rejected[why], 1);
}

const char *webconn_reject_name(enum webreject why)
{
	static const char *const names[WEBREJECT_COUNT] = {
		"bad_request", "too_large", "timeout", "connection_cap", "client_cap", "busy",
		"rate", "not_found",
	};

	return why < WEBREJECT_COUNT ? names[why] : "other";
}

/* Waiting for a request: the head must be whole within handshake-timeout of its first byte
 * (of the accept for the first request); an idle keep-alive connection waits idle-timeout
 * for that first byte. */
void webconn_arm_head(struct webconn *c, int first)
{
	const struct server_config *cfg = c->srv->cfg;
	struct timeval tv = { first ? cfg->handshake_timeout_s : cfg->idle_timeout_s, 0 };

	c->head_started = first;
	bufferevent_set_timeouts(c->bev, NULL, NULL);
	bufferevent_setwatermark(c->bev, EV_READ, 0, WEBHTTP_MAX_HEAD);
	bufferevent_enable(c->bev, EV_READ);
	evtimer_add(c->deadline, &tv);
}

/* Deadlines for a body or a download: idle-timeout without a byte moving, and max-duration
 * in all (a transfer is a test's load, not a session of its own). */
void webconn_arm_transfer(struct webconn *c)
{
	struct timeval tv = { c->srv->cfg->idle_timeout_s, 0 };
	struct timeval life = { c->srv->cfg->max_duration_s, 0 };

	evtimer_add(c->deadline, &life);
	bufferevent_set_timeouts(c->bev, &tv, &tv);
}

void webconn_finish(struct webconn *c, int keep_alive)
{
	bufferevent_set_timeouts(c->bev, NULL, NULL);
	if (!keep_alive) {
		struct timeval tv = { c->srv->cfg->idle_timeout_s, 0 };

		/* The answer must leave within idle-timeout; read nothing more. */
		c->state = WEBCONN_CLOSING;
		bufferevent_disable(c->bev, EV_READ);
		evtimer_add(c->deadline, &tv);
		bufferevent_setwatermark(c->bev, EV_WRITE, 0, 0);
		return;
	}
	c->state = WEBCONN_HEAD;
	webconn_arm_head(c, 0);
}

int webconn_hold(struct webconn *c)
{
	struct timeval tv = { c->srv->cfg->idle_timeout_s, 0 };

	if (evbuffer_get_length(bufferevent_get_output(c->bev)) <= WEBCONN_OUT_MAX)
		return 0;
	if (c->held)
		return 1;
	/* The answers' progress is the deadline now (a slow reader is no attacker). */
	c->held = 1;
	evtimer_del(c->deadline);
	bufferevent_set_timeouts(c->bev, NULL, &tv);
	bufferevent_setwatermark(c->bev, EV_WRITE, WEBCONN_OUT_MAX / 2, 0);
	return 1;
}

int webconn_unhold(struct webconn *c)
{
	if (!c->held || evbuffer_get_length(bufferevent_get_output(c->bev)) > WEBCONN_OUT_MAX / 2)
		return 0;
	c->held = 0;
	webconn_arm_head(c, 0);
	return 1;
}

void webconn_head_begun(struct webconn *c)
{
	struct timeval tv = { c->srv->cfg->handshake_timeout_s, 0 };

	if (c->head_started)
		return;
	c->head_started = 1;
	evtimer_add(c->deadline, &tv);
}

struct webconn *webconn_new(struct server_ctx *srv, struct bufferevent *bev,
			    const struct sockaddr_storage *peer, webconn_closed_fn closed,
			    void *arg)
{
	struct webconn *c = calloc(1, sizeof(*c));

	if (c == NULL || (c->deadline = evtimer_new(srv->base, webconn_deadline_cb, c)) == NULL) {
		log_warnx("public listener: out of memory for a connection");
		free(c);
		bufferevent_free(bev);
		return NULL;
	}
	c->srv = srv;
	c->bev = bev;
	c->peer = *peer;
	c->closed = closed;
	c->closed_arg = arg;
	c->state = WEBCONN_HEAD;
	return c;
}

const struct sockaddr_storage *webconn_peer(const struct webconn *c)
{
	return &c->peer;
}

void webconn_close(struct webconn *c)
{
	if (c->closed)
		c->closed(c, c->closed_arg);
	event_free(c->deadline);
	/* The bucket must outlive its last use: detach it before the (maybe deferred) free. */
	if (c->bucket)
		bufferevent_set_rate_limit(c->bev, NULL);
	bufferevent_free(c->bev);
	if (c->bucket)
		ev_token_bucket_cfg_free(c->bucket);
	if (c->result)
		evbuffer_free(c->result);
	free(c);
}

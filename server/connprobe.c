/* connprobe: validates a connect-probe request (token, client IP, per-session limits),
 * answers it, and waits for the client's close. Refusals get no answer and an abortive close,
 * so a flood of bad connections leaves no TIME_WAIT state on the server. */
#include "server/connprobe.h"

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/sock.h"
#include "common/wire.h"
#include "server/sessionlist.h"
#include "server/worker.h"

struct connprobe_conn {
	struct server_ctx *srv;
	struct bufferevent *bev;
	struct event *deadline;      /* bounds the whole exchange */
	struct sockaddr_storage peer;
	uint8_t token[WIRE_TOKEN_LEN];
	int answered;                /* counted in its session's cprobe_open */
	struct worker_obj obj;       /* listed on its worker for shutdown */
};

/* Frees the connection; the session is looked up again by token because it may have ended
 * while this connection was open. */
static void connprobe_free(struct connprobe_conn *c, int abortive)
{
	struct session *s;

	if (c->answered && (s = sessionlist_find(c->srv, c->token)) != NULL &&
	    s->cprobe_open > 0)
		s->cprobe_open--;
	worker_obj_remove(&c->obj);
	if (abortive)
		(void)sock_set_abortive_close(bufferevent_getfd(c->bev));
	if (c->deadline)
		event_free(c->deadline);
	bufferevent_free(c->bev);
	free(c);
}

/* A refusal: counted, logged at debug level only (remote faults never flood the log). */
static void connprobe_count(atomic_uint_least64_t *counter, const struct sockaddr *peer,
			    const char *why)
{
	char addr[SOCK_ADDRSTRLEN];

	atomic_fetch_add(counter, 1);
	sock_addr_str(peer, addr, sizeof(addr));
	log_debug("connect probe from %s refused: %s", addr, why);
}

static void connprobe_refuse(struct connprobe_conn *c, atomic_uint_least64_t *counter,
			     const char *why)
{
	connprobe_count(counter, (struct sockaddr *)&c->peer, why);
	connprobe_free(c, 1);
}

void connprobe_incomplete(struct server_ctx *srv, const struct sockaddr *peer)
{
	connprobe_count(&srv->counters.conn_probe_bad, peer, "no complete request in time");
}

/* The per-session limits: a fixed 1 s window for the rate and a cap on open connections.
 * Returns the reason to refuse, or NULL and counts the probe in. */
static const char *connprobe_admit(struct session *s, int64_t now_ns)
{
	if (now_ns - s->cprobe_window_ns >= NS_PER_SEC) {
		s->cprobe_window_ns = now_ns;
		s->cprobe_window_n = 0;
	}
	if (s->cprobe_window_n >= CONNPROBE_RATE_MAX)
		return "rate limit";
	if (s->cprobe_open >= CONNPROBE_OPEN_MAX)
		return "too many open";
	s->cprobe_window_n++;
	s->cprobe_open++;
	return NULL;
}

enum connprobe_verdict connprobe_judge(struct server_ctx *srv, const uint8_t *buf, size_t len,
				       const struct sockaddr *peer, int64_t now_ns,
				       struct wire_connprobe_req *req, const char **why)
{
	struct session *s;

	/* Exactly one request: the client sends nothing else before the answer. */
	if (wire_connprobe_req_decode(buf, len, req) < 0) {
		*why = "bad request";
		return CONNPROBE_BAD;
	}
	s = sessionlist_find(srv, req->token);
	if (s == NULL || !sock_same_ip((struct sockaddr *)&s->peer, peer)) {
		*why = "unknown session";
		return CONNPROBE_BAD;
	}
	*why = connprobe_admit(s, now_ns);
	return *why ? CONNPROBE_LIMITED : CONNPROBE_ANSWER;
}

static void connprobe_handle_request(struct connprobe_conn *c, struct evbuffer *in)
{
	struct server_ctx *srv = c->srv;
	size_t len = evbuffer_get_length(in);
	struct wire_connprobe_req req;
	uint8_t resp[WIRE_CONNPROBE_RESP_LEN];
	const char *why;

	switch (connprobe_judge(srv, evbuffer_pullup(in, (ssize_t)len), len,
				(struct sockaddr *)&c->peer, clock_mono_ns(), &req, &why)) {
	case CONNPROBE_BAD:
		connprobe_refuse(c, &srv->counters.conn_probe_bad, why);
		return;
	case CONNPROBE_LIMITED:
		connprobe_refuse(c, &srv->counters.conn_probe_limited, why);
		return;
	case CONNPROBE_ANSWER:
		break;
	}
	memcpy(c->token, req.token, WIRE_TOKEN_LEN);
	c->answered = 1;
	evbuffer_drain(in, len);
	wire_connprobe_resp_encode(req.seq, resp);
	if (bufferevent_write(c->bev, resp, sizeof(resp)) < 0) {
		connprobe_free(c, 1);
		return;
	}
	atomic_fetch_add(&srv->counters.conn_probes, 1);
}

/* Only called once the request is answered: the client sends one request, then only
 * closes, so anything else is a violation. */
static void connprobe_read_callback(struct bufferevent *bev, void *arg)
{
	struct connprobe_conn *c = arg;

	connprobe_refuse(c, &c->srv->counters.conn_probe_bad, "bytes after the answer");
}

/* EOF or reset: the client closed, which ends a good exchange. */
static void connprobe_event_callback(struct bufferevent *bev, short what, void *arg)
{
	connprobe_free(arg, 0);
}

/* Only an answered connection lives long enough for this: the client's reset may simply
 * have been lost, which is not its fault. */
static void connprobe_deadline_callback(evutil_socket_t fd, short what, void *arg)
{
	connprobe_free(arg, 1);
}

static void connprobe_obj_close(struct worker_obj *o)
{
	connprobe_free(WORKER_OBJ_OF(o, struct connprobe_conn, obj), 1);
}

void connprobe_start(struct server_ctx *srv, struct bufferevent *bev, const struct sockaddr *peer)
{
	struct connprobe_conn *c = calloc(1, sizeof(*c));
	struct timeval tmo = { CONNPROBE_TIMEOUT_S, 0 };

	if (c == NULL) {
		bufferevent_free(bev);
		return;
	}
	c->srv = srv;
	c->bev = bev;
	worker_obj_init(&c->obj, connprobe_obj_close);
	worker_obj_add_base(srv->workers, bufferevent_get_base(bev), &c->obj);
	memcpy(&c->peer, peer, peer->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
							    : sizeof(struct sockaddr_in));
	c->deadline = evtimer_new(bufferevent_get_base(bev), connprobe_deadline_callback, c);
	if (c->deadline == NULL || evtimer_add(c->deadline, &tmo) < 0) {
		connprobe_free(c, 1);
		return;
	}
	/* One request plus one byte is enough to tell a violation; buffer no more. */
	bufferevent_setwatermark(bev, EV_READ, 0, WIRE_CONNPROBE_REQ_LEN + 1);
	bufferevent_set_timeouts(bev, NULL, NULL);
	bufferevent_setcb(bev, connprobe_read_callback, NULL, connprobe_event_callback, c);
	/* accept.c hands over only a whole request: it is answered or refused (and c freed) here. */
	connprobe_handle_request(c, bufferevent_get_input(bev));
}

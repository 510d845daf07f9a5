/* accept: new TCP connections up to their first whole message — the caps on such pending
 * connections, their fixed deadline, TLS detection and handshake — and the hand-over to the
 * control, data or connect-probe code by what that message is (docs/protocol.md). The main
 * thread reads the first message; the connection then moves to a worker (server/worker.h):
 * a data connection or connect probe to its session's, a control connection to the least
 * loaded, a TLS one before its handshake, which runs on the worker's base. */
#include "server/accept.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/sock.h"
#include "common/tls.h"
#include "common/wire.h"
#include "server/bulk.h"
#include "server/connprobe.h"
#include "server/control.h"
#include "server/worker.h"

/* A connection whose first bytes have not yet told us what it is. */
struct pending_conn {
	struct server_ctx *srv;
	struct bufferevent *bev;
	struct event *deadline; /* absolute: a trickling peer cannot stretch it */
	int64_t deadline_ns;    /* when it fires, so a worker can set it again (TLS) */
	int worker;             /* TLS: the worker running the handshake */
	struct sockaddr_storage peer;
	struct pending_conn *prev, *next; /* srv->pending, under srv->lock */
};

/* At most this many connections may wait for their first message: every session's control
 * and data connections arriving at once still fit (a client sends its first message with its
 * handshake, so legitimate ones wait one round of the loop), but silent or trickling peers
 * cannot hold an unbounded number of sockets and buffers (each may buffer one 64 KiB frame). */
static int server_pending_max(const struct server_ctx *srv)
{
	return 4 * srv->cfg->max_sessions + 64;
}

/* A client (IPv4 address or IPv6 /64) without a running session may hold this many of them
 * (a session's flows in both directions at once, plus some), so one source cannot fill the
 * whole pending budget and lock everyone else out. A client with a session is exempt: its
 * bursts (every flow of a phase at once, connect probes) are the test itself, and how many
 * sessions one client may hold is limited already. */
static int server_pending_client_max(const struct server_ctx *srv)
{
	return 2 * srv->cfg->max_flows + 16;
}

/* Is there room for one more pending connection from peer? The walks are bounded by
 * max-sessions and by the global cap, which is checked first. Caller holds srv->lock. */
static int pending_admit_locked(const struct server_ctx *srv, const struct sockaddr *peer)
{
	int n = 0, max = server_pending_client_max(srv);

	if (srv->npending >= server_pending_max(srv))
		return 0;
	for (const struct session *s = srv->sessions; s; s = s->next)
		if (sock_same_client((const struct sockaddr *)&s->peer, peer))
			return 1;
	for (const struct pending_conn *pc = srv->pending; pc && n < max; pc = pc->next)
		n += sock_same_client((const struct sockaddr *)&pc->peer, peer);
	return n < max;
}

static int pending_admit(struct server_ctx *srv, const struct sockaddr *peer)
{
	int ok;

	pthread_mutex_lock(&srv->lock);
	ok = pending_admit_locked(srv, peer);
	pthread_mutex_unlock(&srv->lock);
	return ok;
}

/* Ends the pending stage: the connection was handed over (bev is then not ours) or dropped. */
static void pending_free(struct pending_conn *pc, int free_bev)
{
	struct server_ctx *srv = pc->srv;

	pthread_mutex_lock(&srv->lock);
	if (pc->prev)
		pc->prev->next = pc->next;
	else
		srv->pending = pc->next;
	if (pc->next)
		pc->next->prev = pc->prev;
	srv->npending--;
	pthread_mutex_unlock(&srv->lock);
	if (pc->deadline)
		event_free(pc->deadline);
	if (free_bev && pc->bev)
		bufferevent_free(pc->bev);
	free(pc);
}

/* Bytes a connection's first message takes, judged from its first 4 bytes: the data hello,
 * the connect-probe request, or the control frame the length announces (a bad length is
 * handed over at once, for control to answer with an error). Handing over only whole first
 * messages keeps every unauthenticated connection under the pending cap and its deadline. */
static size_t pending_need(const uint8_t *first4)
{
	size_t body;

	if (wire_is_data_magic(first4, 4))
		return WIRE_DATA_HELLO_LEN;
	if (wire_is_connprobe_magic(first4, 4))
		return WIRE_CONNPROBE_REQ_LEN;
	if (wire_frame_peek(first4, 4, &body) == WIRE_FRAME_OK)
		return WIRE_CTRL_HDR + body;
	return 4;
}

/* The worker of the session a data connection's complete hello names, or -1 (counted). */
static int pending_data_worker(struct pending_conn *pc)
{
	struct evbuffer *in = bufferevent_get_input(pc->bev);
	struct wire_data_hello h;
	int w = -1;

	if (wire_data_hello_decode(evbuffer_pullup(in, WIRE_DATA_HELLO_LEN), WIRE_DATA_HELLO_LEN,
				   &h) == 0)
		w = control_session_worker(pc->srv, h.token, (struct sockaddr *)&pc->peer);
	if (w < 0) {
		atomic_fetch_add(&pc->srv->counters.data_bad, 1);
		log_debug("data connection refused: bad hello or unknown session");
	}
	return w;
}

/* On the session's worker: attaches a data connection, whose hello the main thread checked,
 * to its session if that still runs. */
static void server_attach_data(struct server_ctx *srv, int worker, struct worker_job *j)
{
	struct wire_data_hello h;
	struct session *s;

	/* Whose session it is, asked under the lock first: only the owner may touch it, and once
	 * it is ours no other thread can free it. */
	if (wire_data_hello_decode(j->data, WIRE_DATA_HELLO_LEN, &h) < 0 ||
	    control_session_worker(srv, h.token, (struct sockaddr *)&j->peer) != worker ||
	    (s = control_find_session(srv, h.token)) == NULL) {
		atomic_fetch_add(&srv->counters.data_bad, 1);
		log_debug("data connection refused: its session ended");
		close(j->fd);
		return;
	}
	/* Bytes that came behind the hello are the start of the record stream: the flow parses
	 * them before any it reads itself. bulk_attach owns the socket. */
	if (bulk_attach(s, j->fd, &h, j->data + WIRE_DATA_HELLO_LEN,
			j->len - WIRE_DATA_HELLO_LEN) < 0)
		atomic_fetch_add(&srv->counters.data_bad, 1);
}

/* A TLS handshake that failed or ran out of time: counted, logged only at debug level. */
static void server_tls_failed(struct pending_conn *pc, const char *why)
{
	char addr[64];

	atomic_fetch_add(&pc->srv->counters.tls_failed, 1);
	sock_addr_str((struct sockaddr *)&pc->peer, addr, sizeof(addr));
	log_debug("TLS handshake from %s failed: %s", addr, why);
}

/* Decrypted bytes of a TLS connection whose handshake is done: like a plain one, it leaves
 * the pending stage (and its deadline) with its first whole control frame. */
static void pending_tls_read_callback(struct bufferevent *bev, void *arg)
{
	struct pending_conn *pc = arg;
	struct server_ctx *srv = pc->srv;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t avail = evbuffer_get_length(in), body;
	const uint8_t *first;
	struct sockaddr_storage peer = pc->peer;

	if (avail < WIRE_CTRL_HDR)
		return;
	first = evbuffer_pullup(in, WIRE_CTRL_HDR);
	/* A data connection of a TLS load (docs/protocol.md): its whole hello, then bulk. */
	if (first != NULL && wire_is_data_magic(first, WIRE_CTRL_HDR)) {
		if (avail < WIRE_DATA_HELLO_LEN)
			return;
		int tls_worker = pc->worker;

		pending_free(pc, 0);
		bulk_attach_tls(srv, tls_worker, bev, (struct sockaddr *)&peer);
		return;
	}
	if (first != NULL && wire_frame_peek(first, WIRE_CTRL_HDR, &body) == WIRE_FRAME_OK &&
	    avail < WIRE_CTRL_HDR + body)
		return;
	int worker = pc->worker;

	pending_free(pc, 0);
	control_start(srv, worker, bev, (struct sockaddr *)&peer);
}

static void pending_tls_event_callback(struct bufferevent *bev, short what, void *arg)
{
	struct pending_conn *pc = arg;
	unsigned long e;

	/* Only now take decrypted bytes: the filter may deliver some inside the handshake's last
	 * step, before it reports CONNECTED, and control must not see that event. */
	if (what & BEV_EVENT_CONNECTED) {
		bufferevent_setcb(bev, pending_tls_read_callback, NULL, pending_tls_event_callback, pc);
		pending_tls_read_callback(bev, pc);
		return;
	}
	e = bufferevent_get_openssl_error(bev);
	server_tls_failed(pc, what & BEV_EVENT_TIMEOUT ? "timed out"
			      : e ? tls_error_string(e) : "connection closed");
	pending_free(pc, 1);
}

/* The connection began with a TLS handshake record: wrap its bufferevent in an OpenSSL filter
 * in the accepting state. It stays pending, under the same deadline, until its first control
 * frame is decrypted. */
static void server_start_tls(struct pending_conn *pc, struct bufferevent *bev)
{
	struct server_ctx *srv = pc->srv;
	struct timeval tmo = { srv->cfg->handshake_timeout_s, 0 };
	struct evbuffer *held;
	struct bufferevent *tb;
	SSL *ssl;

	if (srv->tls == NULL) {
		/* Without a certificate the only answer would be a frame error a TLS client cannot
		 * read; closing says as much. */
		server_tls_failed(pc, "TLS is not configured (tls-cert)");
		pending_free(pc, 1);
		return;
	}
	/* The bytes already read are the ClientHello's start: hold them while the filter is set
	 * up (it would otherwise run the handshake inside its constructor), then give them back
	 * and let the filter's read callback run from the loop. */
	held = evbuffer_new();
	ssl = SSL_new(srv->tls);
	if (held == NULL || ssl == NULL ||
	    evbuffer_add_buffer(held, bufferevent_get_input(bev)) < 0) {
		SSL_free(ssl);
		if (held)
			evbuffer_free(held);
		pending_free(pc, 1);
		return;
	}
	/* On failure the filter frees ssl (BEV_OPT_CLOSE_ON_FREE) but leaves bev to us. */
	tb = bufferevent_openssl_filter_new(bufferevent_get_base(bev), bev, ssl,
					    BUFFEREVENT_SSL_ACCEPTING,
					    BEV_OPT_CLOSE_ON_FREE);
	if (tb == NULL) {
		evbuffer_free(held);
		pending_free(pc, 1);
		return;
	}
	pc->bev = tb;
	/* The pending deadline bounds the handshake; later the filter's own read timeout
	 * (cleared by control at the welcome) takes over what the socket's did. */
	bufferevent_set_timeouts(bev, NULL, NULL);
	bufferevent_openssl_set_allow_dirty_shutdown(tb, 1);
	bufferevent_setwatermark(tb, EV_READ, 0, WIRE_CTRL_MAX + WIRE_CTRL_HDR);
	bufferevent_setcb(tb, NULL, NULL, pending_tls_event_callback, pc);
	/* A bufferevent's input is frozen at its end (only the bufferevent appends); the front is
	 * ours, and the input is empty now. */
	if (bufferevent_enable(tb, EV_READ) < 0 || bufferevent_set_timeouts(tb, &tmo, NULL) < 0 ||
	    evbuffer_prepend_buffer(bufferevent_get_input(bev), held) < 0) {
		evbuffer_free(held);
		pending_free(pc, 1);
		return;
	}
	evbuffer_free(held);
	bufferevent_trigger(bev, EV_READ, BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
}

/* Moves a classified connection to worker: its socket (a duplicate: the bufferevent here
 * closes the original) and the bytes read so far. A TLS connection stays pending (under the
 * caps) until its first control frame; the others leave the pending stage here. */
static void pending_hand_over(struct pending_conn *pc, enum worker_job_kind kind, int worker)
{
	struct server_ctx *srv = pc->srv;
	struct evbuffer *in = bufferevent_get_input(pc->bev);
	size_t len = evbuffer_get_length(in);
	struct worker_job *j = malloc(sizeof(*j) + len);
	int fd = j != NULL ? dup(bufferevent_getfd(pc->bev)) : -1;

	if (fd < 0 || evbuffer_remove(in, j->data, len) != (int)len) {
		log_warn("hand-over to worker %d", worker);
		if (fd >= 0)
			close(fd);
		free(j);
		pending_free(pc, 1);
		return;
	}
	j->kind = kind;
	j->fd = fd;
	j->peer = pc->peer;
	j->len = len;
	j->pc = NULL;
	bufferevent_free(pc->bev);
	pc->bev = NULL;
	if (kind == WORKER_JOB_TLS) {
		/* The worker sets the deadline again on its base. */
		event_free(pc->deadline);
		pc->deadline = NULL;
		j->pc = pc;
	} else {
		pending_free(pc, 0);
	}
	if (worker_submit(srv->workers, worker, j) < 0)
		accept_job_drop(srv, j);
}

/* A connect probe goes to the worker of the session its token names; an unknown or
 * undecodable one to any, which refuses it as before. */
static int pending_connprobe_worker(struct pending_conn *pc)
{
	struct evbuffer *in = bufferevent_get_input(pc->bev);
	struct wire_connprobe_req req;
	int w = -1;

	if (wire_connprobe_req_decode(evbuffer_pullup(in, WIRE_CONNPROBE_REQ_LEN),
				      WIRE_CONNPROBE_REQ_LEN, &req) == 0)
		w = control_session_worker(pc->srv, req.token, NULL);
	return w >= 0 ? w : worker_pick(pc->srv->workers);
}

static void pending_read_callback(struct bufferevent *bev, void *arg)
{
	struct pending_conn *pc = arg;
	struct server_ctx *srv = pc->srv;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t avail = evbuffer_get_length(in);
	const uint8_t *first;
	int w;

	if (avail < 4)
		return;
	first = evbuffer_pullup(in, 4);
	if (first == NULL) {
		pending_free(pc, 1);
		return;
	}
	if (avail < pending_need(first))
		return;
	if (wire_is_data_magic(first, 4)) {
		if ((w = pending_data_worker(pc)) < 0)
			pending_free(pc, 1);
		else
			pending_hand_over(pc, WORKER_JOB_DATA, w);
		return;
	}
	if (tls_is_handshake(first, 4)) {
		pending_hand_over(pc, WORKER_JOB_TLS, worker_pick(srv->workers));
		return;
	}
	if (wire_is_connprobe_magic(first, 4))
		pending_hand_over(pc, WORKER_JOB_CONNPROBE, pending_connprobe_worker(pc));
	else
		pending_hand_over(pc, WORKER_JOB_CONTROL, worker_pick(srv->workers));
}

static void pending_event_callback(struct bufferevent *bev, short what, void *arg)
{
	pending_free(arg, 1); /* EOF or error before the first whole message */
}

static void pending_deadline_callback(evutil_socket_t fd, short what, void *arg)
{
	struct pending_conn *pc = arg;

	struct evbuffer *in = bufferevent_get_input(pc->bev);
	const uint8_t *first = evbuffer_get_length(in) >= 4 ? evbuffer_pullup(in, 4) : NULL;

	if (bufferevent_openssl_get_ssl(pc->bev) != NULL)
		server_tls_failed(pc, "no control frame within the handshake timeout");
	else if (first != NULL && wire_is_connprobe_magic(first, 4))
		connprobe_incomplete(pc->srv, (struct sockaddr *)&pc->peer);
	else
		atomic_fetch_add(&pc->srv->counters.ctrl_timeout, 1);
	pending_free(pc, 1);
}

/* Takes a new connection into the pending stage; closes it when that fails. */
static void pending_start(struct server_ctx *srv, int fd, const struct sockaddr_storage *peer)
{
	struct timeval tmo = { srv->cfg->handshake_timeout_s, 0 };
	struct pending_conn *pc = calloc(1, sizeof(*pc));
	struct bufferevent *bev = bufferevent_socket_new(srv->base, fd, BEV_OPT_CLOSE_ON_FREE);

	if (pc == NULL || bev == NULL) {
		free(pc);
		if (bev)
			bufferevent_free(bev);
		else
			close(fd);
		return;
	}
	pc->srv = srv;
	pc->bev = bev;
	pc->peer = *peer;
	pc->deadline_ns = clock_mono_ns() + (int64_t)tmo.tv_sec * NS_PER_SEC;
	pthread_mutex_lock(&srv->lock);
	srv->npending++;
	pc->next = srv->pending;
	if (pc->next)
		pc->next->prev = pc;
	srv->pending = pc;
	pthread_mutex_unlock(&srv->lock);
	pc->deadline = evtimer_new(srv->base, pending_deadline_callback, pc);
	/* Bound what an unauthenticated peer can make us buffer. */
	bufferevent_setwatermark(bev, EV_READ, 0, WIRE_CTRL_MAX + WIRE_CTRL_HDR);
	/* The fixed deadline alone bounds this stage: a read timeout would restart on every
	 * trickled byte. */
	bufferevent_setcb(bev, pending_read_callback, NULL, pending_event_callback, pc);
	if (pc->deadline == NULL || evtimer_add(pc->deadline, &tmo) < 0 ||
	    bufferevent_enable(bev, EV_READ) < 0)
		pending_free(pc, 1);
}

void accept_callback(evutil_socket_t lfd, short what, void *arg)
{
	struct server_ctx *srv = arg;

	for (int i = 0; i < 64; i++) {
		struct sockaddr_storage peer;
		socklen_t plen = sizeof(peer);
		int fd = accept4(lfd, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			/* EMFILE/ENFILE: leave the rest in the backlog instead of spinning. */
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
			    errno != ECONNABORTED)
				log_warn("accept");
			return;
		}
		if (!pending_admit(srv, (struct sockaddr *)&peer)) {
			/* A reset, so the refusal leaves no TIME_WAIT state here. */
			atomic_fetch_add(&srv->counters.conn_pending_refused, 1);
			(void)sock_set_abortive_close(fd);
			close(fd);
			continue;
		}
		(void)sock_set_nodelay(fd);
		pending_start(srv, fd, &peer);
	}
}


/* On the worker: a TLS connection resumes its pending stage (same deadline) with the
 * handshake on this base. */
static void accept_resume_tls(struct pending_conn *pc, int worker, struct bufferevent *bev)
{
	int64_t left = pc->deadline_ns - clock_mono_ns();
	struct timeval tmo = { 0, 0 };

	pc->bev = bev;
	pc->worker = worker;
	if (left > 0) {
		tmo.tv_sec = left / NS_PER_SEC;
		tmo.tv_usec = (left % NS_PER_SEC) / 1000;
	}
	pc->deadline = evtimer_new(bufferevent_get_base(bev), pending_deadline_callback, pc);
	if (pc->deadline == NULL || evtimer_add(pc->deadline, &tmo) < 0) {
		pending_free(pc, 1);
		return;
	}
	server_start_tls(pc, bev);
}

void accept_job_run(struct server_ctx *srv, int worker, struct event_base *base,
		    struct worker_job *j)
{
	struct bufferevent *bev;

	if (j->kind == WORKER_JOB_DATA) {
		server_attach_data(srv, worker, j); /* raw socket: no bufferevent */
		free(j);
		return;
	}
	bev = bufferevent_socket_new(base, j->fd, BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL) {
		accept_job_drop(srv, j);
		return;
	}
	/* The input is empty and frozen only at its end: the bytes go in front. */
	if (evbuffer_prepend(bufferevent_get_input(bev), j->data, j->len) < 0) {
		if (j->pc != NULL)
			pending_free(j->pc, 0);
		bufferevent_free(bev);
		free(j);
		return;
	}
	bufferevent_setwatermark(bev, EV_READ, 0, WIRE_CTRL_MAX + WIRE_CTRL_HDR);
	if (j->kind == WORKER_JOB_TLS) {
		accept_resume_tls(j->pc, worker, bev);
	} else if (bufferevent_enable(bev, EV_READ) < 0) {
		bufferevent_free(bev);
	} else if (j->kind == WORKER_JOB_CONNPROBE) {
		connprobe_start(srv, bev, (struct sockaddr *)&j->peer);
	} else {
		control_start(srv, worker, bev, (struct sockaddr *)&j->peer);
	}
	free(j);
}

void accept_job_drop(struct server_ctx *srv, struct worker_job *j)
{
	if (j->pc != NULL)
		pending_free(j->pc, 0);
	if (j->fd >= 0)
		close(j->fd);
	free(j);
}

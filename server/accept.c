/* accept: new TCP connections up to their first whole message — their place under the caps
 * (server/pendcap.h), their fixed deadline, TLS detection and handshake — and the hand-over to
 * the control, data or connect-probe code by what that message is (docs/protocol.md); a
 * control connection takes its place and deadline along to its hello stage. The main
 * thread peeks at the first bytes: a plain connection's first message is read there, then it
 * moves to a worker (server/worker.h) — a data connection or connect probe to its session's, a
 * control connection to the least loaded. A TLS one moves before its handshake, which runs on
 * the worker's base on the raw socket (so OpenSSL can hand the record layer to kernel TLS). */
#include "server/accept.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/ssl.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/sock.h"
#include "common/tls.h"
#include "common/wire.h"
#include "server/bulk.h"
#include "server/connprobe.h"
#include "server/hello.h"
#include "server/pendcap.h"
#include "server/sessionlist.h"
#include "server/worker.h"

/* Decrypted bytes a TLS connection may bring before it is handed over: its first control frame
 * (or data hello) and the rest of the record that ends it, so the SSL holds nothing unread. */
#define PENDING_TLS_CAP (WIRE_CTRL_HDR + WIRE_CTRL_MAX + 16384)

/* Where a pending connection is: on the main thread (peeking, then reading a plain first
 * message), in a worker's job queue, or in its TLS handshake on that worker. */
enum pending_stage { PENDING_PEEK, PENDING_PLAIN, PENDING_QUEUED, PENDING_TLS };

/* A connection whose first bytes have not yet told us what it is. Whatever of fd, bev, io,
 * ssl and in is set is ours: a hand-over clears what it passes on. */
struct pending_conn {
	struct server_ctx *srv;
	enum pending_stage stage;
	struct worker_obj obj;   /* PENDING_TLS: listed on its worker for shutdown */
	int fd;                  /* until a bufferevent owns it (-1 then) */
	struct bufferevent *bev; /* a plain connection, reading its first message */
	struct event *io;        /* the first peek; then the TLS stage's socket wait */
	SSL *ssl;                /* the TLS stage, on a worker */
	uint8_t *in;             /* its decrypted bytes (PENDING_TLS_CAP, after the handshake) */
	size_t inlen;
	struct event *deadline;  /* absolute: a trickling peer cannot stretch it */
	int64_t deadline_ns;     /* when it fires, so a worker can set it again (TLS), and the
				  * hello stage goes on under it (server/hello.h) */
	struct pendcap_slot *slot; /* its place under the caps (server/pendcap.h) */
	int worker;              /* TLS: the worker running the handshake */
	struct event_base *base; /* TLS: that worker's */
	struct sockaddr_storage peer;
	struct pending_conn *prev, *next; /* srv->pending (for shutdown), under srv->lock */
};

/* Ends the pending stage: frees what the connection still owns (all of it when it is dropped,
 * nothing a hand-over took). */
static void pending_free(struct pending_conn *pc)
{
	struct server_ctx *srv = pc->srv;

	pthread_mutex_lock(&srv->lock);
	if (pc->prev)
		pc->prev->next = pc->next;
	else
		srv->pending = pc->next;
	if (pc->next)
		pc->next->prev = pc->prev;
	pthread_mutex_unlock(&srv->lock);
	pendcap_release(srv, pc->slot);
	worker_obj_remove(&pc->obj);
	if (pc->deadline)
		event_free(pc->deadline);
	if (pc->io)
		event_free(pc->io);
	if (pc->bev)
		bufferevent_free(pc->bev);
	SSL_free(pc->ssl);
	if (pc->fd >= 0)
		close(pc->fd);
	free(pc->in);
	free(pc);
}

/* Bytes a connection's first message takes, judged from its first 4 bytes: the data hello,
 * the connect-probe request, or the control frame the length announces (a bad length is
 * handed over at once, for server/hello.c to answer with an error). Handing over only whole
 * first messages keeps every unauthenticated connection under the pending cap and its
 * deadline. */
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

/* The worker of the session a data connection's hello (WIRE_DATA_HELLO_LEN bytes, or NULL)
 * names for a client at peer, or -1 (counted). */
static int pending_data_worker(struct server_ctx *srv, const uint8_t *hello,
			       const struct sockaddr *peer)
{
	struct wire_data_hello h;
	int w = -1;

	if (hello != NULL && wire_data_hello_decode(hello, WIRE_DATA_HELLO_LEN, &h) == 0)
		w = sessionlist_worker(srv, h.token, peer);
	if (w < 0) {
		atomic_fetch_add(&srv->counters.data_bad, 1);
		log_debug("data connection refused: bad hello or unknown session");
	}
	return w;
}

/* A job for a worker: the socket (and its SSL, NULL when plain) with the len bytes read so
 * far. NULL when out of memory. */
static struct worker_job *pending_job_new(enum worker_job_kind kind, int fd, SSL *ssl,
					  const struct sockaddr_storage *peer,
					  const uint8_t *data, size_t len)
{
	struct worker_job *j = malloc(sizeof(*j) + len);

	if (j == NULL)
		return NULL;
	j->kind = kind;
	j->fd = fd;
	j->ssl = ssl;
	j->peer = *peer;
	j->pc = NULL;
	j->slot = NULL;
	j->deadline_ns = 0;
	j->len = len;
	if (len > 0)
		memcpy(j->data, data, len);
	return j;
}

/* On the session's worker: attaches a data connection (plain, or TLS past its handshake),
 * whose hello was checked on the way, to its session if that still runs. */
static void server_attach_data(struct server_ctx *srv, int worker, struct worker_job *j)
{
	struct wire_data_hello h;
	struct session *s;

	/* Whose session it is, asked under the lock first: only the owner may touch it, and once
	 * it is ours no other thread can free it. */
	if (wire_data_hello_decode(j->data, WIRE_DATA_HELLO_LEN, &h) < 0 ||
	    sessionlist_worker(srv, h.token, (struct sockaddr *)&j->peer) != worker ||
	    (s = sessionlist_find(srv, h.token)) == NULL) {
		atomic_fetch_add(&srv->counters.data_bad, 1);
		log_debug("data connection refused: its session ended");
		SSL_free(j->ssl);
		close(j->fd);
		return;
	}
	/* Bytes that came behind the hello are the start of the record stream: the flow parses
	 * them before any it reads itself. bulk_attach_ssl owns the socket and the SSL. */
	if (bulk_attach_ssl(s, j->fd, j->ssl, &h, j->data + WIRE_DATA_HELLO_LEN,
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

/* The time left until pc's deadline (zero when it has passed). */
static struct timeval pending_time_left(const struct pending_conn *pc)
{
	int64_t left = pc->deadline_ns - clock_mono_ns();
	struct timeval tv = { 0, 0 };

	if (left > 0) {
		tv.tv_sec = left / NS_PER_SEC;
		tv.tv_usec = (left % NS_PER_SEC) / 1000;
	}
	return tv;
}

/* The decrypted bytes a TLS connection's first message takes (pending_need once 4 are in). */
static size_t pending_tls_need(const struct pending_conn *pc)
{
	return pc->inlen < 4 ? 4 : pending_need(pc->in);
}

/* Runs the handshake, then reads until the first whole message is decrypted, then the rest of
 * its record. OK when done; WANT_* to wait for the socket; CLOSED or ERROR (counted) to drop. */
static enum tls_io pending_tls_step(struct pending_conn *pc)
{
	const char *why = "connection closed";
	enum tls_io r = TLS_IO_OK;
	size_t n;

	if (!SSL_is_init_finished(pc->ssl) && (r = tls_accept_step(pc->ssl, &why)) != TLS_IO_OK) {
		if (r == TLS_IO_ERROR)
			server_tls_failed(pc, why);
		return r;
	}
	/* Only now the room for a whole first frame: stalled handshakes must stay cheap. */
	if (pc->in == NULL && (pc->in = malloc(PENDING_TLS_CAP)) == NULL)
		return TLS_IO_CLOSED;
	while (pc->inlen < pending_tls_need(pc)) {
		r = tls_read_nb(pc->ssl, pc->in + pc->inlen, PENDING_TLS_CAP - pc->inlen, &n);
		if (r != TLS_IO_OK) {
			if (r == TLS_IO_ERROR)
				server_tls_failed(pc, "bad record after the handshake");
			return r;
		}
		pc->inlen += n;
	}
	/* Nothing may stay decrypted inside the SSL: the next owner waits on the socket. */
	while (SSL_pending(pc->ssl) > 0 && pc->inlen < PENDING_TLS_CAP &&
	       tls_read_nb(pc->ssl, pc->in + pc->inlen, PENDING_TLS_CAP - pc->inlen, &n) == TLS_IO_OK)
		pc->inlen += n;
	return TLS_IO_OK;
}

/* A TLS control connection past its first frame: an OpenSSL bufferevent on the socket, its
 * input the decrypted bytes so far, for server/hello.c like a plain one, with pc's place under
 * the caps and its deadline. Takes fd and ssl (out of pc already) and frees pc. */
static void pending_tls_control(struct pending_conn *pc, int fd, SSL *ssl, const uint8_t *in,
				size_t len)
{
	struct server_ctx *srv = pc->srv;
	struct sockaddr_storage peer = pc->peer;
	struct pendcap_slot *slot = pc->slot;
	int64_t deadline_ns = pc->deadline_ns;
	int worker = pc->worker;
	/* libevent 2.1 frees ssl itself when this fails (BEV_OPT_CLOSE_ON_FREE), not fd. */
	struct bufferevent *bev = bufferevent_openssl_socket_new(pc->base, fd, ssl,
								 BUFFEREVENT_SSL_OPEN,
								 BEV_OPT_CLOSE_ON_FREE);

	pc->slot = NULL;
	pending_free(pc);
	if (bev == NULL) {
		close(fd);
		pendcap_release(srv, slot);
		return;
	}
	bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	bufferevent_setwatermark(bev, EV_READ, 0, WIRE_CTRL_MAX + WIRE_CTRL_HDR);
	if (evbuffer_prepend(bufferevent_get_input(bev), in, len) < 0 ||
	    bufferevent_enable(bev, EV_READ) < 0) {
		bufferevent_free(bev);
		pendcap_release(srv, slot);
		return;
	}
	hello_start(srv, worker, bev, (struct sockaddr *)&peer, slot, deadline_ns);
}

/* A data connection of a TLS load (docs/protocol.md) past its hello: to its session's worker
 * like a plain one, its SSL along (the SSL is used by one thread at a time: this one hands it
 * over and never touches it again); attached at once when that is this worker. Takes fd and
 * ssl. */
static void pending_tls_data(struct server_ctx *srv, int worker, int fd, SSL *ssl,
			     const struct sockaddr_storage *peer, const uint8_t *in, size_t len)
{
	int w = pending_data_worker(srv, len >= WIRE_DATA_HELLO_LEN ? in : NULL,
				    (const struct sockaddr *)peer);
	struct worker_job *j = w >= 0 ? pending_job_new(WORKER_JOB_DATA, fd, ssl, peer, in, len)
				      : NULL;

	if (j == NULL) {
		SSL_free(ssl);
		close(fd);
	} else if (w == worker) {
		server_attach_data(srv, worker, j);
		free(j);
	} else if (worker_submit(srv->workers, w, j) < 0) {
		accept_job_drop(srv, j);
	}
}

/* The TLS connection's first message is in: it leaves the pending stage as a data connection
 * of a TLS load, or goes on to its hello stage as a control connection. */
static void pending_tls_done(struct pending_conn *pc)
{
	struct server_ctx *srv = pc->srv;
	struct sockaddr_storage peer = pc->peer;
	int fd = pc->fd, worker = pc->worker;
	SSL *ssl = pc->ssl;
	uint8_t *in = pc->in;
	size_t len = pc->inlen;

	pc->fd = -1;
	pc->ssl = NULL;
	pc->in = NULL;
	if (wire_is_data_magic(in, len)) {
		pending_free(pc);
		pending_tls_data(srv, worker, fd, ssl, &peer, in, len);
	} else {
		pending_tls_control(pc, fd, ssl, in, len);
	}
	free(in);
}

/* The TLS stage's socket event: one more step, then wait for what the SSL wants. */
static void pending_tls_callback(evutil_socket_t fd, short what, void *arg)
{
	struct pending_conn *pc = arg;
	enum tls_io r = pending_tls_step(pc);

	if (r == TLS_IO_OK) {
		pending_tls_done(pc);
		return;
	}
	if ((r != TLS_IO_WANT_READ && r != TLS_IO_WANT_WRITE) || event_del(pc->io) < 0 ||
	    event_assign(pc->io, pc->base, fd, r == TLS_IO_WANT_READ ? EV_READ : EV_WRITE,
			 pending_tls_callback, pc) < 0 ||
	    event_add(pc->io, NULL) < 0)
		pending_free(pc);
}

static void pending_deadline_callback(evutil_socket_t fd, short what, void *arg);

static void pending_obj_close(struct worker_obj *o)
{
	pending_free(WORKER_OBJ_OF(o, struct pending_conn, obj));
}

/* On the worker: a TLS connection resumes its pending stage (same deadline) with the
 * handshake on this base. */
static void pending_tls_start(struct pending_conn *pc, int worker, struct event_base *base)
{
	struct timeval tmo = pending_time_left(pc);

	pc->stage = PENDING_TLS;
	worker_obj_add(pc->srv->workers, worker, &pc->obj);
	pc->worker = worker;
	pc->base = base;
	pc->ssl = tls_server_new(pc->srv->tls, pc->fd);
	pc->deadline = evtimer_new(base, pending_deadline_callback, pc);
	pc->io = event_new(base, pc->fd, EV_READ, pending_tls_callback, pc);
	if (pc->ssl == NULL || pc->deadline == NULL || pc->io == NULL ||
	    evtimer_add(pc->deadline, &tmo) < 0) {
		pending_free(pc);
		return;
	}
	/* The ClientHello's start is in the socket already (the main thread peeked at it). */
	pending_tls_callback(pc->fd, EV_READ, pc);
}

/* The connection began with a TLS handshake record: off to a worker for the handshake, still
 * pending (under the caps). */
static void pending_tls_hand_over(struct pending_conn *pc)
{
	struct server_ctx *srv = pc->srv;
	struct worker_job *j;

	if (srv->tls == NULL) {
		/* Without a certificate the only answer would be a frame error a TLS client cannot
		 * read; closing says as much. */
		server_tls_failed(pc, "TLS is not configured (tls-cert)");
		pending_free(pc);
		return;
	}
	if ((j = calloc(1, sizeof(*j))) == NULL) { /* ssl NULL, no data */
		pending_free(pc);
		return;
	}
	/* The worker sets the deadline again on its base. */
	event_free(pc->deadline);
	pc->deadline = NULL;
	pc->stage = PENDING_QUEUED;
	j->kind = WORKER_JOB_TLS;
	j->fd = -1; /* pc owns it */
	j->peer = pc->peer;
	j->pc = pc;
	if (worker_submit(srv->workers, worker_pick(srv->workers), j) < 0)
		accept_job_drop(srv, j);
}

/* Moves a plain connection, classified by its first whole message, to worker: its socket (a
 * duplicate: the bufferevent here closes the original) and the bytes read so far. It leaves
 * the accept stage here; a control connection takes its place under the caps and its deadline
 * along to the hello stage. */
static void pending_hand_over(struct pending_conn *pc, enum worker_job_kind kind, int worker)
{
	struct server_ctx *srv = pc->srv;
	struct evbuffer *in = bufferevent_get_input(pc->bev);
	size_t len = evbuffer_get_length(in);
	const uint8_t *data = evbuffer_pullup(in, -1); /* the whole first message, never empty */
	int fd = data != NULL ? dup(bufferevent_getfd(pc->bev)) : -1;
	struct worker_job *j = fd >= 0 ? pending_job_new(kind, fd, NULL, &pc->peer, data, len)
				       : NULL;

	if (j == NULL) {
		log_warn("hand-over to worker %d", worker);
		if (fd >= 0)
			close(fd);
		pending_free(pc);
		return;
	}
	if (kind == WORKER_JOB_CONTROL) {
		j->slot = pc->slot;
		j->deadline_ns = pc->deadline_ns;
		pc->slot = NULL;
	}
	pending_free(pc);
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
		w = sessionlist_worker(pc->srv, req.token, NULL);
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
		pending_free(pc);
		return;
	}
	if (avail < pending_need(first))
		return;
	if (wire_is_data_magic(first, 4)) {
		if ((w = pending_data_worker(srv, evbuffer_pullup(in, WIRE_DATA_HELLO_LEN),
					     (struct sockaddr *)&pc->peer)) < 0)
			pending_free(pc);
		else
			pending_hand_over(pc, WORKER_JOB_DATA, w);
		return;
	}
	if (wire_is_connprobe_magic(first, 4))
		pending_hand_over(pc, WORKER_JOB_CONNPROBE, pending_connprobe_worker(pc));
	else
		pending_hand_over(pc, WORKER_JOB_CONTROL, worker_pick(srv->workers));
}

static void pending_event_callback(struct bufferevent *bev, short what, void *arg)
{
	pending_free(arg); /* EOF or error before the first whole message */
}

/* A plain connection: a bufferevent reads its first message. */
static void pending_read_start(struct pending_conn *pc)
{
	struct bufferevent *bev = bufferevent_socket_new(pc->srv->base, pc->fd,
							 BEV_OPT_CLOSE_ON_FREE);

	if (bev == NULL) {
		pending_free(pc);
		return;
	}
	pc->stage = PENDING_PLAIN;
	pc->bev = bev;
	pc->fd = -1;
	/* Bound what an unauthenticated peer can make us buffer. The fixed deadline alone bounds
	 * this stage: a read timeout would restart on every trickled byte. */
	bufferevent_setwatermark(bev, EV_READ, 0, WIRE_CTRL_MAX + WIRE_CTRL_HDR);
	bufferevent_setcb(bev, pending_read_callback, NULL, pending_event_callback, pc);
	if (bufferevent_enable(bev, EV_READ) < 0)
		pending_free(pc);
}

/* The first bytes, peeked at so that a TLS handshake finds them still in the socket: 0x16
 * (0x03) starts TLS, anything else a plain connection. */
static void pending_peek_callback(evutil_socket_t fd, short what, void *arg)
{
	struct pending_conn *pc = arg;
	uint8_t b[2];
	ssize_t n = recv(fd, b, sizeof(b), MSG_PEEK);

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
		if (event_add(pc->io, NULL) < 0)
			pending_free(pc);
		return;
	}
	if (n <= 0) {
		pending_free(pc); /* EOF or a reset before any byte */
		return;
	}
	event_free(pc->io);
	pc->io = NULL;
	if (tls_is_handshake(b, (size_t)n))
		pending_tls_hand_over(pc);
	else
		pending_read_start(pc);
}

static void pending_deadline_callback(evutil_socket_t fd, short what, void *arg)
{
	struct pending_conn *pc = arg;
	struct evbuffer *in = pc->bev ? bufferevent_get_input(pc->bev) : NULL;
	const uint8_t *first = in && evbuffer_get_length(in) >= 4 ? evbuffer_pullup(in, 4) : NULL;

	if (pc->ssl != NULL)
		server_tls_failed(pc, "no control frame within the handshake timeout");
	else if (first != NULL && wire_is_connprobe_magic(first, 4))
		connprobe_incomplete(pc->srv, (struct sockaddr *)&pc->peer);
	else
		atomic_fetch_add(&pc->srv->counters.ctrl_timeout, 1);
	pending_free(pc);
}

/* Takes a new connection, with its place under the caps, into the pending stage; closes it
 * when that fails. */
static void pending_start(struct server_ctx *srv, int fd, const struct sockaddr_storage *peer,
			  struct pendcap_slot *slot)
{
	struct timeval tmo = { srv->cfg->handshake_timeout_s, 0 };
	struct pending_conn *pc = calloc(1, sizeof(*pc));

	if (pc == NULL) {
		close(fd);
		pendcap_release(srv, slot);
		return;
	}
	pc->srv = srv;
	pc->slot = slot;
	pc->stage = PENDING_PEEK;
	worker_obj_init(&pc->obj, pending_obj_close);
	pc->fd = fd;
	pc->peer = *peer;
	pc->deadline_ns = clock_mono_ns() + (int64_t)tmo.tv_sec * NS_PER_SEC;
	pthread_mutex_lock(&srv->lock);
	pc->next = srv->pending;
	if (pc->next)
		pc->next->prev = pc;
	srv->pending = pc;
	pthread_mutex_unlock(&srv->lock);
	pc->deadline = evtimer_new(srv->base, pending_deadline_callback, pc);
	pc->io = event_new(srv->base, fd, EV_READ, pending_peek_callback, pc);
	if (pc->deadline == NULL || pc->io == NULL || evtimer_add(pc->deadline, &tmo) < 0 ||
	    event_add(pc->io, NULL) < 0)
		pending_free(pc);
}

void accept_callback(evutil_socket_t lfd, short what, void *arg)
{
	struct server_ctx *srv = arg;

	for (int i = 0; i < 64; i++) {
		struct sockaddr_storage peer;
		socklen_t plen = sizeof(peer);
		struct pendcap_slot *slot;
		int over_cap;
		int fd = accept4(lfd, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			/* EMFILE/ENFILE: leave the rest in the backlog instead of spinning. */
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
			    errno != ECONNABORTED)
				log_warn("accept");
			return;
		}
		if ((slot = pendcap_take(srv, &peer, &over_cap)) == NULL) {
			/* A reset, so the refusal leaves no TIME_WAIT state here. */
			if (over_cap)
				atomic_fetch_add(&srv->counters.conn_pending_refused, 1);
			(void)sock_set_abortive_close(fd);
			close(fd);
			continue;
		}
		(void)sock_set_nodelay(fd);
		pending_start(srv, fd, &peer, slot);
	}
}

void accept_job_run(struct server_ctx *srv, int worker, struct event_base *base,
		    struct worker_job *j)
{
	struct bufferevent *bev;

	if (j->kind == WORKER_JOB_TLS) {
		pending_tls_start(j->pc, worker, base);
		free(j);
		return;
	}
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
	j->fd = -1; /* bev's now */
	bufferevent_setwatermark(bev, EV_READ, 0, WIRE_CTRL_MAX + WIRE_CTRL_HDR);
	/* The input is empty and frozen only at its end: the bytes go in front. */
	if (evbuffer_prepend(bufferevent_get_input(bev), j->data, j->len) < 0 ||
	    bufferevent_enable(bev, EV_READ) < 0) {
		bufferevent_free(bev);
	} else if (j->kind == WORKER_JOB_CONNPROBE) {
		connprobe_start(srv, bev, (struct sockaddr *)&j->peer);
	} else {
		hello_start(srv, worker, bev, (struct sockaddr *)&j->peer, j->slot, j->deadline_ns);
		j->slot = NULL;
	}
	accept_job_drop(srv, j); /* what is left of it */
}

void accept_close_main(struct server_ctx *srv)
{
	struct pending_conn *pc, *next;

	pthread_mutex_lock(&srv->lock);
	pc = srv->pending;
	pthread_mutex_unlock(&srv->lock);
	for (; pc != NULL; pc = next) {
		next = pc->next;
		if (pc->stage == PENDING_PEEK || pc->stage == PENDING_PLAIN)
			pending_free(pc);
	}
}

void accept_job_drop(struct server_ctx *srv, struct worker_job *j)
{
	if (j->pc != NULL)
		pending_free(j->pc);
	pendcap_release(srv, j->slot);
	SSL_free(j->ssl);
	if (j->fd >= 0)
		close(j->fd);
	free(j);
}

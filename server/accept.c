/* accept: new TCP connections up to their first whole message — the caps on such pending
 * connections, their fixed deadline, TLS detection and handshake — and the hand-over to the
 * control, data or connect-probe code by what that message is (docs/protocol.md). */
#include "server/accept.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>

#include "common/log.h"
#include "common/sock.h"
#include "common/tls.h"
#include "common/wire.h"
#include "server/bulk.h"
#include "server/connprobe.h"
#include "server/control.h"

/* A connection whose first bytes have not yet told us what it is. */
struct pending_conn {
	struct server_ctx *srv;
	struct bufferevent *bev;
	struct event *deadline; /* absolute: a trickling peer cannot stretch it */
	struct sockaddr_storage peer;
	struct pending_conn *prev, *next; /* srv->pending */
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
 * max-sessions and by the global cap, which is checked first. */
static int pending_admit(const struct server_ctx *srv, const struct sockaddr *peer)
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

/* Ends the pending stage: the connection was handed over (bev is then not ours) or dropped. */
static void pending_free(struct pending_conn *pc, int free_bev)
{
	if (pc->prev)
		pc->prev->next = pc->next;
	else
		pc->srv->pending = pc->next;
	if (pc->next)
		pc->next->prev = pc->prev;
	pc->srv->npending--;
	if (pc->deadline)
		event_free(pc->deadline);
	if (free_bev)
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

/* Hands a data connection to its session once the 32-byte hello is complete. */
static void server_attach_data(struct pending_conn *pc, struct bufferevent *bev)
{
	struct evbuffer *in = bufferevent_get_input(bev);
	struct wire_data_hello h;
	struct session *s;
	const uint8_t *all;
	size_t extra;
	int fd;

	if (wire_data_hello_decode(evbuffer_pullup(in, WIRE_DATA_HELLO_LEN), WIRE_DATA_HELLO_LEN,
				   &h) < 0 ||
	    (s = control_find_session(pc->srv, h.token)) == NULL ||
	    !sock_same_ip((struct sockaddr *)&s->peer, (struct sockaddr *)&pc->peer)) {
		atomic_fetch_add(&pc->srv->counters.data_bad, 1);
		log_debug("data connection refused: bad hello or unknown session");
		bufferevent_free(bev);
		return;
	}
	/* Bytes that came behind the hello are the start of the record stream: the flow parses
	 * them before any it reads itself. */
	extra = evbuffer_get_length(in) - WIRE_DATA_HELLO_LEN;
	all = evbuffer_pullup(in, -1);
	/* Detach the socket from the bufferevent: bulk flows use the raw fd. */
	fd = dup(bufferevent_getfd(bev));
	if (fd < 0 || all == NULL) {
		log_warn("data connection");
		if (fd >= 0)
			close(fd);
		bufferevent_free(bev);
		return;
	}
	if (bulk_attach(s, fd, &h, all + WIRE_DATA_HELLO_LEN, extra) < 0)
		atomic_fetch_add(&pc->srv->counters.data_bad, 1);
	bufferevent_free(bev);
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
	if (first != NULL && wire_frame_peek(first, WIRE_CTRL_HDR, &body) == WIRE_FRAME_OK &&
	    avail < WIRE_CTRL_HDR + body)
		return;
	pending_free(pc, 0);
	control_start(srv, bev, (struct sockaddr *)&peer);
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
	tb = bufferevent_openssl_filter_new(srv->base, bev, ssl, BUFFEREVENT_SSL_ACCEPTING,
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

static void pending_read_callback(struct bufferevent *bev, void *arg)
{
	struct pending_conn *pc = arg;
	struct server_ctx *srv = pc->srv;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t avail = evbuffer_get_length(in);
	const uint8_t *first;
	struct sockaddr_storage peer;

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
		server_attach_data(pc, bev);
		pending_free(pc, 0);
		return;
	}
	if (tls_is_handshake(first, 4)) {
		server_start_tls(pc, bev);
		return;
	}
	peer = pc->peer;
	pending_free(pc, 0);
	if (wire_is_connprobe_magic(first, 4))
		connprobe_start(srv, bev, (struct sockaddr *)&peer);
	else
		control_start(srv, bev, (struct sockaddr *)&peer);
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
	srv->npending++;
	pc->srv = srv;
	pc->bev = bev;
	pc->peer = *peer;
	pc->next = srv->pending;
	if (pc->next)
		pc->next->prev = pc;
	srv->pending = pc;
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


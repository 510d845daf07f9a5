/* server: binds the TCP and UDP sockets, classifies each new connection by its first bytes
 * (control frame, data hello or connect probe), and runs the event loop and the reflector and
 * DNS responder threads. */
#include "server/server.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/thread.h>

#include "common/log.h"
#include "common/sock.h"
#include "server/bulk.h"
#include "server/connprobe.h"
#include "server/control.h"
#include "server/ctx.h"
#include "server/dns.h"
#include "server/reflector.h"

/* A connection whose first bytes have not yet told us what it is. */
struct pending_conn {
	struct server_ctx *srv;
	struct sockaddr_storage peer;
};

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

static void pending_read_callback(struct bufferevent *bev, void *arg)
{
	struct pending_conn *pc = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t avail = evbuffer_get_length(in);

	if (avail < 4)
		return;
	if (wire_is_data_magic(evbuffer_pullup(in, 4), 4)) {
		if (avail < WIRE_DATA_HELLO_LEN)
			return;
		server_attach_data(pc, bev);
		free(pc);
		return;
	}
	if (wire_is_connprobe_magic(evbuffer_pullup(in, 4), 4)) {
		connprobe_start(pc->srv, bev, (struct sockaddr *)&pc->peer);
		free(pc);
		return;
	}
	control_start(pc->srv, bev, (struct sockaddr *)&pc->peer);
	free(pc);
}

static void pending_event_callback(struct bufferevent *bev, short what, void *arg)
{
	struct pending_conn *pc = arg;

	if (what & BEV_EVENT_TIMEOUT)
		atomic_fetch_add(&pc->srv->counters.ctrl_timeout, 1);
	bufferevent_free(bev);
	free(pc);
}

static void server_accept_callback(evutil_socket_t lfd, short what, void *arg)
{
	struct server_ctx *srv = arg;

	for (int i = 0; i < 64; i++) {
		struct sockaddr_storage peer;
		socklen_t plen = sizeof(peer);
		int fd = accept4(lfd, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct timeval tmo = { SERVER_HANDSHAKE_TIMEOUT_S, 0 };
		struct pending_conn *pc;
		struct bufferevent *bev;

		if (fd < 0) {
			/* EMFILE/ENFILE: leave the rest in the backlog instead of spinning. */
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
			    errno != ECONNABORTED)
				log_warn("accept");
			return;
		}
		(void)sock_set_nodelay(fd);
		pc = calloc(1, sizeof(*pc));
		bev = bufferevent_socket_new(srv->base, fd, BEV_OPT_CLOSE_ON_FREE);
		if (pc == NULL || bev == NULL) {
			free(pc);
			if (bev)
				bufferevent_free(bev);
			else
				close(fd);
			continue;
		}
		pc->srv = srv;
		pc->peer = peer;
		/* Bound what an unauthenticated peer can make us buffer. */
		bufferevent_setwatermark(bev, EV_READ, 0, WIRE_CTRL_MAX + WIRE_CTRL_HDR);
		bufferevent_set_timeouts(bev, &tmo, NULL);
		bufferevent_setcb(bev, pending_read_callback, NULL, pending_event_callback, pc);
		if (bufferevent_enable(bev, EV_READ) < 0) {
			bufferevent_free(bev);
			free(pc);
		}
	}
}

static void server_signal_callback(evutil_socket_t sig, short what, void *arg)
{
	struct server_ctx *srv = arg;

	log_info("signal %d: stopping", (int)sig);
	event_base_loopbreak(srv->base);
}

/* Opens the listening and UDP sockets (the DNS one only when its port is set, else -1);
 * returns 0 or -1 after logging one clear sentence. */
static int server_open(const struct server_config *cfg, int *tcp_fd, int *udp_fd, int *dns_fd)
{
	char err[256];

	*tcp_fd = sock_listen_tcp(cfg->bind_addr, cfg->port, err, sizeof(err));
	if (*tcp_fd < 0) {
		log_error("%s", err);
		return -1;
	}
	*udp_fd = sock_bind_udp(cfg->bind_addr, cfg->port, err, sizeof(err));
	if (*udp_fd < 0) {
		log_error("%s", err);
		close(*tcp_fd);
		return -1;
	}
	*dns_fd = -1;
	if (cfg->dns_port != 0 &&
	    (*dns_fd = sock_bind_udp(cfg->bind_addr, cfg->dns_port, err, sizeof(err))) < 0) {
		log_error("%s (DNS responder; --dns-port 0 turns it off)", err);
		close(*udp_fd);
		close(*tcp_fd);
		return -1;
	}
	return 0;
}

int server_run(const struct server_config *cfg)
{
	struct server_ctx srv;
	struct reflector *refl = NULL;
	struct dns_responder *dns = NULL;
	struct event *accept_ev = NULL, *sig[2] = { NULL, NULL };
	int tcp_fd, udp_fd, dns_fd, rc = 1;

	memset(&srv, 0, sizeof(srv));
	srv.cfg = cfg;
	signal(SIGPIPE, SIG_IGN);
	if (evthread_use_pthreads() < 0 || session_table_init(&srv.table, cfg->max_sessions) < 0) {
		log_error("cannot initialise the server");
		return 1;
	}
	if (server_open(cfg, &tcp_fd, &udp_fd, &dns_fd) < 0) {
		session_table_free(&srv.table);
		return 1;
	}
	srv.base = event_base_new();
	if (srv.base == NULL) {
		log_error("cannot create the event loop");
		close(tcp_fd);
		close(udp_fd);
		if (dns_fd >= 0)
			close(dns_fd);
		goto out;
	}
	refl = reflector_start(&srv, udp_fd);
	if (dns_fd >= 0)
		dns = dns_responder_start(&srv, dns_fd);
	accept_ev = event_new(srv.base, tcp_fd, EV_READ | EV_PERSIST, server_accept_callback, &srv);
	sig[0] = evsignal_new(srv.base, SIGINT, server_signal_callback, &srv);
	sig[1] = evsignal_new(srv.base, SIGTERM, server_signal_callback, &srv);
	if (refl == NULL || (dns_fd >= 0 && dns == NULL) || accept_ev == NULL || sig[0] == NULL ||
	    sig[1] == NULL || event_add(accept_ev, NULL) < 0 || event_add(sig[0], NULL) < 0 ||
	    event_add(sig[1], NULL) < 0) {
		log_error("cannot start serving");
		close(tcp_fd);
		goto out;
	}
	log_info("bloatmeterd %s listening on %s port %u (TCP control/data, UDP probes; %s receive timestamps)",
		 BM_VERSION, cfg->bind_addr ? cfg->bind_addr : "*", cfg->port,
		 srv.udp_ts_kernel ? "kernel" : "user-space");
	rc = event_base_dispatch(srv.base) < 0 ? 1 : 0;
	control_close_all(&srv);
	close(tcp_fd);
out:
	reflector_stop(refl);
	dns_responder_stop(dns);
	for (int i = 0; i < 2; i++)
		if (sig[i])
			event_free(sig[i]);
	if (accept_ev)
		event_free(accept_ev);
	if (srv.base)
		event_base_free(srv.base);
	session_table_free(&srv.table);
	return rc;
}

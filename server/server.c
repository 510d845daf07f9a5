/* server: binds the TCP and UDP sockets, classifies each new connection by its first bytes
 * (control frame, data hello or connect probe), runs the event loop and the reflector and DNS
 * responder threads, and handles the signals: SIGHUP reloads the run-time limits, SIGINT and
 * SIGTERM stop accepting and end the sessions. */
#include "server/server.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/thread.h>

#include "common/clock.h"
#include "common/frame.h"
#include "common/log.h"
#include "common/sock.h"
#include "server/bulk.h"
#include "server/connprobe.h"
#include "server/control.h"
#include "server/ctx.h"
#include "server/dns.h"
#include "server/reflector.h"
#include "server/srvconfig.h"

/* What the signal callbacks need besides the shared context: the live configuration (srv.cfg
 * points at cfg; only this file changes it, on the event loop thread) and the listener. */
struct server_state {
	struct server_ctx srv;
	struct server_config cfg;
	int tcp_fd;
	struct event *accept_ev;
	struct event *drain;   /* on SIGTERM: polls until the sessions are gone or time is up */
	int64_t drain_end_ns;
};

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

static int same_str(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Logs the changed settings that only a restart applies (the sockets, the DNS responder's
 * zone and the log level are set up once). */
static void server_reload_restart_needed(const struct server_config *cur,
					 const struct server_config *next)
{
	char list[128] = "";
	size_t n = 0;
	const struct {
		int changed;
		const char *name;
	} keys[] = {
		{ cur->port != next->port, "port" },
		{ !same_str(cur->bind_addr, next->bind_addr), "bind" },
		{ cur->dns_port != next->dns_port, "dns-port" },
		{ !same_str(cur->dns_zone, next->dns_zone), "dns-zone" },
		{ cur->verbose != next->verbose, "verbose" },
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (keys[i].changed && n < sizeof(list))
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", n ? ", " : "",
					      keys[i].name);
	if (n > 0)
		log_warnx("reload: %s changed; not applied, that needs a restart", list);
}

/* SIGHUP: builds the configuration again (file, then the same command-line overrides) and
 * applies what the server checks when a session or flow arrives. No running session is
 * dropped, even over a lowered max-sessions; a bad file changes nothing. */
static void server_reload(struct server_state *st)
{
	struct server_config *cur = &st->cfg, next;
	char err[SRVCONFIG_ERR_MAX];

	if (srvconfig_build(cur->config_path, cur->config_optional, cur->overrides, &next, err,
			    sizeof(err)) < 0) {
		log_error("reload failed, keeping the running configuration: %s", err);
		return;
	}
	if (next.max_sessions > st->srv.table.cap &&
	    session_table_grow(&st->srv.table, next.max_sessions) < 0) {
		log_error("reload failed, keeping the running configuration: "
			  "no memory for %d sessions", next.max_sessions);
		return;
	}
	server_reload_restart_needed(cur, &next);
	cur->max_sessions = next.max_sessions;
	cur->max_flows = next.max_flows;
	cur->max_duration_s = next.max_duration_s;
	cur->max_sessions_per_client = next.max_sessions_per_client;
	log_info("configuration reloaded from %s: max-sessions %d, max-flows %d, max-duration %d s, "
		 "max-sessions-per-client %d", next.config_loaded ? next.config_path : "defaults",
		 cur->max_sessions, cur->max_flows, cur->max_duration_s, cur->max_sessions_per_client);
}

static void server_drain_callback(evutil_socket_t fd, short what, void *arg)
{
	struct server_state *st = arg;

	if (st->srv.nsessions == 0 || clock_mono_ns() >= st->drain_end_ns)
		event_base_loopbreak(st->srv.base);
}

/* SIGINT/SIGTERM: stop accepting at once, give the sessions SERVER_DRAIN_S seconds to end,
 * then stop the loop (server_run closes what is left). A second signal stops at once. */
static void server_stop(struct server_state *st, int sig)
{
	struct timeval tick = { 0, 100 * 1000 };

	if (st->drain != NULL) {
		log_info("signal %d again: stopping now", sig);
		event_base_loopbreak(st->srv.base);
		return;
	}
	log_info("signal %d: stopping, %d session(s) running", sig, st->srv.nsessions);
	event_del(st->accept_ev);
	/* Closing the listener now refuses new connections instead of leaving them queued. */
	close(st->tcp_fd);
	st->tcp_fd = -1;
	control_shutdown_all(&st->srv);
	st->drain_end_ns = clock_mono_ns() + (int64_t)SERVER_DRAIN_S * NS_PER_SEC;
	st->drain = event_new(st->srv.base, -1, EV_PERSIST, server_drain_callback, st);
	if (st->srv.nsessions == 0 || st->drain == NULL || event_add(st->drain, &tick) < 0)
		event_base_loopbreak(st->srv.base);
}

/* Runs on the event loop thread (libevent's evsignal), so it may touch everything. */
static void server_signal_callback(evutil_socket_t sig, short what, void *arg)
{
	struct server_state *st = arg;

	if (sig == SIGHUP) {
		if (st->drain == NULL)
			server_reload(st);
		return;
	}
	server_stop(st, (int)sig);
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
	static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	struct server_state *st = calloc(1, sizeof(*st));
	struct server_ctx *srv;
	struct reflector *refl = NULL;
	struct dns_responder *dns = NULL;
	struct event *sig[3] = { NULL, NULL, NULL };
	int udp_fd, dns_fd, rc = 1, ok;

	/* On the heap: the state holds the configuration's string storage, over 1 KiB. */
	if (st == NULL) {
		log_error("cannot initialise the server");
		return 1;
	}
	srv = &st->srv;
	srvconfig_copy(&st->cfg, cfg);
	srv->cfg = &st->cfg;
	cfg = &st->cfg;
	st->tcp_fd = -1;
	signal(SIGPIPE, SIG_IGN);
	if (evthread_use_pthreads() < 0 || session_table_init(&srv->table, cfg->max_sessions) < 0) {
		log_error("cannot initialise the server");
		free(st);
		return 1;
	}
	if (server_open(cfg, &st->tcp_fd, &udp_fd, &dns_fd) < 0) {
		session_table_free(&srv->table);
		free(st);
		return 1;
	}
	srv->base = event_base_new();
	if (srv->base == NULL) {
		log_error("cannot create the event loop");
		close(udp_fd);
		if (dns_fd >= 0)
			close(dns_fd);
		goto out;
	}
	refl = reflector_start(srv, udp_fd);
	if (dns_fd >= 0)
		dns = dns_responder_start(srv, dns_fd);
	st->accept_ev = event_new(srv->base, st->tcp_fd, EV_READ | EV_PERSIST,
				  server_accept_callback, srv);
	ok = refl != NULL && (dns_fd < 0 || dns != NULL) && st->accept_ev != NULL &&
	     event_add(st->accept_ev, NULL) == 0;
	for (int i = 0; i < 3 && ok; i++) {
		sig[i] = evsignal_new(srv->base, sigs[i], server_signal_callback, st);
		ok = sig[i] != NULL && event_add(sig[i], NULL) == 0;
	}
	if (!ok) {
		log_error("cannot start serving");
		goto out;
	}
	log_info("bloatmeterd %s listening on %s port %u (TCP control/data, UDP probes; %s receive timestamps)",
		 BM_VERSION, cfg->bind_addr ? cfg->bind_addr : "*", cfg->port,
		 srv->udp_ts_kernel ? "kernel" : "user-space");
	if (cfg->config_loaded)
		log_info("configuration from %s", cfg->config_path);
	rc = event_base_dispatch(srv->base) < 0 ? 1 : 0;
	control_close_all(srv);
out:
	if (st->tcp_fd >= 0)
		close(st->tcp_fd);
	reflector_stop(refl);
	dns_responder_stop(dns);
	for (int i = 0; i < 3; i++)
		if (sig[i])
			event_free(sig[i]);
	if (st->accept_ev)
		event_free(st->accept_ev);
	if (st->drain)
		event_free(st->drain);
	if (srv->base)
		event_base_free(srv->base);
	session_table_free(&srv->table);
	free(st);
	if (rc == 0)
		log_info("stopped");
	return rc;
}

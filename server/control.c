/* control: parses framed JSON control messages, creates the session on a valid hello, pushes
 * stats every 100 ms, and tears everything down on bye, error, deadline or disconnect. */
#include "server/control.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "common/clock.h"
#include "common/dns.h"
#include "common/frame.h"
#include "common/log.h"
#include "common/sock.h"
#include "common/util.h"
#include "server/bulk.h"

#define STATS_INTERVAL_MS 100

/* A control connection before hello: no session yet, so its state is just this. */
struct pending_ctrl {
	struct server_ctx *srv;
	struct sockaddr_storage peer;
};

static void control_read_callback(struct bufferevent *bev, void *arg);
static void control_event_callback(struct bufferevent *bev, short what, void *arg);
static void session_read_callback(struct bufferevent *bev, void *arg);
static void session_event_callback(struct bufferevent *bev, short what, void *arg);
static void session_write_done_callback(struct bufferevent *bev, void *arg);

static int control_send(struct bufferevent *bev, json_object *msg)
{
	return frame_put(bufferevent_get_output(bev), msg);
}

static void linger_read_callback(struct bufferevent *bev, void *arg)
{
	struct evbuffer *in = bufferevent_get_input(bev);

	evbuffer_drain(in, evbuffer_get_length(in));
}

static void linger_event_callback(struct bufferevent *bev, short what, void *arg)
{
	bufferevent_free(bev);
}

/* The reply is flushed: half-close, then discard what the peer still sends until it closes
 * or 2 s pass. Closing with unread input would send a reset that can destroy our reply in the
 * peer's receive queue before it reads it. */
static void linger_write_callback(struct bufferevent *bev, void *arg)
{
	if (shutdown(bufferevent_getfd(bev), SHUT_WR) < 0) {
		bufferevent_free(bev);
		return;
	}
	bufferevent_setcb(bev, linger_read_callback, NULL, linger_event_callback, NULL);
	bufferevent_enable(bev, EV_READ);
}

/* Sends one message and closes (public-server discipline: one reply, then close). */
static void control_reply_and_close(struct bufferevent *bev, json_object *msg)
{
	struct timeval tmo = { 2, 0 };
	struct evbuffer *in = bufferevent_get_input(bev);

	evbuffer_drain(in, evbuffer_get_length(in));
	bufferevent_disable(bev, EV_READ);
	bufferevent_setcb(bev, NULL, linger_write_callback, linger_event_callback, NULL);
	bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
	bufferevent_set_timeouts(bev, &tmo, &tmo);
	if (control_send(bev, msg) < 0 || bufferevent_enable(bev, EV_WRITE) < 0)
		bufferevent_free(bev);
}

/* Sends one error reply and closes. */
static void control_fail(struct bufferevent *bev, const char *reason)
{
	json_object *msg = wire_ctrl_new("error");

	json_object_object_add(msg, "reason", json_object_new_string(reason));
	control_reply_and_close(bev, msg);
}

static int control_next_message(struct bufferevent *bev, json_object **msg, char *err, size_t errlen)
{
	return frame_take(bufferevent_get_input(bev), msg, err, errlen);
}

/* Running sessions of the client at peer (one IPv4 address or IPv6 /64). */
static int control_client_sessions(const struct server_ctx *srv, const struct sockaddr *peer)
{
	int n = 0;

	for (const struct session *s = srv->sessions; s; s = s->next)
		n += sock_same_client((const struct sockaddr *)&s->peer, peer);
	return n;
}

struct session *control_find_session(struct server_ctx *srv, const uint8_t *token)
{
	for (struct session *s = srv->sessions; s; s = s->next)
		if (memcmp(s->token, token, WIRE_TOKEN_LEN) == 0)
			return s;
	return NULL;
}

static void session_free(struct session *s)
{
	struct server_ctx *srv = s->srv;
	struct session **pp = &srv->sessions;

	while (s->flows)
		bulk_close(s->flows);
	session_table_remove(&srv->table, s->token);
	while (*pp && *pp != s)
		pp = &(*pp)->next;
	if (*pp)
		*pp = s->next;
	srv->nsessions--;
	if (s->tick)
		event_free(s->tick);
	if (s->ctrl)
		bufferevent_free(s->ctrl);
	log_info("session %llu from %s ended after %.1f s", (unsigned long long)s->id, s->peer_str,
		 (double)(clock_mono_ns() - s->start_ns) / NS_PER_SEC);
	free(s);
}

void control_close_all(struct server_ctx *srv)
{
	while (srv->sessions)
		session_free(srv->sessions);
}

static json_object *session_stats(struct session *s, int final)
{
	json_object *msg = wire_ctrl_new("stats");
	struct tcp_totals tt;

	json_object_object_add(msg, "t_ns", json_object_new_int64(clock_mono_ns()));
	json_object_object_add(msg, "up_rx_bytes", json_object_new_int64((int64_t)s->up_rx_bytes));
	json_object_object_add(msg, "down_tx_bytes", json_object_new_int64((int64_t)s->down_tx_bytes));
	json_object_object_add(msg, "udp_rx",
			       json_object_new_int64((int64_t)session_table_probe_count(&s->srv->table, s->token)));
	json_object_object_add(msg, "flows_down", json_object_new_int(s->nflows[0]));
	json_object_object_add(msg, "flows_up", json_object_new_int(s->nflows[1]));
	json_object_object_add(msg, "cc_failures", json_object_new_int64((int64_t)s->cc_failures));
	/* This runs on the event loop that drives every bulk flow: its CPU time tells the client
	 * whether the server, not the path, limited the load. */
	json_object_object_add(msg, "loop_cpu_ns", json_object_new_int64(clock_thread_cpu_ns()));
	bulk_down_totals(s, &tt);
	json_object_object_add(msg, "down_retrans", json_object_new_int64((int64_t)tt.retrans));
	json_object_object_add(msg, "down_busy_us", json_object_new_int64((int64_t)tt.busy_us));
	json_object_object_add(msg, "down_rwnd_limited_us",
			       json_object_new_int64((int64_t)tt.rwnd_limited_us));
	json_object_object_add(msg, "down_sndbuf_limited_us",
			       json_object_new_int64((int64_t)tt.sndbuf_limited_us));
	if (final)
		json_object_object_add(msg, "final", json_object_new_boolean(1));
	return msg;
}

/* Every 100 ms: push stats (the client's upload throughput comes from these) and enforce the
 * session deadline. */
static void session_tick_callback(evutil_socket_t fd, short what, void *arg)
{
	struct session *s = arg;

	if (s->state != SESS_ACTIVE)
		return;
	if (clock_mono_ns() > s->deadline_ns) {
		log_info("session %llu reached its time limit", (unsigned long long)s->id);
		session_free(s);
		return;
	}
	bulk_tune(s);
	if (control_send(s->ctrl, session_stats(s, 0)) < 0)
		session_free(s);
}

/* Probes whether this host lets us use the requested algorithm, so the welcome can say so
 * before any load runs. Fills *used with what a socket really ends up with. */
static int control_probe_cc(const char *cc, char *used, size_t usedlen, char *why, size_t whylen)
{
	int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int ok;

	if (fd < 0)
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, whylen, "socket: %s", strerror(errno));
		snprintf(used, usedlen, "unknown");
		return 0;
	}
	ok = sock_set_cc(fd, cc) == 0;
	if (!ok)
		snprintf(why, whylen, "%s", strerror(errno));
	if (sock_get_cc(fd, used, usedlen) < 0)
		snprintf(used, usedlen, "unknown");
	close(fd);
	return ok;
}

/* Validates a hello and turns the pending connection into a session. */
static void control_handle_hello(struct pending_ctrl *pc, struct bufferevent *bev, json_object *msg)
{
	struct server_ctx *srv = pc->srv;
	/* pc stays owned by the caller; everything needed is copied into the session. */
	const struct server_config *cfg = srv->cfg;
	const char *cc;
	int64_t duration;
	char used[16], why[128] = "", hex[2 * WIRE_TOKEN_LEN + 1];
	struct session *s;
	json_object *w;

	if (wire_get_str(msg, "cc", 15, &cc) < 0 ||
	    wire_get_int(msg, "duration_s", 1, 86400, &duration) < 0) {
		atomic_fetch_add(&srv->counters.ctrl_bad, 1);
		control_fail(bev, "hello needs cc (string) and duration_s (1..86400)");
		return;
	}
	for (const char *c = cc; *c; c++) {
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_')) {
			atomic_fetch_add(&srv->counters.ctrl_bad, 1);
			control_fail(bev, "invalid congestion control name");
			return;
		}
	}
	if (duration > cfg->max_duration_s) {
		atomic_fetch_add(&srv->counters.sessions_refused, 1);
		control_fail(bev, "requested duration exceeds this server's limit");
		return;
	}
	if (srv->nsessions >= cfg->max_sessions ||
	    control_client_sessions(srv, (struct sockaddr *)&pc->peer) >= cfg->max_sessions_per_client) {
		json_object *busy = wire_ctrl_new("busy");

		atomic_fetch_add(&srv->counters.sessions_refused, 1);
		json_object_object_add(busy, "retry_after_s", json_object_new_int(10));
		control_reply_and_close(bev, busy);
		return;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL || util_random(s->token, sizeof(s->token)) < 0 ||
	    session_table_add(&srv->table, s->token, (struct sockaddr *)&pc->peer) < 0) {
		free(s);
		control_fail(bev, "server cannot create a session now");
		return;
	}
	s->id = ++srv->next_session_id;
	s->srv = srv;
	s->state = SESS_ACTIVE;
	s->peer = pc->peer;
	sock_addr_str((struct sockaddr *)&s->peer, s->peer_str, sizeof(s->peer_str));
	snprintf(s->cc, sizeof(s->cc), "%s", cc);
	s->cc_ok = control_probe_cc(cc, used, sizeof(used), why, sizeof(why));
	s->start_ns = clock_mono_ns();
	/* Grace beyond the asked duration covers connection set-up and drain. */
	s->deadline_ns = s->start_ns + (duration + 30) * NS_PER_SEC;
	s->ctrl = bev;
	s->next = srv->sessions;
	srv->sessions = s;
	srv->nsessions++;
	atomic_fetch_add(&srv->counters.sessions_total, 1);

	w = wire_ctrl_new("welcome");
	wire_token_to_hex(s->token, hex);
	json_object_object_add(w, "session", json_object_new_int64((int64_t)s->id));
	json_object_object_add(w, "token", json_object_new_string(hex));
	json_object_object_add(w, "udp_port", json_object_new_int(cfg->port));
	json_object_object_add(w, "server_version", json_object_new_string(BM_VERSION));
	json_object_object_add(w, "cc", json_object_new_string(cc));
	json_object_object_add(w, "cc_ok", json_object_new_boolean(s->cc_ok));
	json_object_object_add(w, "cc_used", json_object_new_string(s->cc_ok ? cc : used));
	if (!s->cc_ok)
		json_object_object_add(w, "cc_error", json_object_new_string(why));
	json_object_object_add(w, "max_flows", json_object_new_int(cfg->max_flows));
	json_object_object_add(w, "udp_timestamps",
			       json_object_new_string(srv->udp_ts_kernel ? "kernel" : "user"));
	json_object_object_add(w, "dns_port", json_object_new_int(cfg->dns_port));
	json_object_object_add(w, "dns_zone",
			       json_object_new_string(cfg->dns_zone ? cfg->dns_zone : DNS_DEFAULT_ZONE));

	bufferevent_setcb(bev, session_read_callback, NULL, session_event_callback, s);
	bufferevent_set_timeouts(bev, NULL, NULL);
	s->tick = event_new(srv->base, -1, EV_PERSIST, session_tick_callback, s);
	if (s->tick == NULL || control_send(bev, w) < 0) {
		session_free(s);
		return;
	}
	{
		struct timeval tv = { 0, STATS_INTERVAL_MS * 1000 };

		event_add(s->tick, &tv);
	}
	log_info("session %llu from %s: cc %s%s", (unsigned long long)s->id, s->peer_str, cc,
		 s->cc_ok ? "" : " (not settable here)");
	/* The client may already have pipelined more; handle it in the session's context. */
	session_read_callback(bev, s);
}

static void control_read_callback(struct bufferevent *bev, void *arg)
{
	struct pending_ctrl *pc = arg;
	json_object *msg = NULL;
	char err[160];
	int rc = control_next_message(bev, &msg, err, sizeof(err));

	if (rc == 0)
		return;
	if (rc < 0 || strcmp(wire_ctrl_type(msg), "hello") != 0) {
		atomic_fetch_add(&pc->srv->counters.ctrl_bad, 1);
		log_debug("control: %s", rc < 0 ? err : "expected hello");
		control_fail(bev, rc < 0 ? err : "expected hello");
		free(pc);
		json_object_put(msg);
		return;
	}
	control_handle_hello(pc, bev, msg);
	free(pc);
	json_object_put(msg);
}

static void control_event_callback(struct bufferevent *bev, short what, void *arg)
{
	struct pending_ctrl *pc = arg;

	if (what & BEV_EVENT_TIMEOUT)
		atomic_fetch_add(&pc->srv->counters.ctrl_timeout, 1);
	bufferevent_free(bev);
	free(pc);
}

static void session_read_callback(struct bufferevent *bev, void *arg)
{
	struct session *s = arg;

	while (s->state == SESS_ACTIVE) {
		json_object *msg = NULL;
		char err[160];
		int rc = control_next_message(bev, &msg, err, sizeof(err));

		if (rc == 0)
			return;
		if (rc < 0 || strcmp(wire_ctrl_type(msg), "bye") != 0) {
			atomic_fetch_add(&s->srv->counters.ctrl_bad, 1);
			log_debug("session %llu: %s", (unsigned long long)s->id,
				  rc < 0 ? err : "unexpected message");
			json_object_put(msg);
			s->ctrl = NULL;
			control_fail(bev, rc < 0 ? err : "unexpected message");
			session_free(s);
			return;
		}
		json_object_put(msg);
		/* bye: the final stats carry the totals the client needs; close once flushed. */
		s->state = SESS_CLOSING;
		while (s->flows)
			bulk_close(s->flows);
		(void)control_send(bev, session_stats(s, 1));
		bufferevent_disable(bev, EV_READ);
		bufferevent_setcb(bev, NULL, session_write_done_callback, session_event_callback, s);
		bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
		return;
	}
}

static void session_write_done_callback(struct bufferevent *bev, void *arg)
{
	session_free(arg);
}

/* EOF, error or timeout on the control connection: the client is gone, so is the session. */
static void session_event_callback(struct bufferevent *bev, short what, void *arg)
{
	struct session *s = arg;

	if (s->state == SESS_ACTIVE)
		log_debug("session %llu: control connection lost (%s)", (unsigned long long)s->id,
			  what & BEV_EVENT_EOF ? "eof" : "error");
	session_free(s);
}

void control_start(struct server_ctx *srv, struct bufferevent *bev, const struct sockaddr *peer)
{
	struct pending_ctrl *pc = calloc(1, sizeof(*pc));

	if (pc == NULL) {
		bufferevent_free(bev);
		return;
	}
	pc->srv = srv;
	memcpy(&pc->peer, peer, peer->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
							     : sizeof(struct sockaddr_in));
	bufferevent_setcb(bev, control_read_callback, NULL, control_event_callback, pc);
	control_read_callback(bev, pc);
}

/* Tells every running session's client that the server is going away: one `error` message,
 * which the protocol says the server closes after. The session stops pushing stats and
 * accepting flows (SESS_CLOSING) and ends when the client closes, or at the drain deadline. */
void control_shutdown_all(struct server_ctx *srv)
{
	for (struct session *s = srv->sessions; s; s = s->next) {
		json_object *msg;

		if (s->state != SESS_ACTIVE || s->ctrl == NULL)
			continue; /* already flushing its final stats */
		s->state = SESS_CLOSING;
		msg = wire_ctrl_new("error");
		json_object_object_add(msg, "reason",
				       json_object_new_string("server shutting down"));
		if (control_send(s->ctrl, msg) < 0)
			log_debug("session %llu: cannot queue the shutdown notice",
				  (unsigned long long)s->id);
	}
}

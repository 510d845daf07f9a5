/* sessionlife: a session's control connection after the welcome, its 100 ms tick and its
 * end. */
#include "server/sessionlife.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/sock.h"
#include "common/util.h"
#include "server/admission.h"
#include "server/bulk.h"
#include "server/ctrlmsg.h"
#include "server/sessionlist.h"
#include "server/testrecord.h"
#include "server/testring.h"
#include "server/worker.h"

#define STATS_INTERVAL_MS 100
/* While load flows run, a stats message (about 600 bytes on the wire with its headers, and
 * the client's ACK of it, 66 bytes up) waits until each loaded direction carried 200 times its
 * part since the last one, so it stays within 0.5 % of each; and at most 2 s (0.5 % of
 * 500 kbit/s). One every 100 ms took 7 % of a 500 kbit/s downlink and, by its ACKs, 1 % of
 * the uplink, the links under test (lab: the download goodput read -7.4 %). From 10 Mbit/s
 * down and 1 Mbit/s up nothing changes. */
#define STATS_WIRE_BYTES 600
#define STATS_ACK_BYTES 66
#define STATS_SHARE 0.005
#define STATS_MAX_GAP_NS (2000 * 1000000LL)

static void session_read_callback(struct bufferevent *bev, void *arg);
static void session_event_callback(struct bufferevent *bev, short what, void *arg);

/* A summary posted by a worker thread, pushed on the main thread (which owns the ring). */
struct session_posted {
	struct server_ctx *srv;
	struct test_summary sum;
};

static void session_push_callback(evutil_socket_t fd, short what, void *arg)
{
	struct session_posted *p = arg;

	testrecord_done(p->srv, &p->sum);
	free(p);
}

/* The ring of recent tests is the main thread's (the HTTP listener reads it there): a worker
 * thread posts the summary to the main loop instead of taking a lock on every request. */
static void session_push_test(struct server_ctx *srv, const struct test_summary *sum)
{
	struct session_posted *p;

	if (!srv->tests_remote) {
		testrecord_done(srv, sum);
		return;
	}
	p = malloc(sizeof(*p));
	if (p == NULL)
		return; /* the test ran; only its summary is not kept */
	p->srv = srv;
	p->sum = *sum;
	if (event_base_once(srv->base, -1, EV_TIMEOUT, session_push_callback, p, NULL) < 0)
		free(p);
}

/* The ended test's summary into the ring of recent tests, taken before its flows and table
 * entry go (their counters are part of it), and its bytes into the daemon's totals. */
static void session_record_test(struct session *s)
{
	struct server_ctx *srv = s->srv;
	struct test_summary sum;

	atomic_fetch_add(&srv->counters.bytes_down_done, s->down_tx_bytes);
	atomic_fetch_add(&srv->counters.bytes_up_done, s->up_rx_bytes);
	if (s->live != NULL && srv->tests != NULL) {
		testlive_finish(s->live, s, session_table_probe_count(&srv->table, s->token),
				clock_mono_ns(), &sum);
		session_push_test(srv, &sum);
	}
	free(s->live);
	s->live = NULL;
}

void sessionlife_end(struct session *s)
{
	struct server_ctx *srv = s->srv;
	char net[48]; /* as testring's client field: "a.b.c.0/24" or an IPv6 /32 */

	session_record_test(s);
	while (s->flows)
		bulk_close(s->flows);
	session_table_remove(&srv->table, s->token);
	sessionlist_unlink(srv, s);
	worker_session_ended(srv->workers, s->worker);
	if (s->tick)
		event_free(s->tick);
	if (s->ctrl)
		bufferevent_free(s->ctrl);
	/* The operator's one line per test at default verbosity: the client's network only, as
	 * /api/v1/tests shows it (the full address is in the start line, at -v). */
	testring_mask_addr((const struct sockaddr *)&s->peer, net, sizeof(net));
	log_notice("session %llu from %s ended after %.1f s: %.1f MB down, %.1f MB up",
		   (unsigned long long)s->id, net,
		   (double)(clock_mono_ns() - s->start_ns) / NS_PER_SEC,
		   (double)atomic_load(&s->down_tx_bytes) / 1e6,
		   (double)atomic_load(&s->up_rx_bytes) / 1e6);
	free(s);
}

void sessionlife_close_all(struct server_ctx *srv)
{
	while (srv->sessions)
		sessionlife_end(srv->sessions);
}

static json_object *session_stats(struct session *s, int final)
{
	json_object *msg = wire_ctrl_new("stats");
	struct tcp_totals tt;
	uint32_t srtt;

	json_object_object_add(msg, "t_ns", json_object_new_int64(clock_mono_ns()));
	json_object_object_add(msg, "up_rx_bytes", json_object_new_int64((int64_t)s->up_rx_bytes));
	json_object_object_add(msg, "down_tx_bytes", json_object_new_int64((int64_t)s->down_tx_bytes));
	json_object_object_add(msg, "udp_rx",
			       json_object_new_int64((int64_t)session_table_probe_count(&s->srv->table, s->token)));
	json_object_object_add(msg, "flows_down", json_object_new_int(s->nflows[0]));
	json_object_object_add(msg, "flows_up", json_object_new_int(s->nflows[1]));
	json_object_object_add(msg, "cc_failures", json_object_new_int64((int64_t)s->cc_failures));
	/* This runs on the session's worker, whose event loop drives all its bulk flows: that
	 * thread's CPU time tells the client whether the server, not the path, limited the load. */
	json_object_object_add(msg, "loop_cpu_ns", json_object_new_int64(clock_thread_cpu_ns()));
	bulk_down_totals(s, &tt, &srtt);
	json_object_object_add(msg, "down_retrans", json_object_new_int64((int64_t)tt.retrans));
	json_object_object_add(msg, "down_busy_us", json_object_new_int64((int64_t)tt.busy_us));
	json_object_object_add(msg, "down_rwnd_limited_us",
			       json_object_new_int64((int64_t)tt.rwnd_limited_us));
	json_object_object_add(msg, "down_sndbuf_limited_us",
			       json_object_new_int64((int64_t)tt.sndbuf_limited_us));
	if (srtt > 0)
		json_object_object_add(msg, "down_srtt_us", json_object_new_int64(srtt));
	if (tt.delivered_bytes > 0)
		json_object_object_add(msg, "down_delivered_bytes",
				       json_object_new_int64((int64_t)tt.delivered_bytes));
	if (final)
		json_object_object_add(msg, "final", json_object_new_boolean(1));
	return msg;
}

/* A session is in use while it has flows, its probes arrive or its client writes on the
 * control connection (during a test the client only says bye: an idle phase has only probes).
 * Ends one unused for idle-timeout with an error; 1 if it did. */
static int session_idle_check(struct session *s, int64_t now)
{
	uint64_t probes = session_table_probe_count(&s->srv->table, s->token);
	struct bufferevent *bev = s->ctrl;

	if (s->flows != NULL || probes != s->idle_probes) {
		s->idle_probes = probes;
		s->active_ns = now;
		return 0;
	}
	if (now - s->active_ns <= (int64_t)s->srv->cfg->idle_timeout_s * NS_PER_SEC)
		return 0;
	atomic_fetch_add(&s->srv->counters.sessions_idle, 1);
	log_info("session %llu: idle for %d s, ended", (unsigned long long)s->id,
		 s->srv->cfg->idle_timeout_s);
	s->ctrl = NULL;
	ctrlmsg_fail(s->srv, bev, "session idle for too long");
	sessionlife_end(s);
	return 1;
}

/* A closing session whose last message is still not flushed: its client does not read. Ends
 * it SESSIONLIFE_CLOSE_S (at most idle-timeout) after it began to close; 1 if it did. */
static int session_closing_check(struct session *s, int64_t now)
{
	int close_s = s->srv->cfg->idle_timeout_s < SESSIONLIFE_CLOSE_S ? s->srv->cfg->idle_timeout_s
									: SESSIONLIFE_CLOSE_S;

	if (now - s->closing_ns <= (int64_t)close_s * NS_PER_SEC)
		return 0;
	log_debug("session %llu: its last message not taken within %d s of closing",
		  (unsigned long long)s->id, close_s);
	sessionlife_end(s);
	return 1;
}

/* A client that leaves SESSIONLIFE_BACKLOG_MAX of stats unread: ends its session; 1 if it
 * did. */
static int session_backlog_check(struct session *s)
{
	size_t queued = evbuffer_get_length(bufferevent_get_output(s->ctrl));

	if (queued < SESSIONLIFE_BACKLOG_MAX)
		return 0;
	log_info("session %llu: its client left %zu bytes of stats unread, ended",
		 (unsigned long long)s->id, queued);
	sessionlife_end(s);
	return 1;
}

/* Whether this tick sends stats: always without load flows, else once the bytes each loaded
 * direction carried make the message and its ACK a small share of them (STATS_SHARE). */
static int session_stats_due(const struct session *s, int64_t now)
{
	uint64_t down = atomic_load(&s->down_tx_bytes) - s->stats_down_bytes;
	uint64_t up = atomic_load(&s->up_rx_bytes) - s->stats_up_bytes;

	if (now - s->stats_ns >= STATS_MAX_GAP_NS)
		return 1;
	if (s->nflows[0] > 0 && (double)down * STATS_SHARE < STATS_WIRE_BYTES)
		return 0;
	return s->nflows[1] == 0 || (double)up * STATS_SHARE >= STATS_ACK_BYTES;
}

/* Every 100 ms: enforce the session deadline (in every state) and, while it closes, the
 * closing bound; while active, push stats when due (the client's upload throughput comes from
 * these)
 * and enforce the idle-timeout, the unread backlog cap and the upload read limit. */
static void session_tick_callback(evutil_socket_t fd, short what, void *arg)
{
	struct session *s = arg;
	int64_t now = clock_mono_ns();

	if (now > s->deadline_ns) {
		log_info("session %llu reached its time limit", (unsigned long long)s->id);
		sessionlife_end(s);
		return;
	}
	if (s->state != SESS_ACTIVE) {
		(void)session_closing_check(s, now);
		return;
	}
	bulk_limits_tick(s, now);
	if (session_idle_check(s, now) || session_backlog_check(s))
		return;
	bulk_tune(s);
	if (s->live)
		testlive_tick(s->live, s, now);
	if (!session_stats_due(s, now))
		return;
	if (ctrlmsg_send(s->ctrl, session_stats(s, 0)) < 0) {
		sessionlife_end(s);
		return;
	}
	s->stats_ns = now;
	s->stats_down_bytes = atomic_load(&s->down_tx_bytes);
	s->stats_up_bytes = atomic_load(&s->up_rx_bytes);
}

/* Probes whether this host lets us use the requested algorithm, so the welcome can say so
 * before any load runs. Fills *used with what a socket really ends up with. Only an algorithm
 * the kernel has now (built in or loaded) is tried: with privileges, setting any other name
 * would make the kernel load module tcp_NAME at the client's request. */
static int session_probe_cc(const char *cc, char *used, size_t usedlen, char *why, size_t whylen)
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
	if (!sock_cc_available(cc)) {
		ok = 0;
		snprintf(why, whylen, "not available on this server (not in its "
			 "tcp_available_congestion_control)");
	} else if (!(ok = sock_set_cc(fd, cc) == 0)) {
		snprintf(why, whylen, "%s", strerror(errno));
	}
	if (sock_get_cc(fd, used, usedlen) < 0)
		snprintf(used, usedlen, "unknown");
	close(fd);
	return ok;
}

/* The fields of a new session s for peer asking for cc and duration seconds. */
static void session_init(struct session *s, struct bufferevent *bev,
			 const struct sockaddr_storage *peer, const char *cc, int64_t duration,
			 char *used, char *why)
{
	const struct server_config *cfg = s->srv->cfg;

	s->base = bufferevent_get_base(bev);
	s->state = SESS_ACTIVE;
	s->peer = *peer;
	sock_addr_str((struct sockaddr *)&s->peer, s->peer_str, sizeof(s->peer_str));
	snprintf(s->cc, sizeof(s->cc), "%s", cc);
	s->cc_ok = session_probe_cc(cc, used, SESSIONLIFE_CC_USED_LEN, why, SESSIONLIFE_CC_WHY_LEN);
	s->start_ns = clock_mono_ns();
	/* Grace beyond the asked duration covers connection set-up and drain. */
	s->deadline_ns = s->start_ns + (duration + 30) * NS_PER_SEC;
	s->end_ns = s->start_ns + duration * NS_PER_SEC;
	s->active_ns = s->start_ns;
	s->max_rate_bps = cfg->max_rate_bps;
	/* A quarter second of reads at 1.25 × max-rate, at least 64 KiB: the sinks resume
	 * every 100 ms tick, so a client that paces itself never meets the limit. */
	limits_bucket_init(&s->up_bucket, LIMITS_UPLOAD_FACTOR * (double)cfg->max_rate_bps / 8,
			   fmax(LIMITS_UPLOAD_FACTOR * (double)cfg->max_rate_bps / 8 / 4, 65536),
			   s->start_ns);
	s->ctrl = bev;
	/* Without memory for it the test runs, only its summary is not kept. */
	s->live = calloc(1, sizeof(*s->live));
	if (s->live)
		testlive_init(s->live, s->start_ns, clock_real_ns());
}

struct session *sessionlife_new(struct server_ctx *srv, int worker, struct bufferevent *bev,
				const struct sockaddr_storage *peer, const char *cc,
				int64_t duration, char *used, char *why, int64_t *busy_until)
{
	struct session *s = calloc(1, sizeof(*s));

	if (s == NULL || util_random(s->token, sizeof(s->token)) < 0 ||
	    session_table_add(&srv->table, s->token, (const struct sockaddr *)peer) < 0) {
		free(s);
		admission_unreserve(srv);
		return NULL;
	}
	s->srv = srv;
	s->worker = worker;
	session_init(s, bev, peer, cc, duration, used, why);
	if (admission_link(srv, s, busy_until) < 0) {
		session_table_remove(&srv->table, s->token);
		free(s->live);
		free(s);
		admission_unreserve(srv);
		return NULL;
	}
	atomic_fetch_add(&srv->counters.sessions_total, 1);
	worker_session_started(srv->workers, worker);
	return s;
}

void sessionlife_start(struct session *s, json_object *welcome)
{
	struct timeval tick = { 0, STATS_INTERVAL_MS * 1000 };
	struct bufferevent *bev = s->ctrl;

	bufferevent_setcb(bev, session_read_callback, NULL, session_event_callback, s);
	bufferevent_set_timeouts(bev, NULL, NULL);
	s->tick = event_new(s->base, -1, EV_PERSIST, session_tick_callback, s);
	if (s->tick == NULL || event_add(s->tick, &tick) < 0) {
		json_object_put(welcome);
		sessionlife_end(s);
		return;
	}
	if (ctrlmsg_send(bev, welcome) < 0) {
		sessionlife_end(s);
		return;
	}
	log_info("session %llu from %s: cc %s%s", (unsigned long long)s->id, s->peer_str, s->cc,
		   s->cc_ok ? "" : " (not settable here)");
	/* The client may already have pipelined more; handle it in the session's context. */
	session_read_callback(bev, s);
}

/* The client's own summary of its test (docs/protocol.md): kept, marked as client-reported,
 * when it is valid and the first one; otherwise counted as bad and ignored, never a reason to
 * end the test. */
static void session_take_summary(struct session *s, json_object *msg)
{
	struct test_client_summary c;

	if (s->live == NULL)
		return; /* no memory to keep it */
	if (s->live->reported.valid || testring_parse_summary(msg, &c) < 0) {
		atomic_fetch_add(&s->srv->counters.ctrl_bad, 1);
		log_debug("session %llu: summary ignored (%s)", (unsigned long long)s->id,
			  s->live->reported.valid ? "a second one" : "invalid");
		return;
	}
	s->live->reported = c;
}

/* The final stats are in the kernel (over TLS too: the SSL writes to the socket itself). */
static void session_write_done_callback(struct bufferevent *bev, void *arg)
{
	sessionlife_end(arg);
}

/* bye: the final stats carry the totals the client needs; close once flushed (or at the
 * closing bound). */
static void session_bye(struct session *s, struct bufferevent *bev)
{
	s->state = SESS_CLOSING;
	s->closing_ns = clock_mono_ns();
	while (s->flows)
		bulk_close(s->flows);
	/* Callbacks first: a TLS bufferevent writes (and reports it) inside the send. */
	bufferevent_disable(bev, EV_READ);
	bufferevent_setcb(bev, NULL, session_write_done_callback, session_event_callback, s);
	bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
	(void)ctrlmsg_send(bev, session_stats(s, 1));
}

/* Anything but summary or bye, or a framing error: an error reply, and the session ends. */
static void session_bad_message(struct session *s, struct bufferevent *bev, const char *why)
{
	atomic_fetch_add(&s->srv->counters.ctrl_bad, 1);
	log_debug("session %llu: %s", (unsigned long long)s->id, why);
	s->ctrl = NULL;
	ctrlmsg_fail(s->srv, bev, why);
	sessionlife_end(s);
}

static void session_read_callback(struct bufferevent *bev, void *arg)
{
	struct session *s = arg;

	while (s->state == SESS_ACTIVE) {
		json_object *msg = NULL;
		char err[160];
		int rc = ctrlmsg_take(bev, &msg, err, sizeof(err));

		if (rc == 0)
			return;
		s->active_ns = clock_mono_ns();
		if (rc > 0 && strcmp(wire_ctrl_type(msg), "summary") == 0) {
			session_take_summary(s, msg);
			json_object_put(msg);
			continue;
		}
		if (rc < 0 || strcmp(wire_ctrl_type(msg), "bye") != 0) {
			json_object_put(msg);
			session_bad_message(s, bev, rc < 0 ? err : "unexpected message");
			return;
		}
		json_object_put(msg);
		session_bye(s, bev);
		return;
	}
}

/* EOF, error or timeout on the control connection: the client is gone, so is the session. */
static void session_event_callback(struct bufferevent *bev, short what, void *arg)
{
	struct session *s = arg;

	if (s->state == SESS_ACTIVE)
		log_debug("session %llu: control connection lost (%s)", (unsigned long long)s->id,
			  what & BEV_EVENT_EOF ? "eof" : "error");
	sessionlife_end(s);
}

/* The protocol says the server closes after an `error` message. The session stops pushing
 * stats and accepting flows (SESS_CLOSING) and ends when the client closes, at the closing
 * bound (SESSIONLIFE_CLOSE_S) or at the drain deadline. The lock is recursive (server.c): a TLS send that fails at once frees its session
 * inside. */
void sessionlife_shutdown_all(struct server_ctx *srv, int worker)
{
	struct session *s, *next;

	pthread_mutex_lock(&srv->lock);
	for (s = srv->sessions; s; s = next) {
		next = s->next;
		if (s->worker != worker || s->state != SESS_ACTIVE || s->ctrl == NULL)
			continue; /* another thread's, or already flushing its final stats */
		s->state = SESS_CLOSING;
		s->closing_ns = clock_mono_ns();
		if (ctrlmsg_send(s->ctrl, ctrlmsg_error("server shutting down")) < 0)
			log_debug("session %llu: cannot queue the shutdown notice",
				  (unsigned long long)s->id);
	}
	pthread_mutex_unlock(&srv->lock);
}

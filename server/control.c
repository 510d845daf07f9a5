/* control: parses framed JSON control messages, creates the session on a valid hello, pushes
 * stats every 100 ms, and tears everything down on bye, error, deadline or disconnect. */
#include "server/control.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent_ssl.h>

#include "common/auth.h"
#include "common/clock.h"
#include "common/dns.h"
#include "common/frame.h"
#include "common/log.h"
#include "common/sock.h"
#include "common/util.h"
#include "server/bulk.h"
#include "server/testring.h"
#include "server/worker.h"

#define STATS_INTERVAL_MS 100

/* A control connection before hello: no session yet, so its state is just this. */
struct pending_ctrl {
	struct server_ctx *srv;
	int worker;                   /* whose thread runs it (and the session it becomes) */
	struct bufferevent *bev;      /* its connection, for a close at shutdown */
	struct worker_obj obj;        /* listed on that worker for shutdown */
	struct sockaddr_storage peer;
	/* With a psk-file (docs/protocol.md, "Authentication"): the hello held until its auth
	 * answer, both nonces, and the key that answered. */
	json_object *hello;
	char snonce[AUTH_NONCE_HEX + 1];
	char cnonce[AUTH_NONCE_HEX + 1];
	const struct auth_key *key;
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

/* A connection we are closing after one reply: it lives at most LINGER_S from the reply, a
 * fixed deadline (a read timeout would restart on every byte a peer trickles). */
struct ctrl_linger {
	struct bufferevent *bev;
	struct event *deadline;
	struct worker_obj obj;        /* listed on its worker for shutdown */
};

#define LINGER_S 2

static void linger_free(struct ctrl_linger *l)
{
	worker_obj_remove(&l->obj);
	if (l->deadline)
		event_free(l->deadline);
	bufferevent_free(l->bev);
	free(l);
}

static void linger_deadline_callback(evutil_socket_t fd, short what, void *arg)
{
	linger_free(arg);
}

static void linger_obj_close(struct worker_obj *o)
{
	linger_free(WORKER_OBJ_OF(o, struct ctrl_linger, obj));
}

static void linger_read_callback(struct bufferevent *bev, void *arg)
{
	struct evbuffer *in = bufferevent_get_input(bev);

	evbuffer_drain(in, evbuffer_get_length(in));
}

static void linger_event_callback(struct bufferevent *bev, short what, void *arg)
{
	linger_free(arg);
}

/* The reply is flushed (in the kernel, over TLS too: the SSL writes to the socket itself):
 * half-close, then discard what the peer still sends until it closes or the deadline. Closing
 * with unread input would send a reset that can destroy our reply in the peer's receive queue
 * before it reads it. */
static void linger_write_callback(struct bufferevent *bev, void *arg)
{
	if (shutdown(bufferevent_getfd(bev), SHUT_WR) < 0) {
		linger_free(arg);
		return;
	}
	bufferevent_setcb(bev, linger_read_callback, NULL, linger_event_callback, arg);
	bufferevent_enable(bev, EV_READ);
}

/* Takes over bev for its last moments: freed at the fixed deadline at the latest. NULL (bev
 * freed) when out of memory or events. */
static struct ctrl_linger *linger_new(struct server_ctx *srv, struct bufferevent *bev)
{
	struct timeval tmo = { LINGER_S, 0 };
	struct ctrl_linger *l = calloc(1, sizeof(*l));

	bufferevent_set_timeouts(bev, NULL, NULL);
	if (l == NULL) {
		bufferevent_free(bev);
		return NULL;
	}
	l->bev = bev;
	worker_obj_init(&l->obj, linger_obj_close);
	worker_obj_add_base(srv->workers, bufferevent_get_base(bev), &l->obj);
	l->deadline = evtimer_new(bufferevent_get_base(bev), linger_deadline_callback, l);
	if (l->deadline == NULL || evtimer_add(l->deadline, &tmo) < 0) {
		linger_free(l);
		return NULL;
	}
	return l;
}

/* Sends one message and closes (public-server discipline: one reply, then close). */
static void control_reply_and_close(struct server_ctx *srv, struct bufferevent *bev,
				    json_object *msg)
{
	struct evbuffer *in = bufferevent_get_input(bev);
	struct ctrl_linger *l;

	evbuffer_drain(in, evbuffer_get_length(in));
	bufferevent_disable(bev, EV_READ);
	l = linger_new(srv, bev);
	if (l == NULL) {
		json_object_put(msg);
		return;
	}
	bufferevent_setcb(bev, NULL, linger_write_callback, linger_event_callback, l);
	bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
	if (control_send(bev, msg) < 0 || bufferevent_enable(bev, EV_WRITE) < 0)
		linger_free(l);
}

/* Sends one error reply and closes. */
static void control_fail(struct server_ctx *srv, struct bufferevent *bev, const char *reason)
{
	json_object *msg = wire_ctrl_new("error");

	json_object_object_add(msg, "reason", json_object_new_string(reason));
	control_reply_and_close(srv, bev, msg);
}

static int control_next_message(struct bufferevent *bev, json_object **msg, char *err, size_t errlen)
{
	return frame_take(bufferevent_get_input(bev), msg, err, errlen);
}

/* Running sessions of the client at peer (one IPv4 address or IPv6 /64). Caller holds
 * srv->lock, as for control_earliest_end. */
static int control_client_sessions(const struct server_ctx *srv, const struct sockaddr *peer)
{
	int n = 0;

	for (const struct session *s = srv->sessions; s; s = s->next)
		n += sock_same_client((const struct sockaddr *)&s->peer, peer);
	return n;
}

/* Caller holds srv->lock. */
static struct session *control_find_locked(struct server_ctx *srv, const uint8_t *token)
{
	for (struct session *s = srv->sessions; s; s = s->next)
		if (memcmp(s->token, token, WIRE_TOKEN_LEN) == 0)
			return s;
	return NULL;
}

struct session *control_find_session(struct server_ctx *srv, const uint8_t *token)
{
	struct session *s;

	pthread_mutex_lock(&srv->lock);
	s = control_find_locked(srv, token);
	pthread_mutex_unlock(&srv->lock);
	return s;
}

int control_session_worker(struct server_ctx *srv, const uint8_t *token,
			   const struct sockaddr *peer)
{
	const struct session *s;
	int w = -1;

	pthread_mutex_lock(&srv->lock);
	s = control_find_locked(srv, token);
	if (s != NULL && (peer == NULL || sock_same_ip((const struct sockaddr *)&s->peer, peer)))
		w = s->worker;
	pthread_mutex_unlock(&srv->lock);
	return w;
}

int control_count(struct server_ctx *srv)
{
	int n;

	pthread_mutex_lock(&srv->lock);
	n = srv->nsessions;
	pthread_mutex_unlock(&srv->lock);
	return n;
}

/* The earliest expected end (start + requested duration) among the running sessions, or
 * only those of the client at peer (NULL: all); 0 when there are none. */
static int64_t control_earliest_end(const struct server_ctx *srv, const struct sockaddr *peer)
{
	int64_t first = 0;

	for (const struct session *s = srv->sessions; s; s = s->next)
		if ((peer == NULL || sock_same_client((const struct sockaddr *)&s->peer, peer)) &&
		    (first == 0 || s->end_ns < first))
			first = s->end_ns;
	return first;
}

/* Refuses a hello with busy and retry_after_s seconds (see limits_retry_after_s). */
static void control_busy(struct server_ctx *srv, struct bufferevent *bev, int retry_after_s)
{
	json_object *busy = wire_ctrl_new("busy");

	atomic_fetch_add(&srv->counters.sessions_refused, 1);
	json_object_object_add(busy, "retry_after_s", json_object_new_int(retry_after_s));
	control_reply_and_close(srv, bev, busy);
}

/* A summary posted by a worker thread, pushed on the main thread (which owns the ring). */
struct control_posted {
	struct server_ctx *srv;
	struct test_summary sum;
};

static void control_push_callback(evutil_socket_t fd, short what, void *arg)
{
	struct control_posted *p = arg;

	testring_push(p->srv->tests, &p->sum);
	free(p);
}

/* The ring of recent tests is the main thread's (the HTTP listener reads it there): a worker
 * thread posts the summary to the main loop instead of taking a lock on every request. */
static void control_push_test(struct server_ctx *srv, const struct test_summary *sum)
{
	struct control_posted *p;

	if (!srv->tests_remote) {
		testring_push(srv->tests, sum);
		return;
	}
	p = malloc(sizeof(*p));
	if (p == NULL)
		return; /* the test ran; only its summary is not kept */
	p->srv = srv;
	p->sum = *sum;
	if (event_base_once(srv->base, -1, EV_TIMEOUT, control_push_callback, p, NULL) < 0)
		free(p);
}

/* The ended test's summary into the ring of recent tests, taken before its flows and table
 * entry go (their counters are part of it), and its bytes into the daemon's totals. */
static void control_record_test(struct session *s)
{
	struct server_ctx *srv = s->srv;
	struct test_summary sum;

	atomic_fetch_add(&srv->counters.bytes_down_done, s->down_tx_bytes);
	atomic_fetch_add(&srv->counters.bytes_up_done, s->up_rx_bytes);
	if (s->live != NULL && srv->tests != NULL) {
		testlive_finish(s->live, s, session_table_probe_count(&srv->table, s->token),
				clock_mono_ns(), &sum);
		control_push_test(srv, &sum);
	}
	free(s->live);
	s->live = NULL;
}

static void session_free(struct session *s)
{
	struct server_ctx *srv = s->srv;
	struct session **pp = &srv->sessions;

	control_record_test(s);
	while (s->flows)
		bulk_close(s->flows);
	session_table_remove(&srv->table, s->token);
	pthread_mutex_lock(&srv->lock);
	while (*pp && *pp != s)
		pp = &(*pp)->next;
	if (*pp)
		*pp = s->next;
	srv->nsessions--;
	pthread_mutex_unlock(&srv->lock);
	worker_session_ended(srv->workers, s->worker);
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
	/* This runs on the session's worker, whose event loop drives all its bulk flows: that
	 * thread's CPU time tells the client whether the server, not the path, limited the load. */
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

/* A session is in use while it has flows, its probes arrive or its client writes on the
 * control connection (during a test the client only says bye: an idle phase has only probes).
 * Ends one unused for idle-timeout with an error; 1 if it did. */
static int session_idle_check(struct session *s, int64_t now)
{
	uint64_t probes = session_table_probe_count(&s->srv->table, s->token);
	json_object *msg;
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
	msg = wire_ctrl_new("error");
	json_object_object_add(msg, "reason", json_object_new_string("session idle for too long"));
	s->ctrl = NULL;
	control_reply_and_close(s->srv, bev, msg);
	session_free(s);
	return 1;
}

/* Every 100 ms: push stats (the client's upload throughput comes from these) and enforce the
 * session deadline, the idle-timeout and the upload read limit. */
static void session_tick_callback(evutil_socket_t fd, short what, void *arg)
{
	struct session *s = arg;
	int64_t now = clock_mono_ns();

	if (s->state != SESS_ACTIVE)
		return;
	if (now > s->deadline_ns) {
		log_info("session %llu reached its time limit", (unsigned long long)s->id);
		session_free(s);
		return;
	}
	bulk_limits_tick(s, now);
	if (session_idle_check(s, now))
		return;
	bulk_tune(s);
	if (s->live)
		testlive_tick(s->live, s, now);
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

/* Frees pc; its connection has moved on or been freed. */
static void pending_ctrl_free(struct pending_ctrl *pc)
{
	worker_obj_remove(&pc->obj);
	json_object_put(pc->hello);
	free(pc);
}

/* At shutdown: the connection goes too. */
static void pending_ctrl_close(struct worker_obj *o)
{
	struct pending_ctrl *pc = WORKER_OBJ_OF(o, struct pending_ctrl, obj);

	bufferevent_free(pc->bev);
	pending_ctrl_free(pc);
}

/* The hello fields the client's MAC covers, as the hello has them; a hello without valid ones
 * is refused by control_handle_hello after authentication, as without a psk-file. */
static void control_auth_hello(json_object *hello, struct auth_hello *h)
{
	const char *cc;
	int64_t d;

	h->cc = wire_get_str(hello, "cc", 15, &cc) == 0 ? cc : "";
	h->duration_s = wire_get_int(hello, "duration_s", 1, 86400, &d) == 0 ? d : 0;
}

/* One answer for every failed authentication (unknown id, wrong MAC, bad auth message), so
 * it tells nothing about which ids exist; counted, the detail only at debug level. */
static void control_auth_fail(struct pending_ctrl *pc, struct bufferevent *bev, const char *why)
{
	char addr[64];

	atomic_fetch_add(&pc->srv->counters.auth_failed, 1);
	sock_addr_str((struct sockaddr *)&pc->peer, addr, sizeof(addr));
	log_debug("control: authentication from %s failed: %s", addr, why);
	control_fail(pc->srv, bev, AUTH_FAILED_REASON);
	pending_ctrl_free(pc);
}

/* psk-file set: hello → challenge, auth → (verified) the held hello goes on to the welcome.
 * Returns 1 with *msg the hello to handle as usual (or, before any hello, the message that
 * came instead, for the usual refusal); 0 when this consumed *msg (pc kept or freed). */
static int control_auth(struct pending_ctrl *pc, struct bufferevent *bev, json_object **msg)
{
	struct auth_response r;
	struct auth_hello h;

	if (pc->hello == NULL) {
		if (strcmp(wire_ctrl_type(*msg), "hello") != 0)
			return 1;
		if (auth_nonce(pc->snonce) < 0) {
			json_object_put(*msg);
			control_fail(pc->srv, bev, "server cannot create a session now");
			pending_ctrl_free(pc);
			return 0;
		}
		pc->hello = *msg;
		*msg = NULL;
		if (control_send(bev, auth_challenge_new(pc->snonce)) < 0) {
			bufferevent_free(bev);
			pending_ctrl_free(pc);
		}
		return 0;
	}
	if (auth_response_parse(*msg, &r) < 0) {
		json_object_put(*msg);
		control_auth_fail(pc, bev, "no valid auth message");
		return 0;
	}
	json_object_put(*msg);
	control_auth_hello(pc->hello, &h);
	pc->key = auth_verify_response(pc->srv->psk, pc->snonce, &h, &r);
	if (pc->key == NULL) {
		control_auth_fail(pc, bev, auth_keys_find(pc->srv->psk, r.id) ? "wrong MAC"
									: "unknown key id");
		return 0;
	}
	log_debug("control: authenticated with key %s", pc->key->id);
	memcpy(pc->cnonce, r.cnonce, sizeof(pc->cnonce));
	*msg = pc->hello;
	pc->hello = NULL;
	return 1;
}

/* With a key: the welcome proves that the server holds it too; the client refuses a welcome
 * without this proof, so removing the challenge on the path gains nothing. */
static void control_auth_welcome(const struct pending_ctrl *pc, json_object *w, const char *token_hex)
{
	char mac[AUTH_MAC_HEX + 1];

	if (pc->key != NULL && auth_server_mac(pc->key, pc->snonce, pc->cnonce, token_hex, mac) == 0)
		json_object_object_add(w, "server_mac", json_object_new_string(mac));
}

/* Checks a hello's fields; 0, or -1 after an error reply. */
static int control_hello_fields(struct server_ctx *srv, struct bufferevent *bev, json_object *msg,
				const char **cc, int64_t *duration)
{
	if (wire_get_str(msg, "cc", 15, cc) < 0 ||
	    wire_get_int(msg, "duration_s", 1, 86400, duration) < 0) {
		atomic_fetch_add(&srv->counters.ctrl_bad, 1);
		control_fail(srv, bev, "hello needs cc (string) and duration_s (1..86400)");
		return -1;
	}
	for (const char *c = *cc; *c; c++) {
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_')) {
			atomic_fetch_add(&srv->counters.ctrl_bad, 1);
			control_fail(srv, bev, "invalid congestion control name");
			return -1;
		}
	}
	return 0;
}

/* Why a hello is refused, or ADMIT_OK. */
enum control_verdict {
	ADMIT_OK,
	ADMIT_DURATION,
	ADMIT_SHUTDOWN,
	ADMIT_BUSY,
	ADMIT_PER_CLIENT,
	ADMIT_ADMISSION,
};

/* The checks against every worker's sessions, under the lock so that two workers cannot
 * both take the last place: ADMIT_OK reserves it (nsessions counts it until
 * control_session_new links the session or gives the place back). *first: the earliest end
 * among the sessions in the way, for the busy reply. */
static enum control_verdict control_verdict(struct server_ctx *srv, const struct sockaddr *peer,
					    int64_t duration, int64_t *first)
{
	const struct server_config *cfg = srv->cfg;
	enum control_verdict v = ADMIT_OK;

	if (duration > cfg->max_duration_s)
		return ADMIT_DURATION;
	/* A connection accepted just before SIGTERM may still say hello during the drain. */
	if (atomic_load(&srv->shutting_down))
		return ADMIT_SHUTDOWN;
	pthread_mutex_lock(&srv->lock);
	if (srv->nsessions >= cfg->max_sessions) {
		v = ADMIT_BUSY;
		*first = control_earliest_end(srv, NULL);
	} else if (control_client_sessions(srv, peer) >= cfg->max_sessions_per_client) {
		v = ADMIT_PER_CLIENT;
		*first = control_earliest_end(srv, peer);
	} else if (limits_admission_busy(srv->admission)) {
		v = ADMIT_ADMISSION;
		*first = control_earliest_end(srv, NULL);
	} else {
		srv->nsessions++;
	}
	pthread_mutex_unlock(&srv->lock);
	return v;
}

/* Gives back a place control_verdict reserved for a session that was not created. */
static void control_unreserve(struct server_ctx *srv)
{
	pthread_mutex_lock(&srv->lock);
	srv->nsessions--;
	pthread_mutex_unlock(&srv->lock);
}

/* The limits a new session must pass; 0 (a place reserved), or -1 after an error or busy reply
 * (counted by reason). A busy client learns when the first session in its way ends. */
static int control_admit(struct server_ctx *srv, struct bufferevent *bev,
			 const struct sockaddr *peer, int64_t duration)
{
	const struct server_config *cfg = srv->cfg;
	int64_t now = clock_mono_ns(), first = 0;

	switch (control_verdict(srv, peer, duration, &first)) {
	case ADMIT_OK:
		return 0;
	case ADMIT_DURATION:
		atomic_fetch_add(&srv->counters.sessions_refused, 1);
		atomic_fetch_add(&srv->counters.sessions_refused_duration, 1);
		control_fail(srv, bev, "requested duration exceeds this server's limit");
		break;
	case ADMIT_SHUTDOWN:
		atomic_fetch_add(&srv->counters.sessions_refused, 1);
		atomic_fetch_add(&srv->counters.sessions_refused_shutdown, 1);
		control_fail(srv, bev, "server shutting down");
		break;
	case ADMIT_BUSY:
		atomic_fetch_add(&srv->counters.sessions_refused_busy, 1);
		control_busy(srv, bev, limits_retry_after_s(first, now, 1, cfg->max_duration_s));
		break;
	case ADMIT_PER_CLIENT:
		atomic_fetch_add(&srv->counters.sessions_refused_per_client, 1);
		control_busy(srv, bev, limits_retry_after_s(first, now, 1, cfg->max_duration_s));
		break;
	case ADMIT_ADMISSION:
		atomic_fetch_add(&srv->counters.sessions_refused_admission, 1);
		control_busy(srv, bev, limits_retry_after_s(first, now, LIMITS_ADMISSION_RETRY_MIN_S,
							    LIMITS_ADMISSION_RETRY_MAX_S));
		break;
	}
	return -1;
}

#define CC_USED_LEN 16 /* a congestion control name and its NUL */
#define CC_WHY_LEN 128

/* Links s into the server's list in the place control_admit reserved, checking the
 * per-client limit again: two hellos of one client on two workers may both have passed
 * control_admit, but sessions are linked one at a time. 0, or -1 with *busy_until the
 * earliest end among the client's sessions. */
static int control_link(struct server_ctx *srv, struct session *s, int64_t *busy_until)
{
	int rc = 0;

	pthread_mutex_lock(&srv->lock);
	if (control_client_sessions(srv, (const struct sockaddr *)&s->peer) >=
	    srv->cfg->max_sessions_per_client) {
		*busy_until = control_earliest_end(srv, (const struct sockaddr *)&s->peer);
		rc = -1;
	} else {
		s->id = ++srv->next_session_id;
		s->next = srv->sessions;
		srv->sessions = s; /* nsessions counts it since control_admit */
	}
	pthread_mutex_unlock(&srv->lock);
	return rc;
}

/* A new session for peer, run by worker, with its token registered for the reflector,
 * linked into the server's list (control_link); NULL when out of memory or table space, or
 * over the per-client limit after all (*busy_until set, else left 0); the place is then
 * given back. used/why: what control_probe_cc said about cc. */
static struct session *control_session_new(struct server_ctx *srv, int worker,
					   struct bufferevent *bev,
					   const struct sockaddr_storage *peer, const char *cc,
					   int64_t duration, char *used, char *why,
					   int64_t *busy_until)
{
	const struct server_config *cfg = srv->cfg;
	struct session *s = calloc(1, sizeof(*s));

	if (s == NULL || util_random(s->token, sizeof(s->token)) < 0 ||
	    session_table_add(&srv->table, s->token, (const struct sockaddr *)peer) < 0) {
		free(s);
		control_unreserve(srv);
		return NULL;
	}
	s->srv = srv;
	s->worker = worker;
	s->base = bufferevent_get_base(bev);
	s->state = SESS_ACTIVE;
	s->peer = *peer;
	sock_addr_str((struct sockaddr *)&s->peer, s->peer_str, sizeof(s->peer_str));
	snprintf(s->cc, sizeof(s->cc), "%s", cc);
	s->cc_ok = control_probe_cc(cc, used, CC_USED_LEN, why, CC_WHY_LEN);
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
	if (control_link(srv, s, busy_until) < 0) {
		session_table_remove(&srv->table, s->token);
		free(s->live);
		free(s);
		control_unreserve(srv);
		return NULL;
	}
	atomic_fetch_add(&srv->counters.sessions_total, 1);
	worker_session_started(srv->workers, worker);
	return s;
}

/* The welcome message of session s (docs/protocol.md). */
static json_object *control_welcome(const struct session *s, const struct pending_ctrl *pc,
				    const char *used, const char *why)
{
	const struct server_config *cfg = s->srv->cfg;
	json_object *w = wire_ctrl_new("welcome");
	char hex[2 * WIRE_TOKEN_LEN + 1];

	wire_token_to_hex(s->token, hex);
	json_object_object_add(w, "session", json_object_new_int64((int64_t)s->id));
	json_object_object_add(w, "token", json_object_new_string(hex));
	json_object_object_add(w, "udp_port", json_object_new_int(cfg->port));
	json_object_object_add(w, "server_version", json_object_new_string(BM_VERSION));
	json_object_object_add(w, "cc", json_object_new_string(s->cc));
	json_object_object_add(w, "cc_ok", json_object_new_boolean(s->cc_ok));
	json_object_object_add(w, "cc_used", json_object_new_string(s->cc_ok ? s->cc : used));
	if (!s->cc_ok)
		json_object_object_add(w, "cc_error", json_object_new_string(why));
	json_object_object_add(w, "max_flows", json_object_new_int(cfg->max_flows));
	json_object_object_add(w, "max_rate_bps", json_object_new_int64((int64_t)s->max_rate_bps));
	json_object_object_add(w, "udp_timestamps",
			       json_object_new_string(s->srv->udp_ts_kernel ? "kernel" : "user"));
	json_object_object_add(w, "dns_port", json_object_new_int(cfg->dns_port));
	json_object_object_add(w, "dns_zone",
			       json_object_new_string(cfg->dns_zone ? cfg->dns_zone : DNS_DEFAULT_ZONE));
	control_auth_welcome(pc, w, hex);
	/* This server accepts the client's `summary` message (older ones close on it). */
	json_object_object_add(w, "summary", json_object_new_boolean(1));
	/* The hello asked for a TLS load and this server will carry it (older ones ignore the
	 * request: the client checks for this). */
	if (s->tls_load)
		json_object_object_add(w, "tls_load", json_object_new_boolean(1));
	return w;
}

/* The hello's optional tls_load (docs/protocol.md, "TLS load"): the session's data
 * connections must then run TLS. 0, or -1 after an error reply when this server has no
 * certificate to offer them. */
static int control_hello_tls_load(struct server_ctx *srv, struct bufferevent *bev, json_object *msg,
				  int *tls_load)
{
	if (wire_get_bool(msg, "tls_load", tls_load) < 0)
		*tls_load = 0;
	if (*tls_load && srv->tls == NULL) {
		atomic_fetch_add(&srv->counters.ctrl_bad, 1);
		control_fail(srv, bev, "this server has no TLS certificate for a TLS load (tls-cert)");
		return -1;
	}
	return 0;
}

/* Validates a hello and turns the pending connection into a session. */
static void control_handle_hello(struct pending_ctrl *pc, struct bufferevent *bev, json_object *msg)
{
	struct server_ctx *srv = pc->srv;
	struct timeval tick = { 0, STATS_INTERVAL_MS * 1000 };
	char used[CC_USED_LEN] = "", why[CC_WHY_LEN] = "";
	const char *cc;
	int64_t duration, busy_until = 0;
	struct session *s;
	int tls_load;

	/* pc stays owned by the caller; the session copies what it needs. */
	if (control_hello_fields(srv, bev, msg, &cc, &duration) < 0 ||
	    control_hello_tls_load(srv, bev, msg, &tls_load) < 0 ||
	    control_admit(srv, bev, (struct sockaddr *)&pc->peer, duration) < 0)
		return;
	s = control_session_new(srv, pc->worker, bev, &pc->peer, cc, duration, used, why,
				&busy_until);
	if (s == NULL && busy_until != 0) {
		atomic_fetch_add(&srv->counters.sessions_refused_per_client, 1);
		control_busy(srv, bev, limits_retry_after_s(busy_until, clock_mono_ns(), 1,
							    srv->cfg->max_duration_s));
		return;
	}
	if (s == NULL) {
		control_fail(srv, bev, "server cannot create a session now");
		return;
	}
	s->tls_load = tls_load;
	bufferevent_setcb(bev, session_read_callback, NULL, session_event_callback, s);
	bufferevent_set_timeouts(bev, NULL, NULL);
	s->tick = event_new(s->base, -1, EV_PERSIST, session_tick_callback, s);
	if (s->tick == NULL || event_add(s->tick, &tick) < 0 ||
	    control_send(bev, control_welcome(s, pc, used, why)) < 0) {
		session_free(s);
		return;
	}
	log_info("session %llu from %s: cc %s%s", (unsigned long long)s->id, s->peer_str, s->cc,
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
	if (rc > 0 && pc->srv->psk != NULL && control_auth(pc, bev, &msg) == 0)
		return;
	if (rc < 0 || strcmp(wire_ctrl_type(msg), "hello") != 0) {
		atomic_fetch_add(&pc->srv->counters.ctrl_bad, 1);
		log_debug("control: %s", rc < 0 ? err : "expected hello");
		control_fail(pc->srv, bev, rc < 0 ? err : "expected hello");
		pending_ctrl_free(pc);
		json_object_put(msg);
		return;
	}
	control_handle_hello(pc, bev, msg);
	pending_ctrl_free(pc);
	json_object_put(msg);
}

static void control_event_callback(struct bufferevent *bev, short what, void *arg)
{
	struct pending_ctrl *pc = arg;

	if (what & BEV_EVENT_TIMEOUT)
		atomic_fetch_add(&pc->srv->counters.ctrl_timeout, 1);
	bufferevent_free(bev);
	pending_ctrl_free(pc);
}

/* The client's own summary of its test (docs/protocol.md): kept, marked as client-reported,
 * when it is valid and the first one; otherwise counted as bad and ignored, never a reason to
 * end the test. */
static void control_take_summary(struct session *s, json_object *msg)
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

static void session_read_callback(struct bufferevent *bev, void *arg)
{
	struct session *s = arg;

	while (s->state == SESS_ACTIVE) {
		json_object *msg = NULL;
		char err[160];
		int rc = control_next_message(bev, &msg, err, sizeof(err));

		if (rc == 0)
			return;
		s->active_ns = clock_mono_ns();
		if (rc > 0 && strcmp(wire_ctrl_type(msg), "summary") == 0) {
			control_take_summary(s, msg);
			json_object_put(msg);
			continue;
		}
		if (rc < 0 || strcmp(wire_ctrl_type(msg), "bye") != 0) {
			atomic_fetch_add(&s->srv->counters.ctrl_bad, 1);
			log_debug("session %llu: %s", (unsigned long long)s->id,
				  rc < 0 ? err : "unexpected message");
			json_object_put(msg);
			s->ctrl = NULL;
			control_fail(s->srv, bev, rc < 0 ? err : "unexpected message");
			session_free(s);
			return;
		}
		json_object_put(msg);
		/* bye: the final stats carry the totals the client needs; close once flushed. */
		s->state = SESS_CLOSING;
		while (s->flows)
			bulk_close(s->flows);
		/* Callbacks first: a TLS bufferevent writes (and reports it) inside the send. */
		bufferevent_disable(bev, EV_READ);
		bufferevent_setcb(bev, NULL, session_write_done_callback, session_event_callback, s);
		bufferevent_setwatermark(bev, EV_WRITE, 0, 0);
		(void)control_send(bev, session_stats(s, 1));
		return;
	}
}

/* The final stats are in the kernel (over TLS too: the SSL writes to the socket itself). */
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

void control_start(struct server_ctx *srv, int worker, struct bufferevent *bev,
		   const struct sockaddr *peer)
{
	struct pending_ctrl *pc = calloc(1, sizeof(*pc));

	if (pc == NULL) {
		bufferevent_free(bev);
		return;
	}
	pc->srv = srv;
	pc->worker = worker;
	pc->bev = bev;
	worker_obj_init(&pc->obj, pending_ctrl_close);
	memcpy(&pc->peer, peer, peer->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
							     : sizeof(struct sockaddr_in));
	/* tls-required: a plain control connection gets one error it can read, then a close. */
	if (srv->cfg->tls_required && bufferevent_openssl_get_ssl(bev) == NULL) {
		atomic_fetch_add(&srv->counters.ctrl_bad, 1);
		log_debug("control: plain connection refused (tls-required)");
		control_fail(srv, bev, "this server accepts control connections only over TLS "
				  "(bloatmeter --tls)");
		pending_ctrl_free(pc);
		return;
	}
	worker_obj_add(srv->workers, worker, &pc->obj);
	bufferevent_setcb(bev, control_read_callback, NULL, control_event_callback, pc);
	control_read_callback(bev, pc);
}

/* Tells every running session's client that the server is going away: one `error` message,
 * which the protocol says the server closes after. The session stops pushing stats and
 * accepting flows (SESS_CLOSING) and ends when the client closes, or at the drain deadline.
 * The lock is recursive (server.c): a TLS send that fails at once frees its session inside. */
void control_shutdown_all(struct server_ctx *srv, int worker)
{
	struct session *s, *next;

	pthread_mutex_lock(&srv->lock);
	for (s = srv->sessions; s; s = next) {
		json_object *msg;

		next = s->next;
		if (s->worker != worker || s->state != SESS_ACTIVE || s->ctrl == NULL)
			continue; /* another thread's, or already flushing its final stats */
		s->state = SESS_CLOSING;
		msg = wire_ctrl_new("error");
		json_object_object_add(msg, "reason",
				       json_object_new_string("server shutting down"));
		if (control_send(s->ctrl, msg) < 0)
			log_debug("session %llu: cannot queue the shutdown notice",
				  (unsigned long long)s->id);
	}
	pthread_mutex_unlock(&srv->lock);
}

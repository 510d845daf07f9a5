/* server: binds the TCP, UDP, DNS and HTTP sockets, drops privileges, runs the main event
 * loop (new connections: server/accept.c; HTTP) and the worker (server/worker.c), reflector
 * and DNS responder threads, and handles the signals: SIGHUP reloads the run-time limits,
 * SIGINT and SIGTERM stop accepting and end the sessions. */
#include "server/server.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/thread.h>

#include "common/auth.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/sock.h"
#include "common/tls.h"
#include "server/accept.h"
#include "server/bulk.h"
#include "server/ctx.h"
#include "server/dns.h"
#include "server/http.h"
#include "server/weblisten.h"
#include "server/privdrop.h"
#include "server/reflector.h"
#include "server/resultslog.h"
#include "server/sessionlife.h"
#include "server/sessionlist.h"
#include "server/srvconfig.h"
#include "server/testring.h"
#include "server/worker.h"

/* A configuration replaced by a reload: workers may still read it, so it lives until exit. */
struct cfg_version {
	struct cfg_version *older;
	struct server_config cfg;
};

/* What the signal callbacks need besides the shared context: the configuration (srv.cfg
 * points at cfg, then at the newest of versions; only this file changes it, on the main
 * thread) and the listener. */
struct server_state {
	struct server_ctx srv;
	struct server_config cfg;
	struct cfg_version *versions;
	int tcp_fd;
	struct event *accept_ev;
	struct event *drain;   /* on SIGTERM: polls until the sessions are gone or time is up */
	int64_t drain_end_ns;
	/* What server_run sets up, for server_teardown: each empty (-1, NULL, 0) until then. */
	int lock_ok;           /* srv.lock initialised */
	int table_ok;          /* srv.table allocated */
	struct privdrop pd;    /* who to run as, settled before binding */
	int udp_fd;            /* until the reflector takes it over */
	int dns_fd;            /* until the DNS responder takes it over; -1 without one */
	struct reflector *refl;
	struct dns_responder *dns;
	struct http_server *http;
	struct weblisten *web;
	struct resultslog results_log; /* fd -1 until opened */
	struct event *sig[3];
};

static int same_str(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Logs the changed settings that only a restart applies (the sockets, the DNS responder's
 * zone and the log level are set up once). */
static void server_reload_restart_needed(const struct server_config *cur,
					 const struct server_config *next)
{
	char list[192] = "";
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
		{ strcmp(cur->user, next->user) != 0, "user" },
		{ cur->allow_root != next->allow_root, "allow-root" },
		{ strcmp(cur->admission_if, next->admission_if) != 0, "admission-interface" },
		{ cur->http_port != next->http_port, "http-port" },
		{ strcmp(cur->http_bind, next->http_bind) != 0, "http-bind" },
		{ strcmp(cur->psk_file, next->psk_file) != 0, "psk-file" },
		{ strcmp(cur->tls_cert, next->tls_cert) != 0 ||
			  strcmp(cur->tls_key, next->tls_key) != 0 ||
			  cur->tls_required != next->tls_required, "tls-cert/tls-key/tls-required" },
		{ cur->workers != next->workers, "workers" },
		{ cur->reflector_priority != next->reflector_priority, "reflector-priority" },
		{ cur->web_port != next->web_port || strcmp(cur->web_bind, next->web_bind) != 0 ||
			  cur->web_tls != next->web_tls, "web-port/web-bind/web-tls" },
	};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (keys[i].changed && n < sizeof(list))
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", n ? ", " : "",
					      keys[i].name);
	if (n > 0)
		log_warnx("reload: %s changed; not applied, that needs a restart", list);
}

/* The limits a reload applies (cur: the new version, published): max-rate to sessions that
 * start from now on (a running one keeps the rate its welcome announced), the rest at once. */
static void server_reload_limits(struct server_state *st, const struct server_config *cur)
{
	char rate[32], adm[32];

	session_table_set_probe_rate(&st->srv.table, cur->max_probe_rate);
	limits_admission_set_max(st->srv.admission, cur->admission_max_rate_bps);
	limits_format_rate(cur->max_rate_bps, rate, sizeof(rate));
	limits_format_rate(cur->admission_max_rate_bps, adm, sizeof(adm));
	log_info("limits reloaded: max-rate %s, max-probe-rate %d/s, handshake-timeout %d s, "
		 "idle-timeout %d s, admission-max-rate %s", rate, cur->max_probe_rate,
		 cur->handshake_timeout_s, cur->idle_timeout_s, adm);
}

/* Admission control from the configuration: off without admission-interface; an interface
 * whose counter cannot be read stops the start-up. 0 or -1 after one sentence. */
static int server_start_admission(struct server_ctx *srv, const struct server_config *cfg)
{
	char err[160];

	if (cfg->admission_if[0] == '\0') {
		if (cfg->admission_max_rate_bps > 0)
			log_warnx("admission-max-rate without admission-interface: admission control is off");
		return 0;
	}
	srv->admission = limits_admission_start(srv->base, cfg->admission_if,
						cfg->admission_max_rate_bps, err, sizeof(err));
	if (srv->admission == NULL) {
		log_error("%s", err);
		return -1;
	}
	if (cfg->admission_max_rate_bps == 0)
		log_warnx("admission-interface %s without admission-max-rate: nothing is refused "
			  "until a reload sets one", cfg->admission_if);
	return 0;
}

/* SIGHUP, whatever else it does: the results-log is opened again (logrotate has moved it
 * away) at path, the configuration's value now, so a changed path applies too. Turning it on
 * or off needs a restart: the first open is made before the privilege drop. */
static void server_reload_results_log(struct server_state *st, const char *path)
{
	if (st->results_log.fd < 0) {
		if (path[0] != '\0')
			log_warnx("reload: results-log set; not applied, that needs a restart");
		return;
	}
	if (path[0] == '\0') {
		log_warnx("reload: results-log removed; not applied, that needs a restart");
		path = st->results_log.path;
	}
	resultslog_reopen(&st->results_log, path);
}

/* SIGHUP: builds the configuration again (file, then the same command-line overrides) and
 * applies what the server checks when a session or flow arrives. No running session is
 * dropped, even over a lowered max-sessions; a bad file changes nothing. */
static void server_reload(struct server_state *st)
{
	const struct server_config *cur = st->srv.cfg;
	struct server_config next;
	struct cfg_version *v;
	char err[SRVCONFIG_ERR_MAX];

	if (srvconfig_build(cur->config_path, cur->config_optional, cur->overrides, &next, err,
			    sizeof(err)) < 0) {
		log_error("reload failed, keeping the running configuration: %s", err);
		server_reload_results_log(st, cur->results_log);
		return;
	}
	server_reload_results_log(st, next.results_log);
	if (next.max_sessions > st->srv.table.cap &&
	    session_table_grow(&st->srv.table, next.max_sessions) < 0) {
		log_error("reload failed, keeping the running configuration: "
			  "no memory for %d sessions", next.max_sessions);
		return;
	}
	v = malloc(sizeof(*v));
	if (v == NULL) {
		log_error("reload failed, keeping the running configuration: out of memory");
		return;
	}
	server_reload_restart_needed(cur, &next);
	/* A new version, not an update in place: workers read the configuration without a lock,
	 * so they see the old version or the new one, never a mix. */
	srvconfig_copy(&v->cfg, cur);
	v->cfg.max_sessions = next.max_sessions;
	v->cfg.max_flows = next.max_flows;
	v->cfg.max_duration_s = next.max_duration_s;
	v->cfg.max_sessions_per_client = next.max_sessions_per_client;
	v->cfg.max_rate_bps = next.max_rate_bps;
	v->cfg.max_probe_rate = next.max_probe_rate;
	v->cfg.handshake_timeout_s = next.handshake_timeout_s;
	v->cfg.idle_timeout_s = next.idle_timeout_s;
	v->cfg.admission_max_rate_bps = next.admission_max_rate_bps;
	snprintf(v->cfg.results_log, sizeof(v->cfg.results_log), "%s", st->results_log.path);
	v->older = st->versions;
	st->versions = v;
	st->srv.cfg = &v->cfg;
	cur = &v->cfg;
	server_reload_limits(st, cur);
	log_info("configuration reloaded from %s: max-sessions %d, max-flows %d, max-duration %d s, "
		 "max-sessions-per-client %d", next.config_loaded ? next.config_path : "defaults",
		 cur->max_sessions, cur->max_flows, cur->max_duration_s, cur->max_sessions_per_client);
}

static void server_drain_callback(evutil_socket_t fd, short what, void *arg)
{
	struct server_state *st = arg;

	if (sessionlist_count(&st->srv) == 0 || clock_mono_ns() >= st->drain_end_ns)
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
	log_info("signal %d: stopping, %d session(s) running", sig, sessionlist_count(&st->srv));
	atomic_store(&st->srv.shutting_down, 1); /* /healthz answers 503 from now on */
	event_del(st->accept_ev);
	/* Closing the listener now refuses new connections instead of leaving them queued. */
	close(st->tcp_fd);
	st->tcp_fd = -1;
	worker_pool_shutdown(st->srv.workers); /* each worker tells its own sessions */
	st->drain_end_ns = clock_mono_ns() + (int64_t)SERVER_DRAIN_S * NS_PER_SEC;
	st->drain = event_new(st->srv.base, -1, EV_PERSIST, server_drain_callback, st);
	if (sessionlist_count(&st->srv) == 0 || st->drain == NULL || event_add(st->drain, &tick) < 0)
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

/* The reflector socket's receive buffer (REFLECTOR_RCVBUF), set here while still privileged;
 * what it got is logged, as a smaller one loses probes at many sessions. */
static void server_reflector_rcvbuf(int fd)
{
	int got = sock_set_rcvbuf(fd, REFLECTOR_RCVBUF);

	if (got < 0)
		log_warn("reflector receive buffer");
	else if (got < 2 * REFLECTOR_RCVBUF) /* the kernel reports twice what it grants */
		log_info("reflector receive buffer %d KiB (asked for %d KiB: net.core.rmem_max "
			 "caps it)", got / 2048, REFLECTOR_RCVBUF / 1024);
	else
		log_debug("reflector receive buffer %d KiB", got / 2048);
}

/* Opens the listening and UDP sockets (the DNS one only when its port is set); 0, or -1
 * after logging one clear sentence, with what was opened left for server_teardown. */
static int server_open(struct server_state *st)
{
	const struct server_config *cfg = st->srv.cfg;
	char err[256];

	st->tcp_fd = sock_listen_tcp(cfg->bind_addr, cfg->port, err, sizeof(err));
	if (st->tcp_fd < 0) {
		log_error("%s", err);
		return -1;
	}
	st->udp_fd = sock_bind_udp(cfg->bind_addr, cfg->port, err, sizeof(err));
	if (st->udp_fd < 0) {
		log_error("%s", err);
		return -1;
	}
	server_reflector_rcvbuf(st->udp_fd);
	if (cfg->dns_port != 0 &&
	    (st->dns_fd = sock_bind_udp(cfg->bind_addr, cfg->dns_port, err, sizeof(err))) < 0) {
		log_error("%s (DNS responder; --dns-port 0 turns it off)", err);
		return -1;
	}
	return 0;
}

/* The remote faults counted while running (DNS logs its own): at info level, once, so an
 * operator and the hostile-input test can see what bad input arrived. */
static void server_log_counters(struct server_counters *c)
{
	log_info("counters: sessions %llu, refused %llu; control bad %llu, timed out %llu; data bad %llu; "
		 "connect probes %llu, bad %llu, limited %llu; UDP reflected %llu, bad %llu, unknown %llu; "
		 "connections over the pending cap %llu, lingering closes cut short %llu",
		 (unsigned long long)atomic_load(&c->sessions_total),
		 (unsigned long long)atomic_load(&c->sessions_refused),
		 (unsigned long long)atomic_load(&c->ctrl_bad),
		 (unsigned long long)atomic_load(&c->ctrl_timeout),
		 (unsigned long long)atomic_load(&c->data_bad),
		 (unsigned long long)atomic_load(&c->conn_probes),
		 (unsigned long long)atomic_load(&c->conn_probe_bad),
		 (unsigned long long)atomic_load(&c->conn_probe_limited),
		 (unsigned long long)atomic_load(&c->udp_reflected),
		 (unsigned long long)atomic_load(&c->udp_bad),
		 (unsigned long long)atomic_load(&c->udp_unknown),
		 (unsigned long long)atomic_load(&c->conn_pending_refused),
		 (unsigned long long)atomic_load(&c->linger_dropped));
	log_info("limit counters: UDP over max-probe-rate %llu; refused by admission control %llu; "
		 "idle-timeout: data connections %llu, sessions %llu",
		 (unsigned long long)atomic_load(&c->udp_ratelimited),
		 (unsigned long long)atomic_load(&c->sessions_refused_admission),
		 (unsigned long long)atomic_load(&c->flows_idle),
		 (unsigned long long)atomic_load(&c->sessions_idle));
}

/* The lock of the shared session and pending lists is recursive: a TLS send under it may fail
 * at once and free its session, which takes it again (sessionlife_shutdown_all). */
static int server_lock_init(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;
	int rc;

	if (pthread_mutexattr_init(&a) != 0)
		return -1;
	rc = pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE) == 0 &&
	     pthread_mutex_init(m, &a) == 0 ? 0 : -1;
	pthread_mutexattr_destroy(&a);
	return rc;
}

/* The stages the workers run: the accept stage's hand-over and the sessions' shutdown. */
static const struct worker_ops server_worker_ops = {
	.run = accept_job_run,
	.drop = accept_job_drop,
	.shutdown = sessionlife_shutdown_all,
};

/* Starts the workers (once no more sockets are bound and privileges are gone: they are
 * threads) and says how many; 0 or -1 after logging. */
static int server_start_workers(struct server_ctx *srv, const struct server_config *cfg)
{
	int n = cfg->workers > 0 ? cfg->workers : worker_auto_count();

	srv->workers = worker_pool_start(srv, srv->base, n, &server_worker_ops);
	if (srv->workers == NULL)
		return -1;
	srv->tests_remote = worker_pool_threaded(srv->workers);
	log_info("%d worker%s: %s", n, n == 1 ? "" : "s",
		 n == 1 ? "sessions run on the main thread" : "one thread each with its own event loop");
	return 0;
}

/* Stops the workers and ends what they ran, on this thread: the summaries they posted go to
 * the ring first (one pass of the main loop), then the sessions close. */
static void server_stop_workers(struct server_ctx *srv)
{
	worker_pool_stop(srv->workers);
	if (srv->tests_remote)
		(void)event_base_loop(srv->base, EVLOOP_NONBLOCK);
	srv->tests_remote = 0;
	sessionlife_close_all(srv);
	accept_close_main(srv);
	worker_pool_free(srv->workers);
	srv->workers = NULL;
}

static void server_security_free(struct auth_keys *psk, SSL_CTX *tls)
{
	if (psk != NULL) {
		auth_keys_free(psk);
		free(psk);
	}
	SSL_CTX_free(tls);
}

/* Loads what psk-file and tls-cert/tls-key name: the keys and an SSL_CTX, each NULL when not
 * configured. 0, or -1 with one sentence in err. */
static int server_security_load(const struct server_config *cfg, struct auth_keys **psk,
				SSL_CTX **tls, char *err, size_t errlen)
{
	*psk = NULL;
	*tls = NULL;
	if ((cfg->tls_cert[0] != '\0') != (cfg->tls_key[0] != '\0')) {
		snprintf(err, errlen, "tls-cert and tls-key go together: set both or neither");
		return -1;
	}
	if (cfg->tls_required && cfg->tls_cert[0] == '\0') {
		snprintf(err, errlen, "tls-required = yes needs tls-cert and tls-key");
		return -1;
	}
	if (cfg->psk_file[0] != '\0') {
		*psk = calloc(1, sizeof(**psk));
		if (*psk == NULL) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		if (auth_load_keys(cfg->psk_file, AUTH_MAX_KEYS, *psk, err, errlen) < 0) {
			free(*psk);
			*psk = NULL;
			return -1;
		}
	}
	if (cfg->tls_cert[0] != '\0' &&
	    (*tls = tls_server_ctx(cfg->tls_cert, cfg->tls_key, err, errlen)) == NULL) {
		server_security_free(*psk, NULL);
		*psk = NULL;
		return -1;
	}
	/* Handshakes run on the raw socket (server/accept.c): where the kernel has TLS, the
	 * bulk flows' records are then sealed and opened there. */
	if (*tls != NULL)
		tls_ctx_try_ktls(*tls);
	return 0;
}

int server_check_security(const struct server_config *cfg, char *err, size_t errlen)
{
	struct auth_keys *psk;
	SSL_CTX *tls;

	if (server_security_load(cfg, &psk, &tls, err, errlen) < 0)
		return -1;
	server_security_free(psk, tls);
	return 0;
}

/* Says what protects the control channel, and how often that refused someone. */
static void server_log_security(const struct server_ctx *srv, int stopped)
{
	const struct server_config *cfg = srv->cfg;

	if (stopped && (srv->psk != NULL || srv->tls != NULL))
		log_info("security counters: authentication failed %llu, TLS handshakes failed %llu",
			 (unsigned long long)atomic_load(&srv->counters.auth_failed),
			 (unsigned long long)atomic_load(&srv->counters.tls_failed));
	if (stopped && srv->tls != NULL)
		log_info("TLS load flows %llu (kernel TLS: send %llu, receive %llu)",
			 (unsigned long long)atomic_load(&srv->counters.tls_flows),
			 (unsigned long long)atomic_load(&srv->counters.tls_flows_ktls_send),
			 (unsigned long long)atomic_load(&srv->counters.tls_flows_ktls_recv));
	if (stopped)
		return;
	if (srv->psk != NULL)
		log_info("pre-shared keys: %zu from %s; every session must authenticate",
			 srv->psk->n, cfg->psk_file);
	if (srv->tls != NULL)
		log_info("TLS control connections with %s (%s)", cfg->tls_cert,
			 cfg->tls_required ? "required" : "plain ones accepted too");
}

/* The state with its own copy of cfg (on the heap: it holds the configuration's string
 * storage, over 1 KiB), nothing set up yet. NULL when out of memory. */
static struct server_state *server_state_new(const struct server_config *cfg)
{
	struct server_state *st = calloc(1, sizeof(*st));

	if (st == NULL)
		return NULL;
	srvconfig_copy(&st->cfg, cfg);
	st->srv.cfg = &st->cfg;
	st->tcp_fd = -1;
	st->udp_fd = -1;
	st->dns_fd = -1;
	st->results_log.fd = -1;
	st->srv.start_ns = clock_mono_ns();
	return st;
}

/* Before anything is bound: libevent's threads, the lock, the token table, who to run as
 * (a refusal binds nothing) and the key files (read before privileges go: they are usually
 * root's, mode 0600 or 0640). 0, or -1 after logging. */
static int server_prepare(struct server_state *st)
{
	struct server_ctx *srv = &st->srv;
	const struct server_config *cfg = srv->cfg;
	char err[SRVCONFIG_ERR_MAX];

	signal(SIGPIPE, SIG_IGN);
	if (evthread_use_pthreads() < 0 || server_lock_init(&srv->lock) < 0) {
		log_error("cannot initialise the server");
		return -1;
	}
	st->lock_ok = 1;
	if (session_table_init(&srv->table, cfg->max_sessions) < 0) {
		log_error("cannot initialise the server");
		return -1;
	}
	st->table_ok = 1;
	session_table_set_probe_rate(&srv->table, cfg->max_probe_rate);
	if (privdrop_prepare(cfg->user, cfg->allow_root, &st->pd, err, sizeof(err)) < 0 ||
	    server_security_load(cfg, &srv->psk, &srv->tls, err, sizeof(err)) < 0) {
		log_error("%s", err);
		return -1;
	}
	return 0;
}

/* results-log, when set: opened as the user that started the daemon (usually root, so
 * /var/log is writable) and, if it switches, given to the user it switches to, so that it
 * can reopen the file on SIGHUP. 0, or -1 after logging. */
static int server_open_results_log(struct server_state *st)
{
	const char *path = st->srv.cfg->results_log;
	char err[SRVCONFIG_ERR_MAX];

	if (path[0] == '\0')
		return 0;
	if (resultslog_open(&st->results_log, path, err, sizeof(err)) < 0 ||
	    (st->pd.action == PRIVDROP_SWITCH &&
	     resultslog_chown(&st->results_log, st->pd.uid, st->pd.gid, err, sizeof(err)) < 0)) {
		log_error("%s", err);
		return -1;
	}
	st->srv.results_log = &st->results_log;
	log_info("results-log %s: one JSON line per finished test", path);
	return 0;
}

/* What must exist before the privilege drop: the sockets, the ring of recent tests, the
 * event loop, admission control and the HTTP listener (which binds its own port). 0, or -1
 * after logging. */
static int server_bind(struct server_state *st)
{
	struct server_ctx *srv = &st->srv;

	if (server_open(st) < 0 || server_open_results_log(st) < 0)
		return -1;
	/* Recent tests for the HTTP API and /metrics (about 70 KiB), kept even without HTTP. */
	srv->tests = calloc(1, sizeof(*srv->tests));
	if (srv->tests != NULL)
		testring_init(srv->tests);
	srv->base = srv->tests ? event_base_new() : NULL;
	if (srv->base == NULL) {
		log_error("cannot create the event loop");
		return -1;
	}
	if (server_start_admission(srv, srv->cfg) < 0)
		return -1;
	if (srv->cfg->http_port != 0 && (st->http = http_start(srv)) == NULL)
		return -1;
	if (srv->cfg->web_port != 0 && (st->web = weblisten_start(srv)) == NULL)
		return -1;
	return 0;
}

/* The reflector and the DNS responder (when its port is set), which take their sockets
 * over whether they start or not. 0, or -1 if one did not start. */
static int server_start_udp(struct server_state *st, int rt)
{
	int want_dns = st->dns_fd >= 0;

	st->refl = reflector_start(&st->srv, st->udp_fd, rt);
	st->udp_fd = -1;
	if (want_dns) {
		st->dns = dns_responder_start(&st->srv, st->dns_fd);
		st->dns_fd = -1;
	}
	return st->refl != NULL && (!want_dns || st->dns != NULL) ? 0 : -1;
}

static int server_add_signals(struct server_state *st)
{
	static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };

	for (int i = 0; i < 3; i++) {
		st->sig[i] = evsignal_new(st->srv.base, sigs[i], server_signal_callback, st);
		if (st->sig[i] == NULL || event_add(st->sig[i], NULL) < 0)
			return -1;
	}
	return 0;
}

/* Every socket is bound and no thread runs yet: the moment to give up root (see
 * server/privdrop.h; a listener added later must be bound in server_bind). Then the threads,
 * the listener's event and the signals. 0, or -1 after logging. */
static int server_start(struct server_state *st)
{
	struct server_ctx *srv = &st->srv;
	const struct server_config *cfg = srv->cfg;
	char err[SRVCONFIG_ERR_MAX];
	int rt, ok;

	rt = cfg->reflector_priority > 0 && reflector_rt_begin(cfg->reflector_priority) == 0;
	if (privdrop_apply(&st->pd, err, sizeof(err)) < 0) {
		log_error("%s", err);
		return -1;
	}
	ok = server_start_udp(st, rt) == 0;
	st->accept_ev = event_new(srv->base, st->tcp_fd, EV_READ | EV_PERSIST,
				  accept_callback, srv);
	if (!ok || st->accept_ev == NULL || server_start_workers(srv, cfg) < 0 ||
	    event_add(st->accept_ev, NULL) < 0 || server_add_signals(st) < 0) {
		log_error("cannot start serving");
		return -1;
	}
	return 0;
}

/* Runs the main loop until a signal stops it: 0, or 1 if the loop failed. */
static int server_serve(struct server_state *st)
{
	struct server_ctx *srv = &st->srv;
	const struct server_config *cfg = srv->cfg;

	char rate[32] = "none";

	if (cfg->max_rate_bps)
		snprintf(rate, sizeof(rate), "%.0f Mbit/s", (double)cfg->max_rate_bps / 1e6);
	/* The operator's one line at start: where, and the limits every client will meet. */
	log_notice("bloatmeterd %s listening on %s port %u (TCP control/data, UDP probes; %s receive timestamps); limits: %d sessions, %d per client, %d s each, max-rate %s",
		   BM_VERSION, cfg->bind_addr ? cfg->bind_addr : "*", cfg->port,
		   srv->udp_ts_kernel ? "kernel" : "user-space", cfg->max_sessions,
		   cfg->max_sessions_per_client, cfg->max_duration_s, rate);
	if (cfg->config_loaded)
		log_info("configuration from %s", cfg->config_path);
	server_log_security(srv, 0);
	return event_base_dispatch(srv->base) < 0 ? 1 : 0;
}

static void server_close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* The events of the main loop: signals, the listener's and the drain's. */
static void server_free_events(struct server_state *st)
{
	for (int i = 0; i < 3; i++)
		if (st->sig[i])
			event_free(st->sig[i]);
	if (st->accept_ev)
		event_free(st->accept_ev);
	if (st->drain)
		event_free(st->drain);
}

static void server_free_versions(struct server_state *st)
{
	while (st->versions != NULL) {
		struct cfg_version *v = st->versions;

		st->versions = v->older;
		free(v);
	}
}

/* The one way out of server_run: frees whatever was set up, at whatever step set-up stopped
 * (every part is empty until set up), workers and sessions first, then the threads, events
 * and loop. After a clean run (rc 0) it logs the counters and "stopped". Frees st. */
static void server_teardown(struct server_state *st, int rc)
{
	struct server_ctx *srv = &st->srv;

	if (st->lock_ok)
		server_stop_workers(srv);
	server_close_fd(&st->tcp_fd);
	server_close_fd(&st->udp_fd);
	server_close_fd(&st->dns_fd);
	reflector_stop(st->refl);
	dns_responder_stop(st->dns);
	server_free_events(st);
	limits_admission_stop(srv->admission);
	http_stop(st->http);
	weblisten_stop(st->web);
	if (srv->base)
		event_base_free(srv->base);
	if (st->table_ok)
		session_table_free(&srv->table);
	if (rc == 0) {
		server_log_counters(&srv->counters);
		server_log_security(srv, 1);
	}
	server_security_free(srv->psk, srv->tls);
	resultslog_close(&st->results_log);
	free(srv->tests);
	server_free_versions(st);
	if (st->lock_ok)
		pthread_mutex_destroy(&srv->lock);
	free(st);
	if (rc == 0)
		log_info("stopped");
}

int server_run(const struct server_config *cfg)
{
	struct server_state *st = server_state_new(cfg);
	int rc = 1;

	if (st == NULL) {
		log_error("cannot initialise the server");
		return 1;
	}
	if (server_prepare(st) == 0 && server_bind(st) == 0 && server_start(st) == 0)
		rc = server_serve(st);
	server_teardown(st, rc);
	return rc;
}

/* ctx: the daemon's shared state — config, event base, sessions and counters — passed to
 * every server module instead of globals. */
#ifndef BM_SERVER_CTX_H
#define BM_SERVER_CTX_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/queue.h>

#include <event2/event.h>

#include "server/limits.h"
#include "server/config.h"
#include "server/session.h"

struct ctrl_linger;
struct pendcap_slot;
struct resultslog;
struct worker_pool;

#define SERVER_WEB_SLOTS 8

/* Remote faults are counted, not logged loudly (STYLE: remote faults never flood the log). */
struct server_counters {
	atomic_uint_least64_t sessions_total;
	atomic_uint_least64_t sessions_refused;
	atomic_uint_least64_t ctrl_bad;      /* malformed or unexpected control input */
	atomic_uint_least64_t ctrl_timeout;  /* connections that said nothing useful in time */
	atomic_uint_least64_t data_bad;      /* bad data hello / unknown token */
	atomic_uint_least64_t conn_probes;        /* connect probes answered */
	atomic_uint_least64_t conn_probe_bad;     /* bad request, unknown token or IP, silence */
	atomic_uint_least64_t conn_probe_limited; /* over the per-session rate or open limit */
	atomic_uint_least64_t udp_reflected;
	atomic_uint_least64_t udp_bad;       /* undecodable datagrams */
	atomic_uint_least64_t udp_unknown;   /* decodable, but no session for token and address */
	atomic_uint_least64_t dns_queries;     /* datagrams on the DNS port */
	atomic_uint_least64_t dns_answered;    /* answers sent (any rcode) */
	atomic_uint_least64_t dns_refused;     /* REFUSED: outside the zone, ANY, not class IN */
	atomic_uint_least64_t dns_bad;         /* malformed: dropped, or FORMERR / NOTIMP */
	atomic_uint_least64_t dns_ratelimited; /* dropped: the source was over its rate */
	atomic_uint_least64_t conn_pending_refused; /* reset at accept: too many unclassified (in
						     * all, or from that client) */
	atomic_uint_least64_t udp_ratelimited; /* valid probes dropped: session over max-probe-rate */
	atomic_uint_least64_t sessions_refused_admission; /* busy: host egress over the limit
							    * (also in sessions_refused) */
	atomic_uint_least64_t flows_idle;      /* data connections closed after idle-timeout */
	atomic_uint_least64_t sessions_idle;   /* sessions ended after idle-timeout */
	/* Refusals by reason (each also in sessions_refused), for /metrics (server/metrics.c). */
	atomic_uint_least64_t sessions_refused_busy;       /* max-sessions reached */
	atomic_uint_least64_t sessions_refused_per_client; /* max-sessions-per-client reached */
	atomic_uint_least64_t sessions_refused_duration;   /* asked more than max-duration */
	atomic_uint_least64_t sessions_refused_shutdown;   /* hello while shutting down */
	atomic_uint_least64_t bytes_down_done; /* load bytes of ended sessions (live ones: sessions) */
	atomic_uint_least64_t bytes_up_done;
	atomic_uint_least64_t auth_failed;     /* psk-file set: unknown key id or wrong MAC */
	atomic_uint_least64_t tls_failed;      /* TLS handshakes that failed or timed out */
	atomic_uint_least64_t http_open;       /* HTTP connections open now (server/httpcap.h) */
	atomic_uint_least64_t http_full;       /* times the HTTP listener paused at its cap */
	atomic_uint_least64_t tls_flows;       /* TLS load flows attached to their session */
	atomic_uint_least64_t tls_flows_ktls_send; /* ... of them, the kernel encrypts */
	atomic_uint_least64_t tls_flows_ktls_recv; /* ... of them, the kernel decrypts */
	/* The public test listener (server/weblisten.h; slots: enum webroute_endpoint and enum
	 * webreject of server/webroute.h). */
	atomic_uint_least64_t web_open;        /* its connections now */
	atomic_uint_least64_t web_conns;       /* accepted in all */
	atomic_uint_least64_t web_requests[SERVER_WEB_SLOTS];
	atomic_uint_least64_t web_rejected[SERVER_WEB_SLOTS];
	atomic_uint_least64_t web_bytes_down;  /* /__down payload queued */
	atomic_uint_least64_t web_bytes_up;    /* request bodies read */
	atomic_uint_least64_t linger_dropped;  /* closes after a last reply cut short by a reset:
						* over the cap of lingering ones (server/ctrlmsg.h) */
};

/* Threads (docs/design.md, "Threads"): the main thread runs base (accept, HTTP, signals), the
 * workers (server/worker.h) run the sessions, the reflector and DNS responder their own loops.
 * lock guards the session list and count, the session ids, the pending and the lingering
 * lists; cfg is swapped whole on reload (an atomic pointer; old versions live until exit), so
 * a reader sees one consistent version. */
struct server_ctx {
	_Atomic(const struct server_config *) cfg;
	struct event_base *base;
	pthread_mutex_t lock;
	struct session *sessions;            /* every worker's (session.worker tells whose);
					      * server/sessionlist.h */
	int nsessions;                       /* running and admitted-not-yet-created sessions:
					      * places taken by server/admission.c */
	uint64_t next_session_id;
	struct worker_pool *workers;         /* NULL: no pool (unit tests and fuzzers) */
	int tests_remote;                    /* workers are threads: post summaries to base */
	struct session_table table;
	struct server_counters counters;
	int udp_ts_kernel;                   /* reflector receives with kernel timestamps */
	int npending;                        /* connections under the pending caps, from accept
					      * to their welcome or refusal (server/pendcap.h) */
	LIST_HEAD(, pendcap_slot) pendcap;   /* their places, to count them per client */
	struct pending_conn *pending;        /* the accept stage's (server/accept.c), for shutdown */
	TAILQ_HEAD(, ctrl_linger) lingering; /* closing after a last reply, oldest first */
	int nlingering;                      /* (server/ctrlmsg.c), how many */
	struct limits_admission *admission;  /* host egress sampler; NULL = admission control off */
	struct testring *tests;              /* recent tests and histograms (server/testring.h) */
	struct resultslog *results_log;      /* results-log; NULL = not set (server/resultslog.h) */
	atomic_int shutting_down;            /* SIGTERM/SIGINT seen: /healthz says 503 */
	int64_t start_ns;                    /* CLOCK_MONOTONIC at start-up, for the uptime */
	/* Loaded at start-up from psk-file and tls-cert/tls-key (server.c); NULL when not set. */
	struct auth_keys *psk;               /* every session must authenticate with one */
	struct ssl_ctx_st *tls;              /* SSL_CTX for TLS control connections */
};

/* The time to classify a connection and complete its hello is handshake-timeout
 * (server_config.handshake_timeout_s, default LIMITS_DEFAULT_HANDSHAKE_S). */
#define SERVER_HANDSHAKE_TIMEOUT_S LIMITS_DEFAULT_HANDSHAKE_S

#endif

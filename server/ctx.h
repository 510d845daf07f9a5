/* ctx: the daemon's shared state — config, event base, sessions and counters — passed to
 * every server module instead of globals. */
#ifndef BM_SERVER_CTX_H
#define BM_SERVER_CTX_H

#include <stdatomic.h>
#include <stdint.h>

#include <event2/event.h>

#include "server/server.h"
#include "server/session.h"

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
};

struct server_ctx {
	const struct server_config *cfg;
	struct event_base *base;
	struct session *sessions;
	int nsessions;
	uint64_t next_session_id;
	struct session_table table;
	struct server_counters counters;
	int udp_ts_kernel;                   /* reflector receives with kernel timestamps */
};

#define SERVER_HANDSHAKE_TIMEOUT_S 5 /* to classify a connection and complete its hello */

#endif

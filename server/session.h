/* session: one client test — its control connection, bulk flows, token and counters — and the
 * token table the UDP reflector consults. The daemon's list of sessions is
 * server/sessionlist.h; a session's life, server/sessionlife.h. */
#ifndef BM_SESSION_H
#define BM_SESSION_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>

#include <event2/bufferevent.h>
#include <event2/event.h>

#include "common/sock.h"
#include "common/wire.h"
#include "server/limits.h"

struct bulk_flow;
struct server_ctx;
struct test_live;

/* Session life: a control connection that has not said hello is a pending connection (see
 * server/accept.c, then server/hello.c); a session exists from a valid hello on. */
enum session_state {
	SESS_ACTIVE,  /* welcome sent: bulk flows may attach, probes are reflected */
	SESS_CLOSING, /* bye received or shutting down: final stats (or the notice) queued, closing
		       * once flushed, at the latest SESSIONLIFE_CLOSE_S after (server/sessionlife.h) */
};

struct session {
	uint64_t id;
	enum session_state state;
	uint8_t token[WIRE_TOKEN_LEN];
	struct sockaddr_storage peer; /* client address of the control connection */
	char peer_str[64];
	char cc[16];                  /* congestion control requested for load flows */
	int cc_ok;                    /* whether this server could set it */
	int64_t start_ns;
	int64_t deadline_ns;
	int64_t closing_ns;           /* when it went SESS_CLOSING */
	struct bufferevent *ctrl;
	struct event *tick;           /* stats push + deadline check */
	struct bulk_flow *flows;      /* linked list */
	int nflows[2];                /* [0] down (we send), [1] up (we sink) */
	/* Written by the session's worker only, atomic because /metrics (main thread) reads them. */
	_Atomic uint64_t down_tx_bytes; /* bytes written by our senders */
	_Atomic uint64_t up_rx_bytes;   /* bytes received by our sinks (what the client uploaded) */
	uint64_t cc_failures;         /* flows where setting cc failed */
	struct tcp_totals down_closed; /* TCP_INFO totals of download flows already closed */
	int64_t stats_ns;             /* when the last stats message was queued */
	uint64_t stats_down_bytes;    /* down_tx_bytes then */
	uint64_t stats_up_bytes;      /* up_rx_bytes then */
	int64_t cprobe_window_ns;     /* start of the current 1 s connect-probe rate window */
	int cprobe_window_n;          /* connect probes answered in that window */
	int cprobe_open;              /* answered connect-probe connections not yet closed */
	int64_t end_ns;               /* start + requested duration: when the client expects to end */
	int64_t active_ns;            /* last control message, probe or open flow (idle-timeout) */
	uint64_t idle_probes;         /* probe count at that time */
	uint64_t max_rate_bps;        /* max-rate at the start (told in the welcome); 0 = none */
	struct limits_bucket up_bucket; /* upload bytes the sinks may read (max-rate × 1.25) */
	struct server_ctx *srv;
	struct session *next;
	struct test_live *live;       /* figures for its summary (server/testring.h); may be NULL */
	/* The worker (server/worker.h) that runs it: its control connection, timers and flows
	 * are on base, and only that thread touches them or frees the session. */
	int worker;
	struct event_base *base;
	int tls_load;                 /* hello asked for a TLS load: plain data connections are
				       * refused (docs/protocol.md, "TLS load") */
};

/* The reflector's view of sessions: token, client IP and probe counter, behind one mutex,
 * because the reflector runs in its own thread. Fixed capacity set at creation. Entries are
 * found through a hash of the token (chained buckets): the reflector looks one up for every
 * probe and each session's worker for every 100 ms stats message, so a lookup must not cost a
 * scan of every session (at 1000 sessions × 100 probes/s, a scan took most of the reflector's
 * time under the lock the workers share; docs/scale.md). */
struct session_table {
	pthread_mutex_t lock;
	int cap;
	struct reflect_entry {
		int used;
		int next;                    /* the next entry of its bucket, −1 at the end */
		uint8_t token[WIRE_TOKEN_LEN];
		struct sockaddr_storage client;
		uint64_t rx_count;
		struct limits_bucket probes; /* max-probe-rate of this session */
	} *e;
	int *bucket;                      /* first entry of each chain, −1 = empty */
	uint32_t bucket_mask;             /* buckets − 1 (a power of two ≥ cap) */
	int probe_rate;                   /* requests per second and session; 0 = unlimited */
};

int session_table_init(struct session_table *t, int cap);
void session_table_free(struct session_table *t);
/* Raises the capacity to cap (SIGHUP raised max-sessions) under the lock; 0 or -1 (no memory,
 * table unchanged). */
int session_table_grow(struct session_table *t, int cap);
/* Registers a token; -1 if full. */
int session_table_add(struct session_table *t, const uint8_t *token, const struct sockaddr *client);
/* Sets the probe rate per session (0 = unlimited, the initial value) for new and live
 * entries. */
void session_table_set_probe_rate(struct session_table *t, int per_s);
void session_table_remove(struct session_table *t, const uint8_t *token);
/* For the reflector: if token is live and src has the session's IP, and the session is
 * within its probe rate at now_ns, counts the packet and returns 1 with the new count in
 * *count; -1 if the session is over its rate (not counted); 0 for no such session. */
int session_table_count_probe(struct session_table *t, const uint8_t *token,
			      const struct sockaddr *src, int64_t now_ns, uint64_t *count);
uint64_t session_table_probe_count(struct session_table *t, const uint8_t *token);

#endif

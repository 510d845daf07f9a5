/* load: the client's bulk TCP flows for one loaded phase — receivers for download, senders
 * for upload — on the load event loop (never the probe loop), with their in-flow
 * request/response probes and periodic TCP_INFO samples; plain TCP, or TLS (--tls-load). */
#ifndef BM_LOAD_H
#define BM_LOAD_H

#include <stdint.h>
#include <sys/socket.h>

#include <event2/event.h>

#include "client/model/result.h"
#include "common/sock.h"
#include "common/wire.h"
#include "probes/series.h"

struct load;

struct load_opts {
	int64_t inflow_interval_ns; /* 0: no in-flow probes; else one request per interval and
				     * direction, round-robin over that direction's flows, at most
				     * one outstanding per flow */
	int dscp;                   /* DSCP of the client's load sockets; -1 leaves the default */
	int max_flows;              /* room for flows added with load_add_flow (0: none) */
	uint64_t max_rate_bps;      /* the server's cap (welcome): upload flows are paced to
				     * share it; 0 = none */
	struct ssl_ctx_st *tls_ctx; /* TLS load: every flow runs a TLS handshake with it before
				     * its data hello (kernel TLS if the context asks for it and
				     * the kernel has it); NULL: plain TCP */
	const char *tls_host;       /* the name or address the server's certificate must carry */
	struct sockaddr_storage local; /* -B: every flow leaves from it; AF_UNSPEC (zero): any */
	/* Called once, on the load's loop, when one of the flows load_start opened cannot
	 * connect, finish its TLS handshake or start (one sentence in err); NULL: logged. */
	void (*on_fail)(void *arg, const char *err);
	void *fail_arg;
};

struct load_info {
	int cc_ok;            /* cc set on every client load socket */
	char cc_used[16];     /* what the sockets really use */
	char cc_error[96];
	int mss;              /* from TCP_INFO of the first flow */
	int timestamps;       /* TCP timestamp option negotiated */
	uint64_t corrupt_streams;   /* flows closed because the server's records did not parse */
	uint64_t inflow_unsent;     /* download requests skipped: the socket would not take them */
	uint64_t inflow_unmatched;  /* echoes/responses matching no outstanding request */
	/* TLS load: flows that completed their handshake, how many of them the kernel encrypts
	 * (send) and decrypts (receive) for, and what the first one negotiated. */
	int tls_flows, ktls_send_flows, ktls_recv_flows;
	char tls_version[16];
	char tls_cipher[64];
};

/* Opens ndown download and nup upload flows to the server, all connects at once, and returns
 * at once: each flow's connect (and, with opts->tls_ctx, its TLS handshake) finishes on the
 * loop within the connect timeout, then its data hello with the session token announces it
 * and it starts moving bytes; a failure goes to opts->on_fail. opts NULL: no in-flow probes,
 * default DSCP, plain TCP. Every running flow's TCP_INFO is sampled every 100 ms. NULL with
 * err when no socket could be opened. */
struct load *load_start(struct event_base *base, const struct sockaddr_storage *sa, socklen_t len,
			const uint8_t *token, int ndown, int nup, const char *cc,
			const struct load_opts *opts, char *err, size_t errlen);
/* Appends the in-flow samples completed since the last call (OK, or LOST after 10 s without
 * an answer; in send order within one call) to down and up (either may be NULL: discarded)
 * and adds unmatched answers to their bad_replies. Requests still outstanding stay in l;
 * load_stop drops them (the phase ended, not the network). */
void load_take_inflow(struct load *l, struct probe_series *down, struct probe_series *up);
/* Appends the TCP_INFO samples taken since the last call to the caller's growable array
 * *arr (*n used, *cap allocated). Returns how many were appended (0 when out of memory:
 * they stay in l). */
size_t load_take_samples(struct load *l, struct flow_sample **arr, size_t *n, size_t *cap);
/* Adds one flow of direction up (1: upload) to a running load (-P auto); its connect
 * completes on the loop. 0, or -1 with err when there is no room or no socket. */
int load_add_flow(struct load *l, int up, char *err, size_t errlen);
/* The in-flow probes of a running load from now on one request per interval_ns and
 * direction (the probe budget); no-op without in-flow probes. */
void load_set_inflow_interval(struct load *l, int64_t interval_ns);
/* Flows of direction up that are open or connecting. */
int load_flows(const struct load *l, int up);
/* Bytes received so far on the download flows. */
uint64_t load_down_bytes(const struct load *l);
/* Flows still open. */
int load_open_flows(const struct load *l);
/* TCP_INFO totals of the upload flows so far (open and closed). */
void load_up_totals(const struct load *l, struct tcp_totals *t);
/* Periodic upkeep: re-tunes the senders' unsent-data limit. */
void load_tune(struct load *l);
void load_get_info(const struct load *l, struct load_info *info);
/* Closes every flow and frees l. */
void load_stop(struct load *l);

#endif

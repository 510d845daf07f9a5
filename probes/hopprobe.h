/* hopprobe: TTL-limited probes (ICMP echo or UDP) to the server at a low, bounded rate on the
 * runner's loop, one TTL after another. Until the server itself answers it probes TTL 1 up to
 * HOPPROBE_MAX_TTL; from then on only 1 … the server's hop count. Unprivileged: ICMP through a
 * ping socket (net.ipv4.ping_group_range), else raw (root), else UDP with a note; UDP through
 * IP_RECVERR / IPV6_RECVERR; routers' time-exceeded errors come on the error queue with the
 * offender's address. Called by the run's
 * probe set; the samples feed client/analysis/hops. */
#ifndef BM_PROBE_HOPPROBE_H
#define BM_PROBE_HOPPROBE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <event2/event.h>

#include "probes/runner.h"
#include "probes/series.h"

#define HOPPROBE_MAX_TTL 16
#define HOPPROBE_UDP_PORT 33434 /* traceroute's first port: nothing listens there */
#define HOPPROBE_PORTS 256      /* destination ports used in turn: a probe's identity */

enum hop_mode { HOP_MODE_OFF = 0, HOP_MODE_ICMP = 1, HOP_MODE_UDP = 2 };

/* What the probe measured: one series per TTL, whose target is the address that answered
 * (the first one; "" while none has). A sample's aux is 1 when the server answered. */
struct hop_trace {
	enum hop_mode mode;
	int available;              /* 0: could not run; note says why */
	char method[32];            /* "ping socket" or "udp" */
	char note[SERIES_NOTE_LEN];
	int hop_count;              /* the TTL at which the server answered; 0 until then */
	int other_addrs;            /* answers from a second address at some TTL (ECMP) */
	struct probe_series ttl[HOPPROBE_MAX_TTL];
};

struct hop_probe_config {
	struct sockaddr_storage target; /* the server; port ignored */
	socklen_t target_len;
	enum hop_mode mode;             /* ICMP or UDP */
	int64_t interval_ns;            /* between two probes (of any TTL); ≥ 10 ms */
	int64_t timeout_ns;             /* > 0 */
	struct sockaddr_storage local;  /* -B: the source address; AF_UNSPEC (zero): any */
};

struct hop_probe;

/* Opens the socket and adds its events to base. Returns NULL with one sentence in err (also
 * out->note, out->available = 0) when it cannot run. out must outlive the probe. */
struct hop_probe *hop_probe_start(struct event_base *base, const struct hop_probe_config *cfg,
				  struct hop_trace *out, char *err, size_t errlen);
extern const struct probe_ops hop_probe_ops;

/* Frees the series of t. */
void hop_trace_free(struct hop_trace *t);

#endif

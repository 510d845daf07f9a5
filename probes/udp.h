/* udp: the isochronous UDP latency probe. Runs on its own thread and event loop so bulk
 * traffic on the load loop can never delay a probe's send or receive timing. */
#ifndef BM_PROBE_UDP_H
#define BM_PROBE_UDP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/wire.h"

/* One UDP probe as the client saw it. Times are client CLOCK_MONOTONIC ns except srv_*. */
struct probe_rec {
	uint32_t seq;
	uint8_t received;     /* a valid reply arrived */
	uint8_t ts_kernel;    /* rtt used a kernel receive timestamp */
	int64_t send_ns;
	int64_t rtt_ns;       /* valid if received */
	int64_t srv_rx_ns;    /* server clock */
	int64_t srv_tx_ns;
	uint64_t srv_count;   /* server's received count when it answered */
};

struct udp_probe_config {
	struct sockaddr_storage server; /* reflector address */
	socklen_t server_len;
	uint8_t token[WIRE_TOKEN_LEN];
	int64_t interval_ns;
	size_t size;                    /* datagram bytes, WIRE_PROBE_MIN..WIRE_PROBE_MAX */
	size_t max_probes;              /* capacity: duration / interval plus margin */
	struct sockaddr_storage local;  /* -B: the source address; AF_UNSPEC (zero): any */
};

struct udp_probe;

/* Opens the socket and starts the thread; the first probe leaves at once. NULL + err on failure. */
struct udp_probe *udp_probe_start(const struct udp_probe_config *cfg, char *err, size_t errlen);
/* Stops sending, keeps receiving late replies for grace_ns, then joins the thread. */
void udp_probe_stop(struct udp_probe *p, int64_t grace_ns);
/* After stop: the records, indexed by sequence number (owned by p until udp_probe_free). */
struct probe_rec *udp_probe_records(struct udp_probe *p, size_t *n);
/* After stop: how many replies carried a kernel receive timestamp. */
size_t udp_probe_kernel_stamps(const struct udp_probe *p);
/* The latest RTT in ns (0 before the first reply); safe to call from any thread. */
int64_t udp_probe_last_rtt(const struct udp_probe *p);
/* Valid replies so far; safe to call from any thread. */
uint64_t udp_probe_replies(const struct udp_probe *p);
/* Requests sent so far; safe to call from any thread. */
uint64_t udp_probe_sent(const struct udp_probe *p);
/* From any thread: later probes leave interval_ns apart, the schedule staying absolute (the
 * probe budget; records stay indexed by sequence number). */
void udp_probe_set_interval(struct udp_probe *p, int64_t interval_ns);
/* Scheduling health: sends that left more than one interval late. */
uint64_t udp_probe_late_sends(const struct udp_probe *p);
/* Transfers ownership of the records to the caller (free() them), then frees p. */
struct probe_rec *udp_probe_free(struct udp_probe *p, size_t *n);

/* Validates a reply against what was sent (named checks, one verdict). Exposed for tests. */
int udp_probe_reply_valid(const struct wire_probe *w, const uint8_t *token, size_t nsent,
			  size_t len, size_t sent_len);

#endif

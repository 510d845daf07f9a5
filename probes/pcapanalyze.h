/* pcapanalyze: the passive analyzer of captured packets, the same code for a live capture
 * (probes/pcap.c) and a capture file (`bloatmeter analyze`). Incremental and pure: packets go
 * in one at a time, every header walk is bounded by the captured length, every table has a
 * bound. Per direction (up = client→server, down = server→client) it counts packets, bytes,
 * TCP data segments and retransmissions, ECN marks; it takes passive RTT samples of TCP flows
 * from timestamp echoes (the pping method) and capture times of bloatmeter's UDP probes. */
#ifndef BM_PCAPANALYZE_H
#define BM_PCAPANALYZE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct probe_rec; /* probes/udp.h */
#include "probes/series.h"

#define PA_MAX_PORTS 4

/* How directions are told. A NULL config or a server of family AF_UNSPEC: a TCP flow's client
 * is the side that sent the SYN, and without a SYN (or for UDP) the side with the lower port
 * is the server; a bloatmeter probe request goes up and a reply down. With a server address:
 * packets to it are up and packets from it down, whatever the flags say. */
struct pa_config {
	struct sockaddr_storage server; /* AF_INET / AF_INET6 (v4-mapped allowed); port unused */
	struct sockaddr_storage client; /* AF_UNSPEC: any peer of the server */
	/* The server's ports (0 = unused). With any set, only packets to or from these ports of
	 * the server belong to the test, so loopback (client address = server address) works. */
	uint16_t server_ports[PA_MAX_PORTS];
};

/* Flow classes: who sends the payload. Known from bloatmeter's data hello when it was
 * captured, else from the bytes (a bulk flow carries most of its payload one way). */
enum pa_class { PA_CLASS_NONE = 0, PA_CLASS_UP = 1, PA_CLASS_DOWN = 2 };

/* Passive RTT of one flow class, in ms (n = 0: no samples, the rest NAN). */
struct pa_rtt {
	size_t n;
	double min_ms, p50_ms, p95_ms, p99_ms, max_ms;
	double increase_ms; /* p95 − min: the latency the load added */
};

struct pa_dir {
	uint64_t packets;
	uint64_t bytes;            /* frame lengths as captured on the wire */
	uint64_t payload_bytes;    /* TCP and UDP payload, from the IP and transport headers */
	uint64_t data_segments;    /* TCP segments carrying payload */
	uint64_t retrans;          /* data segments whose sequence range was already seen */
	double retrans_pct;        /* of data segments; NAN without data segments */
	uint64_t ect0, ect1, ce;   /* ECN codepoints (IPv4 TOS / IPv6 traffic class) */
	int64_t first_ns, last_ns; /* first and last packet this way (0 without packets) */
	double mbps;               /* bytes over first..last, NAN with fewer than two packets */
	uint64_t flows;            /* bulk TCP flows whose payload goes this way */
	/* The passive RTT of the bulk flows of this class (pping: a TSval's first capture time to
	 * the capture time of its echo). A capture point splits the path in two halves:
	 * rtt_server times the client's TSvals, from the capture point through the server and
	 * back; rtt_client the server's, through the client and back (at the client: its own
	 * stack and qdisc). rtt is end to end: each rtt_server sample plus the flow's latest
	 * rtt_client sample — the RTT whatever side of the capture point the queue is on (at the
	 * client an upload queue in its own qdisc lies before the capture point). */
	struct pa_rtt rtt;
	struct pa_rtt rtt_server;
	struct pa_rtt rtt_client;
};

struct pa_summary {
	int64_t first_ns, last_ns;
	double duration_s;         /* 0 with fewer than two packets */
	uint64_t packets;          /* every packet handed in */
	uint64_t other;            /* not IPv4/IPv6 TCP/UDP, a later fragment, or no direction */
	uint64_t malformed;        /* IP or transport headers that do not add up */
	uint64_t tcp_flows;        /* tracked TCP flows */
	uint64_t untracked;        /* TCP packets beyond the flow table's bound */
	uint64_t probe_requests, probe_replies; /* bloatmeter UDP probes */
	uint64_t ts_evicted;       /* TSvals evicted unechoed because the table was full */
	uint64_t dropped_samples;  /* RTT samples or probe times beyond their bound */
	struct pa_dir up, down;    /* rtt: up = upload flows, down = download flows */
};

/* Capture-to-socket timing of bloatmeter's UDP probes, in µs (n = 0: NAN). */
struct pa_wire {
	size_t n_tx;               /* requests seen on the wire with a socket send time */
	double tx_p50_us, tx_p99_us; /* wire_tx − send_ns: send() to the wire */
	size_t n_rx;               /* replies seen on the wire that the client received */
	double rx_p50_us, rx_p99_us; /* socket receive time − wire_rx */
};

struct pa;

/* NULL on allocation failure. cfg is copied; NULL = directions by SYN / lower port. */
struct pa *pa_new(const struct pa_config *cfg);
void pa_free(struct pa *pa);

/* Link types pa_packet understands (DLT_ values as pcap_datalink() returns them):
 * EN10MB (with 802.1Q/802.1ad tags), LINUX_SLL, LINUX_SLL2, RAW, IPV4, IPV6, NULL, LOOP. */
int pa_linktype_supported(int linktype);
/* One captured packet: ts_ns in the caller's clock (live: CLOCK_MONOTONIC), caplen bytes at
 * data, wirelen the packet's length on the wire. Never reads past data + caplen. */
void pa_packet(struct pa *pa, int linktype, int64_t ts_ns, const uint8_t *data, size_t caplen,
	       size_t wirelen);

/* Everything above; percentiles need scratch memory (their n is 0 if it was refused). */
void pa_summary(const struct pa *pa, struct pa_summary *out);

/* The end-to-end passive RTT samples (pa_dir.rtt) of the bulk flows of class cls (UP or
 * DOWN) as a series named "pcap_rtt_up" / "pcap_rtt_down" sorted by send time: send_ns =
 * capture time of the echoing packet − rtt, status SAMPLE_OK. Upload flows' RTT includes the
 * upload queue, download flows' the download queue. out is series_init'ed here; the caller
 * series_free's it. -1 when out of memory. */
int pa_rtt_series(const struct pa *pa, enum pa_class cls, struct probe_series *out);

/* Compares the probes' capture times with the client's socket times (recs as the UDP probe
 * keeps them, any order; receive time = send_ns + rtt_ns). Both clocks must be the same (live
 * capture converts to CLOCK_MONOTONIC). -1 when out of memory. */
int pa_probe_wire(const struct pa *pa, const struct probe_rec *recs, size_t n,
		  struct pa_wire *out);

#endif

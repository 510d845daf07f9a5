/* result: the one in-memory result model of a run. The measurement run fills the raw series; analysis
 * fills the derived parts; every output writer only reads it. It owns its data types (the lab
 * truth and TCP_INFO samples included), so the layers that fill it depend on it, not the other
 * way round. Layer: client/model; anything in the client may include it. */
#ifndef BM_RESULT_H
#define BM_RESULT_H

#include <stddef.h>
#include <stdint.h>

#include "client/model/config.h"
#include "client/model/probebudget.h"
#include "common/sock.h"
#include "common/stats.h"
#include "probes/pcapanalyze.h"
#include "probes/series.h"
#include "client/model/hopresult.h"
#include "probes/udp.h"

#define RESULT_MAX_SERIES 12

struct fleet;

#define LAB_QDISC_PARAMS 6

/* What the bottleneck really is, from the configuration (the ground truth). */
struct lab_truth {
	uint64_t down_rate_bps, up_rate_bps;
	double down_buffer_ms, up_buffer_ms;
	uint64_t down_limit_bytes, up_limit_bytes; /* tbf limit actually configured */
	uint64_t down_burst_bytes, up_burst_bytes; /* tbf burst actually configured */
	double down_loss_pct, up_loss_pct;         /* random loss configured (0.01 % steps) */
	char qdisc[16];        /* "tbf" (kernel) or the userspace one: fifo, codel, fqcodel, pie */
	char hop[80];          /* where the bottleneck sits */
	int hops;              /* routers between client and server */
	int bottleneck_hop;    /* the one that holds the bottleneck (1..hops) */
	int ecn_mark;          /* the AQM CE-marks ECT packets instead of dropping them */
	double delay_ms;       /* fixed one-way delay added per direction (0 = none) */
	/* The queue discipline's parameters, as it runs them (both directions alike). */
	struct lab_qdisc_param {
		const char *name;  /* a JSON key: "target_ms", "flows", ... (static storage) */
		double value;
	} params[LAB_QDISC_PARAMS];
	int nparams;
	/* The userspace bottleneck's own account (has_bneck: not tbf), per direction: packets in
	 * and out, drops by cause, CE marks; and per loaded phase, over the same steady window as
	 * the probes' figures, the sojourn (arrival at the bottleneck to departure onto the link)
	 * of every packet that left it. */
	int has_bneck;
	struct lab_bneck_counts {
		uint64_t packets_in, packets_out, tail_drops, aqm_drops, ce_marks, line_drops;
	} down_bneck, up_bneck;
	struct lab_sojourn {
		enum phase_kind phase;
		struct lab_sojourn_dir {
			uint64_t samples;
			double p50_ms, p95_ms, p99_ms, max_ms; /* NAN without samples */
			double floor_ms; /* median of each 100 ms's smallest (CoDel's interval) */
		} down, up;
	} sojourn[PHASE_KINDS];
	int nsojourn;
};

/* One TCP_INFO reading of one load flow (client side: for download flows the client only
 * receives, so rtt/cwnd describe its ACK direction and rcv_rtt is the useful RTT). */
struct flow_sample {
	int64_t t_ns;             /* client CLOCK_MONOTONIC */
	uint16_t flow_id;         /* the id in the flow's data hello (per load) */
	uint8_t up;               /* 1: upload flow (the client sends) */
	uint32_t rtt_us, min_rtt_us, rcv_rtt_us;
	uint32_t total_retrans, snd_cwnd;
	uint64_t delivery_rate;   /* bytes/s */
	uint64_t busy_us, rwnd_limited_us, sndbuf_limited_us;
	uint8_t ecn;              /* ECN negotiated */
	int64_t delivered_ce;     /* CE marks the peer echoed (an upload flow's); -1 unknown */
	uint64_t delivered_bytes; /* bytes the peer acknowledged, SACKed included (0 unknown) */
};

/* The IP bytes one HTTP-mode latency probe's connection carried each way (0: unknown). */
struct probe_wire {
	uint32_t up, down;
};

/* Cumulative bytes seen by a receiver at time t (client clock). */
struct tput_rec {
	int64_t t_ns;
	uint64_t bytes;
};

/* --tls-load: what the load flows' TLS negotiated, as the client saw it. */
struct tls_load_report {
	int on;                   /* the load ran inside TLS */
	char version[16];         /* of the first flow: "TLSv1.3" */
	char cipher[64];
	int flows;                /* load flows that completed a TLS handshake, all phases */
	int ktls_send_flows;      /* of them: the kernel encrypted what the client sent */
	int ktls_recv_flows;      /* ... and decrypted what it received */
};

/* Congestion control as each end really used it for the load flows. */
struct cc_report {
	char requested[16];
	int client_ok;            /* client could set it on every load socket */
	char client_used[16];
	char client_error[96];
	int server_ok;
	char server_used[16];
	char server_error[96];
};

/* server_clock = client_clock + offset(t), offset(t) = offset_ns + drift × (t − t_ref_ns);
 * estimated by client/analysis/clocksync.c. */
struct clock_fit {
	int valid;
	int drift_fitted;        /* two windows were usable; else drift is 0 */
	int64_t t_ref_ns;        /* client clock */
	double offset_ns;
	double drift;            /* ns per ns (1e-6 = 1 ppm) */
	double error_ns;         /* bound from the asymmetry the method cannot see: half the
				  * fastest RTTs */
	size_t n_pre, n_post;    /* exchanges used from each window */
};

/* Drop pattern of one direction in one phase: RFC 3357 loss periods and distances, the
 * Gilbert model, the queueing delay just before losses, and a classification with evidence. */
struct loss_pattern {
	size_t lost;               /* probes lost in this direction */
	size_t periods;            /* loss periods (runs of consecutive losses) */
	double mean_period;        /* probes per period */
	size_t max_period;
	double mean_distance;      /* probes between the starts of consecutive periods (NAN < 2) */
	double gilbert_p;          /* P(lost | previous received) */
	double gilbert_r;          /* P(received | previous lost) */
	size_t bursts;             /* RFC 3611 bursts (Gmin 16): ≥ 2 losses less than Gmin apart */
	double burst_density;      /* losses / probes within bursts (NAN without bursts) */
	double gap_density;        /* losses / probes outside bursts */
	double q_before_ms;        /* median queueing delay of the last reply before each period */
	size_t steady_lost;        /* the same two over the steady window only (the queue verdict's: */
	double steady_q_before_ms; /* start-up overshoots drop at a queue the steady top never sees) */
	const char *cls;           /* none|outage|random|policer|aqm|tail-drop|mixed */
	double confidence;         /* 0..1, from the number of periods */
	char evidence[160];
};

/* One auxiliary probe kind in one phase, over the same window as the UDP figures (the steady
 * window; idle: the whole phase). */
struct series_phase {
	struct stats_summary rtt_ms;  /* answered samples */
	size_t sent, ok, lost, errors;
	double loss_pct;              /* lost / (sent - errors); NAN without samples */
	double jitter_ms;             /* mean |difference| of consecutive answered samples */
	double increase_ms;           /* p50 - this kind's idle p50 (NAN for idle or n/a) */
};

/* Responsiveness (TCP variant of the draft, docs/methods.md) of one loaded phase. */
struct rpm_result {
	int valid;
	double rpm;
	const char *cls;              /* poor|fair|good|excellent */
	double tm_connect_ms;         /* trimmed mean of TCP handshakes on new connections */
	double tm_request_ms;         /* ... of the request/response on those connections */
	double tm_inflow_ms;          /* ... of in-flow request/responses on load connections */
	size_t n_foreign, n_self;
};

struct phase_result {
	enum phase_kind kind;
	int64_t start_ns, end_ns;      /* load (or idle) interval, client clock */
	int64_t steady_start_ns;       /* start of the steady window; -1 if never saturated */
	int saturated;
	double down_mbps, up_mbps;     /* goodput over the steady window (NAN if n/a) */
	struct stats_summary rtt_ms;   /* received probes sent in the steady window (idle: whole phase) */
	size_t probes_sent, probes_received;
	size_t lost_up, lost_down;
	double loss_up_pct, loss_down_pct;
	double latency_increase_ms;    /* rtt p50 − idle rtt p50 */
	struct stats_summary q_up_ms;   /* one-way queueing delay, same window (n = 0: no sync) */
	struct stats_summary q_down_ms;
	struct loss_pattern loss_up, loss_down; /* over the whole phase */
	double recovery_ms;            /* load end → RTT back near idle (NAN: not within the gap) */
	int64_t retrans_up, retrans_down; /* TCP retransmissions of the load flows (-1: unknown) */
	/* Share of the senders' busy time limited by the receive window / the send buffer
	 * (TCP_INFO); NAN when unknown or the direction carried no load. */
	double rwnd_limited_up, rwnd_limited_down, sndbuf_limited_up, sndbuf_limited_down;
	/* Share of one core the client's load loop (which also drives every load flow) used
	 * during the phase, and the same for the server's loop (NAN when unknown). Near 1 the
	 * tool, not the path, may be the bottleneck. */
	double cpu_client, cpu_server;
	int64_t cpu_client_start_ns;   /* test bookkeeping: thread CPU time at phase start, and the */
	int64_t cpu_server_start_ns;   /* server's loop CPU time (-1 unknown) with its clock then */
	int64_t cpu_server_t0_ns;
	struct tcp_totals srv_start;   /* server's download totals at phase start */
	const char *grade;             /* from latency_increase_ms (NULL for idle) */
	double jitter_ms;              /* UDP: mean |RTT difference| of consecutive replies */
	int flows_down, flows_up;      /* load flows at the end of the phase (-P auto: where the
					* ramp stopped) */
	struct series_phase probe[RESULT_MAX_SERIES]; /* indexed like test_result.series */
	struct rpm_result rpm;
	/* Server hold time (µs) of the UDP replies in the rtt_ms window: the reflector's own
	 * share of every RTT (its socket queue and processing), from the stamps in each reply. */
	struct stats_summary server_hold_us;
	/* The probe budget (docs/methods.md): the intervals in force at the phase's end, their
	 * common factor over the configured ones (NAN: no run-time record), whether the floor
	 * bound; over the phase's window, each way ([0] down): the probes' IP traffic (from
	 * what they sent), the ACKs of the load (estimated from its delivered segments), the
	 * link's IP-level rate with both and the load, and the probes' share of it. */
	double probe_ms[BUDGET_KINDS];
	int64_t probe_settled_ns;      /* new intervals in force from here (-1: unchanged) */
	double probe_scale;
	int probe_floor;
	double probe_kbps[2], ack_kbps[2], link_mbps[2], probe_share[2];
};

/* Buffer estimate for one direction of the bottleneck. */
struct buffer_estimate {
	int valid;
	enum phase_kind phase;     /* where it was measured */
	double ms;                 /* the larger of the median of the 1 s maxima of queueing
				    * delay and peak_ms */
	double peak_ms;            /* median queue level before the senders' back-offs (NAN: none) */
	size_t peaks;              /* how many back-offs were found */
	int peaks_steady;          /* two or more, all within ±20 % of peak_ms */
	int from_peaks;            /* ms is peak_ms (the back-offs stood above the 1 s maxima) */
	size_t stall_held;         /* probes left out: in flight while this host stalled (stall.h) */
	double bytes;              /* ms × IP-level throughput */
	double q_p50_ms, q_p99_ms;
	double q_max_ms;           /* the highest queueing delay in the window */
	size_t samples;
	double sustained_ms;       /* the highest sustained queue: the second-highest 1 s maximum
				    * (the highest below four seconds), so one stalled second cannot
				    * raise it; a lower bound reports this when it exceeds ms */
	int lower_bound;           /* the queue did not sit at its top (lower_bound_why says why):
				    * the buffer is at least this */
	const char *method;        /* static string naming the method */
	/* 95 % interval (docs/methods.md): low = bootstrap over the 1 s maxima; high = the larger
	 * of the bootstrap's high and the second-highest 1 s maximum, plus two packets' time. */
	int has_ci;
	double ci_low_ms, ci_high_ms, ci_low_bytes, ci_high_bytes;
	double resolution_ms;      /* two packets' time at the rate: added to ci_high */
	int unstable;              /* the bootstrap interval's half-width exceeds 20 % of ms */
	int managed;               /* saturated, small queue, yet drops: an AQM hides the buffer */
	const char *lower_bound_why; /* "never saturated", "server rate limit", "receive window",
				      * "send buffer", "client CPU", "server CPU", "bbr",
				      * "random loss", "managed queue", "unstable" */
};

/* --ecn: how ECN was asked for, what the load flows negotiated, and whether the path marked
 * (client/run/ecn.c requests it; client/analysis/analysis_ecn.c judges it). */
struct ecn_report {
	int requested;             /* --ecn */
	int enabled;               /* the namespace requests ECN on new connections (tcp_ecn 1) */
	int sysctl;                /* net.ipv4.tcp_ecn as found (-1 unreadable) */
	char how[192];             /* how it was asked for, or why it could not be */
	int flows, flows_ecn;      /* load flows seen in TCP_INFO; of them, ECN negotiated */
	int64_t ce_down, ce_up;    /* CE marks per direction: the capture's, else (up) TCP_INFO's
				    * delivered_ce; -1 unknown */
	int64_t retrans;           /* the loaded phases' retransmissions (-1 unknown) */
	const char *verdict;       /* marks|drops|not negotiated|unknown; NULL without --ecn */
	char evidence[224];
};

/* What manages the queue of one loaded direction (client/analysis/queueverdict.c). */
struct queue_verdict {
	const char *verdict;       /* fifo|aqm|fq|policer|unknown; NULL: the direction was not loaded */
	char evidence[224];        /* one sentence with the figures */
	double standing_ms;        /* the probes' queueing delay p50 in the steady window */
	double floor_ms;           /* median of the probes' 100 ms minima: what CoDel keeps near its
				    * target */
	double top_ms;             /* the top of the queue (the buffer estimate); fifo: its buffer */
	double q_before_loss_ms;   /* median queueing delay just before the probes' losses */
	double flow_q_ms;          /* the load flows' in-flow queueing delay (TCP_INFO RTT p50 − idle) */
	size_t probe_losses;
	int64_t retrans;           /* -1 unknown */
	int64_t ce;                /* CE marks seen this way (-1 unknown) */
	const char *signal;        /* how it signals congestion: drops|marks|drops+marks|none */
};

struct test_result {
	struct client_config cfg;
	char server_addr[64];          /* address:port actually used */
	int64_t start_real_ns;         /* wall clock at test start */
	int64_t t0_ns;                 /* monotonic time all relative times count from */
	char server_version[32];
	char udp_server_ts[8];         /* "kernel" or "user" */
	struct cc_report cc;
	double ip_overhead;            /* IP bytes per goodput byte, from MSS and header sizes */
	int probe_ip_hdr;              /* the probes' IP header: 20 (IPv4) or 40 (IPv6) bytes */
	int mss;

	struct probe_rec *probes;
	size_t nprobes;
	struct probe_wire *probe_wire; /* the HTTP mode's: parallel to probes; NULL otherwise */
	size_t probes_kernel_ts;       /* replies timed with kernel timestamps */
	uint64_t srv_probe_count;      /* server's final count of received probes (0 = unknown) */
	struct tput_rec *down;         /* client-received download bytes */
	size_t ndown;
	struct tput_rec *up;           /* server-received upload bytes, mapped to client clock */
	uint32_t *srv_srtt_us;         /* per up sample: the server's download flows' mean smoothed
					* RTT then, as their sender measures it (0: none) */
	uint64_t *srv_dlv_bytes;       /* per up sample: the bytes the server's download flows saw
					* delivered, SACKed included (0: unknown; delivered.h) */
	size_t nup;
	struct flow_sample *flows;     /* TCP_INFO of every client load flow, every 100 ms */
	size_t nflows;

	struct phase_result phases[PHASE_KINDS];
	int nphases;
	double rtt0_ms;                /* idle minimum RTT (baseline) */
	struct clock_fit sync;         /* clock offset for one-way delays */
	double owd0_up_ms, owd0_down_ms; /* idle minimum one-way delays (baselines) */
	struct buffer_estimate buffer_down, buffer_up;
	/* Per direction from the bidirectional phase, where only one-way delays separate the
	 * two queues (valid only with clock sync). */
	struct buffer_estimate buffer_bidir_down, buffer_bidir_up;
	/* What manages each direction's queue, from its own loaded phase. */
	struct queue_verdict queue_down, queue_up;
	struct ecn_report ecn;

	/* Auxiliary probe kinds (ICMP, DNS, new TCP connections, in-flow, passive capture). */
	struct probe_series series[RESULT_MAX_SERIES];
	int nseries;
	/* ICMP cross-checks (NULL when not applicable): where the queue is and whether ICMP is
	 * treated differently from UDP under load. */
	const char *icmp_hop_verdict;
	char icmp_hop_evidence[160];
	const char *icmp_udp_verdict;
	char icmp_udp_evidence[160];

	/* Passive capture of the test's own packets (--probes pcap). */
	struct {
		int ran;                   /* the capture ran (else note says why not) */
		char note[320];
		char ifname[32];
		int nano;                  /* nanosecond timestamps */
		uint64_t packets, drops;   /* captured, and dropped by the kernel/interface */
		struct pa_summary sum;
		int has_wire;
		struct pa_wire wire;       /* probes' wire times against their socket times */
	} capture;

	const char *grade_down, *grade_up, *grade_overall; /* DSLReports bands; NULL if n/a */
	int server_busy;               /* the server refused the test for now (exit code 4) */
	int udp_blocked;               /* no UDP probe came back in the idle phase while the
					* control connection worked, or UDP replies stopped later
					* while TCP was heard: the loaded phases from then on ran
					* in-flow (TCP) probes */
	int64_t udp_blocked_ns;        /* when UDP replies stopped (the last one); 0: blocked
					* from the start, or not blocked */
	double worst_increase_ms;      /* the loaded phases' largest latency increase (grade_overall's); NaN if none */
	double shaper_down_mbps, shaper_up_mbps; /* SQM/cake advice: 90 % of the IP-level rate */

	char warnings[16][320];
	int nwarnings;

	int http;                      /* HTTP mode: no bloatmeterd, so no one-way delays, loss
					* split, server stamps or server-side TCP figures */
	int lab;                       /* lab mode: truth is valid */
	struct lab_truth truth;

	const struct fleet *fleet;     /* --servers/--server-list: how the server was chosen (the
					* caller owns it); NULL for a single server */

	uint64_t server_max_rate_bps;  /* the server's bulk rate cap per direction (welcome);
					* 0 = none */
	struct tls_load_report tls_load; /* --tls-load (client/run/load.c) */

	/* How the run ended: complete, or partial after a failure mid-run (the server died, the
	 * path went dark, an interrupt): what was measured up to then is kept and reported, the
	 * phase that was running closed at the failure. */
	int partial;
	char error[256];               /* one sentence: why the run stopped ("" when complete) */
	int aborted_phase;             /* enum phase_kind running at the failure, -1: a gap */
	int64_t aborted_ns;            /* when (client clock) */

	/* --per-hop: the TTL-limited samples and what the analysis made of them. */
	struct hop_trace hop_trace;
	struct hop_result hops;
};

void result_init(struct test_result *r, const struct client_config *cfg);
void result_free(struct test_result *r);
/* The first phase of kind k that ran, or NULL. */
const struct phase_result *result_find_phase(const struct test_result *r, enum phase_kind k);
/* The congestion control one end ran (server_end: the server's, which sends the download):
 * the name it reported, else the requested one if it set that without naming it, else NULL
 * (the request failed there and the system default ran). */
const char *result_cc_used(const struct test_result *r, int server_end);
/* Whether that end was asked to set the requested congestion control: not the server's in
 * the HTTP mode (no request reaches it), whose ok flag then says nothing. */
int result_cc_asked(const struct test_result *r, int server_end);
/* Probes that got a valid reply. */
size_t result_replies(const struct test_result *r);
/* A new series slot (series_init'ed), or NULL when all RESULT_MAX_SERIES are used. */
struct probe_series *result_add_series(struct test_result *r, const char *name,
					const char *target);
/* The series of that name, or NULL; *index receives its slot when index is not NULL. */
const struct probe_series *result_find_series(const struct test_result *r, const char *name,
					      int *index);
/* Start of the window a phase's latency figures use: the steady window of a loaded phase
 * (its second half if never saturated), the whole idle phase. */
int64_t result_window_start(const struct phase_result *ph);

/* Marks r partial: the run stopped at now_ns for why, during phase k (-1: between phases). */
void result_abort(struct test_result *r, int k, int64_t now_ns, const char *why);
/* When the last UDP probe reply arrived (client clock), at or before the abort when partial:
 * where an outage began as the client saw it. -1 when no reply came. */
int64_t result_last_reply_ns(const struct test_result *r);
/* The direction the aborted phase loaded: "down", "up", "both" or "none" (idle, a gap). */
const char *result_aborted_direction(const struct test_result *r);
/* "complete" or "partial". */
const char *result_status(const struct test_result *r);
/* Adds a one-sentence warning shown in text and JSON output. */
void result_warn(struct test_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif

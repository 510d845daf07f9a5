/* probebudget: what the probes cost on the wire, and the intervals that keep them within a
 * share of each direction's capacity (issue 15: probes must not steal the link they measure).
 * Pure arithmetic on IP bytes (headers included): client/run/probeadapt.c chooses intervals
 * with it once a loaded phase shows its rate, client/analysis reports each phase's probe
 * traffic with it. */
#ifndef BM_PROBEBUDGET_H
#define BM_PROBEBUDGET_H

/* Every probe kind with an interval of its own. In-flow probes ride on the load flows: one
 * request per interval and loaded direction. */
enum budget_kind {
	BUDGET_UDP = 0, BUDGET_ICMP, BUDGET_DNS, BUDGET_TCP, BUDGET_INFLOW, BUDGET_HOP, BUDGET_KINDS
};

/* --per-hop: one TTL-limited probe every 50 ms over all hops (20 packets/s, ~10 kbit/s). */
#define BUDGET_HOP_BASE_MS 50.0
/* Probe traffic of all kinds together stays within this share of each direction's rate. */
#define BUDGET_SHARE 0.02
/* The floor (the longest interval the budget may set), from the phase length L:
 * UDP, whose samples make the buffer estimate: ≥ 100 samples per phase, so the phase's p99
 * is an observed sample (L / 100), and ≥ 10 per second for each 1 s maximum (100 ms);
 * the other kinds: ≥ 20 samples per phase for their p50 and the RPM's trimmed mean
 * (L / 20), and at least one a second. Never shorter than the configured interval. */
#define BUDGET_UDP_PHASE_SAMPLES 100.0
#define BUDGET_UDP_MAX_MS 100.0
#define BUDGET_AUX_PHASE_SAMPLES 20.0
#define BUDGET_AUX_MAX_MS 1000.0

/* What runs: streams of each kind (ICMP: one per target, DNS: one per server, 0: off), the
 * loaded directions' in-flow probes, the UDP datagram size, the IP header size. */
struct budget_mix {
	int streams[BUDGET_KINDS];
	int inflow_dir[2];          /* in-flow probes on download [0] / upload [1] flows */
	double udp_size;            /* UDP payload bytes */
	int ip_hdr;                 /* 20 (IPv4) or 40 (IPv6) */
	double base_ms[BUDGET_KINDS]; /* configured intervals */
};

/* IP bytes one probe of kind k costs: out[0] downstream, out[1] upstream. In-flow: one
 * request on a download flow (up_flow 0) or on an upload flow (1); budget_probe_bytes sums
 * the loaded directions. */
void budget_probe_bytes(const struct budget_mix *m, enum budget_kind k, double out[2]);
void budget_inflow_bytes(int ip_hdr, int up_flow, double out[2]);
/* Probe traffic in bit/s each way ([0] down, [1] up) at the intervals ms. */
void budget_bps(const struct budget_mix *m, const double ms[BUDGET_KINDS], double bps[2]);
/* The floor of kind k in a phase of phase_s seconds: its longest allowed interval (ms). */
double budget_ceiling_ms(const struct budget_mix *m, enum budget_kind k, double phase_s);
/* Intervals (ms, ≥ the configured ones) scaled together, the smallest scale that keeps the
 * probes within share × cap_bps each way (a cap ≤ 0 or NAN is unknown: no limit), each kind
 * at most at its floor. Returns 1 when the floor binds (even at the floor the probes exceed
 * the share), else 0; *scale is the common factor (the floor's when it binds). */
int budget_fit(const struct budget_mix *m, const double cap_bps[2], double share, double phase_s,
	       double ms[BUDGET_KINDS], double *scale);

#endif

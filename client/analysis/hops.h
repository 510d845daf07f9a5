/* hops: per-hop latency under load, from TTL-limited probes. Summarises each hop's idle and
 * loaded round trips and reply loss, and locates the queue: the first hop whose increase
 * persists to every later hop, as mtr users read a trace; a hop whose own replies are slow or
 * lost while later hops are fine rate-limits or deprioritises ICMP generation instead. Pure
 * functions; called by the run's analysis and its unit tests. */
#ifndef BM_HOPS_H
#define BM_HOPS_H

#include <stddef.h>

#define HOPS_MAX 32
#define HOPS_PHASES_MAX 4
#define HOPS_ADDR_LEN 46        /* INET6_ADDRSTRLEN */
#define HOPS_MIN_INCREASE_MS 5.0 /* smaller rises are host and scheduling noise */

/* One hop in one phase: the median RTT of its replies (NAN if none) and the counts. */
struct hop_sample {
	double rtt_ms;
	unsigned sent, replies;
};

/* One hop's measurements; addr is empty when no reply ever came ("*" in traceroute). */
struct hop_in {
	char addr[HOPS_ADDR_LEN];
	struct hop_sample idle;
	struct hop_sample loaded[HOPS_PHASES_MAX];
};

/* What the analysis derives per hop, for each loaded phase. */
struct hop_out {
	double increase_ms[HOPS_PHASES_MAX]; /* loaded − idle median, NAN without both */
	double loss_pct[HOPS_PHASES_MAX];    /* replies missing, NAN if nothing was sent */
	double idle_loss_pct;
	int icmp_limited; /* own replies slow or lost while later hops are fine */
};

/* The verdict. first_hop is the 1-based hop where the increase first appears and persists
 * (0: none found); the queue sits on the link between first_hop − 1 (0: this host) and it. */
struct hops_verdict {
	int first_hop;
	int phase;          /* the loaded phase judged: the one with the largest rise at the end */
	double increase_ms; /* first_hop's increase in that phase */
	char text[256];     /* "the queue builds between hop 2 (198.51.100.1) and hop 3 (...)" */
	char evidence[512]; /* the numbers behind it, including rate-limiting hops */
};

/* Analyses n hops (≤ HOPS_MAX, in TTL order, the last being the server) over nphases phases
 * (≤ HOPS_PHASES_MAX; a phase nothing was sent in is skipped, so the idle one may take a slot);
 * names[p] names phase p in the evidence (NULL: "phase p+1"); out has n entries. */
void hops_analyse(const struct hop_in *in, size_t n, size_t nphases, const char *const *names,
		  struct hop_out *out, struct hops_verdict *v);

#endif

/* hopresult: the per-hop part of the result model (--per-hop): the raw TTL-limited samples the
 * run fills, and the per-hop figures and queue location the analysis derives from them. The
 * run, the analysis and the report read and write it; nothing else. */
#ifndef BM_HOPRESULT_H
#define BM_HOPRESULT_H

#include "client/model/config.h"
#include "probes/hopprobe.h"

#define HOP_ADDR_LEN 46 /* INET6_ADDRSTRLEN */

/* One hop: NAN where there is no figure (no replies, or the phase did not run). */
struct hop_row {
	char addr[HOP_ADDR_LEN];            /* "" when no reply ever came */
	double idle_ms;                     /* median RTT in the idle phase */
	double idle_loss_pct;
	double loaded_ms[PHASE_KINDS];      /* median RTT in each phase's steady window */
	double increase_ms[PHASE_KINDS];    /* loaded − idle */
	double loss_pct[PHASE_KINDS];       /* replies missing */
	int icmp_limited;                   /* slow or lost own replies, later hops fine */
};

struct hop_result {
	int ran;                            /* --per-hop was asked for and the probe ran */
	int n;                              /* hops reported: 1 … the server's hop count */
	struct hop_row row[HOPPROBE_MAX_TTL];
	int queue_hop;                      /* 1-based hop where the rise first appears; 0 none */
	int queue_phase;                    /* enum phase_kind judged, -1 none */
	double queue_increase_ms;
	char verdict[256];
	char evidence[512];
};

#endif

/* liveness: whether the server is still heard during a run — control frames, UDP probe replies
 * or download bytes, whichever comes — so that a path gone dark ends the run within
 * LIVENESS_OUTAGE_NS instead of at the end of its phase; and whether UDP alone went silent
 * while TCP is still heard (a path that starts dropping UDP mid-run). Pure bookkeeping on
 * counters the caller reads; called by client/run/measure.c on its event loop only. Layer:
 * client/run. */
#ifndef BM_RUN_LIVENESS_H
#define BM_RUN_LIVENESS_H

#include <stdint.h>

/* Nothing from the server for this long is an outage. Longer than any queue we measure
 * delays a control frame (the download's bytes and the probes keep coming through a bloated
 * queue: only a dead path or server silences all three). */
#define LIVENESS_OUTAGE_NS (5 * 1000000000LL)
/* UDP replies stopped this long ago, with at least LIVENESS_UDP_MIN_SENT probes sent since,
 * while TCP was heard within it: UDP is blocked. Even a queue of seconds delivers replies
 * continuously; tail drop loses a few per cent of them, not all for 3 s. */
#define LIVENESS_UDP_SILENT_NS (3 * 1000000000LL)
#define LIVENESS_UDP_MIN_SENT 20

struct liveness {
	int64_t start_ns;       /* the run's start */
	int64_t last_ns;        /* the last sign of life on any channel */
	int64_t tcp_last_ns;    /* the last control frame or download bytes */
	int64_t udp_last_ns;    /* the last new UDP reply */
	uint64_t ctrl_frames, udp_replies, down_bytes; /* the counts seen so far */
	uint64_t udp_sent, udp_sent_at_reply; /* probes sent so far, and when the last reply came */
};

/* The counts a tick reads (each only grows). */
struct liveness_counts {
	uint64_t ctrl_frames, udp_replies, udp_sent, down_bytes;
};

void liveness_init(struct liveness *l, int64_t now_ns);
/* The counters now; a change of a server's count is a sign of life at now_ns. */
void liveness_update(struct liveness *l, int64_t now_ns, const struct liveness_counts *c);
/* 1 when nothing came for LIVENESS_OUTAGE_NS; the outage began at l->last_ns. */
int liveness_outage(const struct liveness *l, int64_t now_ns);
/* 1 when UDP replies came earlier in the run but stopped (see LIVENESS_UDP_SILENT_NS) while
 * TCP is still heard; they stopped at l->udp_last_ns. */
int liveness_udp_silent(const struct liveness *l, int64_t now_ns);

#endif

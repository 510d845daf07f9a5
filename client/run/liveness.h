/* liveness: whether the server is still heard during a run — control frames, UDP probe replies
 * or download bytes, whichever comes — so that a path gone dark ends the run within
 * LIVENESS_OUTAGE_NS instead of at the end of its phase. Pure bookkeeping on counters the
 * caller reads; called by client/run/measure.c on its event loop only. Layer: client/run. */
#ifndef BM_RUN_LIVENESS_H
#define BM_RUN_LIVENESS_H

#include <stdint.h>

/* Nothing from the server for this long is an outage. Longer than any queue we measure
 * delays a control frame (the download's bytes and the probes keep coming through a bloated
 * queue: only a dead path or server silences all three). */
#define LIVENESS_OUTAGE_NS (5 * 1000000000LL)

struct liveness {
	int64_t start_ns;       /* the run's start */
	int64_t last_ns;        /* the last sign of life on any channel */
	uint64_t ctrl_frames, udp_replies, down_bytes; /* the counts seen so far */
};

void liveness_init(struct liveness *l, int64_t now_ns);
/* The counters now (each only grows); a change is a sign of life at now_ns. */
void liveness_update(struct liveness *l, int64_t now_ns, uint64_t ctrl_frames,
		     uint64_t udp_replies, uint64_t down_bytes);
/* 1 when nothing came for LIVENESS_OUTAGE_NS; the outage began at l->last_ns. */
int liveness_outage(const struct liveness *l, int64_t now_ns);

#endif

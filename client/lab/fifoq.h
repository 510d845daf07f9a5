/* fifoq: the lab bottleneck's packet queue — a bounded ring of packets with a byte limit and
 * tail-drop when full. Owns the packets it holds. Pure; called by the lab shaper loop and by
 * the AQMs (codel) that dequeue from it. */
#ifndef BM_LAB_FIFOQ_H
#define BM_LAB_FIFOQ_H

#include <stddef.h>
#include <stdint.h>

#include "client/lab/pkt.h"

struct lab_pkt {
	uint64_t enq_ns;           /* when the packet joined the queue (monotonic) */
	uint32_t len;
	uint8_t data[LAB_PKT_MAX];
};

struct fifoq {
	struct lab_pkt **ring;
	size_t cap;                /* slots */
	size_t head, count;
	uint64_t bytes;            /* bytes queued now */
	uint64_t limit;            /* byte limit: rate × buffer */
	uint64_t tail_drops;
};

/* A queue of at most cap packets and limit bytes. Returns 0, or -1 without memory. */
int fifoq_init(struct fifoq *q, size_t cap, uint64_t limit);
void fifoq_free(struct fifoq *q);

/* Appends p (the queue takes it) stamped with now_ns. Returns 0, or -1 when it would pass the
 * byte or slot limit: then p is freed and counted as a tail drop. */
int fifoq_push(struct fifoq *q, struct lab_pkt *p, uint64_t now_ns);

/* Removes the oldest packet (the caller takes it), or NULL when empty. */
struct lab_pkt *fifoq_pop(struct fifoq *q);

#endif

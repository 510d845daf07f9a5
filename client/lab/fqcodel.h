/* fqcodel: FQ-CoDel, RFC 8290 — packets hashed to flow queues, served by deficit round robin
 * with a quantum, new flows (sparse ones) ahead of old ones, CoDel on each flow, and overflow
 * dropped from the fattest flow. Flows find their queue in an 8-way set-associative table, as
 * cake does, so that a few flows never share a queue by hash chance (Linux fq_codel's direct
 * hash puts a sparse flow behind one of 8 bulk flows in about 0.8 % of runs, which makes a lab
 * verdict a lottery). Pure (time passed in); called by the lab shaper loop. */
#ifndef BM_LAB_FQCODEL_H
#define BM_LAB_FQCODEL_H

#include <stddef.h>
#include <stdint.h>

#include "client/lab/codel.h"
#include "client/lab/fifoq.h"

#define FQ_QUANTUM 1514   /* RFC 8290 section 4.1: one MTU */
#define FQ_WAYS 8         /* queues per set of the flow table */

struct fq_flow {
	struct fifoq q;
	struct codel cd;
	int32_t deficit;
	int list;          /* FQ_LIST_NONE, FQ_LIST_NEW or FQ_LIST_OLD */
	size_t next;       /* the next flow on the same list */
	uint32_t tag;      /* the full flow hash of the flow that holds this queue */
};

struct fq_list {
	size_t head, tail; /* flow indices; head == SIZE_MAX when empty */
};

struct fqcodel {
	struct fq_flow *flows;
	size_t nflows;
	struct fq_list new_flows, old_flows;
	uint64_t bytes, limit;   /* bytes queued in all flows, and their limit */
	uint32_t quantum;
	uint64_t overflow_drops; /* drops on a full queue (CoDel's are in each flow's cd) */
};

/* nflows queues, at most cap packets and limit bytes in all; per-flow CoDel with target,
 * interval and ecn. Returns 0, or -1 without memory. */
int fqcodel_init(struct fqcodel *f, size_t nflows, size_t cap, uint64_t limit,
		 uint64_t target_ns, uint64_t interval_ns, int ecn);
void fqcodel_free(struct fqcodel *f);

/* Queues p (the queue takes it) in its flow's queue; on overflow drops from the fattest flow. */
void fqcodel_enqueue(struct fqcodel *f, struct lab_pkt *p, uint64_t now_ns);

/* The next packet to send (the caller takes it), or NULL when every flow is empty. */
struct lab_pkt *fqcodel_dequeue(struct fqcodel *f, uint64_t now_ns);

/* CoDel drops and marks summed over the flows. */
uint64_t fqcodel_codel_drops(const struct fqcodel *f);
uint64_t fqcodel_codel_marks(const struct fqcodel *f);

#endif

/* bneck: one direction of the lab's userspace bottleneck — a queue discipline (tail-drop FIFO,
 * CoDel, FQ-CoDel or PIE, optionally CE-marking), the token bucket that drains it at the link
 * rate, and a delay line that holds each packet that left the bottleneck for a fixed one-way
 * delay. Owns the packets inside it. Pure (time passed in, monotonic ns); called by the TUN
 * forwarder (tunfwd) and its tests. */
#ifndef BM_LAB_BNECK_H
#define BM_LAB_BNECK_H

#include <stdint.h>

#include "client/lab/codel.h"
#include "client/lab/fifoq.h"
#include "client/lab/fqcodel.h"
#include "client/lab/pie.h"
#include "client/lab/shaper.h"
#include "client/lab/sojlog.h"

enum bneck_qdisc { BNECK_FIFO, BNECK_CODEL, BNECK_FQCODEL, BNECK_PIE, BNECK_QDISCS };

#define BNECK_FQ_FLOWS 1024         /* RFC 8290 section 5.1's default flow count */
#define BNECK_MIN_PKT 40            /* an IPv4 TCP ACK: sizes the queues' slot counts */
#define BNECK_MAX_DELAY_NS (1000 * 1000000ull)

struct bneck_params {
	enum bneck_qdisc qdisc;
	uint64_t rate_bps;          /* IP bytes × 8 per second: the TUN carries no link header */
	uint64_t burst;             /* token bucket depth, bytes */
	uint64_t limit;             /* queue byte limit: rate × buffer */
	int ecn;                    /* AQMs CE-mark ECT packets instead of dropping them */
	uint64_t delay_ns;          /* one-way delay after the bottleneck, <= BNECK_MAX_DELAY_NS */
	uint64_t seed;              /* PIE's random drops */
};

struct bneck {
	struct bneck_params prm;
	struct shaper sh;
	struct fifoq q;             /* FIFO, CoDel and PIE queue */
	struct codel cd;
	struct pie pie;
	struct fqcodel fq;
	struct lab_pkt *head;       /* CoDel/FQ-CoDel: dequeued, waiting for the link's credit */
	struct fifoq line;          /* the delay line, in departure order */
	uint64_t in, out, line_drops;
	struct sojlog *sojourns;    /* NULL, or where each departing packet's sojourn is logged */
};

/* What the bottleneck did so far, for the lab's truth. */
struct bneck_counts {
	uint64_t in, out;           /* packets taken, packets sent on into the delay line */
	uint64_t tail_drops;        /* the queue (or an FQ-CoDel flow) was full */
	uint64_t aqm_drops, marks;  /* the AQM's drops and CE marks */
	uint64_t line_drops;        /* the delay line was full */
};

/* Returns 0, or -1 without memory (then nothing is held). */
int bneck_init(struct bneck *b, const struct bneck_params *prm, uint64_t now_ns);
void bneck_free(struct bneck *b);

/* A packet arrives (the bottleneck takes it; it may drop it at once). */
void bneck_enqueue(struct bneck *b, struct lab_pkt *p, uint64_t now_ns);

/* Sends into the delay line whatever the link's credit allows by now_ns (logging each packet's
 * sojourn, arrival to now_ns, in b->sojourns when set). Returns when it should run next: the time the next queued packet may leave, or UINT64_MAX with the queue empty. */
uint64_t bneck_drain(struct bneck *b, uint64_t now_ns);

/* The next packet whose delay has passed by now_ns (the caller takes it), or NULL. */
struct lab_pkt *bneck_release(struct bneck *b, uint64_t now_ns);

/* When the delay line next releases a packet, or UINT64_MAX when it is empty. */
uint64_t bneck_next_release(const struct bneck *b);

/* Drops at the bottleneck so far: tail drops, AQM drops and delay-line overflows. */
uint64_t bneck_drops(const struct bneck *b);

void bneck_counts(const struct bneck *b, struct bneck_counts *out);

#endif

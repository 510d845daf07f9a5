/* codel: CoDel, RFC 8289, as the RFC's pseudo-code (section 5) runs it — drop (or, with ECN,
 * CE-mark) at the head of a fifoq once the sojourn time has stayed at or above target for an
 * interval, then at intervals shrinking as interval/sqrt(count). Pure (time passed in); called
 * by the lab shaper loop and, per flow, by fqcodel. */
#ifndef BM_LAB_CODEL_H
#define BM_LAB_CODEL_H

#include <stdint.h>

#include "client/lab/fifoq.h"

#define CODEL_TARGET_NS 5000000ull     /* RFC 8289 section 4.4 */
#define CODEL_INTERVAL_NS 100000000ull /* RFC 8289 section 4.3 */
#define CODEL_MAXPACKET 1514u          /* one MTU: never drop the last packet */

struct codel {
	uint64_t target_ns, interval_ns;
	int ecn;                    /* CE-mark ECT packets instead of dropping them */
	uint64_t first_above_time;  /* 0 = sojourn below target */
	uint64_t drop_next;
	uint32_t count, lastcount;
	int dropping;
	uint64_t drops, marks;      /* totals, for the lab's truth */
};

void codel_init(struct codel *c, uint64_t target_ns, uint64_t interval_ns, int ecn);

/* The packet to send at now_ns from q (the caller takes it), or NULL when q is empty. Packets
 * CoDel drops are freed here and counted in c->drops; marked ones in c->marks. */
struct lab_pkt *codel_dequeue(struct codel *c, struct fifoq *q, uint64_t now_ns);

/* RFC 8289's control law: t + interval / sqrt(count). */
uint64_t codel_control_law(const struct codel *c, uint64_t t, uint32_t count);

#endif

/* fifoq: bounded tail-drop packet queue (see fifoq.h). */
#include "client/lab/fifoq.h"

#include <stdlib.h>

int fifoq_init(struct fifoq *q, size_t cap, uint64_t limit)
{
	q->ring = calloc(cap ? cap : 1, sizeof(*q->ring));
	if (q->ring == NULL)
		return -1;
	q->cap = cap ? cap : 1;
	q->head = 0;
	q->count = 0;
	q->bytes = 0;
	q->limit = limit;
	q->tail_drops = 0;
	return 0;
}

void fifoq_free(struct fifoq *q)
{
	struct lab_pkt *p;

	while ((p = fifoq_pop(q)) != NULL)
		free(p);
	free(q->ring);
	q->ring = NULL;
}

int fifoq_push(struct fifoq *q, struct lab_pkt *p, uint64_t now_ns)
{
	if (q->count == q->cap || q->bytes + p->len > q->limit) {
		q->tail_drops++;
		free(p);
		return -1;
	}
	p->enq_ns = now_ns;
	q->ring[(q->head + q->count) % q->cap] = p;
	q->count++;
	q->bytes += p->len;
	return 0;
}

struct lab_pkt *fifoq_pop(struct fifoq *q)
{
	struct lab_pkt *p;

	if (q->count == 0)
		return NULL;
	p = q->ring[q->head];
	q->head = (q->head + 1) % q->cap;
	q->count--;
	q->bytes -= p->len;
	return p;
}

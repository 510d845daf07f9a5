/* fqcodel: RFC 8290 FQ-CoDel (see fqcodel.h); the scheduler follows section 4. */
#include "client/lab/fqcodel.h"

#include <stdlib.h>

enum { FQ_LIST_NONE, FQ_LIST_NEW, FQ_LIST_OLD };

static void fq_list_push(struct fqcodel *f, struct fq_list *l, size_t i, int which)
{
	f->flows[i].next = SIZE_MAX;
	f->flows[i].list = which;
	if (l->head == SIZE_MAX)
		l->head = i;
	else
		f->flows[l->tail].next = i;
	l->tail = i;
}

static size_t fq_list_pop(struct fqcodel *f, struct fq_list *l)
{
	size_t i = l->head;

	l->head = f->flows[i].next;
	f->flows[i].list = FQ_LIST_NONE;
	return i;
}

int fqcodel_init(struct fqcodel *f, size_t nflows, size_t cap, uint64_t limit,
		 uint64_t target_ns, uint64_t interval_ns, int ecn)
{
	*f = (struct fqcodel){0};
	f->flows = calloc(nflows ? nflows : 1, sizeof(*f->flows));
	if (f->flows == NULL)
		return -1;
	f->nflows = nflows ? nflows : 1;
	for (size_t i = 0; i < f->nflows; i++) {
		/* Each flow may hold the whole buffer; the shared limit is enforced here. */
		if (fifoq_init(&f->flows[i].q, cap, limit) != 0) {
			f->nflows = i;
			fqcodel_free(f);
			return -1;
		}
		codel_init(&f->flows[i].cd, target_ns, interval_ns, ecn);
	}
	f->new_flows.head = f->old_flows.head = SIZE_MAX;
	f->limit = limit;
	f->quantum = FQ_QUANTUM;
	return 0;
}

void fqcodel_free(struct fqcodel *f)
{
	for (size_t i = 0; i < f->nflows; i++)
		fifoq_free(&f->flows[i].q);
	free(f->flows);
	f->flows = NULL;
	f->nflows = 0;
}

/* RFC 8290 section 4.1.1: on overflow, drop from the head of the flow with the largest backlog. */
static void fq_drop_fattest(struct fqcodel *f)
{
	size_t fat = 0;
	struct lab_pkt *p;

	for (size_t i = 1; i < f->nflows; i++)
		if (f->flows[i].q.bytes > f->flows[fat].q.bytes)
			fat = i;
	p = fifoq_pop(&f->flows[fat].q);
	if (p == NULL)
		return;
	f->bytes -= p->len;
	f->overflow_drops++;
	free(p);
}

/* A queue is free when it is empty and on neither list. */
static int fq_free(const struct fq_flow *fl)
{
	return fl->list == FQ_LIST_NONE && fl->q.count == 0;
}

/* The queue of the flow with this hash: the one of its set that holds it, else a free one of
 * the set (which it takes), else the one its hash names, shared (every way busy). */
static size_t fq_queue_of(struct fqcodel *f, uint32_t hash)
{
	size_t ways = f->nflows < FQ_WAYS ? f->nflows : FQ_WAYS;
	size_t base = hash % (f->nflows / ways) * ways;
	size_t free_i = SIZE_MAX;

	for (size_t w = 0; w < ways; w++) {
		struct fq_flow *fl = &f->flows[base + w];

		if (fl->tag == hash && !fq_free(fl))
			return base + w;
		if (free_i == SIZE_MAX && fq_free(fl))
			free_i = base + w;
	}
	if (free_i == SIZE_MAX)
		return base + hash / (f->nflows / ways) % ways;
	f->flows[free_i].tag = hash;
	return free_i;
}

void fqcodel_enqueue(struct fqcodel *f, struct lab_pkt *p, uint64_t now_ns)
{
	struct pkt_info pi;
	size_t i = 0;
	uint32_t len = p->len;

	if (pkt_parse(p->data, p->len, &pi) == 0)
		i = fq_queue_of(f, pi.flow_hash);
	if (fifoq_push(&f->flows[i].q, p, now_ns) != 0) {
		f->overflow_drops++;
		return;
	}
	f->bytes += len;
	if (f->flows[i].list == FQ_LIST_NONE) {
		f->flows[i].deficit = (int32_t)f->quantum;
		fq_list_push(f, &f->new_flows, i, FQ_LIST_NEW);
	}
	while (f->bytes > f->limit)
		fq_drop_fattest(f);
}

/* CoDel on flow i; keeps the shared byte count in step with what it took off the queue. */
static struct lab_pkt *fq_flow_dequeue(struct fqcodel *f, size_t i, uint64_t now_ns)
{
	uint64_t before = f->flows[i].q.bytes;
	struct lab_pkt *p = codel_dequeue(&f->flows[i].cd, &f->flows[i].q, now_ns);

	f->bytes -= before - f->flows[i].q.bytes;
	return p;
}

struct lab_pkt *fqcodel_dequeue(struct fqcodel *f, uint64_t now_ns)
{
	for (;;) {
		struct fq_list *l = f->new_flows.head != SIZE_MAX ? &f->new_flows : &f->old_flows;
		struct lab_pkt *p;
		size_t i;

		if (l->head == SIZE_MAX)
			return NULL;
		i = l->head;
		if (f->flows[i].deficit <= 0) {
			f->flows[i].deficit += (int32_t)f->quantum;
			fq_list_pop(f, l);
			fq_list_push(f, &f->old_flows, i, FQ_LIST_OLD);
			continue;
		}
		p = fq_flow_dequeue(f, i, now_ns);
		if (p == NULL) {
			/* An emptied new flow goes to the old list once, so it cannot re-enter as new
			 * at once (RFC 8290 section 4.2); an emptied old flow leaves. */
			fq_list_pop(f, l);
			if (l == &f->new_flows && f->old_flows.head != SIZE_MAX)
				fq_list_push(f, &f->old_flows, i, FQ_LIST_OLD);
			continue;
		}
		f->flows[i].deficit -= (int32_t)p->len;
		return p;
	}
}

uint64_t fqcodel_codel_drops(const struct fqcodel *f)
{
	uint64_t n = 0;

	for (size_t i = 0; i < f->nflows; i++)
		n += f->flows[i].cd.drops;
	return n;
}

uint64_t fqcodel_codel_marks(const struct fqcodel *f)
{
	uint64_t n = 0;

	for (size_t i = 0; i < f->nflows; i++)
		n += f->flows[i].cd.marks;
	return n;
}

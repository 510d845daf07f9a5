/* bneck: one direction of the userspace bottleneck (see bneck.h). */
#include "client/lab/bneck.h"

#include <stdlib.h>

/* FQ-CoDel's flow queues each get at most this many slots (Linux fq_codel holds 10240 packets
 * in all); their shared byte limit is the buffer, as for the other queues. */
#define BNECK_FQ_FLOW_SLOTS 1024
#define BNECK_LINE_SLACK 64

static size_t bneck_slots(uint64_t bytes)
{
	return (size_t)(bytes / BNECK_MIN_PKT) + 1;
}

static int bneck_init_qdisc(struct bneck *b, uint64_t now_ns)
{
	const struct bneck_params *p = &b->prm;
	size_t slots = bneck_slots(p->limit);

	switch (p->qdisc) {
	case BNECK_FQCODEL:
		return fqcodel_init(&b->fq, BNECK_FQ_FLOWS,
				    slots < BNECK_FQ_FLOW_SLOTS ? slots : BNECK_FQ_FLOW_SLOTS, p->limit,
				    CODEL_TARGET_NS, CODEL_INTERVAL_NS, p->ecn);
	case BNECK_CODEL:
		codel_init(&b->cd, CODEL_TARGET_NS, CODEL_INTERVAL_NS, p->ecn);
		break;
	case BNECK_PIE:
		pie_init(&b->pie, p->ecn, p->seed, now_ns);
		break;
	default:
		break;
	}
	return fifoq_init(&b->q, slots, p->limit);
}

int bneck_init(struct bneck *b, const struct bneck_params *prm, uint64_t now_ns)
{
	/* The delay line holds what the link sends in one delay, plus one burst. */
	uint64_t line_bytes = prm->rate_bps / 8 * (prm->delay_ns / 1000) / 1000000 + prm->burst;

	*b = (struct bneck){ .prm = *prm };
	shaper_init(&b->sh, prm->rate_bps, prm->burst, now_ns);
	if (bneck_init_qdisc(b, now_ns) != 0) {
		if (prm->qdisc == BNECK_FQCODEL)
			fqcodel_free(&b->fq);
		return -1;
	}
	if (fifoq_init(&b->line, bneck_slots(line_bytes) + BNECK_LINE_SLACK, UINT64_MAX) != 0) {
		bneck_free(b);
		return -1;
	}
	return 0;
}

void bneck_free(struct bneck *b)
{
	if (b->prm.qdisc == BNECK_FQCODEL)
		fqcodel_free(&b->fq);
	if (b->q.ring != NULL)
		fifoq_free(&b->q);
	if (b->line.ring != NULL)
		fifoq_free(&b->line);
	free(b->head);
	b->head = NULL;
}

void bneck_enqueue(struct bneck *b, struct lab_pkt *p, uint64_t now_ns)
{
	b->in++;
	switch (b->prm.qdisc) {
	case BNECK_FQCODEL:
		fqcodel_enqueue(&b->fq, p, now_ns);
		break;
	case BNECK_PIE:
		(void)pie_enqueue(&b->pie, &b->q, p, now_ns);
		break;
	default:
		/* A drop is counted in the queue's tail_drops. */
		(void)fifoq_push(&b->q, p, now_ns);
		break;
	}
}

/* The packet the link sends next. FIFO and PIE leave it queued (it still counts against the
 * limit while it waits for credit, as tbf's child queue does); CoDel and FQ-CoDel decide at
 * dequeue time, so their packet is taken out and held. */
static struct lab_pkt *bneck_peek(struct bneck *b, uint64_t now_ns)
{
	switch (b->prm.qdisc) {
	case BNECK_CODEL:
		if (b->head == NULL)
			b->head = codel_dequeue(&b->cd, &b->q, now_ns);
		return b->head;
	case BNECK_FQCODEL:
		if (b->head == NULL)
			b->head = fqcodel_dequeue(&b->fq, now_ns);
		return b->head;
	default:
		return b->q.count ? b->q.ring[b->q.head] : NULL;
	}
}

static void bneck_take(struct bneck *b)
{
	if (b->prm.qdisc == BNECK_CODEL || b->prm.qdisc == BNECK_FQCODEL)
		b->head = NULL;
	else
		(void)fifoq_pop(&b->q);
}

uint64_t bneck_drain(struct bneck *b, uint64_t now_ns)
{
	struct lab_pkt *p;

	while ((p = bneck_peek(b, now_ns)) != NULL) {
		uint64_t wait = shaper_take(&b->sh, now_ns, p->len);

		if (wait > 0)
			return now_ns + wait;
		bneck_take(b);
		if (b->sojourns != NULL)
			sojlog_add(b->sojourns, now_ns, now_ns - p->enq_ns);
		/* Stamped with its departure; the line frees and counts it if full. */
		if (fifoq_push(&b->line, p, now_ns) == 0)
			b->out++;
		else
			b->line_drops++;
	}
	return UINT64_MAX;
}

uint64_t bneck_next_release(const struct bneck *b)
{
	if (b->line.count == 0)
		return UINT64_MAX;
	return b->line.ring[b->line.head]->enq_ns + b->prm.delay_ns;
}

struct lab_pkt *bneck_release(struct bneck *b, uint64_t now_ns)
{
	if (bneck_next_release(b) > now_ns)
		return NULL;
	return fifoq_pop(&b->line);
}

uint64_t bneck_drops(const struct bneck *b)
{
	uint64_t n = b->q.tail_drops + b->line_drops;

	switch (b->prm.qdisc) {
	case BNECK_CODEL:
		return n + b->cd.drops;
	case BNECK_FQCODEL:
		return n + b->fq.overflow_drops + fqcodel_codel_drops(&b->fq);
	case BNECK_PIE:
		return n + b->pie.drops;
	default:
		return n;
	}
}

void bneck_counts(const struct bneck *b, struct bneck_counts *out)
{
	*out = (struct bneck_counts){ .in = b->in, .out = b->out, .tail_drops = b->q.tail_drops,
				      .line_drops = b->line_drops };
	switch (b->prm.qdisc) {
	case BNECK_CODEL:
		out->aqm_drops = b->cd.drops;
		out->marks = b->cd.marks;
		break;
	case BNECK_FQCODEL:
		out->tail_drops += b->fq.overflow_drops;
		out->aqm_drops = fqcodel_codel_drops(&b->fq);
		out->marks = fqcodel_codel_marks(&b->fq);
		break;
	case BNECK_PIE:
		out->aqm_drops = b->pie.drops;
		out->marks = b->pie.marks;
		break;
	default:
		break;
	}
}

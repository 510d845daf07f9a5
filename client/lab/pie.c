/* pie: RFC 8033 PIE (see pie.h); names follow the RFC's pseudo-code (appendix). */
#include "client/lab/pie.h"

#include <stdlib.h>

#include "client/lab/ecnmark.h"

#define PIE_MEAN_PKTSIZE 1500u

void pie_init(struct pie *p, int ecn, uint64_t seed, uint64_t now_ns)
{
	*p = (struct pie){0};
	p->qdelay_ref_ns = PIE_QDELAY_REF_NS;
	p->t_update_ns = PIE_T_UPDATE_NS;
	p->alpha = 0.125;
	p->beta = 1.25;
	p->ecn = ecn;
	p->burst_allowance_ns = PIE_MAX_BURST_NS;
	p->next_update_ns = now_ns + p->t_update_ns;
	p->rng = seed ? seed : 0x9e3779b97f4a7c15ull;
}

uint64_t pie_qdelay(const struct fifoq *q, uint64_t now_ns)
{
	const struct lab_pkt *h;

	if (q->count == 0)
		return 0;
	h = q->ring[q->head];
	return now_ns > h->enq_ns ? now_ns - h->enq_ns : 0;
}

/* RFC 8033 section 4.2: small probabilities move in small steps so PIE starts gently. */
static double pie_scale(double drop_prob, double p)
{
	if (drop_prob < 0.000001)
		return p / 2048;
	if (drop_prob < 0.00001)
		return p / 512;
	if (drop_prob < 0.0001)
		return p / 128;
	if (drop_prob < 0.001)
		return p / 32;
	if (drop_prob < 0.01)
		return p / 8;
	if (drop_prob < 0.1)
		return p / 2;
	return p;
}

static void pie_calculate(struct pie *p, uint64_t qdelay)
{
	double cur = (double)qdelay / 1e9, old = (double)p->qdelay_old_ns / 1e9;
	double ref = (double)p->qdelay_ref_ns / 1e9;
	double d = pie_scale(p->drop_prob, p->alpha * (cur - ref) + p->beta * (cur - old));

	/* Above 10 %, no step larger than 2 %; past 250 ms, 2 % more (RFC 8033 section 4.2). */
	if (p->drop_prob >= 0.1 && d > 0.02)
		d = 0.02;
	if (qdelay > 250000000ull)
		d += 0.02;
	p->drop_prob += d;
	if (qdelay == 0 && p->qdelay_old_ns == 0)
		p->drop_prob *= 0.98;
	if (p->drop_prob < 0)
		p->drop_prob = 0;
	if (p->drop_prob > 1)
		p->drop_prob = 1;
	p->burst_allowance_ns = p->burst_allowance_ns > p->t_update_ns ?
		p->burst_allowance_ns - p->t_update_ns : 0;
	if (p->drop_prob == 0 && qdelay < p->qdelay_ref_ns / 2 &&
	    p->qdelay_old_ns < p->qdelay_ref_ns / 2)
		p->burst_allowance_ns = PIE_MAX_BURST_NS;
	p->qdelay_old_ns = qdelay;
}

void pie_update(struct pie *p, const struct fifoq *q, uint64_t now_ns)
{
	uint64_t qdelay = pie_qdelay(q, now_ns);

	while (now_ns >= p->next_update_ns) {
		pie_calculate(p, qdelay);
		p->next_update_ns += p->t_update_ns;
	}
}

static double pie_random(struct pie *p)
{
	p->rng ^= p->rng << 13;
	p->rng ^= p->rng >> 7;
	p->rng ^= p->rng << 17;
	return (double)(p->rng >> 11) / 9007199254740992.0;
}

/* RFC 8033 section 4.1 drop_early(). */
static int pie_drop_early(struct pie *p, const struct fifoq *q)
{
	if (p->burst_allowance_ns > 0)
		return 0;
	if ((p->qdelay_old_ns < p->qdelay_ref_ns / 2 && p->drop_prob < 0.2) ||
	    q->bytes <= 2 * PIE_MEAN_PKTSIZE)
		return 0;
	return pie_random(p) < p->drop_prob;
}

int pie_enqueue(struct pie *p, struct fifoq *q, struct lab_pkt *pkt, uint64_t now_ns)
{
	pie_update(p, q, now_ns);
	if (pie_drop_early(p, q)) {
		if (!(p->ecn && p->drop_prob <= 0.1 && ecn_mark(pkt->data, pkt->len) == 1)) {
			p->drops++;
			free(pkt);
			return -1;
		}
		p->marks++;
	}
	return fifoq_push(q, pkt, now_ns);
}

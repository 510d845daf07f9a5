/* codel: RFC 8289 CoDel (see codel.h); names follow the RFC's pseudo-code. */
#include "client/lab/codel.h"

#include <math.h>
#include <stdlib.h>

#include "client/lab/ecnmark.h"

struct codel_dq {
	struct lab_pkt *p;
	int ok_to_drop;
};

void codel_init(struct codel *c, uint64_t target_ns, uint64_t interval_ns, int ecn)
{
	*c = (struct codel){0};
	c->target_ns = target_ns;
	c->interval_ns = interval_ns;
	c->ecn = ecn;
}

uint64_t codel_control_law(const struct codel *c, uint64_t t, uint32_t count)
{
	return t + (uint64_t)((double)c->interval_ns / sqrt((double)(count ? count : 1)));
}

/* RFC 8289 dodequeue(): the head packet and whether sojourn has been >= target an interval. */
static struct codel_dq codel_dodequeue(struct codel *c, struct fifoq *q, uint64_t now)
{
	struct codel_dq r = { fifoq_pop(q), 0 };
	uint64_t sojourn;

	if (r.p == NULL) {
		c->first_above_time = 0;
		return r;
	}
	sojourn = now > r.p->enq_ns ? now - r.p->enq_ns : 0;
	if (sojourn < c->target_ns || q->bytes <= CODEL_MAXPACKET) {
		c->first_above_time = 0;
	} else if (c->first_above_time == 0) {
		c->first_above_time = now + c->interval_ns;
	} else if (now >= c->first_above_time) {
		r.ok_to_drop = 1;
	}
	return r;
}

/* Signals congestion on p: 1 when it was CE-marked and is to be sent, 0 when it was dropped. */
static int codel_signal(struct codel *c, struct lab_pkt *p)
{
	if (c->ecn && ecn_mark(p->data, p->len) == 1) {
		c->marks++;
		return 1;
	}
	c->drops++;
	free(p);
	return 0;
}

/* The dropping state: drop at drop_next, then at control-law intervals, while ok_to_drop. */
static struct codel_dq codel_drop_loop(struct codel *c, struct fifoq *q, struct codel_dq r,
				       uint64_t now)
{
	if (!r.ok_to_drop)
		c->dropping = 0;
	while (c->dropping && now >= c->drop_next) {
		c->count++;
		if (codel_signal(c, r.p)) {
			/* A marked packet is sent: the next signal is due a control-law step on. */
			c->drop_next = codel_control_law(c, c->drop_next, c->count);
			return r;
		}
		r = codel_dodequeue(c, q, now);
		if (!r.ok_to_drop)
			c->dropping = 0;
		else
			c->drop_next = codel_control_law(c, c->drop_next, c->count);
	}
	return r;
}

/* Entering the dropping state: one signal, and count resumed when the last episode was recent. */
static struct codel_dq codel_enter(struct codel *c, struct fifoq *q, struct codel_dq r,
				   uint64_t now)
{
	uint32_t delta;

	if (!codel_signal(c, r.p))
		r = codel_dodequeue(c, q, now);
	c->dropping = 1;
	delta = c->count - c->lastcount;
	c->count = 1;
	/* A signed difference, as Linux's codel_time_before (the variant RFC 8289 section 5.5
	 * follows): a drop_next still ahead of now is a recent episode, not one 584 years ago. */
	if (delta > 1 && (int64_t)(now - c->drop_next) < (int64_t)(16 * c->interval_ns))
		c->count = delta;
	c->drop_next = codel_control_law(c, now, c->count);
	c->lastcount = c->count;
	return r;
}

struct lab_pkt *codel_dequeue(struct codel *c, struct fifoq *q, uint64_t now_ns)
{
	struct codel_dq r = codel_dodequeue(c, q, now_ns);

	if (r.p == NULL) {
		c->dropping = 0;
		return NULL;
	}
	if (c->dropping)
		r = codel_drop_loop(c, q, r, now_ns);
	else if (r.ok_to_drop)
		r = codel_enter(c, q, r, now_ns);
	return r.p;
}

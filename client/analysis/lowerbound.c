/* lowerbound: when a buffer estimate may be low, say so, and report the most the queue showed. */
#include "client/analysis/lowerbound.h"

#include <math.h>
#include <string.h>

/* Congestion controls whose target is a short queue: bbr (v1, v2, v3 as the kernel names
 * them) paces at the measured bottleneck rate; vegas, nv, cdg and lp back off on rising
 * delay. Their queue never reaches a tail-drop buffer's top except in start-up. */
int lowerbound_cc_short_queue(const char *cc)
{
	static const char *const names[] = { "vegas", "nv", "cdg", "lp" };

	if (cc == NULL)
		return 0;
	if (strncmp(cc, "bbr", 3) == 0)
		return 1;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(cc, names[i]) == 0)
			return 1;
	return 0;
}

struct estimate_ref {
	struct buffer_estimate *b;
	int up;
};

/* The direction, and the phase when it is the bidirectional one (its estimates come on top
 * of the single-direction phases', so a warning must say which it is about). */
static const char *link_name(int up, enum phase_kind k)
{
	if (k == PHASE_BIDIR)
		return up ? "uplink (bidirectional phase)" : "downlink (bidirectional phase)";
	return up ? "uplink" : "downlink";
}

/* The probes this direction lost were lost with the queue at its top (tail drop at a full
 * queue, however short): the estimate then is that top, whatever else dropped. */
static int drops_at_top(const struct loss_pattern *lp, const struct buffer_estimate *b)
{
	return lp->lost > 0 && !isnan(lp->q_before_ms) && lp->q_before_ms >= 0.8 * b->ms;
}

/* The queue verdict of the phase's direction names a FIFO (single-direction phases only). */
static int verdict_fifo(const struct test_result *r, const struct phase_result *ph, int up)
{
	const struct queue_verdict *v = NULL;

	if (ph->kind == PHASE_DOWNLOAD && !up)
		v = &r->queue_down;
	else if (ph->kind == PHASE_UPLOAD && up)
		v = &r->queue_up;
	return v != NULL && v->verdict != NULL && strcmp(v->verdict, "fifo") == 0;
}

/* The first piece of evidence that the queue stayed below its top, or NULL; the reason
 * names it, and a one-sentence warning explains it. */
static const char *lowerbound_evidence(struct test_result *r, const struct phase_result *ph,
				       int up, const struct buffer_estimate *b)
{
	const struct loss_pattern *lp = up ? &ph->loss_up : &ph->loss_down;
	/* The sending end's algorithm: the server sends the download, the client the upload. */
	const char *cc = result_cc_used(r, !up), *dir = link_name(up, ph->kind);

	if (!up && r->http && cc == NULL) {
		result_warn(r, "the HTTP server does not say which congestion control sends the download, and many use bbr, which keeps the queue short: the %s buffer is at least %.1f ms",
			    dir, fmax(b->ms, b->sustained_ms));
		return "unknown congestion control";
	}
	if (lowerbound_cc_short_queue(cc)) {
		result_warn(r, "%s keeps the queue short, so the %s buffer is at least %.1f ms; run with --cc cubic (as root) to see it",
			    cc, dir, fmax(b->ms, b->sustained_ms));
		return strncmp(cc, "bbr", 3) == 0 ? "bbr" : "delay-based congestion control";
	}
	if (lp->cls != NULL && strcmp(lp->cls, "random") == 0) {
		result_warn(r, "the %s lost packets at random, not at a full queue, so the queue seldom reached its top: the %s buffer is at least %.1f ms",
			    dir, dir, fmax(b->ms, b->sustained_ms));
		return "random loss";
	}
	if (b->managed && !drops_at_top(lp, b) && !verdict_fifo(r, ph, up)) {
		result_warn(r, "a managed queue (AQM) or a policer kept the %s queue short: the physical buffer is at least %.1f ms",
			    dir, fmax(b->ms, b->sustained_ms));
		return "managed queue";
	}
	if (b->unstable) {
		result_warn(r, "the top of the %s queue varied widely from second to second: the %s buffer is at least %.1f ms",
			    dir, dir, fmax(b->ms, b->sustained_ms));
		return "unstable";
	}
	return NULL;
}

/* A lower bound reports the highest sustained queue seen, bytes at the same rate. */
static void lowerbound_raise(struct buffer_estimate *b)
{
	if (!(b->sustained_ms > b->ms))
		return;
	if (b->ms > 0 && !isnan(b->bytes))
		b->bytes *= b->sustained_ms / b->ms;
	b->ms = b->sustained_ms;
}

void lowerbound_apply(struct test_result *r)
{
	struct estimate_ref est[] = {
		{ &r->buffer_down, 0 }, { &r->buffer_up, 1 },
		{ &r->buffer_bidir_down, 0 }, { &r->buffer_bidir_up, 1 },
	};

	for (size_t i = 0; i < sizeof(est) / sizeof(est[0]); i++) {
		struct buffer_estimate *b = est[i].b;
		const struct phase_result *ph = b->valid ? result_find_phase(r, b->phase) : NULL;
		const char *why;

		if (ph == NULL)
			continue;
		if (!b->lower_bound && (why = lowerbound_evidence(r, ph, est[i].up, b)) != NULL) {
			b->lower_bound = 1;
			b->lower_bound_why = why;
		}
		if (b->lower_bound)
			lowerbound_raise(b);
	}
}

/* queueverdict: FIFO, AQM, flow queuing, policer or unknown, from one loaded direction's figures.
 * The order matters: a tail-drop FIFO is recognised first by where it drops (at its top), so an
 * AQM verdict needs drops or marks far below the top — a FIFO is never called an AQM. */
#include "client/analysis/queueverdict.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define QV_FIFO_AT_TOP 0.8      /* q before losses ≥ this × top: the drops are at the top */
#define QV_AT_STANDING 1.25     /* q before losses ≤ this × the standing queue + 1 ms: dropped at */
#define QV_AT_STANDING_MS 1.0   /* the standing level, as an AQM does (a FIFO drops above it) */
#define QV_STANDING_MAX_MS 30.0 /* a queue standing higher than this is not managed */
#define QV_SPARSE_MS 3.0        /* the probes' queue under flow queuing (a sparse flow) */
#define QV_FLOW_RISE_MS 5.0     /* the load flows' own queue that flow queuing leaves them */
#define QV_NO_QUEUE_MS 5.0      /* q p95 below this: no queue formed */
#define QV_MIN_QUEUE_MS 1.0    /* a standing queue shorter than this, */
#define QV_MIN_QUEUE_PKTS 4.0  /* or than this many full-size packet times, is no queue */
#define QV_FULL_FLOOR 0.8       /* floor ≥ this × top: the queue never drained (an AQM drains */
#define QV_FULL_STANDING 0.85   /* it toward its target: floor/top 0.49-0.62 in the lab) */

static int64_t nonneg(int64_t v)
{
	return v > 0 ? v : 0;
}

static const char *qv_signal(const struct queueverdict_input *in)
{
	int drops = in->lost > 0 || in->retrans > 0, marks = in->ce > 0;

	if (drops && marks)
		return "drops+marks";
	return drops ? "drops" : marks ? "marks" : "none";
}

/* "12 probes lost, 340 retransmissions, 5000 CE marks" (the known, non-zero parts). */
static void qv_pattern(const struct queueverdict_input *in, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%zu probes lost, %lld retransmissions", in->lost,
			 (long long)nonneg(in->retrans));

	if (n > 0 && (size_t)n < len && in->ce > 0)
		snprintf(buf + n, len - (size_t)n, ", %lld CE marks", (long long)in->ce);
}

static void qv_set(struct queue_verdict *v, const char *verdict, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void qv_set(struct queue_verdict *v, const char *verdict, const char *fmt, ...)
{
	va_list ap;

	v->verdict = verdict;
	va_start(ap, fmt);
	(void)vsnprintf(v->evidence, sizeof(v->evidence), fmt, ap);
	va_end(ap);
}

/* Flow queuing: the probes (a sparse flow) see almost no queue while the load flows' own RTT
 * rises — the per-flow queues of fq_codel/cake. */
static int qv_fq(const struct queueverdict_input *in)
{
	return in->q_p50_ms < QV_SPARSE_MS && isfinite(in->flow_q_ms) &&
	       in->flow_q_ms >= QV_FLOW_RISE_MS && in->flow_q_ms >= 3 * in->q_p50_ms + QV_SPARSE_MS;
}

/* Probes lost with the queue at its top. */
static int qv_drops_at_top(const struct queueverdict_input *in)
{
	return in->lost > 0 && isfinite(in->q_before_ms) && isfinite(in->top_ms) &&
	       in->q_before_ms >= QV_FIFO_AT_TOP * in->top_ms;
}

/* The queue stood at its top the whole time: its floor (or, unknown, its median) near the
 * top. A small FIFO limited in bytes drops the load's full-size segments but seldom a small
 * probe, so "drops at the top" may never be seen; an AQM would have drained the queue toward
 * its target instead. The top need only be a queue at all: a few packet times and a
 * millisecond — not QV_NO_QUEUE_MS, which called a full 5 ms FIFO at 500 Mbit/s (200 packets)
 * a policer (lab: top 4.95 ms, floor 4.53 ms). */
static int qv_full_standing(const struct queueverdict_input *in)
{
	double pkt_ms = in->rate_mbps > 0 ? 1514 * 8 / (in->rate_mbps * 1e3) : 0;

	if (!(in->top_ms >= QV_MIN_QUEUE_MS && in->top_ms >= QV_MIN_QUEUE_PKTS * pkt_ms))
		return 0;
	if (isfinite(in->floor_ms))
		return in->floor_ms >= QV_FULL_FLOOR * in->top_ms;
	return in->q_p50_ms >= QV_FULL_STANDING * in->top_ms;
}

/* Probes lost below the top, with the queue at its standing level: an AQM (CoDel, PIE) drops
 * whenever the queue stands above its target, not when it is full. */
static int qv_drops_at_standing(const struct queueverdict_input *in)
{
	return in->lost > 0 && isfinite(in->q_before_ms) && isfinite(in->top_ms) &&
	       in->q_before_ms < QV_FIFO_AT_TOP * in->top_ms &&
	       in->q_before_ms <= QV_AT_STANDING * in->q_p50_ms + QV_AT_STANDING_MS;
}

static void qv_managed(const struct queueverdict_input *in, struct queue_verdict *v,
		       const char *pattern)
{
	if (qv_drops_at_standing(in))
		qv_set(v, "aqm", "an AQM keeps the queue near %.1f ms (floor %.1f ms): the probes were lost with %.1f ms queued, below its top of %.1f ms (%s)",
		       in->q_p50_ms, in->floor_ms, in->q_before_ms, in->top_ms, pattern);
	else if (in->ce > 0 && in->lost == 0)
		qv_set(v, "aqm", "an AQM keeps the queue near %.1f ms and marks instead of dropping (%s; top %.1f ms)",
		       in->q_p50_ms, pattern, in->top_ms);
	else if (in->lost == 0)
		qv_set(v, "unknown", "the queue stood at %.1f ms (top %.1f ms) with %s, but no probe was lost to show where it drops",
		       in->q_p50_ms, in->top_ms, pattern);
	else
		qv_set(v, "unknown", "the probes were lost with %.1f ms queued, neither at the top (%.1f ms) nor at the standing queue (%.1f ms; %s)",
		       in->q_before_ms, in->top_ms, in->q_p50_ms, pattern);
}

void queueverdict_classify(const struct queueverdict_input *in, struct queue_verdict *v)
{
	char pattern[96];

	memset(v, 0, sizeof(*v));
	v->standing_ms = in->q_p50_ms;
	v->floor_ms = in->floor_ms;
	v->top_ms = in->top_ms;
	v->q_before_loss_ms = in->q_before_ms;
	v->flow_q_ms = in->flow_q_ms;
	v->probe_losses = in->lost;
	v->retrans = in->retrans;
	v->ce = in->ce;
	v->signal = qv_signal(in);
	qv_pattern(in, pattern, sizeof(pattern));
	if (!in->saturated)
		qv_set(v, "unknown", "the load never filled the link, so its queue was not seen");
	else if (!isfinite(in->q_p50_ms) || !isfinite(in->top_ms))
		qv_set(v, "unknown", "no queueing delay was measured");
	else if (qv_drops_at_top(in))
		qv_set(v, "fifo", "tail-drop FIFO of %.1f ms: the probes were lost with %.1f ms queued, at its top (%s)",
		       in->top_ms, in->q_before_ms, pattern);
	else if (in->q_p50_ms >= QV_STANDING_MAX_MS)
		qv_set(v, "fifo", "an unmanaged queue: it stood at %.1f ms (top %.1f ms) at full load (%s)",
		       in->q_p50_ms, in->top_ms, pattern);
	else if (qv_full_standing(in))
		qv_set(v, "fifo", "an unmanaged queue: it stood near its top of %.1f ms all the time (floor %.1f ms, median %.1f ms) at full load (%s)",
		       in->top_ms, in->floor_ms, in->q_p50_ms, pattern);
	else if (qv_fq(in))
		qv_set(v, "fq", "flow queuing: the probes queued %.1f ms while the load flows' own RTT rose %.1f ms (%s)",
		       in->q_p50_ms, in->flow_q_ms, pattern);
	else if (strcmp(v->signal, "none") == 0)
		qv_set(v, "unknown", "the queue stood at %.1f ms (top %.1f ms) with no drops or marks seen",
		       in->q_p50_ms, in->top_ms);
	else if (in->q_p95_ms < QV_NO_QUEUE_MS && in->ce <= 0)
		qv_set(v, "policer", "a policer: losses (%s) at %.1f Mbit/s with no queue (p95 %.1f ms)",
		       pattern, in->rate_mbps, in->q_p95_ms);
	else
		qv_managed(in, v, pattern);
}

/* verdict: the few lines every report starts with. */
#include "client/report/verdict.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "client/report/format.h"
#include "client/report/queuewords.h"
#include "common/clock.h"

static void verdict_add(struct verdict *v, const char *label, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void verdict_add(struct verdict *v, const char *label, const char *fmt, ...)
{
	va_list ap;

	if (v->n >= VERDICT_LINES)
		return;
	v->line[v->n].label = label;
	va_start(ap, fmt);
	vsnprintf(v->line[v->n].value, sizeof(v->line[v->n].value), fmt, ap);
	va_end(ap);
	v->n++;
}

/* "buffer ≥ 98.5 ms (241 kB)", or "buffer not measured". */
static void buffer_phrase(const struct buffer_estimate *b, char *buf, size_t len)
{
	char ms[16], bytes[24];

	if (!b->valid) {
		snprintf(buf, len, "buffer not measured");
		return;
	}
	snprintf(buf, len, "buffer %s%s ms (%s)", b->lower_bound ? "≥ " : "",
		 report_num(b->ms, 1, ms, sizeof(ms)), report_bytes(b->bytes, bytes, sizeof(bytes)));
}

/* "+48.2 ms" latency under this phase's load, or "latency not measured". */
static void increase_phrase(const struct phase_result *ph, char *buf, size_t len)
{
	if (isfinite(ph->latency_increase_ms))
		snprintf(buf, len, "%+.1f ms latency", report_nz(ph->latency_increase_ms, 1));
	else
		snprintf(buf, len, "latency not measured");
}

/* One loaded direction: its throughput, the latency its load added and its buffer. */
static void verdict_direction(const struct test_result *r, struct verdict *v, enum phase_kind k)
{
	const struct phase_result *ph = result_find_phase(r, k);
	int up = k == PHASE_UPLOAD;
	char mbps[16], inc[40], buf[64];

	if (ph == NULL)
		return;
	increase_phrase(ph, inc, sizeof(inc));
	buffer_phrase(up ? &r->buffer_up : &r->buffer_down, buf, sizeof(buf));
	verdict_add(v, up ? "Upload" : "Download", "%s Mbit/s%s, %s, %s",
		    report_num(up ? ph->up_mbps : ph->down_mbps, 1, mbps, sizeof(mbps)),
		    ph->saturated ? "" : " (never steady)", inc, buf);
}

static void verdict_both(const struct test_result *r, struct verdict *v)
{
	const struct phase_result *ph = result_find_phase(r, PHASE_BIDIR);
	char d[16], u[16], inc[40];

	if (ph == NULL)
		return;
	increase_phrase(ph, inc, sizeof(inc));
	verdict_add(v, "Both ways", "%s down + %s up Mbit/s, %s",
		    report_num(ph->down_mbps, 1, d, sizeof(d)), report_num(ph->up_mbps, 1, u, sizeof(u)),
		    inc);
}

static void verdict_headline(const struct test_result *r, struct verdict *v)
{
	const struct phase_result *ph = result_find_phase(r, PHASE_IDLE);
	double worst = r->worst_increase_ms;
	char idle[16];

	/* The increase is over the idle median, so that is the RTT to name. */
	report_num(ph && ph->rtt_ms.n ? ph->rtt_ms.p50 : r->rtt0_ms, 1, idle, sizeof(idle));
	if (v->grade == NULL) {
		verdict_add(v, "Bufferbloat", "not graded: no loaded phase measured latency "
			    "(idle RTT %s ms)", idle);
		return;
	}
	verdict_add(v, "Bufferbloat", "grade %s: load adds up to %.0f ms to the idle RTT of %s ms",
		    v->grade, worst, idle);
}

/* Whether a direction's verdict is a managed queue (AQM or flow queuing), or it was not loaded. */
static int managed_or_absent(const struct queue_verdict *q)
{
	return q->verdict == NULL || strcmp(q->verdict, "aqm") == 0 || strcmp(q->verdict, "fq") == 0;
}

static void verdict_advice(const struct test_result *r, struct verdict *v)
{
	char d[16], u[16];

	if (v->grade == NULL)
		return;
	if (!v->bloated) {
		verdict_add(v, "Advice", "no bufferbloat to fix");
		return;
	}
	/* Shaping in front of a queue that is already managed moves nothing. */
	if ((r->queue_down.verdict || r->queue_up.verdict) && managed_or_absent(&r->queue_down) &&
	    managed_or_absent(&r->queue_up)) {
		verdict_add(v, "Advice", "the queue is already managed; the delay is the AQM's own "
			    "target or another queue: see the Queue line");
		return;
	}
	if (!isfinite(r->shaper_down_mbps) && !isfinite(r->shaper_up_mbps)) {
		verdict_add(v, "Advice", "shape the link a little below its rate with SQM "
			    "(cake or fq_codel)");
		return;
	}
	verdict_add(v, "Advice", "shape to %s down / %s up Mbit/s with SQM (cake or fq_codel)",
		    report_num(r->shaper_down_mbps, 1, d, sizeof(d)),
		    report_num(r->shaper_up_mbps, 1, u, sizeof(u)));
}

/* A run that stopped early says so first: why, and where. */
static void verdict_stopped(const struct test_result *r, struct verdict *v)
{
	char where[64] = "between phases";

	if (r->aborted_phase >= 0)
		snprintf(where, sizeof(where), "in the %s phase",
			 phase_name((enum phase_kind)r->aborted_phase));
	verdict_add(v, "Stopped", "%s, %s, %.1f s in: the figures cover what ran until then",
		    r->error, where, (double)(r->aborted_ns - r->t0_ns) / 1e9);
}

/* Where the outage began as the client saw it: the last UDP probe reply, how long before the
 * stop that was (a long silence is the outage; a short one, an interruption), and what the
 * running phase loaded. */
static void verdict_last_reply(const struct test_result *r, struct verdict *v)
{
	int64_t last = result_last_reply_ns(r);
	const char *dir = result_aborted_direction(r);
	char load[16] = "no load";

	if (strcmp(dir, "none") != 0)
		snprintf(load, sizeof(load), "load %s", dir);
	if (last < 0) {
		verdict_add(v, "Last reply", "none: no probe reply arrived; %s", load);
		return;
	}
	verdict_add(v, "Last reply", "%.1f s in, %.1f s before the stop%s; %s",
		    (double)(last - r->t0_ns) / 1e9, (double)(r->aborted_ns - last) / 1e9,
		    r->aborted_ns - last >= NS_PER_SEC ? " (replies stopped there)" : "", load);
}

/* What manages each loaded direction's queue, in one line. */
static void verdict_queue(const struct test_result *r, struct verdict *v)
{
	char d[64], u[64];

	if (r->queue_down.verdict == NULL && r->queue_up.verdict == NULL)
		return;
	queuewords_phrase(&r->queue_down, &r->buffer_down, d, sizeof(d));
	queuewords_phrase(&r->queue_up, &r->buffer_up, u, sizeof(u));
	if (r->queue_down.verdict && r->queue_up.verdict)
		verdict_add(v, "Queue", "down %s; up %s", d, u);
	else
		verdict_add(v, "Queue", "%s %s", r->queue_down.verdict ? "down" : "up",
			    r->queue_down.verdict ? d : u);
}

/* --ecn: marks or drops, in one line (the evidence sentence is in the JSON and under -v). */
static void verdict_ecn(const struct test_result *r, struct verdict *v)
{
	const struct ecn_report *e = &r->ecn;
	long long ce = (e->ce_down > 0 ? e->ce_down : 0) + (e->ce_up > 0 ? e->ce_up : 0);
	long long rt = e->retrans > 0 ? (long long)e->retrans : 0;

	if (!e->requested || e->verdict == NULL)
		return;
	if (strcmp(e->verdict, "marks") == 0)
		verdict_add(v, "ECN", "the path marks (CE) instead of dropping: %lld CE, %lld "
			    "retransmissions", ce, rt);
	else if (strcmp(e->verdict, "drops") == 0)
		verdict_add(v, "ECN", "the path drops instead of marking: %lld retransmissions, "
			    "%lld CE", rt, ce);
	else if (strcmp(e->verdict, "not negotiated") == 0)
		verdict_add(v, "ECN", "requested, but no load flow negotiated it");
	else
		verdict_add(v, "ECN", "negotiated; no CE marks or drops seen");
}

void verdict_build(const struct test_result *r, struct verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->grade = r->grade_overall;
	v->bloated = v->grade != NULL && strcmp(v->grade, "A+") != 0 && strcmp(v->grade, "A") != 0;
	if (r->partial) {
		verdict_stopped(r, v);
		verdict_last_reply(r, v);
	}
	verdict_headline(r, v);
	verdict_direction(r, v, PHASE_DOWNLOAD);
	verdict_direction(r, v, PHASE_UPLOAD);
	verdict_both(r, v);
	verdict_advice(r, v);
	verdict_queue(r, v);
	verdict_ecn(r, v);
}

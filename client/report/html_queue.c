/* html_queue: the queue section of the HTML page (see html_queue.h). */
#include "client/report/html_queue.h"

#include <math.h>
#include <stdio.h>
#include <strings.h>

#include "client/report/queuewords.h"

/* One loaded direction: verdict, the figures behind it, evidence and advice. */
static void queue_row(struct svg_buf *b, const char *dir, const struct queue_verdict *v,
		      double shaper_mbps)
{
	char advice[160];

	if (v->verdict == NULL)
		return;
	queuewords_advice(v, shaper_mbps, advice, sizeof(advice));
	svg_printf(b, "<tr data-direction=\"%s\"><td class=\"l\">%s</td>", dir, dir);
	svg_td_text(b, "l qverdict", v->verdict);
	svg_td_num(b, v->standing_ms, 1);
	svg_td_num(b, v->top_ms, 1);
	svg_td_text(b, "l", v->signal ? v->signal : "-");
	svg_td_num(b, v->ce >= 0 ? (double)v->ce : NAN, 0);
	svg_td_num(b, v->retrans >= 0 ? (double)v->retrans : NAN, 0);
	svg_td_text(b, "wrap", v->evidence);
	svg_td_text(b, "wrap", advice[0] ? advice : "-");
	svg_puts(b, "</tr>\n");
}

static void queue_table(struct svg_buf *b, const struct test_result *r)
{
	if (r->queue_down.verdict == NULL && r->queue_up.verdict == NULL)
		return;
	svg_puts(b, "<table class=\"queue\">\n<tr><th class=\"l\">Direction</th><th class=\"l\">"
		 "Verdict</th><th>Standing queue (ms)</th><th>Queue top (ms)</th><th class=\"l\">"
		 "Signal</th><th>CE marks</th><th>Retrans&shy;missions</th><th class=\"l\">Evidence"
		 "</th><th class=\"l\">Advice</th></tr>\n");
	queue_row(b, "downlink", &r->queue_down, r->shaper_down_mbps);
	queue_row(b, "uplink", &r->queue_up, r->shaper_up_mbps);
	svg_puts(b, "</table>\n<p class=\"note\">Verdicts: fifo (tail-drop, its buffer is the "
		 "queue top), aqm (an AQM keeps the queue near the standing level), fq (flow "
		 "queuing: the probes' queue stays short while the load flows' rises), policer, "
		 "unknown. Standing queue = the probes' queueing delay p50 in the steady window.</p>\n");
}

static void ecn_para(struct svg_buf *b, const struct test_result *r)
{
	const struct ecn_report *e = &r->ecn;

	if (!e->requested)
		return;
	svg_puts(b, "<p class=\"ecn\"><b>ECN:</b> ");
	svg_escape(b, e->verdict ? e->verdict : "unknown");
	svg_puts(b, " — ");
	svg_escape(b, e->evidence);
	svg_puts(b, "<br><span class=\"note\">");
	svg_escape(b, e->how);
	svg_puts(b, "</span></p>\n");
}

/* The loaded phases that ran, in order; returns how many. */
static int loaded_phases(const struct test_result *r, enum phase_kind *k)
{
	int n = 0;

	for (int i = 0; i < r->nphases && n < PHASE_KINDS; i++)
		if (r->phases[i].kind != PHASE_IDLE)
			k[n++] = r->phases[i].kind;
	return n;
}

static void hop_row(struct svg_buf *b, const struct test_result *r, int h,
		    const enum phase_kind *k, int nk)
{
	const struct hop_row *row = &r->hops.row[h];

	svg_printf(b, "<tr%s><td>%d</td>", r->hops.queue_hop == h + 1 ? " class=\"queue-hop\"" : "",
		   h + 1);
	svg_td_text(b, "l", row->addr[0] ? row->addr : "*");
	svg_td_num(b, row->idle_ms, 2);
	for (int i = 0; i < nk; i++) {
		svg_td_num(b, row->loaded_ms[k[i]], 2);
		if (isfinite(row->increase_ms[k[i]]))
			svg_printf(b, "<td>%+.1f</td>", fabs(row->increase_ms[k[i]]) < 0.05 ? 0.0
							: row->increase_ms[k[i]]);
		else
			svg_puts(b, "<td>-</td>");
		svg_td_num(b, row->loss_pct[k[i]], 0);
	}
	svg_printf(b, "<td class=\"l\">%s</td></tr>\n", row->icmp_limited ? "yes" : "no");
}

static void hop_table(struct svg_buf *b, const struct test_result *r)
{
	enum phase_kind k[PHASE_KINDS];
	int nk = loaded_phases(r, k);
	const char *mode = r->hop_trace.mode == HOP_MODE_ICMP ? "ICMP" : "UDP";
	const char *how = r->hop_trace.method;

	if (!r->hops.ran)
		return;
	/* the method only when it says more than the mode ("ping socket", "raw socket") */
	svg_printf(b, "<h3>Per hop (%s probes%s%s)</h3>\n<table class=\"hops\">\n<tr><th "
		   "rowspan=\"2\">Hop</th><th class=\"l\" rowspan=\"2\">Address</th><th rowspan=\"2\">"
		   "Idle RTT (ms)</th>", mode, how[0] && strcasecmp(how, mode) != 0 ? ", " : "",
		   how[0] && strcasecmp(how, mode) != 0 ? how : "");
	for (int i = 0; i < nk; i++)
		svg_printf(b, "<th colspan=\"3\">%s</th>", phase_name(k[i]));
	svg_puts(b, "<th class=\"l\" rowspan=\"2\">ICMP rate-<br>limited</th></tr>\n<tr>");
	for (int i = 0; i < nk; i++)
		svg_puts(b, "<th>RTT (ms)</th><th>+ms</th><th>loss (%)</th>");
	svg_puts(b, "</tr>\n");
	for (int h = 0; h < r->hops.n; h++)
		hop_row(b, r, h, k, nk);
	svg_puts(b, "</table>\n<p class=\"hop-verdict\"><b>Where:</b> ");
	svg_escape(b, r->hops.verdict);
	svg_puts(b, "</p>\n");
	if (r->hops.evidence[0]) {
		svg_puts(b, "<p class=\"note\">");
		svg_escape(b, r->hops.evidence);
		svg_puts(b, "</p>\n");
	}
}

void html_queue_section(struct svg_buf *b, const struct test_result *r)
{
	if (r->queue_down.verdict == NULL && r->queue_up.verdict == NULL && !r->ecn.requested &&
	    !r->hops.ran)
		return;
	svg_puts(b, "<section class=\"queue\">\n<h2>Queue: what manages it and where it builds</h2>\n");
	queue_table(b, r);
	ecn_para(b, r);
	hop_table(b, r);
	svg_puts(b, "</section>\n");
}

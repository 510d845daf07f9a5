/* html: one self-contained HTML page of a run — header, summary tables like the text report,
 * and static inline-SVG time-series charts drawn from the raw series (no scripts, no fetches). */
#include "client/report/html.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/analysis/analysis.h"
#include "client/analysis/clocksync.h"
#include "client/report/format.h"
#include "client/report/html_queue.h"
#include "client/report/svg.h"
#include "client/report/verdict.h"
#include "client/report/wording.h"
#include "common/fileio.h"
#include "common/log.h"
#include "common/util.h"

#define CHART_W 1100
#define CHART_H 300
#define BIN_NS (250 * 1000000LL)   /* goodput bins, as the saturation rule uses */
#define COLOR_DOWN "#1f6fb4"
#define COLOR_UP "#e8710a"
#define COLOR_RTT "#2a7d4f"
#define COLOR_LOST "#d62728"
#define COLOR_BASE "#555"
#define COLOR_STEADY "#888"

static const char *const phase_fill[PHASE_KINDS] = { "#ececec", "#dceaf7", "#fde7d3", "#ebe2f4" };
static const char *const phase_short[PHASE_KINDS] = { "idle", "down", "up", "bidir" };

static const char page_css[] =
	"body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:#222;"
	"margin:24px auto;max-width:1140px;padding:0 16px}\n"
	"h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;"
	"border-bottom:1px solid #ccc;padding-bottom:3px}\n"
	"table{border-collapse:collapse;margin:4px 0 8px}th,td{padding:3px 9px;"
	"border-bottom:1px solid #e2e2e2;text-align:right;white-space:nowrap}\n"
	"th{background:#f4f4f4;font-weight:600}td.l,th.l{text-align:left}\n"
	"td.wrap{white-space:normal;text-align:left;max-width:460px}\n"
	"table.meta td{text-align:left;border:none;padding:1px 12px 1px 0}\n"
	"table.meta td:first-child{color:#666}\n"
	".note{color:#555;font-size:13px;margin:2px 0 10px}\n"
	"ul.warn li{color:#8a4b00}\n"
	"figure{margin:12px 0 22px}figcaption{color:#555;font-size:13px}\n"
	"svg.chart{width:100%;height:auto;display:block;border:1px solid #e2e2e2}\n"
	".verdict{display:flex;gap:22px;align-items:center;border:1px solid #ccc;"
	"border-radius:8px;padding:14px 18px;margin:10px 0 18px;background:#fafafa}\n"
	".grade{font-size:46px;font-weight:700;min-width:72px;text-align:center}\n"
	".g-good{color:#1a7f37}.g-fair{color:#9a6700}.g-bad{color:#cf222e}\n"
	".verdict table td{border:none;text-align:left;white-space:normal;padding:1px 10px 1px 0}\n"
	".verdict table td:first-child{color:#666;white-space:nowrap}\n"
	"h3{font-size:15px;margin:18px 0 6px}tr.queue-hop td{background:#fff4d6}"
	"td.qverdict{font-weight:600}\n";

/* Seconds from t0 of a client monotonic time. */
static double rel_s(const struct test_result *r, int64_t t_ns)
{
	return (double)(t_ns - r->t0_ns) / 1e9;
}

/* The end of the time axis: the last phase, probe or goodput sample (s from t0). */
static double run_end_s(const struct test_result *r)
{
	double end = 1.0;

	for (int i = 0; i < r->nphases && i < PHASE_KINDS; i++)
		end = fmax(end, rel_s(r, r->phases[i].end_ns));
	if (r->nprobes > 0)
		end = fmax(end, rel_s(r, r->probes[r->nprobes - 1].send_ns));
	if (r->ndown > 0)
		end = fmax(end, rel_s(r, r->down[r->ndown - 1].t_ns));
	if (r->nup > 0)
		end = fmax(end, rel_s(r, r->up[r->nup - 1].t_ns));
	return end;
}

/* The grade's colour class: A+/A good, B/C fair, D/F bad. */
static const char *grade_class(const char *g)
{
	if (g == NULL)
		return "";
	if (g[0] == 'A')
		return "g-good";
	return g[0] == 'B' || g[0] == 'C' ? "g-fair" : "g-bad";
}

/* The verdict card that opens the page: the same lines the text summary starts with. */
static void page_verdict(struct svg_buf *b, const struct test_result *r)
{
	struct verdict v;

	verdict_build(r, &v);
	svg_printf(b, "<header>\n<h1>bloatmeter %s report</h1>\n<section class=\"verdict\">\n"
		   "<div class=\"grade %s\" title=\"DSLReports bufferbloat grade\">%s</div>\n"
		   "<table>\n", BM_VERSION, grade_class(v.grade), v.grade ? v.grade : "–");
	for (int i = 0; i < v.n; i++) {
		svg_printf(b, "<tr><td>%s</td>", v.line[i].label);
		svg_td_text(b, NULL, v.line[i].value);
		svg_puts(b, "</tr>\n");
	}
	svg_puts(b, "</table>\n</section>\n</header>\n");
}

/* A row of the header's key/value table; the value is escaped. */
static void meta_row(struct svg_buf *b, const char *key, const char *value)
{
	svg_printf(b, "<tr><td>%s</td>", key);
	svg_td_text(b, NULL, value && value[0] ? value : "-");
	svg_puts(b, "</tr>\n");
}

static void page_header(struct svg_buf *b, const struct test_result *r)
{
	char start[40] = "-", client[160], server[160], line[160];

	if (r->start_real_ns > 0)
		util_iso8601(r->start_real_ns, start, sizeof(start));
	wording_cc_end(r, 0, 1, client, sizeof(client));
	wording_cc_end(r, 1, 1, server, sizeof(server));
	svg_puts(b, "<h2>Run</h2>\n<table class=\"meta\">\n");
	meta_row(b, "Server", r->server_addr);
	meta_row(b, "Server version", r->server_version);
	meta_row(b, "Start time (UTC)", start);
	meta_row(b, "Congestion control, client", client);
	meta_row(b, "Congestion control, server", server);
	snprintf(line, sizeof(line), "%d TCP flow%s per loaded direction, %g s per loaded phase, "
		 "%g s idle, %g s drain gap", r->cfg.flows, r->cfg.flows == 1 ? "" : "s",
		 r->cfg.duration_s, r->cfg.idle_s, r->cfg.gap_s);
	meta_row(b, "Load", line);
	snprintf(line, sizeof(line), "every %g ms, %d bytes; %zu of %zu replies kernel-timestamped "
		 "by the client; server timestamps: %s", r->cfg.interval_ms, r->cfg.probe_size,
		 r->probes_kernel_ts, result_replies(r), r->udp_server_ts[0] ? r->udp_server_ts : "?");
	meta_row(b, "UDP probes", line);
	svg_puts(b, "</table>\n");
}

static int unsaturated(const struct phase_result *ph)
{
	return ph->kind != PHASE_IDLE && !ph->saturated;
}

static void phase_row(struct svg_buf *b, const struct phase_result *ph)
{
	const struct stats_summary *s = &ph->rtt_ms;
	double na = NAN;
	int idle = ph->kind == PHASE_IDLE;

	svg_printf(b, "<tr><td class=\"l\">%s%s</td>", phase_name(ph->kind),
		   unsaturated(ph) ? "*" : "");
	svg_td_num(b, ph->down_mbps, 2);
	svg_td_num(b, ph->up_mbps, 2);
	svg_td_num(b, s->n ? s->min : na, 2);
	svg_td_num(b, s->n ? s->p50 : na, 2);
	svg_td_num(b, s->n ? s->p90 : na, 2);
	svg_td_num(b, s->n ? s->p99 : na, 2);
	svg_td_num(b, s->n ? s->max : na, 2);
	svg_td_num(b, ph->loss_up_pct, 1);
	svg_td_num(b, ph->loss_down_pct, 1);
	if (idle || !isfinite(ph->latency_increase_ms))
		svg_puts(b, "<td>-</td>");
	else
		svg_printf(b, "<td>%+.1f</td>", report_nz(ph->latency_increase_ms, 1));
	svg_printf(b, "<td>%s</td></tr>\n", ph->grade ? ph->grade : "-");
}

static void page_phases(struct svg_buf *b, const struct test_result *r)
{
	int any_unsat = 0;

	svg_puts(b, "<h2>Summary per phase</h2>\n<table class=\"phases\">\n"
		 "<tr><th class=\"l\" rowspan=\"2\">Phase</th><th colspan=\"2\">Goodput (Mbit/s)</th>"
		 "<th colspan=\"5\">RTT (ms)</th><th colspan=\"2\">Probe loss (%)</th>"
		 "<th rowspan=\"2\">Latency<br>increase (ms)</th><th rowspan=\"2\">Grade</th></tr>\n"
		 "<tr><th>down</th><th>up</th><th>min</th><th>p50</th><th>p90</th><th>p99</th>"
		 "<th>max</th><th>up</th><th>down</th></tr>\n");
	for (int i = 0; i < r->nphases && i < PHASE_KINDS; i++) {
		phase_row(b, &r->phases[i]);
		any_unsat |= unsaturated(&r->phases[i]);
	}
	svg_puts(b, "</table>\n");
	if (any_unsat)
		svg_puts(b, "<p class=\"note\">* never reached stable goodput: the queue may not have "
			 "filled, so its figures are uncertain and a buffer measured there is a lower "
			 "bound (≥).</p>\n");
}

/* Notes on an estimate: lower bound, unstable interval, managed queue. */
static void buffer_notes(const struct buffer_estimate *e, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s%s", e->lower_bound ? "lower bound (" : "",
		 e->lower_bound ? e->lower_bound_why : "", e->lower_bound ? ") " : "",
		 e->unstable ? "unstable (wide interval) " : "",
		 e->managed ? WORDING_MANAGED_QUEUE : "");
}

/* The methods named so far, in order; the table cites them by number. */
struct method_refs {
	const char *name[8];
	int n;
};

/* The 1-based footnote number of method m, adding it if new. */
static int method_ref(struct method_refs *refs, const char *m)
{
	for (int i = 0; i < refs->n; i++)
		if (strcmp(refs->name[i], m) == 0)
			return i + 1;
	if (refs->n >= (int)(sizeof(refs->name) / sizeof(refs->name[0])))
		return 0;
	refs->name[refs->n++] = m;
	return refs->n;
}

static void buffer_row(struct svg_buf *b, const struct test_result *r, const char *dir,
		       enum phase_kind k, const struct buffer_estimate *e, struct method_refs *refs)
{
	char notes[256];
	int ref = e->valid && e->method ? method_ref(refs, e->method) : 0;

	svg_printf(b, "<tr><td class=\"l\">%s</td><td class=\"l\">%s</td>", dir, phase_name(k));
	if (!e->valid) {
		svg_printf(b, "<td class=\"l\" colspan=\"7\">not measured (%s)</td></tr>\n",
			   !result_find_phase(r, k) ? "phase not run" : !isfinite(r->rtt0_ms) ?
			   "no baseline RTT" : "no probe replies in the window");
		return;
	}
	svg_printf(b, "<td>%s%.1f</td>", e->lower_bound ? "≥ " : "", e->ms);
	if (e->has_ci)
		svg_printf(b, "<td>%.1f – %.1f</td>", e->ci_low_ms, e->ci_high_ms);
	else
		svg_puts(b, "<td>-</td>");
	if (isfinite(e->bytes))
		svg_printf(b, "<td>%s%.0f</td>", e->lower_bound ? "≥ " : "", e->bytes);
	else
		svg_puts(b, "<td>-</td>");
	svg_printf(b, "<td>%.1f / %.1f</td><td>%zu</td>", report_nz(e->q_p50_ms, 1), report_nz(e->q_p99_ms, 1),
		   e->samples);
	if (ref > 0)
		svg_printf(b, "<td class=\"l\">[%d]</td>", ref);
	else
		svg_puts(b, "<td>-</td>");
	buffer_notes(e, notes, sizeof(notes));
	svg_td_text(b, "wrap", notes);
	svg_puts(b, "</tr>\n");
}

static void page_buffers(struct svg_buf *b, const struct test_result *r)
{
	struct method_refs refs = { .n = 0 };

	svg_puts(b, "<h2>Buffer estimates</h2>\n<table class=\"buffers\">\n<tr><th class=\"l\">"
		 "Direction</th><th class=\"l\">Phase</th><th>Buffer (ms)</th><th>95 % CI (ms)</th>"
		 "<th>Bytes</th><th>Queue p50 / p99 (ms)</th><th>Samples</th><th class=\"l\">"
		 "Method</th><th class=\"l\">Notes</th></tr>\n");
	buffer_row(b, r, "downlink", PHASE_DOWNLOAD, &r->buffer_down, &refs);
	buffer_row(b, r, "uplink", PHASE_UPLOAD, &r->buffer_up, &refs);
	if (r->buffer_bidir_down.valid)
		buffer_row(b, r, "downlink", PHASE_BIDIR, &r->buffer_bidir_down, &refs);
	if (r->buffer_bidir_up.valid)
		buffer_row(b, r, "uplink", PHASE_BIDIR, &r->buffer_bidir_up, &refs);
	svg_puts(b, "</table>\n<p class=\"note\">Buffer = median of the 1 s maxima of the queueing "
		 "delay over the steady window (the top of the standing queue); bytes = ms × IP-level goodput. ≥ marks a lower bound.");
	for (int i = 0; i < refs.n; i++) {
		svg_printf(b, "<br>[%d] ", i + 1);
		svg_escape(b, refs.name[i]);
	}
	svg_puts(b, "</p>\n");
}

static void td_queue(struct svg_buf *b, const struct stats_summary *s)
{
	svg_td_num(b, s->n ? s->p50 : NAN, 2);
	svg_td_num(b, s->n ? s->p95 : NAN, 2);
}

static void page_oneway(struct svg_buf *b, const struct test_result *r)
{
	if (!r->sync.valid)
		return;
	svg_puts(b, "<h2>One-way queueing delay (ms)</h2>\n<table class=\"oneway\">\n"
		 "<tr><th class=\"l\" rowspan=\"2\">Phase</th><th colspan=\"2\">upstream "
		 "(client → server)</th><th colspan=\"2\">downstream (server → client)</th></tr>\n"
		 "<tr><th>p50</th><th>p95</th><th>p50</th><th>p95</th></tr>\n");
	for (int i = 0; i < r->nphases && i < PHASE_KINDS; i++) {
		svg_printf(b, "<tr><td class=\"l\">%s</td>", phase_name(r->phases[i].kind));
		td_queue(b, &r->phases[i].q_up_ms);
		td_queue(b, &r->phases[i].q_down_ms);
		svg_puts(b, "</tr>\n");
	}
	svg_printf(b, "</table>\n<p class=\"note\">Above the idle minimum one-way delays (up %.3f ms, "
		   "down %.3f ms); clocks synced to ±%.3f ms, drift %.3f ppm%s.</p>\n", r->owd0_up_ms,
		   r->owd0_down_ms, r->sync.error_ns / 1e6, r->sync.drift * 1e6,
		   r->sync.drift_fitted ? "" : " (not corrected)");
}

static void page_warnings(struct svg_buf *b, const struct test_result *r)
{
	int n = r->nwarnings, max = (int)(sizeof(r->warnings) / sizeof(r->warnings[0]));

	if (n <= 0)
		return;
	svg_puts(b, "<h2>Warnings</h2>\n<ul class=\"warn\">\n");
	for (int i = 0; i < n && i < max; i++) {
		char w[sizeof(r->warnings[0]) + 1];

		memcpy(w, r->warnings[i], sizeof(r->warnings[i]));
		w[sizeof(r->warnings[i])] = '\0';
		svg_puts(b, "<li>");
		svg_escape(b, w);
		svg_puts(b, "</li>\n");
	}
	svg_puts(b, "</ul>\n");
}

/* One direction of the lab comparison: configured truth next to the measurement. */
static void lab_row(struct svg_buf *b, const char *dir, uint64_t rate_bps, double buf_ms,
		    uint64_t limit, uint64_t burst, const struct buffer_estimate *e)
{
	svg_printf(b, "<tr><td class=\"l\">%s</td>", dir);
	svg_td_num(b, (double)rate_bps / 1e6, 2);
	svg_td_num(b, buf_ms, 1);
	svg_printf(b, "<td>%llu</td><td>%llu</td>", (unsigned long long)limit,
		   (unsigned long long)burst);
	if (e->valid)
		svg_printf(b, "<td>%s%.1f</td>", e->lower_bound ? "≥ " : "", e->ms);
	else
		svg_puts(b, "<td>-</td>");
	svg_td_num(b, e->valid ? e->bytes : NAN, 0);
	if (e->valid && buf_ms > 0)
		svg_printf(b, "<td>%+.1f</td></tr>\n", report_nz((e->ms - buf_ms) / buf_ms * 100.0, 1));
	else
		svg_puts(b, "<td>-</td></tr>\n");
}

static void page_lab(struct svg_buf *b, const struct test_result *r)
{
	const struct lab_truth *t = &r->truth;
	char q[384];

	if (!r->lab)
		return;
	wording_lab_queue(t, q, sizeof(q));
	svg_puts(b, "<h2>Lab: ground truth vs measurement</h2>\n<p class=\"lab-queue\">Bottleneck: ");
	svg_escape(b, q);
	svg_puts(b, "</p>\n<table class=\"lab\">\n"
		 "<tr><th class=\"l\">Direction</th><th>Rate (Mbit/s)</th><th>Configured buffer "
		 "(ms)</th><th>limit (bytes)</th><th>burst (bytes)</th><th>Measured (ms)</th>"
		 "<th>Measured (bytes)</th><th>Error (%)</th></tr>\n");
	lab_row(b, "downlink", t->down_rate_bps, t->down_buffer_ms, t->down_limit_bytes,
		t->down_burst_bytes, &r->buffer_down);
	lab_row(b, "uplink", t->up_rate_bps, t->up_buffer_ms, t->up_limit_bytes, t->up_burst_bytes,
		&r->buffer_up);
	svg_puts(b, "</table>\n");
}

/* Phase bands with their names, the steady-window starts, and the axes; returns whether it
 * drew a steady-window line (for the legend). */
static int chart_frame(struct svg_chart *c, const struct test_result *r, const char *ytitle)
{
	int steady = 0;

	for (int i = 0; i < r->nphases && i < PHASE_KINDS; i++) {
		const struct phase_result *ph = &r->phases[i];
		enum phase_kind k = (unsigned)ph->kind < PHASE_KINDS ? ph->kind : PHASE_IDLE;

		svg_chart_band(c, rel_s(r, ph->start_ns), rel_s(r, ph->end_ns), phase_fill[k],
			       phase_name(ph->kind), phase_short[k]);
	}
	svg_chart_axes(c, "time since start (s)", ytitle);
	for (int i = 0; i < r->nphases && i < PHASE_KINDS; i++) {
		if (r->phases[i].kind != PHASE_IDLE && r->phases[i].steady_start_ns >= 0) {
			svg_chart_vline(c, rel_s(r, r->phases[i].steady_start_ns), COLOR_STEADY);
			steady = 1;
		}
	}
	return steady;
}

/* The legend entry for the steady-window lines, then the closing of the chart. */
static void chart_finish(struct svg_chart *c, int steady)
{
	if (steady)
		svg_chart_legend(c, COLOR_STEADY, "steady window starts", SVG_MARK_DASH);
	svg_chart_end(c);
}

/* Goodput per 250 ms bin (Mbit/s) of a cumulative byte series; NAN where not covered. */
static void goodput_bins(const struct test_result *r, const struct tput_rec *s, size_t n,
			 double *y, size_t nb)
{
	for (size_t i = 0; i < nb; i++) {
		int64_t from = r->t0_ns + (int64_t)i * BIN_NS;

		y[i] = analysis_rate_bps(s, n, from, from + BIN_NS) / 1e6;
	}
}

static void chart_goodput(struct svg_buf *b, const struct test_result *r, double t_end)
{
	size_t nb = (size_t)ceil(t_end * 1e9 / (double)BIN_NS);
	double *x = calloc(3 * (nb + 1), sizeof(*x)), *dn, *up, ymax = 0;
	struct svg_chart c;
	int steady;

	if (x == NULL) {
		b->failed = 1;
		return;
	}
	dn = x + nb + 1;
	up = dn + nb + 1;
	goodput_bins(r, r->down, r->ndown, dn, nb);
	goodput_bins(r, r->up, r->nup, up, nb);
	for (size_t i = 0; i < nb; i++) {
		x[i] = ((double)i + 0.5) * (double)BIN_NS / 1e9;
		ymax = fmax(ymax, isfinite(dn[i]) ? dn[i] : 0);
		ymax = fmax(ymax, isfinite(up[i]) ? up[i] : 0);
	}
	svg_puts(b, "<figure>\n");
	svg_chart_begin(&c, b, CHART_W, CHART_H, "Goodput", 0, t_end, 0, svg_nice_ceil(ymax * 1.05));
	steady = chart_frame(&c, r, "goodput (Mbit/s)");
	svg_chart_line(&c, x, dn, nb, COLOR_DOWN, "goodput-down");
	svg_chart_line(&c, x, up, nb, COLOR_UP, "goodput-up");
	svg_chart_legend(&c, COLOR_DOWN, "download", SVG_MARK_LINE);
	svg_chart_legend(&c, COLOR_UP, "upload", SVG_MARK_LINE);
	chart_finish(&c, steady);
	svg_puts(b, "<figcaption>TCP goodput (payload) in 250 ms bins, from the cumulative bytes the "
		 "receivers counted (upload as reported by the server).</figcaption>\n</figure>\n");
	free(x);
}

/* The replies' send times (s) and RTTs or one-way queueing delays (ms); NULL arrays are
 * skipped. Returns how many. */
static size_t received_series(const struct test_result *r, double *x, double *rtt, double *qu,
			      double *qd)
{
	size_t m = 0;

	for (size_t i = 0; i < r->nprobes; i++) {
		const struct probe_rec *p = &r->probes[i];

		if (!p->received)
			continue;
		x[m] = rel_s(r, p->send_ns);
		if (rtt)
			rtt[m] = (double)p->rtt_ns / 1e6;
		if (qu)
			qu[m] = clocksync_owd_up(&r->sync, p) / 1e6 - r->owd0_up_ms;
		if (qd)
			qd[m] = clocksync_owd_down(&r->sync, p) / 1e6 - r->owd0_down_ms;
		m++;
	}
	return m;
}

/* Lost probes' send times (s); returns how many. */
static size_t lost_times(const struct test_result *r, double *out)
{
	size_t k = 0;

	for (size_t i = 0; i < r->nprobes; i++)
		if (!r->probes[i].received)
			out[k++] = rel_s(r, r->probes[i].send_ns);
	return k;
}

static void rtt_caption(struct svg_buf *b, const struct test_result *r, size_t m, size_t nlost,
			size_t clipped, double y1, double ymax)
{
	svg_printf(b, "<figcaption>One point per UDP probe reply at its send time: %zu probes sent, "
		   "%zu replies, %zu lost (red marks on the time axis).", r->nprobes, m, nlost);
	if (clipped)
		svg_printf(b, " The axis ends near the 99.9th percentile: %zu RTT%s above %g ms (max "
			   "%.2f ms) %s drawn on the top edge (clipped).", clipped,
			   clipped == 1 ? "" : "s", y1, ymax, clipped == 1 ? "is" : "are");
	svg_puts(b, "</figcaption>\n</figure>\n");
}

static void chart_rtt(struct svg_buf *b, const struct test_result *r, double t_end)
{
	double *x = calloc(2 * r->nprobes + 1, sizeof(*x)), *y, *lost, y1, ymax = 0;
	size_t m, nlost, clipped;
	struct svg_chart c;
	int steady;

	if (x == NULL) {
		b->failed = 1;
		return;
	}
	y = x + r->nprobes;
	m = received_series(r, x, y, NULL, NULL);
	for (size_t i = 0; i < m; i++)
		ymax = fmax(ymax, y[i]);
	y1 = svg_nice_ceil(m ? stats_percentile(y, m, 99.9) * 1.1 : 1.0);
	lost = x + m; /* reuses the room left by lost probes: m + lost ≤ nprobes */
	svg_puts(b, "<figure>\n");
	svg_chart_begin(&c, b, CHART_W, CHART_H, "Round-trip time of the UDP probes", 0, t_end, 0, y1);
	steady = chart_frame(&c, r, "RTT (ms)");
	if (isfinite(r->rtt0_ms))
		svg_chart_hline(&c, r->rtt0_ms, COLOR_BASE);
	clipped = svg_chart_line(&c, x, y, m, COLOR_RTT, "rtt");
	nlost = lost_times(r, lost);
	svg_chart_xmarks(&c, lost, nlost, COLOR_LOST, "lost");
	svg_chart_legend(&c, COLOR_RTT, "RTT", SVG_MARK_LINE);
	if (isfinite(r->rtt0_ms))
		svg_chart_legend(&c, COLOR_BASE, "idle minimum", SVG_MARK_DASH);
	svg_chart_legend(&c, COLOR_LOST, "lost probe", SVG_MARK_TICK);
	chart_finish(&c, steady);
	rtt_caption(b, r, m, nlost, clipped, y1, ymax);
	free(x);
}

/* Lowest and highest value shown on a queueing-delay axis: about the 0.1th and 99.9th
 * percentiles of both directions, including 0. Slightly negative delays (clock noise, at most
 * 5 % of the top) are drawn on the zero line rather than widening the axis. */
static void owd_range(const double *qu, const double *qd, size_t m, double *lo, double *hi)
{
	double l = fmin(stats_percentile(qu, m, 0.1), stats_percentile(qd, m, 0.1));
	double h = fmax(stats_percentile(qu, m, 99.9), stats_percentile(qd, m, 99.9));

	*hi = svg_nice_ceil(isfinite(h) ? h * 1.1 : 1.0);
	*lo = isfinite(l) && -l > 0.05 * *hi ? -svg_nice_ceil(-l * 1.1) : 0.0;
}

static void owd_caption(struct svg_buf *b, const struct test_result *r, size_t clipped,
			double hi)
{
	svg_printf(b, "<figcaption>Queueing delay per direction: one-way delay (clock offset and "
		   "drift removed, ±%.3f ms) minus its idle minimum.", r->sync.error_ns / 1e6);
	if (clipped)
		svg_printf(b, " The axis ends near the 99.9th percentile: %zu value%s above %g ms %s "
			   "drawn on the top edge (clipped).", clipped, clipped == 1 ? "" : "s", hi,
			   clipped == 1 ? "is" : "are");
	svg_puts(b, "</figcaption>\n</figure>\n");
}

static void chart_owd(struct svg_buf *b, const struct test_result *r, double t_end)
{
	double *x = calloc(3 * r->nprobes + 1, sizeof(*x)), *qu, *qd, lo, hi;
	size_t m, clipped;
	struct svg_chart c;
	int steady;

	if (x == NULL) {
		b->failed = 1;
		return;
	}
	qu = x + r->nprobes;
	qd = qu + r->nprobes;
	m = received_series(r, x, NULL, qu, qd);
	owd_range(qu, qd, m, &lo, &hi);
	svg_puts(b, "<figure>\n");
	svg_chart_begin(&c, b, CHART_W, CHART_H, "One-way queueing delay", 0, t_end, lo, hi);
	steady = chart_frame(&c, r, "queueing delay (ms)");
	clipped = svg_chart_line(&c, x, qd, m, COLOR_DOWN, "queue-down");
	clipped += svg_chart_line(&c, x, qu, m, COLOR_UP, "queue-up");
	svg_chart_legend(&c, COLOR_DOWN, "downstream", SVG_MARK_LINE);
	svg_chart_legend(&c, COLOR_UP, "upstream", SVG_MARK_LINE);
	chart_finish(&c, steady);
	owd_caption(b, r, clipped, hi);
	free(x);
}

/* Colours of the probe kinds' lines, in series order (the UDP line keeps COLOR_RTT). */
static const char *const kind_color[] = { "#1f6fb4", "#e8710a", "#9467bd", "#8c564b",
					  "#d62728", "#17becf", "#7f7f7f", "#bcbd22" };
#define KIND_LINES_MAX (SVG_LEGEND_MAX - 2) /* room for UDP and the steady-window legend */

/* Answered samples of one kind as (send time s, rtt ms); returns how many. */
static size_t kind_points(const struct test_result *r, const struct probe_series *ps, double *x,
			  double *y)
{
	size_t m = 0;

	for (size_t i = 0; i < ps->n; i++) {
		if (ps->s[i].status != SAMPLE_OK)
			continue;
		x[m] = rel_s(r, ps->s[i].send_ns);
		y[m++] = (double)ps->s[i].rtt_ns / 1e6;
	}
	return m;
}

/* Median RTT per phase for each probe kind next to UDP's, and the chart of all of them, so
 * the kinds can be compared: which traffic suffers first, and whether one is treated
 * differently. */
static void page_kinds_table(struct svg_buf *b, const struct test_result *r)
{
	svg_puts(b, "<h2>Latency by probe kind</h2>\n<table>\n<tr><th>kind</th><th>target</th>");
	for (int i = 0; i < r->nphases; i++)
		svg_printf(b, "<th>%s p50 (ms)</th>", phase_name(r->phases[i].kind));
	svg_puts(b, "</tr>\n<tr><td>udp</td><td></td>");
	for (int i = 0; i < r->nphases; i++)
		svg_td_num(b, r->phases[i].rtt_ms.n ? r->phases[i].rtt_ms.p50 : NAN, 2);
	svg_puts(b, "</tr>\n");
	for (int k = 0; k < r->nseries; k++) {
		const struct probe_series *ps = &r->series[k];

		svg_puts(b, "<tr>");
		svg_td_text(b, NULL, ps->name);
		svg_td_text(b, NULL, ps->target);
		for (int i = 0; i < r->nphases; i++) {
			const struct series_phase *sp = &r->phases[i].probe[k];

			if (!ps->available)
				svg_td_text(b, "note", i == 0 ? ps->note : "");
			else
				svg_td_num(b, sp->rtt_ms.n ? sp->rtt_ms.p50 : NAN, 2);
		}
		svg_puts(b, "</tr>\n");
	}
	svg_puts(b, "</table>\n");
	for (int i = 0; i < r->nphases; i++)
		if (r->phases[i].rpm.valid)
			svg_printf(b, "<p>Responsiveness, %s phase: <b>%.0f RPM</b> (%s)</p>\n",
				   phase_name(r->phases[i].kind), r->phases[i].rpm.rpm,
				   r->phases[i].rpm.cls);
}

static void chart_kinds(struct svg_buf *b, const struct test_result *r, double t_end)
{
	size_t cap = r->nprobes + 1, m, shown = 0;
	double *x, *y, y1 = 1;
	struct svg_chart c;
	int steady;

	for (int k = 0; k < r->nseries; k++)
		cap += r->series[k].n;
	x = calloc(2 * cap, sizeof(*x));
	if (x == NULL) {
		b->failed = 1;
		return;
	}
	y = x + cap;
	m = received_series(r, x, y, NULL, NULL);
	if (m)
		y1 = stats_percentile(y, m, 99.9);
	for (int k = 0; k < r->nseries; k++) {
		size_t n = kind_points(r, &r->series[k], x, y);

		if (n)
			y1 = fmax(y1, stats_percentile(y, n, 99.9));
	}
	y1 = svg_nice_ceil(y1 * 1.1);
	svg_puts(b, "<figure>\n");
	svg_chart_begin(&c, b, CHART_W, CHART_H, "Round-trip time by probe kind", 0, t_end, 0, y1);
	steady = chart_frame(&c, r, "RTT (ms)");
	m = received_series(r, x, y, NULL, NULL);
	(void)svg_chart_line(&c, x, y, m, COLOR_RTT, "kind-udp");
	svg_chart_legend(&c, COLOR_RTT, "udp", SVG_MARK_LINE);
	for (int k = 0; k < r->nseries && shown < KIND_LINES_MAX; k++) {
		size_t n = kind_points(r, &r->series[k], x, y);
		const char *color = kind_color[shown % (sizeof(kind_color) / sizeof(kind_color[0]))];
		char id[40];

		if (n == 0)
			continue;
		snprintf(id, sizeof(id), "kind-%s", r->series[k].name);
		(void)svg_chart_line(&c, x, y, n, color, id);
		svg_chart_legend(&c, color, r->series[k].name, SVG_MARK_LINE);
		shown++;
	}
	chart_finish(&c, steady);
	svg_puts(b, "<figcaption>Every answered probe of each kind at its send time; the axis ends "
		 "near the 99.9th percentile.");
	if (shown == KIND_LINES_MAX)
		svg_puts(b, " Only the first kinds fit the legend; the table above lists all.");
	svg_puts(b, "</figcaption>\n</figure>\n");
	free(x);
}

static void page_charts(struct svg_buf *b, const struct test_result *r)
{
	double t_end = run_end_s(r);

	svg_puts(b, "<h2>Time series</h2>\n<p class=\"note\">Shaded bands are the phases; the gaps "
		 "between them are drain gaps, where only probes run.</p>\n");
	chart_goodput(b, r, t_end);
	chart_rtt(b, r, t_end);
	if (r->nseries > 0)
		chart_kinds(b, r, t_end);
	if (r->sync.valid)
		chart_owd(b, r, t_end);
	else
		svg_puts(b, "<p class=\"note\">No one-way delay chart: the clock sync failed.</p>\n");
}

static void page_head(struct svg_buf *b, const struct test_result *r)
{
	char start[40] = "";

	if (r->start_real_ns > 0)
		util_iso8601(r->start_real_ns, start, sizeof(start));
	svg_printf(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		   "<title>bloatmeter %s: ", BM_VERSION);
	svg_escape(b, r->server_addr);
	svg_puts(b, ", ");
	svg_escape(b, start);
	svg_puts(b, ", cc ");
	svg_escape(b, wording_cc_client(r));
	svg_printf(b, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", page_css);
}

int html_write(const struct test_result *r, const char *path)
{
	struct svg_buf b = { 0 };
	int rc = 0;

	page_head(&b, r);
	page_verdict(&b, r);
	page_charts(&b, r);
	page_phases(&b, r);
	page_buffers(&b, r);
	html_queue_section(&b, r); /* queue verdicts, ECN, per hop */
	if (r->nseries > 0)
		page_kinds_table(&b, r);
	page_lab(&b, r);
	page_warnings(&b, r);
	page_oneway(&b, r);
	page_header(&b, r);
	svg_puts(&b, "</body>\n</html>\n");
	if (b.failed) {
		log_error("cannot write the HTML report %s: out of memory", path);
		rc = -1;
	} else if (fileio_write_atomic(path, b.data, b.len) < 0) {
		log_error("cannot write the HTML report %s: %s", path, strerror(errno));
		rc = -1;
	}
	svg_buf_free(&b);
	return rc;
}

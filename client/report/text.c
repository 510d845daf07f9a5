/* report_text: the short human summary of a test_result — what ran, per-phase figures, the
 * buffer estimates with how they were made, warnings, and in lab mode the ground truth. */
#include "client/report/text.h"

#include <math.h>
#include <string.h>

#include "client/model/fleet.h"
#include "client/report/format.h"
#include "client/report/httpnote.h"
#include "client/report/queuewords.h"
#include "client/report/text_hops.h"
#include "client/report/text_probes.h"
#include "client/report/verdict.h"
#include "client/report/wording.h"

/* The default output fits a terminal of this many columns (tests/unit/test_report_text.c). */
#define TEXT_WIDTH 80

/* Table layout of -v: phase, goodput down/up, RTT min…max, loss, latency increase. */
#define ROW_FMT "%-15s %11s %10s %12s %7s %7s %7s %7s %14s %11s\n"

/* Writes s right-aligned in width columns, counting UTF-8 characters, not bytes ("≥"). */
static void put_cell(FILE *out, const char *s, int width)
{
	int chars = report_width(s);

	fprintf(out, "%*s%s", width > chars ? width - chars : 0, "", s);
}

/* Which clock stamped the probe replies at each end. */
static void describe_ts(const struct test_result *r, char *buf, size_t len)
{
	size_t n = result_replies(r), k = r->probes_kernel_ts;
	char srv[sizeof(r->udp_server_ts)];
	int srv_kernel = strcmp(r->udp_server_ts, "kernel") == 0;

	report_clean(r->udp_server_ts[0] ? r->udp_server_ts : "unknown", srv, sizeof(srv));
	if (n == 0)
		snprintf(buf, len, "no replies");
	else if (k >= n && srv_kernel)
		snprintf(buf, len, "kernel timestamps");
	else if (k >= n)
		snprintf(buf, len, "client kernel timestamps, server %s", srv);
	else
		snprintf(buf, len, "client kernel timestamps on %zu of %zu replies, server %s", k, n,
			 srv);
}

/* --tls-load: one line on the load's TLS and whether the kernel did it. */
static void text_tls_load(const struct test_result *r, FILE *out)
{
	const struct tls_load_report *t = &r->tls_load;
	char v[sizeof(t->version)], c[sizeof(t->cipher)];

	if (!t->on)
		return;
	if (t->flows == 0) {
		fprintf(out, "load over TLS: no flow completed its handshake\n");
		return;
	}
	fprintf(out, "load over TLS: %s %s, %d flow%s, kernel TLS %s (send %d, receive %d)\n",
		report_clean(t->version, v, sizeof(v)), report_clean(t->cipher, c, sizeof(c)),
		t->flows, t->flows == 1 ? "" : "s",
		t->ktls_send_flows == t->flows && t->ktls_recv_flows == t->flows ? "yes"
		: t->ktls_send_flows + t->ktls_recv_flows > 0 ? "partly" : "no",
		t->ktls_send_flows, t->ktls_recv_flows);
}

static void text_header(const struct test_result *r, FILE *out)
{
	char cc[160], ts[128], addr[sizeof(r->server_addr)];

	wording_cc(r, cc, sizeof(cc));
	describe_ts(r, ts, sizeof(ts));
	if (r->http) {
		fprintf(out, "bloatmeter %s → %s, %d HTTP transfer%s per direction, %s\n", BM_VERSION,
			report_clean(r->server_addr, addr, sizeof(addr)), r->cfg.flows,
			r->cfg.flows == 1 ? "" : "s", cc);
		return;
	}
	fprintf(out, "bloatmeter %s → %s, %d flow%s per direction, %s, UDP probes every %g ms (%s)\n",
		BM_VERSION, report_clean(r->server_addr, addr, sizeof(addr)), r->cfg.flows,
		r->cfg.flows == 1 ? "" : "s", cc, r->cfg.interval_ms, ts);
	text_tls_load(r, out);
}

/* The errors behind a refused congestion control, one line per end. */
static void text_cc_errors(const struct test_result *r, FILE *out)
{
	char err[sizeof(r->cc.server_error)];

	if (!r->cc.client_ok && r->cc.client_error[0])
		fprintf(out, "note: the client could not use %s: %s\n", wording_cc_requested(r),
			report_clean(r->cc.client_error, err, sizeof(err)));
	if (!r->cc.server_ok && r->cc.server_error[0])
		fprintf(out, "note: the server could not use %s: %s\n", wording_cc_requested(r),
			report_clean(r->cc.server_error, err, sizeof(err)));
}

static int unsaturated(const struct phase_result *ph)
{
	return ph->kind != PHASE_IDLE && !ph->saturated;
}

/* A phase row's name (with "*" when it never saturated), its loss up/down and its latency
 * increase ("-" for idle or unknown; unit appended when given). */
struct row_cells {
	char name[24], loss[40], inc[24];
};

static void row_cells(const struct phase_result *ph, const char *unit, int http,
		      struct row_cells *c)
{
	char lu[16], ld[16];

	snprintf(c->name, sizeof(c->name), "%s%s", phase_name(ph->kind), unsaturated(ph) ? "*" : "");
	if (http) /* no split without a bloatmeterd: the total of the latency requests */
		snprintf(c->loss, sizeof(c->loss), "%s total",
			 report_pct(ph->probes_sent ? 100.0 * (double)(ph->probes_sent -
						     ph->probes_received) / (double)ph->probes_sent
						    : NAN, lu, sizeof(lu)));
	else
		snprintf(c->loss, sizeof(c->loss), "%s/%s",
			 report_pct(ph->loss_up_pct, lu, sizeof(lu)),
			 report_pct(ph->loss_down_pct, ld, sizeof(ld)));
	if (ph->kind == PHASE_IDLE || !isfinite(ph->latency_increase_ms))
		snprintf(c->inc, sizeof(c->inc), "-");
	else
		snprintf(c->inc, sizeof(c->inc), "%+.1f%s", report_nz(ph->latency_increase_ms, 1), unit);
}

static void text_phase_row(const struct phase_result *ph, int http, FILE *out)
{
	const struct stats_summary *s = &ph->rtt_ms;
	double none = NAN;
	char dn[16], up[16], mn[16], p50[16], p90[16], p99[16], mx[16];
	struct row_cells c;

	row_cells(ph, " ms", http, &c);
	fprintf(out, ROW_FMT, c.name, report_num(ph->down_mbps, 2, dn, sizeof(dn)),
		report_num(ph->up_mbps, 2, up, sizeof(up)), report_num(s->n ? s->min : none, 2, mn, sizeof(mn)),
		report_num(s->n ? s->p50 : none, 2, p50, sizeof(p50)),
		report_num(s->n ? s->p90 : none, 2, p90, sizeof(p90)),
		report_num(s->n ? s->p99 : none, 2, p99, sizeof(p99)),
		report_num(s->n ? s->max : none, 2, mx, sizeof(mx)), c.loss, c.inc);
}

static void text_phases(const struct test_result *r, FILE *out)
{
	int any_unsat = 0;

	fprintf(out, ROW_FMT, "phase", "down Mbit/s", "up Mbit/s", "RTT ms: min", "p50", "p90",
		"p99", "max", "loss up/down", "+latency");
	for (int i = 0; i < r->nphases && i < PHASE_KINDS; i++) {
		text_phase_row(&r->phases[i], r->http, out);
		any_unsat |= unsaturated(&r->phases[i]);
	}
	if (any_unsat)
		fprintf(out, "* never reached stable goodput: the queue may not have filled, so its "
			     "figures are uncertain and a buffer measured there is a lower bound\n");
}

static void text_buffer_line(const struct test_result *r, const char *dir, enum phase_kind k,
			     const struct buffer_estimate *b, FILE *out)
{
	char ms[16], bytes[24], p50[16], p99[16], qmax[16], lo[16], hi[16], ci[64] = "";
	const char *why = "no probe replies in the window";

	if (!b->valid) {
		if (!result_find_phase(r, k))
			why = "phase not run";
		else if (!isfinite(r->rtt0_ms))
			why = "no baseline RTT";
		fprintf(out, "  %-9s not measured (%s)\n", dir, why);
		return;
	}
	if (b->has_ci)
		snprintf(ci, sizeof(ci), " [95 %% CI %s–%s%s]", report_num(b->ci_low_ms, 1, lo, sizeof(lo)),
			 report_num(b->ci_high_ms, 1, hi, sizeof(hi)), b->unstable ? ", unstable" : "");
	fprintf(out, "  %-9s %s%s ms%s ≈ %s   (%s phase, %zu samples; p50 %s ms, p99 %s ms, max %s ms%s%s)\n",
		dir, b->lower_bound ? "≥ " : "", report_num(b->ms, 1, ms, sizeof(ms)), ci,
		report_bytes(b->bytes, bytes, sizeof(bytes)), phase_name(b->phase), b->samples,
		report_num(b->q_p50_ms, 1, p50, sizeof(p50)), report_num(b->q_p99_ms, 1, p99, sizeof(p99)),
		report_num(b->q_max_ms, 1, qmax, sizeof(qmax)),
		b->lower_bound ? "; lower bound: " : "", b->lower_bound ? b->lower_bound_why : "");
	if (b->managed)
		fprintf(out, "  %-9s %s\n", "", WORDING_MANAGED_QUEUE);
}

static void text_buffers(const struct test_result *r, FILE *out)
{
	char base[128] = "the idle minimum RTT", err[16];

	if (r->sync.valid)
		snprintf(base, sizeof(base), "the idle minimum one-way delay per direction, clocks "
			 "synced to ±%s ms", report_num(r->sync.error_ns / 1e6, 3, err, sizeof(err)));
	else if (isfinite(r->rtt0_ms))
		snprintf(base, sizeof(base), "the idle minimum RTT of %.2f ms", r->rtt0_ms);
	fprintf(out, "Buffer (queueing delay above %s: median of the 1 s maxima over the steady "
		     "window, × IP throughput):\n", base);
	text_buffer_line(r, "downlink", PHASE_DOWNLOAD, &r->buffer_down, out);
	text_buffer_line(r, "uplink", PHASE_UPLOAD, &r->buffer_up, out);
	if (r->buffer_bidir_down.valid)
		text_buffer_line(r, "downlink", PHASE_BIDIR, &r->buffer_bidir_down, out);
	if (r->buffer_bidir_up.valid)
		text_buffer_line(r, "uplink", PHASE_BIDIR, &r->buffer_bidir_up, out);
}

/* -v: what manages each loaded direction's queue, the evidence, and what to change. */
static void text_queue(const struct test_result *r, FILE *out)
{
	const struct queue_verdict *q[2] = { &r->queue_down, &r->queue_up };
	const double shaper[2] = { r->shaper_down_mbps, r->shaper_up_mbps };
	char line[512], advice[160];

	if (q[0]->verdict == NULL && q[1]->verdict == NULL)
		return;
	fprintf(out, "Queue (what manages it):\n");
	for (int i = 0; i < 2; i++) {
		if (q[i]->verdict == NULL)
			continue;
		queuewords_advice(q[i], shaper[i], advice, sizeof(advice));
		snprintf(line, sizeof(line), "%s: %s%s%s", q[i]->verdict, q[i]->evidence,
			 advice[0] ? "; advice: " : "", advice);
		report_wrap(out, i ? "  uplink    " : "  downlink  ", line, 12, TEXT_WIDTH);
	}
	if (r->ecn.requested) {
		snprintf(line, sizeof(line), "%s; %s", r->ecn.evidence, r->ecn.how);
		report_wrap(out, "  ECN       ", line, 12, TEXT_WIDTH);
	}
}

static void text_warnings(const struct test_result *r, FILE *out)
{
	int n = r->nwarnings;
	char w[sizeof(r->warnings[0])];

	if (n > (int)(sizeof(r->warnings) / sizeof(r->warnings[0])))
		n = (int)(sizeof(r->warnings) / sizeof(r->warnings[0]));
	for (int i = 0; i < n; i++)
		report_wrap(out, "warning: ", report_clean(r->warnings[i], w, sizeof(w)), 2,
			    TEXT_WIDTH);
}

/* One direction of the lab comparison: configured vs measured and the error in ms. */
static void text_lab_row(const char *dir, uint64_t rate_bps, double buf_ms, uint64_t limit,
			 const struct buffer_estimate *b, FILE *out)
{
	char rate[16], cms[16], mms[24], v[16], mbytes[24], err[16];
	int ok = b->valid && buf_ms > 0;

	snprintf(mms, sizeof(mms), "%s%s", b->valid && b->lower_bound ? "≥" : "",
		 report_num(b->valid ? b->ms : NAN, 1, v, sizeof(v)));
	if (ok)
		snprintf(err, sizeof(err), "%+.1f%%", (b->ms - buf_ms) / buf_ms * 100.0);
	else
		snprintf(err, sizeof(err), "-");
	fprintf(out, "  %-10s %11s %10s %12llu ", dir,
		report_num((double)rate_bps / 1e6, 2, rate, sizeof(rate)), report_num(buf_ms, 1, cms, sizeof(cms)),
		(unsigned long long)limit);
	put_cell(out, mms, 12);
	fprintf(out, " %15s %8s\n", report_num(b->valid ? b->bytes : NAN, 0, mbytes, sizeof(mbytes)), err);
}

static void text_lab(const struct test_result *r, FILE *out)
{
	const struct lab_truth *t = &r->truth;

	char q[384];

	wording_lab_queue(t, q, sizeof(q));
	fprintf(out, "Lab ground truth (limit = rate × buffer):\n");
	report_wrap(out, "  bottleneck ", q, 13, TEXT_WIDTH);
	fprintf(out, "  %-10s %11s %10s %12s %12s %15s %8s\n", "direction", "rate Mbit/s",
		"buffer ms", "limit bytes", "measured ms", "measured bytes", "error");
	text_lab_row("downlink", t->down_rate_bps, t->down_buffer_ms, t->down_limit_bytes,
		     &r->buffer_down, out);
	text_lab_row("uplink", t->up_rate_bps, t->up_buffer_ms, t->up_limit_bytes, &r->buffer_up,
		     out);
}

/* "p50 / p95" of a one-way queueing delay summary, or "-". */
static const char *queue_cell(const struct stats_summary *s, char *buf, size_t len)
{
	char a[16], b[16];

	if (s->n == 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%s / %s", report_num(s->p50, 1, a, sizeof(a)), report_num(s->p95, 1, b, sizeof(b)));
	return buf;
}

/* Where the queueing happened: one-way delays split it by direction (needs clock sync). */
static void text_oneway(const struct test_result *r, FILE *out)
{
	if (!r->sync.valid)
		return;
	fprintf(out, "One-way queueing delay, ms (p50 / p95)      upstream    downstream\n");
	for (int i = 0; i < r->nphases && i < PHASE_KINDS; i++) {
		char up[40], down[40];

		fprintf(out, "  %-15s %28s %13s\n", phase_name(r->phases[i].kind),
			queue_cell(&r->phases[i].q_up_ms, up, sizeof(up)),
			queue_cell(&r->phases[i].q_down_ms, down, sizeof(down)));
	}
	fputc('\n', out);
}

/* Grades per direction and overall, with the increase each comes from. */
static void text_grades(const struct test_result *r, FILE *out)
{
	char inc[24];

	if (r->grade_overall == NULL)
		return;
	fprintf(out, "Grade (latency increase; A+ < 5 ms, A < 30, B < 60, C < 200, D < 400, F):");
	for (int i = 0; i < r->nphases && i < PHASE_KINDS; i++) {
		const struct phase_result *ph = &r->phases[i];

		if (ph->grade) {
			snprintf(inc, sizeof(inc), "%+.1f", ph->latency_increase_ms);
			fprintf(out, "  %s %s (%s ms)", phase_name(ph->kind), ph->grade, inc);
		}
	}
	fprintf(out, "  → overall %s\n", r->grade_overall);
	if (strcmp(r->grade_overall, "A+") != 0 && strcmp(r->grade_overall, "A") != 0 &&
	    (isfinite(r->shaper_down_mbps) || isfinite(r->shaper_up_mbps))) {
		char d[16], u[16];

		fprintf(out, "Shaper advice (SQM/cake): shape download to ≈ %s Mbit/s and upload to ≈ %s "
			     "Mbit/s (90 %% of the measured rate) so the queue forms where it is managed\n",
			report_num(r->shaper_down_mbps, 1, d, sizeof(d)), report_num(r->shaper_up_mbps, 1, u, sizeof(u)));
	}
}

static void text_loss_line(const char *phase, const char *dir, const struct loss_pattern *lp,
			   FILE *out)
{
	char ev[sizeof(lp->evidence)];

	if (lp->lost == 0)
		return;
	fprintf(out, "  %-14s %-4s %-9s %zu lost in %zu periods; %s (confidence %.1f)\n", phase, dir,
		lp->cls ? lp->cls : "?", lp->lost, lp->periods, report_clean(lp->evidence, ev, sizeof(ev)),
		lp->confidence);
}

/* Loaded phases that ran (not the idle one). */
static int loaded_phases(const struct test_result *r)
{
	int n = 0;

	for (int i = 0; i < r->nphases && i < PHASE_KINDS; i++)
		n += r->phases[i].kind != PHASE_IDLE;
	return n;
}

/* Drop patterns of the directions that lost probes, and the recovery after each load. */
static void text_drops(const struct test_result *r, FILE *out)
{
	int any = 0;
	char ms[24];

	for (int i = 0; i < r->nphases && i < PHASE_KINDS; i++)
		any |= r->phases[i].loss_up.lost > 0 || r->phases[i].loss_down.lost > 0;
	if (any) {
		fprintf(out, "Drop patterns (probe losses per direction):\n");
		for (int i = 0; i < r->nphases && i < PHASE_KINDS; i++) {
			text_loss_line(phase_name(r->phases[i].kind), "up", &r->phases[i].loss_up, out);
			text_loss_line(phase_name(r->phases[i].kind), "down", &r->phases[i].loss_down, out);
		}
	}
	if (!loaded_phases(r))
		return; /* idle only: no load to retransmit or recover from */
	fprintf(out, "TCP retransmissions of the load flows:");
	for (int i = 0; i < r->nphases && i < PHASE_KINDS; i++) {
		const struct phase_result *ph = &r->phases[i];

		if (ph->kind == PHASE_DOWNLOAD || ph->kind == PHASE_BIDIR)
			fprintf(out, "  %s down %lld", phase_name(ph->kind), (long long)ph->retrans_down);
		if (ph->kind == PHASE_UPLOAD || ph->kind == PHASE_BIDIR)
			fprintf(out, "  %s up %lld", phase_name(ph->kind), (long long)ph->retrans_up);
	}
	fputc('\n', out);
	fprintf(out, "Recovery (load end → RTT back within idle p99 + 1 ms):");
	for (int i = 0; i < r->nphases && i < PHASE_KINDS; i++) {
		const struct phase_result *ph = &r->phases[i];

		if (ph->kind == PHASE_IDLE)
			continue;
		snprintf(ms, sizeof(ms), "%.0f ms", ph->recovery_ms);
		fprintf(out, "  %s %s", phase_name(ph->kind),
			isnan(ph->recovery_ms) ? "not within the gap" : ms);
	}
	fputc('\n', out);
}

static void detail_pattern(const char *dir, const struct loss_pattern *lp, FILE *out)
{
	char d[16], p[16], rr[16], bd[16], gd[16], qb[16];

	fprintf(out, "    %-4s %-9s lost %zu in %zu periods (mean %.2f, max %zu), distance %s, "
		     "Gilbert p %s r %s, bursts %zu (density %s, gap %s), q before loss %s ms\n",
		dir, lp->cls ? lp->cls : "-", lp->lost, lp->periods, lp->periods ? lp->mean_period : 0.0,
		lp->max_period, report_num(lp->mean_distance, 1, d, sizeof(d)), report_num(lp->gilbert_p, 4, p, sizeof(p)),
		report_num(lp->gilbert_r, 4, rr, sizeof(rr)), lp->bursts, report_num(lp->burst_density, 3, bd, sizeof(bd)),
		report_num(lp->gap_density, 4, gd, sizeof(gd)), report_num(lp->q_before_ms, 1, qb, sizeof(qb)));
}

/* With -v: everything behind the summary, per phase. */
static void text_details(const struct test_result *r, FILE *out)
{
	char a[16], b[16], c[16], d[16];

	fprintf(out, "\nDetails\n");
	if (r->sync.valid)
		fprintf(out, "  clock sync: error bound ±%s ms, drift %s ppm (%s), %zu + %zu exchanges; "
			     "idle one-way minima up %s ms, down %s ms\n",
			report_num(r->sync.error_ns / 1e6, 3, a, sizeof(a)), report_num(r->sync.drift * 1e6, 3, b, sizeof(b)),
			r->sync.drift_fitted ? "corrected" : "not corrected", r->sync.n_pre, r->sync.n_post,
			report_num(r->owd0_up_ms, 3, c, sizeof(c)), report_num(r->owd0_down_ms, 3, d, sizeof(d)));
	else
		fprintf(out, "  clock sync: not available (per-direction figures use RTT)\n");
	fprintf(out, "  load flows: MSS %d, IP bytes per goodput byte %s\n", r->mss,
		report_num(r->ip_overhead, 4, a, sizeof(a)));
	for (int i = 0; i < r->nphases && i < PHASE_KINDS; i++) {
		const struct phase_result *ph = &r->phases[i];

		fprintf(out, "  %s: %.1f–%.1f s, steady from %s s, probes %zu sent / %zu answered",
			phase_name(ph->kind), (double)(ph->start_ns - r->t0_ns) / 1e9,
			(double)(ph->end_ns - r->t0_ns) / 1e9,
			ph->steady_start_ns < 0 ? "-" : report_num((double)(ph->steady_start_ns - r->t0_ns) / 1e9, 2, a, sizeof(a)),
			ph->probes_sent, ph->probes_received);
		if (ph->kind != PHASE_IDLE)
			fprintf(out, ", rwnd-limited up %s down %s, sndbuf-limited up %s down %s",
				report_num(ph->rwnd_limited_up, 3, a, sizeof(a)), report_num(ph->rwnd_limited_down, 3, b, sizeof(b)),
				report_num(ph->sndbuf_limited_up, 3, c, sizeof(c)),
				report_num(ph->sndbuf_limited_down, 3, d, sizeof(d)));
		fputc('\n', out);
		detail_pattern("up", &ph->loss_up, out);
		detail_pattern("down", &ph->loss_down, out);
	}
}

/* With several candidate servers: which one was measured, and why that one. */
static void text_fleet(const struct test_result *r, FILE *out)
{
	const struct fleet *f = r->fleet;
	char name[FLEET_HOST_MAX + 16], clean[sizeof(name)], ms[24], line[sizeof(name) + 80];

	if (f == NULL || f->chosen < 0)
		return;
	fleet_entry_str(&f->cand[f->chosen], name, sizeof(name));
	snprintf(line, sizeof(line), "%s (lowest idle RTT %s ms of %d candidate%s)",
		 report_clean(name, clean, sizeof(clean)),
		 report_num(f->cand[f->chosen].median_ms, 2, ms, sizeof(ms)), f->n,
		 f->n == 1 ? "" : "s");
	report_wrap(out, "server: ", line, 2, TEXT_WIDTH);
}

/* The verdict: a label column, then each value wrapped at TEXT_WIDTH. */
static void text_verdict(const struct test_result *r, FILE *out)
{
	struct verdict v;
	char label[32];

	verdict_build(r, &v);
	for (int i = 0; i < v.n; i++) {
		snprintf(label, sizeof(label), "%-*s ", VERDICT_LABEL, v.line[i].label);
		report_wrap(out, label, v.line[i].value, VERDICT_LABEL + 1, TEXT_WIDTH);
	}
}

/* The default phase table, within TEXT_WIDTH: goodput, RTT p50/p99, increase, loss. */
#define COMPACT_FMT "%-14s %11s %10s %8s %7s %9s %13s\n"

static void text_compact_row(const struct phase_result *ph, int http, FILE *out)
{
	const struct stats_summary *s = &ph->rtt_ms;
	char dn[16], up[16], p50[16], p99[16];
	struct row_cells c;

	row_cells(ph, "", http, &c);
	fprintf(out, COMPACT_FMT, c.name, report_num(ph->down_mbps, 1, dn, sizeof(dn)),
		report_num(ph->up_mbps, 1, up, sizeof(up)),
		report_num(s->n ? s->p50 : NAN, 1, p50, sizeof(p50)),
		report_num(s->n ? s->p99 : NAN, 1, p99, sizeof(p99)), c.inc, c.loss);
}

static void text_compact_phases(const struct test_result *r, FILE *out)
{
	int any_unsat = 0;

	fprintf(out, COMPACT_FMT, "phase", "down Mbit/s", "up Mbit/s", "RTT p50", "p99 ms",
		"+latency", "loss up/down");
	for (int i = 0; i < r->nphases && i < PHASE_KINDS; i++) {
		text_compact_row(&r->phases[i], r->http, out);
		any_unsat |= unsaturated(&r->phases[i]);
	}
	if (any_unsat)
		report_wrap(out, "", "* never reached stable goodput: its buffer is a lower bound",
			    2, TEXT_WIDTH);
}

/* The lab's configured truth beside each estimate, one line per direction. */
static void text_lab_compact_row(const char *label, const char *dir, uint64_t rate_bps,
				 double truth_ms, const struct buffer_estimate *b, FILE *out)
{
	char rate[16], ms[16], err[24] = "", line[160], pre[32];

	if (b->valid && truth_ms > 0)
		snprintf(err, sizeof(err), " (%+.1f %%)", (b->ms - truth_ms) / truth_ms * 100.0);
	snprintf(line, sizeof(line), "%-8s %s Mbit/s, buffer %g ms: measured %s%s ms%s", dir,
		 report_num((double)rate_bps / 1e6, 1, rate, sizeof(rate)), truth_ms,
		 b->valid && b->lower_bound ? "≥ " : "", report_num(b->valid ? b->ms : NAN, 1, ms,
								    sizeof(ms)), err);
	snprintf(pre, sizeof(pre), "%-*s ", VERDICT_LABEL, label);
	report_wrap(out, pre, line, VERDICT_LABEL + 1, TEXT_WIDTH);
}

static void text_lab_compact(const struct test_result *r, FILE *out)
{
	const struct lab_truth *t = &r->truth;
	char q[384], line[400], pre[32];

	wording_lab_queue(t, q, sizeof(q));
	snprintf(line, sizeof(line), "%-8s %s", "queue", q);
	snprintf(pre, sizeof(pre), "%-*s ", VERDICT_LABEL, "Lab truth");
	report_wrap(out, pre, line, VERDICT_LABEL + 1, TEXT_WIDTH);
	text_lab_compact_row("", "downlink", t->down_rate_bps, t->down_buffer_ms,
			     &r->buffer_down, out);
	text_lab_compact_row("", "uplink", t->up_rate_bps, t->up_buffer_ms, &r->buffer_up, out);
}

/* -v: the run's set-up, the full phase table, one-way delays, every probe kind, the buffers
 * with their intervals, grades and drop patterns. */
static void text_detail(const struct test_result *r, FILE *out)
{
	fputc('\n', out);
	text_header(r, out);
	text_cc_errors(r, out);
	fputc('\n', out);
	text_phases(r, out);
	fputc('\n', out);
	text_oneway(r, out);
	report_text_probes(r, out);
	text_buffers(r, out);
	text_queue(r, out);
	fputc('\n', out);
	text_grades(r, out);
	text_drops(r, out);
	if (r->lab) {
		fputc('\n', out);
		text_lab(r, out);
	}
}

void report_text(const struct test_result *r, FILE *out)
{
	if (r->http) {
		report_text_http(r, out);
		fputc('\n', out);
	}
	text_verdict(r, out);
	fputc('\n', out);
	text_compact_phases(r, out);
	text_fleet(r, out); /* which of several servers was measured, and why */
	report_text_hops(r, out); /* --per-hop: where the queue builds */
	if (r->lab) {
		fputc('\n', out);
		text_lab_compact(r, out);
	}
	if (r->nwarnings > 0) {
		fputc('\n', out);
		text_warnings(r, out);
	}
	if (r->cfg.verbose > 0)
		text_detail(r, out);
	if (r->cfg.verbose > 1)
		text_details(r, out);
}

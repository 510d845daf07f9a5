/* report_json: the canonical JSON view of a test_result; every field is described in
 * docs/report.md. */
#include "client/report/json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/model/fleet.h"
#include "client/report/httpnote.h"
#include "client/report/json_hops.h"
#include "client/report/json_parts.h"
#include "client/report/json_queue.h"
#include "common/fileio.h"
#include "common/jsonb.h"
#include "common/log.h"
#include "common/util.h"

#define NUM_MAX 48  /* longest formatted number, with room for %.17g */
#define DEC_US 1    /* microseconds: 100 ns, the stamps' useful resolution */

/* One cell of a sample row: a value and its decimals; NAN becomes null. */
struct cell {
	double v;
	int dec;
};

/* A sample row such as [1.25, 31.207, 0]. It keeps its elements for in-memory readers but
 * serialises from a pre-built string, so pretty output stays one line per row instead of
 * five, which matters for thousands of probes. */
#define ROW_MAX 9 /* cells per sample row at most (the TCP_INFO rows) */

static json_object *j_row(struct jb *b, const struct cell *c, int n)
{
	char text[(NUM_MAX + 1) * ROW_MAX + 2], num[NUM_MAX];
	json_object *row = jb_arr(b);
	char *copy;
	size_t o = 0;

	text[o++] = '[';
	for (int i = 0; i < n && i < ROW_MAX; i++) {
		if (isfinite(c[i].v))
			(void)util_format_decimal(c[i].v, c[i].dec, num, sizeof(num));
		else
			strcpy(num, "null");
		o += (size_t)snprintf(text + o, sizeof(text) - o, "%s%s", i ? "," : "", num);
		jb_push(b, row, jb_num(b, c[i].v, c[i].dec));
	}
	snprintf(text + o, sizeof(text) - o, "]");
	if (row == NULL)
		return NULL;
	if ((copy = strdup(text)) == NULL) {
		b->failed = 1;
		return row; /* still valid, only pretty-printed at length */
	}
	json_object_set_serializer(row, json_object_userdata_to_json_string, copy,
				   json_object_free_userdata);
	return row;
}

/* A monotonic time as seconds since the test's t0. */
static double rel_s(const struct test_result *r, int64_t ns)
{
	return (double)(ns - r->t0_ns) / 1e9;
}

/* --tls-load: what the load flows negotiated, and whether the kernel did their TLS ("ktls":
 * every flow, both directions); null for a plain load. */
static json_object *json_tls_load(struct jb *b, const struct tls_load_report *t)
{
	json_object *o;

	if (!t->on)
		return NULL;
	o = jb_obj(b);
	jb_add(b, o, "version", t->flows ? jb_str(b, t->version) : NULL);
	jb_add(b, o, "cipher", t->flows ? jb_str(b, t->cipher) : NULL);
	jb_add(b, o, "flows", jb_int(b, t->flows));
	jb_add(b, o, "ktls", jb_bool(b, t->flows > 0 && t->ktls_send_flows == t->flows &&
					     t->ktls_recv_flows == t->flows));
	jb_add(b, o, "ktls_send_flows", jb_int(b, t->ktls_send_flows));
	jb_add(b, o, "ktls_recv_flows", jb_int(b, t->ktls_recv_flows));
	return o;
}

static json_object *json_config(struct jb *b, const struct test_result *r)
{
	const struct client_config *cfg = &r->cfg;
	json_object *o = jb_obj(b), *phases = jb_arr(b);

	for (int i = 0; i < cfg->nphases && i < PHASE_KINDS; i++)
		jb_push(b, phases, jb_str(b, phase_name(cfg->phases[i])));
	jb_add(b, o, "phases", phases);
	jb_add(b, o, "flows", jb_int(b, cfg->flows));
	jb_add(b, o, "flows_auto", jb_bool(b, cfg->flows_auto));
	jb_add(b, o, "duration_s", jb_num(b, cfg->duration_s, DEC_S));
	jb_add(b, o, "idle_s", jb_num(b, cfg->idle_s, DEC_S));
	jb_add(b, o, "gap_s", jb_num(b, cfg->gap_s, DEC_S));
	jb_add(b, o, "interval_ms", jb_num(b, cfg->interval_ms, DEC_MS));
	jb_add(b, o, "probe_size", jb_int(b, cfg->probe_size));
	jb_add(b, o, "cc", jb_str(b, cfg->cc));
	jb_add(b, o, "tls_load", json_tls_load(b, &r->tls_load));
	return o;
}

/* One end's congestion control; "error" only when it could not be set. */
static json_object *json_cc_end(struct jb *b, int ok, const char *used, const char *error)
{
	json_object *o = jb_obj(b);

	jb_add(b, o, "ok", jb_bool(b, ok));
	jb_add(b, o, "used", jb_str(b, used));
	if (!ok)
		jb_add(b, o, "error", jb_str(b, error));
	return o;
}

static json_object *json_cc(struct jb *b, const struct test_result *r)
{
	const struct cc_report *cc = &r->cc;
	json_object *o = jb_obj(b);

	jb_add(b, o, "requested", jb_str(b, cc->requested[0] ? cc->requested : r->cfg.cc));
	jb_add(b, o, "client", json_cc_end(b, cc->client_ok, cc->client_used, cc->client_error));
	/* HTTP mode: the server's end is visible only when it names it (docs/http.md). */
	jb_add(b, o, "server", r->http && !cc->server_used[0]
				       ? NULL
				       : json_cc_end(b, cc->server_ok || !result_cc_asked(r, 1),
						     cc->server_used, cc->server_error));
	return o;
}

static json_object *json_timestamps(struct jb *b, const struct test_result *r)
{
	json_object *o = jb_obj(b);

	jb_add(b, o, "server_udp", r->http ? NULL : jb_str(b, r->udp_server_ts));
	jb_add(b, o, "client_kernel_replies", jb_int(b, (int64_t)r->probes_kernel_ts));
	jb_add(b, o, "replies", jb_int(b, (int64_t)result_replies(r)));
	return o;
}

/* Whole-run probe counts; the server's own count lets readers check the up/down loss split. */
static json_object *json_probe_totals(struct jb *b, const struct test_result *r)
{
	json_object *o = jb_obj(b);

	jb_add(b, o, "sent", jb_int(b, (int64_t)r->nprobes));
	jb_add(b, o, "received", jb_int(b, (int64_t)result_replies(r)));
	jb_add(b, o, "server_received", r->srv_probe_count ? jb_int(b, (int64_t)r->srv_probe_count)
							    : NULL);
	jb_add(b, o, "udp_blocked", json_object_new_boolean(r->udp_blocked));
	jb_add(b, o, "udp_blocked_at_s",
	       r->udp_blocked_ns > 0 ? jb_num(b, (double)(r->udp_blocked_ns - r->t0_ns) / NS_PER_SEC,
					      DEC_S)
				     : NULL);
	return o;
}

/* RTT order statistics; all null when the phase had no replies. */

/* One-way queueing delay summary of one direction; null without samples. */
static json_object *json_queue(struct jb *b, const struct stats_summary *s)
{
	json_object *o;

	if (s->n == 0)
		return NULL;
	o = jb_obj(b);
	jb_add(b, o, "p50", jb_num(b, s->p50, DEC_MS));
	jb_add(b, o, "p95", jb_num(b, s->p95, DEC_MS));
	jb_add(b, o, "p99", jb_num(b, s->p99, DEC_MS));
	jb_add(b, o, "max", jb_num(b, s->max, DEC_MS));
	jb_add(b, o, "samples", jb_int(b, (int64_t)s->n));
	return o;
}

/* One direction's drop pattern: RFC 3357 periods and distances, Gilbert p/r, class. */
static json_object *json_loss_pattern(struct jb *b, const struct loss_pattern *lp)
{
	json_object *o = jb_obj(b);

	jb_add(b, o, "class", jb_str(b, lp->cls ? lp->cls : "none"));
	jb_add(b, o, "confidence", jb_num(b, lp->confidence, DEC_RATIO));
	jb_add(b, o, "evidence", jb_str(b, lp->evidence));
	jb_add(b, o, "lost", jb_int(b, (int64_t)lp->lost));
	jb_add(b, o, "periods", jb_int(b, (int64_t)lp->periods));
	jb_add(b, o, "mean_period", jb_num(b, lp->periods ? lp->mean_period : NAN, DEC_RATIO));
	jb_add(b, o, "max_period", jb_int(b, (int64_t)lp->max_period));
	jb_add(b, o, "mean_distance", jb_num(b, lp->mean_distance, DEC_RATIO));
	jb_add(b, o, "gilbert_p", jb_num(b, lp->gilbert_p, DEC_RATIO));
	jb_add(b, o, "gilbert_r", jb_num(b, lp->gilbert_r, DEC_RATIO));
	jb_add(b, o, "bursts", jb_int(b, (int64_t)lp->bursts));
	jb_add(b, o, "burst_density", jb_num(b, lp->burst_density, DEC_RATIO));
	jb_add(b, o, "gap_density", jb_num(b, lp->gap_density, DEC_RATIO));
	jb_add(b, o, "q_before_loss_ms", jb_num(b, lp->q_before_ms, DEC_MS));
	return o;
}

/* Clock sync behind the one-way delays, or null when it failed (figures then use RTT). */
static json_object *json_sync(struct jb *b, const struct test_result *r)
{
	const struct clock_fit *f = &r->sync;
	json_object *o;

	if (!f->valid)
		return NULL;
	o = jb_obj(b);
	jb_add(b, o, "drift_ppm", jb_num(b, f->drift * 1e6, DEC_MS));
	jb_add(b, o, "drift_corrected", jb_bool(b, f->drift_fitted));
	jb_add(b, o, "error_bound_ms", jb_num(b, f->error_ns / 1e6, DEC_MS));
	jb_add(b, o, "exchanges_pre", jb_int(b, (int64_t)f->n_pre));
	jb_add(b, o, "exchanges_post", jb_int(b, (int64_t)f->n_post));
	jb_add(b, o, "owd0_ms", jb_pair(b, "up", jb_num(b, r->owd0_up_ms, DEC_MS), "down",
				      jb_num(b, r->owd0_down_ms, DEC_MS)));
	return o;
}

/* The reflector's hold time in the phase's RTT window; null without replies. */
static json_object *json_server_hold(struct jb *b, const struct stats_summary *s)
{
	json_object *o;

	if (s->n == 0)
		return NULL;
	o = jb_obj(b);
	jb_add(b, o, "p50", jb_num(b, s->p50, DEC_US));
	jb_add(b, o, "p99", jb_num(b, s->p99, DEC_US));
	jb_add(b, o, "max", jb_num(b, s->max, DEC_US));
	return o;
}

/* Probe loss split up and down: HTTP mode has no server count to split it with (null), its
 * total is probes.sent - probes.received. */
static void json_phase_loss(struct jb *b, json_object *o, const struct test_result *r,
			    const struct phase_result *ph)
{
	if (r->http) {
		jb_add(b, o, "loss_pct", jb_pair(b, "up", NULL, "down", NULL));
		jb_add(b, o, "lost", jb_pair(b, "up", NULL, "down", NULL));
		return;
	}
	jb_add(b, o, "loss_pct",
	      jb_pair(b, "up", jb_num(b, ph->loss_up_pct, DEC_PCT), "down",
		     jb_num(b, ph->loss_down_pct, DEC_PCT)));
	jb_add(b, o, "lost",
	      jb_pair(b, "up", jb_int(b, (int64_t)ph->lost_up), "down",
		     jb_int(b, (int64_t)ph->lost_down)));
}

/* The probe budget of a loaded phase (docs/report.md); null for idle phases and runs without
 * a run-time record. The HTTP mode has one kind of probe, its latency requests: no
 * intervals_ms, and scale is theirs. */
static json_object *json_probe_budget(struct jb *b, const struct test_result *r,
				      const struct phase_result *ph)
{
	static const char *const kind[BUDGET_KINDS] = { "udp", "icmp", "dns", "tcp", "inflow",
							"hop" };
	json_object *o, *iv;

	if (ph->kind == PHASE_IDLE || (!(ph->probe_scale > 0) && !(r->http && r->probe_wire)))
		return NULL;
	o = jb_obj(b);
	jb_add(b, o, "link_mbps", jb_pair(b, "down", jb_num(b, ph->link_mbps[0], DEC_MBPS), "up",
					  jb_num(b, ph->link_mbps[1], DEC_MBPS)));
	jb_add(b, o, "probe_kbps", jb_pair(b, "down", jb_num(b, ph->probe_kbps[0], DEC_MBPS), "up",
					   jb_num(b, ph->probe_kbps[1], DEC_MBPS)));
	jb_add(b, o, "ack_kbps", jb_pair(b, "down", jb_num(b, ph->ack_kbps[0], DEC_MBPS), "up",
					 jb_num(b, ph->ack_kbps[1], DEC_MBPS)));
	jb_add(b, o, "share", jb_pair(b, "down", jb_num(b, ph->probe_share[0], DEC_RATIO), "up",
				      jb_num(b, ph->probe_share[1], DEC_RATIO)));
	jb_add(b, o, "floor", jb_bool(b, ph->probe_floor));
	jb_add(b, o, "scale", jb_num(b, ph->probe_scale, DEC_RATIO));
	if (r->http) {
		jb_add(b, o, "intervals_ms", NULL);
		return o;
	}
	iv = jb_obj(b);
	for (int k = 0; k < BUDGET_KINDS; k++)
		jb_add(b, iv, kind[k], jb_num(b, ph->probe_ms[k], DEC_MS));
	jb_add(b, o, "intervals_ms", iv);
	return o;
}

static json_object *json_phase(struct jb *b, const struct test_result *r,
			       const struct phase_result *ph)
{
	json_object *o = jb_obj(b);
	int idle = ph->kind == PHASE_IDLE;

	jb_add(b, o, "name", jb_str(b, phase_name(ph->kind)));
	jb_add(b, o, "start_s", jb_num(b, rel_s(r, ph->start_ns), DEC_S));
	jb_add(b, o, "end_s", jb_num(b, rel_s(r, ph->end_ns), DEC_S));
	jb_add(b, o, "steady_start_s",
	      ph->steady_start_ns < 0 ? NULL : jb_num(b, rel_s(r, ph->steady_start_ns), DEC_S));
	jb_add(b, o, "saturated", jb_bool(b, ph->saturated));
	jb_add(b, o, "throughput_mbps",
	      jb_pair(b, "down", jb_num(b, ph->down_mbps, DEC_MBPS), "up",
		     jb_num(b, ph->up_mbps, DEC_MBPS)));
	jb_add(b, o, "rtt_ms", report_json_rtt(b, &ph->rtt_ms));
	jb_add(b, o, "rtt_samples", jb_int(b, (int64_t)ph->rtt_ms.n));
	jb_add(b, o, "jitter_ms", jb_num(b, ph->jitter_ms, DEC_MS));
	jb_add(b, o, "server_hold_us", r->http ? NULL : json_server_hold(b, &ph->server_hold_us));
	jb_add(b, o, "flows", jb_pair(b, "down", jb_int(b, ph->flows_down), "up",
				      jb_int(b, ph->flows_up)));
	jb_add(b, o, "cpu_share",
	       jb_pair(b, "client", jb_num(b, ph->cpu_client, DEC_RATIO), "server",
		       jb_num(b, ph->cpu_server, DEC_RATIO)));
	json_phase_loss(b, o, r, ph);
	jb_add(b, o, "probes",
	      jb_pair(b, "sent", jb_int(b, (int64_t)ph->probes_sent), "received",
		     jb_int(b, (int64_t)ph->probes_received)));
	jb_add(b, o, "latency_increase_ms",
	      idle ? NULL : jb_num(b, ph->latency_increase_ms, DEC_MS));
	jb_add(b, o, "queue_ms",
	      r->sync.valid ? jb_pair(b, "up", json_queue(b, &ph->q_up_ms), "down",
				     json_queue(b, &ph->q_down_ms))
			    : NULL);
	jb_add(b, o, "loss_pattern",
	      r->http ? jb_pair(b, "up", NULL, "down", NULL)
		      : jb_pair(b, "up", json_loss_pattern(b, &ph->loss_up), "down",
				json_loss_pattern(b, &ph->loss_down)));
	jb_add(b, o, "recovery_ms", idle ? NULL : jb_num(b, ph->recovery_ms, DEC_MS));
	jb_add(b, o, "limited_ratio",
	      jb_pair(b, "up", jb_pair(b, "rwnd", jb_num(b, ph->rwnd_limited_up, DEC_RATIO), "sndbuf",
				     jb_num(b, ph->sndbuf_limited_up, DEC_RATIO)),
		     "down", jb_pair(b, "rwnd", jb_num(b, ph->rwnd_limited_down, DEC_RATIO), "sndbuf",
				    jb_num(b, ph->sndbuf_limited_down, DEC_RATIO))));
	jb_add(b, o, "retransmits",
	      jb_pair(b, "up", ph->retrans_up >= 0 ? jb_int(b, ph->retrans_up) : NULL, "down",
		     ph->retrans_down >= 0 ? jb_int(b, ph->retrans_down) : NULL));
	jb_add(b, o, "grade", ph->grade ? jb_str(b, ph->grade) : NULL);
	jb_add(b, o, "rpm", idle ? NULL : report_json_rpm(b, &ph->rpm));
	jb_add(b, o, "probe_budget", json_probe_budget(b, r, ph));
	return o;
}

static json_object *json_phases(struct jb *b, const struct test_result *r)
{
	json_object *a = jb_arr(b);

	for (int i = 0; i < r->nphases && i < PHASE_KINDS; i++)
		jb_push(b, a, json_phase(b, r, &r->phases[i]));
	return a;
}

/* One direction's buffer estimate, or null when there is none. */
static json_object *json_buffer_est(struct jb *b, const struct buffer_estimate *e)
{
	json_object *o;

	if (!e->valid)
		return NULL;
	o = jb_obj(b);
	jb_add(b, o, "ms", jb_num(b, e->ms, DEC_MS));
	jb_add(b, o, "bytes", jb_num(b, e->bytes, DEC_INT));
	jb_add(b, o, "method", jb_str(b, e->method));
	jb_add(b, o, "phase", jb_str(b, phase_name(e->phase)));
	jb_add(b, o, "q_p50_ms", jb_num(b, e->q_p50_ms, DEC_MS));
	jb_add(b, o, "q_p99_ms", jb_num(b, e->q_p99_ms, DEC_MS));
	jb_add(b, o, "q_max_ms", jb_num(b, e->q_max_ms, DEC_MS));
	jb_add(b, o, "samples", jb_int(b, (int64_t)e->samples));
	jb_add(b, o, "backoff_peaks", jb_int(b, (int64_t)e->peaks));
	jb_add(b, o, "backoff_peak_ms", jb_num(b, e->peak_ms, DEC_MS));
	jb_add(b, o, "stall_held_probes", jb_int(b, (int64_t)e->stall_held));
	jb_add(b, o, "lower_bound", jb_bool(b, e->lower_bound));
	jb_add(b, o, "ci95_ms", e->has_ci ? jb_pair(b, "low", jb_num(b, e->ci_low_ms, DEC_MS), "high",
						 jb_num(b, e->ci_high_ms, DEC_MS))
					 : NULL);
	jb_add(b, o, "ci95_bytes",
	      e->has_ci ? jb_pair(b, "low", jb_num(b, e->ci_low_bytes, DEC_INT), "high",
				 jb_num(b, e->ci_high_bytes, DEC_INT))
			: NULL);
	jb_add(b, o, "ci95_resolution_ms",
	       e->has_ci ? jb_num(b, e->resolution_ms, DEC_MS) : NULL);
	jb_add(b, o, "unstable", jb_bool(b, e->unstable));
	jb_add(b, o, "managed_queue", jb_bool(b, e->managed));
	jb_add(b, o, "lower_bound_reason", e->lower_bound ? jb_str(b, e->lower_bound_why) : NULL);
	return o;
}

static json_object *json_grades(struct jb *b, const struct test_result *r)
{
	json_object *o = jb_obj(b);

	jb_add(b, o, "down", r->grade_down ? jb_str(b, r->grade_down) : NULL);
	jb_add(b, o, "up", r->grade_up ? jb_str(b, r->grade_up) : NULL);
	jb_add(b, o, "overall", r->grade_overall ? jb_str(b, r->grade_overall) : NULL);
	return o;
}

/* Download phase → downlink, upload phase → uplink; with clock sync also both directions
 * measured in the bidirectional phase. */
static json_object *json_buffers(struct jb *b, const struct test_result *r)
{
	json_object *o = jb_pair(b, "download", json_buffer_est(b, &r->buffer_down), "upload",
				json_buffer_est(b, &r->buffer_up));

	if (r->buffer_bidir_down.valid || r->buffer_bidir_up.valid)
		jb_add(b, o, "bidirectional",
		      jb_pair(b, "down", json_buffer_est(b, &r->buffer_bidir_down), "up",
			     json_buffer_est(b, &r->buffer_bidir_up)));
	return o;
}

static json_object *json_warnings(struct jb *b, const struct test_result *r)
{
	json_object *a = jb_arr(b);
	int n = r->nwarnings;

	if (n > (int)(sizeof(r->warnings) / sizeof(r->warnings[0])))
		n = (int)(sizeof(r->warnings) / sizeof(r->warnings[0]));
	for (int i = 0; i < n; i++)
		jb_push(b, a, jb_check(b, json_object_new_string(r->warnings[i])));
	return a;
}

/* Column names of a sample table. */
static json_object *json_columns(struct jb *b, const char *const *names, int n)
{
	json_object *a = jb_arr(b);

	for (int i = 0; i < n; i++)
		jb_push(b, a, jb_str(b, names[i]));
	return a;
}

static json_object *json_udp_samples(struct jb *b, const struct test_result *r)
{
	static const char *const cols[] = { "t_s", "rtt_ms", "lost" };
	json_object *o = jb_obj(b), *data = jb_arr(b);

	for (size_t i = 0; i < r->nprobes && !b->failed; i++) {
		const struct probe_rec *p = &r->probes[i];
		struct cell c[3] = {
			{ rel_s(r, p->send_ns), DEC_S },
			{ p->received ? (double)p->rtt_ns / 1e6 : NAN, DEC_MS },
			{ p->received ? 0 : 1, DEC_INT },
		};

		jb_push(b, data, j_row(b, c, 3));
	}
	jb_add(b, o, "columns", json_columns(b, cols, 3));
	jb_add(b, o, "data", data);
	return o;
}

/* A cumulative byte series as [[t_s, bytes], ...]. */
static json_object *json_tput_series(struct jb *b, const struct test_result *r,
				     const struct tput_rec *s, size_t n)
{
	json_object *a = jb_arr(b);

	for (size_t i = 0; i < n && !b->failed; i++) {
		struct cell c[2] = {
			{ rel_s(r, s[i].t_ns), DEC_S },
			{ (double)s[i].bytes, DEC_INT },
		};

		jb_push(b, a, j_row(b, c, 2));
	}
	return a;
}

/* TCP_INFO of every client load flow, every 100 ms (the flow id restarts in each phase). */
static json_object *json_tcp_info_samples(struct jb *b, const struct test_result *r)
{
	static const char *const cols[] = { "t_s", "flow", "up", "rtt_ms", "min_rtt_ms",
					    "rcv_rtt_ms", "retrans", "cwnd", "delivery_mbps" };
	json_object *o = jb_obj(b), *data = jb_arr(b);

	for (size_t i = 0; i < r->nflows && !b->failed; i++) {
		const struct flow_sample *f = &r->flows[i];
		struct cell c[9] = {
			{ rel_s(r, f->t_ns), DEC_S },
			{ f->flow_id, DEC_INT },
			{ f->up, DEC_INT },
			{ f->rtt_us / 1e3, DEC_MS },
			{ f->min_rtt_us / 1e3, DEC_MS },
			{ f->rcv_rtt_us / 1e3, DEC_MS },
			{ f->total_retrans, DEC_INT },
			{ f->snd_cwnd, DEC_INT },
			{ (double)f->delivery_rate * 8 / 1e6, DEC_MBPS },
		};

		jb_push(b, data, j_row(b, c, 9));
	}
	jb_add(b, o, "columns", json_columns(b, cols, 9));
	jb_add(b, o, "data", data);
	return o;
}

static json_object *json_samples(struct jb *b, const struct test_result *r)
{
	static const char *const cols[] = { "t_s", "bytes" };
	json_object *o = jb_obj(b), *tput = jb_obj(b);

	jb_add(b, tput, "columns", json_columns(b, cols, 2));
	jb_add(b, tput, "down", json_tput_series(b, r, r->down, r->ndown));
	jb_add(b, tput, "up", json_tput_series(b, r, r->up, r->nup));
	jb_add(b, o, "udp", json_udp_samples(b, r));
	jb_add(b, o, "throughput", tput);
	jb_add(b, o, "tcp_info", json_tcp_info_samples(b, r));
	return o;
}

/* (measured − truth) / truth in percent; NAN when there is nothing to compare. */
static double error_pct(const struct buffer_estimate *e, double truth_ms)
{
	if (!e->valid || !(truth_ms > 0))
		return NAN;
	return (e->ms - truth_ms) / truth_ms * 100.0;
}

/* The queue discipline's own parameters ({} for tbf and fifo: rate and limit say it all). */
static json_object *json_lab_params(struct jb *b, const struct lab_truth *t)
{
	json_object *o = jb_obj(b);

	for (int i = 0; i < t->nparams && i < LAB_QDISC_PARAMS; i++)
		jb_add(b, o, t->params[i].name, jb_num(b, t->params[i].value, DEC_MS));
	return o;
}

/* The userspace bottleneck's counters for one direction. */
static json_object *json_lab_bneck_dir(struct jb *b, const struct lab_bneck_counts *c)
{
	json_object *o = jb_obj(b);

	jb_add(b, o, "packets_in", jb_int(b, (int64_t)c->packets_in));
	jb_add(b, o, "packets_out", jb_int(b, (int64_t)c->packets_out));
	jb_add(b, o, "tail_drops", jb_int(b, (int64_t)c->tail_drops));
	jb_add(b, o, "aqm_drops", jb_int(b, (int64_t)c->aqm_drops));
	jb_add(b, o, "ce_marks", jb_int(b, (int64_t)c->ce_marks));
	jb_add(b, o, "delay_line_drops", jb_int(b, (int64_t)c->line_drops));
	return o;
}

static json_object *json_lab_sojourn_dir(struct jb *b, const struct lab_sojourn_dir *d)
{
	json_object *o = jb_obj(b);

	jb_add(b, o, "samples", jb_int(b, (int64_t)d->samples));
	jb_add(b, o, "p50_ms", jb_num(b, d->p50_ms, DEC_MS));
	jb_add(b, o, "p95_ms", jb_num(b, d->p95_ms, DEC_MS));
	jb_add(b, o, "p99_ms", jb_num(b, d->p99_ms, DEC_MS));
	jb_add(b, o, "max_ms", jb_num(b, d->max_ms, DEC_MS));
	jb_add(b, o, "floor_ms", jb_num(b, d->floor_ms, DEC_MS));
	return o;
}

/* The userspace bottleneck's own account: counters per direction and, per loaded phase, the
 * sojourn of the packets that left it in the phase's steady window. */
static void json_lab_bneck(struct jb *b, json_object *truth, const struct lab_truth *t)
{
	json_object *soj = jb_arr(b);

	jb_add(b, truth, "bottleneck",
	       jb_pair(b, "down", json_lab_bneck_dir(b, &t->down_bneck), "up",
		       json_lab_bneck_dir(b, &t->up_bneck)));
	for (int i = 0; i < t->nsojourn; i++) {
		json_object *e = jb_obj(b);

		jb_add(b, e, "phase", jb_str(b, phase_name(t->sojourn[i].phase)));
		jb_add(b, e, "down", json_lab_sojourn_dir(b, &t->sojourn[i].down));
		jb_add(b, e, "up", json_lab_sojourn_dir(b, &t->sojourn[i].up));
		jb_push(b, soj, e);
	}
	jb_add(b, truth, "sojourn", soj);
}

static json_object *json_lab(struct jb *b, const struct test_result *r)
{
	const struct lab_truth *t = &r->truth;
	json_object *o = jb_obj(b), *truth = jb_obj(b);

	jb_add(b, truth, "down_rate_bps", jb_int(b, (int64_t)t->down_rate_bps));
	jb_add(b, truth, "up_rate_bps", jb_int(b, (int64_t)t->up_rate_bps));
	jb_add(b, truth, "down_buffer_ms", jb_num(b, t->down_buffer_ms, DEC_MS));
	jb_add(b, truth, "up_buffer_ms", jb_num(b, t->up_buffer_ms, DEC_MS));
	jb_add(b, truth, "down_limit_bytes", jb_int(b, (int64_t)t->down_limit_bytes));
	jb_add(b, truth, "up_limit_bytes", jb_int(b, (int64_t)t->up_limit_bytes));
	jb_add(b, truth, "down_burst_bytes", jb_int(b, (int64_t)t->down_burst_bytes));
	jb_add(b, truth, "up_burst_bytes", jb_int(b, (int64_t)t->up_burst_bytes));
	jb_add(b, truth, "down_loss_pct", jb_num(b, t->down_loss_pct, DEC_PCT));
	jb_add(b, truth, "up_loss_pct", jb_num(b, t->up_loss_pct, DEC_PCT));
	jb_add(b, truth, "qdisc", jb_str(b, t->qdisc));
	jb_add(b, truth, "hop", jb_str(b, t->hop));
	jb_add(b, truth, "hops", jb_int(b, t->hops));
	jb_add(b, truth, "bottleneck_hop", jb_int(b, t->bottleneck_hop));
	jb_add(b, truth, "ecn_mark", jb_bool(b, t->ecn_mark));
	jb_add(b, truth, "delay_ms", jb_num(b, t->delay_ms, DEC_MS));
	jb_add(b, truth, "qdisc_params", json_lab_params(b, t));
	if (t->has_bneck)
		json_lab_bneck(b, truth, t);
	jb_add(b, o, "truth", truth);
	jb_add(b, o, "error_pct",
	      jb_pair(b, "buffer_down_ms",
		     jb_num(b, error_pct(&r->buffer_down, t->down_buffer_ms), DEC_PCT),
		     "buffer_up_ms", jb_num(b, error_pct(&r->buffer_up, t->up_buffer_ms), DEC_PCT)));
	return o;
}

static json_object *json_start_time(struct jb *b, const struct test_result *r)
{
	char buf[40];

	if (r->start_real_ns <= 0)
		return NULL;
	util_iso8601(r->start_real_ns, buf, sizeof(buf));
	return jb_str(b, buf);
}

/* How the server was chosen among several: every candidate's handshake RTTs or why it was
 * unreachable, and the index of the one measured. */
static json_object *json_server_selection(struct jb *b, const struct fleet *f)
{
	json_object *o = jb_obj(b), *a = jb_arr(b);

	for (int i = 0; i < f->n; i++) {
		const struct fleet_candidate *c = &f->cand[i];
		json_object *e = jb_obj(b);

		jb_add(b, e, "host", jb_str(b, c->host));
		jb_add(b, e, "port", jb_int(b, c->port));
		jb_add(b, e, "address", c->address[0] ? jb_str(b, c->address) : NULL);
		jb_add(b, e, "rtt_ms", jb_num(b, c->median_ms, DEC_MS));
		jb_add(b, e, "min_rtt_ms", jb_num(b, c->min_ms, DEC_MS));
		jb_add(b, e, "samples", jb_int(b, c->samples));
		jb_add(b, e, "failed", jb_int(b, c->failed));
		jb_add(b, e, "error", c->error[0] ? jb_str(b, c->error) : NULL);
		jb_push(b, a, e);
	}
	jb_add(b, o, "method", jb_str(b, "tcp_handshake_median"));
	jb_add(b, o, "handshakes", jb_int(b, f->timing.samples));
	jb_add(b, o, "spacing_ms", jb_int(b, f->timing.spacing_ms));
	jb_add(b, o, "timeout_ms", jb_int(b, f->timing.timeout_ms));
	jb_add(b, o, "chosen", jb_int(b, f->chosen));
	jb_add(b, o, "candidates", a);
	return o;
}

/* The run's end: status, error and, when partial, where it stopped. */
static void json_status(struct jb *b, json_object *o, const struct test_result *r)
{
	json_object *ab = NULL;

	jb_add(b, o, "status", jb_str(b, result_status(r)));
	jb_add(b, o, "error", r->error[0] ? jb_str(b, r->error) : NULL);
	if (r->partial) {
		ab = jb_obj(b);
		jb_add(b, ab, "phase", r->aborted_phase >= 0
				       ? jb_str(b, phase_name((enum phase_kind)r->aborted_phase)) : NULL);
		jb_add(b, ab, "at_s", jb_num(b, rel_s(r, r->aborted_ns), DEC_S));
		jb_add(b, ab, "direction", jb_str(b, result_aborted_direction(r)));
		/* Where the outage began as the client saw it: replies stopped before the error. */
		jb_add(b, ab, "last_reply_s", result_last_reply_ns(r) >= 0
				       ? jb_num(b, rel_s(r, result_last_reply_ns(r)), DEC_S) : NULL);
	}
	jb_add(b, o, "aborted", ab);
}

json_object *report_json_failed(const struct test_result *r)
{
	struct jb b = { 0 };
	json_object *o = jb_obj(&b);

	jb_add(&b, o, "version", jb_str(&b, BM_VERSION));
	jb_add(&b, o, "schema_version", jb_int(&b, REPORT_SCHEMA_VERSION));
	jb_add(&b, o, "status", jb_str(&b, "failed"));
	jb_add(&b, o, "error", jb_str(&b, r->error[0] ? r->error : "failed"));
	jb_add(&b, o, "server", jb_str(&b, r->cfg.server ? r->cfg.server : ""));
	jb_add(&b, o, "config", json_config(&b, r));
	if (b.failed) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

json_object *report_json(const struct test_result *r)
{
	struct jb b = { 0 };
	json_object *o = jb_obj(&b);

	jb_add(&b, o, "version", jb_str(&b, BM_VERSION));
	jb_add(&b, o, "schema_version", jb_int(&b, REPORT_SCHEMA_VERSION));
	jb_add(&b, o, "server", jb_str(&b, r->http ? r->cfg.http_url : r->server_addr));
	if (r->http)
		jb_add(&b, o, "http", report_json_http(&b, r));
	json_status(&b, o, r);
	if (r->fleet)
		jb_add(&b, o, "server_selection", json_server_selection(&b, r->fleet));
	jb_add(&b, o, "server_version", r->http ? NULL : jb_str(&b, r->server_version));
	jb_add(&b, o, "start_time", json_start_time(&b, r));
	jb_add(&b, o, "config", json_config(&b, r));
	jb_add(&b, o, "cc", json_cc(&b, r));
	jb_add(&b, o, "timestamps", json_timestamps(&b, r));
	jb_add(&b, o, "probes", json_probe_totals(&b, r));
	jb_add(&b, o, "rtt0_ms", jb_num(&b, r->rtt0_ms, DEC_MS));
	jb_add(&b, o, "ip_overhead", jb_num(&b, r->ip_overhead, DEC_RATIO));
	jb_add(&b, o, "mss", r->mss > 0 ? jb_int(&b, r->mss) : NULL);
	jb_add(&b, o, "clock_sync", json_sync(&b, r));
	jb_add(&b, o, "phases", json_phases(&b, r));
	jb_add(&b, o, "probe_kinds", report_json_probe_kinds(&b, r));
	jb_add(&b, o, "icmp_checks", report_json_icmp_checks(&b, r));
	jb_add(&b, o, "hops", report_json_hops(&b, r));
	jb_add(&b, o, "queue_location", report_json_queue_location(&b, r));
	jb_add(&b, o, "capture", report_json_capture(&b, r));
	jb_add(&b, o, "buffer", json_buffers(&b, r));
	jb_add(&b, o, "queue", report_json_queue(&b, r));
	jb_add(&b, o, "ecn", report_json_ecn(&b, r));
	jb_add(&b, o, "grade", json_grades(&b, r));
	jb_add(&b, o, "shaper_advice_mbps",
	      jb_pair(&b, "down", jb_num(&b, r->shaper_down_mbps, DEC_MBPS), "up",
		     jb_num(&b, r->shaper_up_mbps, DEC_MBPS)));
	jb_add(&b, o, "warnings", json_warnings(&b, r));
	if (r->lab)
		jb_add(&b, o, "lab", json_lab(&b, r));
	jb_add(&b, o, "samples", json_samples(&b, r));
	if (b.failed) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static int write_stdout(const char *s, size_t len)
{
	if (fwrite(s, 1, len, stdout) != len || fputc('\n', stdout) == EOF ||
	    fflush(stdout) == EOF) {
		log_error("cannot write the JSON report to standard output: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Writes the pretty JSON plus a final newline atomically. */
static int write_file(const char *path, const char *s, size_t len)
{
	char *buf = malloc(len + 1);
	int rc;

	if (buf == NULL) {
		log_error("cannot write the JSON report %s: out of memory", path);
		return -1;
	}
	memcpy(buf, s, len);
	buf[len] = '\n';
	rc = fileio_write_atomic(path, buf, len + 1);
	if (rc < 0)
		log_error("cannot write the JSON report %s: %s", path, strerror(errno));
	free(buf);
	return rc;
}

/* Serialises o (consumed) to path ("-": stdout), atomically for a file. */
static int json_put(json_object *o, const char *path)
{
	const char *s;
	size_t len = 0;
	int rc;

	if (o == NULL) {
		log_error("cannot build the JSON report: out of memory");
		return -1;
	}
	s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
						 JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	if (s == NULL) {
		log_error("cannot serialise the JSON report: out of memory");
		json_object_put(o);
		return -1;
	}
	rc = strcmp(path, "-") == 0 ? write_stdout(s, len) : write_file(path, s, len);
	json_object_put(o);
	return rc;
}

int report_json_write(const struct test_result *r, const char *path)
{
	return json_put(report_json(r), path);
}

int report_json_failed_write(const struct test_result *r, const char *path)
{
	return json_put(report_json_failed(r), path);
}

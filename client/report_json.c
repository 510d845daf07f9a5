/* report_json: the canonical JSON view of a test_result; every field is described in
 * docs/report.md. */
#include "client/report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/log.h"
#include "common/util.h"

/* Decimals kept per unit, so numbers carry their real precision instead of 17-digit noise.
 * 0 decimals means the value is written as a JSON integer. */
#define DEC_S 6     /* seconds: µs, finer than any timestamp we trust */
#define DEC_MS 3    /* milliseconds: µs */
#define DEC_MBPS 2
#define DEC_PCT 3
#define DEC_RATIO 4
#define DEC_INT 0

#define NUM_MAX 48  /* longest formatted number, with room for %.17g */

/* json-c reports allocation failure only by returning NULL, which is also how a JSON null is
 * written on purpose; so every constructor goes through a builder that remembers failures. */
struct jb {
	int failed;
};

/* Records a failed allocation; passes o through. */
static json_object *jb_check(struct jb *b, json_object *o)
{
	if (o == NULL)
		b->failed = 1;
	return o;
}

static json_object *j_obj(struct jb *b)
{
	return jb_check(b, json_object_new_object());
}

static json_object *j_arr(struct jb *b)
{
	return jb_check(b, json_object_new_array());
}

/* A string, or JSON null for a NULL or empty string. */
static json_object *j_str(struct jb *b, const char *s)
{
	if (s == NULL || *s == '\0')
		return NULL;
	return jb_check(b, json_object_new_string(s));
}

static json_object *j_int(struct jb *b, int64_t v)
{
	return jb_check(b, json_object_new_int64(v));
}

static json_object *j_bool(struct jb *b, int v)
{
	return jb_check(b, json_object_new_boolean(v != 0));
}

/* A number with dec decimals (an integer when dec is 0); JSON null when NAN or infinite. */
static json_object *j_num(struct jb *b, double v, int dec)
{
	char buf[NUM_MAX];
	double rv;

	if (!isfinite(v))
		return NULL;
	rv = util_format_decimal(v, dec, buf, sizeof(buf));
	if (dec == 0 && fabs(rv) < 9e18)
		return j_int(b, (int64_t)rv);
	return jb_check(b, json_object_new_double_s(rv, buf));
}

/* Adds v under key; v NULL is a deliberate null. Takes ownership of v in every case. */
static void j_add(struct jb *b, json_object *o, const char *key, json_object *v)
{
	if (o == NULL || json_object_object_add(o, key, v) != 0) {
		json_object_put(v);
		b->failed = 1;
	}
}

/* Appends v to array a; takes ownership of v in every case. */
static void j_push(struct jb *b, json_object *a, json_object *v)
{
	if (a == NULL || json_object_array_add(a, v) != 0) {
		json_object_put(v);
		b->failed = 1;
	}
}

/* {k1: v1, k2: v2}: the many direction pairs. */
static json_object *j_pair(struct jb *b, const char *k1, json_object *v1, const char *k2,
			   json_object *v2)
{
	json_object *o = j_obj(b);

	j_add(b, o, k1, v1);
	j_add(b, o, k2, v2);
	return o;
}

/* One cell of a sample row: a value and its decimals; NAN becomes null. */
struct cell {
	double v;
	int dec;
};

/* A sample row such as [1.25, 31.207, 0]. It keeps its elements for in-memory readers but
 * serialises from a pre-built string, so pretty output stays one line per row instead of
 * five, which matters for thousands of probes. */
static json_object *j_row(struct jb *b, const struct cell *c, int n)
{
	char text[(NUM_MAX + 1) * 4 + 2], num[NUM_MAX];
	json_object *row = j_arr(b);
	char *copy;
	size_t o = 0;

	text[o++] = '[';
	for (int i = 0; i < n && i < 4; i++) {
		if (isfinite(c[i].v))
			(void)util_format_decimal(c[i].v, c[i].dec, num, sizeof(num));
		else
			strcpy(num, "null");
		o += (size_t)snprintf(text + o, sizeof(text) - o, "%s%s", i ? "," : "", num);
		j_push(b, row, j_num(b, c[i].v, c[i].dec));
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

static json_object *json_config(struct jb *b, const struct client_config *cfg)
{
	json_object *o = j_obj(b), *phases = j_arr(b);

	for (int i = 0; i < cfg->nphases && i < PHASE_KINDS; i++)
		j_push(b, phases, j_str(b, phase_name(cfg->phases[i])));
	j_add(b, o, "phases", phases);
	j_add(b, o, "flows", j_int(b, cfg->flows));
	j_add(b, o, "duration_s", j_num(b, cfg->duration_s, DEC_S));
	j_add(b, o, "idle_s", j_num(b, cfg->idle_s, DEC_S));
	j_add(b, o, "gap_s", j_num(b, cfg->gap_s, DEC_S));
	j_add(b, o, "interval_ms", j_num(b, cfg->interval_ms, DEC_MS));
	j_add(b, o, "probe_size", j_int(b, cfg->probe_size));
	j_add(b, o, "cc", j_str(b, cfg->cc));
	return o;
}

/* One end's congestion control; "error" only when it could not be set. */
static json_object *json_cc_end(struct jb *b, int ok, const char *used, const char *error)
{
	json_object *o = j_obj(b);

	j_add(b, o, "ok", j_bool(b, ok));
	j_add(b, o, "used", j_str(b, used));
	if (!ok)
		j_add(b, o, "error", j_str(b, error));
	return o;
}

static json_object *json_cc(struct jb *b, const struct test_result *r)
{
	const struct cc_report *cc = &r->cc;
	json_object *o = j_obj(b);

	j_add(b, o, "requested", j_str(b, cc->requested[0] ? cc->requested : r->cfg.cc));
	j_add(b, o, "client", json_cc_end(b, cc->client_ok, cc->client_used, cc->client_error));
	j_add(b, o, "server", json_cc_end(b, cc->server_ok, cc->server_used, cc->server_error));
	return o;
}

static json_object *json_timestamps(struct jb *b, const struct test_result *r)
{
	json_object *o = j_obj(b);

	j_add(b, o, "server_udp", j_str(b, r->udp_server_ts));
	j_add(b, o, "client_kernel_replies", j_int(b, (int64_t)r->probes_kernel_ts));
	j_add(b, o, "replies", j_int(b, (int64_t)result_replies(r)));
	return o;
}

/* Whole-run probe counts; the server's own count lets readers check the up/down loss split. */
static json_object *json_probe_totals(struct jb *b, const struct test_result *r)
{
	json_object *o = j_obj(b);

	j_add(b, o, "sent", j_int(b, (int64_t)r->nprobes));
	j_add(b, o, "received", j_int(b, (int64_t)result_replies(r)));
	j_add(b, o, "server_received", r->srv_probe_count ? j_int(b, (int64_t)r->srv_probe_count)
							    : NULL);
	return o;
}

/* RTT order statistics; all null when the phase had no replies. */
static json_object *json_rtt(struct jb *b, const struct stats_summary *s)
{
	json_object *o = j_obj(b);
	double none = NAN;

	j_add(b, o, "min", j_num(b, s->n ? s->min : none, DEC_MS));
	j_add(b, o, "p50", j_num(b, s->n ? s->p50 : none, DEC_MS));
	j_add(b, o, "p90", j_num(b, s->n ? s->p90 : none, DEC_MS));
	j_add(b, o, "p99", j_num(b, s->n ? s->p99 : none, DEC_MS));
	j_add(b, o, "max", j_num(b, s->n ? s->max : none, DEC_MS));
	return o;
}

/* One-way queueing delay summary of one direction; null without samples. */
static json_object *json_queue(struct jb *b, const struct stats_summary *s)
{
	json_object *o;

	if (s->n == 0)
		return NULL;
	o = j_obj(b);
	j_add(b, o, "p50", j_num(b, s->p50, DEC_MS));
	j_add(b, o, "p95", j_num(b, s->p95, DEC_MS));
	j_add(b, o, "p99", j_num(b, s->p99, DEC_MS));
	j_add(b, o, "max", j_num(b, s->max, DEC_MS));
	j_add(b, o, "samples", j_int(b, (int64_t)s->n));
	return o;
}

/* One direction's drop pattern: RFC 3357 periods and distances, Gilbert p/r, class. */
static json_object *json_loss_pattern(struct jb *b, const struct loss_pattern *lp)
{
	json_object *o = j_obj(b);

	j_add(b, o, "class", j_str(b, lp->cls ? lp->cls : "none"));
	j_add(b, o, "confidence", j_num(b, lp->confidence, DEC_RATIO));
	j_add(b, o, "evidence", j_str(b, lp->evidence));
	j_add(b, o, "lost", j_int(b, (int64_t)lp->lost));
	j_add(b, o, "periods", j_int(b, (int64_t)lp->periods));
	j_add(b, o, "mean_period", j_num(b, lp->periods ? lp->mean_period : NAN, DEC_RATIO));
	j_add(b, o, "max_period", j_int(b, (int64_t)lp->max_period));
	j_add(b, o, "mean_distance", j_num(b, lp->mean_distance, DEC_RATIO));
	j_add(b, o, "gilbert_p", j_num(b, lp->gilbert_p, DEC_RATIO));
	j_add(b, o, "gilbert_r", j_num(b, lp->gilbert_r, DEC_RATIO));
	j_add(b, o, "bursts", j_int(b, (int64_t)lp->bursts));
	j_add(b, o, "burst_density", j_num(b, lp->burst_density, DEC_RATIO));
	j_add(b, o, "gap_density", j_num(b, lp->gap_density, DEC_RATIO));
	j_add(b, o, "q_before_loss_ms", j_num(b, lp->q_before_ms, DEC_MS));
	return o;
}

/* Clock sync behind the one-way delays, or null when it failed (figures then use RTT). */
static json_object *json_sync(struct jb *b, const struct test_result *r)
{
	const struct clock_fit *f = &r->sync;
	json_object *o;

	if (!f->valid)
		return NULL;
	o = j_obj(b);
	j_add(b, o, "drift_ppm", j_num(b, f->drift * 1e6, DEC_MS));
	j_add(b, o, "drift_corrected", j_bool(b, f->drift_fitted));
	j_add(b, o, "error_bound_ms", j_num(b, f->error_ns / 1e6, DEC_MS));
	j_add(b, o, "exchanges_pre", j_int(b, (int64_t)f->n_pre));
	j_add(b, o, "exchanges_post", j_int(b, (int64_t)f->n_post));
	j_add(b, o, "owd0_ms", j_pair(b, "up", j_num(b, r->owd0_up_ms, DEC_MS), "down",
				      j_num(b, r->owd0_down_ms, DEC_MS)));
	return o;
}

static json_object *json_phase(struct jb *b, const struct test_result *r,
			       const struct phase_result *ph)
{
	json_object *o = j_obj(b);
	int idle = ph->kind == PHASE_IDLE;

	j_add(b, o, "name", j_str(b, phase_name(ph->kind)));
	j_add(b, o, "start_s", j_num(b, rel_s(r, ph->start_ns), DEC_S));
	j_add(b, o, "end_s", j_num(b, rel_s(r, ph->end_ns), DEC_S));
	j_add(b, o, "steady_start_s",
	      ph->steady_start_ns < 0 ? NULL : j_num(b, rel_s(r, ph->steady_start_ns), DEC_S));
	j_add(b, o, "saturated", j_bool(b, ph->saturated));
	j_add(b, o, "throughput_mbps",
	      j_pair(b, "down", j_num(b, ph->down_mbps, DEC_MBPS), "up",
		     j_num(b, ph->up_mbps, DEC_MBPS)));
	j_add(b, o, "rtt_ms", json_rtt(b, &ph->rtt_ms));
	j_add(b, o, "rtt_samples", j_int(b, (int64_t)ph->rtt_ms.n));
	j_add(b, o, "loss_pct",
	      j_pair(b, "up", j_num(b, ph->loss_up_pct, DEC_PCT), "down",
		     j_num(b, ph->loss_down_pct, DEC_PCT)));
	j_add(b, o, "lost",
	      j_pair(b, "up", j_int(b, (int64_t)ph->lost_up), "down",
		     j_int(b, (int64_t)ph->lost_down)));
	j_add(b, o, "probes",
	      j_pair(b, "sent", j_int(b, (int64_t)ph->probes_sent), "received",
		     j_int(b, (int64_t)ph->probes_received)));
	j_add(b, o, "latency_increase_ms",
	      idle ? NULL : j_num(b, ph->latency_increase_ms, DEC_MS));
	j_add(b, o, "queue_ms",
	      r->sync.valid ? j_pair(b, "up", json_queue(b, &ph->q_up_ms), "down",
				     json_queue(b, &ph->q_down_ms))
			    : NULL);
	j_add(b, o, "loss_pattern",
	      j_pair(b, "up", json_loss_pattern(b, &ph->loss_up), "down",
		     json_loss_pattern(b, &ph->loss_down)));
	j_add(b, o, "recovery_ms", idle ? NULL : j_num(b, ph->recovery_ms, DEC_MS));
	j_add(b, o, "limited_ratio",
	      j_pair(b, "up", j_pair(b, "rwnd", j_num(b, ph->rwnd_limited_up, DEC_RATIO), "sndbuf",
				     j_num(b, ph->sndbuf_limited_up, DEC_RATIO)),
		     "down", j_pair(b, "rwnd", j_num(b, ph->rwnd_limited_down, DEC_RATIO), "sndbuf",
				    j_num(b, ph->sndbuf_limited_down, DEC_RATIO))));
	j_add(b, o, "retransmits",
	      j_pair(b, "up", ph->retrans_up >= 0 ? j_int(b, ph->retrans_up) : NULL, "down",
		     ph->retrans_down >= 0 ? j_int(b, ph->retrans_down) : NULL));
	j_add(b, o, "grade", ph->grade ? j_str(b, ph->grade) : NULL);
	return o;
}

static json_object *json_phases(struct jb *b, const struct test_result *r)
{
	json_object *a = j_arr(b);

	for (int i = 0; i < r->nphases && i < PHASE_KINDS; i++)
		j_push(b, a, json_phase(b, r, &r->phases[i]));
	return a;
}

/* One direction's buffer estimate, or null when there is none. */
static json_object *json_buffer_est(struct jb *b, const struct buffer_estimate *e)
{
	json_object *o;

	if (!e->valid)
		return NULL;
	o = j_obj(b);
	j_add(b, o, "ms", j_num(b, e->ms, DEC_MS));
	j_add(b, o, "bytes", j_num(b, e->bytes, DEC_INT));
	j_add(b, o, "method", j_str(b, e->method));
	j_add(b, o, "phase", j_str(b, phase_name(e->phase)));
	j_add(b, o, "q_p50_ms", j_num(b, e->q_p50_ms, DEC_MS));
	j_add(b, o, "q_p99_ms", j_num(b, e->q_p99_ms, DEC_MS));
	j_add(b, o, "samples", j_int(b, (int64_t)e->samples));
	j_add(b, o, "lower_bound", j_bool(b, e->lower_bound));
	j_add(b, o, "ci95_ms", e->has_ci ? j_pair(b, "low", j_num(b, e->ci_low_ms, DEC_MS), "high",
						 j_num(b, e->ci_high_ms, DEC_MS))
					 : NULL);
	j_add(b, o, "ci95_bytes",
	      e->has_ci ? j_pair(b, "low", j_num(b, e->ci_low_bytes, DEC_INT), "high",
				 j_num(b, e->ci_high_bytes, DEC_INT))
			: NULL);
	j_add(b, o, "unstable", j_bool(b, e->unstable));
	j_add(b, o, "managed_queue", j_bool(b, e->managed));
	j_add(b, o, "lower_bound_reason", e->lower_bound ? j_str(b, e->lower_bound_why) : NULL);
	return o;
}

static json_object *json_grades(struct jb *b, const struct test_result *r)
{
	json_object *o = j_obj(b);

	j_add(b, o, "down", r->grade_down ? j_str(b, r->grade_down) : NULL);
	j_add(b, o, "up", r->grade_up ? j_str(b, r->grade_up) : NULL);
	j_add(b, o, "overall", r->grade_overall ? j_str(b, r->grade_overall) : NULL);
	return o;
}

/* Download phase → downlink, upload phase → uplink; with clock sync also both directions
 * measured in the bidirectional phase. */
static json_object *json_buffers(struct jb *b, const struct test_result *r)
{
	json_object *o = j_pair(b, "download", json_buffer_est(b, &r->buffer_down), "upload",
				json_buffer_est(b, &r->buffer_up));

	if (r->buffer_bidir_down.valid || r->buffer_bidir_up.valid)
		j_add(b, o, "bidirectional",
		      j_pair(b, "down", json_buffer_est(b, &r->buffer_bidir_down), "up",
			     json_buffer_est(b, &r->buffer_bidir_up)));
	return o;
}

static json_object *json_warnings(struct jb *b, const struct test_result *r)
{
	json_object *a = j_arr(b);
	int n = r->nwarnings;

	if (n > (int)(sizeof(r->warnings) / sizeof(r->warnings[0])))
		n = (int)(sizeof(r->warnings) / sizeof(r->warnings[0]));
	for (int i = 0; i < n; i++)
		j_push(b, a, jb_check(b, json_object_new_string(r->warnings[i])));
	return a;
}

/* Column names of a sample table. */
static json_object *json_columns(struct jb *b, const char *const *names, int n)
{
	json_object *a = j_arr(b);

	for (int i = 0; i < n; i++)
		j_push(b, a, j_str(b, names[i]));
	return a;
}

static json_object *json_udp_samples(struct jb *b, const struct test_result *r)
{
	static const char *const cols[] = { "t_s", "rtt_ms", "lost" };
	json_object *o = j_obj(b), *data = j_arr(b);

	for (size_t i = 0; i < r->nprobes && !b->failed; i++) {
		const struct probe_rec *p = &r->probes[i];
		struct cell c[3] = {
			{ rel_s(r, p->send_ns), DEC_S },
			{ p->received ? (double)p->rtt_ns / 1e6 : NAN, DEC_MS },
			{ p->received ? 0 : 1, DEC_INT },
		};

		j_push(b, data, j_row(b, c, 3));
	}
	j_add(b, o, "columns", json_columns(b, cols, 3));
	j_add(b, o, "data", data);
	return o;
}

/* A cumulative byte series as [[t_s, bytes], ...]. */
static json_object *json_tput_series(struct jb *b, const struct test_result *r,
				     const struct tput_rec *s, size_t n)
{
	json_object *a = j_arr(b);

	for (size_t i = 0; i < n && !b->failed; i++) {
		struct cell c[2] = {
			{ rel_s(r, s[i].t_ns), DEC_S },
			{ (double)s[i].bytes, DEC_INT },
		};

		j_push(b, a, j_row(b, c, 2));
	}
	return a;
}

static json_object *json_samples(struct jb *b, const struct test_result *r)
{
	static const char *const cols[] = { "t_s", "bytes" };
	json_object *o = j_obj(b), *tput = j_obj(b);

	j_add(b, tput, "columns", json_columns(b, cols, 2));
	j_add(b, tput, "down", json_tput_series(b, r, r->down, r->ndown));
	j_add(b, tput, "up", json_tput_series(b, r, r->up, r->nup));
	j_add(b, o, "udp", json_udp_samples(b, r));
	j_add(b, o, "throughput", tput);
	return o;
}

/* (measured − truth) / truth in percent; NAN when there is nothing to compare. */
static double error_pct(const struct buffer_estimate *e, double truth_ms)
{
	if (!e->valid || !(truth_ms > 0))
		return NAN;
	return (e->ms - truth_ms) / truth_ms * 100.0;
}

static json_object *json_lab(struct jb *b, const struct test_result *r)
{
	const struct lab_truth *t = &r->truth;
	json_object *o = j_obj(b), *truth = j_obj(b);

	j_add(b, truth, "down_rate_bps", j_int(b, (int64_t)t->down_rate_bps));
	j_add(b, truth, "up_rate_bps", j_int(b, (int64_t)t->up_rate_bps));
	j_add(b, truth, "down_buffer_ms", j_num(b, t->down_buffer_ms, DEC_MS));
	j_add(b, truth, "up_buffer_ms", j_num(b, t->up_buffer_ms, DEC_MS));
	j_add(b, truth, "down_limit_bytes", j_int(b, (int64_t)t->down_limit_bytes));
	j_add(b, truth, "up_limit_bytes", j_int(b, (int64_t)t->up_limit_bytes));
	j_add(b, truth, "down_burst_bytes", j_int(b, (int64_t)t->down_burst_bytes));
	j_add(b, truth, "up_burst_bytes", j_int(b, (int64_t)t->up_burst_bytes));
	j_add(b, truth, "down_loss_pct", j_num(b, t->down_loss_pct, DEC_PCT));
	j_add(b, truth, "up_loss_pct", j_num(b, t->up_loss_pct, DEC_PCT));
	j_add(b, o, "truth", truth);
	j_add(b, o, "error_pct",
	      j_pair(b, "buffer_down_ms",
		     j_num(b, error_pct(&r->buffer_down, t->down_buffer_ms), DEC_PCT),
		     "buffer_up_ms", j_num(b, error_pct(&r->buffer_up, t->up_buffer_ms), DEC_PCT)));
	return o;
}

static json_object *json_start_time(struct jb *b, const struct test_result *r)
{
	char buf[40];

	if (r->start_real_ns <= 0)
		return NULL;
	util_iso8601(r->start_real_ns, buf, sizeof(buf));
	return j_str(b, buf);
}

json_object *report_json(const struct test_result *r)
{
	struct jb b = { 0 };
	json_object *o = j_obj(&b);

	j_add(&b, o, "version", j_str(&b, BM_VERSION));
	j_add(&b, o, "schema_version", j_int(&b, REPORT_SCHEMA_VERSION));
	j_add(&b, o, "server", j_str(&b, r->server_addr));
	j_add(&b, o, "server_version", j_str(&b, r->server_version));
	j_add(&b, o, "start_time", json_start_time(&b, r));
	j_add(&b, o, "config", json_config(&b, &r->cfg));
	j_add(&b, o, "cc", json_cc(&b, r));
	j_add(&b, o, "timestamps", json_timestamps(&b, r));
	j_add(&b, o, "probes", json_probe_totals(&b, r));
	j_add(&b, o, "rtt0_ms", j_num(&b, r->rtt0_ms, DEC_MS));
	j_add(&b, o, "ip_overhead", j_num(&b, r->ip_overhead, DEC_RATIO));
	j_add(&b, o, "mss", r->mss > 0 ? j_int(&b, r->mss) : NULL);
	j_add(&b, o, "clock_sync", json_sync(&b, r));
	j_add(&b, o, "phases", json_phases(&b, r));
	j_add(&b, o, "buffer", json_buffers(&b, r));
	j_add(&b, o, "grade", json_grades(&b, r));
	j_add(&b, o, "shaper_advice_mbps",
	      j_pair(&b, "down", j_num(&b, r->shaper_down_mbps, DEC_MBPS), "up",
		     j_num(&b, r->shaper_up_mbps, DEC_MBPS)));
	j_add(&b, o, "warnings", json_warnings(&b, r));
	if (r->lab)
		j_add(&b, o, "lab", json_lab(&b, r));
	j_add(&b, o, "samples", json_samples(&b, r));
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

int report_json_write(const struct test_result *r, const char *path)
{
	json_object *o = report_json(r);
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

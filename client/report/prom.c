/* prom: node_exporter textfile of one run. Base units (seconds, bytes, ratios), one gauge
 * family per measured quantity, labels for server, phase, direction and statistic; values
 * that were not measured are left out rather than written as NaN. */
#include "client/report/prom.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fileio.h"
#include "common/log.h"
#include "common/util.h"

/* Decimals per unit, matching the JSON report: ms keep 3 decimals, so seconds keep 6. */
#define DEC_S 6
#define DEC_RATIO 5   /* percent keeps 3 decimals in the JSON */
#define DEC_INT 0

struct prom {
	FILE *f;
	const char *family;  /* metric name of the current family */
	const char *help;
	int header_done;     /* HELP and TYPE written; deferred so empty families stay out */
	char server[160];    /* escaped label value */
};

/* Label values escape backslash, double quote and newline (exposition format). */
static void prom_escape(const char *in, char *out, size_t len)
{
	size_t o = 0;

	for (; *in && o + 3 < len; in++) {
		if (*in == '\\' || *in == '"') {
			out[o++] = '\\';
			out[o++] = *in;
		} else if (*in == '\n') {
			out[o++] = '\\';
			out[o++] = 'n';
		} else {
			out[o++] = *in;
		}
	}
	out[o] = '\0';
}


/* Starts a gauge family; its HELP and TYPE lines come with its first sample. */
static void prom_family(struct prom *p, const char *name, const char *help)
{
	p->family = name;
	p->help = help;
	p->header_done = 0;
}

/* One sample of the current family; labels is "" or `,key="value",...` appended after the
 * server label. Not-finite values (not measured) are skipped. */
static void prom_sample(struct prom *p, const char *labels, double v, int dec)
{
	char num[400];

	if (!isfinite(v))
		return;
	if (!p->header_done) {
		fprintf(p->f, "# HELP %s %s\n# TYPE %s gauge\n", p->family, p->help, p->family);
		p->header_done = 1;
	}
	(void)util_format_decimal(v, dec, num, sizeof(num));
	fprintf(p->f, "%s{server=\"%s\"%s} %s\n", p->family, p->server, labels, num);
}

static const char *dir_name(int up)
{
	return up ? "up" : "down";
}

/* The ',phase="…",direction="…"' labels. */
static void labels_pd(char *l, size_t len, enum phase_kind k, int up)
{
	snprintf(l, len, ",phase=\"%s\",direction=\"%s\"", phase_name(k), dir_name(up));
}

static void prom_rtt(struct prom *p, const struct test_result *r)
{
	static const char *const stat[] = { "min", "p50", "p90", "p99", "max" };
	char l[96];

	prom_family(p, "bloatmeter_rtt_seconds",
		    "UDP probe round-trip time over the phase's window, by statistic.");
	for (int i = 0; i < r->nphases; i++) {
		const struct phase_result *ph = &r->phases[i];
		const double v[] = { ph->rtt_ms.min, ph->rtt_ms.p50, ph->rtt_ms.p90, ph->rtt_ms.p99,
				     ph->rtt_ms.max };

		for (int k = 0; k < 5 && ph->rtt_ms.n > 0; k++) {
			snprintf(l, sizeof(l), ",phase=\"%s\",stat=\"%s\"", phase_name(ph->kind),
				 stat[k]);
			prom_sample(p, l, v[k] / 1e3, DEC_S);
		}
	}
	prom_family(p, "bloatmeter_latency_increase_seconds",
		    "Loaded phase's RTT median minus the idle phase's RTT median.");
	for (int i = 0; i < r->nphases; i++) {
		const struct phase_result *ph = &r->phases[i];

		if (ph->kind == PHASE_IDLE)
			continue;
		snprintf(l, sizeof(l), ",phase=\"%s\"", phase_name(ph->kind));
		prom_sample(p, l, ph->latency_increase_ms / 1e3, DEC_S);
	}
}

enum per_direction { PD_GOODPUT, PD_LOSS, PD_RETRANS };

/* One family's samples for every phase and direction (a family stays one group). */
static void prom_per_direction(struct prom *p, const struct test_result *r,
			       enum per_direction what)
{
	char l[96];

	for (int i = 0; i < r->nphases; i++) {
		const struct phase_result *ph = &r->phases[i];

		for (int up = 0; up <= 1; up++) {
			int64_t rt = up ? ph->retrans_up : ph->retrans_down;
			double v = NAN;
			int dec = DEC_INT;

			if (what == PD_GOODPUT) {
				v = (up ? ph->up_mbps : ph->down_mbps) * 1e6 / 8;
			} else if (what == PD_LOSS) {
				v = (up ? ph->loss_up_pct : ph->loss_down_pct) / 100;
				dec = DEC_RATIO;
			} else if (ph->kind != PHASE_IDLE && rt >= 0) {
				v = (double)rt;
			}
			labels_pd(l, sizeof(l), ph->kind, up);
			prom_sample(p, l, v, dec);
		}
	}
}

static void prom_load(struct prom *p, const struct test_result *r)
{
	prom_family(p, "bloatmeter_goodput_bytes_per_second",
		    "TCP goodput (payload) the receiver got over the phase's steady window.");
	prom_per_direction(p, r, PD_GOODPUT);
	prom_family(p, "bloatmeter_probe_loss_ratio",
		    "Share of UDP probes lost in this direction during the phase.");
	prom_per_direction(p, r, PD_LOSS);
	prom_family(p, "bloatmeter_tcp_retransmits",
		    "TCP retransmissions of the load flows during the phase.");
	prom_per_direction(p, r, PD_RETRANS);
}

/* One-way figures; they exist only when the clocks were synchronised. */
static void prom_queues(struct prom *p, const struct test_result *r)
{
	static const char *const stat[] = { "p50", "p95", "p99", "max" };
	char l[128];

	if (!r->sync.valid)
		return;
	prom_family(p, "bloatmeter_queueing_delay_seconds",
		    "One-way queueing delay above the idle minimum over the phase's window, by "
		    "statistic.");
	for (int i = 0; i < r->nphases; i++) {
		for (int up = 0; up <= 1; up++) {
			const struct phase_result *ph = &r->phases[i];
			const struct stats_summary *s = up ? &ph->q_up_ms : &ph->q_down_ms;
			const double v[] = { s->p50, s->p95, s->p99, s->max };

			for (int k = 0; k < 4 && s->n > 0; k++) {
				snprintf(l, sizeof(l), ",phase=\"%s\",direction=\"%s\",stat=\"%s\"",
					 phase_name(ph->kind), dir_name(up), stat[k]);
				prom_sample(p, l, v[k] / 1e3, DEC_S);
			}
		}
	}
	prom_family(p, "bloatmeter_clock_sync_error_seconds",
		    "Bound on the client-server clock offset error behind the one-way delays.");
	prom_sample(p, "", r->sync.error_ns / 1e9, DEC_S);
}

enum buffer_field { BF_SECONDS, BF_BYTES, BF_LOWER_BOUND, BF_MANAGED, BF_FIELDS };

static double buffer_value(const struct buffer_estimate *e, enum buffer_field f)
{
	switch (f) {
	case BF_SECONDS:
		return e->ms / 1e3;
	case BF_BYTES:
		return e->bytes;
	case BF_LOWER_BOUND:
		return e->lower_bound ? 1 : 0;
	case BF_MANAGED:
		return e->managed ? 1 : 0;
	default:
		return NAN;
	}
}

/* Buffer estimates: download → down, upload → up, and both from the bidirectional phase. */
static void prom_buffers(struct prom *p, const struct test_result *r)
{
	static const struct {
		const char *name, *help;
		int dec;
	} fam[BF_FIELDS] = {
		[BF_SECONDS] = { "bloatmeter_buffer_seconds",
				 "Bottleneck buffer estimate in time (median of the 1 s maxima of the queueing delay).",
				 DEC_S },
		[BF_BYTES] = { "bloatmeter_buffer_bytes",
			       "Bottleneck buffer estimate in IP bytes (time x goodput x IP "
			       "overhead).",
			       DEC_INT },
		[BF_LOWER_BOUND] = { "bloatmeter_buffer_lower_bound",
				     "1 if the queue did not sit at its top (the JSON's "
				     "lower_bound_reason says why): the buffer is at least the "
				     "estimate.",
				     DEC_INT },
		[BF_MANAGED] = { "bloatmeter_buffer_managed_queue",
				 "1 if an AQM kept the queue short: the estimate is the managed "
				 "delay, not the buffer.",
				 DEC_INT },
	};
	const struct buffer_estimate *e[4] = { &r->buffer_down, &r->buffer_up,
					       &r->buffer_bidir_down, &r->buffer_bidir_up };
	char l[96];

	for (int f = 0; f < BF_FIELDS; f++) {
		prom_family(p, fam[f].name, fam[f].help);
		for (int i = 0; i < 4; i++) {
			if (!e[i]->valid)
				continue;
			labels_pd(l, sizeof(l), e[i]->phase, i % 2);
			prom_sample(p, l, buffer_value(e[i], (enum buffer_field)f), fam[f].dec);
		}
	}
}

static void prom_grades(struct prom *p, const struct test_result *r)
{
	const char *g[3] = { r->grade_down, r->grade_up, r->grade_overall };
	const char *which[3] = { "down", "up", "overall" };
	char esc[32], l[96];

	prom_family(p, "bloatmeter_grade_info",
		    "Bufferbloat grade (DSLReports bands of the latency increase) as a label.");
	for (int i = 0; i < 3; i++) {
		if (g[i] == NULL)
			continue;
		prom_escape(g[i], esc, sizeof(esc));
		snprintf(l, sizeof(l), ",direction=\"%s\",grade=\"%s\"", which[i], esc);
		prom_sample(p, l, 1, DEC_INT);
	}
}

/* The auxiliary probe kinds: median RTT and loss per phase, and RPM per loaded phase. */
static void prom_kinds(struct prom *p, const struct test_result *r)
{
	char l[128], kind[48];

	prom_family(p, "bloatmeter_probe_kind_rtt_median_seconds",
		    "Median round-trip time of each auxiliary probe kind over the phase's window.");
	for (int k = 0; k < r->nseries; k++) {
		prom_escape(r->series[k].name, kind, sizeof(kind));
		for (int i = 0; i < r->nphases && r->series[k].available; i++) {
			const struct series_phase *sp = &r->phases[i].probe[k];

			snprintf(l, sizeof(l), ",kind=\"%s\",phase=\"%s\"", kind,
				 phase_name(r->phases[i].kind));
			if (sp->rtt_ms.n > 0)
				prom_sample(p, l, sp->rtt_ms.p50 / 1e3, DEC_S);
		}
	}
	prom_family(p, "bloatmeter_probe_kind_loss_ratio",
		    "Share of an auxiliary probe kind's probes without an answer, by phase.");
	for (int k = 0; k < r->nseries; k++) {
		prom_escape(r->series[k].name, kind, sizeof(kind));
		for (int i = 0; i < r->nphases && r->series[k].available; i++) {
			snprintf(l, sizeof(l), ",kind=\"%s\",phase=\"%s\"", kind,
				 phase_name(r->phases[i].kind));
			prom_sample(p, l, r->phases[i].probe[k].loss_pct / 100, DEC_RATIO);
		}
	}
	prom_family(p, "bloatmeter_responsiveness_rpm",
		    "Round trips per minute under load (TCP variant of the responsiveness draft).");
	for (int i = 0; i < r->nphases; i++) {
		if (!r->phases[i].rpm.valid)
			continue;
		snprintf(l, sizeof(l), ",phase=\"%s\"", phase_name(r->phases[i].kind));
		prom_sample(p, l, r->phases[i].rpm.rpm, DEC_INT);
	}
}

/* The queue verdicts (fifo|aqm|fq|policer|unknown) as a state set: one sample per possible
 * verdict, 1 for the one given, so the series stay the same from run to run. */
static const char *const queue_states[] = { "fifo", "aqm", "fq", "policer", "unknown" };
/* The ECN verdicts likewise (client/analysis/analysis_ecn.c). */
static const char *const ecn_states[] = { "marks", "drops", "not negotiated", "unknown" };

/* 1 for the state named v, 0 for the others, each as ',<key>="state"' after extra. */
static void prom_stateset(struct prom *p, const char *extra, const char *key,
			  const char *const *states, int n, const char *v)
{
	char l[128];

	for (int i = 0; i < n; i++) {
		snprintf(l, sizeof(l), "%s,%s=\"%s\"", extra, key, states[i]);
		prom_sample(p, l, v != NULL && strcmp(v, states[i]) == 0, DEC_INT);
	}
}

/* What manages each loaded direction's queue, with its standing level and CE marks; --ecn:
 * marks or drops. */
static void prom_queue_verdicts(struct prom *p, const struct test_result *r)
{
	const struct queue_verdict *q[2] = { &r->queue_down, &r->queue_up };
	const struct ecn_report *e = &r->ecn;
	char l[64];

	prom_family(p, "bloatmeter_queue_verdict",
		    "What manages the direction's queue: 1 for the verdict given (fifo, aqm, fq, "
		    "policer, unknown), 0 for the others; loaded directions only.");
	for (int up = 0; up <= 1; up++) {
		snprintf(l, sizeof(l), ",direction=\"%s\"", dir_name(up));
		if (q[up]->verdict != NULL)
			prom_stateset(p, l, "verdict", queue_states, 5, q[up]->verdict);
	}
	prom_family(p, "bloatmeter_queue_standing_seconds",
		    "The probes' standing queueing delay (p50 in the steady window) behind the queue "
		    "verdict.");
	for (int up = 0; up <= 1; up++) {
		snprintf(l, sizeof(l), ",direction=\"%s\"", dir_name(up));
		if (q[up]->verdict != NULL)
			prom_sample(p, l, q[up]->standing_ms / 1e3, DEC_S);
	}
	prom_family(p, "bloatmeter_queue_ce_marks",
		    "ECN CE marks seen in the direction during the loaded phases.");
	for (int up = 0; up <= 1; up++) {
		snprintf(l, sizeof(l), ",direction=\"%s\"", dir_name(up));
		if (q[up]->verdict != NULL && q[up]->ce >= 0)
			prom_sample(p, l, (double)q[up]->ce, DEC_INT);
	}
	if (!e->requested)
		return;
	prom_family(p, "bloatmeter_ecn_verdict",
		    "--ecn: 1 for whether the path marks (CE) or drops (marks, drops, not "
		    "negotiated, unknown), 0 for the others.");
	prom_stateset(p, "", "verdict", ecn_states, 4, e->verdict ? e->verdict : "unknown");
	prom_family(p, "bloatmeter_ecn_flows",
		    "--ecn: load flows seen in TCP_INFO, by whether they negotiated ECN.");
	prom_sample(p, ",negotiated=\"yes\"", e->flows_ecn, DEC_INT);
	prom_sample(p, ",negotiated=\"no\"", e->flows - e->flows_ecn, DEC_INT);
}

/* --per-hop: each hop's median RTT and reply loss by phase, and the hop where the queue
 * builds; a hop's address is a label (null replies: "*", as in the text and traceroute). */
static void prom_hops(struct prom *p, const struct test_result *r)
{
	char l[160], addr[2 * HOP_ADDR_LEN];

	if (!r->hops.ran)
		return;
	prom_family(p, "bloatmeter_hop_rtt_median_seconds",
		    "Median round-trip time to each hop (--per-hop), by phase.");
	for (int h = 0; h < r->hops.n; h++) {
		const struct hop_row *row = &r->hops.row[h];

		prom_escape(row->addr[0] ? row->addr : "*", addr, sizeof(addr));
		snprintf(l, sizeof(l), ",hop=\"%d\",address=\"%s\",phase=\"idle\"", h + 1, addr);
		if (!isnan(row->idle_ms))
			prom_sample(p, l, row->idle_ms / 1e3, DEC_S);
		for (int i = 0; i < r->nphases; i++) {
			enum phase_kind k = r->phases[i].kind;

			snprintf(l, sizeof(l), ",hop=\"%d\",address=\"%s\",phase=\"%s\"", h + 1,
				 addr, phase_name(k));
			if (k != PHASE_IDLE && !isnan(row->loaded_ms[k]))
				prom_sample(p, l, row->loaded_ms[k] / 1e3, DEC_S);
		}
	}
	prom_family(p, "bloatmeter_hop_latency_increase_seconds",
		    "Each hop's loaded median RTT minus its idle median (--per-hop), by loaded "
		    "phase.");
	for (int h = 0; h < r->hops.n; h++) {
		const struct hop_row *row = &r->hops.row[h];

		prom_escape(row->addr[0] ? row->addr : "*", addr, sizeof(addr));
		for (int i = 0; i < r->nphases; i++) {
			enum phase_kind k = r->phases[i].kind;

			snprintf(l, sizeof(l), ",hop=\"%d\",address=\"%s\",phase=\"%s\"", h + 1,
				 addr, phase_name(k));
			if (k != PHASE_IDLE && !isnan(row->increase_ms[k]))
				prom_sample(p, l, row->increase_ms[k] / 1e3, DEC_S);
		}
	}
	prom_family(p, "bloatmeter_hop_loss_ratio",
		    "Share of a hop's TTL-limited probes without an answer (--per-hop), by phase.");
	for (int h = 0; h < r->hops.n; h++) {
		const struct hop_row *row = &r->hops.row[h];

		prom_escape(row->addr[0] ? row->addr : "*", addr, sizeof(addr));
		for (int i = 0; i < r->nphases; i++) {
			enum phase_kind k = r->phases[i].kind;
			double v = k == PHASE_IDLE ? row->idle_loss_pct : row->loss_pct[k];

			snprintf(l, sizeof(l), ",hop=\"%d\",address=\"%s\",phase=\"%s\"", h + 1,
				 addr, phase_name(k));
			if (!isnan(v))
				prom_sample(p, l, v / 100, DEC_RATIO);
		}
	}
	prom_family(p, "bloatmeter_queue_hop",
		    "The hop where the latency rise first appears and persists (--per-hop): the "
		    "queue is on the link before it; absent when no hop rose.");
	if (r->hops.queue_hop > 0 && r->hops.queue_phase >= 0) {
		snprintf(l, sizeof(l), ",phase=\"%s\"",
			 phase_name((enum phase_kind)r->hops.queue_phase));
		prom_sample(p, l, r->hops.queue_hop, DEC_INT);
	}
}

int prom_write(const struct test_result *r, const char *path)
{
	struct prom p = { 0 };
	char *buf = NULL;
	size_t len = 0;
	int rc, failed;

	prom_escape(r->server_addr, p.server, sizeof(p.server));
	p.f = open_memstream(&buf, &len);
	if (p.f == NULL) {
		log_error("cannot build the Prometheus file %s: %s", path, strerror(errno));
		return -1;
	}
	prom_family(&p, "bloatmeter_last_run_timestamp_seconds",
		    "Wall-clock start of the run, in seconds since the Unix epoch.");
	if (r->start_real_ns > 0)
		prom_sample(&p, "", (double)r->start_real_ns / 1e9, 3);
	prom_rtt(&p, r);
	prom_load(&p, r);
	prom_queues(&p, r);
	prom_buffers(&p, r);
	prom_grades(&p, r);
	prom_kinds(&p, r);
	prom_queue_verdicts(&p, r);
	prom_hops(&p, r);
	prom_family(&p, "bloatmeter_run_warnings",
		    "Warnings the run reported (their text is in the JSON report).");
	prom_sample(&p, "", r->nwarnings, DEC_INT);
	prom_family(&p, "bloatmeter_run_partial",
		    "1 if the run stopped early (its error is in the JSON report): the figures cover "
		    "what ran until then.");
	prom_sample(&p, "", r->partial, DEC_INT);
	failed = ferror(p.f);
	if (fclose(p.f) != 0 || failed || buf == NULL) {
		log_error("cannot build the Prometheus file %s: out of memory", path);
		free(buf);
		return -1;
	}
	rc = fileio_write_atomic(path, buf, len);
	if (rc < 0)
		log_error("cannot write the Prometheus file %s: %s", path, strerror(errno));
	free(buf);
	return rc;
}

/* analysis_hops: per-phase statistics of each TTL and the verdict (see analysis_hops.h). */
#include "client/analysis/analysis_hops.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "client/analysis/hops.h"
#include "client/analysis/probestats.h"

/* Copies an address, cut to fit (addresses always fit; the cut is for the compiler). */
static void hops_copy(char *dst, size_t cap, const char *src)
{
	size_t n = strnlen(src, cap - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* The hops to report: up to the server's hop count, else up to the last TTL answered. */
static int hops_count(const struct hop_trace *t)
{
	int n = 0;

	if (t->hop_count > 0)
		return t->hop_count;
	for (int k = 0; k < HOPPROBE_MAX_TTL; k++)
		for (size_t i = 0; i < t->ttl[k].n; i++)
			if (t->ttl[k].s[i].status == SAMPLE_OK)
				n = k + 1;
	return n;
}

static struct hop_sample hops_sample(const struct probe_series *ps, const struct phase_result *ph)
{
	struct series_phase sp;

	memset(&sp, 0, sizeof(sp));
	probestats_window(ps, result_window_start(ph), ph->end_ns, &sp);
	return (struct hop_sample){ sp.rtt_ms.n > 0 ? sp.rtt_ms.p50 : NAN,
				    (unsigned)(sp.ok + sp.lost), (unsigned)sp.ok };
}

/* hops' input: phase slot i is r->phases[i]; the idle phase gives the idle figures. */
static void hops_input(const struct test_result *r, int n, struct hop_in *in)
{
	for (int h = 0; h < n; h++) {
		const struct probe_series *ps = &r->hop_trace.ttl[h];

		memset(&in[h], 0, sizeof(in[h]));
		hops_copy(in[h].addr, sizeof(in[h].addr), ps->target);
		in[h].idle.rtt_ms = NAN;
		for (int i = 0; i < r->nphases && i < HOPS_PHASES_MAX; i++) {
			struct hop_sample s = hops_sample(ps, &r->phases[i]);

			if (r->phases[i].kind == PHASE_IDLE) {
				in[h].idle = s;
				in[h].loaded[i] = (struct hop_sample){ NAN, 0, 0 };
			} else {
				in[h].loaded[i] = s;
			}
		}
	}
}

static void hops_output(struct test_result *r, int n, const struct hop_in *in,
			const struct hop_out *out, const struct hops_verdict *v)
{
	struct hop_result *hr = &r->hops;

	for (int h = 0; h < n; h++) {
		struct hop_row *row = &hr->row[h];

		hops_copy(row->addr, sizeof(row->addr), in[h].addr);
		row->idle_ms = in[h].idle.replies ? in[h].idle.rtt_ms : NAN;
		row->idle_loss_pct = out[h].idle_loss_pct;
		row->icmp_limited = out[h].icmp_limited;
		for (int k = 0; k < PHASE_KINDS; k++)
			row->loaded_ms[k] = row->increase_ms[k] = row->loss_pct[k] = NAN;
		for (int i = 0; i < r->nphases && i < HOPS_PHASES_MAX; i++) {
			enum phase_kind k = r->phases[i].kind;

			if (k == PHASE_IDLE)
				continue;
			row->loaded_ms[k] = in[h].loaded[i].replies ? in[h].loaded[i].rtt_ms : NAN;
			row->increase_ms[k] = out[h].increase_ms[i];
			row->loss_pct[k] = out[h].loss_pct[i];
		}
	}
	hr->n = n;
	hr->queue_hop = v->first_hop;
	hr->queue_phase = v->phase >= 0 ? (int)r->phases[v->phase].kind : -1;
	hr->queue_increase_ms = v->increase_ms;
	snprintf(hr->verdict, sizeof(hr->verdict), "%s", v->text);
	snprintf(hr->evidence, sizeof(hr->evidence), "%s", v->evidence);
}

void analysis_hops(struct test_result *r)
{
	struct hop_in in[HOPPROBE_MAX_TTL];
	struct hop_out out[HOPPROBE_MAX_TTL];
	const char *names[HOPS_PHASES_MAX] = { 0 };
	struct hops_verdict v;
	int n;

	if (!r->hop_trace.available)
		return;
	r->hops.ran = 1;
	n = hops_count(&r->hop_trace);
	for (int i = 0; i < r->nphases && i < HOPS_PHASES_MAX; i++)
		names[i] = phase_name(r->phases[i].kind);
	hops_input(r, n, in);
	hops_analyse(in, (size_t)n, (size_t)(r->nphases < HOPS_PHASES_MAX ? r->nphases
						 : HOPS_PHASES_MAX), names, out, &v);
	hops_output(r, n, in, out, &v);
}

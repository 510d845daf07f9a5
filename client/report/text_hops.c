/* text_hops: the per-hop section of the text summary (see text_hops.h). */
#include "client/report/text_hops.h"

#include <math.h>
#include <stdio.h>

#include "client/report/format.h"

#define HOPS_TEXT_WIDTH 80
#define HOPS_FMT "%4s  %-39s %8s %8s %8s %6s\n"

/* The phase the table shows: the judged one, else the first loaded phase that ran. */
static int hops_text_phase(const struct test_result *r)
{
	if (r->hops.queue_phase >= 0)
		return r->hops.queue_phase;
	for (int i = 0; i < r->nphases; i++)
		if (r->phases[i].kind != PHASE_IDLE)
			return (int)r->phases[i].kind;
	return -1;
}

/* A figure with one decimal (sign: with its sign), or "-" when there is none. */
static void hops_ms(char *buf, size_t len, double v, int sign)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, sign ? "%+.1f" : "%.1f", v);
}

static void hops_text_row(const struct test_result *r, int h, int k, FILE *out)
{
	const struct hop_row *row = &r->hops.row[h];
	char hop[12], idle[16], load[16], inc[16], loss[16];

	snprintf(hop, sizeof(hop), "%d", h + 1);
	hops_ms(idle, sizeof(idle), row->idle_ms, 0);
	hops_ms(load, sizeof(load), k >= 0 ? row->loaded_ms[k] : NAN, 0);
	hops_ms(inc, sizeof(inc), k >= 0 ? row->increase_ms[k] : NAN, 1);
	if (k < 0 || isnan(row->loss_pct[k]))
		snprintf(loss, sizeof(loss), "-");
	else
		snprintf(loss, sizeof(loss), "%.0f%%", row->loss_pct[k]);
	fprintf(out, HOPS_FMT, hop, row->addr[0] ? row->addr : "*", idle, load, inc, loss);
}

void report_text_hops(const struct test_result *r, FILE *out)
{
	int k = hops_text_phase(r);
	char col[24];

	if (!r->hops.ran)
		return;
	snprintf(col, sizeof(col), "%s", k >= 0 ? phase_name((enum phase_kind)k) : "loaded");
	fprintf(out, "\nper hop (%s, %s probes):\n", col,
		r->hop_trace.mode == HOP_MODE_ICMP ? "ICMP" : "UDP");
	fprintf(out, HOPS_FMT, "hop", "address", "idle ms", "load ms", "+ms", "loss");
	for (int h = 0; h < r->hops.n; h++)
		hops_text_row(r, h, k, out);
	report_wrap(out, "queue: ", r->hops.verdict, 7, HOPS_TEXT_WIDTH);
	if (r->hops.evidence[0])
		report_wrap(out, "       ", r->hops.evidence, 7, HOPS_TEXT_WIDTH);
}

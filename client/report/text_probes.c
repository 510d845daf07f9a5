/* text_probes: the text summary's lines for the auxiliary probe kinds (a table per kind and
 * phase), RPM, the ICMP cross-checks and the passive capture. */
#include "client/report/text_probes.h"

#include <math.h>
#include <string.h>

#include "client/report/format.h"

static void text_capture(const struct test_result *r, FILE *out)
{
	const struct pa_dir *u = &r->capture.sum.up, *d = &r->capture.sum.down;
	char note[sizeof(r->capture.note)];

	if (!(r->cfg.probes & PROBE_BIT(PROBE_PCAP)))
		return;
	if (!r->capture.ran) {
		fprintf(out, "note: capture: %s\n",
			report_clean(r->capture.note, note, sizeof(note)));
		return;
	}
	fprintf(out, "Capture on %s: %llu packets, %llu dropped; TCP retransmissions up %llu "
		"(%.2f %%) down %llu (%.2f %%); CE marks up %llu down %llu\n",
		r->capture.ifname, (unsigned long long)r->capture.packets,
		(unsigned long long)r->capture.drops, (unsigned long long)u->retrans,
		isfinite(u->retrans_pct) ? u->retrans_pct : 0.0, (unsigned long long)d->retrans,
		isfinite(d->retrans_pct) ? d->retrans_pct : 0.0, (unsigned long long)u->ce,
		(unsigned long long)d->ce);
	if (r->capture.has_wire && r->capture.wire.n_tx > 0)
		fprintf(out, "Probe wire vs socket times: send()→wire p50 %.1f µs p99 %.1f µs, "
			"wire→socket p50 %.1f µs p99 %.1f µs\n", r->capture.wire.tx_p50_us,
			r->capture.wire.tx_p99_us, r->capture.wire.rx_p50_us, r->capture.wire.rx_p99_us);
}

/* "12.3 (+11.9)": the p50 and, for loaded phases, the increase over idle. */
static const char *kind_cell(const struct phase_result *ph, int k, char *buf, size_t len)
{
	const struct series_phase *sp = &ph->probe[k];
	char p50[16];

	if (sp->rtt_ms.n == 0)
		snprintf(buf, len, "%s", sp->sent ? "no answer" : "-");
	else if (ph->kind == PHASE_IDLE || isnan(sp->increase_ms))
		snprintf(buf, len, "%s", report_num(sp->rtt_ms.p50, 2, p50, sizeof(p50)));
	else
		snprintf(buf, len, "%s (%+.1f)", report_num(sp->rtt_ms.p50, 1, p50, sizeof(p50)),
			 sp->increase_ms);
	return buf;
}

static void text_kind_row(const struct test_result *r, int k, FILE *out)
{
	const struct probe_series *ps = &r->series[k];
	size_t sent = 0, lost = 0, err = 0;
	char cell[40], tgt[SERIES_TARGET_LEN], lp[16];

	fprintf(out, "%-13s %-22s", ps->name, report_clean(ps->target, tgt, sizeof(tgt)));
	for (int i = 0; i < r->nphases; i++) {
		const struct series_phase *sp = &r->phases[i].probe[k];

		fprintf(out, " %16s", kind_cell(&r->phases[i], k, cell, sizeof(cell)));
		sent += sp->sent;
		lost += sp->lost;
		err += sp->errors;
	}
	fprintf(out, " %7s", report_pct(sent > err ? 100.0 * (double)lost / (double)(sent - err) : NAN,
				  lp, sizeof(lp)));
	if (err)
		fprintf(out, "  %zu errors", err);
	fputc('\n', out);
}

static void text_rpm(const struct test_result *r, FILE *out)
{
	int any = 0;

	for (int i = 0; i < r->nphases; i++) {
		const struct rpm_result *m = &r->phases[i].rpm;

		if (!m->valid)
			continue;
		fprintf(out, "%s %s %.0f RPM (%s)", any ? "," : "Responsiveness:",
			phase_name(r->phases[i].kind), m->rpm, m->cls);
		any = 1;
	}
	if (any)
		fputc('\n', out);
}

void report_text_probes(const struct test_result *r, FILE *out)
{
	int avail = 0;
	char note[SERIES_NOTE_LEN];

	for (int k = 0; k < r->nseries; k++)
		avail += r->series[k].available;
	if (avail > 0) {
		fprintf(out, "%-13s %-22s", "probe kind", "target");
		for (int i = 0; i < r->nphases; i++)
			fprintf(out, " %16s", phase_name(r->phases[i].kind));
		fprintf(out, " %7s\n", "loss");
		for (int k = 0; k < r->nseries; k++)
			if (r->series[k].available)
				text_kind_row(r, k, out);
		fprintf(out, "(p50 ms, + increase over idle)\n");
	}
	for (int k = 0; k < r->nseries; k++)
		if (r->series[k].note[0])
			fprintf(out, "note: %s: %s\n", r->series[k].name,
				report_clean(r->series[k].note, note, sizeof(note)));
	text_rpm(r, out);
	text_capture(r, out);
	if (r->icmp_hop_verdict)
		fprintf(out, "ICMP first hop: %s (%s)\n", r->icmp_hop_verdict, r->icmp_hop_evidence);
	if (r->icmp_udp_verdict)
		fprintf(out, "ICMP vs UDP: %s (%s)\n", r->icmp_udp_verdict, r->icmp_udp_evidence);
}

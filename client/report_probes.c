/* report_probes: the auxiliary probe kinds (ICMP, DNS, new TCP connections, in-flow, passive
 * capture), RPM and the ICMP cross-checks, in the JSON report and the text summary. */
#include "client/report.h"

#include <math.h>
#include <string.h>

#include "client/analyze_cmd.h"
#include "common/jsonb.h"

json_object *report_json_rpm(struct jb *b, const struct rpm_result *rpm)
{
	json_object *o;

	if (!rpm->valid)
		return NULL;
	o = jb_obj(b);
	jb_add(b, o, "rpm", jb_num(b, rpm->rpm, DEC_INT));
	jb_add(b, o, "class", jb_str(b, rpm->cls));
	jb_add(b, o, "tm_connect_ms", jb_num(b, rpm->tm_connect_ms, DEC_MS));
	jb_add(b, o, "tm_request_ms", jb_num(b, rpm->tm_request_ms, DEC_MS));
	jb_add(b, o, "tm_inflow_ms", jb_num(b, rpm->tm_inflow_ms, DEC_MS));
	jb_add(b, o, "foreign_samples", jb_int(b, (int64_t)rpm->n_foreign));
	jb_add(b, o, "self_samples", jb_int(b, (int64_t)rpm->n_self));
	return o;
}

static json_object *json_kind_phase(struct jb *b, const struct phase_result *ph, int k)
{
	const struct series_phase *sp = &ph->probe[k];
	json_object *o = jb_obj(b);

	jb_add(b, o, "name", jb_str(b, phase_name(ph->kind)));
	jb_add(b, o, "rtt_ms", report_json_rtt(b, &sp->rtt_ms));
	jb_add(b, o, "sent", jb_int(b, (int64_t)sp->sent));
	jb_add(b, o, "answered", jb_int(b, (int64_t)sp->ok));
	jb_add(b, o, "lost", jb_int(b, (int64_t)sp->lost));
	jb_add(b, o, "errors", jb_int(b, (int64_t)sp->errors));
	jb_add(b, o, "loss_pct", jb_num(b, sp->loss_pct, DEC_PCT));
	jb_add(b, o, "jitter_ms", jb_num(b, sp->jitter_ms, DEC_MS));
	jb_add(b, o, "latency_increase_ms",
	       ph->kind == PHASE_IDLE ? NULL : jb_num(b, sp->increase_ms, DEC_MS));
	return o;
}

json_object *report_json_probe_kinds(struct jb *b, const struct test_result *r)
{
	json_object *a = jb_arr(b);

	for (int k = 0; k < r->nseries; k++) {
		const struct probe_series *ps = &r->series[k];
		json_object *o = jb_obj(b), *phases = jb_arr(b);

		jb_add(b, o, "kind", jb_str(b, ps->name));
		jb_add(b, o, "target", jb_str(b, ps->target));
		jb_add(b, o, "method", ps->method[0] ? jb_str(b, ps->method) : NULL);
		jb_add(b, o, "available", jb_bool(b, ps->available));
		jb_add(b, o, "note", ps->note[0] ? jb_str(b, ps->note) : NULL);
		jb_add(b, o, "samples", jb_int(b, (int64_t)ps->n));
		jb_add(b, o, "bad_replies", jb_int(b, (int64_t)ps->bad_replies));
		for (int i = 0; i < r->nphases && ps->available; i++)
			jb_push(b, phases, json_kind_phase(b, &r->phases[i], k));
		jb_add(b, o, "phases", phases);
		jb_push(b, a, o);
	}
	return a;
}

static json_object *json_check(struct jb *b, const char *verdict, const char *evidence)
{
	if (verdict == NULL)
		return NULL;
	return jb_pair(b, "verdict", jb_str(b, verdict), "evidence", jb_str(b, evidence));
}

json_object *report_json_icmp_checks(struct jb *b, const struct test_result *r)
{
	return jb_pair(b, "first_hop", json_check(b, r->icmp_hop_verdict, r->icmp_hop_evidence),
		       "icmp_vs_udp", json_check(b, r->icmp_udp_verdict, r->icmp_udp_evidence));
}

static json_object *json_wire(struct jb *b, const struct pa_wire *w)
{
	json_object *o = jb_obj(b);

	jb_add(b, o, "tx_samples", jb_int(b, (int64_t)w->n_tx));
	jb_add(b, o, "send_to_wire_p50_us", jb_num(b, w->tx_p50_us, 1));
	jb_add(b, o, "send_to_wire_p99_us", jb_num(b, w->tx_p99_us, 1));
	jb_add(b, o, "rx_samples", jb_int(b, (int64_t)w->n_rx));
	jb_add(b, o, "wire_to_socket_p50_us", jb_num(b, w->rx_p50_us, 1));
	jb_add(b, o, "wire_to_socket_p99_us", jb_num(b, w->rx_p99_us, 1));
	return o;
}

json_object *report_json_capture(struct jb *b, const struct test_result *r)
{
	json_object *o;

	if (!(r->cfg.probes & PROBE_BIT(PROBE_PCAP)))
		return NULL;
	o = jb_obj(b);
	jb_add(b, o, "ran", jb_bool(b, r->capture.ran));
	jb_add(b, o, "note", r->capture.note[0] ? jb_str(b, r->capture.note) : NULL);
	if (!r->capture.ran)
		return o;
	jb_add(b, o, "interface", jb_str(b, r->capture.ifname));
	jb_add(b, o, "nanosecond_timestamps", jb_bool(b, r->capture.nano));
	jb_add(b, o, "packets", jb_int(b, (int64_t)r->capture.packets));
	jb_add(b, o, "drops", jb_int(b, (int64_t)r->capture.drops));
	jb_add(b, o, "up", analyze_json_dir(b, &r->capture.sum.up));
	jb_add(b, o, "down", analyze_json_dir(b, &r->capture.sum.down));
	jb_add(b, o, "probe_wire", r->capture.has_wire ? json_wire(b, &r->capture.wire) : NULL);
	return o;
}

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

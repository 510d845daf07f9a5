/* json_parts: parts of the JSON report that the report and `bloatmeter analyze` share, or that
 * stand on their own: RTT order statistics, RPM, the auxiliary probe kinds, the ICMP
 * cross-checks and the passive capture. */
#include "client/report/json_parts.h"

#include <math.h>
#include <string.h>

#include "common/jsonb.h"

/* RTT order statistics; all null when the phase had no replies. */
json_object *report_json_rtt(struct jb *b, const struct stats_summary *s)
{
	json_object *o = jb_obj(b);
	double none = NAN;

	jb_add(b, o, "min", jb_num(b, s->n ? s->min : none, DEC_MS));
	jb_add(b, o, "p50", jb_num(b, s->n ? s->p50 : none, DEC_MS));
	jb_add(b, o, "p90", jb_num(b, s->n ? s->p90 : none, DEC_MS));
	jb_add(b, o, "p99", jb_num(b, s->n ? s->p99 : none, DEC_MS));
	jb_add(b, o, "max", jb_num(b, s->n ? s->max : none, DEC_MS));
	return o;
}

static json_object *json_pa_rtt(struct jb *b, const struct pa_rtt *r)
{
	json_object *o = jb_obj(b);

	jb_add(b, o, "n", jb_int(b, (int64_t)r->n));
	jb_add(b, o, "min", jb_num(b, r->min_ms, 3));
	jb_add(b, o, "p50", jb_num(b, r->p50_ms, 3));
	jb_add(b, o, "p95", jb_num(b, r->p95_ms, 3));
	jb_add(b, o, "p99", jb_num(b, r->p99_ms, 3));
	jb_add(b, o, "max", jb_num(b, r->max_ms, 3));
	jb_add(b, o, "increase", jb_num(b, r->increase_ms, 3));
	return o;
}

json_object *report_json_pa_dir(struct jb *b, const struct pa_dir *d)
{
	json_object *o = jb_obj(b), *ecn = jb_obj(b);

	jb_add(b, o, "packets", jb_int(b, (int64_t)d->packets));
	jb_add(b, o, "bytes", jb_int(b, (int64_t)d->bytes));
	jb_add(b, o, "payload_bytes", jb_int(b, (int64_t)d->payload_bytes));
	jb_add(b, o, "throughput_mbps", jb_num(b, d->mbps, 3));
	jb_add(b, o, "data_segments", jb_int(b, (int64_t)d->data_segments));
	jb_add(b, o, "retransmissions", jb_int(b, (int64_t)d->retrans));
	jb_add(b, o, "retransmission_pct", jb_num(b, d->retrans_pct, 3));
	jb_add(b, ecn, "ce", jb_int(b, (int64_t)d->ce));
	jb_add(b, ecn, "ect0", jb_int(b, (int64_t)d->ect0));
	jb_add(b, ecn, "ect1", jb_int(b, (int64_t)d->ect1));
	jb_add(b, o, "ecn", ecn);
	jb_add(b, o, "flows", jb_int(b, (int64_t)d->flows));
	jb_add(b, o, "rtt_ms", json_pa_rtt(b, &d->rtt));
	jb_add(b, o, "rtt_server_ms", json_pa_rtt(b, &d->rtt_server));
	jb_add(b, o, "rtt_client_ms", json_pa_rtt(b, &d->rtt_client));
	return o;
}

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
	jb_add(b, o, "up", report_json_pa_dir(b, &r->capture.sum.up));
	jb_add(b, o, "down", report_json_pa_dir(b, &r->capture.sum.down));
	jb_add(b, o, "probe_wire", r->capture.has_wire ? json_wire(b, &r->capture.wire) : NULL);
	return o;
}

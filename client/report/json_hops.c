/* json_hops: "hops" and "queue_location" (see json_hops.h). */
#include "client/report/json_hops.h"

#include "client/report/json_parts.h"
#include "common/jsonb.h"

static json_object *json_hop(struct jb *b, const struct test_result *r, int h)
{
	const struct hop_row *row = &r->hops.row[h];
	json_object *o = jb_obj(b), *ph = jb_obj(b);

	jb_add(b, o, "hop", jb_int(b, h + 1));
	jb_add(b, o, "address", row->addr[0] ? jb_str(b, row->addr) : NULL);
	jb_add(b, o, "idle_rtt_ms", jb_num(b, row->idle_ms, DEC_MS));
	jb_add(b, o, "idle_loss_pct", jb_num(b, row->idle_loss_pct, DEC_PCT));
	for (int i = 0; i < r->nphases; i++) {
		enum phase_kind k = r->phases[i].kind;

		if (k == PHASE_IDLE)
			continue;
		json_object *p = jb_obj(b);

		jb_add(b, p, "rtt_ms", jb_num(b, row->loaded_ms[k], DEC_MS));
		jb_add(b, p, "increase_ms", jb_num(b, row->increase_ms[k], DEC_MS));
		jb_add(b, p, "loss_pct", jb_num(b, row->loss_pct[k], DEC_PCT));
		jb_add(b, ph, phase_name(k), p);
	}
	jb_add(b, o, "phases", ph);
	jb_add(b, o, "icmp_rate_limited", jb_bool(b, row->icmp_limited));
	return o;
}

json_object *report_json_hops(struct jb *b, const struct test_result *r)
{
	json_object *a;

	if (!r->hops.ran)
		return NULL;
	a = jb_arr(b);
	for (int h = 0; h < r->hops.n; h++)
		jb_push(b, a, json_hop(b, r, h));
	return a;
}

json_object *report_json_queue_location(struct jb *b, const struct test_result *r)
{
	const struct hop_result *hr = &r->hops;
	json_object *o;
	int q = hr->queue_hop;

	if (!hr->ran)
		return NULL;
	o = jb_obj(b);
	jb_add(b, o, "mode", jb_str(b, r->hop_trace.mode == HOP_MODE_ICMP ? "icmp" : "udp"));
	jb_add(b, o, "method", jb_str(b, r->hop_trace.method));
	jb_add(b, o, "hop_count", r->hop_trace.hop_count > 0 ? jb_int(b, r->hop_trace.hop_count)
							     : NULL);
	jb_add(b, o, "hop", q > 0 ? jb_int(b, q) : NULL);
	jb_add(b, o, "address", q > 0 && hr->row[q - 1].addr[0] ? jb_str(b, hr->row[q - 1].addr)
								: NULL);
	jb_add(b, o, "after_hop", q > 0 ? jb_int(b, q - 1) : NULL);
	jb_add(b, o, "after_address", q > 1 && hr->row[q - 2].addr[0]
					      ? jb_str(b, hr->row[q - 2].addr) : NULL);
	jb_add(b, o, "phase", hr->queue_phase >= 0
			      ? jb_str(b, phase_name((enum phase_kind)hr->queue_phase)) : NULL);
	jb_add(b, o, "increase_ms", jb_num(b, hr->queue_increase_ms, DEC_MS));
	jb_add(b, o, "verdict", jb_str(b, hr->verdict));
	jb_add(b, o, "evidence", jb_str(b, hr->evidence));
	return o;
}

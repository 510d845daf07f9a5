/* json_queue: one object per loaded direction: verdict, evidence and the figures behind it. */
#include "client/report/json_queue.h"

#include "client/report/json_parts.h"
#include "common/jsonb.h"

static json_object *json_count(struct jb *b, int64_t v)
{
	return v < 0 ? NULL : jb_int(b, v);
}

static json_object *json_verdict(struct jb *b, const struct queue_verdict *v)
{
	json_object *o;

	if (v->verdict == NULL)
		return NULL;
	o = jb_obj(b);
	jb_add(b, o, "verdict", jb_str(b, v->verdict));
	jb_add(b, o, "evidence", jb_str(b, v->evidence));
	jb_add(b, o, "standing_ms", jb_num(b, v->standing_ms, DEC_MS));
	jb_add(b, o, "floor_ms", jb_num(b, v->floor_ms, DEC_MS));
	jb_add(b, o, "top_ms", jb_num(b, v->top_ms, DEC_MS));
	jb_add(b, o, "q_before_loss_ms", jb_num(b, v->q_before_loss_ms, DEC_MS));
	jb_add(b, o, "flow_queue_ms", jb_num(b, v->flow_q_ms, DEC_MS));
	jb_add(b, o, "probe_losses", jb_int(b, (int64_t)v->probe_losses));
	jb_add(b, o, "retransmissions", json_count(b, v->retrans));
	jb_add(b, o, "ce_marks", json_count(b, v->ce));
	jb_add(b, o, "signal", jb_str(b, v->signal));
	return o;
}

json_object *report_json_queue(struct jb *b, const struct test_result *r)
{
	return jb_pair(b, "download", json_verdict(b, &r->queue_down), "upload",
		       json_verdict(b, &r->queue_up));
}

json_object *report_json_ecn(struct jb *b, const struct test_result *r)
{
	const struct ecn_report *e = &r->ecn;
	json_object *o;

	if (!e->requested)
		return NULL;
	o = jb_obj(b);
	jb_add(b, o, "enabled", jb_bool(b, e->enabled));
	jb_add(b, o, "tcp_ecn", e->sysctl < 0 ? NULL : jb_int(b, e->sysctl));
	jb_add(b, o, "how", jb_str(b, e->how));
	jb_add(b, o, "flows", jb_int(b, e->flows));
	jb_add(b, o, "flows_ecn", jb_int(b, e->flows_ecn));
	jb_add(b, o, "ce_down", json_count(b, e->ce_down));
	jb_add(b, o, "ce_up", json_count(b, e->ce_up));
	jb_add(b, o, "retransmissions", json_count(b, e->retrans));
	jb_add(b, o, "verdict", jb_str(b, e->verdict ? e->verdict : "unknown"));
	jb_add(b, o, "evidence", jb_str(b, e->evidence));
	return o;
}

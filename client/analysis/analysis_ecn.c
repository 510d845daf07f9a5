/* analysis_ecn: ECN negotiation, CE marks and the marks-or-drops verdict. */
#include "client/analysis/analysis_ecn.h"

#include <stdio.h>
#include <stdlib.h>

#define ECN_MAX_FLOWS 1024 /* distinct (phase, direction, id) flows tracked */

/* A flow's key: its phase (by time), direction and id. */
static uint32_t flow_key(const struct test_result *r, const struct flow_sample *f)
{
	uint32_t phase = 0;

	for (int i = 0; i < r->nphases; i++)
		if (f->t_ns >= r->phases[i].start_ns)
			phase = (uint32_t)i;
	return phase << 17 | (uint32_t)f->up << 16 | f->flow_id;
}

struct ecn_flow {
	uint32_t key;
	int ecn;
	int64_t delivered_ce; /* the latest reading (a running count) */
};

/* Counts distinct flows and those with ECN; sums the upload flows' final delivered_ce. */
static void ecn_flows(const struct test_result *r, struct ecn_report *e, int64_t *ce_up_tcp)
{
	struct ecn_flow *fl = calloc(ECN_MAX_FLOWS, sizeof(*fl));
	size_t n = 0;

	*ce_up_tcp = -1;
	if (fl == NULL)
		return;
	for (size_t i = 0; i < r->nflows; i++) {
		const struct flow_sample *f = &r->flows[i];
		uint32_t key = flow_key(r, f) | (uint32_t)f->up << 31;
		size_t k = 0;

		while (k < n && fl[k].key != key)
			k++;
		if (k == n) {
			if (n == ECN_MAX_FLOWS)
				continue;
			n++;
			fl[k].key = key;
		}
		fl[k].ecn |= f->ecn;
		fl[k].delivered_ce = f->delivered_ce;
	}
	e->flows = (int)n;
	for (size_t k = 0; k < n; k++) {
		e->flows_ecn += fl[k].ecn;
		if ((fl[k].key >> 31) && fl[k].delivered_ce >= 0)
			*ce_up_tcp = (*ce_up_tcp < 0 ? 0 : *ce_up_tcp) + fl[k].delivered_ce;
	}
	free(fl);
}

static int64_t loaded_retrans(const struct test_result *r)
{
	int64_t sum = -1;

	for (int i = 0; i < r->nphases; i++) {
		const struct phase_result *ph = &r->phases[i];

		if (ph->kind == PHASE_IDLE)
			continue;
		if (ph->retrans_down >= 0)
			sum = (sum < 0 ? 0 : sum) + ph->retrans_down;
		if (ph->retrans_up >= 0)
			sum = (sum < 0 ? 0 : sum) + ph->retrans_up;
	}
	return sum;
}

void analysis_ecn_judge(struct ecn_report *e)
{
	int64_t ce = (e->ce_down > 0 ? e->ce_down : 0) + (e->ce_up > 0 ? e->ce_up : 0);
	long long rt = e->retrans > 0 ? (long long)e->retrans : 0;

	if (e->flows_ecn == 0) {
		e->verdict = "not negotiated";
		snprintf(e->evidence, sizeof(e->evidence), "none of the %d load flows negotiated ECN%s",
			 e->flows, e->enabled ? " (the server end refused it?)" : " (see how)");
	} else if (ce > 0 && ce >= rt) {
		e->verdict = "marks";
		snprintf(e->evidence, sizeof(e->evidence), "the path marks ECN (CE) instead of dropping: %lld CE marks (%lld down, %lld up) against %lld retransmissions; %d of %d flows negotiated ECN",
			 (long long)ce, (long long)e->ce_down, (long long)e->ce_up, rt, e->flows_ecn, e->flows);
	} else if (rt > 0) {
		e->verdict = "drops";
		snprintf(e->evidence, sizeof(e->evidence), "the path drops instead of marking: %lld retransmissions against %lld CE marks; %d of %d flows negotiated ECN",
			 rt, (long long)ce, e->flows_ecn, e->flows);
	} else {
		e->verdict = "unknown";
		snprintf(e->evidence, sizeof(e->evidence), "neither CE marks nor retransmissions were seen%s",
			 e->ce_down < 0 && e->ce_up < 0 ? " (no capture: run with --probes pcap)" : "");
	}
}

void analysis_ecn(struct test_result *r)
{
	struct ecn_report *e = &r->ecn;
	int64_t ce_up_tcp;

	if (!e->requested)
		return;
	e->flows = e->flows_ecn = 0;
	ecn_flows(r, e, &ce_up_tcp);
	e->ce_down = r->capture.ran ? (int64_t)r->capture.sum.down.ce : -1;
	/* The capture runs at the client, before the uplink's bottleneck: it sees the marks that
	 * bottleneck makes only as the upload flows' echoed count, delivered_ce. */
	e->ce_up = ce_up_tcp >= 0 ? ce_up_tcp : r->capture.ran ? (int64_t)r->capture.sum.up.ce : -1;
	e->retrans = loaded_retrans(r);
	analysis_ecn_judge(e);
}

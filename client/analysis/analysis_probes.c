/* analysis_probes: per-phase figures of the auxiliary probe kinds, RPM, and what ICMP tells
 * beyond UDP: whether the first hop's latency rises with the path's (the queue sits at or
 * before the gateway) and whether ICMP is treated differently from UDP under load. */
#include "client/analysis/analysis_probes.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "client/analysis/probestats.h"
#include "client/analysis/rpm.h"

/* Increases smaller than this are within the noise of a few probes per second. */
#define ICMP_MIN_RISE_MS 5.0

static void probes_per_phase(struct test_result *r)
{
	for (int k = 0; k < r->nseries; k++) {
		double idle_p50 = NAN;

		for (int i = 0; i < r->nphases; i++) {
			struct phase_result *ph = &r->phases[i];

			probestats_window(&r->series[k], result_window_start(ph), ph->end_ns,
					  &ph->probe[k]);
			if (ph->kind == PHASE_IDLE && ph->probe[k].rtt_ms.n > 0)
				idle_p50 = ph->probe[k].rtt_ms.p50;
		}
		for (int i = 0; i < r->nphases; i++) {
			struct phase_result *ph = &r->phases[i];

			if (ph->kind != PHASE_IDLE && ph->probe[k].rtt_ms.n > 0)
				ph->probe[k].increase_ms = ph->probe[k].rtt_ms.p50 - idle_p50;
		}
	}
}

static void probes_rpm(struct test_result *r)
{
	for (int i = 0; i < r->nphases; i++) {
		struct phase_result *ph = &r->phases[i];

		if (ph->kind == PHASE_IDLE)
			continue;
		rpm_compute(r, ph->kind, result_window_start(ph), ph->end_ns, &ph->rpm);
	}
}

/* The loaded phase where the path's ICMP latency rose most, or NULL. */
static const struct phase_result *worst_phase(const struct test_result *r, int path)
{
	const struct phase_result *best = NULL;

	for (int i = 0; i < r->nphases; i++) {
		const struct phase_result *ph = &r->phases[i];

		if (ph->kind == PHASE_IDLE || isnan(ph->probe[path].increase_ms))
			continue;
		if (best == NULL || ph->probe[path].increase_ms > best->probe[path].increase_ms)
			best = ph;
	}
	return best;
}

static void icmp_first_hop(struct test_result *r, int path, int hop)
{
	const struct phase_result *ph = worst_phase(r, path);
	double p, h;

	if (ph == NULL || isnan(ph->probe[hop].increase_ms))
		return;
	p = ph->probe[path].increase_ms;
	h = ph->probe[hop].increase_ms;
	snprintf(r->icmp_hop_evidence, sizeof(r->icmp_hop_evidence),
		 "%s phase: ICMP to the server +%.1f ms, to the first hop +%.1f ms", phase_name(ph->kind),
		 p, h);
	if (p < ICMP_MIN_RISE_MS)
		r->icmp_hop_verdict = "no queue seen on the path";
	else if (h >= 0.5 * p)
		r->icmp_hop_verdict = "queue at or before the first hop";
	else
		r->icmp_hop_verdict = "queue beyond the first hop";
}

/* ICMP and UDP cross the same queue; a large difference under load means one of them is
 * prioritised or deprioritised somewhere on the path. */
static void icmp_vs_udp(struct test_result *r, int path)
{
	const struct phase_result *ph = worst_phase(r, path);
	double i, u;

	if (ph == NULL || isnan(ph->latency_increase_ms))
		return;
	i = ph->probe[path].increase_ms;
	u = ph->latency_increase_ms;
	snprintf(r->icmp_udp_evidence, sizeof(r->icmp_udp_evidence),
		 "%s phase: latency increase ICMP %+.1f ms, UDP %+.1f ms", phase_name(ph->kind), i, u);
	if (fabs(i - u) <= fmax(ICMP_MIN_RISE_MS, 0.3 * fmax(fabs(i), fabs(u))))
		r->icmp_udp_verdict = "agree";
	else if (i < u)
		r->icmp_udp_verdict = "ICMP prioritised";
	else
		r->icmp_udp_verdict = "ICMP deprioritised";
}

void analysis_probes(struct test_result *r)
{
	int path = -1, hop = -1;

	probes_per_phase(r);
	probes_rpm(r);
	if (r->http)
		return; /* no UDP stream to budget or to compare ICMP with */
	if (result_find_series(r, "icmp", &path) == NULL || !r->series[path].available)
		return;
	if (result_find_series(r, "icmp_hop", &hop) != NULL && r->series[hop].available)
		icmp_first_hop(r, path, hop);
	icmp_vs_udp(r, path);
}

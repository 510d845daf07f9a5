/* probeshare: per-phase probe traffic, ACKs and the link's IP-level rate (probeshare.h). */
#include "client/analysis/probeshare.h"

#include <math.h>
#include <string.h>

#include "common/clock.h"

/* A share this close to the budget is within it: the counts are whole probes in a window
 * of a few seconds, and the window may hold the last slots at the earlier intervals. */
#define SHARE_SLACK 1.05
/* Delayed ACKs: one ACK per two full segments (RFC 1122, 5681). */
#define SEGMENTS_PER_ACK 2.0

/* The budget kind of a series by its name, or -1 (the capture's passive series cost nothing). */
static int series_kind(const char *name, int *up_flow)
{
	*up_flow = 0;
	if (strncmp(name, "icmp", 4) == 0)
		return BUDGET_ICMP;
	if (strncmp(name, "dns", 3) == 0)
		return BUDGET_DNS;
	if (strcmp(name, "tcp_connect") == 0)
		return BUDGET_TCP;
	if (strncmp(name, "inflow_", 7) == 0) {
		*up_flow = strcmp(name, "inflow_up") == 0;
		return BUDGET_INFLOW;
	}
	return -1;
}

/* UDP probes sent in [from, to). */
static size_t udp_sent(const struct test_result *r, int64_t from, int64_t to)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nprobes; i++)
		n += r->probes[i].send_ns >= from && r->probes[i].send_ns < to;
	return n;
}

/* Samples of a series sent in [from, to) (the per-phase counts come later, with the rest of
 * the probe kinds' figures; the buffer's bytes need these first). */
static size_t series_sent(const struct probe_series *ps, int64_t from, int64_t to)
{
	size_t n = 0;

	for (size_t i = 0; i < ps->n; i++)
		n += ps->s[i].send_ns >= from && ps->s[i].send_ns < to;
	return n;
}

/* The HTTP mode's probes sent in [from, to): what their connections carried, measured. */
static void wire_bytes(const struct test_result *r, int64_t from, int64_t to, double bytes[2])
{
	bytes[0] = bytes[1] = 0;
	for (size_t i = 0; i < r->nprobes; i++) {
		if (r->probes[i].send_ns < from || r->probes[i].send_ns >= to)
			continue;
		bytes[0] += r->probe_wire[i].down;
		bytes[1] += r->probe_wire[i].up;
	}
}

/* Probe bytes each way in the phase's window, from the probes each kind sent there. */
static void window_bytes(const struct test_result *r, const struct phase_result *ph,
			 const struct budget_mix *m, double secs, double bytes[2])
{
	double b[2];
	int64_t from = result_window_start(ph);

	if (r->probe_wire != NULL) {
		wire_bytes(r, from, ph->end_ns, bytes);
		return;
	}
	budget_probe_bytes(m, BUDGET_UDP, b);
	for (int d = 0; d < 2; d++)
		bytes[d] = b[d] * (double)udp_sent(r, from, ph->end_ns);
	for (int k = 0; k < r->nseries; k++) {
		int up_flow, kind = series_kind(r->series[k].name, &up_flow);

		if (kind < 0)
			continue;
		if (kind == BUDGET_INFLOW)
			budget_inflow_bytes(m->ip_hdr, up_flow, b);
		else
			budget_probe_bytes(m, (enum budget_kind)kind, b);
		for (int d = 0; d < 2; d++)
			bytes[d] += b[d] * (double)series_sent(&r->series[k], from, ph->end_ns);
	}
	/* Per-hop probes keep no per-phase counts: their interval in force gives them. */
	if (r->hop_trace.available && ph->probe_ms[BUDGET_HOP] > 0) {
		budget_probe_bytes(m, BUDGET_HOP, b);
		for (int d = 0; d < 2; d++)
			bytes[d] += b[d] * secs * 1000.0 / ph->probe_ms[BUDGET_HOP];
	}
}

/* ACK bit/s each way: the ACKs of the load flowing the other way, from its segments. */
static void ack_bps(const struct test_result *r, const double goodput_bps[2], double out[2])
{
	double hdr = r->mss > 0 ? r->mss * (r->ip_overhead - 1) : 0;

	for (int d = 0; d < 2; d++) {
		double other = goodput_bps[1 - d];

		out[d] = r->mss > 0 ? other / (8.0 * r->mss) / SEGMENTS_PER_ACK * hdr * 8.0 : 0;
	}
}

static void phase_share(const struct test_result *r, struct phase_result *ph)
{
	struct budget_mix m = { .udp_size = r->cfg.probe_size, .ip_hdr = r->probe_ip_hdr };
	double secs = (double)(ph->end_ns - result_window_start(ph)) / NS_PER_SEC, bytes[2];
	double good[2] = { isnan(ph->down_mbps) ? 0 : ph->down_mbps * 1e6,
			   isnan(ph->up_mbps) ? 0 : ph->up_mbps * 1e6 };
	double ack[2];

	if (!(secs > 0))
		return;
	window_bytes(r, ph, &m, secs, bytes);
	ack_bps(r, good, ack);
	for (int d = 0; d < 2; d++) {
		double probe = 8.0 * bytes[d] / secs;
		double link = good[d] * (r->ip_overhead > 0 ? r->ip_overhead : 1) + probe + ack[d];

		ph->probe_kbps[d] = probe / 1e3;
		ph->ack_kbps[d] = ack[d] / 1e3;
		ph->link_mbps[d] = link / 1e6;
		/* A share of the link only where the load filled it: elsewhere the "rate" is the
		 * probes' own. */
		ph->probe_share[d] = good[d] > 0 && link > 0 ? probe / link : NAN;
	}
}

static void phase_warn(struct test_result *r, const struct phase_result *ph)
{
	static const char *const dir[2] = { "downlink", "uplink" };

	for (int d = 0; d < 2; d++) {
		if (!(ph->probe_share[d] > BUDGET_SHARE * SHARE_SLACK))
			continue;
		if (r->probe_wire != NULL)
			result_warn(r, "%s phase: the latency requests (a new connection each) used %.1f %% of the %s (%.0f kbit/s of %.2f Mbit/s), more than %.0f %%%s; the goodput is that much below the link's rate",
				    phase_name(ph->kind), 100 * ph->probe_share[d], dir[d],
				    ph->probe_kbps[d], ph->link_mbps[d], 100 * BUDGET_SHARE,
				    ph->probe_floor ? ", at their floor of ten a second" : "");
		else if (ph->probe_floor)
			result_warn(r, "%s phase: the probes used %.1f %% of the %s (%.0f kbit/s of %.2f Mbit/s), more than %.0f %%: their intervals are at the floor (UDP every %.0f ms, ≥ 100 samples per phase for the p99 and ≥ 10 per second; the other kinds ≥ 20 per phase); the goodput is that much below the link's rate",
				    phase_name(ph->kind), 100 * ph->probe_share[d], dir[d],
				    ph->probe_kbps[d], ph->link_mbps[d], 100 * BUDGET_SHARE,
				    ph->probe_ms[BUDGET_UDP]);
		else
			result_warn(r, "%s phase: the probes used %.1f %% of the %s (%.0f kbit/s of %.2f Mbit/s), more than %.0f %%; raise -i and --probe-interval on this link",
				    phase_name(ph->kind), 100 * ph->probe_share[d], dir[d],
				    ph->probe_kbps[d], ph->link_mbps[d], 100 * BUDGET_SHARE);
	}
}

void probeshare_phases(struct test_result *r)
{
	for (int i = 0; i < r->nphases; i++) {
		struct phase_result *ph = &r->phases[i];

		for (int d = 0; d < 2; d++)
			ph->probe_kbps[d] = ph->ack_kbps[d] = ph->link_mbps[d] = ph->probe_share[d] = NAN;
		if (ph->kind == PHASE_IDLE || (!(ph->probe_scale > 0) && r->probe_wire == NULL))
			continue;
		phase_share(r, ph);
		phase_warn(r, ph);
	}
}

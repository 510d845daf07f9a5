/* probeadapt: chooses the probe intervals once a loaded phase has shown its rate. */
#include "client/run/probeadapt.h"

#include <math.h>
#include <string.h>

#include "common/log.h"

void probeadapt_init(struct probe_adapt *a, const struct client_config *cfg, int ipv6)
{
	static const enum probe_kind of[BUDGET_HOP] = { PROBE_UDP, PROBE_ICMP, PROBE_DNS, PROBE_TCP,
							PROBE_INFLOW };

	memset(a, 0, sizeof(*a));
	a->mix.udp_size = cfg->probe_size;
	a->mix.ip_hdr = ipv6 ? 40 : 20;
	for (int k = 0; k < BUDGET_HOP; k++)
		a->mix.base_ms[k] = cfg->probe_interval_ms[of[k]];
	a->mix.base_ms[BUDGET_UDP] = cfg->interval_ms;
	a->mix.base_ms[BUDGET_HOP] = BUDGET_HOP_BASE_MS;
	a->mix.streams[BUDGET_UDP] = 1;
	a->mix.streams[BUDGET_INFLOW] = (cfg->probes & PROBE_BIT(PROBE_INFLOW)) != 0;
	memcpy(a->ms, a->mix.base_ms, sizeof(a->ms));
	a->scale = 1;
}

void probeadapt_phase(struct probe_adapt *a, const int loaded[2], double phase_s)
{
	a->phase_s = phase_s;
	a->done = !loaded[0] && !loaded[1];
	for (int d = 0; d < 2; d++) {
		a->loaded[d] = loaded[d];
		a->mix.inflow_dir[d] = loaded[d];
		a->started[d] = 0;
		a->seconds[d] = 0;
		a->rate_bps[d] = 0;
	}
	a->fitted = 0;
}

/* Direction d's rate from its first bytes to now, read at each whole second of data: one
 * second's count can carry a burst (data held behind a loss reaches the application at
 * once), the whole span cannot exceed the link. 1 with *bps when a second just ended. */
static int direction_rate(struct probe_adapt *a, int d, int64_t at, uint64_t bytes,
			  double ip_overhead, double probe_bps, double *bps)
{
	if (!a->started[d] || bytes == a->b0[d]) {
		a->t0[d] = at; /* no data yet: the first second starts with the first bytes */
		a->b0[d] = bytes;
		a->started[d] = 1;
		return 0;
	}
	if (at - a->t0[d] < (a->seconds[d] + 1) * PROBEADAPT_WINDOW_NS)
		return 0;
	a->seconds[d]++;
	/* The link carried the load's IP bytes and the probes' own. */
	*bps = 8.0 * (double)(bytes - a->b0[d]) * ip_overhead * 1e9 / (double)(at - a->t0[d]) +
	       probe_bps;
	return 1;
}

int probeadapt_tick(struct probe_adapt *a, const int64_t at[2], const uint64_t bytes[2],
		    double ip_overhead)
{
	double now_bps[2], before[BUDGET_KINDS];
	int changed = 0;

	if (a->done)
		return 0;
	if (!(ip_overhead > 0))
		ip_overhead = PROBEADAPT_IP_OVERHEAD;
	budget_bps(&a->mix, a->ms, now_bps);
	for (int d = 0; d < 2; d++) {
		double rate;

		if (a->loaded[d] && direction_rate(a, d, at[d], bytes[d], ip_overhead, now_bps[d], &rate) &&
		    fabs(rate - a->rate_bps[d]) > PROBEADAPT_CHANGE * a->rate_bps[d]) {
			a->rate_bps[d] = rate;
			changed = 1;
		}
	}
	for (int d = 0; d < 2; d++)
		if (a->loaded[d] && a->seconds[d] == 0)
			return 0; /* every loaded direction needs its rate */
	if (!changed && a->fitted)
		return 0;
	/* This phase's rate; a direction not loaded keeps what an earlier phase measured. */
	for (int d = 0; d < 2; d++)
		if (a->loaded[d])
			a->cap_bps[d] = a->rate_bps[d];
	a->fitted = 1;
	for (int d = 0; d < 2; d++)
		if (a->loaded[d] && a->seconds[d] >= PROBEADAPT_SECONDS)
			a->done = 1; /* later seconds of the phase keep the intervals */
	memcpy(before, a->ms, sizeof(before));
	a->settle_ns = 0;
	for (int k = 0; k < BUDGET_KINDS; k++)
		if (a->mix.streams[k] > 0 && a->ms[k] * 1e6 > (double)a->settle_ns)
			a->settle_ns = (int64_t)(a->ms[k] * 1e6);
	a->floor = budget_fit(&a->mix, a->cap_bps, BUDGET_SHARE, a->phase_s, a->ms, &a->scale);
	if (memcmp(before, a->ms, sizeof(before)) == 0)
		return 0;
	log_info("probe budget: %.0f / %.0f kbit/s measured down / up: intervals × %.2f%s",
		 a->cap_bps[0] / 1e3, a->cap_bps[1] / 1e3, a->scale,
		 a->floor ? " (at the floor)" : "");
	return 1;
}

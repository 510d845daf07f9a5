/* tcpfallback: which TCP-based series stands in for UDP in each phase. */
#include "client/analysis/tcpfallback.h"

#include "client/analysis/probestats.h"

/* The series to try for a phase kind, best first (NULL-terminated). */
static const char *const *tcpfallback_order(enum phase_kind k)
{
	static const char *const idle[] = { "tcp_connect", NULL };
	static const char *const down[] = { "inflow_down", "tcp_connect", NULL };
	static const char *const up[] = { "inflow_up", "tcp_connect", NULL };
	static const char *const both[] = { "inflow_down", "inflow_up", "tcp_connect", NULL };

	switch (k) {
	case PHASE_DOWNLOAD:
		return down;
	case PHASE_UPLOAD:
		return up;
	case PHASE_BIDIR:
		return both;
	default:
		return idle;
	}
}

void tcpfallback_rtt(struct test_result *r)
{
	if (!r->udp_blocked)
		return;
	for (int i = 0; i < r->nphases; i++) {
		struct phase_result *ph = &r->phases[i];

		if (ph->rtt_ms.n > 0)
			continue;
		for (const char *const *name = tcpfallback_order(ph->kind); *name; name++) {
			const struct probe_series *ps = result_find_series(r, *name, NULL);
			struct series_phase sp;

			if (ps == NULL || !ps->available)
				continue;
			probestats_window(ps, result_window_start(ph), ph->end_ns, &sp);
			if (sp.rtt_ms.n > 0) {
				ph->rtt_ms = sp.rtt_ms;
				break;
			}
		}
	}
}

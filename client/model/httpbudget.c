/* httpbudget: the HTTP mode's latency-request interval (httpbudget.h). */
#include "client/model/httpbudget.h"

double httpbudget_interval_ms(const double req_bytes[2], const double cap_bps[2],
			      double base_ms, int *floor)
{
	double ms = base_ms;

	*floor = 0;
	for (int d = 0; d < 2; d++) {
		double want;

		if (!(cap_bps[d] > 0) || !(req_bytes[d] > 0))
			continue;
		want = 8.0 * req_bytes[d] / (BUDGET_SHARE * cap_bps[d]) * 1000.0;
		if (want > ms)
			ms = want;
	}
	if (ms > HTTPBUDGET_FLOOR_MS && HTTPBUDGET_FLOOR_MS >= base_ms) {
		*floor = 1;
		ms = HTTPBUDGET_FLOOR_MS;
	}
	return ms;
}

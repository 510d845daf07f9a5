/* httpadapt: the HTTP mode's probe budget at run time (httpadapt.h). */
#include "client/run/httpadapt.h"

#include "client/model/httpbudget.h"
#include "common/clock.h"

void httpadapt_init(struct http_adapt *a, double base_ms)
{
	*a = (struct http_adapt){ .base_ms = base_ms, .phase_ms = base_ms, .ms = base_ms };
}

void httpadapt_phase(struct http_adapt *a, const int loaded[2], int64_t now,
		     const uint64_t bytes[2])
{
	a->phase_ms = a->ms;
	a->t0 = now;
	a->seconds = 0;
	for (int d = 0; d < 2; d++) {
		a->loaded[d] = loaded[d];
		a->b0[d] = bytes[d];
	}
}

int httpadapt_tick(struct http_adapt *a, int64_t now, const uint64_t bytes[2],
		   double ip_overhead, const double req_bytes[2], size_t nreq)
{
	double cap[2] = { 0, 0 }, ms, secs = (double)(now - a->t0) / NS_PER_SEC;
	int floor;

	if (!(a->loaded[0] || a->loaded[1]) || a->seconds >= HTTPADAPT_SECONDS ||
	    secs < a->seconds + 1 || nreq == 0)
		return 0;
	a->seconds = (int)secs < HTTPADAPT_SECONDS ? (int)secs : HTTPADAPT_SECONDS;
	for (int d = 0; d < 2; d++)
		if (a->loaded[d] && bytes[d] > a->b0[d])
			cap[d] = 8.0 * (double)(bytes[d] - a->b0[d]) / secs *
					 (ip_overhead > 0 ? ip_overhead : HTTPADAPT_IP_OVERHEAD) +
				 8.0 * req_bytes[d] * 1000.0 / a->ms;
	ms = httpbudget_interval_ms(req_bytes, cap, a->base_ms, &floor);
	if (ms < a->phase_ms)
		ms = a->phase_ms;
	a->floor = floor;
	if (ms == a->ms)
		return 0;
	a->ms = ms;
	return 1;
}

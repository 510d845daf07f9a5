/* httpbudget: the HTTP mode's latency-request interval within the probe budget. Each request
 * is a fresh connection (over HTTPS a TLS handshake, ~1.2 kB up and 1.3 kB down in the lab),
 * so at the base interval they took 3.8 % of a 5 Mbit/s uplink. The interval is the shortest
 * that keeps their measured traffic within BUDGET_SHARE of each loaded direction's capacity,
 * between the base and the floor: ten a second, since the buffer estimate takes each second's
 * highest handshake RTT (the UDP probes' floor, probebudget.h). Pure; caller:
 * client/run/httpmode.c. */
#ifndef BM_HTTPBUDGET_H
#define BM_HTTPBUDGET_H

#include "client/model/probebudget.h"

#define HTTPBUDGET_FLOOR_MS BUDGET_UDP_MAX_MS

/* req_bytes: one request's IP bytes each way ([0] down, [1] up); cap_bps: each direction's
 * IP-level capacity (≤ 0: not loaded or unknown, no constraint). *floor is set when the
 * floor bound (the budget would want a longer interval). */
double httpbudget_interval_ms(const double req_bytes[2], const double cap_bps[2],
			      double base_ms, int *floor);

#endif

/* rpm: the responsiveness score (TCP variant of draft-ietf-ippm-responsiveness, see
 * docs/methods.md) of one loaded phase from the new-connection and in-flow probe series. */
#ifndef BM_RPM_H
#define BM_RPM_H

#include "client/model/result.h"

#define RPM_TRIM_KEEP 0.95 /* the draft's trimmed mean drops the slowest 5 % */

/* Computes out for samples sent in [from, to): foreign = "tcp_connect" (aux = handshake µs,
 * rtt = handshake + request/response), self = the in-flow series of the loaded direction(s).
 * out->valid = 0 when either kind has no answered sample there. */
void rpm_compute(const struct test_result *r, enum phase_kind kind, int64_t from, int64_t to,
		 struct rpm_result *out);

/* poor < 300 ≤ fair < 1000 ≤ good < 6000 ≤ excellent; NULL for NAN. */
const char *rpm_class(double rpm);

#endif

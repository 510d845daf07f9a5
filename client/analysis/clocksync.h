/* clocksync: the offset between the server's and the client's monotonic clocks, from probe
 * exchanges before and after the load (crusader's method: keep the fastest third, assume
 * symmetric delay for those, fit a line through the two estimates to remove drift). Pure. */
#ifndef BM_CLOCKSYNC_H
#define BM_CLOCKSYNC_H

#include <stddef.h>
#include <stdint.h>

#include "client/model/result.h"

/* Minimum exchanges per window for an estimate. */
#define CLOCKSYNC_MIN_EXCHANGES 30

/* Fits the offset from replies to probes sent in [pre_from, pre_to) and, if given (post_to >
 * post_from), [post_from, post_to). Returns 0 with fit->valid, or -1 if the first window has
 * too few exchanges. */
int clocksync_fit(const struct probe_rec *p, size_t n, int64_t pre_from, int64_t pre_to,
		  int64_t post_from, int64_t post_to, struct clock_fit *fit);
/* offset(t) of a valid fit. */
double clocksync_offset(const struct clock_fit *fit, int64_t t_ns);
/* One-way delays of a received probe in ns (clock offset removed). */
double clocksync_owd_up(const struct clock_fit *fit, const struct probe_rec *p);
double clocksync_owd_down(const struct clock_fit *fit, const struct probe_rec *p);

#endif

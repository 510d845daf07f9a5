/* probestats: per-phase statistics of the auxiliary probe series (ICMP, DNS, new TCP
 * connections, in-flow, passive capture) and the jitter measure shared with UDP. Pure. */
#ifndef BM_PROBESTATS_H
#define BM_PROBESTATS_H

#include <stddef.h>
#include <stdint.h>

#include "client/model/result.h"
#include "probes/series.h"

/* Statistics of the samples sent in [from, to). */
void probestats_window(const struct probe_series *ps, int64_t from, int64_t to,
		       struct series_phase *out);

/* Mean absolute difference of consecutive values (RFC 3393 IPDV magnitude); NAN if n < 2. */
double probestats_jitter(const double *v, size_t n);

/* Mean of the smallest `keep` share (0 < keep <= 1) of the values; v is sorted in place.
 * NAN when n == 0. The responsiveness draft's trimmed mean uses keep = 0.95. */
double probestats_trimmed_mean(double *v, size_t n, double keep);

#endif

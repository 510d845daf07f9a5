/* bootstrap: moving-block bootstrap confidence intervals for a percentile of a time series
 * (blocks keep the autocorrelation of queueing delay, which a plain bootstrap would destroy).
 * Pure and deterministic: the same input and seed give the same interval. */
#ifndef BM_BOOTSTRAP_H
#define BM_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

/* Interval [*lo, *hi] at confidence `level` (e.g. 0.95) for percentile pct of v[0..n), from
 * `reps` resamples made of random contiguous blocks of `block` samples. Returns 0, or -1 when
 * n < 2 blocks' worth or memory is short. */
int bootstrap_percentile_ci(const double *v, size_t n, size_t block, double pct, int reps,
			    double level, uint64_t seed, double *lo, double *hi);

#endif

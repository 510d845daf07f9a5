/* bootstrap: resample blocks, take the percentile of each resample, report the spread. */
#include "client/analysis/bootstrap.h"

#include <stdlib.h>
#include <string.h>

#include "common/stats.h"

/* splitmix64: small, fast, good enough to pick block starts. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* One resample of n values built from random blocks; returns its percentile. */
static double resample_percentile(const double *v, size_t n, size_t block, double pct,
				  uint64_t *state, double *buf)
{
	size_t filled = 0, starts = n - block + 1;

	while (filled < n) {
		size_t s = (size_t)(next_random(state) % starts);
		size_t take = block < n - filled ? block : n - filled;

		memcpy(buf + filled, v + s, take * sizeof(*v));
		filled += take;
	}
	stats_sort(buf, n);
	return stats_percentile_sorted(buf, n, pct);
}

int bootstrap_percentile_ci(const double *v, size_t n, size_t block, double pct, int reps,
			    double level, uint64_t seed, double *lo, double *hi)
{
	double *buf, *stat;
	uint64_t state = seed;

	if (block == 0 || n < 2 * block || reps < 10)
		return -1;
	buf = malloc(n * sizeof(*buf));
	stat = malloc((size_t)reps * sizeof(*stat));
	if (buf == NULL || stat == NULL) {
		free(buf);
		free(stat);
		return -1;
	}
	for (int i = 0; i < reps; i++)
		stat[i] = resample_percentile(v, n, block, pct, &state, buf);
	stats_sort(stat, (size_t)reps);
	*lo = stats_percentile_sorted(stat, (size_t)reps, 50 * (1 - level));
	*hi = stats_percentile_sorted(stat, (size_t)reps, 100 - 50 * (1 - level));
	free(buf);
	free(stat);
	return 0;
}

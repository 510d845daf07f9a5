/* sojlog: per-packet sojourn records of the lab bottleneck (see sojlog.h). */
#include "client/lab/sojlog.h"

#include <math.h>
#include <stdlib.h>

#include "common/stats.h"

#define SOJLOG_US_MAX 0xffffffffull

void sojlog_init(struct sojlog *l, uint64_t base_ns)
{
	l->base_ns = base_ns;
	atomic_store_explicit(&l->next, 0, memory_order_relaxed);
}

void sojlog_add(struct sojlog *l, uint64_t t_ns, uint64_t sojourn_ns)
{
	uint64_t t_us, s_us, i;

	if (t_ns < l->base_ns)
		return;
	t_us = (t_ns - l->base_ns) / 1000;
	if (t_us > SOJLOG_US_MAX)
		return;
	s_us = sojourn_ns / 1000;
	if (s_us > SOJLOG_US_MAX)
		s_us = SOJLOG_US_MAX;
	i = atomic_load_explicit(&l->next, memory_order_relaxed);
	atomic_store_explicit(&l->rec[i % SOJLOG_CAP], t_us << 32 | s_us, memory_order_relaxed);
	/* Release: a reader that sees the new count sees the record. */
	atomic_store_explicit(&l->next, i + 1, memory_order_release);
}

/* The median of the per-block minima of v (m sojourns, ms) departing at t (µs, in the
 * order they left, so never decreasing); blk is scratch for one minimum per block. */
static double sojlog_floor(const double *v, const uint64_t *t, uint64_t m, uint64_t from_us,
			   uint64_t block_us, double *blk)
{
	uint64_t k = 0, cur = 0;

	for (uint64_t i = 0; i < m; i++) {
		uint64_t b = (t[i] - from_us) / block_us;

		if (k == 0 || b != cur) {
			cur = b;
			blk[k++] = v[i];
		} else if (v[i] < blk[k - 1]) {
			blk[k - 1] = v[i];
		}
	}
	if (k == 0)
		return NAN;
	stats_sort(blk, k);
	return stats_percentile_sorted(blk, k, 50);
}

int sojlog_summarize(const struct sojlog *l, uint64_t from_ns, uint64_t to_ns, uint64_t block_ns,
		     struct sojlog_summary *out)
{
	uint64_t n = atomic_load_explicit(&l->next, memory_order_acquire);
	uint64_t have = n < SOJLOG_CAP ? n : SOJLOG_CAP, m = 0;
	uint64_t from_us = from_ns > l->base_ns ? (from_ns - l->base_ns) / 1000 : 0;
	uint64_t to_us = to_ns > l->base_ns ? (to_ns - l->base_ns) / 1000 : 0;
	uint64_t block_us = block_ns / 1000 ? block_ns / 1000 : 1;
	double *v = malloc((have + 1) * sizeof(*v)), *blk = malloc((have + 1) * sizeof(*blk));
	uint64_t *t = malloc((have + 1) * sizeof(*t));
	int rc = 0;

	*out = (struct sojlog_summary){ 0, NAN, NAN, NAN, NAN, NAN };
	if (v == NULL || blk == NULL || t == NULL) {
		rc = -1;
		goto done;
	}
	for (uint64_t k = n - have; k < n; k++) {
		uint64_t r = atomic_load_explicit(&l->rec[k % SOJLOG_CAP], memory_order_relaxed);
		uint64_t t_us = r >> 32;

		if (t_us >= from_us && t_us < to_us) {
			t[m] = t_us;
			v[m++] = (double)(r & SOJLOG_US_MAX) / 1000.0;
		}
	}
	if (m > 0) {
		out->floor_ms = sojlog_floor(v, t, m, from_us, block_us, blk);
		stats_sort(v, m);
		out->samples = m;
		out->p50_ms = stats_percentile_sorted(v, m, 50);
		out->p95_ms = stats_percentile_sorted(v, m, 95);
		out->p99_ms = stats_percentile_sorted(v, m, 99);
		out->max_ms = v[m - 1];
	}
done:
	free(v);
	free(blk);
	free(t);
	return rc;
}

/* stats: sorting-based order statistics; sample counts here are thousands, so exact
 * percentiles from a sorted copy beat any streaming approximation. */
#include "common/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int stats_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void stats_sort(double *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof(*v), stats_cmp);
}

double stats_percentile_sorted(const double *sorted, size_t n, double p)
{
	double rank, frac;
	size_t lo;

	if (n == 0)
		return NAN;
	if (p <= 0)
		return sorted[0];
	if (p >= 100)
		return sorted[n - 1];
	rank = p / 100.0 * (double)(n - 1);
	lo = (size_t)rank;
	frac = rank - (double)lo;
	if (lo + 1 >= n)
		return sorted[n - 1];
	return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

int stats_summarize(double *v, size_t n, struct stats_summary *out)
{
	double sum = 0;

	memset(out, 0, sizeof(*out));
	if (n == 0)
		return -1;
	stats_sort(v, n);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	out->n = n;
	out->min = v[0];
	out->max = v[n - 1];
	out->mean = sum / (double)n;
	out->p50 = stats_percentile_sorted(v, n, 50);
	out->p90 = stats_percentile_sorted(v, n, 90);
	out->p95 = stats_percentile_sorted(v, n, 95);
	out->p99 = stats_percentile_sorted(v, n, 99);
	return 0;
}

double stats_percentile(const double *v, size_t n, double p)
{
	double *copy, r;

	if (n == 0)
		return NAN;
	copy = malloc(n * sizeof(*copy));
	if (copy == NULL)
		return NAN;
	memcpy(copy, v, n * sizeof(*copy));
	stats_sort(copy, n);
	r = stats_percentile_sorted(copy, n, p);
	free(copy);
	return r;
}

void stats_top2(const double *v, size_t n, double *hi, double *second)
{
	*hi = -INFINITY;
	*second = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		if (v[i] > *hi) {
			*second = *hi;
			*hi = v[i];
		} else if (v[i] > *second) {
			*second = v[i];
		}
	}
}

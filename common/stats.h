/* stats: order statistics and summaries of sample arrays (percentiles by linear
 * interpolation between closest ranks, the "type 7" definition used by numpy and R). */
#ifndef BM_STATS_H
#define BM_STATS_H

#include <stddef.h>

struct stats_summary {
	size_t n;
	double min, p50, p90, p95, p99, max, mean;
};

/* Percentile p in [0,100] of an ascending array of n > 0 values. */
double stats_percentile_sorted(const double *sorted, size_t n, double p);
/* Sorts v in place (ascending). */
void stats_sort(double *v, size_t n);
/* Summarises n values (v is sorted in place). Returns -1 and a zeroed *out when n == 0. */
int stats_summarize(double *v, size_t n, struct stats_summary *out);
/* Percentile of an unsorted array, without modifying it; NAN when n == 0. */
double stats_percentile(const double *v, size_t n, double p);
/* The highest and the second-highest of v[0..n) in one pass (a value that occurs twice is
 * both); -INFINITY for each that n cannot give. */
void stats_top2(const double *v, size_t n, double *hi, double *second);

#endif

/* stall: the probes a host stall held (see stall.h). */
#include "client/analysis/stall.h"

#include <stdlib.h>
#include <string.h>

#include "common/stats.h"

#define STALL_GAP 1.5 /* a gap of this many send intervals skipped at least one slot */

/* The median interval between consecutive sends, or 0 with fewer than two probes. */
static int64_t stall_median_interval(const struct probe_rec *p, size_t n)
{
	double *d, med;

	if (n < 2 || (d = malloc((n - 1) * sizeof(*d))) == NULL)
		return 0;
	for (size_t i = 0; i + 1 < n; i++)
		d[i] = (double)(p[i + 1].send_ns - p[i].send_ns);
	stats_sort(d, n - 1);
	med = stats_percentile_sorted(d, n - 1, 50);
	free(d);
	return (int64_t)med;
}

/* The longest answered probe's round trip: no flight lasts longer. */
static int64_t stall_longest_flight(const struct probe_rec *p, size_t n)
{
	int64_t longest = 0;

	for (size_t i = 0; i < n; i++)
		if (p[i].received && p[i].rtt_ns > longest)
			longest = p[i].rtt_ns;
	return longest;
}

size_t stall_held(const struct probe_rec *p, size_t n, uint8_t *held)
{
	int64_t iv = stall_median_interval(p, n), longest = stall_longest_flight(p, n);
	size_t marked = 0;

	memset(held, 0, n);
	if (iv <= 0)
		return 0;
	for (size_t g = 0; g + 1 < n; g++) {
		int64_t from = p[g].send_ns, to = p[g + 1].send_ns;

		if ((double)(to - from) <= STALL_GAP * (double)iv)
			continue;
		/* The probe that ended the gap, and every earlier one still in flight at its start
		 * (sent no more than the longest flight before it). */
		for (size_t j = g + 2; j-- > 0 && p[j].send_ns + longest >= from;) {
			if (!p[j].received || held[j] || p[j].send_ns + p[j].rtt_ns < from)
				continue;
			held[j] = 1;
			marked++;
		}
	}
	return marked;
}

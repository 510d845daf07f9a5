/* stall: the probes a host stall held (see stall.h). */
#include "client/analysis/stall.h"

#include <string.h>

#include "common/stats.h"

#define STALL_GAP 1.5 /* a gap of this many send intervals skipped at least one slot */
#define STALL_SPAN 8  /* the interval is the median of this many spacings each side */

/* The send interval around spacing g (between probes g and g + 1): the median of the spacings
 * within STALL_SPAN of it. Local, because the probe budget lengthens the interval mid-phase
 * (client/run/probeadapt.c), and every spacing after that would stand out from a median over
 * the phase (5 Mbit/s uplink: 90 of 571 probes marked held with no slot skipped). */
static int64_t stall_interval_at(const struct probe_rec *p, size_t n, size_t g)
{
	double d[2 * STALL_SPAN + 1];
	size_t a = g > STALL_SPAN ? g - STALL_SPAN : 0, k = 0;

	for (size_t i = a; i + 1 < n && i <= g + STALL_SPAN; i++)
		d[k++] = (double)(p[i + 1].send_ns - p[i].send_ns);
	stats_sort(d, k);
	return (int64_t)stats_percentile_sorted(d, k, 50);
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
	int64_t longest = stall_longest_flight(p, n);
	size_t marked = 0;

	memset(held, 0, n);
	for (size_t g = 0; g + 1 < n; g++) {
		int64_t from = p[g].send_ns, to = p[g + 1].send_ns;

		if ((double)(to - from) <= STALL_GAP * (double)stall_interval_at(p, n, g))
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

/* sawtooth: the top of a tail-drop queue read at its senders' back-offs (see sawtooth.h). */
#include "client/analysis/sawtooth.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/stats.h"

/* The queue stands at its top for about one round trip before the senders see the loss: the
 * window before a back-off holds that stretch. */
#define SAW_PRE_NS 300000000LL
#define SAW_AHEAD_NS 150000000LL     /* the top may last a little past the moment */
#define SAW_POST_FROM_NS 250000000LL /* after the back-off the queue drains for a while: */
#define SAW_POST_TO_NS 650000000LL   /* this is where it has fallen */
#define SAW_MERGE_NS 500000000LL     /* moments this close to the last one are one back-off */
#define SAW_NEAR 0.9                 /* the queue stood near P before the moment */
#define SAW_FALL 0.1                 /* and at least this much lower after it */
#define SAW_MIN_SAMPLES 5            /* fewer probes in a window say nothing */

struct saw_span {
	size_t a, b; /* [a, b) */
};

/* Indexes of the samples with from <= t < to, searched from the previous span (t is ordered,
 * and every window only moves forward). */
static void saw_span(const int64_t *t, size_t n, int64_t from, int64_t to, struct saw_span *s)
{
	while (s->a < n && t[s->a] < from)
		s->a++;
	if (s->b < s->a)
		s->b = s->a;
	while (s->b < n && t[s->b] < to)
		s->b++;
}

static double saw_median(const double *q, const struct saw_span *s, double *scratch)
{
	size_t m = s->b - s->a;

	memcpy(scratch, q + s->a, m * sizeof(*q));
	stats_sort(scratch, m);
	return stats_percentile_sorted(scratch, m, 50);
}

/* The second-highest sample of the span: one probe a host stall delayed is not a level. */
static double saw_second_highest(const double *q, const struct saw_span *s)
{
	double hi, second;

	stats_top2(q + s->a, s->b - s->a, &hi, &second);
	return second;
}

/* The level P the queue stood at just before t[i] if it fell from there, else NAN. */
static double saw_level(const int64_t *t, const double *q, size_t n, size_t i,
			struct saw_span w[3], double *scratch)
{
	double p, before;

	/* A window the series' start cuts off holds only its first samples: a stall there stood
	 * for the level (CI, IPv6 lab: four probes a 15 ms router stall delayed at the steady
	 * window's start read as a 93.4 ms back-off of an 80 ms buffer). */
	if (t[i] - t[0] < SAW_PRE_NS)
		return NAN;
	saw_span(t, n, t[i] - SAW_PRE_NS, t[i] + SAW_AHEAD_NS, &w[0]);
	saw_span(t, n, t[i] - SAW_PRE_NS, t[i] + 1, &w[1]);
	saw_span(t, n, t[i] + SAW_POST_FROM_NS, t[i] + SAW_POST_TO_NS, &w[2]);
	if (w[0].b - w[0].a < SAW_MIN_SAMPLES || w[1].b - w[1].a < SAW_MIN_SAMPLES ||
	    w[2].b - w[2].a < SAW_MIN_SAMPLES)
		return NAN;
	p = saw_second_highest(q, &w[0]);
	if (!(p > 0))
		return NAN;
	/* The fall is measured from where the queue stood, not from P: many flows keep a queue
	 * swinging a few percent around its level, and a stall's P above it made such a swing
	 * look like a back-off (lab: 52.0 ms read for a 50 ms buffer under 16 flows). */
	before = saw_median(q, &w[1], scratch);
	if (before < p * SAW_NEAR)
		return NAN;
	if (saw_median(q, &w[2], scratch) > before * (1 - SAW_FALL))
		return NAN;
	return p;
}

void sawtooth_peaks(const int64_t *t, const double *q, size_t n, struct sawtooth_peaks *out)
{
	struct saw_span w[3] = { { 0, 0 }, { 0, 0 }, { 0, 0 } };
	double *scratch, *peaks;
	int64_t last = 0;
	size_t np = 0;

	*out = (struct sawtooth_peaks){ 0, NAN, NAN, NAN };
	if (n == 0 || (scratch = malloc(2 * n * sizeof(*scratch))) == NULL)
		return;
	peaks = scratch + n;
	for (size_t i = 0; i < n; i++) {
		double p = saw_level(t, q, n, i, w, scratch);

		if (isnan(p))
			continue;
		if (np > 0 && t[i] - last < SAW_MERGE_NS) {
			peaks[np - 1] = fmax(peaks[np - 1], p);
		} else {
			peaks[np++] = p;
		}
		last = t[i];
	}
	if (np > 0) {
		stats_sort(peaks, np);
		*out = (struct sawtooth_peaks){ np, stats_percentile_sorted(peaks, np, 50), peaks[0],
						peaks[np - 1] };
	}
	free(scratch);
}

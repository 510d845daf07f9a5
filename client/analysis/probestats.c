/* probestats: window statistics over a probe series. */
#include "client/analysis/probestats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"

double probestats_jitter(const double *v, size_t n)
{
	double sum = 0;

	if (n < 2)
		return NAN;
	for (size_t i = 1; i < n; i++)
		sum += fabs(v[i] - v[i - 1]);
	return sum / (double)(n - 1);
}

double probestats_trimmed_mean(double *v, size_t n, double keep)
{
	size_t m;
	double sum = 0;

	if (n == 0 || !(keep > 0))
		return NAN;
	stats_sort(v, n);
	m = (size_t)ceil((double)n * (keep < 1 ? keep : 1));
	if (m == 0)
		m = 1;
	for (size_t i = 0; i < m; i++)
		sum += v[i];
	return sum / (double)m;
}

void probestats_window(const struct probe_series *ps, int64_t from, int64_t to,
		       struct series_phase *out)
{
	double *v = malloc((ps->n + 1) * sizeof(*v));
	size_t m = 0;

	memset(out, 0, sizeof(*out));
	out->loss_pct = out->jitter_ms = out->increase_ms = NAN;
	if (v == NULL)
		return;
	/* Samples are in send order for every kind, so consecutive answered samples give the
	 * jitter before the array is sorted by stats_summarize. */
	for (size_t i = 0; i < ps->n; i++) {
		const struct rtt_sample *s = &ps->s[i];

		if (s->send_ns < from || s->send_ns >= to)
			continue;
		out->sent++;
		if (s->status == SAMPLE_OK) {
			out->ok++;
			v[m++] = ns_to_ms(s->rtt_ns);
		} else if (s->status == SAMPLE_ERROR) {
			out->errors++;
		} else {
			out->lost++;
		}
	}
	out->jitter_ms = probestats_jitter(v, m);
	if (out->sent > out->errors)
		out->loss_pct = 100.0 * (double)out->lost / (double)(out->sent - out->errors);
	(void)stats_summarize(v, m, &out->rtt_ms);
	free(v);
}

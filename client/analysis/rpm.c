/* rpm: RPM = (60000 / ((TM(handshake) + TM(request on new)) / 2) + 60000 / TM(in-flow)) / 2,
 * TM = mean of the fastest 95 %. The window is the phase's steady window rather than the
 * draft's last four intervals: at a few foreign probes per second four intervals would hold
 * too few samples for a trimmed mean. */
#include "client/analysis/rpm.h"

#include <math.h>
#include <stdlib.h>

#include "client/analysis/probestats.h"
#include "common/clock.h"

const char *rpm_class(double rpm)
{
	if (isnan(rpm))
		return NULL;
	if (rpm < 300)
		return "poor";
	if (rpm < 1000)
		return "fair";
	if (rpm < 6000)
		return "good";
	return "excellent";
}

/* Appends answered samples of ps sent in [from, to): the rtt, or with split the handshake
 * (aux, µs) to a and the rest of the exchange to b. */
static size_t collect(const struct probe_series *ps, int64_t from, int64_t to, double *a,
		      double *b)
{
	size_t m = 0;

	for (size_t i = 0; ps && i < ps->n; i++) {
		const struct rtt_sample *s = &ps->s[i];
		double rtt_ms;

		if (s->status != SAMPLE_OK || s->send_ns < from || s->send_ns >= to)
			continue;
		rtt_ms = ns_to_ms(s->rtt_ns);
		if (b) {
			double hs = s->aux / 1000.0;

			a[m] = hs;
			b[m] = rtt_ms > hs ? rtt_ms - hs : 0;
		} else {
			a[m] = rtt_ms;
		}
		m++;
	}
	return m;
}

static size_t series_len(const struct probe_series *ps)
{
	return ps ? ps->n : 0;
}

void rpm_compute(const struct test_result *r, enum phase_kind kind, int64_t from, int64_t to,
		 struct rpm_result *out)
{
	const struct probe_series *f = result_find_series(r, "tcp_connect", NULL);
	const struct probe_series *sd = NULL, *su = NULL;
	size_t cap, nf, ns = 0;
	double *hs, *req, *self, foreign_ms;

	*out = (struct rpm_result){ .rpm = NAN, .tm_connect_ms = NAN, .tm_request_ms = NAN,
				    .tm_inflow_ms = NAN };
	if (kind == PHASE_DOWNLOAD || kind == PHASE_BIDIR)
		sd = result_find_series(r, "inflow_down", NULL);
	if (kind == PHASE_UPLOAD || kind == PHASE_BIDIR)
		su = result_find_series(r, "inflow_up", NULL);
	cap = series_len(f) + series_len(sd) + series_len(su) + 1;
	hs = malloc(cap * sizeof(*hs));
	req = malloc(cap * sizeof(*req));
	self = malloc(cap * sizeof(*self));
	if (hs == NULL || req == NULL || self == NULL)
		goto out;
	nf = collect(f, from, to, hs, req);
	ns = collect(sd, from, to, self, NULL);
	ns += collect(su, from, to, self + ns, NULL);
	out->n_foreign = nf;
	out->n_self = ns;
	if (nf == 0 || ns == 0)
		goto out;
	out->tm_connect_ms = probestats_trimmed_mean(hs, nf, RPM_TRIM_KEEP);
	out->tm_request_ms = probestats_trimmed_mean(req, nf, RPM_TRIM_KEEP);
	out->tm_inflow_ms = probestats_trimmed_mean(self, ns, RPM_TRIM_KEEP);
	foreign_ms = (out->tm_connect_ms + out->tm_request_ms) / 2;
	/* A zero mean (sub-microsecond loopback) would divide by zero: floor at 1 µs. */
	out->rpm = (60000.0 / fmax(foreign_ms, 1e-3) + 60000.0 / fmax(out->tm_inflow_ms, 1e-3)) / 2;
	out->cls = rpm_class(out->rpm);
	out->valid = 1;
out:
	free(hs);
	free(req);
	free(self);
}

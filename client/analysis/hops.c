/* hops: per-hop latency under load and where the queue builds (see hops.h). */
#include "client/analysis/hops.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define HOPS_LIMITED_LOSS_PTS 20.0 /* own loss this far above a later hop's: rate-limited */

static double hops_loss(const struct hop_sample *s)
{
	if (s->sent == 0)
		return NAN;
	if (s->replies >= s->sent)
		return 0.0;
	return 100.0 * (double)(s->sent - s->replies) / (double)s->sent;
}

static double hops_increase(const struct hop_in *h, size_t p)
{
	const struct hop_sample *l = &h->loaded[p];

	if (h->idle.replies == 0 || l->replies == 0 || isnan(h->idle.rtt_ms) || isnan(l->rtt_ms))
		return NAN;
	return l->rtt_ms - h->idle.rtt_ms;
}

static void hops_fill(const struct hop_in *in, size_t n, size_t nphases, struct hop_out *out)
{
	for (size_t h = 0; h < n; h++) {
		memset(&out[h], 0, sizeof(out[h]));
		out[h].idle_loss_pct = hops_loss(&in[h].idle);
		for (size_t p = 0; p < HOPS_PHASES_MAX; p++) {
			out[h].increase_ms[p] = p < nphases ? hops_increase(&in[h], p) : NAN;
			out[h].loss_pct[p] = p < nphases ? hops_loss(&in[h].loaded[p]) : NAN;
		}
	}
}

/* The last hop with an increase in phase p (the server, or the furthest that answers). */
static int hops_last(const struct hop_out *out, size_t n, size_t p)
{
	for (size_t h = n; h-- > 0;)
		if (!isnan(out[h].increase_ms[p]))
			return (int)h;
	return -1;
}

/* The phase whose furthest answering hop rose the most; -1 if none has data. */
static int hops_phase(const struct hop_out *out, size_t n, size_t nphases)
{
	int best = -1;
	double top = -INFINITY;

	for (size_t p = 0; p < nphases; p++) {
		int last = hops_last(out, n, p);

		if (last >= 0 && out[last].increase_ms[p] > top) {
			top = out[last].increase_ms[p];
			best = (int)p;
		}
	}
	return best;
}

/* Whether some hop after h answered with a rise below bar (its later hops are "fine"). */
static int hops_later_fine(const struct hop_out *out, size_t n, size_t h, size_t p, double bar)
{
	for (size_t k = h + 1; k < n; k++)
		if (!isnan(out[k].increase_ms[p]) && out[k].increase_ms[p] < bar)
			return 1;
	return 0;
}

/* The lowest reply loss among the hops after h that answered at all; NAN if none. */
static double hops_later_loss(const struct hop_in *in, const struct hop_out *out, size_t n,
			      size_t h, size_t p)
{
	double low = NAN;

	for (size_t k = h + 1; k < n; k++) {
		double l = out[k].loss_pct[p];

		if (in[k].loaded[p].replies > 0 && !isnan(l) && (isnan(low) || l < low))
			low = l;
	}
	return low;
}

static const char *hops_addr(const struct hop_in *in, int h)
{
	return in[h].addr[0] ? in[h].addr : "*";
}

/* Marks hops whose own replies are slow or lost while later hops are fine, and says why. */
static void hops_limited(const struct hop_in *in, size_t n, size_t p, double bar,
			 struct hop_out *out, char *ev, size_t evlen)
{
	for (size_t h = 0; h + 1 < n; h++) {
		double later = hops_later_loss(in, out, n, h, p);
		double own = out[h].loss_pct[p];
		size_t len = strlen(ev);
		int lossy = !isnan(own) && !isnan(later) && own - later >= HOPS_LIMITED_LOSS_PTS;
		int slow = !isnan(out[h].increase_ms[p]) && out[h].increase_ms[p] >= bar &&
			   hops_later_fine(out, n, h, p, bar);

		if (!lossy && !slow)
			continue;
		out[h].icmp_limited = 1;
		if (lossy)
			snprintf(ev + len, evlen - len, "; hop %zu (%s) rate-limits or deprioritises "
				 "its ICMP replies: %.0f%% of them lost while a later hop lost %.0f%%",
				 h + 1, hops_addr(in, (int)h), own, later);
		else
			snprintf(ev + len, evlen - len, "; hop %zu (%s) deprioritises its ICMP replies: "
				 "+%.1f ms while a later hop rose less", h + 1, hops_addr(in, (int)h),
				 out[h].increase_ms[p]);
	}
}

/* The first hop that rises by at least bar and whose every later answering hop does too. */
static int hops_first(const struct hop_out *out, size_t n, size_t p, double bar)
{
	for (size_t h = 0; h < n; h++)
		if (!isnan(out[h].increase_ms[p]) && out[h].increase_ms[p] >= bar &&
		    !hops_later_fine(out, n, h, p, bar))
			return (int)h;
	return -1;
}

static void hops_say(const struct hop_in *in, const struct hop_out *out, int first, size_t p,
		     const char *name, int last, struct hops_verdict *v)
{
	size_t len;

	if (first == 0)
		snprintf(v->text, sizeof(v->text), "the queue builds between this host and hop 1 (%s)",
			 hops_addr(in, 0));
	else
		snprintf(v->text, sizeof(v->text), "the queue builds between hop %d (%s) and hop %d (%s)",
			 first, hops_addr(in, first - 1), first + 1, hops_addr(in, first));
	len = strlen(v->evidence);
	if (name != NULL)
		snprintf(v->evidence + len, sizeof(v->evidence) - len, "%s: ", name);
	else
		snprintf(v->evidence + len, sizeof(v->evidence) - len, "phase %zu: ", p + 1);
	len = strlen(v->evidence);
	snprintf(v->evidence + len, sizeof(v->evidence) - len, "hop %d %+.1f ms", first + 1,
		 out[first].increase_ms[p]);
	if (first > 0 && !isnan(out[first - 1].increase_ms[p])) {
		len = strlen(v->evidence);
		snprintf(v->evidence + len, sizeof(v->evidence) - len, ", hop %d before it %+.1f ms",
			 first, out[first - 1].increase_ms[p]);
	}
	if (last > first) {
		len = strlen(v->evidence);
		snprintf(v->evidence + len, sizeof(v->evidence) - len,
			 ", and every later hop too (hop %d %+.1f ms)", last + 1, out[last].increase_ms[p]);
	}
}

void hops_analyse(const struct hop_in *in, size_t n, size_t nphases, const char *const *names,
		  struct hop_out *out, struct hops_verdict *v)
{
	int p, last, first;
	double bar;

	memset(v, 0, sizeof(*v));
	v->phase = -1;
	v->increase_ms = NAN;
	n = n > HOPS_MAX ? HOPS_MAX : n;
	nphases = nphases > HOPS_PHASES_MAX ? HOPS_PHASES_MAX : nphases;
	hops_fill(in, n, nphases, out);
	p = hops_phase(out, n, nphases);
	if (p < 0) {
		snprintf(v->text, sizeof(v->text), "no hop answered both idle and under load");
		return;
	}
	v->phase = p;
	last = hops_last(out, n, (size_t)p);
	/* half the end-to-end rise: a hop that shows much less is not behind the queue */
	bar = fmax(HOPS_MIN_INCREASE_MS, 0.5 * out[last].increase_ms[p]);
	if (out[last].increase_ms[p] < HOPS_MIN_INCREASE_MS) {
		snprintf(v->text, sizeof(v->text), "no hop's round trip rose by %.0f ms or more under "
			 "load (hop %d: %+.1f ms)", HOPS_MIN_INCREASE_MS, last + 1,
			 out[last].increase_ms[p]);
		hops_limited(in, n, (size_t)p, bar, out, v->evidence, sizeof(v->evidence));
		return;
	}
	first = hops_first(out, n, (size_t)p, bar);
	v->first_hop = first + 1;
	v->increase_ms = out[first].increase_ms[p];
	hops_say(in, out, first, (size_t)p, names ? names[p] : NULL, last, v);
	hops_limited(in, n, (size_t)p, bar, out, v->evidence, sizeof(v->evidence));
}

/* clocksync: offset estimation per window and the linear drift fit between two windows. */
#include "client/analysis/clocksync.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/stats.h"

/* One exchange as the offset estimator sees it. */
struct exchange {
	double net_rtt;   /* RTT minus the server's hold time */
	double offset;    /* NTP-style: ((s_rx − c_tx) + (s_tx − c_rx)) / 2 */
	double t;         /* client send time */
};

static int exchange_cmp(const void *a, const void *b)
{
	double x = ((const struct exchange *)a)->net_rtt, y = ((const struct exchange *)b)->net_rtt;

	return (x > y) - (x < y);
}

/* Median offset, median send time and median half-RTT of the fastest third of the exchanges
 * in [from, to). Returns the number used (0 if fewer than the minimum). */
static size_t window_estimate(const struct probe_rec *p, size_t n, int64_t from, int64_t to,
			      double *offset, double *t, double *half_rtt)
{
	struct exchange *ex = malloc((n + 1) * sizeof(*ex));
	double *v;
	size_t m = 0, k;

	if (ex == NULL)
		return 0;
	for (size_t i = 0; i < n; i++) {
		const struct probe_rec *r = &p[i];
		double c_rx;

		if (!r->received || r->send_ns < from || r->send_ns >= to)
			continue;
		c_rx = (double)(r->send_ns + r->rtt_ns);
		ex[m].net_rtt = (double)r->rtt_ns - (double)(r->srv_tx_ns - r->srv_rx_ns);
		ex[m].offset = (((double)r->srv_rx_ns - (double)r->send_ns) +
				((double)r->srv_tx_ns - c_rx)) / 2.0;
		ex[m].t = (double)r->send_ns;
		m++;
	}
	k = m / 3;
	if (m < CLOCKSYNC_MIN_EXCHANGES || (v = malloc(k * sizeof(*v))) == NULL) {
		free(ex);
		return 0;
	}
	qsort(ex, m, sizeof(*ex), exchange_cmp);
	for (size_t i = 0; i < k; i++)
		v[i] = ex[i].offset;
	*offset = stats_percentile(v, k, 50);
	for (size_t i = 0; i < k; i++)
		v[i] = ex[i].t;
	*t = stats_percentile(v, k, 50);
	for (size_t i = 0; i < k; i++)
		v[i] = ex[i].net_rtt / 2.0;
	*half_rtt = stats_percentile(v, k, 50);
	free(v);
	free(ex);
	return k;
}

int clocksync_fit(const struct probe_rec *p, size_t n, int64_t pre_from, int64_t pre_to,
		  int64_t post_from, int64_t post_to, struct clock_fit *fit)
{
	double o1, t1, h1, o2 = 0, t2 = 0, h2 = 0;

	memset(fit, 0, sizeof(*fit));
	fit->n_pre = window_estimate(p, n, pre_from, pre_to, &o1, &t1, &h1);
	if (fit->n_pre == 0)
		return -1;
	if (post_to > post_from)
		fit->n_post = window_estimate(p, n, post_from, post_to, &o2, &t2, &h2);
	fit->valid = 1;
	fit->t_ref_ns = (int64_t)t1;
	fit->offset_ns = o1;
	fit->error_ns = h1;
	if (fit->n_post > 0 && t2 > t1) {
		fit->drift_fitted = 1;
		fit->drift = (o2 - o1) / (t2 - t1);
		fit->error_ns = fmax(h1, h2);
	}
	return 0;
}

double clocksync_offset(const struct clock_fit *fit, int64_t t_ns)
{
	return fit->offset_ns + fit->drift * (double)(t_ns - fit->t_ref_ns);
}

double clocksync_owd_up(const struct clock_fit *fit, const struct probe_rec *p)
{
	/* The server's receive time on the client clock, minus the send time. */
	return (double)p->srv_rx_ns - clocksync_offset(fit, p->send_ns) - (double)p->send_ns;
}

double clocksync_owd_down(const struct clock_fit *fit, const struct probe_rec *p)
{
	int64_t c_rx = p->send_ns + p->rtt_ns;

	return (double)c_rx - ((double)p->srv_tx_ns - clocksync_offset(fit, c_rx));
}

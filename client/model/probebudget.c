/* probebudget: wire cost of the probes and the intervals that fit a share of the link. */
#include "client/model/probebudget.h"

#include <math.h>

/* Transport bytes (no IP header) and packets of one probe each way ([0] down, [1] up). */
#define UDP_HDR 8
#define ICMP_ECHO 64        /* 8-byte header + ping's 56 */
#define DNS_QUERY 58        /* UDP header, DNS header, a unique name under the zone, A/IN */
#define DNS_ANSWER 74       /* the query plus one A record */
#define TCP_HDR 32          /* with the timestamp option */
#define RECORD 16           /* an in-flow request or its answer (common/record.h) */
#define HOP_REQ 20          /* ICMP/UDP header + 12 bytes of cookie */

static void add(double out[2], int down_bytes, int down_pkts, int up_bytes, int up_pkts, int ip)
{
	out[0] += down_bytes + down_pkts * ip;
	out[1] += up_bytes + up_pkts * ip;
}

void budget_inflow_bytes(int ip_hdr, int up_flow, double out[2])
{
	out[0] = out[1] = 0;
	/* Download flow: the request is a segment of its own up; the echo rides in the data.
	 * Upload flow: the tag rides in the data; the answer is a segment of its own down. */
	if (up_flow)
		add(out, TCP_HDR + RECORD, 1, RECORD, 0, ip_hdr);
	else
		add(out, RECORD, 0, TCP_HDR + RECORD, 1, ip_hdr);
}

void budget_probe_bytes(const struct budget_mix *m, enum budget_kind k, double out[2])
{
	int ip = m->ip_hdr, udp = UDP_HDR + (int)m->udp_size;
	double f[2];

	out[0] = out[1] = 0;
	switch (k) {
	case BUDGET_UDP: /* the reflector answers with as many bytes */
		add(out, udp, 1, udp, 1, ip);
		break;
	case BUDGET_ICMP:
		add(out, ICMP_ECHO, 1, ICMP_ECHO, 1, ip);
		break;
	case BUDGET_DNS:
		add(out, DNS_ANSWER, 1, DNS_QUERY, 1, ip);
		break;
	case BUDGET_TCP: /* SYN, ACK, 32-byte request, RST up; SYN-ACK, 8-byte answer down */
		add(out, (TCP_HDR + 8) + (TCP_HDR + 8), 2,
		    (TCP_HDR + 8) + TCP_HDR + (TCP_HDR + 32) + 20, 4, ip);
		break;
	case BUDGET_INFLOW:
		for (int up = 0; up < 2; up++) {
			if (!m->inflow_dir[up])
				continue;
			budget_inflow_bytes(ip, up, f);
			out[0] += f[0];
			out[1] += f[1];
		}
		break;
	case BUDGET_HOP: /* the router's time-exceeded quotes our IP header and 8+ bytes */
		add(out, 8 + ip + HOP_REQ, 1, HOP_REQ, 1, ip);
		break;
	default:
		break;
	}
}

void budget_bps(const struct budget_mix *m, const double ms[BUDGET_KINDS], double bps[2])
{
	bps[0] = bps[1] = 0;
	for (int k = 0; k < BUDGET_KINDS; k++) {
		double b[2];

		if (m->streams[k] <= 0 || !(ms[k] > 0))
			continue;
		budget_probe_bytes(m, (enum budget_kind)k, b);
		for (int d = 0; d < 2; d++)
			bps[d] += m->streams[k] * 8.0 * b[d] * 1000.0 / ms[k];
	}
}

double budget_ceiling_ms(const struct budget_mix *m, enum budget_kind k, double phase_s)
{
	double c = k == BUDGET_UDP ? fmin(BUDGET_UDP_MAX_MS, 1000.0 * phase_s / BUDGET_UDP_PHASE_SAMPLES)
				   : fmin(BUDGET_AUX_MAX_MS, 1000.0 * phase_s / BUDGET_AUX_PHASE_SAMPLES);

	return fmax(c, m->base_ms[k]);
}

/* The intervals at common scale s, each at most its floor. */
static void at_scale(const struct budget_mix *m, double s, double phase_s, double ms[BUDGET_KINDS])
{
	for (int k = 0; k < BUDGET_KINDS; k++)
		ms[k] = fmin(m->base_ms[k] * s, budget_ceiling_ms(m, (enum budget_kind)k, phase_s));
}

/* Whether the intervals ms keep the probes within share of every known capacity. */
static int fits(const struct budget_mix *m, const double cap_bps[2], double share,
		const double ms[BUDGET_KINDS])
{
	double bps[2];

	budget_bps(m, ms, bps);
	for (int d = 0; d < 2; d++)
		if (cap_bps[d] > 0 && bps[d] > share * cap_bps[d])
			return 0;
	return 1;
}

int budget_fit(const struct budget_mix *m, const double cap_bps[2], double share, double phase_s,
	       double ms[BUDGET_KINDS], double *scale)
{
	double lo = 1, hi = 1;

	for (int k = 0; k < BUDGET_KINDS; k++)
		if (m->base_ms[k] > 0)
			hi = fmax(hi, budget_ceiling_ms(m, (enum budget_kind)k, phase_s) / m->base_ms[k]);
	at_scale(m, lo, phase_s, ms);
	*scale = 1;
	if (fits(m, cap_bps, share, ms))
		return 0;
	at_scale(m, hi, phase_s, ms);
	*scale = hi;
	if (!fits(m, cap_bps, share, ms))
		return 1;
	/* The cost falls as the scale grows: bisect on its logarithm to 0.1 %. */
	while (hi / lo > 1.001) {
		double mid = sqrt(lo * hi);

		at_scale(m, mid, phase_s, ms);
		if (fits(m, cap_bps, share, ms))
			hi = mid;
		else
			lo = mid;
	}
	at_scale(m, hi, phase_s, ms);
	*scale = hi;
	return 0;
}

/* probeset: starts the selected auxiliary probe kinds on one runner thread and turns every
 * reason a kind cannot run into a note in the report instead of an error. */
#include "client/run/probeset.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/dns.h"
#include "common/log.h"
#include "common/route.h"
#include "common/sock.h"
#include "probes/dns.h"
#include "probes/hopprobe.h"
#include "probes/icmp.h"
#include "probes/pcap.h"
#include "probes/runner.h"
#include "probes/tcpconn.h"


/* Answers slower than this count as lost. Generous: a bloated buffer can hold seconds. */
#define PROBESET_TIMEOUT_NS (4 * NS_PER_SEC)
#define ICMP_PAYLOAD 56 /* ping's default */

/* A probe on the runner and the budget kind whose interval it follows. */
struct probeset_member {
	void *probe;
	const struct probe_ops *ops;
	enum budget_kind kind;
};

struct probeset {
	struct probe_runner *runner;
	struct pcap_capture *cap;
	struct probeset_member member[RUNNER_MAX];
	int nmember;
	int started, stopped;
};

static void set_port(struct sockaddr_storage *sa, uint16_t port)
{
	if (sa->ss_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)sa)->sin_port = htons(port);
}

static int64_t interval_ns(const struct client_config *cfg, enum probe_kind k)
{
	return (int64_t)(cfg->probe_interval_ms[k] * NS_PER_MS);
}

/* Marks ps unavailable with the reason as its note. */
static void unavailable(struct probe_series *ps, const char *why)
{
	ps->available = 0;
	series_note(ps, "%s", why);
}

/* Adds a started probe to the runner and to the members the budget reaches; -1 when full. */
static int member_add(struct probeset *p, void *probe, const struct probe_ops *ops,
		      enum budget_kind kind)
{
	if (p->nmember >= RUNNER_MAX || runner_add(p->runner, probe, ops) < 0)
		return -1;
	p->member[p->nmember++] = (struct probeset_member){ probe, ops, kind };
	return 0;
}

static void enlist(struct probeset *p, struct probe_series *ps, void *probe,
		   const struct probe_ops *ops, enum budget_kind kind)
{
	if (member_add(p, probe, ops, kind) < 0) {
		ops->destroy(probe);
		unavailable(ps, "too many probes for one runner");
		return;
	}
	ps->available = 1;
}

static void start_icmp_to(struct probeset *p, const struct client_config *cfg,
			  const struct sockaddr_storage *to, socklen_t len, struct probe_series *ps)
{
	struct icmp_probe_config ic = { 0 };
	struct icmp_probe *probe;
	char err[SERIES_NOTE_LEN];

	ic.target = *to;
	ic.target_len = len;
	ic.interval_ns = interval_ns(cfg, PROBE_ICMP);
	ic.timeout_ns = PROBESET_TIMEOUT_NS;
	ic.size = ICMP_PAYLOAD;
	ic.dscp = cfg->dscp;
	ic.local = cfg->local;
	probe = icmp_probe_start(runner_base(p->runner), &ic, ps, err, sizeof(err));
	if (probe == NULL)
		unavailable(ps, err);
	else
		enlist(p, ps, probe, &icmp_probe_ops, BUDGET_ICMP);
}

static void start_icmp(struct probeset *p, const struct client_config *cfg,
		       const struct sockaddr_storage *sa, socklen_t salen, struct test_result *r)
{
	struct sockaddr_storage to = *sa;
	struct route_info ri;
	struct probe_series *ps, *hop;
	char addr[64], err[SERIES_NOTE_LEN];

	set_port(&to, 0);
	sock_ip_str((struct sockaddr *)&to, addr, sizeof(addr));
	ps = result_add_series(r, "icmp", addr);
	if (ps == NULL)
		return;
	start_icmp_to(p, cfg, &to, salen, ps);
	if (route_lookup(&to, &ri, err, sizeof(err)) < 0) {
		log_info("no first hop to probe: %s", err);
		return;
	}
	if (!ri.has_gateway || sock_same_ip((struct sockaddr *)&ri.gateway, (struct sockaddr *)&to))
		return; /* the server is on-link: the path has no separate first hop */
	sock_ip_str((struct sockaddr *)&ri.gateway, addr, sizeof(addr));
	hop = result_add_series(r, "icmp_hop", addr);
	if (hop == NULL)
		return;
	if (!ps->available)
		unavailable(hop, ps->note);
	else
		start_icmp_to(p, cfg, &ri.gateway, ri.gateway_len, hop);
}

static void start_dns_to(struct probeset *p, const struct client_config *cfg,
			 const struct sockaddr_storage *to, socklen_t len, const char *zone, int rd,
			 struct probe_series *ps)
{
	struct dns_probe_config dc;
	struct dns_probe *probe;
	char err[SERIES_NOTE_LEN];

	memset(&dc, 0, sizeof(dc));
	dc.server = *to;
	dc.server_len = len;
	snprintf(dc.zone, sizeof(dc.zone), "%s", zone);
	dc.recursion_desired = rd;
	dc.qtype = 1; /* A */
	dc.interval_ns = interval_ns(cfg, PROBE_DNS);
	dc.timeout_ns = PROBESET_TIMEOUT_NS;
	dc.dscp = cfg->dscp;
	dc.local = cfg->local;
	probe = dns_probe_start(runner_base(p->runner), &dc, ps, err, sizeof(err));
	if (probe == NULL)
		unavailable(ps, err);
	else
		enlist(p, ps, probe, &dns_probe_ops, BUDGET_DNS);
}

/* The resolver named by --dns-resolver: an address, or "system" (resolv.conf). */
static int resolver_addr(const char *spec, struct sockaddr_storage *sa, socklen_t *len, char *err,
			 size_t errlen)
{
	char host[128], text[4096];
	FILE *f;
	size_t n;

	snprintf(host, sizeof(host), "%s", spec);
	if (strcmp(spec, "system") == 0) {
		f = fopen("/etc/resolv.conf", "r");
		if (f == NULL) {
			snprintf(err, errlen, "cannot read /etc/resolv.conf: %s", strerror(errno));
			return -1;
		}
		n = fread(text, 1, sizeof(text), f);
		fclose(f);
		if (dns_system_resolver(text, n, host, sizeof(host)) < 0) {
			snprintf(err, errlen, "/etc/resolv.conf names no nameserver");
			return -1;
		}
	}
	return sock_resolve(host, 53, SOCK_DGRAM, sa, len, err, errlen);
}

static void start_dns(struct probeset *p, const struct client_config *cfg,
		      const struct sockaddr_storage *sa, socklen_t salen,
		      const struct ctrl_welcome *w, struct test_result *r)
{
	struct sockaddr_storage to = *sa, res;
	struct probe_series *ps;
	socklen_t reslen;
	char addr[64], err[SERIES_NOTE_LEN];

	set_port(&to, w->dns_port);
	sock_addr_str((struct sockaddr *)&to, addr, sizeof(addr));
	ps = result_add_series(r, "dns", addr);
	if (ps && w->dns_port == 0)
		unavailable(ps, "the server runs no DNS responder");
	else if (ps)
		start_dns_to(p, cfg, &to, salen, w->dns_zone, 0, ps);
	if (cfg->dns_resolver == NULL)
		return;
	ps = result_add_series(r, "dns_resolver", cfg->dns_resolver);
	if (ps == NULL)
		return;
	if (resolver_addr(cfg->dns_resolver, &res, &reslen, err, sizeof(err)) < 0) {
		unavailable(ps, err);
		return;
	}
	sock_addr_str((struct sockaddr *)&res, ps->target, sizeof(ps->target));
	/* Unique names under the server's zone: a resolver cannot answer them from its cache. */
	start_dns_to(p, cfg, &res, reslen, w->dns_zone[0] ? w->dns_zone : "bloatmeter.test", 1, ps);
}

static void start_tcp(struct probeset *p, const struct client_config *cfg,
		      const struct sockaddr_storage *sa, socklen_t salen,
		      const struct ctrl_welcome *w, struct test_result *r)
{
	struct tcpconn_probe_config tc;
	struct tcpconn_probe *probe;
	struct probe_series *ps;
	char addr[64], err[SERIES_NOTE_LEN];

	sock_addr_str((struct sockaddr *)sa, addr, sizeof(addr));
	ps = result_add_series(r, "tcp_connect", addr);
	if (ps == NULL)
		return;
	memset(&tc, 0, sizeof(tc));
	tc.server = *sa;
	tc.server_len = salen;
	memcpy(tc.token, w->token, WIRE_TOKEN_LEN);
	tc.interval_ns = interval_ns(cfg, PROBE_TCP);
	tc.timeout_ns = PROBESET_TIMEOUT_NS;
	tc.dscp = cfg->dscp;
	tc.local = cfg->local;
	probe = tcpconn_probe_start(runner_base(p->runner), &tc, ps, err, sizeof(err));
	if (probe == NULL)
		unavailable(ps, err);
	else
		enlist(p, ps, probe, &tcpconn_probe_ops, BUDGET_TCP);
}

/* Capture of the test's own packets on the interface of the route to the server. */
static void start_pcap(struct probeset *p, const struct client_config *cfg,
		       const struct sockaddr_storage *sa, const struct ctrl_welcome *w,
		       struct test_result *r)
{
	struct pcap_capture_config pc;
	char err[SERIES_NOTE_LEN];

	memset(&pc, 0, sizeof(pc));
	pc.server = *sa;
	pc.client.ss_family = AF_UNSPEC;
	pc.tcp_port = cfg->port;
	pc.udp_port = w->udp_port;
	pc.dns_port = w->dns_port;
	pc.save_file = cfg->pcap_file;
	p->cap = pcap_capture_start(&pc, err, sizeof(err));
	if (p->cap == NULL) {
		snprintf(r->capture.note, sizeof(r->capture.note), "%s", err);
		return;
	}
	r->capture.ran = 1;
	snprintf(r->capture.ifname, sizeof(r->capture.ifname), "%s", pcap_capture_ifname(p->cap));
}

/* After the capture stopped: its summary, the passive RTT series and the probes' wire times. */
static void finish_pcap(struct probeset *p, struct test_result *r)
{
	static const enum pa_class cls[2] = { PA_CLASS_DOWN, PA_CLASS_UP };
	const struct pa *pa = pcap_capture_analyzer(p->cap);
	const char *why = pcap_capture_error(p->cap);

	r->capture.nano = pcap_capture_nano(p->cap);
	r->capture.packets = pcap_capture_packets(p->cap);
	r->capture.drops = pcap_capture_drops(p->cap);
	if (why)
		snprintf(r->capture.note, sizeof(r->capture.note), "%s", why);
	if (pa == NULL)
		return;
	pa_summary(pa, &r->capture.sum);
	r->capture.has_wire = pa_probe_wire(pa, r->probes, r->nprobes, &r->capture.wire) == 0;
	for (int i = 0; i < 2; i++) {
		struct probe_series *ps = result_add_series(r, "", "");

		if (ps == NULL)
			return;
		if (pa_rtt_series(pa, cls[i], ps) < 0) {
			unavailable(ps, "out of memory");
			continue;
		}
		snprintf(ps->target, sizeof(ps->target), "%s", r->capture.ifname);
	}
	if (r->capture.drops > 0)
		result_warn(r, "the capture dropped %llu packets; its counts are incomplete",
			    (unsigned long long)r->capture.drops);
}

/* TTL-limited probes to the server (--per-hop); a reason they cannot run becomes a note. */
static void start_hops(struct probeset *p, const struct client_config *cfg,
		       const struct sockaddr_storage *sa, socklen_t salen, struct test_result *r)
{
	struct hop_probe_config hc = { .target = *sa, .target_len = salen,
				       .mode = (enum hop_mode)cfg->per_hop,
				       .interval_ns = (int64_t)(BUDGET_HOP_BASE_MS * NS_PER_MS),
				       .timeout_ns = PROBESET_TIMEOUT_NS, .local = cfg->local };
	struct hop_probe *probe;
	char err[SERIES_NOTE_LEN];

	probe = hop_probe_start(runner_base(p->runner), &hc, &r->hop_trace, err, sizeof(err));
	if (probe == NULL) {
		result_warn(r, "no per-hop latency: %s", err);
		return;
	}
	if (r->hop_trace.note[0]) /* ran another way than asked (ICMP fell back to UDP) */
		result_warn(r, "%s", r->hop_trace.note);
	if (member_add(p, probe, &hop_probe_ops, BUDGET_HOP) < 0) {
		hop_probe_ops.destroy(probe);
		r->hop_trace.available = 0;
		result_warn(r, "no per-hop latency: too many probes for one runner");
	}
}

struct probeset *probeset_start(const struct client_config *cfg, const struct sockaddr_storage *sa,
				socklen_t salen, const struct ctrl_welcome *w, struct test_result *r,
				char *err, size_t errlen)
{
	struct probeset *p = calloc(1, sizeof(*p));

	if (p == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->runner = runner_new(err, errlen);
	if (p->runner == NULL) {
		free(p);
		return NULL;
	}
	if (cfg->probes & PROBE_BIT(PROBE_ICMP))
		start_icmp(p, cfg, sa, salen, r);
	if (cfg->probes & PROBE_BIT(PROBE_DNS))
		start_dns(p, cfg, sa, salen, w, r);
	if (cfg->probes & PROBE_BIT(PROBE_TCP))
		start_tcp(p, cfg, sa, salen, w, r);
	if (cfg->probes & PROBE_BIT(PROBE_PCAP))
		start_pcap(p, cfg, sa, w, r);
	if (cfg->per_hop != HOP_MODE_OFF)
		start_hops(p, cfg, sa, salen, r);
	if (runner_start(p->runner, err, errlen) < 0) {
		runner_free(p->runner);
		pcap_capture_free(p->cap);
		free(p);
		return NULL;
	}
	p->started = 1;
	return p;
}

void probeset_mix(const struct probeset *p, struct budget_mix *m)
{
	for (int i = 0; i < p->nmember; i++)
		m->streams[p->member[i].kind]++;
}

void probeset_set_intervals(struct probeset *p, const double ms[BUDGET_KINDS])
{
	for (int i = 0; i < p->nmember; i++) {
		const struct probeset_member *mb = &p->member[i];

		if (mb->ops->set_interval && ms[mb->kind] > 0)
			mb->ops->set_interval(mb->probe, (int64_t)(ms[mb->kind] * NS_PER_MS));
	}
}

void probeset_stop(struct probeset *p, int64_t grace_ns)
{
	if (p == NULL || p->stopped)
		return;
	runner_stop(p->runner, grace_ns);
	if (p->cap)
		pcap_capture_stop(p->cap);
	p->stopped = 1;
}

void probeset_finish(struct probeset *p, struct test_result *r)
{
	if (p == NULL)
		return;
	probeset_stop(p, 0);
	runner_free(p->runner);
	for (int i = 0; i < r->nseries; i++)
		series_close(&r->series[i]);
	if (p->cap) {
		finish_pcap(p, r);
		pcap_capture_free(p->cap);
	}
	free(p);
}

/* httpmode: the phase schedule of an HTTP-mode test on one libevent loop (load transfers and
 * latency requests through libcurl's multi interface), ICMP on the probe runner's thread. */
#include "client/run/httpmode.h"

#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <event2/event.h>

#include "client/model/httptarget.h"
#include "client/run/dropuser.h"
#include "client/run/httpadapt.h"
#include "client/run/httpload.h"
#include "client/run/httpprobe.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/sock.h"
#include "common/util.h"
#include "probes/icmp.h"
#include "probes/runner.h"

#define HTTPMODE_TICK_MS 50
/* Latency requests: 20 a second, so each second of a phase has enough handshakes for the
 * buffer estimator's 1 s maxima (docs/methods.md); each is one small exchange. */
#define HTTPMODE_PROBE_INTERVAL_NS (50 * NS_PER_MS)
#define HTTPMODE_PROBE_TIMEOUT_NS (4 * NS_PER_SEC)
#define HTTPMODE_SAMPLE_NS (100 * NS_PER_MS)      /* TCP_INFO of the load connections */
#define HTTPMODE_GRACE_NS (1 * NS_PER_SEC)        /* late latency answers after the last phase */
#define HTTPMODE_ICMP_TIMEOUT_NS (2 * NS_PER_SEC)

struct hstep {
	int kind;            /* enum phase_kind, or -1: a drain gap */
	int64_t len_ns;
};

struct hm {
	const struct client_config *cfg;
	struct test_result *res;
	struct httptarget target;
	struct httpload_opts opts;
	char resolve[HTTPTARGET_HOST_MAX + 80];
	char iface[80];                /* -B as CURLOPT_INTERFACE wants it: "host!ADDR" */
	struct sockaddr_storage sa;
	socklen_t salen;
	struct event_base *base;
	struct event *tick;
	struct httpprobe *probe;
	struct httpload *load;
	struct probe_runner *runner;
	struct probe_series *conn, *inflow_down, *inflow_up;
	struct http_adapt adapt;       /* the requests' interval within the probe budget */
	struct hstep steps[2 * PHASE_KINDS];
	int nsteps, cur;
	int64_t step_end_ns, last_sample_ns, grace_end_ns;
	uint64_t down_done, up_done;   /* bytes of the loads of earlier phases */
	size_t cap_down, cap_up, cap_flows;
	int finishing, failed, cc_noted;
	char err[256];
};

static void hm_fail(struct hm *h, const char *why)
{
	if (!h->failed) {
		snprintf(h->err, sizeof(h->err), "%s", why);
		h->failed = 1;
	}
	event_base_loopbreak(h->base);
}

static int hm_push(struct tput_rec **arr, size_t *n, size_t *cap, int64_t t, uint64_t b)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 1024;
		struct tput_rec *a = realloc(*arr, nc * sizeof(*a));

		if (a == NULL)
			return -1;
		*arr = a;
		*cap = nc;
	}
	(*arr)[(*n)++] = (struct tput_rec){ t, b };
	return 0;
}

/* The latency requests' interval once the phase shows its rate (httpadapt.h). */
static void hm_adapt(struct hm *h, int64_t now, const uint64_t bytes[2])
{
	double req[2] = { 0, 0 };
	size_t n = httpprobe_wire_mean(h->probe, req);

	if (httpadapt_tick(&h->adapt, now, bytes, h->res->ip_overhead, req, n))
		httpprobe_set_interval(h->probe, (int64_t)(h->adapt.ms * NS_PER_MS));
}

/* Cumulative bytes each way, sampled on every tick; upload counts what the server
 * acknowledged (httpacct.c), so both series are the network's. */
static void hm_sample_bytes(struct hm *h, int64_t now)
{
	struct test_result *r = h->res;
	uint64_t down = h->down_done + (h->load ? httpload_down_bytes(h->load) : 0);
	uint64_t up = h->up_done + (h->load ? httpload_up_bytes(h->load) : 0);

	if (h->load && now - h->last_sample_ns >= HTTPMODE_SAMPLE_NS) {
		httpload_sample(h->load, now, &r->flows, &r->nflows, &h->cap_flows, h->inflow_down,
				h->inflow_up);
		h->last_sample_ns = now;
		up = h->up_done + httpload_up_bytes(h->load);
	}
	if (hm_push(&r->down, &r->ndown, &h->cap_down, now, down) < 0 ||
	    hm_push(&r->up, &r->nup, &h->cap_up, now, up) < 0)
		hm_fail(h, "out of memory");
	if (h->load)
		hm_adapt(h, now, (const uint64_t[2]){ down, up });
}

/* MSS and header overhead from the first load sample; congestion control as used. */
static void hm_note_load(struct hm *h)
{
	struct test_result *r = h->res;
	struct cc_report *cc = &r->cc;
	char used[16];
	int ok = httpload_cc(h->load, used, sizeof(used)), ts = 0, mss;

	if (r->mss == 0 && (mss = httpload_mss(h->load, &ts)) > 0) {
		int v6 = h->sa.ss_family == AF_INET6 &&
			 !IN6_IS_ADDR_V4MAPPED(&((struct sockaddr_in6 *)&h->sa)->sin6_addr);

		r->mss = mss;
		r->ip_overhead = (double)(mss + (v6 ? 40 : 20) + 20 + (ts ? 12 : 0)) / mss;
	}
	/* Only a server that names its algorithm tells us the download's sender. */
	if (!cc->server_used[0] && httpload_server_cc(h->load)[0])
		snprintf(cc->server_used, sizeof(cc->server_used), "%s", httpload_server_cc(h->load));
	if (!h->cc_noted || (cc->client_ok && !ok)) {
		cc->client_ok = ok;
		snprintf(cc->client_used, sizeof(cc->client_used), "%s", used);
		if (!ok)
			snprintf(cc->client_error, sizeof(cc->client_error), "setsockopt failed");
		h->cc_noted = used[0] != '\0';
	}
}

static void hm_end_step(struct hm *h, int64_t now)
{
	struct hstep *s = &h->steps[h->cur];
	struct phase_result *ph;
	struct tcp_totals up = { 0 };

	if (s->kind < 0)
		return;
	ph = &h->res->phases[h->res->nphases - 1];
	ph->end_ns = now;
	if (now > ph->start_ns)
		ph->cpu_client = (double)(clock_thread_cpu_ns() - ph->cpu_client_start_ns) /
				 (double)(now - ph->start_ns);
	ph->retrans_up = ph->kind == PHASE_UPLOAD || ph->kind == PHASE_BIDIR ? -1 : 0;
	ph->retrans_down = -1; /* the server's senders: not visible over HTTP */
	if (h->load == NULL)
		return;
	h->last_sample_ns = INT64_MIN / 2; /* a last TCP_INFO reading now */
	hm_sample_bytes(h, now);
	hm_note_load(h);
	ph->flows_down = httpload_flows(h->load, 0);
	ph->flows_up = httpload_flows(h->load, 1);
	if (ph->retrans_up < 0) {
		httpload_up_totals(h->load, &up);
		ph->retrans_up = (int64_t)up.retrans;
		ph->rwnd_limited_up = up.busy_us ? (double)up.rwnd_limited_us / (double)up.busy_us : NAN;
		ph->sndbuf_limited_up = up.busy_us ? (double)up.sndbuf_limited_us / (double)up.busy_us
						   : NAN;
	}
	ph->probe_scale = h->adapt.ms / h->adapt.base_ms;
	ph->probe_floor = h->adapt.floor;
	h->down_done += httpload_down_bytes(h->load);
	h->up_done += httpload_up_bytes(h->load);
	httpload_stop(h->load);
	h->load = NULL;
}

static void hm_begin_step(struct hm *h, int64_t now)
{
	struct hstep *s = &h->steps[h->cur];
	struct phase_result *ph;
	int ndown, nup;
	char err[256];

	h->step_end_ns = now + s->len_ns;
	if (s->kind < 0)
		return;
	ph = &h->res->phases[h->res->nphases++];
	ph->kind = (enum phase_kind)s->kind;
	ph->start_ns = now;
	ph->end_ns = now + s->len_ns;
	ph->cpu_client_start_ns = clock_thread_cpu_ns();
	ph->cpu_client = ph->cpu_server = NAN;
	ph->cpu_server_start_ns = -1;
	ph->rwnd_limited_up = ph->sndbuf_limited_up = NAN;
	ph->rwnd_limited_down = ph->sndbuf_limited_down = NAN;
	if (!h->cfg->quiet)
		fprintf(stderr, "bloatmeter: %s phase, %.0f s\n", phase_name(ph->kind),
			(double)s->len_ns / NS_PER_SEC);
	ndown = (s->kind == PHASE_DOWNLOAD || s->kind == PHASE_BIDIR) ? h->cfg->flows : 0;
	nup = (s->kind == PHASE_UPLOAD || s->kind == PHASE_BIDIR) ? h->cfg->flows : 0;
	if (ndown + nup == 0)
		return;
	h->load = httpload_start(h->base, &h->opts, ndown, nup, err, sizeof(err));
	if (h->load == NULL) {
		hm_fail(h, err);
		return;
	}
	httpadapt_phase(&h->adapt, (const int[2]){ ndown > 0, nup > 0 }, now,
			(const uint64_t[2]){ h->down_done, h->up_done });
}

static void hm_finish(struct hm *h, int64_t now)
{
	h->finishing = 1;
	httpprobe_stop_sending(h->probe);
	h->grace_end_ns = now + HTTPMODE_GRACE_NS;
}

static void hm_tick_callback(evutil_socket_t fd, short what, void *arg)
{
	struct hm *h = arg;
	int64_t now = clock_mono_ns();
	char why[256];

	if (util_interrupted()) {
		hm_fail(h, "interrupted");
		return;
	}
	if (h->finishing) {
		if (httpprobe_inflight(h->probe) == 0 || now >= h->grace_end_ns)
			event_base_loopbreak(h->base);
		return;
	}
	hm_sample_bytes(h, now);
	if (h->load && httpload_dead(h->load)) {
		snprintf(why, sizeof(why), "every load transfer failed (%.200s)", httpload_error(h->load));
		hm_fail(h, why);
		return;
	}
	if (now < h->step_end_ns)
		return;
	hm_end_step(h, now);
	if (++h->cur >= h->nsteps) {
		hm_finish(h, now);
		return;
	}
	hm_begin_step(h, now);
}

static void hm_build_schedule(struct hm *h)
{
	const struct client_config *cfg = h->cfg;

	for (int i = 0; i < cfg->nphases; i++) {
		if (cfg->phases[i] == PHASE_IDLE) {
			h->steps[h->nsteps++] = (struct hstep){ PHASE_IDLE, (int64_t)(cfg->idle_s * NS_PER_SEC) };
			continue;
		}
		h->steps[h->nsteps++] = (struct hstep){ (int)cfg->phases[i],
							(int64_t)(cfg->duration_s * NS_PER_SEC) };
		if (cfg->gap_s > 0)
			h->steps[h->nsteps++] = (struct hstep){ -1, (int64_t)(cfg->gap_s * NS_PER_SEC) };
	}
}

/* The target's address, resolved once: libcurl gets it (CURLOPT_RESOLVE), so every
 * transfer and the ICMP probe reach the same host. */
static int hm_resolve(struct hm *h, char *err, size_t errlen)
{
	struct sockaddr_storage sa[1];
	socklen_t len[1];
	char ip[64];

	if (sock_resolve_all(h->target.host, h->target.port, SOCK_STREAM, h->cfg->family, sa, len, 1,
			     err, errlen) < 1)
		return -1;
	h->sa = sa[0];
	h->salen = len[0];
	sock_ip_str((struct sockaddr *)&h->sa, ip, sizeof(ip));
	snprintf(h->resolve, sizeof(h->resolve), "%s:%u:%s%s%s", h->target.host,
		 (unsigned)h->target.port, strchr(ip, ':') ? "[" : "", ip, strchr(ip, ':') ? "]" : "");
	sock_addr_str((struct sockaddr *)&h->sa, h->res->server_addr, sizeof(h->res->server_addr));
	return 0;
}

/* ICMP echo to the target's address on the probe runner, where the system permits it. */
static void hm_start_icmp(struct hm *h)
{
	struct icmp_probe_config ic = { 0 };
	struct probe_series *ps;
	struct icmp_probe *probe;
	char addr[64], err[SERIES_NOTE_LEN];

	if (!(h->cfg->probes & PROBE_BIT(PROBE_ICMP)))
		return;
	ic.target = h->sa;
	ic.target_len = h->salen;
	sock_ip_str((struct sockaddr *)&h->sa, addr, sizeof(addr));
	ps = result_add_series(h->res, "icmp", addr);
	if (ps == NULL)
		return;
	h->runner = runner_new(err, sizeof(err));
	ic.interval_ns = (int64_t)(h->cfg->probe_interval_ms[PROBE_ICMP] * NS_PER_MS);
	ic.timeout_ns = HTTPMODE_ICMP_TIMEOUT_NS;
	ic.dscp = h->cfg->dscp;
	ic.local = h->cfg->local;
	probe = h->runner ? icmp_probe_start(runner_base(h->runner), &ic, ps, err, sizeof(err)) : NULL;
	if (probe == NULL) {
		ps->available = 0;
		series_note(ps, "%s", err);
		return;
	}
	if (runner_add(h->runner, probe, &icmp_probe_ops) < 0) {
		icmp_probe_ops.destroy(probe);
		ps->available = 0;
		series_note(ps, "too many probes for one runner");
		return;
	}
	ps->available = 1;
	if (runner_start(h->runner, err, sizeof(err)) < 0)
		series_note(ps, "%s", err);
}

static struct probe_series *hm_series(struct hm *h, const char *name, const char *method)
{
	struct probe_series *ps = result_add_series(h->res, name, h->res->server_addr);

	if (ps) {
		ps->available = 1;
		snprintf(ps->method, sizeof(ps->method), "%s", method);
	}
	return ps;
}

static int hm_setup(struct hm *h, char *err, size_t errlen)
{
	const struct client_config *cfg = h->cfg;

	if (httptarget_parse(&h->target, cfg->http_url, err, errlen) < 0 ||
	    hm_resolve(h, err, errlen) < 0)
		return -1;
	h->opts = (struct httpload_opts){ .target = &h->target, .resolve = h->resolve,
					  .cc = cfg->cc, .ca_file = cfg->tls_ca,
					  .insecure = cfg->tls_insecure, .family = cfg->family };
	if (cfg->bind) {
		snprintf(h->iface, sizeof(h->iface), "host!%s", cfg->bind);
		h->opts.interface = h->iface;
	}
	if (cfg->tls_insecure)
		log_warnx("--insecure: the server's certificate is not checked");
	if (httpprobe_check(&h->opts, HTTPMODE_PROBE_TIMEOUT_NS, err, errlen) < 0)
		return -1;
	h->base = event_base_new();
	if (h->base == NULL) {
		snprintf(err, errlen, "cannot create the event loop");
		return -1;
	}
	snprintf(h->res->cc.requested, sizeof(h->res->cc.requested), "%s", cfg->cc);
	/* cc.server_ok stays 0: no request reaches the server (result_cc_asked). */
	h->conn = hm_series(h, "tcp_connect", "http fresh connection");
	if (cfg->probes & PROBE_BIT(PROBE_INFLOW)) {
		h->inflow_down = hm_series(h, "inflow_down", "tcp_info");
		h->inflow_up = hm_series(h, "inflow_up", "tcp_info");
	}
	hm_start_icmp(h);
	/* The ICMP socket is open and the load sockets need no privilege but their cc: -Z now. */
	return dropuser_apply(cfg->run_as, cfg->cc, err, errlen);
}

static void hm_cleanup(struct hm *h)
{
	struct test_result *r = h->res;

	if (h->load) {
		httpload_stop(h->load);
		h->load = NULL;
	}
	if (h->probe)
		r->probes = httpprobe_free(h->probe, &r->nprobes, &r->probe_wire);
	if (h->runner) {
		runner_stop(h->runner, 0);
		runner_free(h->runner);
	}
	for (int i = 0; i < r->nseries; i++)
		series_close(&r->series[i]);
	if (h->tick)
		event_free(h->tick);
	if (h->base)
		event_base_free(h->base);
}

int httpmode_run(const struct client_config *cfg, struct test_result *res, char *err,
		 size_t errlen)
{
	struct hm h;
	struct timeval tv = { 0, HTTPMODE_TICK_MS * 1000 };
	int rc = -1;

	memset(&h, 0, sizeof(h));
	h.cfg = cfg;
	h.res = res;
	res->http = 1;
	hm_build_schedule(&h);
	httpadapt_init(&h.adapt, (double)HTTPMODE_PROBE_INTERVAL_NS / NS_PER_MS);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(err, errlen, "cannot initialise libcurl");
		return -1;
	}
	if (!cfg->quiet)
		fprintf(stderr, "bloatmeter: HTTP test against %s\n", cfg->http_url);
	if (hm_setup(&h, err, errlen) < 0)
		goto out;
	res->start_real_ns = clock_real_ns();
	res->t0_ns = clock_mono_ns();
	h.probe = httpprobe_start(h.base, &h.opts, HTTPMODE_PROBE_INTERVAL_NS,
				  HTTPMODE_PROBE_TIMEOUT_NS, h.conn, err, errlen);
	h.tick = event_new(h.base, -1, EV_PERSIST, hm_tick_callback, &h);
	if (h.probe == NULL || h.tick == NULL || event_add(h.tick, &tv) < 0) {
		if (h.probe != NULL)
			snprintf(err, errlen, "cannot arm the phase timer");
		goto out;
	}
	hm_begin_step(&h, res->t0_ns);
	if (!h.failed && event_base_dispatch(h.base) < 0)
		hm_fail(&h, "event loop failure");
	if (h.failed) {
		int64_t now = clock_mono_ns();
		int running = !h.finishing && h.cur < h.nsteps ? h.steps[h.cur].kind : -1;

		if (running >= 0)
			hm_end_step(&h, now);
		snprintf(err, errlen, "%s", h.err);
		result_abort(res, running, now, h.err);
		rc = 1;
		goto out;
	}
	rc = 0;
out:
	hm_cleanup(&h);
	curl_global_cleanup();
	return rc;
}

/* measure: the phase schedule runs on the load event loop, driven by a 50 ms tick; UDP probes
 * run throughout on their own thread. */
#include "client/run/measure.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>

#include "client/analysis/analysis.h"
#include "client/run/ctrl.h"
#include "client/run/dropuser.h"
#include "client/run/liveness.h"
#include "client/run/load.h"
#include "client/run/probeadapt.h"
#include "client/run/probeset.h"
#include "common/auth.h"
#include "common/clock.h"
#include "common/dial.h"
#include "common/frame.h"
#include "common/log.h"
#include "common/sock.h"
#include "common/tls.h"
#include "common/util.h"
#include "probes/udp.h"

#define TICK_MS 50
#define HANDSHAKE_TIMEOUT_MS 5000
#define CONNECT_TIMEOUT_MS 5000
#define TEST_MAX_ADDRS 8 /* addresses of the server raced (≤ DIAL_MAX) */
#define BYE_TIMEOUT_MS 3000
#define PROBE_GRACE_NS (1000 * NS_PER_MS)
/* -P auto: one more flow per direction each second while the last one gained ≥ 5 %. */
#define AUTO_STEP_NS NS_PER_SEC
#define AUTO_GAIN 0.05
#define AUTO_MAX_FLOWS 16
/* UDP counts as blocked when this many probes of the idle phase got no reply at all while
 * the control connection delivered the server's stats. */
#define UDP_BLOCKED_MIN_SENT 20

/* One step of the schedule: a phase, or a drain gap (kind < 0). */
struct step {
	int kind;
	int64_t len_ns;
};

struct test {
	const struct client_config *cfg;
	struct test_result *res;
	struct event_base *base;
	struct sockaddr_storage sa;
	socklen_t salen;
	struct bufferevent *ctrl;
	struct ctrl_welcome welcome;
	struct auth_keys psk;      /* --psk-file's key (n = 0 without one) */
	struct udp_probe *probe;
	struct probeset *aux;      /* ICMP, DNS, new-connection probes (and capture) */
	struct probe_adapt adapt;  /* the probe budget: every kind's interval */
	struct load_opts load_opts;
	SSL_CTX *load_tls;         /* --tls-load: the load flows' TLS context (kernel TLS asked) */
	struct probe_series *inflow_down, *inflow_up; /* in r->series, or NULL when off */
	size_t cap_flows;
	/* -P auto ramp per direction ([1] upload): last step's time (upload: server clock) and
	 * bytes, the goodput before the last added flow, and whether the ramp stopped. */
	int64_t auto_t[2];
	uint64_t auto_bytes[2];
	double auto_rate[2];
	int auto_done[2];
	int max_auto;              /* flows per direction the ramp may reach */
	struct load *load;
	uint64_t down_done;        /* download bytes of flows already closed */
	struct event *tick, *bye_timeout;
	struct step steps[2 * PHASE_KINDS];
	int nsteps, cur;
	int64_t step_end_ns;
	size_t cap_down, cap_up;
	int64_t *up_srv_t;         /* server clock of each upload sample */
	int cc_noted;
	int progress;                     /* live line on a terminal */
	int progress_lines;               /* piped: one line per phase instead */
	int64_t prog_t;                   /* last progress line: time and byte counts */
	uint64_t prog_down, prog_up;
	int64_t prog_up_t;
	struct tcp_totals srv_totals;     /* latest server download-flow totals */
	int64_t srv_cpu_ns, srv_t_ns;     /* latest server loop CPU time (-1 unknown) and clock */
	struct phase_result *open_phase;  /* ended, waiting for the server's totals */
	struct liveness live;             /* signs of life from the server */
	uint64_t ctrl_frames;             /* control frames received */
	int outage;                       /* the run failed because nothing came any more */
	int finishing;
	int failed;
	char err[256];
};

static void test_fail(struct test *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void test_fail(struct test *t, const char *fmt, ...)
{
	va_list ap;

	if (!t->failed) {
		va_start(ap, fmt);
		vsnprintf(t->err, sizeof(t->err), fmt, ap);
		va_end(ap);
		t->failed = 1;
	}
	event_base_loopbreak(t->base);
}

/* One of a phase's load flows could not start: the phase cannot run as asked. */
static void test_load_failed(void *arg, const char *err)
{
	test_fail(arg, "%s", err);
}

static int test_push_tput(struct tput_rec **arr, size_t *n, size_t *cap, int64_t t, uint64_t b)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 1024;
		struct tput_rec *a = realloc(*arr, nc * sizeof(*a));

		if (a == NULL)
			return -1;
		*arr = a;
		*cap = nc;
	}
	(*arr)[*n].t_ns = t;
	(*arr)[*n].bytes = b;
	(*n)++;
	return 0;
}

static void test_sample_down(struct test *t, int64_t now)
{
	uint64_t b = t->down_done + (t->load ? load_down_bytes(t->load) : 0);
	struct test_result *r = t->res;

	if (test_push_tput(&r->down, &r->ndown, &t->cap_down, now, b) < 0)
		test_fail(t, "out of memory");
}

/* The server is reached over IPv6 (not a v4-mapped address): 40-byte IP headers. */
static int test_ipv6(const struct test *t)
{
	return t->sa.ss_family == AF_INET6 &&
	       !IN6_IS_ADDR_V4MAPPED(&((const struct sockaddr_in6 *)&t->sa)->sin6_addr);
}

/* Records what the load sockets really used, once per run. */
static void test_note_load_info(struct test *t)
{
	struct load_info li;
	struct cc_report *cc = &t->res->cc;

	load_get_info(t->load, &li);
	if (t->res->mss == 0 && li.mss > 0) {
		int hdr = (test_ipv6(t) ? 40 : 20) + 20 + (li.timestamps ? 12 : 0);

		t->res->mss = li.mss;
		t->res->ip_overhead = (double)(li.mss + hdr) / li.mss;
	}
	/* Keep the first report, or the first failure if a later phase fails. */
	if (!t->cc_noted || (cc->client_ok && !li.cc_ok)) {
		cc->client_ok = li.cc_ok;
		snprintf(cc->client_used, sizeof(cc->client_used), "%s", li.cc_used);
		snprintf(cc->client_error, sizeof(cc->client_error), "%s", li.cc_error);
		t->cc_noted = 1;
	}
}

/* --tls-load: adds a phase's TLS flows (all of them, -P auto's too) to the report; the
 * version and cipher are the first flow's. */
static void test_note_tls(struct test *t)
{
	struct tls_load_report *tr = &t->res->tls_load;
	struct load_info li;

	load_get_info(t->load, &li);
	if (li.tls_flows == 0)
		return;
	if (tr->flows == 0) {
		snprintf(tr->version, sizeof(tr->version), "%s", li.tls_version);
		snprintf(tr->cipher, sizeof(tr->cipher), "%s", li.tls_cipher);
	}
	tr->flows += li.tls_flows;
	tr->ktls_send_flows += li.ktls_send_flows;
	tr->ktls_recv_flows += li.ktls_recv_flows;
}

/* Share of busy time a limit held, NAN when the flows were never busy. */
static double limited_share(uint64_t limited_us, uint64_t busy_us)
{
	return busy_us ? (double)limited_us / (double)busy_us : NAN;
}

/* The client's upload senders of a phase: its load is per phase, so its totals are the phase's. */
static void test_close_up_totals(struct test *t, struct phase_result *ph)
{
	struct tcp_totals up = { 0 };
	int loaded = ph->kind == PHASE_UPLOAD || ph->kind == PHASE_BIDIR;

	ph->rwnd_limited_up = ph->sndbuf_limited_up = NAN;
	ph->retrans_up = loaded ? -1 : 0;
	if (!loaded || t->load == NULL)
		return;
	load_up_totals(t->load, &up);
	ph->retrans_up = (int64_t)up.retrans;
	ph->rwnd_limited_up = limited_share(up.rwnd_limited_us, up.busy_us);
	ph->sndbuf_limited_up = limited_share(up.sndbuf_limited_us, up.busy_us);
}

/* The first server stats after a phase ended close its download-side totals (stats come every
 * 100 ms; the counters only grow while that phase's flows run). */
static void test_close_down_totals(struct test *t, struct phase_result *ph)
{
	const struct tcp_totals *s = &ph->srv_start, *now = &t->srv_totals;
	int loaded = ph->kind == PHASE_DOWNLOAD || ph->kind == PHASE_BIDIR;

	if (ph->cpu_server_start_ns >= 0 && t->srv_cpu_ns >= 0 && t->srv_t_ns > ph->cpu_server_t0_ns)
		ph->cpu_server = (double)(t->srv_cpu_ns - ph->cpu_server_start_ns) /
				 (double)(t->srv_t_ns - ph->cpu_server_t0_ns);

	ph->retrans_down = (int64_t)(now->retrans - s->retrans);
	ph->rwnd_limited_down = loaded ? limited_share(now->rwnd_limited_us - s->rwnd_limited_us,
						       now->busy_us - s->busy_us) : NAN;
	ph->sndbuf_limited_down = loaded ? limited_share(now->sndbuf_limited_us - s->sndbuf_limited_us,
							 now->busy_us - s->busy_us) : NAN;
}

/* The load lives for one phase: collect its in-flow probes and TCP_INFO samples before it
 * goes (also called at every tick, so the arrays grow smoothly). */
static void test_take_load_samples(struct test *t)
{
	struct test_result *r = t->res;

	load_take_inflow(t->load, t->inflow_down, t->inflow_up);
	(void)load_take_samples(t->load, &r->flows, &r->nflows, &t->cap_flows);
}

static struct probe_series *inflow_series(struct test_result *r, const char *name,
					   const char *addr);

/* The in-flow probes ride on the load connections: on from the next phase's flows. */
static void test_inflow_on(struct test *t)
{
	char addr[64];

	t->load_opts.inflow_interval_ns =
		(int64_t)(t->cfg->probe_interval_ms[PROBE_INFLOW] * NS_PER_MS);
	if (t->inflow_down != NULL)
		return;
	sock_addr_str((struct sockaddr *)&t->sa, addr, sizeof(addr));
	t->inflow_down = inflow_series(t->res, "inflow_down", addr);
	t->inflow_up = inflow_series(t->res, "inflow_up", addr);
}

/* At the end of the idle phase: not one UDP probe came back, yet the server's stats did over
 * TCP. The path (or a firewall on it) drops UDP: the loaded phases measure their latency with
 * the in-flow TCP probes (turned on here if --probes left them out), and the report says so.
 * The liveness rule hears the control connection, so the silence of UDP does not end the run. */
static void test_check_udp(struct test *t)
{
	if (t->res->udp_blocked || t->ctrl_frames == 0 || udp_probe_replies(t->probe) > 0 ||
	    udp_probe_sent(t->probe) < UDP_BLOCKED_MIN_SENT)
		return;
	t->res->udp_blocked = 1;
	test_inflow_on(t);
	result_warn(t->res, "UDP probes got no reply in the idle phase (%llu sent) while TCP worked: "
		    "UDP looks blocked on this path; the phases' RTT comes from TCP probes (in-flow, "
		    "connect)", (unsigned long long)udp_probe_sent(t->probe));
	log_warnx("UDP probes got no reply in the idle phase: UDP looks blocked; going on with "
		  "in-flow TCP probes");
}

/* UDP replies stopped mid-run while TCP is still heard: from here the path drops UDP. Later
 * phases' load flows carry in-flow probes, and their RTT comes from TCP (tcpfallback.c); the
 * phase running now keeps its UDP figures up to the block. */
static void test_udp_stopped(struct test *t)
{
	const struct step *s = &t->steps[t->cur];
	double at_s = (double)(t->live.udp_last_ns - t->res->t0_ns) / NS_PER_SEC;
	char where[48] = "";

	t->res->udp_blocked = 1;
	t->res->udp_blocked_ns = t->live.udp_last_ns;
	test_inflow_on(t);
	if (s->kind >= 0)
		snprintf(where, sizeof(where), " (the %s phase)", phase_name((enum phase_kind)s->kind));
	result_warn(t->res, "UDP probes stopped getting replies %.1f s into the run%s while TCP "
		    "worked: UDP looks blocked; later phases' RTT comes from in-flow TCP probes",
		    at_s, where);
	log_warnx("UDP probes stopped getting replies %.1f s into the run; going on with in-flow "
		  "TCP probes", at_s);
}

/* Signs of life per channel: a silent path ends the run (the caller), a silent UDP only
 * switches the probes. */
static void test_liveness(struct test *t, int64_t now)
{
	struct liveness_counts c = {
		.ctrl_frames = t->ctrl_frames,
		.udp_replies = udp_probe_replies(t->probe),
		.udp_sent = udp_probe_sent(t->probe),
		.down_bytes = t->res->ndown ? t->res->down[t->res->ndown - 1].bytes : 0,
	};

	liveness_update(&t->live, now, &c);
	if (!t->res->udp_blocked && liveness_udp_silent(&t->live, now))
		test_udp_stopped(t);
}

static void test_end_step(struct test *t, int64_t now)
{
	struct step *s = &t->steps[t->cur];
	struct phase_result *ph;

	if (s->kind < 0)
		return;
	if (s->kind == PHASE_IDLE)
		test_check_udp(t);
	ph = &t->res->phases[t->res->nphases - 1];
	ph->end_ns = now;
	if (now > ph->start_ns)
		ph->cpu_client = (double)(clock_thread_cpu_ns() - ph->cpu_client_start_ns) /
				 (double)(now - ph->start_ns);
	test_close_up_totals(t, ph);
	memcpy(ph->probe_ms, t->adapt.ms, sizeof(ph->probe_ms));
	ph->probe_scale = t->adapt.scale;
	ph->probe_floor = t->adapt.floor;
	ph->retrans_down = -1; /* filled from the server's totals when its stats arrive */
	t->open_phase = ph;
	if (t->load) {
		test_sample_down(t, now);
		t->down_done += load_down_bytes(t->load);
		test_take_load_samples(t);
		ph->flows_down = load_flows(t->load, 0);
		ph->flows_up = load_flows(t->load, 1);
		test_note_load_info(t); /* the MSS, once a flow has connected */
		test_note_tls(t);
		load_stop(t->load);
		t->load = NULL;
	}
}

/* The direction's byte count now and its clock (upload: the server's, from its stats). */
static int test_auto_bytes(const struct test *t, int up, int64_t now, int64_t *at, uint64_t *bytes)
{
	const struct test_result *r = t->res;

	if (!up) {
		*at = now;
		*bytes = t->down_done + load_down_bytes(t->load);
		return 0;
	}
	if (r->nup == 0)
		return -1;
	*at = t->up_srv_t[r->nup - 1];
	*bytes = r->up[r->nup - 1].bytes;
	return 0;
}

static void test_auto_begin(struct test *t, int64_t now)
{
	for (int up = 0; up < 2; up++) {
		t->auto_rate[up] = NAN;
		t->auto_done[up] = 0;
		if (test_auto_bytes(t, up, now, &t->auto_t[up], &t->auto_bytes[up]) < 0)
			t->auto_t[up] = -1;
	}
}

/* Once a second per loaded direction: goodput over the last second against the second
 * before the last added flow; one more flow while that gained at least 5 %. */
static void test_auto_ramp(struct test *t, int64_t now)
{
	char err[128];

	for (int up = 0; up < 2; up++) {
		int64_t at;
		uint64_t bytes;
		double rate;
		int n = load_flows(t->load, up);

		if (n == 0 || t->auto_done[up] || test_auto_bytes(t, up, now, &at, &bytes) < 0)
			continue;
		if (t->auto_t[up] < 0 || at <= t->auto_t[up]) {
			t->auto_t[up] = at;
			t->auto_bytes[up] = bytes;
			continue;
		}
		if (at - t->auto_t[up] < AUTO_STEP_NS)
			continue;
		rate = (double)(bytes - t->auto_bytes[up]) / (double)(at - t->auto_t[up]);
		t->auto_t[up] = at;
		t->auto_bytes[up] = bytes;
		if ((!isnan(t->auto_rate[up]) && rate < t->auto_rate[up] * (1 + AUTO_GAIN)) ||
		    n >= t->max_auto) {
			t->auto_done[up] = 1;
			log_info("-P auto: %s stays at %d flows", up ? "upload" : "download", n);
			continue;
		}
		t->auto_rate[up] = rate;
		if (load_add_flow(t->load, up, err, sizeof(err)) < 0) {
			log_warnx("-P auto: %s", err);
			t->auto_done[up] = 1;
		}
	}
}

static void test_finish(struct test *t);

/* Once the first second of a loaded phase shows its rate: every probe kind's interval so
 * that together they stay within the budget (probeadapt.h). */
static void test_probe_budget(struct test *t, int64_t now)
{
	int64_t at[2] = { 0, 0 };
	uint64_t bytes[2] = { 0, 0 };
	const double *ms = t->adapt.ms;

	for (int up = 0; up < 2; up++)
		if (t->adapt.loaded[up] && test_auto_bytes(t, up, now, &at[up], &bytes[up]) < 0)
			return;
	if (!probeadapt_tick(&t->adapt, at, bytes, t->res->ip_overhead))
		return;
	t->res->phases[t->res->nphases - 1].probe_settled_ns = now + t->adapt.settle_ns;
	udp_probe_set_interval(t->probe, (int64_t)(ms[BUDGET_UDP] * NS_PER_MS));
	probeset_set_intervals(t->aux, ms);
	if (t->load_opts.inflow_interval_ns > 0) {
		t->load_opts.inflow_interval_ns = (int64_t)(ms[BUDGET_INFLOW] * NS_PER_MS);
		load_set_inflow_interval(t->load, t->load_opts.inflow_interval_ns);
	}
}

/* Starts step t->cur: records a phase and opens its load flows. */
static double test_total_s(const struct test *t);

static void test_begin_step(struct test *t, int64_t now)
{
	struct step *s = &t->steps[t->cur];
	struct phase_result *ph;
	int ndown, nup;
	char err[256];

	t->step_end_ns = now + s->len_ns;
	if (s->kind < 0)
		return;
	ph = &t->res->phases[t->res->nphases++];
	ph->kind = (enum phase_kind)s->kind;
	ph->start_ns = now;
	ph->end_ns = now + s->len_ns;
	/* A phase that ended without a drain gap is closed with the latest server totals. */
	if (t->open_phase) {
		test_close_down_totals(t, t->open_phase);
		t->open_phase = NULL;
	}
	ph->srv_start = t->srv_totals;
	ph->cpu_client_start_ns = clock_thread_cpu_ns();
	ph->cpu_client = ph->cpu_server = NAN;
	ph->cpu_server_start_ns = t->srv_cpu_ns;
	ph->cpu_server_t0_ns = t->srv_t_ns;
	ph->rwnd_limited_down = ph->sndbuf_limited_down = NAN;
	ph->probe_settled_ns = -1;
	if (t->progress_lines)
		fprintf(stderr, "bloatmeter: %s phase, %.0f s (at %.0f of %.0f s)\n",
			phase_name(ph->kind), (double)s->len_ns / NS_PER_SEC,
			(double)(now - t->res->t0_ns) / NS_PER_SEC, test_total_s(t));
	ndown = (s->kind == PHASE_DOWNLOAD || s->kind == PHASE_BIDIR) ? t->cfg->flows : 0;
	nup = (s->kind == PHASE_UPLOAD || s->kind == PHASE_BIDIR) ? t->cfg->flows : 0;
	probeadapt_phase(&t->adapt, (const int[2]){ ndown > 0, nup > 0 }, (double)s->len_ns / NS_PER_SEC);
	if (ndown + nup == 0)
		return;
	t->load = load_start(t->base, &t->sa, t->salen, t->welcome.token, ndown, nup, t->cfg->cc,
			     &t->load_opts, err, sizeof(err));
	if (t->load == NULL) {
		test_fail(t, "%s", err);
		return;
	}
	test_note_load_info(t);
	if (t->cfg->flows_auto)
		test_auto_begin(t, now);
	if (!t->cfg->quiet)
		log_info("%s phase: %d flows", phase_name(ph->kind), ndown + nup);
}

/* Once a second on a terminal: elapsed and total time, phase, goodput each way over the last
 * second, latest RTT. */
static void test_progress(struct test *t, int64_t now)
{
	const struct test_result *r = t->res;
	uint64_t down = r->ndown ? r->down[r->ndown - 1].bytes : 0;
	uint64_t up = r->nup ? r->up[r->nup - 1].bytes : 0;
	int64_t up_t = r->nup ? t->up_srv_t[r->nup - 1] : 0;
	const struct step *s = &t->steps[t->cur];
	double dmbps, umbps;

	if (!t->progress || now - t->prog_t < NS_PER_SEC)
		return;
	dmbps = t->prog_t ? (double)(down - t->prog_down) * 8e3 / (double)(now - t->prog_t) : 0;
	umbps = t->prog_up_t && up_t > t->prog_up_t
			? (double)(up - t->prog_up) * 8e3 / (double)(up_t - t->prog_up_t) : 0;
	fprintf(stderr, "\r%5.0f/%.0f s  %-13s  down %8.2f Mbit/s  up %8.2f Mbit/s  RTT %7.1f ms\033[K",
		(double)(now - r->t0_ns) / NS_PER_SEC, test_total_s(t),
		s->kind < 0 ? "drain" : phase_name(s->kind), dmbps, umbps,
		ns_to_ms(udp_probe_last_rtt(t->probe)));
	t->prog_t = now;
	t->prog_down = down;
	t->prog_up = up;
	t->prog_up_t = up_t;
}

static void test_tick_callback(evutil_socket_t fd, short what, void *arg)
{
	struct test *t = arg;
	int64_t now = clock_mono_ns();

	if (util_interrupted()) {
		test_fail(t, "interrupted");
		return;
	}
	if (t->finishing)
		return;
	test_sample_down(t, now);
	test_progress(t, now);
	test_liveness(t, now);
	if (liveness_outage(&t->live, now)) {
		t->outage = 1;
		test_fail(t, "nothing came from the server for %.0f s: the path or the server went dark",
			  (double)LIVENESS_OUTAGE_NS / NS_PER_SEC);
		return;
	}
	if (t->load) {
		load_tune(t->load);
		if (t->res->mss == 0) /* the first flow has connected by now, mostly */
			test_note_load_info(t);
		if (t->cfg->flows_auto)
			test_auto_ramp(t, now);
		test_probe_budget(t, now);
		if (load_open_flows(t->load) == 0 && load_flows(t->load, 0) + load_flows(t->load, 1) == 0)
			test_fail(t, "the server closed every load flow");
	}
	if (now < t->step_end_ns)
		return;
	test_end_step(t, now);
	if (++t->cur >= t->nsteps) {
		test_finish(t);
		return;
	}
	test_begin_step(t, now);
}

/* Grows the arrays kept beside each upload sample to the samples' capacity. */
static int test_grow_up_extras(struct test *t)
{
	int64_t *a = realloc(t->up_srv_t, t->cap_up * sizeof(*a));
	uint32_t *b;
	uint64_t *c;

	if (a == NULL)
		return -1;
	t->up_srv_t = a;
	b = realloc(t->res->srv_srtt_us, t->cap_up * sizeof(*b));
	if (b == NULL)
		return -1;
	t->res->srv_srtt_us = b;
	c = realloc(t->res->srv_dlv_bytes, t->cap_up * sizeof(*c));
	if (c == NULL)
		return -1;
	t->res->srv_dlv_bytes = c;
	return 0;
}

/* Stores one upload sample from the server's stats. */
static void test_on_stats(struct test *t, const struct ctrl_stats *st)
{
	struct test_result *r = t->res;
	size_t cap = t->cap_up;

	if (test_push_tput(&r->up, &r->nup, &t->cap_up, clock_mono_ns(), st->up_rx_bytes) < 0) {
		test_fail(t, "out of memory");
		return;
	}
	if (t->cap_up != cap && test_grow_up_extras(t) < 0) {
		test_fail(t, "out of memory");
		return;
	}
	t->up_srv_t[r->nup - 1] = st->t_ns;
	r->srv_srtt_us[r->nup - 1] = st->down_srtt_us;
	r->srv_dlv_bytes[r->nup - 1] = st->down.delivered_bytes;
	t->srv_totals = st->down;
	t->srv_cpu_ns = st->loop_cpu_ns;
	t->srv_t_ns = st->t_ns;
	if (t->open_phase) {
		test_close_down_totals(t, t->open_phase);
		t->open_phase = NULL;
	}
	if (st->cc_failures > 0 && r->cc.server_ok) {
		r->cc.server_ok = 0;
		snprintf(r->cc.server_error, sizeof(r->cc.server_error),
			 "setting it failed on %lld server load sockets", (long long)st->cc_failures);
	}
	if (st->final) {
		r->srv_probe_count = st->udp_rx;
		event_base_loopbreak(t->base);
	}
}

static void test_ctrl_read_callback(struct bufferevent *bev, void *arg)
{
	struct test *t = arg;
	json_object *msg;
	char err[160];
	int rc;

	while ((rc = frame_take(bufferevent_get_input(bev), &msg, err, sizeof(err))) == 1) {
		struct ctrl_stats st;

		if (ctrl_parse_stats(msg, &st) < 0) {
			const char *reason;

			if (strcmp(wire_ctrl_type(msg), "error") == 0 &&
			    wire_get_str(msg, "reason", 200, &reason) == 0)
				test_fail(t, "the server ended the test: %s", reason);
			else
				test_fail(t, "the server sent an unexpected message");
			json_object_put(msg);
			return;
		}
		json_object_put(msg);
		t->ctrl_frames++;
		test_on_stats(t, &st);
	}
	if (rc < 0)
		test_fail(t, "bad message from the server: %s", err);
}

static void test_ctrl_event_callback(struct bufferevent *bev, short what, void *arg)
{
	test_fail(arg, "the server closed the control connection");
}

static void test_bye_timeout_callback(evutil_socket_t fd, short what, void *arg)
{
	struct test *t = arg;

	result_warn(t->res, "the server did not confirm the end of the test; the upstream/downstream loss split of the last probes is approximate");
	event_base_loopbreak(t->base);
}

static void test_map_upload_times(const struct test *t, struct tput_rec *out);

/* Before bye, when the server takes it: the client's own figures for the server's list of
 * recent tests (docs/protocol.md, summary). Every phase is over and the probes are stopped,
 * so the analysis can run now, on a shallow copy with its own upload timeline: the real one
 * runs later from the untouched raw series, with the server's final counts. Only figures that
 * need no final count go in the message (no loss split). Best effort: a failure sends none. */
static void test_send_summary(struct test *t)
{
	struct test_result *snap = malloc(sizeof(*snap));
	struct tput_rec *up = malloc((t->res->nup + 1) * sizeof(*up));

	if (snap != NULL && up != NULL) {
		*snap = *t->res;
		snap->probes = udp_probe_records(t->probe, &snap->nprobes);
		test_map_upload_times(t, up);
		snap->up = up;
		snap->nseries = 0; /* the other probe kinds are not collected yet */
		analysis_run(snap);
		if (frame_put(bufferevent_get_output(t->ctrl), ctrl_summary(snap)) < 0)
			log_debug("cannot queue the summary");
	}
	free(up);
	free(snap);
}

/* Ends the schedule: stop probes (waiting for late replies), then say bye and wait for the
 * server's final stats. */
static void test_finish(struct test *t)
{
	struct timeval tv = { BYE_TIMEOUT_MS / 1000, BYE_TIMEOUT_MS % 1000 * 1000 };

	t->finishing = 1;
	udp_probe_stop(t->probe, PROBE_GRACE_NS);
	/* The UDP grace has passed: late answers of the other kinds had it too. */
	probeset_stop(t->aux, 0);
	if (t->welcome.summary_ok)
		test_send_summary(t);
	if (frame_put(bufferevent_get_output(t->ctrl), ctrl_bye()) < 0) {
		test_fail(t, "cannot send bye");
		return;
	}
	t->bye_timeout = evtimer_new(t->base, test_bye_timeout_callback, t);
	if (t->bye_timeout == NULL || evtimer_add(t->bye_timeout, &tv) < 0)
		test_fail(t, "cannot arm a timer");
}

static void test_build_schedule(struct test *t)
{
	const struct client_config *cfg = t->cfg;

	for (int i = 0; i < cfg->nphases; i++) {
		if (cfg->phases[i] == PHASE_IDLE) {
			t->steps[t->nsteps++] = (struct step){ PHASE_IDLE, (int64_t)(cfg->idle_s * NS_PER_SEC) };
			continue;
		}
		t->steps[t->nsteps++] = (struct step){ (int)cfg->phases[i],
						       (int64_t)(cfg->duration_s * NS_PER_SEC) };
		if (cfg->gap_s > 0)
			t->steps[t->nsteps++] = (struct step){ -1, (int64_t)(cfg->gap_s * NS_PER_SEC) };
	}
}

static double test_total_s(const struct test *t)
{
	int64_t ns = 0;

	for (int i = 0; i < t->nsteps; i++)
		ns += t->steps[i].len_ns;
	return (double)ns / NS_PER_SEC;
}

/* --psk-file: its one key, read before anything goes on the network. */
static int test_load_key(struct test *t, char *err, size_t errlen)
{
	char why[512];

	if (t->cfg->psk_file == NULL)
		return 0;
	if (auth_load_keys(t->cfg->psk_file, 1, &t->psk, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "cannot use --psk-file: %s", why);
		return -1;
	}
	return 0;
}

/* --tls: the TLS session on the connected control socket, the server's certificate checked
 * against the name or address given on the command line (unless --insecure). */
static SSL *test_tls(const struct client_config *cfg, int fd, char *err, size_t errlen)
{
	SSL_CTX *ctx;
	SSL *ssl;

	/* OpenSSL writes with write(2): a server that closes first must not kill us by SIGPIPE. */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
		snprintf(err, errlen, "cannot ignore SIGPIPE: %s", strerror(errno));
		return NULL;
	}
	if (cfg->tls_insecure)
		log_warnx("--insecure: the server's certificate is not checked; anyone on the path "
			  "can read and change the control connection");
	ctx = tls_client_ctx(cfg->tls_ca, cfg->tls_insecure, err, errlen);
	if (ctx == NULL)
		return NULL;
	ssl = tls_client_connect(ctx, fd, cfg->server,
				 clock_mono_ns() + (int64_t)HANDSHAKE_TIMEOUT_MS * NS_PER_MS, err,
				 errlen);
	SSL_CTX_free(ctx); /* the SSL keeps its own reference */
	return ssl;
}

/* The control connection under libevent once the handshake is done: over TLS, a bufferevent
 * on the same SSL, already open. Takes fd and ssl. */
static struct bufferevent *test_ctrl_bev(struct test *t, int fd, SSL *ssl)
{
	struct bufferevent *bev;

	if (ssl == NULL) {
		bev = bufferevent_socket_new(t->base, fd, BEV_OPT_CLOSE_ON_FREE);
		if (bev == NULL)
			close(fd);
		return bev;
	}
	bev = bufferevent_openssl_socket_new(t->base, fd, ssl, BUFFEREVENT_SSL_OPEN,
					     BEV_OPT_CLOSE_ON_FREE);
	/* On failure libevent has freed the SSL (BEV_OPT_CLOSE_ON_FREE) and may have closed fd:
	 * closing it again could hit another descriptor, so at worst it leaks until exit. */
	if (bev == NULL)
		return NULL;
	/* The server closes after its final stats without a TLS close_notify. */
	bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	return bev;
}

/* Connects the control connection to the server's addresses as RFC 8305 races them
 * (common/dial.c; -4/-6 keep one family), so a host whose IPv6 is broken falls back to IPv4
 * within 250 ms instead of after a whole connect timeout. The address used becomes t->sa.
 * The fd, or -1 with err: the last address's failure, and how many were tried. */
static int test_dial(struct test *t, char *err, size_t errlen)
{
	const struct client_config *cfg = t->cfg;
	struct sockaddr_storage sa[TEST_MAX_ADDRS];
	socklen_t len[TEST_MAX_ADDRS];
	int won, fd, n = sock_resolve_all(cfg->server_addr ? cfg->server_addr : cfg->server,
					  cfg->port, SOCK_STREAM, cfg->family, sa, len,
					  TEST_MAX_ADDRS, err, errlen);

	if (n < 0)
		return -1;
	dial_interleave(sa, len, n);
	fd = dial_race(sa, len, n, &cfg->local, DIAL_STAGGER_MS, CONNECT_TIMEOUT_MS, &won, err, errlen);
	if (fd >= 0) {
		t->sa = sa[won];
		t->salen = len[won];
		return fd;
	}
	if (n > 1) {
		size_t o = strlen(err);

		snprintf(err + o, errlen > o ? errlen - o : 0, " (and %d other address%s)", n - 1,
			 n == 2 ? "" : "es");
	}
	return -1;
}

/* Connects and performs the handshake; fills the cc and version parts of the result. */
static int test_connect(struct test *t, char *err, size_t errlen)
{
	const struct client_config *cfg = t->cfg;
	struct test_result *r = t->res;
	struct ctrl_secure sec = { NULL, NULL, cfg->tls_load };
	int fd;

	if (test_load_key(t, err, errlen) < 0)
		return -1;
	sec.psk = t->psk.n > 0 ? &t->psk.v[0] : NULL;
	fd = test_dial(t, err, errlen);
	if (fd < 0)
		return -1;
	sock_addr_str((struct sockaddr *)&t->sa, r->server_addr, sizeof(r->server_addr));
	(void)sock_set_nodelay(fd);
	if ((cfg->tls && (sec.ssl = test_tls(cfg, fd, err, errlen)) == NULL) ||
	    ctrl_handshake_secure(fd, &sec, cfg->cc, (int)ceil(test_total_s(t)) + 10,
				  HANDSHAKE_TIMEOUT_MS, &t->welcome, err, errlen) < 0) {
		r->server_busy = t->welcome.busy;
		SSL_free(sec.ssl);
		close(fd);
		return -1;
	}
	snprintf(r->server_version, sizeof(r->server_version), "%s", t->welcome.server_version);
	snprintf(r->udp_server_ts, sizeof(r->udp_server_ts), "%s", t->welcome.udp_ts);
	snprintf(r->cc.requested, sizeof(r->cc.requested), "%s", cfg->cc);
	r->cc.server_ok = t->welcome.cc_ok;
	snprintf(r->cc.server_used, sizeof(r->cc.server_used), "%s", t->welcome.cc_used);
	snprintf(r->cc.server_error, sizeof(r->cc.server_error), "%s", t->welcome.cc_error);
	if (cfg->flows > t->welcome.max_flows) {
		snprintf(err, errlen, "the server allows at most %d flows per direction (asked %d)",
			 t->welcome.max_flows, cfg->flows);
		SSL_free(sec.ssl);
		close(fd);
		return -1;
	}
	t->ctrl = test_ctrl_bev(t, fd, sec.ssl);
	if (t->ctrl == NULL) {
		snprintf(err, errlen, "cannot watch the control connection");
		return -1;
	}
	bufferevent_setcb(t->ctrl, test_ctrl_read_callback, NULL, test_ctrl_event_callback, t);
	return bufferevent_enable(t->ctrl, EV_READ);
}

static int test_start_probe(struct test *t, char *err, size_t errlen)
{
	struct udp_probe_config pc;

	memset(&pc, 0, sizeof(pc));
	memcpy(&pc.server, &t->sa, t->salen);
	pc.server_len = t->salen;
	if (pc.server.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&pc.server)->sin6_port = htons(t->welcome.udp_port);
	else
		((struct sockaddr_in *)&pc.server)->sin_port = htons(t->welcome.udp_port);
	memcpy(pc.token, t->welcome.token, WIRE_TOKEN_LEN);
	pc.interval_ns = (int64_t)(t->cfg->interval_ms * NS_PER_MS);
	pc.size = (size_t)t->cfg->probe_size;
	pc.max_probes = (size_t)((test_total_s(t) + 5) * NS_PER_SEC / (double)pc.interval_ns) + 16;
	pc.local = t->cfg->local;
	t->probe = udp_probe_start(&pc, err, errlen);
	return t->probe ? 0 : -1;
}

/* Maps server timestamps of upload samples onto the client clock. The smallest
 * (client receive − server send) is the offset plus the shortest one-way delay; using it keeps
 * rates exact (they use server time differences) and aligns samples within that delay.
 * Writes the r->nup mapped samples to out (which may be r->up itself). */
static void test_map_upload_times(const struct test *t, struct tput_rec *out)
{
	const struct test_result *r = t->res;
	int64_t off = INT64_MAX;

	for (size_t i = 0; i < r->nup; i++)
		if (r->up[i].t_ns - t->up_srv_t[i] < off)
			off = r->up[i].t_ns - t->up_srv_t[i];
	for (size_t i = 0; i < r->nup; i++)
		out[i] = (struct tput_rec){ t->up_srv_t[i] + off, r->up[i].bytes };
}

/* Says plainly when the load did not use the requested congestion control. */
static void test_warn_cc(struct test_result *r)
{
	const struct cc_report *cc = &r->cc;

	if (cc->requested[0] && cc->client_used[0] && !cc->client_ok)
		result_warn(r, "the client could not set %s on its load flows (%s); they used %s",
			    cc->requested, cc->client_error, cc->client_used);
	if (cc->requested[0] && !cc->server_ok)
		result_warn(r, "the server could not set %s on its load flows (%s); they used %s",
			    cc->requested, cc->server_error, cc->server_used);
}

static void test_cleanup(struct test *t)
{
	struct test_result *r = t->res;

	test_warn_cc(r);
	if (t->load) {
		test_note_tls(t);
		load_stop(t->load);
	}
	SSL_CTX_free(t->load_tls);
	if (t->probe) {
		unsigned long long late;

		if (!t->finishing)
			udp_probe_stop(t->probe, 0);
		r->probes_kernel_ts = udp_probe_kernel_stamps(t->probe);
		late = udp_probe_late_sends(t->probe);
		if (late > 0)
			result_warn(r, "%llu probe slot%s %s skipped because this host stalled", late,
				    late == 1 ? "" : "s", late == 1 ? "was" : "were");
		r->probes = udp_probe_free(t->probe, &r->nprobes);
	}
	probeset_finish(t->aux, r);
	test_map_upload_times(t, t->res->up);
	free(t->up_srv_t);
	if (t->tick)
		event_free(t->tick);
	if (t->bye_timeout)
		event_free(t->bye_timeout);
	if (t->ctrl)
		bufferevent_free(t->ctrl);
	auth_keys_free(&t->psk);
	if (t->base)
		event_base_free(t->base);
}

static struct probe_series *inflow_series(struct test_result *r, const char *name,
					   const char *addr)
{
	struct probe_series *ps = result_add_series(r, name, addr);

	if (ps) {
		ps->available = 1;
		snprintf(ps->method, sizeof(ps->method), "tcp in-flow");
	}
	return ps;
}

/* --tls-load: the load flows' own context, as trusting as the control connection's, with
 * kernel TLS asked for (the control connection's bufferevent keeps OpenSSL's user space). */
static int test_setup_load_tls(struct test *t, char *err, size_t errlen)
{
	t->res->tls_load.on = t->cfg->tls_load;
	if (!t->cfg->tls_load)
		return 0;
	t->load_tls = tls_client_ctx(t->cfg->tls_ca, t->cfg->tls_insecure, err, errlen);
	if (t->load_tls == NULL)
		return -1;
	tls_ctx_try_ktls(t->load_tls);
	t->load_opts.tls_ctx = t->load_tls;
	t->load_opts.tls_host = t->cfg->server;
	return 0;
}

/* Options of every phase's load: unmarked, room for the -P auto ramp, TLS (--tls-load) and
 * the in-flow probes, which ride on the load connections (their series exist for the whole
 * run). 0, or -1 with err. */
static int test_setup_load(struct test *t, char *err, size_t errlen)
{
	if (test_setup_load_tls(t, err, errlen) < 0)
		return -1;
	t->load_opts.dscp = -1; /* load flows stay unmarked; --dscp is for probes */
	t->load_opts.on_fail = test_load_failed;
	t->load_opts.fail_arg = t;
	t->load_opts.local = t->cfg->local;
	/* A server's cap: our uploads pace to it, and the analysis reads a capped rate. */
	t->load_opts.max_rate_bps = t->welcome.max_rate_bps;
	t->res->server_max_rate_bps = t->welcome.max_rate_bps;
	if (t->cfg->flows_auto) {
		t->max_auto = t->welcome.max_flows < AUTO_MAX_FLOWS ? t->welcome.max_flows : AUTO_MAX_FLOWS;
		t->load_opts.max_flows = 2 * t->max_auto;
	}
	if (t->cfg->probes & PROBE_BIT(PROBE_INFLOW))
		test_inflow_on(t);
	return 0;
}

/* The run failed after its schedule started: close the phase that was running at the failure
 * so what it measured counts, and mark the result partial. */
static void test_abort(struct test *t)
{
	int64_t now = clock_mono_ns();
	int running = t->cur < t->nsteps ? t->steps[t->cur].kind : -1;

	if (t->finishing)
		running = -1; /* the schedule had ended: only the bye was missing */
	else if (running >= 0)
		test_end_step(t, now);
	/* After an outage the running phase covers the time the path answered, not the silence
	 * that told us it was gone. */
	if (t->outage && running >= 0 && t->res->nphases > 0) {
		struct phase_result *ph = &t->res->phases[t->res->nphases - 1];

		if (t->live.last_ns > ph->start_ns && t->live.last_ns < ph->end_ns)
			ph->end_ns = t->live.last_ns;
	}
	result_abort(t->res, running, now, t->err);
}

int measure_run(const struct client_config *cfg, struct test_result *res, char *err, size_t errlen)
{
	struct test t;
	struct event_config *ec = event_config_new();
	struct timeval tv = { 0, TICK_MS * 1000 };
	int rc = -1;

	memset(&t, 0, sizeof(t));
	t.cfg = cfg;
	t.res = res;
	t.progress = !cfg->quiet && isatty(STDERR_FILENO);
	t.progress_lines = !cfg->quiet && !t.progress;
	t.srv_cpu_ns = -1;
	test_build_schedule(&t);
	if (ec)
		event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER);
	t.base = ec ? event_base_new_with_config(ec) : NULL;
	if (ec)
		event_config_free(ec);
	if (t.base == NULL) {
		snprintf(err, errlen, "cannot create the event loop");
		return -1;
	}
	if (t.progress || t.progress_lines)
		fprintf(stderr, "bloatmeter: connecting to %s%s", cfg->server,
			t.progress ? "…\r" : "\n");
	if (test_connect(&t, err, errlen) < 0 || test_start_probe(&t, err, errlen) < 0)
		goto out;
	t.aux = probeset_start(cfg, &t.sa, t.salen, &t.welcome, res, err, errlen);
	if (t.aux == NULL)
		goto out;
	probeadapt_init(&t.adapt, cfg, test_ipv6(&t));
	res->probe_ip_hdr = t.adapt.mix.ip_hdr;
	probeset_mix(t.aux, &t.adapt.mix);
	if (test_setup_load(&t, err, errlen) < 0)
		goto out;
	/* Every probe socket and the capture are open (the load flows open per phase): -Z. */
	if (dropuser_apply(cfg->run_as, cfg->cc, err, errlen) < 0)
		goto out;
	res->start_real_ns = clock_real_ns();
	res->t0_ns = clock_mono_ns();
	t.tick = event_new(t.base, -1, EV_PERSIST, test_tick_callback, &t);
	if (t.tick == NULL || event_add(t.tick, &tv) < 0) {
		snprintf(err, errlen, "cannot arm the phase timer");
		goto out;
	}
	liveness_init(&t.live, res->t0_ns);
	test_begin_step(&t, res->t0_ns);
	if (!t.failed && event_base_dispatch(t.base) < 0)
		test_fail(&t, "event loop failure");
	if (t.failed) {
		snprintf(err, errlen, "%s", t.err);
		test_abort(&t);
		rc = 1;
		goto out;
	}
	rc = 0;
out:
	if (t.progress && t.prog_t)
		fputc('\n', stderr);
	test_cleanup(&t);
	return rc;
}

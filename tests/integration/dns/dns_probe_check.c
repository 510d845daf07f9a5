/* dns_probe_check: runs the client's DNS probe (probes/dns.c) on a probe runner against a
 * live responder for a while, prints what it measured, and exits 0 only if the share of
 * SAMPLE_OK answers lies in [min%, max%] and every RTT is sane (0 < rtt < 200 ms).
 * Usage: dns_probe_check ADDR PORT ZONE A|AAAA|TXT INTERVAL_MS DURATION_MS MIN_OK_PCT [MAX_OK_PCT] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/dns.h"
#include "common/log.h"
#include "common/sock.h"
#include "common/util.h"
#include "probes/dns.h"
#include "probes/runner.h"
#include "probes/series.h"

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static uint16_t parse_qtype(const char *s)
{
	if (strcmp(s, "A") == 0)
		return DNS_TYPE_A;
	if (strcmp(s, "AAAA") == 0)
		return DNS_TYPE_AAAA;
	if (strcmp(s, "TXT") == 0)
		return DNS_TYPE_TXT;
	fprintf(stderr, "dns_probe_check: unknown type %s\n", s);
	exit(2);
}

/* Runs the probe for duration_ms; the series is final (runner freed) on return. */
static int run_probe(const struct dns_probe_config *cfg, long duration_ms, struct probe_series *ps)
{
	struct timespec ts = { duration_ms / 1000, duration_ms % 1000 * 1000000 };
	char err[256];
	struct probe_runner *r = runner_new(err, sizeof(err));
	struct dns_probe *p;

	if (r == NULL) {
		fprintf(stderr, "dns_probe_check: %s\n", err);
		return -1;
	}
	p = dns_probe_start(runner_base(r), cfg, ps, err, sizeof(err));
	if (p != NULL && runner_add(r, p, &dns_probe_ops) < 0) {
		dns_probe_ops.destroy(p);
		p = NULL;
		snprintf(err, sizeof(err), "cannot add the probe to the runner");
	}
	if (p == NULL || runner_start(r, err, sizeof(err)) < 0) {
		fprintf(stderr, "dns_probe_check: %s\n", err);
		runner_free(r);
		return -1;
	}
	while (nanosleep(&ts, &ts) < 0)
		;
	/* Grace longer than the timeout: every query is answered or expired by the end. */
	runner_stop(r, cfg->timeout_ns + 100 * NS_PER_MS);
	runner_free(r);
	return 0;
}

int main(int argc, char **argv)
{
	struct dns_probe_config cfg;
	struct probe_series ps;
	long port, interval_ms, duration_ms, min_pct, max_pct = 100;
	size_t ok = 0, lost = 0, error = 0, pending = 0, insane = 0, nrtt = 0;
	int64_t *rtt;
	char err[256];
	double pct;

	if (argc < 8 || argc > 9 || util_parse_long(argv[2], 1, 65535, &port) < 0 ||
	    util_parse_long(argv[5], 1, 10000, &interval_ms) < 0 ||
	    util_parse_long(argv[6], 1, 60000, &duration_ms) < 0 ||
	    util_parse_long(argv[7], 0, 100, &min_pct) < 0 ||
	    (argc == 9 && util_parse_long(argv[8], 0, 100, &max_pct) < 0)) {
		fprintf(stderr, "usage: dns_probe_check ADDR PORT ZONE A|AAAA|TXT INTERVAL_MS "
				"DURATION_MS MIN_OK_PCT [MAX_OK_PCT]\n");
		return 2;
	}
	log_init("dns_probe_check", LOG_LVL_WARN);
	memset(&cfg, 0, sizeof(cfg));
	if (sock_resolve(argv[1], (uint16_t)port, SOCK_DGRAM, &cfg.server, &cfg.server_len, err,
			 sizeof(err)) < 0) {
		fprintf(stderr, "dns_probe_check: %s\n", err);
		return 2;
	}
	snprintf(cfg.zone, sizeof(cfg.zone), "%s", argv[3]);
	cfg.qtype = parse_qtype(argv[4]);
	cfg.interval_ns = interval_ms * NS_PER_MS;
	cfg.timeout_ns = 500 * NS_PER_MS;
	cfg.dscp = -1;
	series_init(&ps, "dns", "");
	if (run_probe(&cfg, duration_ms, &ps) < 0)
		return 1;
	rtt = calloc(ps.n ? ps.n : 1, sizeof(*rtt));
	if (rtt == NULL)
		return 1;
	for (size_t i = 0; i < ps.n; i++) {
		const struct rtt_sample *s = &ps.s[i];

		if (s->status == SAMPLE_OK) {
			ok++;
			rtt[nrtt++] = s->rtt_ns;
			if (s->rtt_ns <= 0 || s->rtt_ns >= 200 * NS_PER_MS || s->aux != DNS_RCODE_NOERROR)
				insane++;
		} else if (s->status == SAMPLE_LOST) {
			lost++;
		} else if (s->status == SAMPLE_ERROR) {
			error++;
		} else {
			pending++;
		}
	}
	qsort(rtt, nrtt, sizeof(*rtt), cmp_i64);
	pct = ps.n ? 100.0 * (double)ok / (double)ps.n : 0;
	printf("dns probe %s %s via %s (%s): %zu sent, %zu ok (%.1f %%), %zu lost, %zu error, "
	       "%zu pending, %llu bad replies; rtt min %.3f / median %.3f / max %.3f ms; "
	       "%zu insane\n",
	       ps.target, argv[4], ps.method, ps.available ? "available" : "unavailable", ps.n, ok,
	       pct, lost, error, pending, (unsigned long long)ps.bad_replies,
	       nrtt ? ns_to_ms(rtt[0]) : 0.0, nrtt ? ns_to_ms(rtt[nrtt / 2]) : 0.0,
	       nrtt ? ns_to_ms(rtt[nrtt - 1]) : 0.0, insane);
	free(rtt);
	if (ps.n == 0 || pct < (double)min_pct || pct > (double)max_pct || insane || pending ||
	    error) {
		printf("FAIL: expected %ld..%ld %% ok with sane RTTs\n", min_pct, max_pct);
		series_free(&ps);
		return 1;
	}
	series_free(&ps);
	return 0;
}

/* icmp_check: the integration driver check_icmp.sh runs inside the client namespace. It does
 * what the client will: finds the first hop with route_lookup(), then probes the far host and
 * that gateway on one runner, and checks the samples against what the namespaces guarantee.
 *   icmp_check path FAR GATEWAY IFNAME METHOD   route via GATEWAY on IFNAME, >= 90 % answered
 *   icmp_check unreach TARGET METHOD MIN_PCT    >= MIN_PCT % SAMPLE_ERROR, none answered
 * METHOD is the socket kind the probe must have chosen ("raw socket" or "ping socket"). Exit
 * status 0 when every check holds. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/thread.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/route.h"
#include "common/sock.h"
#include "common/util.h"
#include "probes/icmp.h"
#include "probes/runner.h"
#include "probes/series.h"

#define CHECK_INTERVAL_NS (20 * NS_PER_MS)
#define CHECK_RUN_NS NS_PER_SEC
#define CHECK_TIMEOUT_NS NS_PER_SEC
#define CHECK_GRACE_NS (300 * NS_PER_MS)
#define CHECK_MEDIAN_MAX_NS (20 * NS_PER_MS) /* veths answer in microseconds; allow load */
#define CHECK_MIN_SAMPLES 40                 /* 1 s at 20 ms, minus a slow start */

static int parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, s, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		*len = sizeof(*sin);
		return 0;
	}
	if (inet_pton(AF_INET6, s, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		*len = sizeof(*sin6);
		return 0;
	}
	fprintf(stderr, "icmp_check: not an IP address: %s\n", s);
	return -1;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

struct tally {
	size_t sent, ok, lost, error;
	int64_t min, median, max;
	int aux;  /* the last error's type << 8 | code */
};

static void tally_series(const struct probe_series *ps, struct tally *t)
{
	int64_t *rtt = calloc(ps->n ? ps->n : 1, sizeof(*rtt));

	memset(t, 0, sizeof(*t));
	if (rtt == NULL)
		fatalx("out of memory");
	t->sent = ps->n;
	for (size_t i = 0; i < ps->n; i++) {
		switch (ps->s[i].status) {
		case SAMPLE_OK:
			rtt[t->ok++] = ps->s[i].rtt_ns;
			break;
		case SAMPLE_ERROR:
			t->error++;
			t->aux = ps->s[i].aux;
			break;
		default:
			t->lost++;
			break;
		}
	}
	if (t->ok) {
		qsort(rtt, t->ok, sizeof(*rtt), cmp_i64);
		t->min = rtt[0];
		t->median = rtt[t->ok / 2];
		t->max = rtt[t->ok - 1];
	}
	free(rtt);
}

static void print_series(const struct probe_series *ps, const struct tally *t)
{
	printf("%s %s via %s: sent %zu ok %zu lost %zu error %zu (last type %d code %d) bad %llu",
	       ps->name, ps->target, ps->method, t->sent, t->ok, t->lost, t->error, t->aux >> 8,
	       t->aux & 0xff, (unsigned long long)ps->bad_replies);
	if (t->ok)
		printf(" rtt min/median/max %.3f/%.3f/%.3f ms", ns_to_ms(t->min),
		       ns_to_ms(t->median), ns_to_ms(t->max));
	printf("\n");
}

/* Probes every target for CHECK_RUN_NS on one runner, as the client does. */
static int run_probes(struct probe_series *ps, const struct sockaddr_storage *targets,
		      const socklen_t *lens, int n)
{
	struct timespec run = { CHECK_RUN_NS / NS_PER_SEC, CHECK_RUN_NS % NS_PER_SEC };
	char err[256];
	struct probe_runner *r = runner_new(err, sizeof(err));

	if (r == NULL) {
		fprintf(stderr, "icmp_check: %s\n", err);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		struct icmp_probe_config cfg = { .target = targets[i], .target_len = lens[i],
						 .interval_ns = CHECK_INTERVAL_NS,
						 .timeout_ns = CHECK_TIMEOUT_NS, .size = 0,
						 .dscp = -1 };
		struct icmp_probe *p = icmp_probe_start(runner_base(r), &cfg, &ps[i], err,
							sizeof(err));

		if (p == NULL || runner_add(r, p, &icmp_probe_ops) < 0) {
			fprintf(stderr, "icmp_check: %s: %s\n", ps[i].target,
				p ? "runner full" : err);
			if (p)
				icmp_probe_ops.destroy(p);
			runner_free(r);
			return -1;
		}
	}
	if (runner_start(r, err, sizeof(err)) < 0) {
		fprintf(stderr, "icmp_check: %s\n", err);
		runner_free(r);
		return -1;
	}
	nanosleep(&run, NULL);
	runner_stop(r, CHECK_GRACE_NS);
	runner_free(r);
	return 0;
}

static int expect_answers(const struct probe_series *ps, const char *method)
{
	struct tally t;
	int fail = 0;

	tally_series(ps, &t);
	print_series(ps, &t);
	if (strcmp(ps->method, method) != 0) {
		printf("FAIL %s: method %s, want %s\n", ps->target, ps->method, method);
		fail = 1;
	}
	if (t.sent < CHECK_MIN_SAMPLES || t.ok * 10 < t.sent * 9) {
		printf("FAIL %s: %zu of %zu answered (want >= 90 %% of >= %d)\n", ps->target, t.ok,
		       t.sent, CHECK_MIN_SAMPLES);
		fail = 1;
	}
	if (t.ok && (t.min <= 0 || t.median > CHECK_MEDIAN_MAX_NS)) {
		printf("FAIL %s: implausible RTTs\n", ps->target);
		fail = 1;
	}
	if (ps->bad_replies) {
		printf("FAIL %s: %llu bad replies on a quiet link\n", ps->target,
		       (unsigned long long)ps->bad_replies);
		fail = 1;
	}
	return fail;
}

static int check_path(char **argv)
{
	struct sockaddr_storage far, want_gw, targets[2];
	socklen_t far_len, want_len, lens[2];
	struct probe_series ps[2];
	struct route_info ri;
	char err[256], gw[SOCK_ADDRSTRLEN], src[SOCK_ADDRSTRLEN], farstr[SOCK_ADDRSTRLEN];
	int fail = 0;

	if (parse_addr(argv[0], &far, &far_len) < 0 || parse_addr(argv[1], &want_gw, &want_len) < 0)
		return 2;
	if (route_lookup(&far, &ri, err, sizeof(err)) < 0) {
		printf("FAIL route_lookup: %s\n", err);
		return 1;
	}
	sock_addr_str((struct sockaddr *)&far, farstr, sizeof(farstr));
	snprintf(gw, sizeof(gw), "(none)");
	if (ri.has_gateway)
		sock_addr_str((struct sockaddr *)&ri.gateway, gw, sizeof(gw));
	snprintf(src, sizeof(src), "(none)");
	if (ri.src.ss_family != AF_UNSPEC)
		sock_addr_str((struct sockaddr *)&ri.src, src, sizeof(src));
	printf("route %s via %s dev %s (index %d) src %s\n", farstr, gw, ri.ifname, ri.ifindex,
	       src);
	if (!ri.has_gateway ||
	    !sock_same_ip((struct sockaddr *)&ri.gateway, (struct sockaddr *)&want_gw) ||
	    strcmp(ri.ifname, argv[2]) != 0) {
		printf("FAIL route: want via %s dev %s\n", argv[1], argv[2]);
		return 1;
	}
	targets[0] = far;
	lens[0] = far_len;
	targets[1] = ri.gateway;
	lens[1] = ri.gateway_len;
	series_init(&ps[0], "icmp", farstr);
	series_init(&ps[1], "icmp_hop", gw);
	if (run_probes(ps, targets, lens, 2) < 0)
		return 1;
	fail |= expect_answers(&ps[0], argv[3]);
	fail |= expect_answers(&ps[1], argv[3]);
	series_free(&ps[0]);
	series_free(&ps[1]);
	return fail;
}

static int check_unreach(char **argv)
{
	struct sockaddr_storage target;
	socklen_t len;
	struct probe_series ps;
	struct tally t;
	long min_pct;
	int fail = 0;

	if (parse_addr(argv[0], &target, &len) < 0 ||
	    util_parse_long(argv[2], 1, 100, &min_pct) < 0)
		return 2;
	series_init(&ps, "icmp", argv[0]);
	if (run_probes(&ps, &target, &len, 1) < 0)
		return 1;
	tally_series(&ps, &t);
	print_series(&ps, &t);
	if (strcmp(ps.method, argv[1]) != 0) {
		printf("FAIL %s: method %s, want %s\n", argv[0], ps.method, argv[1]);
		fail = 1;
	}
	if (t.sent < CHECK_MIN_SAMPLES || t.ok != 0 || t.error * 100 < t.sent * (size_t)min_pct) {
		printf("FAIL %s: %zu of %zu ICMP errors, %zu answered (want >= %ld %% errors)\n",
		       argv[0], t.error, t.sent, t.ok, min_pct);
		fail = 1;
	}
	if (ps.bad_replies) {
		printf("FAIL %s: %llu bad replies\n", argv[0], (unsigned long long)ps.bad_replies);
		fail = 1;
	}
	series_free(&ps);
	return fail;
}

int main(int argc, char **argv)
{
	log_init("icmp_check", LOG_LVL_INFO);
	if (evthread_use_pthreads() < 0)
		fatalx("libevent has no pthreads support");
	if (argc == 6 && strcmp(argv[1], "path") == 0)
		return check_path(argv + 2);
	if (argc == 5 && strcmp(argv[1], "unreach") == 0)
		return check_unreach(argv + 2);
	fprintf(stderr, "usage: icmp_check path FAR GATEWAY IFNAME METHOD\n"
			"       icmp_check unreach TARGET METHOD MIN_PCT\n");
	return 2;
}

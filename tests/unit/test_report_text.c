/* Unit tests for the default text summary (client/report/text.c, verdict.c, format.c): it
 * opens with the verdict — grade, per direction the added latency, the buffer (≥ for a bound)
 * and the throughput, and one line of advice — within its first 12 lines, and no line of the
 * default output is wider than 80 columns, even with long warnings and a lab truth. -v adds
 * the details. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "client/model/config.h"
#include "client/model/result.h"
#include "client/report/format.h"
#include "client/report/text.h"
#include "client/report/wording.h"
#include "common/clock.h"

static void phase(struct test_result *r, enum phase_kind k, double down, double up,
		  double p50, double inc)
{
	struct phase_result *ph = &r->phases[r->nphases++];

	ph->kind = k;
	ph->saturated = 1;
	ph->down_mbps = down;
	ph->up_mbps = up;
	ph->rtt_ms = (struct stats_summary){ .n = 500, .min = p50 - 1, .p50 = p50, .p90 = p50 + 1,
					     .p95 = p50 + 2, .p99 = p50 + 3, .max = p50 + 4 };
	ph->latency_increase_ms = inc;
	ph->loss_up_pct = 0;
	ph->loss_down_pct = 0.2;
	ph->retrans_up = ph->retrans_down = -1;
	ph->recovery_ms = NAN;
	ph->loss_up.cls = ph->loss_down.cls = "none";
}

static void sample_result(struct test_result *r, struct client_config *cfg, int verbose)
{
	config_defaults(cfg);
	cfg->verbose = verbose;
	result_init(r, cfg);
	snprintf(r->server_addr, sizeof(r->server_addr), "[2001:db8::77]:4750");
	r->rtt0_ms = 0.3;
	phase(r, PHASE_IDLE, NAN, NAN, 0.4, NAN);
	phase(r, PHASE_DOWNLOAD, 19.04, NAN, 95, 94.6);
	phase(r, PHASE_UPLOAD, NAN, 9.41, 45.6, 45.2);
	phase(r, PHASE_BIDIR, 18.8, 9.1, 112.8, 112.4);
	r->phases[1].grade = "C";
	r->phases[2].grade = "B";
	r->phases[3].grade = "C";
	r->grade_overall = "C";
	r->shaper_down_mbps = 17.7;
	r->shaper_up_mbps = 8.8;
	r->buffer_down = (struct buffer_estimate){ .valid = 1, .phase = PHASE_DOWNLOAD, .ms = 99.9,
						   .bytes = 244800, .samples = 800, .method = "m" };
	r->buffer_up = (struct buffer_estimate){ .valid = 1, .phase = PHASE_UPLOAD, .ms = 49.0,
						 .bytes = 60100, .samples = 800, .lower_bound = 1,
						 .lower_bound_why = "bbr", .method = "m" };
	result_warn(r, "bbr keeps the queue short, so the uplink buffer is at least 49.0 ms; run with --cc cubic (as root) to see it, or read the interval, which is wide when the top of the queue varies from second to second");
	result_warn(r, "the probes used about 152 kbit/s, 18.4 %% of the measured uplink capacity (more than 5 %%); their share of the link lowers the measured goodput");
	r->lab = 1;
	r->truth = (struct lab_truth){ .down_rate_bps = 20000000, .up_rate_bps = 10000000,
				       .down_buffer_ms = 100, .up_buffer_ms = 50,
				       .down_limit_bytes = 250000, .up_limit_bytes = 62500 };
}

/* The text of report_text for r, in a malloc'ed string. */
static char *render(const struct test_result *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	report_text(r, f);
	assert_int_equal(fclose(f), 0);
	return buf;
}

/* Line n (0-based) of s into out; -1 past the end. */
static int line_at(const char *s, int n, char *out, size_t len)
{
	for (int i = 0; i < n; i++) {
		s = strchr(s, '\n');
		if (s == NULL || *++s == '\0')
			return -1;
	}
	snprintf(out, len, "%.*s", (int)strcspn(s, "\n"), s);
	return 0;
}

static void test_verdict_first_within_80_columns(void **state)
{
	struct client_config cfg;
	struct test_result r;
	char *txt, line[512], first12[4096] = "";
	int n;

	(void)state;
	sample_result(&r, &cfg, 0);
	txt = render(&r);
	for (n = 0; line_at(txt, n, line, sizeof(line)) == 0; n++) {
		if (report_width(line) > 80)
			fail_msg("line %d is %d columns: %s", n + 1, report_width(line), line);
		if (n < 12) {
			strcat(first12, line);
			strcat(first12, "\n");
		}
	}
	assert_true(strncmp(txt, "Bufferbloat  grade C", 20) == 0);
	assert_non_null(strstr(first12, "Download     19.0 Mbit/s, +94.6 ms latency, buffer 99.9 ms (245 kB)"));
	assert_non_null(strstr(first12, "Upload       9.4 Mbit/s, +45.2 ms latency, buffer ≥ 49.0 ms (60 kB)"));
	assert_non_null(strstr(first12, "Advice       shape to 17.7 down / 8.8 up Mbit/s"));
	/* The lab truth and every warning are there, wrapped. */
	assert_non_null(strstr(txt, "Lab truth    queue    tbf per direction; router\n"));
	assert_non_null(strstr(txt, "             downlink 20.0 Mbit/s, buffer 100 ms: measured 99.9 ms (-0.1 %)"));
	assert_non_null(strstr(txt, "warning: bbr keeps the queue short"));
	assert_non_null(strstr(txt, "lowers the measured goodput"));
	/* Details wait for -v. */
	assert_null(strstr(txt, "Grade (latency increase"));
	free(txt);
	result_free(&r);
}

static void test_verbose_adds_details(void **state)
{
	struct client_config cfg;
	struct test_result r;
	char *txt;

	(void)state;
	sample_result(&r, &cfg, 1);
	txt = render(&r);
	assert_true(strncmp(txt, "Bufferbloat  grade C", 20) == 0);
	assert_non_null(strstr(txt, "Grade (latency increase"));
	assert_non_null(strstr(txt, "Lab ground truth"));
	free(txt);
	result_free(&r);
}

/* An A grade says there is nothing to fix; no loaded phase: not graded. */
static void test_advice_and_ungraded(void **state)
{
	struct client_config cfg;
	struct test_result r;
	char *txt;

	(void)state;
	sample_result(&r, &cfg, 0);
	r.grade_overall = "A";
	txt = render(&r);
	assert_non_null(strstr(txt, "Advice       no bufferbloat to fix"));
	free(txt);
	result_free(&r);
	sample_result(&r, &cfg, 0);
	r.nphases = 1;
	r.grade_overall = NULL;
	r.buffer_down.valid = r.buffer_up.valid = 0;
	txt = render(&r);
	assert_true(strncmp(txt, "Bufferbloat  not graded", 23) == 0);
	assert_null(strstr(txt, "Advice"));
	free(txt);
	result_free(&r);
	/* Idle only, with -v: no empty retransmission and recovery lines. */
	sample_result(&r, &cfg, 1);
	r.nphases = 1;
	r.grade_overall = NULL;
	txt = render(&r);
	assert_null(strstr(txt, "TCP retransmissions"));
	assert_null(strstr(txt, "Recovery ("));
	free(txt);
	result_free(&r);
}

/* A partial run opens with where it stopped and, next to it, when the replies stopped (the
 * outage as the client saw it) and which direction was loaded. */
static void test_partial_says_when_replies_stopped(void **state)
{
	struct client_config cfg;
	struct test_result r;
	char *txt;

	(void)state;
	sample_result(&r, &cfg, 0);
	r.t0_ns = 1000 * NS_PER_SEC;
	r.probes = calloc(2, sizeof(*r.probes));
	assert_non_null(r.probes);
	r.nprobes = 2;
	r.probes[0] = (struct probe_rec){ .received = 1, .send_ns = r.t0_ns + 11 * NS_PER_SEC,
					  .rtt_ns = NS_PER_SEC / 10 };
	r.probes[1] = (struct probe_rec){ .received = 1, .send_ns = r.t0_ns + 12 * NS_PER_SEC,
					  .rtt_ns = NS_PER_SEC / 10 };
	result_abort(&r, PHASE_UPLOAD, r.t0_ns + 22 * NS_PER_SEC + NS_PER_SEC / 10,
		     "load flows could not connect within 5000 ms");
	txt = render(&r);
	assert_true(strncmp(txt, "Stopped      load flows could not connect", 41) == 0);
	assert_non_null(strstr(txt, "\nLast reply   12.1 s in, 10.0 s before the stop (replies stopped there); load up\n"
				    "Bufferbloat  grade C"));
	free(txt);
	/* No reply at all: said so. */
	r.probes[0].received = r.probes[1].received = 0;
	txt = render(&r);
	assert_non_null(strstr(txt, "\nLast reply   none: no probe reply arrived; load up\n"));
	free(txt);
	result_free(&r);
}

/* The HTTP mode asks no server for a congestion control (cc.server_ok stays 0): its end is
 * named as the server said, or "default", and never as a refused request. */
static void test_http_server_cc_not_refused(void **state)
{
	struct test_result r = { 0 };
	char buf[200];

	(void)state;
	r.http = 1;
	snprintf(r.cc.requested, sizeof(r.cc.requested), "cubic");
	r.cc.client_ok = 1;
	snprintf(r.cc.client_used, sizeof(r.cc.client_used), "cubic");
	wording_cc(&r, buf, sizeof(buf));
	assert_string_equal(buf, "cc client cubic, server default");
	snprintf(r.cc.server_used, sizeof(r.cc.server_used), "cubic");
	wording_cc(&r, buf, sizeof(buf));
	assert_string_equal(buf, "cc cubic (both ends)");
	wording_cc_end(&r, 1, 1, buf, sizeof(buf));
	assert_string_equal(buf, "cubic");
	/* The binary protocol's server was asked: its refusal is still said. */
	r.http = 0;
	snprintf(r.cc.server_used, sizeof(r.cc.server_used), "reno");
	wording_cc_end(&r, 1, 0, buf, sizeof(buf));
	assert_string_equal(buf, "reno (cubic refused)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verdict_first_within_80_columns),
		cmocka_unit_test(test_verbose_adds_details),
		cmocka_unit_test(test_advice_and_ungraded),
		cmocka_unit_test(test_partial_says_when_replies_stopped),
		cmocka_unit_test(test_http_server_cc_not_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for the queue verdicts, ECN and per-hop figures in the Prometheus textfile
 * (client/report/prom.c) and the HTML page (html.c, html_queue.c), and for the lab's
 * bottleneck as the text and HTML reports state it (wording.c): a synthetic run with a FIFO
 * downlink, a marking AQM uplink, three hops with the queue at hop 3, and an ECN-marking CoDel
 * with 10 ms of added delay in the lab. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "client/model/config.h"
#include "client/model/result.h"
#include "client/report/html.h"
#include "client/report/prom.h"
#include "client/report/text.h"

static void phase(struct test_result *r, enum phase_kind k)
{
	struct phase_result *ph = &r->phases[r->nphases++];

	ph->kind = k;
	ph->saturated = 1;
	ph->down_mbps = k == PHASE_DOWNLOAD ? 19 : NAN;
	ph->up_mbps = k == PHASE_UPLOAD ? 9 : NAN;
	ph->rtt_ms = (struct stats_summary){ .n = 100, .min = 10, .p50 = 20, .p90 = 30, .p95 = 31,
					     .p99 = 32, .max = 33 };
	ph->latency_increase_ms = k == PHASE_IDLE ? NAN : 10;
	ph->retrans_up = ph->retrans_down = -1;
	ph->recovery_ms = NAN;
	ph->loss_up.cls = ph->loss_down.cls = "none";
}

static void hop(struct test_result *r, int h, const char *addr, double idle, double up)
{
	struct hop_row *row = &r->hops.row[h];

	snprintf(row->addr, sizeof(row->addr), "%s", addr);
	row->idle_ms = idle;
	row->idle_loss_pct = 0;
	for (int k = 0; k < PHASE_KINDS; k++)
		row->loaded_ms[k] = row->increase_ms[k] = row->loss_pct[k] = NAN;
	row->loaded_ms[PHASE_UPLOAD] = up;
	row->increase_ms[PHASE_UPLOAD] = up - idle;
	row->loss_pct[PHASE_UPLOAD] = 0;
}

static void sample(struct test_result *r, struct client_config *cfg, int verbose)
{
	config_defaults(cfg);
	cfg->verbose = verbose;
	result_init(r, cfg);
	snprintf(r->server_addr, sizeof(r->server_addr), "10.0.0.3:4750");
	r->rtt0_ms = 10;
	phase(r, PHASE_IDLE);
	phase(r, PHASE_DOWNLOAD);
	phase(r, PHASE_UPLOAD);
	r->queue_down = (struct queue_verdict){ .verdict = "fifo", .evidence = "drops at the top",
						.standing_ms = 95, .floor_ms = 90, .top_ms = 100,
						.q_before_loss_ms = 99, .flow_q_ms = 96,
						.probe_losses = 7, .retrans = 40, .ce = -1,
						.signal = "drops" };
	r->queue_up = (struct queue_verdict){ .verdict = "aqm", .evidence = "marks near 5 ms",
					      .standing_ms = 6.5, .floor_ms = 5, .top_ms = 30,
					      .q_before_loss_ms = NAN, .flow_q_ms = 7,
					      .retrans = 0, .ce = 812, .signal = "marks" };
	r->ecn = (struct ecn_report){ .requested = 1, .enabled = 1, .sysctl = 1, .how = "tcp_ecn 1",
				      .flows = 8, .flows_ecn = 8, .ce_down = 0, .ce_up = 812,
				      .retrans = 0, .verdict = "marks",
				      .evidence = "812 CE marks, 0 retransmissions" };
	r->hops.ran = 1;
	r->hops.n = 3;
	hop(r, 0, "10.0.1.1", 1.0, 1.2);
	hop(r, 1, "10.0.2.2", 2.0, 2.5);
	hop(r, 2, "10.0.0.3", 10.0, 70.0);
	r->hops.queue_hop = 3;
	r->hops.queue_phase = PHASE_UPLOAD;
	r->hops.queue_increase_ms = 60;
	snprintf(r->hops.verdict, sizeof(r->hops.verdict),
		 "the queue builds between hop 2 (10.0.2.2) and hop 3 (10.0.0.3)");
	r->hop_trace.mode = HOP_MODE_UDP;
	snprintf(r->hop_trace.method, sizeof(r->hop_trace.method), "udp");
	r->lab = 1;
	r->truth = (struct lab_truth){ .down_rate_bps = 20000000, .up_rate_bps = 20000000,
				       .down_buffer_ms = 200, .up_buffer_ms = 200,
				       .qdisc = "codel", .hop = "router: userspace on tund and tunu",
				       .ecn_mark = 1, .delay_ms = 10, .nparams = 2 };
	r->truth.params[0] = (struct lab_qdisc_param){ "target_ms", 5 };
	r->truth.params[1] = (struct lab_qdisc_param){ "interval_ms", 100 };
}

/* The whole of a file, malloc'ed. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n >= 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* What writer makes of r, read back from a temporary file. */
static char *render_file(const struct test_result *r,
			 int (*writer)(const struct test_result *, const char *))
{
	char path[] = "/tmp/bm-test-report-XXXXXX";
	int fd = mkstemp(path);
	char *s;

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(writer(r, path), 0);
	s = slurp(path);
	unlink(path);
	return s;
}

/* Lines of s that start with prefix. */
static int count_prefix(const char *s, const char *prefix)
{
	int n = 0;

	for (const char *p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		n += strncmp(p, prefix, strlen(prefix)) == 0;
	return n;
}

static void test_prometheus_queue_ecn_hops(void **state)
{
	struct client_config cfg;
	struct test_result r;
	char *s;

	(void)state;
	sample(&r, &cfg, 0);
	s = render_file(&r, prom_write);
	/* a state set: every verdict once per loaded direction, 1 only for the one given */
	assert_int_equal(count_prefix(s, "bloatmeter_queue_verdict{"), 10);
	assert_non_null(strstr(s, "\nbloatmeter_queue_verdict{server=\"10.0.0.3:4750\",direction=\"down\",verdict=\"fifo\"} 1\n"));
	assert_non_null(strstr(s, "\nbloatmeter_queue_verdict{server=\"10.0.0.3:4750\",direction=\"down\",verdict=\"aqm\"} 0\n"));
	assert_non_null(strstr(s, "\nbloatmeter_queue_verdict{server=\"10.0.0.3:4750\",direction=\"up\",verdict=\"aqm\"} 1\n"));
	assert_non_null(strstr(s, "\nbloatmeter_queue_verdict{server=\"10.0.0.3:4750\",direction=\"up\",verdict=\"fifo\"} 0\n"));
	assert_non_null(strstr(s, "\nbloatmeter_queue_standing_seconds{server=\"10.0.0.3:4750\",direction=\"up\"} 0.0065\n"));
	/* an unknown count is left out, not written as -1 */
	assert_int_equal(count_prefix(s, "bloatmeter_queue_ce_marks{"), 1);
	assert_non_null(strstr(s, "\nbloatmeter_queue_ce_marks{server=\"10.0.0.3:4750\",direction=\"up\"} 812\n"));
	assert_non_null(strstr(s, "\nbloatmeter_ecn_verdict{server=\"10.0.0.3:4750\",verdict=\"marks\"} 1\n"));
	assert_non_null(strstr(s, "\nbloatmeter_ecn_verdict{server=\"10.0.0.3:4750\",verdict=\"drops\"} 0\n"));
	assert_non_null(strstr(s, "\nbloatmeter_ecn_flows{server=\"10.0.0.3:4750\",negotiated=\"yes\"} 8\n"));
	assert_non_null(strstr(s, "\nbloatmeter_hop_latency_increase_seconds{server=\"10.0.0.3:4750\",hop=\"3\",address=\"10.0.0.3\",phase=\"upload\"} 0.06\n"));
	/* one series per hop and loaded phase with a figure: bounded by the hops */
	assert_int_equal(count_prefix(s, "bloatmeter_hop_latency_increase_seconds{"), 3);
	assert_non_null(strstr(s, "\nbloatmeter_queue_hop{server=\"10.0.0.3:4750\",phase=\"upload\"} 3\n"));
	free(s);
	/* without --ecn, no ECN family at all */
	r.ecn.requested = 0;
	s = render_file(&r, prom_write);
	assert_null(strstr(s, "bloatmeter_ecn_"));
	free(s);
	result_free(&r);
}

static void test_html_queue_section_below_charts(void **state)
{
	struct client_config cfg;
	struct test_result r;
	char *s, *card, *chart, *sect, *hops, *row3;

	(void)state;
	sample(&r, &cfg, 0);
	s = render_file(&r, html_write);
	card = strstr(s, "<section class=\"verdict\">");
	chart = strstr(s, "<svg");
	sect = strstr(s, "<section class=\"queue\">");
	assert_non_null(card);
	assert_non_null(chart);
	assert_non_null(sect);
	/* the verdict card first (issue 17), the queue section below every chart */
	assert_true(card < chart);
	assert_null(strstr(sect, "<svg"));
	assert_non_null(strstr(sect, "<tr data-direction=\"downlink\"><td class=\"l\">downlink</td><td class=\"l qverdict\">fifo</td><td>95.0</td><td>100.0</td>"));
	assert_non_null(strstr(sect, "<tr data-direction=\"uplink\"><td class=\"l\">uplink</td><td class=\"l qverdict\">aqm</td><td>6.5</td><td>30.0</td><td class=\"l\">marks</td><td>812</td><td>0</td>"));
	assert_non_null(strstr(sect, "<p class=\"ecn\"><b>ECN:</b> marks — 812 CE marks, 0 retransmissions"));
	hops = strstr(sect, "<table class=\"hops\">");
	assert_non_null(hops);
	/* the queue's hop is highlighted, with its rise */
	row3 = strstr(hops, "<tr class=\"queue-hop\"><td>3</td><td class=\"l\">10.0.0.3</td><td>10.00</td>");
	assert_non_null(row3);
	assert_non_null(strstr(row3, "<td>70.00</td><td>+60.0</td>"));
	assert_int_equal(count_prefix(hops, "<tr class=\"queue-hop\">"), 1);
	assert_non_null(strstr(sect, "the queue builds between hop 2 (10.0.2.2) and hop 3 (10.0.0.3)"));
	/* the lab's bottleneck as configured, not "tbf" */
	assert_non_null(strstr(s, "<p class=\"lab-queue\">Bottleneck: codel (target_ms 5, interval_ms 100) per direction, ECN marking on, +10 ms one-way delay each way; router: userspace on tund and tunu</p>"));
	assert_null(strstr(s, "tbf"));
	free(s);
	result_free(&r);
}

/* s with every run of spaces and newlines made one space (undoes the text's wrapping). */
static char *unwrap(const char *s)
{
	char *o = malloc(strlen(s) + 1), *p = o;

	assert_non_null(o);
	for (; *s; s++) {
		if (*s == ' ' || *s == '\n') {
			if (p > o && p[-1] != ' ')
				*p++ = ' ';
		} else {
			*p++ = *s;
		}
	}
	*p = '\0';
	return o;
}

static char *render_text(const struct test_result *r)
{
	char *buf = NULL, *u;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	report_text(r, f);
	assert_int_equal(fclose(f), 0);
	u = unwrap(buf);
	free(buf);
	return u;
}

static void test_text_lab_truth_names_the_queue(void **state)
{
	const char *q = "codel (target_ms 5, interval_ms 100) per direction, ECN marking on, "
			"+10 ms one-way delay each way; router: userspace on tund and tunu";
	struct client_config cfg;
	struct test_result r;
	char *s, want[256];

	(void)state;
	sample(&r, &cfg, 1);
	s = render_text(&r);
	snprintf(want, sizeof(want), "Lab truth queue %s", q);
	assert_non_null(strstr(s, want));
	snprintf(want, sizeof(want), "Lab ground truth (limit = rate × buffer): bottleneck %s", q);
	assert_non_null(strstr(s, want));
	assert_null(strstr(s, "tbf"));
	free(s);
	/* a kernel tbf without delay: no ECN phrase (tail-drop never marks), no delay */
	r.truth = (struct lab_truth){ .down_rate_bps = 20000000, .up_rate_bps = 20000000,
				      .down_buffer_ms = 100, .up_buffer_ms = 100, .qdisc = "tbf",
				      .hop = "router: tbf on veth-c (down) and veth-s (up)" };
	s = render_text(&r);
	assert_non_null(strstr(s, "Lab truth queue tbf per direction; router: tbf on veth-c (down) and veth-s (up)"));
	assert_null(strstr(s, "ECN marking"));
	free(s);
	result_free(&r);
}

/* A FIFO verdict beside a buffer estimate that a lower bound raised (random loss: the queue
 * seldom reached its top): the verdict's top is the point estimate before the raise, so the
 * Queue line must give the buffer line's "≥" figure, in the text and the HTML verdict block. */
static void set_raised_fifo(struct test_result *r)
{
	r->queue_down.top_ms = 74.2;
	r->buffer_down = (struct buffer_estimate){ .valid = 1, .phase = PHASE_DOWNLOAD, .ms = 156,
						   .bytes = 370500, .sustained_ms = 156,
						   .lower_bound = 1, .lower_bound_why = "random loss",
						   .peak_ms = NAN, .method = "test" };
}

static void test_queue_line_beside_lower_bound(void **state)
{
	struct client_config cfg;
	struct test_result r;
	char *s;

	(void)state;
	sample(&r, &cfg, 0);
	/* a point estimate: the verdict's own top */
	s = render_text(&r);
	assert_non_null(strstr(s, "Queue down tail-drop FIFO, 100 ms;"));
	free(s);
	set_raised_fifo(&r);
	s = render_text(&r);
	assert_non_null(strstr(s, "buffer ≥ 156.0 ms"));
	assert_non_null(strstr(s, "Queue down tail-drop FIFO, ≥ 156 ms;"));
	assert_null(strstr(s, "FIFO, 74 ms"));
	free(s);
	s = render_file(&r, html_write);
	assert_non_null(strstr(s, "tail-drop FIFO, ≥ 156 ms;"));
	assert_null(strstr(s, "FIFO, 74 ms"));
	free(s);
	result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prometheus_queue_ecn_hops),
		cmocka_unit_test(test_html_queue_section_below_charts),
		cmocka_unit_test(test_text_lab_truth_names_the_queue),
		cmocka_unit_test(test_queue_line_beside_lower_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

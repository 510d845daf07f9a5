/* test_metrics: the Prometheus exposition rendered from known counters, one live session and
 * one finished test — exact sample lines, a HELP and TYPE before every family, and nothing
 * but comments and samples (the integration test runs promtool on a real daemon's). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <event2/buffer.h>

#include "common/clock.h"
#include "server/ctx.h"
#include "server/metrics.h"
#include "server/testring.h"

struct fixture {
	struct server_ctx srv;
	struct session live;
	struct testring tests;
	char *text;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct test_summary s;

	if (f == NULL)
		return -1;
	f->srv.start_ns = 1000 * NS_PER_SEC;
	atomic_store(&f->srv.counters.sessions_total, 12);
	atomic_store(&f->srv.counters.sessions_refused_busy, 3);
	atomic_store(&f->srv.counters.sessions_refused_per_client, 2);
	atomic_store(&f->srv.counters.sessions_refused_duration, 1);
	atomic_store(&f->srv.counters.bytes_down_done, 1000);
	atomic_store(&f->srv.counters.bytes_up_done, 500);
	atomic_store(&f->srv.counters.udp_reflected, 777);
	atomic_store(&f->srv.counters.udp_bad, 5);
	atomic_store(&f->srv.counters.ctrl_bad, 4);
	atomic_store(&f->srv.counters.dns_ratelimited, 9);
	atomic_store(&f->srv.counters.auth_failed, 11);
	atomic_store(&f->srv.counters.conn_pending_refused, 12);
	atomic_store(&f->srv.counters.tls_flows, 6);
	atomic_store(&f->srv.counters.tls_flows_ktls_send, 4);
	atomic_store(&f->srv.counters.tls_flows_ktls_recv, 2);
	/* One running session: its bytes so far count too. */
	f->live.down_tx_bytes = 24;
	f->live.up_rx_bytes = 6;
	f->srv.sessions = &f->live;
	f->srv.nsessions = 1;
	testring_init(&f->tests);
	memset(&s, 0, sizeof(s));
	s.srv_rtt_increase_ms = 15;  /* 0.015 s: from le="0.02" on */
	s.reported.valid = 1;
	s.reported.increase_ms[0] = 120;
	s.reported.increase_ms[1] = NAN;
	testring_push(&f->tests, &s);
	f->srv.tests = &f->tests;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	free(f->text);
	free(f);
	return 0;
}

/* Renders at start + 90.5 s into f->text. */
static void render(struct fixture *f)
{
	struct evbuffer *buf = evbuffer_new();
	size_t n;

	assert_non_null(buf);
	assert_int_equal(metrics_render(&f->srv, f->srv.start_ns + 90500 * NS_PER_MS, buf), 0);
	n = evbuffer_get_length(buf);
	f->text = malloc(n + 1);
	assert_non_null(f->text);
	assert_int_equal(evbuffer_remove(buf, f->text, n), (int)n);
	f->text[n] = '\0';
	evbuffer_free(buf);
}

/* The text has this exact line. */
static void has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return;
	fail_msg("missing line: %s", line);
}

static void test_samples(void **state)
{
	struct fixture *f = *state;

	render(f);
	has_line(f->text, "bloatmeterd_sessions_total 12");
	has_line(f->text, "bloatmeterd_refused_total{reason=\"busy\"} 3");
	has_line(f->text, "bloatmeterd_refused_total{reason=\"per_client\"} 2");
	has_line(f->text, "bloatmeterd_refused_total{reason=\"duration\"} 1");
	has_line(f->text, "bloatmeterd_refused_total{reason=\"shutdown\"} 0");
	has_line(f->text, "bloatmeterd_sessions_active 1");
	has_line(f->text, "bloatmeterd_bytes_total{direction=\"download\"} 1024");
	has_line(f->text, "bloatmeterd_bytes_total{direction=\"upload\"} 506");
	has_line(f->text, "bloatmeterd_probes_reflected_total 777");
	has_line(f->text, "bloatmeterd_bad_packets_total{reason=\"udp_bad\"} 5");
	has_line(f->text, "bloatmeterd_bad_packets_total{reason=\"ctrl_bad\"} 4");
	has_line(f->text, "bloatmeterd_bad_packets_total{reason=\"dns_ratelimited\"} 9");
	has_line(f->text, "bloatmeterd_bad_packets_total{reason=\"auth_failed\"} 11");
	has_line(f->text, "bloatmeterd_bad_packets_total{reason=\"conn_pending_refused\"} 12");
	has_line(f->text, "bloatmeterd_bad_packets_total{reason=\"tls_failed\"} 0");
	has_line(f->text, "bloatmeterd_tls_load_flows_total 6");
	has_line(f->text, "bloatmeterd_tls_load_flows_ktls_total{direction=\"send\"} 4");
	has_line(f->text, "bloatmeterd_tls_load_flows_ktls_total{direction=\"receive\"} 2");
	has_line(f->text, "bloatmeterd_uptime_seconds 90.5");
	has_line(f->text, "bloatmeterd_build_info{version=\"" BM_VERSION "\"} 1");
}

static void test_histogram(void **state)
{
	struct fixture *f = *state;

	render(f);
	has_line(f->text, "# TYPE bloatmeterd_test_latency_increase_seconds histogram");
	has_line(f->text, "bloatmeterd_test_latency_increase_seconds_bucket{direction=\"download\","
			  "source=\"server\",le=\"0.01\"} 0");
	has_line(f->text, "bloatmeterd_test_latency_increase_seconds_bucket{direction=\"download\","
			  "source=\"server\",le=\"0.02\"} 1");
	has_line(f->text, "bloatmeterd_test_latency_increase_seconds_bucket{direction=\"download\","
			  "source=\"server\",le=\"5\"} 1");
	has_line(f->text, "bloatmeterd_test_latency_increase_seconds_bucket{direction=\"download\","
			  "source=\"server\",le=\"+Inf\"} 1");
	has_line(f->text, "bloatmeterd_test_latency_increase_seconds_sum{direction=\"download\","
			  "source=\"server\"} 0.015");
	has_line(f->text, "bloatmeterd_test_latency_increase_seconds_bucket{direction=\"download\","
			  "source=\"client\",le=\"0.1\"} 0");
	has_line(f->text, "bloatmeterd_test_latency_increase_seconds_bucket{direction=\"download\","
			  "source=\"client\",le=\"0.2\"} 1");
	has_line(f->text, "bloatmeterd_test_latency_increase_seconds_count{direction=\"upload\","
			  "source=\"client\"} 0");
}

/* Every line is a comment or a sample; every sample's family was announced by HELP and TYPE
 * before it (histogram samples by their base name). */
static void test_structure(void **state)
{
	struct fixture *f = *state;
	char *save = NULL, *line, *all;
	int samples = 0;

	render(f);
	all = strdup(f->text); /* strtok_r cuts f->text */
	assert_non_null(all);
	for (line = strtok_r(f->text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[128], help[160], type[160];
		size_t n = strcspn(line, "{ ");

		if (line[0] == '#') {
			assert_true(strncmp(line, "# HELP ", 7) == 0 || strncmp(line, "# TYPE ", 7) == 0);
			continue;
		}
		assert_true(n > 0 && n < sizeof(name));
		memcpy(name, line, n);
		name[n] = '\0';
		for (const char *sfx = "_bucket\0_count\0_sum\0"; *sfx; sfx += strlen(sfx) + 1) {
			size_t k = strlen(sfx);

			if (n > k && strcmp(name + n - k, sfx) == 0 &&
			    strstr(name, "latency_increase_seconds") != NULL)
				name[n - k] = '\0';
		}
		snprintf(help, sizeof(help), "# HELP %s ", name);
		snprintf(type, sizeof(type), "# TYPE %s ", name);
		samples++;
		assert_true(strstr(all, help) != NULL && strstr(all, type) != NULL &&
			    strstr(all, type) < strstr(all, line));
	}
	assert_true(samples > 40);
	free(all);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_samples, setup, teardown),
		cmocka_unit_test_setup_teardown(test_histogram, setup, teardown),
		cmocka_unit_test_setup_teardown(test_structure, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

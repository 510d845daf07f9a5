/* test_testring: the ring of recent tests (wrap, newest first, limit), its JSON form, the
 * client-network masking, the histograms, the strict validator of the client's summary
 * message, and the median of a running test's RTT samples. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <cmocka.h>

#include "common/clock.h"
#include "common/wire.h"
#include "server/session.h"
#include "server/testring.h"

static struct test_summary summary(uint64_t id)
{
	struct test_summary s;

	memset(&s, 0, sizeof(s));
	s.id = id;
	s.start_real_ns = 1764777600LL * NS_PER_SEC + 123 * NS_PER_MS; /* 2025-12-03T16:00:00.123Z */
	s.duration_s = 12.5;
	snprintf(s.client, sizeof(s.client), "192.0.2.0/24");
	snprintf(s.cc, sizeof(s.cc), "cubic");
	s.flows[0] = 4;
	s.bytes[0] = 1000000;
	s.bytes[1] = 0;
	s.rate_bps[0] = 8e6;
	s.rate_bps[1] = NAN;
	s.udp_probes = 1200;
	s.srv_rtt_increase_ms = 42.5;
	s.srv_min_rtt_ms = 10.25;
	return s;
}

/* The API's serialisation (server/http.c). */
static const char *plain(json_object *o)
{
	return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						  JSON_C_TO_STRING_NOSLASHESCAPE);
}

static struct testring *ring_new(void)
{
	struct testring *r = malloc(sizeof(*r));

	assert_non_null(r);
	testring_init(r);
	return r;
}

static void test_wrap_and_order(void **state)
{
	struct testring *r = ring_new();

	assert_null(testring_get(r, 0));
	for (uint64_t id = 1; id <= 300; id++) {
		struct test_summary s = summary(id);

		testring_push(r, &s);
	}
	assert_int_equal(r->n, TESTRING_CAP);
	assert_int_equal(testring_get(r, 0)->id, 300);
	assert_int_equal(testring_get(r, 1)->id, 299);
	assert_int_equal(testring_get(r, TESTRING_CAP - 1)->id, 300 - TESTRING_CAP + 1);
	assert_null(testring_get(r, TESTRING_CAP));
	/* Every push reached the histogram, also those the ring forgot. */
	assert_int_equal(r->hist[TESTRING_SRV_DOWN].count, 300);
	free(r);
}

static void test_json_limit(void **state)
{
	struct testring *r = ring_new();
	json_object *a;

	a = testring_json(r, 10);
	assert_non_null(a);
	assert_string_equal(plain(a), "[]");
	json_object_put(a);
	for (uint64_t id = 1; id <= 3; id++) {
		struct test_summary s = summary(id);

		testring_push(r, &s);
	}
	a = testring_json(r, 2);
	assert_int_equal(json_object_array_length(a), 2);
	assert_int_equal(json_object_get_int64(json_object_object_get(
				 json_object_array_get_idx(a, 0), "id")), 3);
	assert_int_equal(json_object_get_int64(json_object_object_get(
				 json_object_array_get_idx(a, 1), "id")), 2);
	json_object_put(a);
	a = testring_json(r, 100);
	assert_int_equal(json_object_array_length(a), 3);
	json_object_put(a);
	free(r);
}

static void test_json_fields(void **state)
{
	struct test_summary s = summary(7);
	json_object *o = testring_summary_json(&s);
	const char *txt = plain(o);

	assert_string_equal(txt,
			    "{\"id\":7,\"source\":\"cli\",\"start\":\"2025-12-03T16:00:00.123Z\",\"duration_s\":12.5,"
			    "\"client\":\"192.0.2.0/24\",\"cc\":\"cubic\","
			    "\"flows\":{\"download\":4,\"upload\":0},"
			    "\"bytes\":{\"download\":1000000,\"upload\":0},"
			    "\"rate_bps\":{\"download\":8000000,\"upload\":null},"
			    "\"udp_probes\":1200,"
			    "\"server\":{\"download_rtt_increase_ms\":42.5,\"download_min_rtt_ms\":10.25},"
			    "\"client_reported\":null}");
	json_object_put(o);

	s.reported.valid = 1;
	s.reported.idle_ms = 12.25;
	s.reported.increase_ms[0] = 80;
	s.reported.increase_ms[1] = NAN;
	s.reported.buffer_ms[0] = 95.5;
	s.reported.buffer_ms[1] = NAN;
	s.reported.throughput_bps[0] = 50e6;
	s.reported.throughput_bps[1] = NAN;
	snprintf(s.reported.grade, sizeof(s.reported.grade), "C");
	o = testring_summary_json(&s);
	assert_non_null(strstr(plain(o),
			       "\"client_reported\":{\"idle_latency_ms\":12.25,"
			       "\"latency_increase_ms\":{\"download\":80,\"upload\":null},"
			       "\"buffer_ms\":{\"download\":95.5,\"upload\":null},"
			       "\"throughput_bps\":{\"download\":50000000,\"upload\":null},"
			       "\"grade\":\"C\"}"));
	json_object_put(o);
}

static void mask(const char *addr, const char *want)
{
	struct sockaddr_storage ss;
	char buf[64];

	memset(&ss, 0, sizeof(ss));
	if (strchr(addr, ':')) {
		ss.ss_family = AF_INET6;
		assert_int_equal(inet_pton(AF_INET6, addr, &((struct sockaddr_in6 *)&ss)->sin6_addr), 1);
	} else {
		ss.ss_family = AF_INET;
		assert_int_equal(inet_pton(AF_INET, addr, &((struct sockaddr_in *)&ss)->sin_addr), 1);
	}
	testring_mask_addr((struct sockaddr *)&ss, buf, sizeof(buf));
	assert_string_equal(buf, want);
}

static void test_mask(void **state)
{
	mask("203.0.113.77", "203.0.113.0/24");
	mask("::ffff:198.51.100.9", "198.51.100.0/24");
	/* IPv6: the /32, not the /48 (often one household's). */
	mask("2001:db8:abcd:12:1:2:3:4", "2001:db8::/32");
	mask("2a02:1234:5678:9abc::1", "2a02:1234::/32");
	mask("::1", "::/32");
}

static void test_histogram(void **state)
{
	struct testring *r = ring_new();
	struct test_summary s = summary(1);
	const struct testring_hist *h;

	s.srv_rtt_increase_ms = 3;     /* ≤ 0.005 */
	s.reported.valid = 1;
	s.reported.increase_ms[0] = 150; /* ≤ 0.2 */
	s.reported.increase_ms[1] = -2;  /* noise: counted as 0 */
	testring_push(r, &s);
	s.srv_rtt_increase_ms = 9000;  /* above every bound: only +Inf */
	s.reported.valid = 0;
	testring_push(r, &s);
	s.srv_rtt_increase_ms = NAN;   /* not measured: not observed */
	testring_push(r, &s);

	h = &r->hist[TESTRING_SRV_DOWN];
	assert_int_equal(h->count, 2);
	assert_int_equal(h->bucket[0], 1);
	for (int i = 1; i < TESTRING_BUCKETS; i++)
		assert_int_equal(h->bucket[i], 0);
	assert_true(fabs(h->sum_s - 9.003) < 1e-9);
	h = &r->hist[TESTRING_CLI_DOWN];
	assert_int_equal(h->count, 1);
	assert_int_equal(h->bucket[5], 1);
	assert_true(testring_bucket_s(5) == 0.2);
	h = &r->hist[TESTRING_CLI_UP];
	assert_int_equal(h->count, 1);
	assert_int_equal(h->bucket[0], 1);
	assert_true(h->sum_s == 0);
	assert_string_equal(testring_series_direction(TESTRING_CLI_UP), "upload");
	assert_string_equal(testring_series_source(TESTRING_SRV_DOWN), "server");
	free(r);
}

/* Parses text as a control message and runs the validator. */
static int parse(const char *text, struct test_client_summary *c)
{
	char err[160];
	json_object *msg = wire_ctrl_parse((const uint8_t *)text, strlen(text), err, sizeof(err));
	int rc;

	assert_non_null(msg);
	rc = testring_parse_summary(msg, c);
	json_object_put(msg);
	return rc;
}

static void test_parse_summary(void **state)
{
	struct test_client_summary c;

	assert_int_equal(parse("{\"v\":1,\"type\":\"summary\",\"idle_latency_ms\":12.5,"
			       "\"download_increase_ms\":80,\"upload_increase_ms\":-0.5,"
			       "\"download_buffer_ms\":95.25,\"download_bps\":50000000,"
			       "\"upload_bps\":1e7,\"grade\":\"A+\"}", &c), 0);
	assert_true(c.valid);
	assert_true(c.idle_ms == 12.5);
	assert_true(c.increase_ms[0] == 80 && c.increase_ms[1] == -0.5);
	assert_true(c.buffer_ms[0] == 95.25 && isnan(c.buffer_ms[1]));
	assert_true(c.throughput_bps[0] == 5e7 && c.throughput_bps[1] == 1e7);
	assert_string_equal(c.grade, "A+");

	/* Nothing measured is a valid, empty summary. */
	assert_int_equal(parse("{\"v\":1,\"type\":\"summary\"}", &c), 0);
	assert_true(isnan(c.idle_ms) && c.grade[0] == '\0');

	memset(&c, 0x5a, sizeof(c));
	assert_int_equal(parse("{\"v\":1,\"type\":\"summary\",\"extra\":1}", &c), -1);
	assert_int_equal(c.valid, 0x5a5a5a5a); /* untouched on failure */
	assert_int_equal(parse("{\"v\":1,\"type\":\"summary\",\"idle_latency_ms\":\"12\"}", &c), -1);
	assert_int_equal(parse("{\"v\":1,\"type\":\"summary\",\"idle_latency_ms\":-1}", &c), -1);
	assert_int_equal(parse("{\"v\":1,\"type\":\"summary\",\"download_bps\":2e12}", &c), -1);
	assert_int_equal(parse("{\"v\":1,\"type\":\"summary\",\"download_increase_ms\":-1001}", &c),
			 -1);
	assert_int_equal(parse("{\"v\":1,\"type\":\"summary\",\"grade\":\"E\"}", &c), -1);
	assert_int_equal(parse("{\"v\":1,\"type\":\"summary\",\"grade\":1}", &c), -1);
	assert_int_equal(parse("{\"v\":1,\"type\":\"summary\",\"upload_buffer_ms\":null}", &c), -1);
	assert_int_equal(parse("{\"v\":1,\"type\":\"summary\",\"upload_buffer_ms\":[1]}", &c), -1);
	assert_int_equal(parse("{\"v\":1,\"type\":\"summary\",\"upload_buffer_ms\":{}}", &c), -1);

	/* Not finite: built directly, since JSON text cannot carry it. */
	{
		json_object *msg = wire_ctrl_new("summary");

		json_object_object_add(msg, "idle_latency_ms", json_object_new_double(INFINITY));
		assert_int_equal(testring_parse_summary(msg, &c), -1);
		json_object_object_add(msg, "idle_latency_ms", json_object_new_double(NAN));
		assert_int_equal(testring_parse_summary(msg, &c), -1);
		json_object_put(msg);
	}
}

/* The median of the kept samples and the fields taken from the session. */
static void test_live_finish(void **state)
{
	struct test_live *l = malloc(sizeof(*l));
	struct session s;
	struct test_summary out;
	struct sockaddr_in *sin = (struct sockaddr_in *)&s.peer;

	assert_non_null(l);
	memset(&s, 0, sizeof(s));
	s.id = 9;
	s.start_ns = 1000 * NS_PER_MS;
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(0xc0000263); /* 192.0.2.99 */
	snprintf(s.cc, sizeof(s.cc), "bbr");
	s.down_tx_bytes = 1250000;
	testlive_init(l, s.start_ns, 5 * NS_PER_SEC);
	/* No flows ever: no samples, no rates. */
	testlive_finish(l, &s, 3, 3000 * NS_PER_MS, &out);
	assert_true(isnan(out.srv_rtt_increase_ms) && isnan(out.rate_bps[0]));
	assert_true(out.duration_s == 2.0);
	assert_string_equal(out.client, "192.0.2.0/24");
	assert_string_equal(out.cc, "bbr");
	assert_int_equal(out.udp_probes, 3);
	assert_int_equal(out.start_real_ns, 5 * NS_PER_SEC);

	/* A download flow open for one second of ticks: its rate is over that second. */
	s.nflows[0] = 2;
	for (int i = 1; i <= 10; i++)
		testlive_tick(l, &s, s.start_ns + i * 100 * NS_PER_MS);
	l->rtt_inc_ms[0] = 30;
	l->rtt_inc_ms[1] = 10;
	l->rtt_inc_ms[2] = 20;
	l->nrtt = 3;
	testlive_finish(l, &s, 0, 3000 * NS_PER_MS, &out);
	assert_true(out.srv_rtt_increase_ms == 20);
	assert_int_equal(out.flows[0], 2);
	assert_true(fabs(out.rate_bps[0] - 10e6) < 1);
	free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wrap_and_order), cmocka_unit_test(test_json_limit),
		cmocka_unit_test(test_json_fields),    cmocka_unit_test(test_mask),
		cmocka_unit_test(test_histogram),      cmocka_unit_test(test_parse_summary),
		cmocka_unit_test(test_live_finish),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* Unit tests for client/analysis/delivered.c: the senders' delivered-byte series. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "client/analysis/delivered.h"
#include "client/model/config.h"

#define MS (1000000LL)
#define SEC_NS (1000 * MS)

static void add(struct test_result *r, size_t *n, int64_t t, uint16_t id, int up, uint64_t dlv)
{
	r->flows[(*n)++] = (struct flow_sample){ .t_ns = t, .flow_id = id, .up = (uint8_t)up,
						 .delivered_bytes = dlv };
	r->nflows = *n;
}

/* Two upload flows sampled on one tick share a point; a flow that joins later adds only its
 * own growth; download flows and samples outside the range do not count. */
static void test_upload_sums_each_flows_growth(void **state)
{
	struct client_config cfg;
	struct test_result r;
	struct tput_rec *s;
	size_t n = 0, m;

	(void)state;
	config_defaults(&cfg);
	result_init(&r, &cfg);
	r.flows = calloc(16, sizeof(*r.flows));
	assert_non_null(r.flows);
	add(&r, &n, 50 * MS, 0, 1, 999);   /* before the range */
	add(&r, &n, 100 * MS, 0, 1, 1000);
	add(&r, &n, 100 * MS, 1, 1, 2000);
	add(&r, &n, 100 * MS, 7, 0, 5000); /* a download flow */
	add(&r, &n, 200 * MS, 0, 1, 1500);
	add(&r, &n, 200 * MS, 1, 1, 2500);
	add(&r, &n, 300 * MS, 0, 1, 1600);
	add(&r, &n, 300 * MS, 1, 1, 2600);
	add(&r, &n, 300 * MS, 2, 1, 400);  /* -P auto opened a third flow */
	add(&r, &n, 400 * MS, 0, 1, 1600);
	m = delivered_series(&r, 1, 100 * MS, 300 * MS, &s);
	assert_int_equal(m, 3);
	assert_int_equal(s[0].t_ns, 100 * MS);
	assert_int_equal(s[0].bytes, 3000);
	assert_int_equal(s[1].bytes, 4000);
	assert_int_equal(s[2].t_ns, 300 * MS);
	assert_int_equal(s[2].bytes, 4600);
	free(s);
	result_free(&r);
}

/* The HTTP mode reconnects: a slot's count that falls is a new connection, and what it
 * delivered counts whole (not only once it passes the old connection's count). */
static void test_reconnect_counts_from_zero(void **state)
{
	struct client_config cfg;
	struct test_result r;
	struct tput_rec *s;
	size_t n = 0;

	(void)state;
	config_defaults(&cfg);
	result_init(&r, &cfg);
	r.flows = calloc(4, sizeof(*r.flows));
	assert_non_null(r.flows);
	add(&r, &n, 100 * MS, 3, 1, 50000);
	add(&r, &n, 200 * MS, 3, 1, 60000);
	add(&r, &n, 300 * MS, 3, 1, 4000); /* the server closed it; a new one took the slot */
	add(&r, &n, 400 * MS, 3, 1, 14000);
	assert_int_equal(delivered_series(&r, 1, 0, SEC_NS, &s), 4);
	assert_int_equal(s[1].bytes, 60000);
	assert_int_equal(s[2].bytes, 64000);
	assert_int_equal(s[3].bytes, 74000);
	free(s);
	result_free(&r);
}

/* A kernel without tcpi_delivered (every count 0), or no server count: no series, so the
 * analysis falls back to the receiver's bytes. */
static void test_unknown_gives_none(void **state)
{
	struct client_config cfg;
	struct test_result r;
	struct tput_rec *s = (struct tput_rec *)&r;
	size_t n = 0;

	(void)state;
	config_defaults(&cfg);
	result_init(&r, &cfg);
	r.flows = calloc(4, sizeof(*r.flows));
	assert_non_null(r.flows);
	add(&r, &n, 100 * MS, 0, 1, 0);
	add(&r, &n, 200 * MS, 0, 1, 0);
	assert_int_equal(delivered_series(&r, 1, 0, 300 * MS, &s), 0);
	assert_null(s);
	assert_int_equal(delivered_series(&r, 0, 0, 300 * MS, &s), 0);
	assert_null(s);
	result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_upload_sums_each_flows_growth),
		cmocka_unit_test(test_reconnect_counts_from_zero),
		cmocka_unit_test(test_unknown_gives_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

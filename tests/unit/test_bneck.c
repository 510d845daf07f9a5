/* Unit tests for client/lab/bneck.c, the userspace bottleneck of one direction, in simulated
 * time against its configuration: a FIFO overloaded at twice its rate delivers the rate (within
 * 0.5 %) and holds its packets limit / rate (within one packet's time), as its sojourn log
 * and counters also say; a packet on an idle link
 * leaves exactly the configured delay after it arrived, never earlier, and under load waits
 * queue plus delay; CoDel, overloaded, drops at the head and keeps the queue well below its
 * limit; every qdisc passes traffic below the rate untouched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "client/lab/bneck.h"
#include "lab_pktbuild.h"

#define MS 1000000ull
#define SEC 1000000000ull
#define PKT 1500u
#define STAMP_AT 100 /* payload offset where a test packet carries its arrival time */

struct sim {
	uint64_t delivered;   /* bytes released in the measured window */
	uint64_t max_sojourn; /* arrival to release, over the measured window */
	uint64_t last_sojourn;
	uint64_t sent;        /* packets offered */
};

static struct lab_pkt *sim_pkt(uint64_t t)
{
	struct lab_pkt *p = lab_new4(PKT, 0, (uint16_t)(t / MS));

	memcpy(p->data + STAMP_AT, &t, sizeof(t));
	return p;
}

static void sim_release(struct bneck *b, uint64_t t, uint64_t from, struct sim *s)
{
	struct lab_pkt *p;

	while ((p = bneck_release(b, t)) != NULL) {
		uint64_t arr;

		memcpy(&arr, p->data + STAMP_AT, sizeof(arr));
		if (t >= from) {
			s->delivered += p->len;
			if (t - arr > s->max_sojourn)
				s->max_sojourn = t - arr;
			s->last_sojourn = t - arr;
		}
		free(p);
	}
}

/* A constant-rate source of PKT-byte packets at in_bps for end ns; measures from from on. */
static struct sim simulate(struct bneck *b, uint64_t in_bps, uint64_t from, uint64_t end)
{
	uint64_t gap = (uint64_t)PKT * 8 * SEC / in_bps, next_in = 0, t = 0;
	struct sim s = { 0 };

	while (t < end) {
		uint64_t next;

		if (t >= next_in) {
			bneck_enqueue(b, sim_pkt(t), t);
			s.sent++;
			next_in += gap;
		}
		next = bneck_drain(b, t);
		sim_release(b, t, from, &s);
		if (bneck_next_release(b) < next)
			next = bneck_next_release(b);
		if (next_in < next)
			next = next_in;
		t = next > t ? next : t + 1;
	}
	return s;
}

static struct bneck_params params(enum bneck_qdisc q, uint64_t rate, double buffer_ms,
				  uint64_t delay_ns)
{
	return (struct bneck_params){
		.qdisc = q, .rate_bps = rate, .burst = rate / 8 / 250, /* 4 ms, as the lab */
		.limit = (uint64_t)((double)rate / 8 * buffer_ms / 1000), .delay_ns = delay_ns,
		.seed = 1,
	};
}

static void test_fifo_rate_and_buffer(void **state)
{
	struct bneck_params prm = params(BNECK_FIFO, 20000000, 100, 0);
	struct bneck b;
	struct bneck_counts c;
	struct sojlog_summary soj;
	struct sojlog *log = calloc(1, sizeof(*log));
	struct sim s;
	double bps, pkt_ns = (double)PKT * 8 * SEC / 20000000;

	(void)state;
	assert_non_null(log);
	sojlog_init(log, 0);
	assert_int_equal(bneck_init(&b, &prm, 0), 0);
	b.sojourns = log;
	s = simulate(&b, 40000000, 1 * SEC, 3 * SEC);
	/* The bottleneck's own account of each packet's wait agrees: limit / rate, to a packet
	 * (and the log's 1 µs resolution); its counters add up. */
	assert_int_equal(sojlog_summarize(log, 1 * SEC, 3 * SEC, 100 * MS, &soj), 0);
	assert_true(soj.samples > 3000);
	assert_true(soj.p50_ms > 100 - pkt_ns / 1e6 - 0.001 && soj.max_ms < 100 + pkt_ns / 1e6);
	assert_true(soj.floor_ms > 100 - pkt_ns / 1e6 - 0.001);
	bneck_counts(&b, &c);
	assert_int_equal(c.in, s.sent);
	assert_int_equal(c.in, c.out + c.tail_drops + b.q.count);
	assert_int_equal(c.aqm_drops + c.marks + c.line_drops, 0);
	free(log);
	bps = (double)s.delivered * 8 / 2;
	assert_true(bps > 20000000 * 0.995 && bps < 20000000 * 1.005);
	/* Full queue: a packet waits limit / rate = 100 ms, give or take one packet. */
	assert_true((double)s.last_sojourn > 100 * MS - pkt_ns);
	assert_true((double)s.max_sojourn < 100 * MS + 2 * pkt_ns);
	/* Half of what was offered did not fit. */
	assert_true(bneck_drops(&b) > s.sent / 2 - s.sent / 20);
	assert_int_equal(bneck_drops(&b), b.q.tail_drops);
	bneck_free(&b);
}

static void test_delay_exact(void **state)
{
	struct bneck_params prm = params(BNECK_FIFO, 20000000, 100, 25 * MS);
	struct bneck b;
	struct lab_pkt *p;

	(void)state;
	assert_int_equal(bneck_init(&b, &prm, 0), 0);
	bneck_enqueue(&b, sim_pkt(5 * SEC), 5 * SEC);
	/* An idle link has its burst: the packet leaves the queue at once into the delay line. */
	assert_int_equal(bneck_drain(&b, 5 * SEC), UINT64_MAX);
	assert_int_equal(bneck_next_release(&b), 5 * SEC + 25 * MS);
	assert_null(bneck_release(&b, 5 * SEC + 25 * MS - 1));
	p = bneck_release(&b, 5 * SEC + 25 * MS);
	assert_non_null(p);
	free(p);
	assert_int_equal(bneck_next_release(&b), UINT64_MAX);
	bneck_free(&b);
}

/* Delay and rate together: under overload every packet still waits the queue plus the delay. */
static void test_delay_under_load(void **state)
{
	struct bneck_params prm = params(BNECK_FIFO, 10000000, 50, 40 * MS);
	struct bneck b;
	struct sim s;
	double pkt_ns = (double)PKT * 8 * SEC / 10000000;

	(void)state;
	assert_int_equal(bneck_init(&b, &prm, 0), 0);
	s = simulate(&b, 20000000, 1 * SEC, 2 * SEC);
	/* The byte limit holds whole packets: up to one short of it, and one in service. */
	assert_true((double)s.last_sojourn > 90 * MS - 2 * pkt_ns);
	assert_true((double)s.max_sojourn < 90 * MS + 2 * pkt_ns);
	assert_int_equal(b.line_drops, 0);
	bneck_free(&b);
}

static void test_codel_shorter_than_fifo(void **state)
{
	struct bneck_params prm = params(BNECK_CODEL, 20000000, 200, 0);
	struct bneck b;
	struct sim s;

	(void)state;
	assert_int_equal(bneck_init(&b, &prm, 0), 0);
	/* An unresponsive 10 % overload: a 200 ms FIFO would sit full; CoDel drops at its head
	 * and its queue stays well below (TCP's response is the lab test's business). */
	s = simulate(&b, 22000000, 9 * SEC, 10 * SEC);
	assert_true(b.cd.drops > 0);
	assert_true(s.max_sojourn < 150 * MS);
	assert_int_equal(bneck_drops(&b), b.cd.drops + b.q.tail_drops);
	bneck_free(&b);
}

static void test_every_qdisc_inits_and_frees(void **state)
{
	(void)state;
	for (int q = 0; q < BNECK_QDISCS; q++) {
		struct bneck_params prm = params((enum bneck_qdisc)q, 20000000, 100, 10 * MS);
		struct bneck b;
		struct sim s;

		assert_int_equal(bneck_init(&b, &prm, 0), 0);
		s = simulate(&b, 10000000, 0, SEC / 2);
		/* Below the rate nothing queues: everything but the last delay's worth arrived. */
		assert_true(s.delivered >= (s.sent - 10) * PKT);
		assert_int_equal(bneck_drops(&b), 0);
		bneck_free(&b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_rate_and_buffer),
		cmocka_unit_test(test_delay_exact),
		cmocka_unit_test(test_delay_under_load),
		cmocka_unit_test(test_codel_shorter_than_fifo),
		cmocka_unit_test(test_every_qdisc_inits_and_frees),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

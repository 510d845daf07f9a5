/* Unit tests for client/lab/fqcodel.c against RFC 8290: a sparse flow is served ahead of a
 * backlogged bulk flow, deficit round robin shares bytes (not packets) fairly, overflow
 * drops come from the fattest flow, and flows whose hashes collide still get queues of their
 * own (the set-associative flow table). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "client/lab/fqcodel.h"
#include "client/lab/pkt.h"
#include "lab_pktbuild.h"

#define MS 1000000ull

/* The source port of a packet, which names its flow in these tests. */
static uint16_t sport(const struct lab_pkt *p)
{
	return (uint16_t)(p->data[20] << 8 | p->data[21]);
}

/* Flows 1000 and 2000 land in different queues of an nflows-queue fq_codel. */
static void init_two_flows(struct fqcodel *f, uint64_t limit)
{
	struct pkt_info a, b;
	struct lab_pkt *pa = lab_new4(100, 0, 1000), *pb = lab_new4(100, 0, 2000);

	assert_int_equal(fqcodel_init(f, 64, 4096, limit, CODEL_TARGET_NS, CODEL_INTERVAL_NS, 0),
			 0);
	assert_int_equal(pkt_parse(pa->data, pa->len, &a), 0);
	assert_int_equal(pkt_parse(pb->data, pb->len, &b), 0);
	assert_int_not_equal(a.flow_hash % 64, b.flow_hash % 64);
	free(pa);
	free(pb);
}

static void test_sparse_first(void **state)
{
	struct fqcodel f;
	struct lab_pkt *p;

	(void)state;
	init_two_flows(&f, 1 << 20);
	for (int i = 0; i < 100; i++)
		fqcodel_enqueue(&f, lab_new4(1500, 0, 1000), 0);
	/* The bulk flow spends its first quantum and becomes an old flow. */
	for (int i = 0; i < 3; i++) {
		p = fqcodel_dequeue(&f, MS);
		assert_int_equal(sport(p), 1000);
		free(p);
	}
	fqcodel_enqueue(&f, lab_new4(100, 0, 2000), 2 * MS);
	p = fqcodel_dequeue(&f, 2 * MS);
	assert_int_equal(sport(p), 2000);   /* ahead of 97 bulk packets */
	free(p);
	fqcodel_free(&f);
}

static uint32_t hash_of(uint16_t port)
{
	struct pkt_info pi;
	struct lab_pkt *p = lab_new4(100, 0, port);

	assert_int_equal(pkt_parse(p->data, p->len, &pi), 0);
	free(p);
	return pi.flow_hash;
}

/* A sparse flow whose hash names the same queue as a bulk flow's (hash % 64 equal) is still
 * served ahead of the bulk backlog: a direct-hashed table would queue it behind 97 packets. */
static void test_colliding_hash_isolated(void **state)
{
	struct fqcodel f;
	struct lab_pkt *p;
	uint32_t bulk = hash_of(1000);
	uint16_t other = 1001;

	(void)state;
	while (hash_of(other) % 64 != bulk % 64 || hash_of(other) == bulk)
		other++;
	assert_int_equal(fqcodel_init(&f, 64, 4096, 1 << 20, CODEL_TARGET_NS, CODEL_INTERVAL_NS,
				      0), 0);
	for (int i = 0; i < 100; i++)
		fqcodel_enqueue(&f, lab_new4(1500, 0, 1000), 0);
	for (int i = 0; i < 3; i++)
		free(fqcodel_dequeue(&f, MS));
	fqcodel_enqueue(&f, lab_new4(100, 0, other), 2 * MS);
	p = fqcodel_dequeue(&f, 2 * MS);
	assert_int_equal(sport(p), other);
	free(p);
	fqcodel_free(&f);
}

/* Nine flows of one set: the ninth finds every way busy and shares the queue its hash names,
 * and once the queues drain, a new flow takes a free way again. */
static void test_full_set_shares(void **state)
{
	struct fqcodel f;
	uint16_t port[9];
	size_t n = 0, used = 0;
	struct lab_pkt *p;

	(void)state;
	for (uint16_t s = 1000; n < 9; s++)
		if (hash_of(s) % 8 == hash_of(1000) % 8)
			port[n++] = s;
	assert_int_equal(fqcodel_init(&f, 64, 4096, 1 << 20, CODEL_TARGET_NS, CODEL_INTERVAL_NS,
				      0), 0);
	for (size_t i = 0; i < 9; i++)
		fqcodel_enqueue(&f, lab_new4(100, 0, port[i]), 0);
	for (size_t i = 0; i < f.nflows; i++)
		used += f.flows[i].q.count > 0;
	assert_int_equal(used, 8);
	while ((p = fqcodel_dequeue(&f, 0)) != NULL)
		free(p);
	fqcodel_enqueue(&f, lab_new4(100, 0, port[8]), MS);
	used = 0;
	for (size_t i = 0; i < f.nflows; i++)
		used += f.flows[i].q.count > 0;
	assert_int_equal(used, 1);
	fqcodel_free(&f);
}

static void test_drr_bytes(void **state)
{
	struct fqcodel f;
	struct lab_pkt *p;
	uint64_t bytes[2] = { 0, 0 };

	(void)state;
	init_two_flows(&f, 1 << 22);
	for (int i = 0; i < 300; i++)
		fqcodel_enqueue(&f, lab_new4(1500, 0, 1000), 0);
	for (int i = 0; i < 900; i++)
		fqcodel_enqueue(&f, lab_new4(500, 0, 2000), 0);
	/* Both stay backlogged over 400 dequeues; 0.1 ms each keeps CoDel's sojourn low. */
	for (int i = 0; i < 400; i++) {
		p = fqcodel_dequeue(&f, 0);
		assert_non_null(p);
		bytes[sport(p) == 2000] += p->len;
		free(p);
	}
	/* Equal bytes to one quantum, though flow 2000 sent three times the packets. */
	assert_true(bytes[0] > 0 && bytes[1] > 0);
	assert_true((bytes[0] > bytes[1] ? bytes[0] - bytes[1] : bytes[1] - bytes[0]) <=
		    FQ_QUANTUM + 1500);
	fqcodel_free(&f);
}

static void test_overflow_fattest(void **state)
{
	struct fqcodel f;
	size_t whole = 0;

	(void)state;
	init_two_flows(&f, 20 * 1500);
	for (int i = 0; i < 20; i++)
		fqcodel_enqueue(&f, lab_new4(1500, 0, 1000), 0);
	for (int i = 0; i < 5; i++)
		fqcodel_enqueue(&f, lab_new4(1500, 0, 2000), 0);
	/* The five drops came from the bulk flow; the small flow kept all its packets. */
	assert_int_equal(f.overflow_drops, 5);
	assert_true(f.bytes <= 20 * 1500);
	for (size_t i = 0; i < f.nflows; i++)
		whole += f.flows[i].q.count == 5;
	assert_int_equal(whole, 1);
	fqcodel_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sparse_first),
		cmocka_unit_test(test_colliding_hash_isolated),
		cmocka_unit_test(test_full_set_shares),
		cmocka_unit_test(test_drr_bytes),
		cmocka_unit_test(test_overflow_fattest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

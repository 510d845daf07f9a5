/* Unit tests for client/lab/fqcodel.c against RFC 8290: a sparse flow is served ahead of a
 * backlogged bulk flow, deficit round robin shares bytes (not packets) fairly, and overflow
 * drops come from the fattest flow. */
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
		cmocka_unit_test(test_drr_bytes),
		cmocka_unit_test(test_overflow_fattest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

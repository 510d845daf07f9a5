/* Unit tests for client/lab/pkt.c and client/lab/ecnmark.c: header parsing of well-formed and
 * malformed packets, flow hashing, and CE marking with the IPv4 checksum kept valid. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "client/lab/ecnmark.h"
#include "client/lab/pkt.h"
#include "lab_pktbuild.h"

static void test_parse(void **state)
{
	uint8_t b[200];
	struct pkt_info pi;

	(void)state;
	lab_build4(b, 100, PKT_ECT0, 1000, 2000);
	assert_int_equal(pkt_parse(b, sizeof(b), &pi), 0);
	assert_int_equal(pi.version, 4);
	assert_int_equal(pi.hdr_len, 20);
	assert_int_equal(pi.total_len, 100);
	assert_int_equal(pi.proto, 6);
	assert_int_equal(pi.ecn, PKT_ECT0);
	lab_build6(b, 100, PKT_ECT1, 1000);
	assert_int_equal(pkt_parse(b, 100, &pi), 0);
	assert_int_equal(pi.version, 6);
	assert_int_equal(pi.total_len, 100);
	assert_int_equal(pi.ecn, PKT_ECT1);
}

static void test_parse_malformed(void **state)
{
	uint8_t b[200];
	struct pkt_info pi;

	(void)state;
	lab_build4(b, 100, 0, 1, 2);
	assert_int_equal(pkt_parse(b, 99, &pi), -1);  /* total length past the bytes read */
	assert_int_equal(pkt_parse(b, 19, &pi), -1);
	b[0] = 0x44;                                   /* IHL 16 bytes */
	assert_int_equal(pkt_parse(b, 100, &pi), -1);
	b[0] = 0x4f;                                   /* IHL 60 but total length below it */
	b[2] = 0, b[3] = 40;
	assert_int_equal(pkt_parse(b, 100, &pi), -1);
	b[0] = 0x55;
	assert_int_equal(pkt_parse(b, 100, &pi), -1);
	lab_build6(b, 100, 0, 1);
	assert_int_equal(pkt_parse(b, 60, &pi), -1);
	assert_int_equal(pkt_parse(b, 39, &pi), -1);
	assert_int_equal(pkt_parse(NULL, 0, &pi), -1);
}

static void test_flow_hash(void **state)
{
	uint8_t a[100], b[100];
	struct pkt_info pa, pb;

	(void)state;
	lab_build4(a, 100, 0, 1000, 2000);
	lab_build4(b, 100, 2, 1000, 2000);
	assert_int_equal(pkt_parse(a, 100, &pa), 0);
	assert_int_equal(pkt_parse(b, 100, &pb), 0);
	assert_int_equal(pa.flow_hash, pb.flow_hash);  /* ECN bits are not part of the flow */
	lab_build4(b, 100, 0, 1001, 2000);
	assert_int_equal(pkt_parse(b, 100, &pb), 0);
	assert_int_not_equal(pa.flow_hash, pb.flow_hash);
}

static void test_mark_ect(void **state)
{
	uint8_t b[100];
	struct pkt_info pi;

	(void)state;
	for (int ecn = PKT_ECT1; ecn <= PKT_ECT0; ecn++) {
		/* DSCP EF (0xb8) survives the marking. */
		lab_build4(b, 100, ecn | 0xb8, 1, 2);
		assert_int_equal(ecn_mark(b, 100), 1);
		assert_int_equal(pkt_parse(b, 100, &pi), 0);
		assert_int_equal(pi.ecn, PKT_CE);
		assert_int_equal(b[1] & 0xfc, 0xb8);
		assert_int_equal(ecn_ipv4_csum(b, 20), 0);
	}
	lab_build6(b, 100, PKT_ECT0, 1);
	assert_int_equal(ecn_mark(b, 100), 1);
	assert_int_equal(pkt_parse(b, 100, &pi), 0);
	assert_int_equal(pi.ecn, PKT_CE);
}

static void test_mark_not_ect(void **state)
{
	uint8_t b[100], copy[100];

	(void)state;
	lab_build4(b, 100, PKT_NOT_ECT, 1, 2);
	memcpy(copy, b, sizeof(b));
	assert_int_equal(ecn_mark(b, 100), 0);
	assert_memory_equal(b, copy, sizeof(b));
	assert_int_equal(ecn_mark(b, 50), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_malformed),
		cmocka_unit_test(test_flow_hash),
		cmocka_unit_test(test_mark_ect),
		cmocka_unit_test(test_mark_not_ect),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

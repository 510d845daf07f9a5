/* lab_pktbuild: builds the IPv4/IPv6 TCP packets the lab shaper's unit tests feed to it. */
#ifndef BM_TEST_LAB_PKTBUILD_H
#define BM_TEST_LAB_PKTBUILD_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client/lab/ecnmark.h"
#include "client/lab/fifoq.h"

/* An IPv4 TCP packet of len bytes with the given ECN bits and ports, checksum valid. */
static inline void lab_build4(uint8_t *b, uint16_t len, int ecn, uint16_t sport, uint16_t dport)
{
	uint16_t c;

	memset(b, 0, len);
	b[0] = 0x45;
	b[1] = (uint8_t)ecn;
	b[2] = (uint8_t)(len >> 8);
	b[3] = (uint8_t)len;
	b[8] = 64;
	b[9] = 6;
	b[12] = 10, b[15] = 1, b[16] = 10, b[19] = 2;
	b[20] = (uint8_t)(sport >> 8), b[21] = (uint8_t)sport;
	b[22] = (uint8_t)(dport >> 8), b[23] = (uint8_t)dport;
	c = ecn_ipv4_csum(b, 20);
	b[10] = (uint8_t)(c >> 8);
	b[11] = (uint8_t)c;
}

/* An IPv6 TCP packet of len bytes (>= 44) with the given ECN bits. */
static inline void lab_build6(uint8_t *b, uint16_t len, int ecn, uint16_t sport)
{
	memset(b, 0, len);
	b[0] = 0x60;
	b[1] = (uint8_t)(ecn << 4);
	b[4] = (uint8_t)((len - 40) >> 8);
	b[5] = (uint8_t)(len - 40);
	b[6] = 6;
	b[7] = 64;
	b[23] = 1, b[39] = 2;
	b[40] = (uint8_t)(sport >> 8), b[41] = (uint8_t)sport;
}

static inline struct lab_pkt *lab_new4(uint16_t len, int ecn, uint16_t sport)
{
	struct lab_pkt *p = calloc(1, sizeof(*p));

	if (p == NULL)
		abort();
	lab_build4(p->data, len, ecn, sport, 5201);
	p->len = len;
	return p;
}

#endif

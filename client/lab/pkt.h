/* pkt: bounded parsing of the IPv4/IPv6 header of an untrusted packet read from the lab's TUN
 * bottleneck — version, length, ECN field, protocol and the flow 5-tuple hash. Pure; called by
 * the lab shaper's queues (fifoq, codel, ecnmark) and by its tests and fuzz target. */
#ifndef BM_LAB_PKT_H
#define BM_LAB_PKT_H

#include <stddef.h>
#include <stdint.h>

/* The largest packet the lab shaper carries (TUN MTU 1500 plus headroom). */
#define LAB_PKT_MAX 2048

/* The two-bit ECN field (RFC 3168). */
enum pkt_ecn { PKT_NOT_ECT = 0, PKT_ECT1 = 1, PKT_ECT0 = 2, PKT_CE = 3 };

struct pkt_info {
	int version;       /* 4 or 6 */
	size_t hdr_len;    /* IP header length (IPv6: the fixed 40 bytes) */
	size_t total_len;  /* length the header claims, <= the bytes read */
	uint8_t proto;     /* IPv4 protocol / IPv6 next header */
	enum pkt_ecn ecn;
	uint32_t flow_hash; /* of addresses, protocol and (TCP/UDP) ports */
};

/* Parses the first len bytes of buf. Returns 0, or -1 when they are no well-formed IPv4/IPv6
 * header (truncated, bad version, header length or total length). */
int pkt_parse(const uint8_t *buf, size_t len, struct pkt_info *out);

#endif

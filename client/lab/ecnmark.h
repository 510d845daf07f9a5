/* ecnmark: CE marking (RFC 3168) of an ECN-capable packet in place, instead of dropping it,
 * with the IPv4 header checksum updated. Pure; called by the lab shaper's AQMs (codel). */
#ifndef BM_LAB_ECNMARK_H
#define BM_LAB_ECNMARK_H

#include <stddef.h>
#include <stdint.h>

/* Sets CE on the packet in buf (len bytes) when it is ECT(0), ECT(1) or already CE. Returns 1
 * when the packet now carries CE, 0 when it is Not-ECT (the caller drops it), -1 when it is no
 * well-formed IP packet. */
int ecn_mark(uint8_t *buf, size_t len);

/* The IPv4 header checksum over hdr_len bytes (the checksum field included): 0 when valid. */
uint16_t ecn_ipv4_csum(const uint8_t *hdr, size_t hdr_len);

#endif

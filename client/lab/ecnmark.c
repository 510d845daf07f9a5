/* ecnmark: CE marking with the IPv4 checksum fixed (see ecnmark.h). */
#include "client/lab/ecnmark.h"

#include "client/lab/pkt.h"

uint16_t ecn_ipv4_csum(const uint8_t *hdr, size_t hdr_len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < hdr_len; i += 2)
		sum += ((uint32_t)hdr[i] << 8) | hdr[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* Recomputes rather than patches incrementally: 20–60 bytes cost nothing next to the queue. */
static void ecn_fix_ipv4(uint8_t *buf, size_t hdr_len)
{
	uint16_t c;

	buf[10] = 0;
	buf[11] = 0;
	c = ecn_ipv4_csum(buf, hdr_len);
	buf[10] = (uint8_t)(c >> 8);
	buf[11] = (uint8_t)c;
}

int ecn_mark(uint8_t *buf, size_t len)
{
	struct pkt_info pi;

	if (pkt_parse(buf, len, &pi) != 0)
		return -1;
	if (pi.ecn == PKT_NOT_ECT)
		return 0;
	if (pi.ecn == PKT_CE)
		return 1;
	if (pi.version == 4) {
		buf[1] |= 3;
		ecn_fix_ipv4(buf, pi.hdr_len);
	} else {
		buf[1] |= 3 << 4;
	}
	return 1;
}

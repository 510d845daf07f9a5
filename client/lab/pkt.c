/* pkt: bounded IPv4/IPv6 header parsing for the lab shaper (see pkt.h). */
#include "client/lab/pkt.h"

#include <string.h>

/* FNV-1a: a cheap, stable hash; fairness needs spread, not secrecy. */
static uint32_t pkt_fnv(uint32_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 16777619u;
	}
	return h;
}

/* Hashes the ports when a TCP/UDP header's first four bytes are inside the packet. */
static uint32_t pkt_hash_ports(uint32_t h, const uint8_t *buf, size_t len, size_t off,
			       uint8_t proto)
{
	if ((proto == 6 || proto == 17) && off + 4 <= len)
		h = pkt_fnv(h, buf + off, 4);
	return h;
}

static int pkt_parse4(const uint8_t *buf, size_t len, struct pkt_info *out)
{
	size_t ihl = (size_t)(buf[0] & 0x0f) * 4;
	size_t tot = ((size_t)buf[2] << 8) | buf[3];
	uint32_t h = 2166136261u;

	if (len < 20 || ihl < 20 || ihl > len || tot < ihl || tot > len)
		return -1;
	out->version = 4;
	out->hdr_len = ihl;
	out->total_len = tot;
	out->proto = buf[9];
	out->ecn = (enum pkt_ecn)(buf[1] & 3);
	h = pkt_fnv(h, buf + 9, 1);
	h = pkt_fnv(h, buf + 12, 8);
	/* A fragment after the first carries no ports. */
	if ((((size_t)buf[6] & 0x1f) << 8 | buf[7]) == 0)
		h = pkt_hash_ports(h, buf, tot, ihl, out->proto);
	out->flow_hash = h;
	return 0;
}

static int pkt_parse6(const uint8_t *buf, size_t len, struct pkt_info *out)
{
	size_t plen;
	uint32_t h = 2166136261u;

	if (len < 40)
		return -1;
	plen = ((size_t)buf[4] << 8) | buf[5];
	if (40 + plen > len)
		return -1;
	out->version = 6;
	out->hdr_len = 40;
	out->total_len = 40 + plen;
	out->proto = buf[6];
	out->ecn = (enum pkt_ecn)((buf[1] >> 4) & 3);
	h = pkt_fnv(h, buf + 6, 1);
	h = pkt_fnv(h, buf + 8, 32);
	/* Ports only when TCP/UDP is the first next header; extension headers hash as one flow. */
	out->flow_hash = pkt_hash_ports(h, buf, out->total_len, 40, out->proto);
	return 0;
}

int pkt_parse(const uint8_t *buf, size_t len, struct pkt_info *out)
{
	memset(out, 0, sizeof(*out));
	if (buf == NULL || len < 1)
		return -1;
	switch (buf[0] >> 4) {
	case 4:
		return pkt_parse4(buf, len, out);
	case 6:
		return pkt_parse6(buf, len, out);
	default:
		return -1;
	}
}

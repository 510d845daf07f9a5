/* icmperr: parses the ICMP/ICMPv6 message that answers a TTL-limited probe (time-exceeded from
 * a router; port-unreachable or echo reply from the destination) and extracts from the quoted
 * header what matches it to its probe: the echo id/seq, or the UDP ports, plus the quoted
 * destination. Pure and bounded over untrusted bytes; for the per-hop prober and its tests. */
#ifndef BM_PROBE_ICMPERR_H
#define BM_PROBE_ICMPERR_H

#include <stddef.h>
#include <stdint.h>

/* What the message says about the probe. */
enum icmperr_kind {
	ICMPERR_BAD = -1,          /* truncated or malformed */
	ICMPERR_OTHER = 0,         /* well formed, but not about a probe of ours */
	ICMPERR_TIME_EXCEEDED = 1, /* a router on the path: the probe's TTL ran out there */
	ICMPERR_UNREACH = 2,       /* destination unreachable (port unreachable: the server) */
	ICMPERR_ECHO_REPLY = 3,    /* the destination answered an ICMP probe */
};

/* The quoted (or, for echo replies, the answered) probe's protocol. */
enum icmperr_proto { ICMPERR_Q_NONE = 0, ICMPERR_Q_ECHO = 1, ICMPERR_Q_UDP = 2 };

struct icmperr_msg {
	uint8_t type, code;       /* of the message received */
	enum icmperr_proto proto; /* what it quotes or answers */
	uint16_t id, seq;         /* ICMPERR_Q_ECHO: of the echo request */
	uint16_t sport, dport;    /* ICMPERR_Q_UDP: of the quoted datagram */
	uint8_t qdst[16];         /* quoted destination address (4 bytes for IPv4); errors only */
	size_t qdst_len;          /* 0, 4 or 16 */
};

/* Parses one message, ICMP header first (as ping sockets and raw IPv6 sockets deliver it;
 * callers of raw IPv4 sockets skip the IP header first). family: AF_INET or AF_INET6. The
 * checksum is not checked: the kernel verifies it for the sockets we read from. Reads only
 * buf[0..len); IPv6 extension headers in the quote are walked, at most 4. */
enum icmperr_kind icmperr_parse(int family, const uint8_t *buf, size_t len, struct icmperr_msg *m);

#endif

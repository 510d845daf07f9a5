/* icmperr: the bounded parser of replies to TTL-limited probes (see icmperr.h). */
#include "probes/icmperr.h"

#include <netinet/in.h>
#include <string.h>

#define IE_HDR 8          /* ICMP header: type, code, checksum, 4 bytes of rest */
#define IE_V4_MIN 20
#define IE_V6_LEN 40
#define IE_V6_EXT_MAX 4   /* extension headers we walk before giving up */

static uint16_t ie_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The first 8 bytes of the quoted transport header: an echo request or a UDP header. */
static enum icmperr_kind ie_transport(int family, uint8_t proto, const uint8_t *buf, size_t len,
				      struct icmperr_msg *m)
{
	uint8_t echo = family == AF_INET6 ? 128 : 8;
	uint8_t icmp = family == AF_INET6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP;

	if (len < 8)
		return ICMPERR_BAD; /* RFC 792 and 4443 quote at least 8 bytes of it */
	if (proto == IPPROTO_UDP) {
		m->proto = ICMPERR_Q_UDP;
		m->sport = ie_be16(buf);
		m->dport = ie_be16(buf + 2);
	} else if (proto == icmp && buf[0] == echo && buf[1] == 0) {
		m->proto = ICMPERR_Q_ECHO;
		m->id = ie_be16(buf + 4);
		m->seq = ie_be16(buf + 6);
	} else {
		return ICMPERR_OTHER;
	}
	return ICMPERR_TIME_EXCEEDED; /* the caller substitutes the message's own kind */
}

static enum icmperr_kind ie_quoted_v4(const uint8_t *buf, size_t len, struct icmperr_msg *m)
{
	size_t hl;

	if (len < IE_V4_MIN || buf[0] >> 4 != 4)
		return ICMPERR_BAD;
	hl = (size_t)(buf[0] & 0x0f) * 4;
	if (hl < IE_V4_MIN || hl > len)
		return ICMPERR_BAD;
	if ((ie_be16(buf + 6) & 0x1fff) != 0)
		return ICMPERR_OTHER; /* a later fragment carries no transport header */
	memcpy(m->qdst, buf + 16, 4);
	m->qdst_len = 4;
	return ie_transport(AF_INET, buf[9], buf + hl, len - hl, m);
}

/* Hop-by-hop (0), routing (43) and destination options (60) are skipped by their length; a
 * fragment header (44) is 8 bytes and only the first fragment carries the transport header. */
static enum icmperr_kind ie_quoted_v6(const uint8_t *buf, size_t len, struct icmperr_msg *m)
{
	size_t off = IE_V6_LEN;
	uint8_t next;

	if (len < IE_V6_LEN || buf[0] >> 4 != 6)
		return ICMPERR_BAD;
	memcpy(m->qdst, buf + 24, 16);
	m->qdst_len = 16;
	next = buf[6];
	for (int i = 0; i < IE_V6_EXT_MAX; i++) {
		size_t ext;

		if (next != 0 && next != 43 && next != 60 && next != 44)
			break;
		if (len - off < 8)
			return ICMPERR_BAD;
		if (next == 44 && (ie_be16(buf + off + 2) & 0xfff8) != 0)
			return ICMPERR_OTHER;
		ext = next == 44 ? 8 : ((size_t)buf[off + 1] + 1) * 8;
		if (ext > len - off)
			return ICMPERR_BAD;
		next = buf[off];
		off += ext;
	}
	return ie_transport(AF_INET6, next, buf + off, len - off, m);
}

/* Maps the message type to its kind: ICMPERR_OTHER for messages no probe answer is. */
static enum icmperr_kind ie_kind(int family, uint8_t type)
{
	if (family == AF_INET6)
		return type == 3 ? ICMPERR_TIME_EXCEEDED : type == 1 ? ICMPERR_UNREACH
			: type == 129 ? ICMPERR_ECHO_REPLY : ICMPERR_OTHER;
	return type == 11 ? ICMPERR_TIME_EXCEEDED : type == 3 ? ICMPERR_UNREACH
		: type == 0 ? ICMPERR_ECHO_REPLY : ICMPERR_OTHER;
}

enum icmperr_kind icmperr_parse(int family, const uint8_t *buf, size_t len, struct icmperr_msg *m)
{
	enum icmperr_kind kind, r;

	memset(m, 0, sizeof(*m));
	if ((family != AF_INET && family != AF_INET6) || len < IE_HDR)
		return ICMPERR_BAD;
	m->type = buf[0];
	m->code = buf[1];
	kind = ie_kind(family, buf[0]);
	if (kind == ICMPERR_OTHER)
		return ICMPERR_OTHER;
	if (kind == ICMPERR_ECHO_REPLY) {
		if (buf[1] != 0)
			return ICMPERR_BAD;
		m->proto = ICMPERR_Q_ECHO;
		m->id = ie_be16(buf + 4);
		m->seq = ie_be16(buf + 6);
		return kind;
	}
	r = family == AF_INET6 ? ie_quoted_v6(buf + IE_HDR, len - IE_HDR, m)
			       : ie_quoted_v4(buf + IE_HDR, len - IE_HDR, m);
	if (r != ICMPERR_TIME_EXCEEDED) {
		struct icmperr_msg keep = *m;

		memset(m, 0, sizeof(*m));
		m->type = keep.type;
		m->code = keep.code;
		return r;
	}
	return kind;
}

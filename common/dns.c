/* dns: query building, reply checking and the authoritative answer logic on raw DNS messages
 * (RFC 1035). Nothing here touches a socket or allocates; every read is bounds-checked
 * against the message length first. */
#include "common/dns.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>

#include "common/bytes.h"

#define DNS_FLAG_QR 0x8000
#define DNS_FLAG_AA 0x0400
#define DNS_FLAG_TC 0x0200
#define DNS_FLAG_RD 0x0100
#define DNS_FLAG_RA 0x0080
#define DNS_FLAG_CD 0x0010
#define DNS_OPCODE_MASK 0x7800
#define DNS_RR_FIXED 10        /* type, class, ttl, rdlength after an owner name */
#define DNS_MAX_JUMPS 32       /* compression pointers followed per name (real ones use 1-2) */
/* TTL 0: every lookup of a measurement name must reach the responder, not a cache. */
#define DNS_ANSWER_TTL 0
#define DNS_OPT_PADDING 12     /* EDNS option code (RFC 7830) */

static int dns_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

static int dns_host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_';
}

int dns_name_from_text(const char *text, uint8_t *wire, size_t cap)
{
	size_t tlen = strnlen(text, DNS_NAME_MAX + 1), i = 0, n = 0;

	if (tlen > 0 && text[tlen - 1] == '.')
		tlen--;
	/* Wire form is the text plus one length byte in front and the root label at the end. */
	if (tlen == 0 || tlen + 2 > DNS_NAME_MAX || tlen + 2 > cap)
		return -1;
	while (i < tlen) {
		size_t start = i;

		while (i < tlen && text[i] != '.') {
			if (!dns_host_char(text[i]))
				return -1;
			i++;
		}
		if (i - start == 0 || i - start > DNS_LABEL_MAX)
			return -1;
		wire[n++] = (uint8_t)(i - start);
		memcpy(wire + n, text + start, i - start);
		n += i - start;
		if (i < tlen && ++i == tlen)
			return -1; /* "a..": an empty label before the trailing dot */
	}
	wire[n++] = 0;
	return (int)n;
}

int dns_zone_init(struct dns_zone *z, const char *name)
{
	int n = dns_name_from_text(name, z->wire, sizeof(z->wire));

	if (n < 0)
		return -1;
	z->len = (size_t)n;
	z->labels = 0;
	for (size_t i = 0; z->wire[i] != 0; i += 1 + z->wire[i])
		z->labels++;
	for (size_t i = 0; i < z->len; i++)
		z->wire[i] = (uint8_t)dns_lower(z->wire[i]);
	return 0;
}

/* Reads the name at *off into out (uncompressed wire form, at most DNS_NAME_MAX bytes) and
 * moves *off past the name as stored. Compression pointers are followed only when allow_ptr,
 * and only to an offset before every byte of this name read so far: the targets strictly
 * decrease, so no chain of pointers can loop. Returns the wire length or -1. */
static int dns_name_read(const uint8_t *msg, size_t len, size_t *off, int allow_ptr, uint8_t *out)
{
	size_t pos = *off, low = *off, end = 0, n = 0;
	int jumps = 0;

	for (;;) {
		uint8_t c;

		if (pos >= len)
			return -1;
		c = msg[pos];
		if ((c & 0xc0) == 0xc0) {
			size_t target;

			if (!allow_ptr || pos + 1 >= len || ++jumps > DNS_MAX_JUMPS)
				return -1;
			target = (size_t)(c & 0x3f) << 8 | msg[pos + 1];
			if (target >= low)
				return -1;
			if (jumps == 1)
				end = pos + 2;
			low = pos = target;
			continue;
		}
		if (c & 0xc0)
			return -1; /* 0x40/0x80: extended label types, obsolete (RFC 6891 5) */
		if (n + 1 + c > DNS_NAME_MAX || pos + 1 + c > len)
			return -1;
		memcpy(out + n, msg + pos, 1 + (size_t)c);
		n += 1 + (size_t)c;
		pos += 1 + (size_t)c;
		if (c == 0)
			break;
	}
	*off = jumps ? end : pos;
	return (int)n;
}

/* Same name, ASCII case ignored (RFC 4343). Length bytes are < 64 and so never letters. */
static int dns_name_equal(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	if (alen != blen)
		return 0;
	for (size_t i = 0; i < alen; i++)
		if (dns_lower(a[i]) != dns_lower(b[i]))
			return 0;
	return 1;
}

/* How many labels name lies below the zone apex (0 = the apex), or -1 if it is outside. */
static int dns_zone_depth(const struct dns_zone *z, const uint8_t *name, size_t len)
{
	int labels = 0, depth;
	size_t off = 0;

	for (size_t i = 0; name[i] != 0; i += 1 + name[i])
		labels++;
	depth = labels - z->labels;
	if (depth < 0)
		return -1;
	for (int i = 0; i < depth; i++)
		off += 1 + (size_t)name[off];
	return dns_name_equal(name + off, len - off, z->wire, z->len) ? depth : -1;
}

size_t dns_build_query(uint8_t *out, size_t cap, uint16_t id, const char *name, uint16_t qtype,
		       int rd)
{
	uint8_t wire[DNS_NAME_MAX];
	int n = dns_name_from_text(name, wire, sizeof(wire));
	size_t len;

	if (n < 0)
		return 0;
	len = DNS_HDR_LEN + (size_t)n + 4;
	if (len > cap)
		return 0;
	memset(out, 0, DNS_HDR_LEN);
	bytes_put_be16(out, id);
	bytes_put_be16(out + 2, rd ? DNS_FLAG_RD : 0);
	bytes_put_be16(out + 4, 1);
	memcpy(out + DNS_HDR_LEN, wire, (size_t)n);
	bytes_put_be16(out + DNS_HDR_LEN + n, qtype);
	bytes_put_be16(out + DNS_HDR_LEN + n + 2, DNS_CLASS_IN);
	return len;
}

size_t dns_query_pad(uint8_t *q, size_t len, size_t cap)
{
	uint8_t *p = q + len;

	if (len < DNS_HDR_LEN || cap < len || cap - len < DNS_PAD_OPT_LEN)
		return 0;
	/* Root owner, type OPT, class = our UDP payload size, TTL 0 (version 0, no flags). */
	memset(p, 0, DNS_PAD_OPT_LEN);
	bytes_put_be16(p + 1, DNS_TYPE_OPT);
	bytes_put_be16(p + 3, DNS_UDP_MAX);
	bytes_put_be16(p + 9, 4 + DNS_PAD_BYTES);
	bytes_put_be16(p + 11, DNS_OPT_PADDING);
	bytes_put_be16(p + 13, DNS_PAD_BYTES); /* the padding itself: zero bytes (RFC 7830 3) */
	bytes_put_be16(q + 10, 1);
	return len + DNS_PAD_OPT_LEN;
}

/* Walks the answer section from *off: every record must fit the message. Returns how many
 * answer the question (owner qname, type qtype), or -1 if a record is malformed. */
static int dns_count_answers(const uint8_t *msg, size_t len, size_t off, uint16_t ancount,
			     const uint8_t *qname, size_t qnlen, uint16_t qtype)
{
	uint8_t owner[DNS_NAME_MAX];
	int hits = 0;

	for (uint16_t i = 0; i < ancount; i++) {
		int on = dns_name_read(msg, len, &off, 1, owner);
		uint16_t rdlen;

		if (on < 0 || len - off < DNS_RR_FIXED)
			return -1;
		rdlen = bytes_be16(msg + off + 8);
		if (len - off - DNS_RR_FIXED < rdlen)
			return -1;
		if (bytes_be16(msg + off) == qtype && dns_name_equal(owner, (size_t)on, qname, qnlen))
			hits++;
		off += DNS_RR_FIXED + rdlen;
	}
	return hits;
}

int dns_parse_reply(const uint8_t *msg, size_t len, const uint8_t *query, size_t qlen,
		    struct dns_reply *r)
{
	uint8_t name[DNS_NAME_MAX], qname[DNS_NAME_MAX];
	size_t off = DNS_HDR_LEN, qoff = DNS_HDR_LEN;
	uint16_t flags;
	int n, qn, hits = 0;

	if (len < DNS_HDR_LEN || qlen < DNS_HDR_LEN)
		return DNS_REPLY_MALFORMED;
	flags = bytes_be16(msg + 2);
	if (!(flags & DNS_FLAG_QR))
		return DNS_REPLY_MALFORMED;
	if (bytes_be16(msg) != bytes_be16(query) ||
	    (flags & DNS_OPCODE_MASK) != (bytes_be16(query + 2) & DNS_OPCODE_MASK))
		return DNS_REPLY_MISMATCH;
	/* A reply without our question cannot be told from a forgery that guessed the id. */
	if (bytes_be16(msg + 4) != 1)
		return DNS_REPLY_MALFORMED;
	n = dns_name_read(msg, len, &off, 1, name);
	if (n < 0 || len - off < 4)
		return DNS_REPLY_MALFORMED;
	qn = dns_name_read(query, qlen, &qoff, 0, qname);
	if (qn < 0 || qlen - qoff < 4)
		return DNS_REPLY_MALFORMED;
	if (!dns_name_equal(name, (size_t)n, qname, (size_t)qn) ||
	    memcmp(msg + off, query + qoff, 4) != 0)
		return DNS_REPLY_MISMATCH;
	off += 4;
	memset(r, 0, sizeof(*r));
	r->id = bytes_be16(msg);
	r->rcode = flags & 0xf;
	r->aa = !!(flags & DNS_FLAG_AA);
	r->tc = !!(flags & DNS_FLAG_TC);
	r->ra = !!(flags & DNS_FLAG_RA);
	r->ancount = bytes_be16(msg + 6);
	/* A truncated reply may end anywhere after the question. */
	if (!r->tc) {
		hits = dns_count_answers(msg, len, off, r->ancount, qname, (size_t)qn,
					 bytes_be16(query + qoff));
		if (hits < 0)
			return DNS_REPLY_MALFORMED;
	}
	r->answers = hits;
	return DNS_REPLY_OK;
}

/* A 12-byte answer without the question (for queries we cannot or will not parse): never
 * longer than the query, so even garbage from a forged source is not amplified. */
static size_t dns_header_only(const uint8_t *q, uint8_t *out, int rcode)
{
	uint16_t flags = bytes_be16(q + 2);

	memset(out, 0, DNS_HDR_LEN);
	memcpy(out, q, 2);
	bytes_put_be16(out + 2, (uint16_t)(DNS_FLAG_QR | (flags & (DNS_OPCODE_MASK | DNS_FLAG_RD)) |
				      rcode));
	return DNS_HDR_LEN;
}

/* Header and the question exactly as asked (so a client's 0x20 case pattern survives). */
static size_t dns_reply_start(const uint8_t *q, size_t qend, uint8_t *out, int rcode, int aa)
{
	uint16_t flags = bytes_be16(q + 2);

	memcpy(out, q, qend);
	/* RD and CD are copied (RFC 1035 4.1.1, RFC 4035 3.1.6); RA stays 0: we never recurse. */
	bytes_put_be16(out + 2, (uint16_t)(DNS_FLAG_QR | (aa ? DNS_FLAG_AA : 0) |
				      (flags & (DNS_FLAG_RD | DNS_FLAG_CD)) | rcode));
	bytes_put_be16(out + 4, 1);
	memset(out + 6, 0, 6);
	return qend;
}

/* Appends one answer record whose owner is the question name (a pointer to offset 12). */
static size_t dns_add_rr(uint8_t *out, size_t n, uint16_t type, const void *rdata, size_t rdlen)
{
	uint8_t *p = out + n;

	bytes_put_be16(p, 0xc000 | DNS_HDR_LEN);
	bytes_put_be16(p + 2, type);
	bytes_put_be16(p + 4, DNS_CLASS_IN);
	bytes_put_be16(p + 6, 0);
	bytes_put_be16(p + 8, DNS_ANSWER_TTL);
	bytes_put_be16(p + 10, (uint16_t)rdlen);
	memcpy(p + 12, rdata, rdlen);
	bytes_put_be16(out + 6, 1);
	return n + 12 + rdlen;
}

/* The IPv4 address inside sa (plain or IPv4-mapped), else NULL. */
static const struct in_addr *dns_v4(const struct sockaddr *sa)
{
	if (sa == NULL)
		return NULL;
	if (sa->sa_family == AF_INET)
		return &((const struct sockaddr_in *)sa)->sin_addr;
	if (sa->sa_family == AF_INET6 &&
	    IN6_IS_ADDR_V4MAPPED(&((const struct sockaddr_in6 *)sa)->sin6_addr))
		return (const struct in_addr *)&((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr[12];
	return NULL;
}

/* The IPv6 address in sa unless it is IPv4-mapped, else NULL. */
static const struct in6_addr *dns_v6(const struct sockaddr *sa)
{
	if (sa == NULL || sa->sa_family != AF_INET6 || dns_v4(sa) != NULL)
		return NULL;
	return &((const struct sockaddr_in6 *)sa)->sin6_addr;
}

/* The data of the record for an existing name, or length 0 when there is none to give.
 * rdata holds at most 1 + INET6_ADDRSTRLEN bytes. */
static size_t dns_rdata(uint16_t qtype, const struct sockaddr *local, const struct sockaddr *peer,
			uint8_t *rdata)
{
	const struct in_addr *v4;
	const struct in6_addr *v6;
	char text[INET6_ADDRSTRLEN];

	switch (qtype) {
	case DNS_TYPE_A:
		if ((v4 = dns_v4(local)) == NULL)
			return 0;
		memcpy(rdata, v4, 4);
		return 4;
	case DNS_TYPE_AAAA:
		if ((v6 = dns_v6(local)) == NULL)
			return 0;
		memcpy(rdata, v6, 16);
		return 16;
	case DNS_TYPE_TXT:
		/* "whoami": the address the query came from, as this server saw it. */
		if ((v4 = dns_v4(peer)) != NULL) {
			if (inet_ntop(AF_INET, v4, text, sizeof(text)) == NULL)
				return 0;
		} else if ((v6 = dns_v6(peer)) != NULL) {
			if (inet_ntop(AF_INET6, v6, text, sizeof(text)) == NULL)
				return 0;
		} else {
			return 0;
		}
		rdata[0] = (uint8_t)strlen(text);
		memcpy(rdata + 1, text, rdata[0]);
		return 1 + (size_t)rdata[0];
	default:
		return 0;
	}
}

/* QTYPEs that ask for more than one record set or a zone transfer (RFC 1035 3.2.3, RFC 8482):
 * refused, so nobody can make us send everything we have. */
static int dns_meta_type(uint16_t qtype)
{
	return qtype >= DNS_TYPE_IXFR && qtype <= DNS_TYPE_ANY;
}

/* EDNS: an OPT record in the query's additional section is accepted and not echoed, and the
 * sections after the question are not even read. RFC 6891 7 lets a responder without EDNS
 * answer without OPT; the requester then keeps to 512 bytes, and every answer here is far
 * smaller. Echoing OPT would buy nothing and would mean version negotiation (BADVERS), option
 * handling (cookies, padding) and 11 more bytes in every answer. Its bytes do count towards
 * qlen, which is how a padded query (dns_query_pad) makes room for its record. */
size_t dns_answer(const struct dns_zone *z, const uint8_t *q, size_t qlen,
		  const struct sockaddr *local, const struct sockaddr *peer, uint8_t *out,
		  size_t cap)
{
	uint8_t name[DNS_NAME_MAX], rdata[1 + INET6_ADDRSTRLEN];
	size_t off = DNS_HDR_LEN, n, rdlen;
	uint16_t flags, qtype, qclass;
	int nlen, depth;

	/* Too short to carry an id, or itself an answer: silence (no loops between servers). */
	if (qlen < DNS_HDR_LEN || cap < DNS_HDR_LEN)
		return 0;
	flags = bytes_be16(q + 2);
	if (flags & DNS_FLAG_QR)
		return 0;
	if (flags & DNS_OPCODE_MASK)
		return dns_header_only(q, out, DNS_RCODE_NOTIMP);
	/* No compression in the question: the only earlier bytes a pointer could name are the
	 * header's, no real client does that, and an uncompressed echo keeps the size bound. */
	if (bytes_be16(q + 4) != 1 || (nlen = dns_name_read(q, qlen, &off, 0, name)) < 0 ||
	    qlen - off < 4)
		return dns_header_only(q, out, DNS_RCODE_FORMERR);
	qtype = bytes_be16(q + off);
	qclass = bytes_be16(q + off + 2);
	off += 4;
	/* The biggest answer: this question plus a record of 12 + 1 + INET6_ADDRSTRLEN bytes. */
	if (cap < off + 12 + sizeof(rdata))
		return 0;
	depth = dns_zone_depth(z, name, (size_t)nlen);
	if (qclass != DNS_CLASS_IN || depth < 0 || dns_meta_type(qtype))
		return dns_reply_start(q, off, out, DNS_RCODE_REFUSED, 0);
	if (depth > 1)
		return dns_reply_start(q, off, out, DNS_RCODE_NXDOMAIN, 1);
	n = dns_reply_start(q, off, out, DNS_RCODE_NOERROR, 1);
	rdlen = dns_rdata(qtype, local, peer, rdata);
	if (rdlen > 0)
		n = dns_add_rr(out, n, qtype, rdata, rdlen);
	/* Never more bytes than the query: a forged source gains nothing. A short query gets the
	 * question alone with TC set (off <= qlen: the question is a copy of the query's). */
	if (n > qlen) {
		n = dns_reply_start(q, off, out, DNS_RCODE_NOERROR, 1);
		bytes_put_be16(out + 2, (uint16_t)(bytes_be16(out + 2) | DNS_FLAG_TC));
	}
	if (n > qlen || n > DNS_UDP_MAX)
		return 0;
	return n;
}

static int dns_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* True if s is an IPv4 or IPv6 address, the latter optionally with a "%scope" suffix. */
static int dns_valid_addr(const char *s)
{
	char buf[INET6_ADDRSTRLEN];
	struct in6_addr a6;
	struct in_addr a4;
	const char *pct = strchr(s, '%');
	size_t n = pct ? (size_t)(pct - s) : strlen(s);

	if (inet_pton(AF_INET, s, &a4) == 1)
		return 1;
	if (n >= sizeof(buf) || (pct && (pct[1] == '\0' || strlen(pct + 1) >= IF_NAMESIZE)))
		return 0;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return inet_pton(AF_INET6, buf, &a6) == 1;
}

/* The address of one resolv.conf line if it is "nameserver ADDR", copied into addr. */
static int dns_resolv_line(const char *l, size_t n, char *addr, size_t addrlen)
{
	static const char kw[] = "nameserver";
	char tok[INET6_ADDRSTRLEN + IF_NAMESIZE + 1];
	size_t i = 0, start;

	while (i < n && dns_blank(l[i]))
		i++;
	if (n - i <= sizeof(kw) - 1 || memcmp(l + i, kw, sizeof(kw) - 1) != 0 ||
	    !dns_blank(l[i + sizeof(kw) - 1]))
		return -1;
	i += sizeof(kw) - 1;
	while (i < n && dns_blank(l[i]))
		i++;
	start = i;
	while (i < n && !dns_blank(l[i]) && l[i] != '#' && l[i] != ';')
		i++;
	if (i == start || i - start >= sizeof(tok) || i - start >= addrlen ||
	    memchr(l + start, '\0', i - start) != NULL)
		return -1;
	memcpy(tok, l + start, i - start);
	tok[i - start] = '\0';
	if (!dns_valid_addr(tok))
		return -1;
	memcpy(addr, tok, i - start + 1);
	return 0;
}

int dns_system_resolver(const char *resolv_conf_text, size_t len, char *addr, size_t addrlen)
{
	size_t i = 0;

	while (i < len) {
		const char *nl = memchr(resolv_conf_text + i, '\n', len - i);
		size_t eol = nl ? (size_t)(nl - resolv_conf_text) : len;

		if (dns_resolv_line(resolv_conf_text + i, eol - i, addr, addrlen) == 0)
			return 0;
		i = eol + 1;
	}
	return -1;
}

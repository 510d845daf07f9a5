/* dns: the DNS wire codec bloatmeter needs and nothing more — building a probe query, checking
 * a reply against it, the authoritative responder's whole answer logic, and reading the system
 * resolver from resolv.conf text. Pure (no sockets, no allocation); every parser is bounded by
 * its input and fuzzed (tests/fuzz/fuzz_dns.c). */
#ifndef BM_DNS_H
#define BM_DNS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define DNS_HDR_LEN 12
#define DNS_NAME_MAX 255       /* a name in wire form, root label included (RFC 1035 2.3.4) */
#define DNS_LABEL_MAX 63
#define DNS_UDP_MAX 512        /* plain DNS over UDP, no EDNS */
/* EDNS(0) padding a probe query carries (RFC 7830): an OPT record (11 bytes) with one Padding
 * option (4 + 48 bytes). 63 bytes cover the largest record an answer adds (a TXT of an IPv6
 * address, 58 bytes), so a padded query gets its whole answer within its own size. */
#define DNS_PAD_BYTES 48
#define DNS_PAD_OPT_LEN (11 + 4 + DNS_PAD_BYTES)
#define DNS_QUERY_MAX (DNS_HDR_LEN + DNS_NAME_MAX + 4 + DNS_PAD_OPT_LEN)
#define DNS_DEFAULT_ZONE "probe.bloatmeter.test"

enum dns_type {
	DNS_TYPE_A = 1,
	DNS_TYPE_TXT = 16,
	DNS_TYPE_AAAA = 28,
	DNS_TYPE_OPT = 41,
	DNS_TYPE_IXFR = 251,
	DNS_TYPE_AXFR = 252,
	DNS_TYPE_ANY = 255,
};

#define DNS_CLASS_IN 1

enum dns_rcode {
	DNS_RCODE_NOERROR = 0,
	DNS_RCODE_FORMERR = 1,
	DNS_RCODE_SERVFAIL = 2,
	DNS_RCODE_NXDOMAIN = 3,
	DNS_RCODE_NOTIMP = 4,
	DNS_RCODE_REFUSED = 5,
};

/* The zone the responder is authoritative for, in lower-case wire form. */
struct dns_zone {
	uint8_t wire[DNS_NAME_MAX];
	size_t len;
	int labels;                /* not counting the root */
};

/* Converts a host-style name ("a.b.c", trailing dot optional; letters, digits, '-' and '_'
 * only, labels 1..63 bytes, at least one label) to wire form. Returns the wire length
 * (root label included) or -1 if the name is invalid or does not fit cap. */
int dns_name_from_text(const char *text, uint8_t *wire, size_t cap);
/* Sets z from a zone name (dns_name_from_text rules); -1 if invalid. */
int dns_zone_init(struct dns_zone *z, const char *name);

/* Writes a query for name/qtype (class IN, one question, no EDNS) with RD set when rd != 0.
 * Returns its length, or 0 if the name is invalid or cap is too small. */
size_t dns_build_query(uint8_t *out, size_t cap, uint16_t id, const char *name, uint16_t qtype,
		       int rd);

struct dns_reply {
	uint16_t id;
	int rcode;                 /* enum dns_rcode (4 bits: no EDNS extended rcode) */
	int aa, tc, ra;
	uint16_t ancount;
	int answers;               /* answer records of the asked type (0 when truncated) */
};

enum { DNS_REPLY_OK = 0, DNS_REPLY_MALFORMED = -1, DNS_REPLY_MISMATCH = -2 };

/* Appends the EDNS(0) OPT record with DNS_PAD_BYTES of padding to the query q of length len
 * (one built by dns_build_query, no additional records yet) and sets ARCOUNT to 1. Returns the
 * new length, or 0 if cap is too small. */
size_t dns_query_pad(uint8_t *q, size_t len, size_t cap);

/* Checks msg as the reply to query (a message built by dns_build_query). DNS_REPLY_OK and *r
 * filled for a well-formed response (QR=1, exactly one question, answer records that fit the
 * message unless TC is set) with the query's id, opcode and question (name compared without
 * regard to ASCII case, type, class); DNS_REPLY_MISMATCH for a well-formed reply to another
 * query; DNS_REPLY_MALFORMED otherwise. Never reads outside msg or query. */
int dns_parse_reply(const uint8_t *msg, size_t len, const uint8_t *query, size_t qlen,
		    struct dns_reply *r);

/* The authoritative responder: builds the answer to the datagram q that arrived on local from
 * peer (either may be NULL when unknown; IPv4-mapped IPv6 counts as IPv4). Returns the answer
 * length, or 0 for "send nothing": fewer than 12 bytes (no id to answer) or QR=1 (never answer
 * an answer: no loops between responders). Everything else gets an answer no longer than the
 * query, so the responder amplifies nothing (0 if cap is smaller than the largest answer would
 * need: the question plus 12 + 1 + INET6_ADDRSTRLEN bytes). An answer whose record would make it
 * longer than the query is sent as the question alone with TC set (RFC 1035 4.1.1); a client
 * pads its queries (dns_query_pad) to get the record itself.
 * opcode != 0 → NOTIMP; qdcount != 1, a malformed question or a compression pointer in it
 * → FORMERR (both header only);
 * class != IN, a name outside the zone, or a meta type (ANY, AXFR, IXFR, MAILA, MAILB) →
 * REFUSED; two or more labels below the apex → NXDOMAIN; the apex and one label below it
 * exist: A → local IPv4 address, AAAA → local IPv6 address, TXT → peer address ("whoami"),
 * anything else (or A/AAAA without such a local address) → NOERROR with no answer. */
size_t dns_answer(const struct dns_zone *z, const uint8_t *q, size_t qlen,
		  const struct sockaddr *local, const struct sockaddr *peer, uint8_t *out,
		  size_t cap);

/* Copies the address of the first valid "nameserver" line of resolv.conf text (not
 * necessarily NUL-terminated) into addr. 0, or -1 if there is none or it does not fit. */
int dns_system_resolver(const char *resolv_conf_text, size_t len, char *addr, size_t addrlen);

#endif

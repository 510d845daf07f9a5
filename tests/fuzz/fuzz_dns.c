/* fuzz_dns: hostile bytes as a DNS reply (against a query with the input's own id, so the
 * parser gets past the id check), as a query to the authoritative responder (answers stay
 * within their size bound and parse as replies to the query), and as resolv.conf text. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/dns.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct dns_zone fuzz_zone;
static struct sockaddr_in fuzz_local4, fuzz_peer4;
static struct sockaddr_in6 fuzz_local6, fuzz_peer6;

static void fuzz_dns_init(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	fuzz_local4.sin_family = fuzz_peer4.sin_family = AF_INET;
	fuzz_local6.sin6_family = fuzz_peer6.sin6_family = AF_INET6;
	if (dns_zone_init(&fuzz_zone, DNS_DEFAULT_ZONE) != 0 ||
	    inet_pton(AF_INET, "192.0.2.53", &fuzz_local4.sin_addr) != 1 ||
	    inet_pton(AF_INET, "198.51.100.7", &fuzz_peer4.sin_addr) != 1 ||
	    inet_pton(AF_INET6, "2001:db8::53", &fuzz_local6.sin6_addr) != 1 ||
	    inet_pton(AF_INET6, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe", &fuzz_peer6.sin6_addr) != 1)
		abort();
}

/* The reply parser never reads outside its input and fills a consistent result. */
static void fuzz_dns_reply(const uint8_t *data, size_t size)
{
	static const uint16_t types[] = { DNS_TYPE_A, DNS_TYPE_AAAA, DNS_TYPE_TXT };
	uint8_t q[DNS_QUERY_MAX];
	uint16_t id = size >= 2 ? (uint16_t)(data[0] << 8 | data[1]) : 0;
	struct dns_reply r;
	size_t qn = dns_build_query(q, sizeof(q), id, "1-0badcafe." DNS_DEFAULT_ZONE,
				    types[size % 3], size & 1);

	if (qn == 0)
		abort();
	if (dns_parse_reply(data, size, q, qn, &r) == DNS_REPLY_OK &&
	    (r.id != id || r.rcode < 0 || r.rcode > 15 || r.answers > r.ancount ||
	     (r.tc && r.answers != 0)))
		abort();
}

/* The responder: never more bytes than the query (no amplification; ASan catches any overrun
 * of the buffer), never an answer to an answer, and every answer with a question is a
 * well-formed reply to the query it answers. */
static void fuzz_dns_answer(const uint8_t *data, size_t size)
{
	size_t cap = DNS_UDP_MAX;
	uint8_t *out = malloc(cap);
	struct dns_reply r;
	int v6 = size & 1;
	size_t n;

	if (out == NULL)
		abort();
	n = dns_answer(&fuzz_zone, data, size,
		       v6 ? (struct sockaddr *)&fuzz_local6 : (struct sockaddr *)&fuzz_local4,
		       v6 ? (struct sockaddr *)&fuzz_peer6 : (struct sockaddr *)&fuzz_peer4, out, cap);
	if (n > cap || n > size || (n > 0 && (size < DNS_HDR_LEN || (data[2] & 0x80) || !(out[2] & 0x80) ||
				  memcmp(out, data, 2) != 0)))
		abort();
	if (n > DNS_HDR_LEN && dns_parse_reply(out, n, data, size, &r) != DNS_REPLY_OK)
		abort();
	free(out);
}

/* resolv.conf: whatever it finds is a NUL-terminated string that fit the buffer. */
static void fuzz_dns_resolv(const uint8_t *data, size_t size)
{
	char addr[48];

	if (dns_system_resolver((const char *)data, size, addr, sizeof(addr)) == 0 &&
	    (strnlen(addr, sizeof(addr)) == sizeof(addr) || addr[0] == '\0'))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_dns_init();
	fuzz_dns_reply(data, size);
	fuzz_dns_answer(data, size);
	fuzz_dns_resolv(data, size);
	return 0;
}

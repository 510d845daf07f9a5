/* fuzz_icmp: hostile bytes as every kind of message an ICMP probe socket returns — raw IPv4
 * (IP header first), ping-socket IPv4, ICMPv6, and a ping socket's error-queue quote. */
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "probes/icmp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What any accepted message must satisfy: a known verdict, and fields read from inside it. */
static void fuzz_icmp_check(enum icmp_parse_result r, const struct icmp_parsed *m, size_t size)
{
	if (r < ICMP_PARSE_BAD || r > ICMP_PARSE_ERROR)
		abort();
	if (r != ICMP_PARSE_REPLY && r != ICMP_PARSE_ERROR)
		return;
	if (m->payload_len + ICMP_HDR_LEN > size)
		abort();
	if (m->has_cookie != (m->payload_len >= ICMP_COOKIE_LEN))
		abort();
}

/* A ping-socket reply is the echo header and payload as they arrived: rebuilding the echo
 * from the parsed fields reproduces the cookie prefix. */
static void fuzz_icmp_roundtrip(const uint8_t *data, size_t size, const struct icmp_parsed *m)
{
	uint8_t buf[ICMP_HDR_LEN + ICMP_COOKIE_LEN];

	if (!m->has_cookie)
		return;
	icmp_build_echo(AF_INET, m->id, m->seq32, m->cookie, buf, ICMP_COOKIE_LEN);
	if (memcmp(buf + 4, data + 4, 2) != 0 || memcmp(buf + 8, data + 8, ICMP_COOKIE_LEN) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct icmp_parsed m;
	enum icmp_parse_result r;

	r = icmp_parse(AF_INET, 1, data, size, &m);
	fuzz_icmp_check(r, &m, size);
	if (r == ICMP_PARSE_REPLY || r == ICMP_PARSE_ERROR) {
		size_t hl = (size_t)(data[0] & 0x0f) * 4;
		size_t total = (size_t)data[2] << 8 | data[3];

		/* only a verified checksum gets through */
		if (icmp_checksum(data + hl, total - hl) != 0)
			abort();
	}
	r = icmp_parse(AF_INET, 0, data, size, &m);
	fuzz_icmp_check(r, &m, size);
	if (r == ICMP_PARSE_REPLY)
		fuzz_icmp_roundtrip(data, size, &m);
	fuzz_icmp_check(icmp_parse(AF_INET6, 0, data, size, &m), &m, size);
	fuzz_icmp_check(icmp_parse(AF_INET6, 1, data, size, &m), &m, size);
	fuzz_icmp_check(icmp_parse_quoted_echo(AF_INET, data, size, &m), &m, size);
	fuzz_icmp_check(icmp_parse_quoted_echo(AF_INET6, data, size, &m), &m, size);
	return 0;
}

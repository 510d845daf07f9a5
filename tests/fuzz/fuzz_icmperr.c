/* fuzz_icmperr: hostile bytes as the ICMP/ICMPv6 answer to a TTL-limited probe. */
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "probes/icmperr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A known verdict; fields set only for a probe answer, consistently with its protocol. */
static void fuzz_icmperr_check(enum icmperr_kind r, const struct icmperr_msg *m)
{
	if (r < ICMPERR_BAD || r > ICMPERR_ECHO_REPLY)
		abort();
	if (r <= ICMPERR_OTHER && (m->proto != ICMPERR_Q_NONE || m->qdst_len != 0))
		abort();
	if (r > ICMPERR_OTHER && m->proto == ICMPERR_Q_NONE)
		abort();
	if (m->qdst_len != 0 && m->qdst_len != 4 && m->qdst_len != 16)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct icmperr_msg m;

	fuzz_icmperr_check(icmperr_parse(AF_INET, data, size, &m), &m);
	fuzz_icmperr_check(icmperr_parse(AF_INET6, data, size, &m), &m);
	return 0;
}

/* fuzz_labpkt: hostile bytes as a packet read from the lab shaper's TUN device — the header
 * parser and the CE marker that rewrites it in place. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client/lab/ecnmark.h"
#include "client/lab/pkt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A parsed header lies inside the bytes read. */
static void fuzz_labpkt_check(const struct pkt_info *pi, size_t size)
{
	if (pi->version != 4 && pi->version != 6)
		abort();
	if (pi->hdr_len > pi->total_len || pi->total_len > size)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pkt_info pi, after;
	uint8_t buf[LAB_PKT_MAX];
	int r;

	if (size > sizeof(buf))
		return 0;
	memcpy(buf, data, size);
	if (pkt_parse(buf, size, &pi) != 0) {
		if (ecn_mark(buf, size) != -1 || memcmp(buf, data, size) != 0)
			abort();
		return 0;
	}
	fuzz_labpkt_check(&pi, size);
	r = ecn_mark(buf, size);
	if (r != (pi.ecn != PKT_NOT_ECT))
		abort();
	/* Marking changes only the ECN bits (and the IPv4 checksum) and leaves a valid header. */
	if (pkt_parse(buf, size, &after) != 0 || after.total_len != pi.total_len ||
	    after.flow_hash != pi.flow_hash)
		abort();
	if (r == 1 && after.ecn != PKT_CE)
		abort();
	if (r == 1 && pi.ecn != PKT_CE && pi.version == 4 && ecn_ipv4_csum(buf, pi.hdr_len) != 0)
		abort();
	return 0;
}

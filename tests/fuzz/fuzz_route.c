/* fuzz_route: hostile bytes as the kernel's answer to an RTM_GETROUTE request (sequence 1),
 * read as IPv4 and as IPv6. */
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/route.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An accepted answer holds addresses of the families a route can name. */
static void fuzz_route_check(int rc, const struct route_info *ri, const char *err)
{
	if (rc < -1 || rc > 1)
		abort();
	if (rc == -1 && err[0] == '\0')
		abort(); /* every refusal says why */
	if (rc != 1)
		return;
	if (ri->has_gateway && ri->gateway.ss_family != AF_INET &&
	    ri->gateway.ss_family != AF_INET6)
		abort();
	if (ri->src.ss_family != AF_UNSPEC && ri->src.ss_family != AF_INET &&
	    ri->src.ss_family != AF_INET6)
		abort();
	if (ri->ifname[0] != '\0')
		abort(); /* the parser never names interfaces */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size heap copy: netlink buffers are aligned, and ASan sees any overrun. */
	uint8_t *buf = malloc(size ? size : 1);
	struct route_info ri;
	char err[160];

	if (buf == NULL)
		abort();
	memcpy(buf, data, size);
	err[0] = '\0';
	fuzz_route_check(route_parse_reply(buf, size, 1, AF_INET, &ri, err, sizeof(err)), &ri, err);
	err[0] = '\0';
	fuzz_route_check(route_parse_reply(buf, size, 1, AF_INET6, &ri, err, sizeof(err)), &ri, err);
	free(buf);
	return 0;
}

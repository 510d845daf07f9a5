/* ecn: net.ipv4.tcp_ecn of the current network namespace, read and, in a namespace of our own,
 * set to 1. /proc/sys/net reflects the namespace of the process that opens it. */
#include "client/run/ecn.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define ECN_SYSCTL "/proc/sys/net/ipv4/tcp_ecn"

static int ecn_read(void)
{
	FILE *f = fopen(ECN_SYSCTL, "r");
	int v = -1;

	if (f == NULL)
		return -1;
	if (fscanf(f, "%d", &v) != 1)
		v = -1;
	(void)fclose(f);
	return v;
}

/* Writes 1; 0 or -1 with errno. */
static int ecn_write_on(void)
{
	FILE *f = fopen(ECN_SYSCTL, "w");
	int rc;

	if (f == NULL)
		return -1;
	rc = fputs("1\n", f) == EOF ? -1 : 0;
	if (fclose(f) == EOF)
		rc = -1;
	return rc;
}

void ecn_request(int own_netns, struct ecn_report *rep)
{
	rep->requested = 1;
	rep->sysctl = ecn_read();
	rep->enabled = rep->sysctl == 1;
	if (rep->enabled) {
		snprintf(rep->how, sizeof(rep->how), "net.ipv4.tcp_ecn is 1: new connections ask for ECN");
		return;
	}
	if (own_netns) {
		if (ecn_write_on() == 0 && ecn_read() == 1) {
			rep->enabled = 1;
			snprintf(rep->how, sizeof(rep->how), "net.ipv4.tcp_ecn set to 1 in the lab's client namespace (was %d)",
				 rep->sysctl);
		} else {
			snprintf(rep->how, sizeof(rep->how), "cannot set net.ipv4.tcp_ecn in the lab's client namespace: %s",
				 strerror(errno));
		}
		return;
	}
	if (rep->sysctl < 0)
		snprintf(rep->how, sizeof(rep->how), "cannot read " ECN_SYSCTL ": %s; ECN not requested",
			 strerror(errno));
	else
		snprintf(rep->how, sizeof(rep->how), "net.ipv4.tcp_ecn is %d, so the load flows do not ask for ECN; set it to 1, or add 'features ecn' to the route to the server (root)",
			 rep->sysctl);
}

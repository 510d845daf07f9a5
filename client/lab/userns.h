/* userns: the lab without root — the process moves into a user namespace of its own, where
 * its uid and gid are root, together with new network and mount namespaces; root there holds
 * CAP_NET_ADMIN over every namespace the lab then creates (veths, tbf, TUN, nftables), and a
 * tmpfs on /run/netns keeps `ip netns add` off the host's. Called by the command line, before
 * any thread starts, when `bloatmeter lab` is not run as root. */
#ifndef BM_LAB_USERNS_H
#define BM_LAB_USERNS_H

#include <stddef.h>

/* As root: nothing, 0. Otherwise enters the namespaces: 0, or -1 with one sentence in err
 * that says root is needed and why (the kernel refused an unprivileged user namespace). */
int lab_userns_enter(char *err, size_t errlen);

#endif

/* ecn: asks for ECN on the load flows (--ecn) by the least privileged means that works. Linux
 * requests ECN on outgoing connections per network namespace (net.ipv4.tcp_ecn = 1) or per
 * route (features ecn); there is no per-socket switch. This reads the namespace's setting and
 * sets it only in a namespace the run owns (the lab's client namespace), never on the host.
 * Layer: client/run; called by cli.c before the measurement. */
#ifndef BM_ECN_H
#define BM_ECN_H

#include "client/model/result.h"

/* Fills rep->requested, enabled, sysctl and how. own_netns: the caller runs in a network
 * namespace of its own (the lab), where setting tcp_ecn touches nothing else. */
void ecn_request(int own_netns, struct ecn_report *rep);

#endif

/* fleetrace: the idle-RTT race among the candidates of a fleet (client/model/fleet.h).
 * Layer: client/run; called by the command line. */
#ifndef BM_FLEETRACE_H
#define BM_FLEETRACE_H

#include <stddef.h>
#include <sys/socket.h>

#include "client/model/fleet.h"

/* Resolves every candidate (to an address of local's family when local is not NULL) and,
 * from local (-B) when not NULL, races timed handshakes to all of them at once (closed with a
 * reset, so neither end keeps TIME_WAIT); fills the per-candidate figures and f->chosen.
 * Returns the chosen index, or -1 with one sentence in err (none reachable, interrupted). */
int fleet_measure(struct fleet *f, const struct fleet_timing *t,
		  const struct sockaddr_storage *local, char *err, size_t errlen);

#endif

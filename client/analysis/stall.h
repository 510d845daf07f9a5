/* stall: the probes a host stall held. The probe schedule is absolute (probes/schedule.h): when
 * the host stalls, the sender misses its slots and the next probe leaves late. A probe in flight
 * across that gap waited in a queue, a forwarder or a receive path that stalled too, and came
 * back late by up to the stall: a delay the bottleneck's buffer never held (lab on a loaded
 * host: 182 ms one-way under a 115 ms gap, for a 100 ms buffer). Pure function; the buffer
 * estimate (client/analysis) calls it. */
#ifndef BM_STALL_H
#define BM_STALL_H

#include <stddef.h>
#include <stdint.h>

#include "probes/udp.h"

/* Marks held[i] = 1 for each answered probe of p[0..n) (send order) whose flight, send to
 * send + rtt, overlaps a gap between two consecutive sends of more than 1.5 times the median
 * of the 17 spacings around it; 0 for the others. Returns how many it marked. */
size_t stall_held(const struct probe_rec *p, size_t n, uint8_t *held);

#endif

/* delivered: a loaded direction's sender-side delivered-byte series, what the saturation rule
 * judges. The senders' TCP_INFO count of delivered segments (SACKed ones included) rises at
 * the bottleneck's rate whenever it is busy; the receiver's in-order bytes stall for a round
 * trip after each loss and then jump, which at long RTTs and low rates kept a full link from
 * ever looking steady (500 kbit/s with a 500 ms buffer: "never saturated" with the queue at
 * its top). Upload: the client's own flow samples; download: the server's stats.
 * Pure; called by analysis.c only. */
#ifndef BM_DELIVERED_H
#define BM_DELIVERED_H

#include <stddef.h>
#include <stdint.h>

#include "client/model/result.h"

/* The cumulative series over samples taken in [from, to] into *out (caller frees); how many
 * samples, 0 (and *out NULL) when the senders' count is unknown (an older server or kernel,
 * or the HTTP mode's downloads) or there is no memory. */
size_t delivered_series(const struct test_result *r, int up, int64_t from, int64_t to,
			struct tput_rec **out);

#endif

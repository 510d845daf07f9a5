/* schedule: the absolute send schedule every active probe kind uses — slot k at start +
 * k × interval, so timer slack never accumulates into drift, and after a stall the missed
 * slots are skipped and counted instead of sent in a burst. */
#ifndef BM_PROBE_SCHEDULE_H
#define BM_PROBE_SCHEDULE_H

#include <stdatomic.h>
#include <stdint.h>

#include <event2/event.h>

struct probe_schedule {
	int64_t next_ns;     /* the next slot; 0 until the first (set on first use) */
	int64_t interval_ns;
	uint64_t skipped;    /* slots skipped because the loop ran late */
	_Atomic int64_t want_ns; /* a new interval asked from another thread; 0: none */
};

/* Called from the send callback after sending: moves to the first slot after now and arms
 * the one-shot timer ev for it. Returns 0, or -1 when the timer could not be armed. */
int schedule_rearm(struct probe_schedule *s, struct event *ev);
/* From any thread: the slots after the next one are interval_ns apart (the probe budget,
 * client/run/probeadapt.c). The change takes effect at the next rearm, so the schedule stays
 * absolute: the next slot is the last one plus the new interval, never "now" plus it. */
void schedule_set_interval(struct probe_schedule *s, int64_t interval_ns);

#endif

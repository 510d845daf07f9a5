/* schedule: the absolute send schedule every active probe kind uses — slot k at start +
 * k × interval, so timer slack never accumulates into drift, and after a stall the missed
 * slots are skipped and counted instead of sent in a burst. */
#ifndef BM_PROBE_SCHEDULE_H
#define BM_PROBE_SCHEDULE_H

#include <stdint.h>

#include <event2/event.h>

struct probe_schedule {
	int64_t next_ns;     /* the next slot; 0 until the first (set on first use) */
	int64_t interval_ns;
	uint64_t skipped;    /* slots skipped because the loop ran late */
};

/* Called from the send callback after sending: moves to the first slot after now and arms
 * the one-shot timer ev for it. Returns 0, or -1 when the timer could not be armed. */
int schedule_rearm(struct probe_schedule *s, struct event *ev);

#endif

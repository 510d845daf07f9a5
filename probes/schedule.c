/* schedule: absolute probe schedules (see schedule.h). */
#include "probes/schedule.h"

#include "common/clock.h"

int schedule_rearm(struct probe_schedule *s, struct event *ev)
{
	int64_t now = clock_mono_ns(), wait, want = atomic_exchange(&s->want_ns, 0);
	struct timeval tv;

	if (want > 0)
		s->interval_ns = want;
	if (s->next_ns == 0)
		s->next_ns = now; /* the first slot was the one just sent */
	s->next_ns += s->interval_ns;
	while (s->next_ns <= now) {
		s->next_ns += s->interval_ns;
		s->skipped++;
	}
	wait = s->next_ns - now;
	tv.tv_sec = (time_t)(wait / NS_PER_SEC);
	tv.tv_usec = (suseconds_t)(wait % NS_PER_SEC / 1000);
	return event_add(ev, &tv);
}

void schedule_set_interval(struct probe_schedule *s, int64_t interval_ns)
{
	if (interval_ns > 0)
		atomic_store(&s->want_ns, interval_ns);
}

/* probebase: the send timer, schedule and stop flag every probe kind shares (see probebase.h). */
#include "probes/probebase.h"

void probe_base_stop(struct probe_base *b)
{
	b->stopping = 1;
	if (b->send_ev)
		event_del(b->send_ev);
}

void probe_base_free(struct probe_base *b)
{
	if (b->send_ev)
		event_free(b->send_ev);
	b->send_ev = NULL;
}

void probe_base_stop_sending(void *probe)
{
	probe_base_stop(probe);
}

void probe_base_set_interval(void *probe, int64_t interval_ns)
{
	struct probe_base *b = probe;

	schedule_set_interval(&b->sched, interval_ns);
}

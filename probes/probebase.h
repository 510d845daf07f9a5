/* probebase: what every active probe kind (udp, icmp, dns, tcpconn, hopprobe) shares — its
 * send timer, the absolute schedule that re-arms it and the flag that stops sending — and the
 * one way to stop sending and to free the timer. Each kind embeds a struct probe_base as the
 * FIRST member of its probe, so the probe pointer the runner holds is also a pointer to its
 * base (probe_base_stop_sending and probe_base_set_interval fit struct probe_ops as they
 * are). For the probe kinds in probes/ only; the series (probe_series or hop_trace) stays the
 * kind's own, as the kinds differ there. */
#ifndef BM_PROBE_PROBEBASE_H
#define BM_PROBE_PROBEBASE_H

#include <stdint.h>

#include <event2/event.h>

#include "probes/schedule.h"

struct probe_base {
	struct event *send_ev;       /* one-shot send timer, re-armed by sched; NULL until made */
	struct probe_schedule sched;
	int stopping;                /* set: the send callback sends nothing more */
};

/* In the thread of the probe's event loop: send nothing new (answers still arrive). */
void probe_base_stop(struct probe_base *b);
/* After the loop ended: frees the send timer. */
void probe_base_free(struct probe_base *b);

/* struct probe_ops members for a probe whose first member is its struct probe_base. */
void probe_base_stop_sending(void *probe);
void probe_base_set_interval(void *probe, int64_t interval_ns);

#endif

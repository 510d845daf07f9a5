/* runner: one thread with its own event loop for the auxiliary probes (ICMP, DNS, new TCP
 * connections), so bulk traffic on the load loop never delays their timing. Probe modules
 * add their events to runner_base() before runner_start(); after runner_stop() the thread is
 * gone and their series may be read from the caller's thread. */
#ifndef BM_PROBE_RUNNER_H
#define BM_PROBE_RUNNER_H

#include <stdint.h>

#include <event2/event.h>

struct probe_ops {
	void (*stop_sending)(void *probe); /* runs in the runner thread: send nothing new */
	void (*destroy)(void *probe);      /* runs after the thread ended: close and free */
	/* Any thread: the interval from the next slot on (schedule_set_interval). */
	void (*set_interval)(void *probe, int64_t interval_ns);
};

/* Probes one runner holds. */
#define RUNNER_MAX 16

struct probe_runner;

struct probe_runner *runner_new(char *err, size_t errlen);
struct event_base *runner_base(struct probe_runner *r);
/* Registers a started probe (before runner_start). -1 when full. */
int runner_add(struct probe_runner *r, void *probe, const struct probe_ops *ops);
/* Starts the thread. -1 with err on failure. */
int runner_start(struct probe_runner *r, char *err, size_t errlen);
/* Asks every probe to stop sending, lets late answers arrive for grace_ns, joins the thread.
 * Safe to call when the thread never started. */
void runner_stop(struct probe_runner *r, int64_t grace_ns);
/* Stops if needed, destroys every probe, frees the runner. */
void runner_free(struct probe_runner *r);

#endif

/* runner: the auxiliary probes' thread. Stopping is two-step (stop sending, then a grace
 * period for late answers) so that the last probes of a test are not counted as lost. */
#include "probes/runner.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

struct runner_slot {
	void *probe;
	const struct probe_ops *ops;
};

struct probe_runner {
	struct event_base *base;
	struct event *stop_ev, *grace_ev;
	struct runner_slot slot[RUNNER_MAX];
	int n;
	int started, joined;
	int64_t grace_ns;
	pthread_t thread;
};

struct probe_runner *runner_new(char *err, size_t errlen)
{
	struct probe_runner *r = calloc(1, sizeof(*r));
	struct event_config *ec = event_config_new();

	if (r == NULL || ec == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	/* Probe timers need sub-millisecond precision: use CLOCK_MONOTONIC, not the coarse clock. */
	if (event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER) < 0 ||
	    (r->base = event_base_new_with_config(ec)) == NULL) {
		snprintf(err, errlen, "cannot create the probe event loop");
		goto fail;
	}
	event_config_free(ec);
	return r;
fail:
	if (ec)
		event_config_free(ec);
	free(r);
	return NULL;
}

struct event_base *runner_base(struct probe_runner *r)
{
	return r->base;
}

int runner_add(struct probe_runner *r, void *probe, const struct probe_ops *ops)
{
	if (r->n >= RUNNER_MAX || r->started)
		return -1;
	r->slot[r->n].probe = probe;
	r->slot[r->n].ops = ops;
	r->n++;
	return 0;
}

static void runner_grace_callback(evutil_socket_t fd, short what, void *arg)
{
	struct probe_runner *r = arg;

	event_base_loopbreak(r->base);
}

/* In the runner thread (event_active from another thread is safe with evthread locking). */
static void runner_stop_callback(evutil_socket_t fd, short what, void *arg)
{
	struct probe_runner *r = arg;
	struct timeval tv = { .tv_sec = r->grace_ns / 1000000000,
			      .tv_usec = (r->grace_ns % 1000000000) / 1000 };

	for (int i = 0; i < r->n; i++)
		if (r->slot[i].ops->stop_sending)
			r->slot[i].ops->stop_sending(r->slot[i].probe);
	r->grace_ev = evtimer_new(r->base, runner_grace_callback, r);
	if (r->grace_ev == NULL || evtimer_add(r->grace_ev, &tv) < 0)
		event_base_loopbreak(r->base);
}

static void *runner_main(void *arg)
{
	struct probe_runner *r = arg;

	if (event_base_loop(r->base, EVLOOP_NO_EXIT_ON_EMPTY) < 0)
		log_warn("probe event loop failed");
	return NULL;
}

int runner_start(struct probe_runner *r, char *err, size_t errlen)
{
	int rc;

	r->stop_ev = event_new(r->base, -1, 0, runner_stop_callback, r);
	if (r->stop_ev == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = pthread_create(&r->thread, NULL, runner_main, r);
	if (rc != 0) {
		snprintf(err, errlen, "cannot start the probe thread: %s", strerror(rc));
		return -1;
	}
	r->started = 1;
	return 0;
}

void runner_stop(struct probe_runner *r, int64_t grace_ns)
{
	if (r == NULL || !r->started || r->joined)
		return;
	r->grace_ns = grace_ns > 0 ? grace_ns : 0;
	event_active(r->stop_ev, 0, 0);
	pthread_join(r->thread, NULL);
	r->joined = 1;
}

void runner_free(struct probe_runner *r)
{
	if (r == NULL)
		return;
	runner_stop(r, 0);
	for (int i = 0; i < r->n; i++)
		if (r->slot[i].ops->destroy)
			r->slot[i].ops->destroy(r->slot[i].probe);
	if (r->grace_ev)
		event_free(r->grace_ev);
	if (r->stop_ev)
		event_free(r->stop_ev);
	event_base_free(r->base);
	free(r);
}

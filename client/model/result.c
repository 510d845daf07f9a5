/* result: lifecycle of the result model. */
#include "client/model/result.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void result_init(struct test_result *r, const struct client_config *cfg)
{
	memset(r, 0, sizeof(*r));
	r->worst_increase_ms = NAN;
	r->cfg = *cfg;
	r->ip_overhead = NAN;
	r->rtt0_ms = NAN;
	r->hops.queue_phase = -1;
	r->hops.queue_increase_ms = NAN;
}

void result_free(struct test_result *r)
{
	free(r->probes);
	free(r->probe_wire);
	r->probe_wire = NULL;
	free(r->down);
	free(r->up);
	free(r->srv_srtt_us);
	r->srv_srtt_us = NULL;
	free(r->srv_dlv_bytes);
	r->srv_dlv_bytes = NULL;
	free(r->flows);
	r->flows = NULL;
	for (int i = 0; i < r->nseries; i++)
		series_free(&r->series[i]);
	r->nseries = 0;
	hop_trace_free(&r->hop_trace);
	r->probes = NULL;
	r->down = r->up = NULL;
}

const struct phase_result *result_find_phase(const struct test_result *r, enum phase_kind k)
{
	for (int i = 0; i < r->nphases && i < PHASE_KINDS; i++)
		if (r->phases[i].kind == k)
			return &r->phases[i];
	return NULL;
}

size_t result_replies(const struct test_result *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nprobes; i++)
		n += r->probes[i].received != 0;
	return n;
}

struct probe_series *result_add_series(struct test_result *r, const char *name,
					const char *target)
{
	struct probe_series *ps;

	if (r->nseries >= RESULT_MAX_SERIES)
		return NULL;
	ps = &r->series[r->nseries++];
	series_init(ps, name, target);
	return ps;
}

const struct probe_series *result_find_series(const struct test_result *r, const char *name,
					      int *index)
{
	for (int i = 0; i < r->nseries; i++) {
		if (strcmp(r->series[i].name, name) == 0) {
			if (index)
				*index = i;
			return &r->series[i];
		}
	}
	return NULL;
}

void result_warn(struct test_result *r, const char *fmt, ...)
{
	va_list ap;

	if (r->nwarnings >= (int)(sizeof(r->warnings) / sizeof(r->warnings[0])))
		return;
	va_start(ap, fmt);
	vsnprintf(r->warnings[r->nwarnings++], sizeof(r->warnings[0]), fmt, ap);
	va_end(ap);
}

int64_t result_window_start(const struct phase_result *ph)
{
	if (ph->kind == PHASE_IDLE)
		return ph->start_ns;
	if (ph->steady_start_ns >= 0)
		return ph->steady_start_ns;
	return ph->start_ns + (ph->end_ns - ph->start_ns) / 2;
}

void result_abort(struct test_result *r, int k, int64_t now_ns, const char *why)
{
	r->partial = 1;
	r->aborted_phase = k;
	r->aborted_ns = now_ns;
	snprintf(r->error, sizeof(r->error), "%s", why);
}

int64_t result_last_reply_ns(const struct test_result *r)
{
	int64_t last = -1;

	for (size_t i = 0; i < r->nprobes; i++) {
		const struct probe_rec *p = &r->probes[i];
		int64_t at = p->send_ns + p->rtt_ns;

		if (p->received && at > last && (!r->partial || at <= r->aborted_ns))
			last = at;
	}
	return last;
}

const char *result_aborted_direction(const struct test_result *r)
{
	switch (r->aborted_phase) {
	case PHASE_DOWNLOAD:
		return "down";
	case PHASE_UPLOAD:
		return "up";
	case PHASE_BIDIR:
		return "both";
	default:
		return "none";
	}
}

const char *result_status(const struct test_result *r)
{
	return r->partial ? "partial" : "complete";
}

const char *result_cc_used(const struct test_result *r, int server_end)
{
	const char *req = r->cc.requested[0] ? r->cc.requested : r->cfg.cc;
	const char *used = server_end ? r->cc.server_used : r->cc.client_used;
	int ok = server_end ? r->cc.server_ok : r->cc.client_ok;

	return used[0] ? used : ok ? req : NULL;
}

int result_cc_asked(const struct test_result *r, int server_end)
{
	return !(server_end && r->http);
}

/* fleetrace: the idle-RTT race that picks one server of several (--servers, --server-list):
 * timed TCP handshakes to every candidate's control port at once; the lowest median wins.
 * Layer: client/run; called by the command line before a measurement. */
#include "client/run/fleetrace.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/sock.h"
#include "common/util.h"

/* The race: attempt s goes to candidate s % n as its handshake s / n, and starts at
 * t0 + s × spacing / n. Spreading the candidates over the spacing keeps them from completing
 * in the same wake-up, where the later ones would be timed late by our own processing. */
struct fleet_race {
	struct fleet *f;
	const struct fleet_timing *t;
	int fd[FLEET_MAX * FLEET_SAMPLES_MAX];
	int64_t start_ns[FLEET_MAX * FLEET_SAMPLES_MAX];
	int total, next, open;
	int64_t t0_ns, step_ns, timeout_ns;
	const struct sockaddr_storage *local; /* -B, or NULL */
};

/* Why an attempt failed, as a phrase ("connection refused"). */
static void fleet_reason(struct fleet_candidate *c, int e)
{
	fleet_note(c, "%s", strerror(e));
	c->error[0] = (char)tolower((unsigned char)c->error[0]);
}

/* Ends attempt s: e == 0 completed at now_ns, else failed with errno e (-1: timed out). */
static void fleet_race_end(struct fleet_race *r, int s, int64_t now_ns, int e)
{
	struct fleet_candidate *c = &r->f->cand[s % r->f->n];
	int k = s / r->f->n;

	if (e == 0)
		c->sample_ms[k] = ns_to_ms(now_ns - r->start_ns[s]);
	else if (e < 0)
		fleet_note(c, "no answer within %d ms", r->t->timeout_ms);
	else
		fleet_reason(c, e);
	if (r->fd[s] >= 0) {
		if (close(r->fd[s]) < 0)
			log_debug("closing a handshake socket: %s", strerror(errno));
		r->fd[s] = -1;
		r->open--;
	}
}

/* Starts attempt s: a non-blocking connect timed from just before the SYN leaves. */
static void fleet_race_start(struct fleet_race *r, int s)
{
	struct fleet_candidate *c = &r->f->cand[s % r->f->n];
	int k = s / r->f->n, fd;

	if (c->sa.ss_family == 0)
		return; /* not resolved: its error says why */
	c->attempts = k + 1;
	c->sample_ms[k] = INFINITY;
	fd = socket(c->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fleet_reason(c, errno);
		return;
	}
	/* A reset instead of a FIN on close: no TIME_WAIT on either end for a probe. */
	if (sock_set_abortive_close(fd) < 0)
		log_debug("SO_LINGER on a handshake socket: %s", strerror(errno));
	if (sock_bind_local(fd, r->local) < 0) {
		fleet_reason(c, errno);
		close(fd);
		return;
	}
	r->fd[s] = fd;
	r->open++;
	r->start_ns[s] = clock_mono_ns();
	if (connect(fd, (const struct sockaddr *)&c->sa, c->salen) == 0)
		fleet_race_end(r, s, clock_mono_ns(), 0);
	else if (errno != EINPROGRESS)
		fleet_race_end(r, s, 0, errno);
}

static int64_t fleet_race_due(const struct fleet_race *r, int s)
{
	return r->t0_ns + (int64_t)s * r->step_ns;
}

/* Fills pfd with the open attempts (their indexes in idx); *wake_ns: the next start or
 * deadline. */
static int fleet_race_pollset(const struct fleet_race *r, struct pollfd *pfd, int *idx,
			      int64_t *wake_ns)
{
	int np = 0;

	*wake_ns = r->next < r->total ? fleet_race_due(r, r->next) : INT64_MAX;
	for (int s = 0; s < r->next; s++) {
		if (r->fd[s] < 0)
			continue;
		pfd[np].fd = r->fd[s];
		pfd[np].events = POLLOUT;
		pfd[np].revents = 0;
		idx[np++] = s;
		if (r->start_ns[s] + r->timeout_ns < *wake_ns)
			*wake_ns = r->start_ns[s] + r->timeout_ns;
	}
	return np;
}

/* Completes the attempts poll reported and fails those past their deadline. */
static void fleet_race_reap(struct fleet_race *r, const struct pollfd *pfd, const int *idx,
			    int np, int64_t now_ns)
{
	for (int i = 0; i < np; i++) {
		int s = idx[i];

		if (r->fd[s] < 0 || pfd[i].revents == 0)
			continue;
		fleet_race_end(r, s, now_ns, sock_connect_result(r->fd[s]) == 0 ? 0 : errno);
	}
	for (int i = 0; i < np; i++)
		if (r->fd[idx[i]] >= 0 && now_ns - r->start_ns[idx[i]] >= r->timeout_ns)
			fleet_race_end(r, idx[i], now_ns, -1);
}

static void fleet_race_abort(struct fleet_race *r)
{
	for (int s = 0; s < r->next; s++)
		if (r->fd[s] >= 0)
			fleet_race_end(r, s, 0, ECANCELED);
}

static int fleet_race_run(struct fleet_race *r, char *err, size_t errlen)
{
	struct pollfd pfd[FLEET_MAX * FLEET_SAMPLES_MAX];
	int idx[FLEET_MAX * FLEET_SAMPLES_MAX];

	while (r->next < r->total || r->open > 0) {
		int64_t now = clock_mono_ns(), wake, wait;
		struct timespec ts;
		int np;

		if (util_interrupted()) {
			fleet_race_abort(r);
			snprintf(err, errlen, "interrupted while choosing a server");
			return -1;
		}
		while (r->next < r->total && fleet_race_due(r, r->next) <= now)
			fleet_race_start(r, r->next++);
		if (r->next >= r->total && r->open == 0)
			break; /* the last attempts failed inside connect(): nothing to wait for */
		np = fleet_race_pollset(r, pfd, idx, &wake);
		wait = wake > now ? wake - now : 0;
		ts.tv_sec = (time_t)(wait / NS_PER_SEC);
		ts.tv_nsec = (long)(wait % NS_PER_SEC);
		if (ppoll(pfd, (nfds_t)np, &ts, NULL) < 0 && errno != EINTR) {
			snprintf(err, errlen, "poll: %s", strerror(errno));
			fleet_race_abort(r);
			return -1;
		}
		fleet_race_reap(r, pfd, idx, np, clock_mono_ns());
	}
	return 0;
}

/* Resolves c; on failure its error says why and it takes no part in the race. */
static void fleet_resolve(struct fleet_candidate *c, int family)
{
	char err[FLEET_ERR_MAX];
	int rc;

	c->sa.ss_family = 0;
	if (sock_resolve_all(c->host, c->port, SOCK_STREAM, family, &c->sa, &c->salen, 1, err,
			     sizeof(err)) < 0) {
		c->sa.ss_family = 0;
		fleet_note(c, "%s", err);
		return;
	}
	sock_addr_str((const struct sockaddr *)&c->sa, c->address, sizeof(c->address));
	rc = getnameinfo((const struct sockaddr *)&c->sa, c->salen, c->numeric, sizeof(c->numeric),
			 NULL, 0, NI_NUMERICHOST);
	if (rc != 0) {
		fleet_note(c, "cannot format the address: %s", gai_strerror(rc));
		c->sa.ss_family = 0;
	}
}

static void fleet_log(const struct fleet *f)
{
	for (int i = 0; i < f->n; i++) {
		const struct fleet_candidate *c = &f->cand[i];
		char name[FLEET_HOST_MAX + 16];

		fleet_entry_str(c, name, sizeof(name));
		if (isfinite(c->median_ms))
			log_info("server %s%s%s%s: idle RTT median %.3f ms, min %.3f ms, %d of %d "
				 "handshakes", name, strcmp(name, c->address) ? " (" : "",
				 strcmp(name, c->address) ? c->address : "",
				 strcmp(name, c->address) ? ")" : "", c->median_ms, c->min_ms,
				 c->samples, c->attempts);
		else
			log_info("server %s: unreachable: %s", name, c->error);
	}
}

int fleet_measure(struct fleet *f, const struct fleet_timing *t,
		  const struct sockaddr_storage *local, char *err, size_t errlen)
{
	int family = local ? local->ss_family : AF_UNSPEC;

	struct fleet_race r;

	f->chosen = -1;
	if (f->n <= 0 || t->samples < 1 || t->samples > FLEET_SAMPLES_MAX || t->spacing_ms < 0 ||
	    t->timeout_ms < 1) {
		snprintf(err, errlen, "no servers to choose from");
		return -1;
	}
	f->timing = *t;
	for (int i = 0; i < f->n; i++) {
		f->cand[i].attempts = 0;
		f->cand[i].error[0] = '\0';
		fleet_resolve(&f->cand[i], family);
	}
	memset(&r, 0, sizeof(r));
	r.f = f;
	r.t = t;
	r.local = local;
	r.total = f->n * t->samples;
	for (int s = 0; s < r.total; s++)
		r.fd[s] = -1;
	r.step_ns = (int64_t)t->spacing_ms * NS_PER_MS / f->n;
	r.timeout_ns = (int64_t)t->timeout_ms * NS_PER_MS;
	r.t0_ns = clock_mono_ns();
	if (fleet_race_run(&r, err, errlen) < 0)
		return -1;
	for (int i = 0; i < f->n; i++)
		fleet_summarise(&f->cand[i]);
	fleet_log(f);
	f->chosen = fleet_choose(f);
	if (f->chosen < 0)
		fleet_unreachable_sentence(f, err, errlen);
	return f->chosen;
}

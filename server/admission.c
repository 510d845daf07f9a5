/* admission: the checks under the session lock, then the reply for each refusal. */
#include "server/admission.h"

#include <pthread.h>

#include "common/clock.h"
#include "common/wire.h"
#include "server/ctrlmsg.h"
#include "server/sessionlist.h"

/* Why a hello is refused, or ADMIT_OK. */
enum admission_verdict {
	ADMIT_OK,
	ADMIT_DURATION,
	ADMIT_SHUTDOWN,
	ADMIT_BUSY,
	ADMIT_PER_CLIENT,
	ADMIT_ADMISSION,
};

/* The checks against every worker's sessions, under the lock so that two workers cannot
 * both take the last place: ADMIT_OK reserves it (nsessions counts it until the session is
 * linked by admission_link or the place given back). *first: the earliest end among the
 * sessions in the way, for the busy reply. */
static enum admission_verdict admission_verdict(struct server_ctx *srv,
						const struct sockaddr *peer, int64_t duration,
						int64_t *first)
{
	const struct server_config *cfg = srv->cfg;
	enum admission_verdict v = ADMIT_OK;

	if (duration > cfg->max_duration_s)
		return ADMIT_DURATION;
	/* A connection accepted just before SIGTERM may still say hello during the drain. */
	if (atomic_load(&srv->shutting_down))
		return ADMIT_SHUTDOWN;
	pthread_mutex_lock(&srv->lock);
	if (srv->nsessions >= cfg->max_sessions) {
		v = ADMIT_BUSY;
		*first = sessionlist_earliest_end_locked(srv, NULL);
	} else if (sessionlist_client_sessions_locked(srv, peer) >= cfg->max_sessions_per_client) {
		v = ADMIT_PER_CLIENT;
		*first = sessionlist_earliest_end_locked(srv, peer);
	} else if (limits_admission_busy(srv->admission)) {
		v = ADMIT_ADMISSION;
		*first = sessionlist_earliest_end_locked(srv, NULL);
	} else {
		srv->nsessions++;
	}
	pthread_mutex_unlock(&srv->lock);
	return v;
}

/* Refuses a hello with busy and retry_after_s seconds (see limits_retry_after_s). */
static void admission_busy(struct server_ctx *srv, struct bufferevent *bev, int retry_after_s)
{
	json_object *busy = wire_ctrl_new("busy");

	atomic_fetch_add(&srv->counters.sessions_refused, 1);
	json_object_object_add(busy, "retry_after_s", json_object_new_int(retry_after_s));
	ctrlmsg_reply_and_close(srv, bev, busy);
}

/* An error reply to a hello whose refusal counter is reason. */
static void admission_fail(struct server_ctx *srv, struct bufferevent *bev,
			   atomic_uint_least64_t *reason, const char *why)
{
	atomic_fetch_add(&srv->counters.sessions_refused, 1);
	atomic_fetch_add(reason, 1);
	ctrlmsg_fail(srv, bev, why);
}

int admission_admit(struct server_ctx *srv, struct bufferevent *bev, const struct sockaddr *peer,
		    int64_t duration)
{
	struct server_counters *c = &srv->counters;
	int64_t now = clock_mono_ns(), first = 0;
	int max_s = srv->cfg->max_duration_s;

	switch (admission_verdict(srv, peer, duration, &first)) {
	case ADMIT_OK:
		return 0;
	case ADMIT_DURATION:
		admission_fail(srv, bev, &c->sessions_refused_duration,
			       "requested duration exceeds this server's limit");
		break;
	case ADMIT_SHUTDOWN:
		admission_fail(srv, bev, &c->sessions_refused_shutdown, "server shutting down");
		break;
	case ADMIT_BUSY:
		atomic_fetch_add(&c->sessions_refused_busy, 1);
		admission_busy(srv, bev, limits_retry_after_s(first, now, 1, max_s));
		break;
	case ADMIT_PER_CLIENT:
		atomic_fetch_add(&c->sessions_refused_per_client, 1);
		admission_busy(srv, bev, limits_retry_after_s(first, now, 1, max_s));
		break;
	case ADMIT_ADMISSION:
		atomic_fetch_add(&c->sessions_refused_admission, 1);
		admission_busy(srv, bev, limits_retry_after_s(first, now, LIMITS_ADMISSION_RETRY_MIN_S,
							      LIMITS_ADMISSION_RETRY_MAX_S));
		break;
	}
	return -1;
}

void admission_unreserve(struct server_ctx *srv)
{
	pthread_mutex_lock(&srv->lock);
	srv->nsessions--;
	pthread_mutex_unlock(&srv->lock);
}

int admission_link(struct server_ctx *srv, struct session *s, int64_t *busy_until)
{
	const struct sockaddr *peer = (const struct sockaddr *)&s->peer;
	int rc = 0;

	pthread_mutex_lock(&srv->lock);
	if (sessionlist_client_sessions_locked(srv, peer) >= srv->cfg->max_sessions_per_client) {
		*busy_until = sessionlist_earliest_end_locked(srv, peer);
		rc = -1;
	} else {
		sessionlist_link_locked(srv, s); /* nsessions counts it since admission_admit */
	}
	pthread_mutex_unlock(&srv->lock);
	return rc;
}

void admission_refuse_client(struct server_ctx *srv, struct bufferevent *bev, int64_t busy_until)
{
	atomic_fetch_add(&srv->counters.sessions_refused_per_client, 1);
	admission_busy(srv, bev, limits_retry_after_s(busy_until, clock_mono_ns(), 1,
						       srv->cfg->max_duration_s));
}

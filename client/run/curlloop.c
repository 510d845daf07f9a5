/* curlloop: the libevent glue of libcurl's multi interface (the "multi_socket" API). */
#include "client/run/curlloop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

/* What each running transfer carries (CURLOPT_PRIVATE). */
struct curlloop_xfer {
	curlloop_done_fn done;
	void *arg;
};

struct curlloop {
	struct event_base *base;
	CURLM *multi;
	struct event *timer;
	int running;
};

/* One socket curl asked us to watch (curl_multi_assign'ed to it). */
struct curlloop_sock {
	struct curlloop *cl;
	struct event *ev;
};

static void curlloop_drain(struct curlloop *cl)
{
	CURLMsg *msg;
	int left;

	while ((msg = curl_multi_info_read(cl->multi, &left)) != NULL) {
		CURL *easy = msg->easy_handle;
		CURLcode result = msg->data.result;
		struct curlloop_xfer *x = NULL;

		if (msg->msg != CURLMSG_DONE)
			continue;
		(void)curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
		(void)curl_multi_remove_handle(cl->multi, easy);
		cl->running--;
		if (x != NULL) {
			curlloop_done_fn done = x->done;
			void *arg = x->arg;

			free(x);
			(void)curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
			done(easy, result, arg);
		}
	}
}

static void curlloop_act(struct curlloop *cl, curl_socket_t fd, int flags)
{
	int still;
	CURLMcode mc = curl_multi_socket_action(cl->multi, fd, flags, &still);

	if (mc != CURLM_OK)
		log_warnx("curl_multi_socket_action: %s", curl_multi_strerror(mc));
	curlloop_drain(cl);
}

static void curlloop_event_callback(evutil_socket_t fd, short what, void *arg)
{
	struct curlloop *cl = arg;
	int flags = (what & EV_READ ? CURL_CSELECT_IN : 0) | (what & EV_WRITE ? CURL_CSELECT_OUT : 0);

	curlloop_act(cl, fd, flags);
}

static void curlloop_timer_callback(evutil_socket_t fd, short what, void *arg)
{
	curlloop_act(arg, CURL_SOCKET_TIMEOUT, 0);
}

/* CURLMOPT_TIMERFUNCTION: -1 deletes the timer, else (re)arms it. */
static int curlloop_timer_fn(CURLM *multi, long timeout_ms, void *arg)
{
	struct curlloop *cl = arg;
	struct timeval tv = { timeout_ms / 1000, timeout_ms % 1000 * 1000 };

	if (timeout_ms < 0)
		return evtimer_del(cl->timer) < 0 ? -1 : 0;
	return evtimer_add(cl->timer, &tv) < 0 ? -1 : 0;
}

/* CURLMOPT_SOCKETFUNCTION: what curl wants to hear about fd. */
static int curlloop_socket_fn(CURL *easy, curl_socket_t fd, int what, void *arg, void *sockp)
{
	struct curlloop *cl = arg;
	struct curlloop_sock *s = sockp;
	short ev = EV_PERSIST | (what & CURL_POLL_IN ? EV_READ : 0) |
		   (what & CURL_POLL_OUT ? EV_WRITE : 0);

	if (what == CURL_POLL_REMOVE) {
		if (s != NULL) {
			event_free(s->ev);
			free(s);
			(void)curl_multi_assign(cl->multi, fd, NULL);
		}
		return 0;
	}
	if (s == NULL) {
		s = calloc(1, sizeof(*s));
		if (s == NULL)
			return -1;
		s->cl = cl;
		if (curl_multi_assign(cl->multi, fd, s) != CURLM_OK) {
			free(s);
			return -1;
		}
	} else {
		event_free(s->ev);
	}
	s->ev = event_new(cl->base, fd, ev, curlloop_event_callback, cl);
	if (s->ev == NULL || event_add(s->ev, NULL) < 0) {
		log_warnx("cannot watch an HTTP connection");
		return -1;
	}
	return 0;
}

struct curlloop *curlloop_new(struct event_base *base, char *err, size_t errlen)
{
	struct curlloop *cl = calloc(1, sizeof(*cl));

	if (cl == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	cl->base = base;
	cl->multi = curl_multi_init();
	cl->timer = evtimer_new(base, curlloop_timer_callback, cl);
	if (cl->multi == NULL || cl->timer == NULL ||
	    curl_multi_setopt(cl->multi, CURLMOPT_SOCKETFUNCTION, curlloop_socket_fn) != CURLM_OK ||
	    curl_multi_setopt(cl->multi, CURLMOPT_SOCKETDATA, cl) != CURLM_OK ||
	    curl_multi_setopt(cl->multi, CURLMOPT_TIMERFUNCTION, curlloop_timer_fn) != CURLM_OK ||
	    curl_multi_setopt(cl->multi, CURLMOPT_TIMERDATA, cl) != CURLM_OK ||
	    /* One TCP flow per load transfer, as the measurement needs N parallel flows. */
	    curl_multi_setopt(cl->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_NOTHING) != CURLM_OK) {
		snprintf(err, errlen, "cannot set up libcurl's multi interface");
		curlloop_free(cl);
		return NULL;
	}
	return cl;
}

int curlloop_add(struct curlloop *cl, CURL *easy, curlloop_done_fn done, void *arg, char *err,
		 size_t errlen)
{
	struct curlloop_xfer *x = malloc(sizeof(*x));
	CURLMcode mc;

	if (x == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	x->done = done;
	x->arg = arg;
	if (curl_easy_setopt(easy, CURLOPT_PRIVATE, x) != CURLE_OK) {
		free(x);
		snprintf(err, errlen, "cannot tag an HTTP transfer");
		return -1;
	}
	mc = curl_multi_add_handle(cl->multi, easy);
	if (mc != CURLM_OK) {
		free(x);
		(void)curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
		snprintf(err, errlen, "cannot start an HTTP transfer: %s", curl_multi_strerror(mc));
		return -1;
	}
	cl->running++;
	return 0;
}

void curlloop_remove(struct curlloop *cl, CURL *easy)
{
	struct curlloop_xfer *x = NULL;

	(void)curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
	if (x == NULL)
		return; /* not running (already completed) */
	free(x);
	(void)curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
	if (curl_multi_remove_handle(cl->multi, easy) == CURLM_OK)
		cl->running--;
}

int curlloop_running(const struct curlloop *cl)
{
	return cl->running;
}

void curlloop_free(struct curlloop *cl)
{
	if (cl == NULL)
		return;
	if (cl->multi)
		(void)curl_multi_cleanup(cl->multi);
	if (cl->timer)
		event_free(cl->timer);
	free(cl);
}

/* webpost: a browser's result post, once its body is whole: validated (server/webresult.h),
 * bounded in rate per client address and in all, stored in the test ring with source
 * "browser" and the client's network masked like a CLI test's, answered 204. */
#include "server/webpost.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "common/clock.h"
#include "server/ctx.h"
#include "server/testrecord.h"
#include "server/testring.h"
#include "server/webreply.h"
#include "server/webresult.h"

/* Records r from peer as a browser test (the ring and the results-log). */
static void webpost_store(struct server_ctx *srv, const struct sockaddr *peer,
			    const struct webresult *r)
{
	struct test_summary s;

	memset(&s, 0, sizeof(s));
	pthread_mutex_lock(&srv->lock);
	s.id = ++srv->next_session_id;
	pthread_mutex_unlock(&srv->lock);
	s.start_real_ns = clock_real_ns();
	s.duration_s = NAN;
	testring_mask_addr(peer, s.client, sizeof(s.client));
	s.rate_bps[0] = s.rate_bps[1] = NAN;
	s.srv_rtt_increase_ms = NAN;
	s.srv_min_rtt_ms = NAN;
	s.reported = r->sum;
	snprintf(s.source, sizeof(s.source), "browser");
	snprintf(s.engine, sizeof(s.engine), "%s", r->engine);
	testrecord_done(srv, &s);
}

void webpost_result(struct webconn *c, struct evbuffer *body)
{
	size_t len = evbuffer_get_length(body);
	const char *data = len ? (const char *)evbuffer_pullup(body, (ev_ssize_t)len) : "";
	const struct sockaddr *peer = (const struct sockaddr *)&c->peer;
	struct webresult r;
	const char *why;

	if (webresult_parse(data, len, &r, &why) < 0) {
		webconn_count_reject(c->srv, WEBREJECT_BAD_REQUEST);
		webreply_error(c, 400, why);
		return;
	}
	if (c->results == NULL || !webresult_limiter_take(c->results, peer, clock_mono_ns())) {
		webconn_count_reject(c->srv, WEBREJECT_RATE);
		webreply_error(c, 429, "too many results from your network; try again later");
		return;
	}
	webpost_store(c->srv, peer, &r);
	evbuffer_drain(body, len);
	webreply_head(c, 204, NULL, 0, c->keep_alive);
	webconn_finish(c, c->keep_alive);
}

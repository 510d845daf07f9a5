/* webroute: which answer a request gets, and the connection's event callbacks that read heads
 * and bodies and send downloads (a connection never closes from inside them except through
 * webconn_finish, so a loop over pipelined requests never touches a freed connection). */
#include "server/webroute.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "common/clock.h"
#include "server/ctx.h"
#include "server/http.h"
#include "server/limits.h"
#include "server/webpage.h"
#include "server/webpost.h"
#include "server/webreply.h"
#include "server/webxfer.h"

_Static_assert(WEBEP_COUNT <= SERVER_WEB_SLOTS, "web endpoint counters");

const char *webroute_endpoint_name(enum webroute_endpoint ep)
{
	static const char *const names[WEBEP_COUNT] = {
		"down", "up", "page", "results", "options", "other",
	};

	return ep < WEBEP_COUNT ? names[ep] : "other";
}

/* A CORS preflight: any origin may GET, POST and OPTIONS with a Content-Type header. */
static void webroute_options(struct webconn *c, const struct webhttp_req *req)
{
	evbuffer_add_printf(bufferevent_get_output(c->bev),
			    "HTTP/1.1 204 No Content\r\n"
			    "Access-Control-Allow-Origin: *\r\n"
			    "Access-Control-Allow-Methods: GET, POST, OPTIONS\r\n"
			    "Access-Control-Allow-Headers: Content-Type\r\n"
			    "Access-Control-Max-Age: 86400\r\n"
			    "Timing-Allow-Origin: *\r\n"
			    "Connection: %s\r\n\r\n",
			    req->keep_alive ? "keep-alive" : "close");
	webconn_finish(c, req->keep_alive);
}

/* Transfers wait while the host's egress is over admission-max-rate, and during shutdown. */
static int webroute_busy(struct webconn *c)
{
	if (!atomic_load(&c->srv->shutting_down) &&
	    (c->srv->admission == NULL || !limits_admission_busy(c->srv->admission)))
		return 0;
	webconn_count_reject(c->srv, WEBREJECT_BUSY);
	webreply_error(c, 503, "the server is busy; try again in a few seconds");
	return 1;
}

static void webroute_down(struct webconn *c, const struct webhttp_req *req)
{
	uint64_t bytes;

	if (webhttp_query_bytes(req->query, &bytes) < 0) {
		webconn_count_reject(c->srv, WEBREJECT_BAD_REQUEST);
		webreply_error(c, 400, "bytes= must be a whole number from 0 to 1073741824");
		return;
	}
	if (req->has_length || req->chunked) {
		webconn_count_reject(c->srv, WEBREJECT_BAD_REQUEST);
		webreply_error(c, 400, "GET /__down takes no body");
		return;
	}
	if (bytes > 0 && webroute_busy(c))
		return;
	webreply_head(c, 200, "application/octet-stream", req->method == WEBHTTP_HEAD ? 0 : bytes,
		      req->keep_alive);
	if (req->method == WEBHTTP_HEAD || bytes == 0) {
		webconn_finish(c, req->keep_alive);
		return;
	}
	webxfer_down_start(c, bytes);
}

static int webroute_body_ok(struct webconn *c, const struct webhttp_req *req)
{
	if (!req->has_length && !req->chunked) {
		webconn_count_reject(c->srv, WEBREJECT_BAD_REQUEST);
		webreply_error(c, 411, "a body needs Content-Length or chunked");
		return 0;
	}
	return 1;
}

static void webroute_up(struct webconn *c, const struct webhttp_req *req)
{
	if (!webroute_body_ok(c, req) || webroute_busy(c))
		return;
	webxfer_body_start(c, req, WEBBODY_UP);
}

static void webroute_results(struct webconn *c, const struct webhttp_req *req)
{
	if (!webroute_body_ok(c, req))
		return;
	if (!req->json) {
		webconn_count_reject(c->srv, WEBREJECT_BAD_REQUEST);
		webreply_error(c, 415, "results are Content-Type: application/json");
		return;
	}
	if (req->has_length && req->content_length > WEBXFER_RESULT_MAX) {
		webconn_count_reject(c->srv, WEBREJECT_TOO_LARGE);
		webreply_error(c, 413, "a result is at most 4096 bytes");
		return;
	}
	webxfer_body_start(c, req, WEBBODY_RESULT);
}

static void webroute_page(struct webconn *c, const struct webhttp_req *req)
{
	const struct http_asset *a = webpage_find(strcmp(req->path, "/") == 0 ? "index.html"
									: req->path + 1);

	if (a == NULL) {
		webconn_count_reject(c->srv, WEBREJECT_NOT_FOUND);
		webreply_error(c, 404, webpage_count() == 0 && strcmp(req->path, "/") == 0
					       ? "the browser test page was not built: node/npm missing"
					       : "not found");
		return;
	}
	webreply_head(c, 200, a->content_type, a->len, req->keep_alive);
	if (req->method == WEBHTTP_GET)
		evbuffer_add_reference(bufferevent_get_output(c->bev), a->data, a->len, NULL,
				       NULL);
	webconn_finish(c, req->keep_alive);
}

static enum webroute_endpoint webroute_endpoint(const struct webhttp_req *req)
{
	if (req->method == WEBHTTP_OPTIONS)
		return WEBEP_OPTIONS;
	if (strcmp(req->path, "/__down") == 0)
		return WEBEP_DOWN;
	if (strcmp(req->path, "/__up") == 0)
		return WEBEP_UP;
	if (strcmp(req->path, "/api/v1/results") == 0)
		return WEBEP_RESULTS;
	return WEBEP_PAGE;
}

void webroute_request(struct webconn *c, const struct webhttp_req *req)
{
	enum webroute_endpoint ep = webroute_endpoint(req);
	int get = req->method == WEBHTTP_GET || req->method == WEBHTTP_HEAD;
	int post = req->method == WEBHTTP_POST;

	c->keep_alive = req->keep_alive;
	atomic_fetch_add(&c->srv->counters.web_requests[ep], 1);
	if (ep == WEBEP_OPTIONS)
		webroute_options(c, req);
	else if (ep == WEBEP_DOWN && get)
		webroute_down(c, req);
	else if (ep == WEBEP_UP && post)
		webroute_up(c, req);
	else if (ep == WEBEP_RESULTS && post)
		webroute_results(c, req);
	else if (ep == WEBEP_PAGE && get && !req->has_length && !req->chunked)
		webroute_page(c, req);
	else {
		webconn_count_reject(c->srv, WEBREJECT_BAD_REQUEST);
		webreply_error(c, 405, "method not allowed here");
	}
}

static void webroute_read_cb(struct bufferevent *bev, void *arg);

/* A download tops up its queue; once it is all queued the next request may be read. A
 * closing connection goes once its last answer has left. */
static void webroute_write_cb(struct bufferevent *bev, void *arg)
{
	struct webconn *c = arg;

	if (c->state == WEBCONN_DOWN) {
		if (webxfer_down_more(c) == 1 && c->state == WEBCONN_HEAD)
			webroute_read_cb(bev, c); /* a pipelined request may be waiting */
		return;
	}
	if (c->state == WEBCONN_HEAD && webconn_unhold(c)) {
		webroute_read_cb(bev, c); /* the held requests */
		return;
	}
	if (c->state == WEBCONN_CLOSING && evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		webconn_close(c);
}

static void webroute_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct webconn *c = arg;

	/* A TLS connection reports its finished handshake; that is no end. */
	if (what == BEV_EVENT_CONNECTED)
		return;
	if (what & BEV_EVENT_TIMEOUT)
		webconn_count_reject(c->srv, WEBREJECT_TIMEOUT);
	webconn_close(c);
}

/* One step on a body: 0 to wait for more bytes, 1 when the request is answered. */
static int webroute_body(struct webconn *c, struct evbuffer *in)
{
	switch (webxfer_body(c, in)) {
	case WEBXFER_MORE:
		return 0;
	case WEBXFER_RESULT:
		c->body_whole = 0;
		webpost_result(c, c->result);
		return 1;
	default:
		return 1;
	}
}

/* Reads heads (HEAD) and bodies (BODY), several pipelined requests in one go. */
static void webroute_read_cb(struct bufferevent *bev, void *arg)
{
	struct webconn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);

	while (c->state == WEBCONN_HEAD || c->state == WEBCONN_BODY) {
		size_t len = evbuffer_get_length(in), n;
		struct webhttp_req req;
		const char *why;
		enum webhttp_status st;

		if (c->state == WEBCONN_BODY) {
			if (!webroute_body(c, in))
				return;
			continue;
		}
		if (len == 0 || webconn_hold(c))
			return;
		webconn_head_begun(c);
		n = len < WEBHTTP_MAX_HEAD ? len : WEBHTTP_MAX_HEAD;
		st = webhttp_parse((const char *)evbuffer_pullup(in, (ev_ssize_t)n), n, &req, &why);
		if (st == WEBHTTP_MORE)
			return;
		c->req_start_ns = clock_mono_ns();
		if (st != WEBHTTP_DONE) {
			webconn_count_reject(c->srv, st == WEBHTTP_TOO_BIG ? WEBREJECT_TOO_LARGE
									  : WEBREJECT_BAD_REQUEST);
			webreply_error(c, (int)st, why);
			return;
		}
		evbuffer_drain(in, req.head_len);
		webroute_request(c, &req);
	}
}

void webroute_attach(struct webconn *c)
{
	webxfer_rate_limit(c);
	bufferevent_setcb(c->bev, webroute_read_cb, webroute_write_cb, webroute_event_cb, c);
	webconn_arm_head(c, 1);
}

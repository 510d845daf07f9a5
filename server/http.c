/* http: the evhttp listener and its routes. It shares the main event loop with the test
 * service, so every handler is short and bounded: a request is at most HTTP_MAX_HEADERS of
 * headers and HTTP_MAX_BODY of body, must arrive within HTTP_TIMEOUT_S, and each answer is
 * rendered in one go from memory (the largest is the API's 256 tests, about 150 KiB), and
 * at most http-max-connections connections are held at once (server/httpcap.h). */
#include "server/http.h"

#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/sock.h"
#include "common/util.h"
#include "server/ctx.h"
#include "server/httpcap.h"
#include "server/metrics.h"
#include "server/testring.h"

struct http_server {
	struct server_ctx *srv;
	struct evhttp *http;
	struct httpcap *cap;
};

/* Headers on every answer of ours: nothing here may be framed, sniffed or load anything
 * from elsewhere (the dashboard's own files only). */
static void http_common_headers(struct evhttp_request *req, const char *type, const char *cache)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);

	evhttp_add_header(h, "Content-Type", type);
	evhttp_add_header(h, "Cache-Control", cache);
	evhttp_add_header(h, "X-Content-Type-Options", "nosniff");
	evhttp_add_header(h, "Content-Security-Policy",
			  "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
			  "form-action 'none'");
	evhttp_add_header(h, "X-Frame-Options", "DENY");
	evhttp_add_header(h, "Referrer-Policy", "no-referrer");
}

/* Answers with code and the body in buf (consumed); a HEAD request gets the headers only. */
static void http_send(struct evhttp_request *req, int code, const char *reason,
		      struct evbuffer *buf)
{
	if (evhttp_request_get_command(req) == EVHTTP_REQ_HEAD)
		evbuffer_drain(buf, evbuffer_get_length(buf));
	evhttp_send_reply(req, code, reason, buf);
}

/* A short text/plain answer. */
static void http_text(struct evhttp_request *req, int code, const char *reason, const char *text)
{
	struct evbuffer *buf = evbuffer_new();

	if (buf == NULL || evbuffer_add(buf, text, strlen(text)) < 0) {
		if (buf)
			evbuffer_free(buf);
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
		return;
	}
	http_common_headers(req, "text/plain; charset=utf-8", "no-store");
	http_send(req, code, reason, buf);
	evbuffer_free(buf);
}

static void http_healthz(struct http_server *h, struct evhttp_request *req)
{
	if (h->srv->shutting_down)
		http_text(req, 503, "Service Unavailable", "shutting down\n");
	else
		http_text(req, HTTP_OK, "OK", "ok\n");
}

static void http_metrics(struct http_server *h, struct evhttp_request *req)
{
	struct evbuffer *buf = evbuffer_new();

	if (buf == NULL || metrics_render(h->srv, clock_mono_ns(), buf) < 0) {
		if (buf)
			evbuffer_free(buf);
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
		return;
	}
	http_common_headers(req, METRICS_CONTENT_TYPE, "no-store");
	http_send(req, HTTP_OK, "OK", buf);
	evbuffer_free(buf);
}

/* ?limit=N (1..TESTRING_CAP) into *limit; other parameters are ignored. -1 if limit is bad. */
static int http_api_limit(const struct evhttp_uri *uri, long *limit)
{
	const char *q = evhttp_uri_get_query(uri), *v;
	struct evkeyvalq params;
	int rc = 0;

	*limit = HTTP_API_DEFAULT_LIMIT;
	if (q == NULL)
		return 0;
	TAILQ_INIT(&params);
	if (evhttp_parse_query_str(q, &params) < 0)
		return -1;
	v = evhttp_find_header(&params, "limit");
	if (v != NULL && util_parse_long(v, 1, TESTRING_CAP, limit) < 0)
		rc = -1;
	evhttp_clear_headers(&params);
	return rc;
}

static void http_api_tests(struct http_server *h, struct evhttp_request *req)
{
	struct evbuffer *buf;
	json_object *a;
	const char *s;
	long limit;

	if (http_api_limit(evhttp_request_get_evhttp_uri(req), &limit) < 0) {
		http_text(req, HTTP_BADREQUEST, "Bad Request", "limit must be 1..256\n");
		return;
	}
	a = testring_json(h->srv->tests, (size_t)limit);
	buf = evbuffer_new();
	s = a ? json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN |
						       JSON_C_TO_STRING_NOSLASHESCAPE) : NULL;
	if (s == NULL || buf == NULL || evbuffer_add(buf, s, strlen(s)) < 0 ||
	    evbuffer_add(buf, "\n", 1) < 0) {
		json_object_put(a);
		if (buf)
			evbuffer_free(buf);
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
		return;
	}
	json_object_put(a);
	http_common_headers(req, "application/json", "no-store");
	http_send(req, HTTP_OK, "OK", buf);
	evbuffer_free(buf);
}

static const struct http_asset *http_find_asset(const char *name)
{
	for (size_t i = 0; i < http_nassets; i++)
		if (strcmp(http_assets[i].name, name) == 0)
			return &http_assets[i];
	return NULL;
}

/* An embedded file; revalidated by its ETag on every use (no-cache), so a new daemon version
 * never runs with a browser's old script. */
static void http_asset(struct evhttp_request *req, const struct http_asset *a)
{
	const char *inm = evhttp_find_header(evhttp_request_get_input_headers(req),
					     "If-None-Match");
	struct evbuffer *buf = evbuffer_new();

	if (buf == NULL) {
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
		return;
	}
	http_common_headers(req, a->content_type, "no-cache");
	evhttp_add_header(evhttp_request_get_output_headers(req), "ETag", a->etag);
	if (inm != NULL && strstr(inm, a->etag) != NULL) {
		evhttp_send_reply(req, HTTP_NOTMODIFIED, "Not Modified", buf);
		evbuffer_free(buf);
		return;
	}
	/* The data are constant and outlive every request: no copy. */
	if (evbuffer_add_reference(buf, a->data, a->len, NULL, NULL) < 0) {
		evbuffer_free(buf);
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
		return;
	}
	http_send(req, HTTP_OK, "OK", buf);
	evbuffer_free(buf);
}

static void http_request_callback(struct evhttp_request *req, void *arg)
{
	struct http_server *h = arg;
	enum evhttp_cmd_type m = evhttp_request_get_command(req);
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = uri ? evhttp_uri_get_path(uri) : NULL;
	const struct http_asset *a;

	if (m != EVHTTP_REQ_GET && m != EVHTTP_REQ_HEAD) {
		evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "GET, HEAD");
		http_text(req, 405, "Method Not Allowed", "only GET and HEAD\n");
		return;
	}
	if (path == NULL || path[0] != '/') {
		http_text(req, HTTP_BADREQUEST, "Bad Request", "bad request\n");
		return;
	}
	if (strcmp(path, "/healthz") == 0)
		http_healthz(h, req);
	else if (strcmp(path, "/metrics") == 0)
		http_metrics(h, req);
	else if (strcmp(path, "/api/v1/tests") == 0)
		http_api_tests(h, req);
	else if ((a = http_find_asset(strcmp(path, "/") == 0 ? "index.html" : path + 1)) != NULL)
		http_asset(req, a);
	else
		http_text(req, HTTP_NOTFOUND, "Not Found", "not found\n");
}

struct http_server *http_start(struct server_ctx *srv)
{
	const struct server_config *cfg = srv->cfg;
	const char *bind = cfg->http_bind[0] ? cfg->http_bind : HTTP_DEFAULT_BIND;
	struct http_server *h = calloc(1, sizeof(*h));
	struct evhttp_bound_socket *bound = NULL;
	char err[256];
	int fd;

	if (h == NULL) {
		log_error("cannot start the HTTP listener: out of memory");
		return NULL;
	}
	h->srv = srv;
	fd = sock_listen_tcp(bind, cfg->http_port, err, sizeof(err));
	if (fd < 0) {
		log_error("%s (HTTP listener; http-port 0 turns it off)", err);
		free(h);
		return NULL;
	}
	h->http = evhttp_new(srv->base);
	/* The bound socket owns fd from here on: evhttp_free closes it. */
	if (h->http == NULL || (bound = evhttp_accept_socket_with_handle(h->http, fd)) == NULL ||
	    (h->cap = httpcap_start(srv, h->http, bound)) == NULL) {
		log_error("cannot start the HTTP listener on %s port %u", bind, cfg->http_port);
		if (h->http)
			evhttp_free(h->http);
		if (bound == NULL)
			close(fd);
		free(h);
		return NULL;
	}
	evhttp_set_max_headers_size(h->http, HTTP_MAX_HEADERS);
	evhttp_set_max_body_size(h->http, HTTP_MAX_BODY);
	evhttp_set_timeout(h->http, HTTP_TIMEOUT_S);
	/* Let every method reach the callback, which answers 405 (evhttp's own refusal of a
	 * method it was told to refuse is 501). */
	evhttp_set_allowed_methods(h->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD | EVHTTP_REQ_POST |
						    EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
						    EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE |
						    EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH);
	evhttp_set_gencb(h->http, http_request_callback, h);
	log_info("HTTP (metrics, API, dashboard) on %s port %u", bind, cfg->http_port);
	return h;
}

void http_stop(struct http_server *h)
{
	if (h == NULL)
		return;
	httpcap_detach(h->cap);
	evhttp_free(h->http);
	httpcap_free(h->cap);
	free(h);
}

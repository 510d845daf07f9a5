/* http: bloatmeterd's HTTP listener (libevent evhttp on the main event loop, its own port and
 * address): /healthz, Prometheus /metrics, the JSON API of recent tests and the embedded web
 * dashboard. Read-only: GET and HEAD only. See docs/http.md. */
#ifndef BM_HTTP_H
#define BM_HTTP_H

#include <stddef.h>

struct server_ctx;
struct http_server;

#define HTTP_DEFAULT_BIND "127.0.0.1"
#define HTTP_MAX_HEADERS (8 * 1024) /* request line and headers */
#define HTTP_MAX_BODY 1024          /* GET/HEAD carry none; anything bigger is refused */
#define HTTP_TIMEOUT_S 10           /* a request must arrive (and its answer leave) within
				     * this of inactivity (libevent's, restarted by each byte);
				     * a connection lives HTTPCAP_CONN_MAX_S at most */
#define HTTP_API_DEFAULT_LIMIT 50   /* tests in /api/v1/tests without ?limit */
#define HTTP_DEFAULT_MAX_CONNS 64   /* http-max-connections (server/httpcap.h) */

/* A file of web/ compiled into the binary (cmake/embed.cmake generates the table from the
 * files in web/ at build time), so the daemon needs no file layout at run time. */
struct http_asset {
	const char *name;          /* URL path without the leading '/' ("index.html") */
	const char *content_type;
	const char *etag;          /* quoted strong validator: a hash of the content */
	const unsigned char *data; /* len bytes, plus a NUL not counted */
	size_t len;
};
/* The generated table: constant data, hence globals (they are the program's text). */
extern const struct http_asset http_assets[];
extern const size_t http_nassets;

/* Binds cfg->http_bind port cfg->http_port and serves on srv->base. NULL after logging one
 * sentence when the socket or the listener cannot be set up. */
struct http_server *http_start(struct server_ctx *srv);
/* Closes the listener and every HTTP connection; NULL is fine. */
void http_stop(struct http_server *h);

#endif

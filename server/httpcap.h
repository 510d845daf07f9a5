/* httpcap: a cap on the HTTP listener's concurrent connections, which libevent 2.1's evhttp
 * lacks (evhttp_set_max_connections came in 2.2). It counts each connection from the moment
 * evhttp asks for its bufferevent (evhttp_set_bevcb) until evhttp closes it (the connection's
 * close callback), and disables the listener while the count is at http-max-connections:
 * further connections wait in the kernel's accept queue instead of costing memory and a
 * descriptor here. Each connection is closed HTTPCAP_CONN_MAX_S after it was accepted at the
 * latest, whatever it sends: a client trickling its headers cannot keep its slot. The count is counters.http_open, the pauses counters.http_full (/metrics).
 * Main thread only. */
#ifndef BM_HTTPCAP_H
#define BM_HTTPCAP_H

#include <event2/http.h>

#include "server/ctx.h"

#define HTTPCAP_CONN_MAX_S 20 /* an HTTP connection's life from accept, at most */

struct httpcap;

/* Starts counting http's connections and capping its listener (bound). NULL when out of
 * memory. */
struct httpcap *httpcap_start(struct server_ctx *srv, struct evhttp *http,
			      struct evhttp_bound_socket *bound);
/* Before evhttp_free: the listener is about to go, so closes must no longer enable it. */
void httpcap_detach(struct httpcap *c);
/* After evhttp_free (which closed every connection); NULL is fine. */
void httpcap_free(struct httpcap *c);

#endif

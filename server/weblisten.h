/* weblisten: bloatmeterd's public test listener (docs/http.md, "Public test listener"): accepts
 * on web-bind/web-port (plain, or TLS with web-tls), caps connections in all
 * (web-max-connections) and per client address from accept to close, and hands each to
 * server/webconn.h. server.c starts and stops it on the main event loop. */
#ifndef BM_WEBLISTEN_H
#define BM_WEBLISTEN_H

struct server_ctx;
struct weblisten;

#define WEB_DEFAULT_MAX_CONNS 256
#define WEB_CONNS_PER_SESSION 8 /* a client's connections per max-sessions-per-client:
				  * a browser opens 6 per host */

/* NULL after logging one sentence when it cannot listen (or web-tls lacks tls-cert). */
struct weblisten *weblisten_start(struct server_ctx *srv);
/* Closes the listener and every connection; NULL is fine. */
void weblisten_stop(struct weblisten *w);

#endif

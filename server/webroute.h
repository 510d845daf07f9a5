/* webroute: what the public test listener answers to a parsed request (docs/http.md, "Public
 * test listener"): /__down, /__up, OPTIONS preflights, the embedded browser page and result
 * posts, and the connection callbacks that read requests and drive transfers. Called by
 * weblisten.c (webroute_attach) and server/metrics.c (the endpoint names). */
#ifndef BM_WEBROUTE_H
#define BM_WEBROUTE_H

#include <stdint.h>

#include "server/webconn.h"
#include "server/webhttp.h"

struct server_ctx;

enum webroute_endpoint {
	WEBEP_DOWN, WEBEP_UP, WEBEP_PAGE, WEBEP_RESULTS, WEBEP_OPTIONS, WEBEP_OTHER, WEBEP_COUNT
};

/* Answers req on c (webconn_finish or a refusal ends it). */
void webroute_request(struct webconn *c, const struct webhttp_req *req);
/* Sets c's event callbacks (reading requests, sending downloads, closing on errors and
 * timeouts) and waits for its first request. */
void webroute_attach(struct webconn *c);
const char *webroute_endpoint_name(enum webroute_endpoint ep);

#endif

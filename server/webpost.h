/* webpost: answering POST /api/v1/results on the public test listener (docs/http.md):
 * validation, rate bounds and storage of a browser result. Called by server/webroute.c on the
 * main event loop. */
#ifndef BM_WEBPOST_H
#define BM_WEBPOST_H

#include "server/webconn.h"

struct evbuffer;

/* The whole body of a result post on c is in body: validates, rate-limits and stores it, and
 * answers 204 or a refusal (400, 429). */
void webpost_result(struct webconn *c, struct evbuffer *body);

#endif

/* webxfer: the transfers of the public test listener: /__down's zero bytes, added by reference
 * from one shared constant buffer (never copied) under write-watermark flow control, and
 * request bodies: /__up's discarded, a result post's kept (bounded), both with Content-Length
 * or chunked. max-rate caps each connection (a libevent token bucket). Called by webroute.c
 * and weblisten.c. */
#ifndef BM_WEBXFER_H
#define BM_WEBXFER_H

#include <stdint.h>

#include "server/webconn.h"
#include "server/webhttp.h"

struct evbuffer;

#define WEBXFER_RESULT_MAX 4096 /* bytes of a result post's body */

/* Applies max-rate (bytes both ways) to c; nothing when it is 0. */
void webxfer_rate_limit(struct webconn *c);
/* Starts sending bytes zeros after the answer's head (already queued). */
void webxfer_down_start(struct webconn *c, uint64_t bytes);
/* Queues more of /__down: 0 while some is left to queue, 1 when all is. */
int webxfer_down_more(struct webconn *c);
/* Starts reading req's body as kind; BODY state. */
void webxfer_body_start(struct webconn *c, const struct webhttp_req *req, enum webconn_body kind);
enum { WEBXFER_MORE, WEBXFER_ANSWERED, WEBXFER_RESULT };
/* Consumes body bytes from in: MORE when it needs more; ANSWERED once an /__up body is whole
 * and answered, or a body was refused; RESULT once a result post's body is whole in c->result
 * (for server/webpost.h to answer). */
int webxfer_body(struct webconn *c, struct evbuffer *in);

#endif

/* webreply: the status line and headers of the public test listener's answers (CORS,
 * Timing-Allow-Origin, Server-Timing, Connection) and its refusals (a one-line text/plain
 * reason, then close). Called by webroute.c, webxfer.c and webpost.c. */
#ifndef BM_WEBREPLY_H
#define BM_WEBREPLY_H

#include <stdint.h>

#include "server/webconn.h"

/* The head of an answer with length bytes of body of type type (NULL: none), Server-Timing
 * the time since the request's head was whole. */
void webreply_head(struct webconn *c, int status, const char *type, uint64_t length,
		   int keep_alive);
/* A refusal: status with why (one line) as text/plain; the connection closes after it. */
void webreply_error(struct webconn *c, int status, const char *why);

#endif

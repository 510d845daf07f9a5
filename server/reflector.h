/* reflector: the UDP probe reflector, on its own thread so bulk traffic never delays a reply. */
#ifndef BM_REFLECTOR_H
#define BM_REFLECTOR_H

#include "server/ctx.h"

struct reflector;

/* Starts reflecting on udp_fd (owned by the reflector from now on). NULL on failure. */
struct reflector *reflector_start(struct server_ctx *srv, int udp_fd);
/* Stops the thread, closes the socket, frees. */
void reflector_stop(struct reflector *r);

/* Builds the reply to one datagram: returns the reply length (== request length) or 0 if the
 * datagram must be ignored. Pure apart from the table lookup; exposed for tests and fuzzing. */
size_t reflector_answer(struct session_table *t, struct server_counters *c, const uint8_t *req,
			size_t len, const struct sockaddr *src, int64_t rx_ns, uint8_t *reply);

#endif

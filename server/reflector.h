/* reflector: the UDP probe reflector, on its own thread so bulk traffic never delays a reply. */
#ifndef BM_REFLECTOR_H
#define BM_REFLECTOR_H

#include "server/ctx.h"

struct reflector;

/* The receive buffer the reflector's socket asks for. Probes wait in it while the thread is
 * not on a CPU: the default (net.core.rmem_default, 208 KiB) holds about 2 ms of 1000
 * sessions' probes (100 000/s, ~1 KiB of kernel memory each) on loopback, and a busy host
 * deschedules the thread for longer, so they were dropped (docs/scale.md). Kernel memory,
 * used only while probes are queued. Asked for while still privileged (past rmem_max);
 * unprivileged, net.core.rmem_max caps it. */
#define REFLECTOR_RCVBUF (4 << 20)

/* Before privileges are dropped (reflector-priority): the calling thread takes SCHED_FIFO at
 * prio (1-99) for the reflector thread to inherit. 0 when taken (or prio is 0), -1 with a
 * warning when not allowed: the reflector then runs under the normal policy. */
int reflector_rt_begin(int prio);
/* Starts reflecting on udp_fd (owned by the reflector from now on). rt: reflector_rt_begin
 * took a real-time policy; the thread inherits it and the caller returns to the normal policy.
 * NULL on failure. */
struct reflector *reflector_start(struct server_ctx *srv, int udp_fd, int rt);
/* Stops the thread, closes the socket, frees. */
void reflector_stop(struct reflector *r);

/* Builds the reply to one datagram: returns the reply length (== request length) or 0 if the
 * datagram must be ignored. Pure apart from the table lookup; exposed for tests and fuzzing. */
size_t reflector_answer(struct session_table *t, struct server_counters *c, const uint8_t *req,
			size_t len, const struct sockaddr *src, int64_t rx_ns, uint8_t *reply);

#endif

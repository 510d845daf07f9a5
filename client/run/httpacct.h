/* httpacct: the byte accounting of the HTTP mode's load connections. Download bytes are what
 * the transfers' write callbacks received; upload bytes are what the server acknowledged
 * (TCP_INFO bytes_acked of each upload connection), not what libcurl took from us, which
 * runs ahead of the network by the socket's whole send buffer. A connection's count lives
 * while it is open and is folded into the total when it closes, so reconnects never count
 * twice and never lose bytes. Layer: client/run; callers: httpload.c (and its unit test). */
#ifndef BM_HTTPACCT_H
#define BM_HTTPACCT_H

#include <stddef.h>
#include <stdint.h>

#define HTTPACCT_MAX_CONNS 256 /* open load connections tracked at once */

struct httpacct_conn {
	int fd;                  /* -1: free slot */
	int up;                  /* an upload connection */
	uint64_t acked;          /* latest bytes_acked */
	uint64_t base;           /* bytes_acked when it last became an upload connection */
};

struct httpacct {
	uint64_t down_bytes;     /* received by download write callbacks */
	uint64_t up_closed;      /* acknowledged on upload connections already closed */
	struct httpacct_conn conn[HTTPACCT_MAX_CONNS];
};

void httpacct_init(struct httpacct *a);
/* A new connection of direction up; -1 when all slots are taken (it is then not counted). */
int httpacct_open(struct httpacct *a, int fd, int up);
/* Marks the connection of fd as one direction (libcurl creates the socket before the
 * transfer that uses it is known to us; a reused connection may change direction). */
void httpacct_set_dir(struct httpacct *a, int fd, int up);
/* The latest bytes_acked of fd (a counter that only grows; a smaller value is ignored). */
void httpacct_update(struct httpacct *a, int fd, uint64_t bytes_acked);
/* fd closes with its final bytes_acked: folded into the closed total, slot freed. */
void httpacct_close(struct httpacct *a, int fd, uint64_t bytes_acked);
void httpacct_add_down(struct httpacct *a, size_t bytes);
/* Acknowledged upload bytes so far: closed connections plus the open ones' latest counts. */
uint64_t httpacct_up_bytes(const struct httpacct *a);
/* Open connections of direction up. */
int httpacct_open_conns(const struct httpacct *a, int up);

#endif

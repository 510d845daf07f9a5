/* load: the client's bulk TCP flows for one loaded phase — receivers for download, senders
 * for upload — on the load event loop (never the probe loop). */
#ifndef BM_LOAD_H
#define BM_LOAD_H

#include <stdint.h>
#include <sys/socket.h>

#include <event2/event.h>

#include "common/sock.h"
#include "common/wire.h"

struct load;

struct load_info {
	int cc_ok;            /* cc set on every client load socket */
	char cc_used[16];     /* what the sockets really use */
	char cc_error[96];
	int mss;              /* from TCP_INFO of the first flow */
	int timestamps;       /* TCP timestamp option negotiated */
};

/* Opens ndown download and nup upload flows to the server (each announced by a data hello
 * with the session token) and starts moving bytes. NULL with err on failure. */
struct load *load_start(struct event_base *base, const struct sockaddr_storage *sa, socklen_t len,
			const uint8_t *token, int ndown, int nup, const char *cc, char *err,
			size_t errlen);
/* Bytes received so far on the download flows. */
uint64_t load_down_bytes(const struct load *l);
/* Flows still open. */
int load_open_flows(const struct load *l);
/* TCP_INFO totals of the upload flows so far (open and closed). */
void load_up_totals(const struct load *l, struct tcp_totals *t);
/* Periodic upkeep: re-tunes the senders' unsent-data limit. */
void load_tune(struct load *l);
void load_get_info(const struct load *l, struct load_info *info);
/* Closes every flow and frees l. */
void load_stop(struct load *l);

#endif

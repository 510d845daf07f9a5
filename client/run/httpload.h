/* httpload: the HTTP mode's load of one phase — N parallel downloads (GET /__down) and N
 * parallel uploads (POST /__up, the body read from one shared zero buffer), each re-issued
 * when it ends, on libcurl's multi interface (curlloop.c), one TCP connection per transfer.
 * It sets the congestion control on every load socket, counts bytes (httpacct.c), and
 * samples each open connection's TCP_INFO (its RTT is the in-flow latency). Layer:
 * client/run; caller: httpmode.c. */
#ifndef BM_HTTPLOAD_H
#define BM_HTTPLOAD_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "client/model/httptarget.h"
#include "client/model/result.h"
#include "common/sock.h"
#include "probes/series.h"

struct httpload;

struct httpload_opts {
	const struct httptarget *target;
	const char *resolve;      /* "host:port:address" for CURLOPT_RESOLVE, or NULL */
	const char *cc;           /* congestion control of the load sockets */
	const char *ca_file;      /* trust anchors for https, NULL: the system store */
	int insecure;             /* https without any certificate check (tests only) */
	int family;               /* AF_UNSPEC, AF_INET, AF_INET6 */
	const char *interface;    /* -B: CURLOPT_INTERFACE "host!ADDR" for every connection, or
				   * NULL */
};

/* Starts ndown downloads and nup uploads. NULL with err. */
struct httpload *httpload_start(struct event_base *base, const struct httpload_opts *o,
				int ndown, int nup, char *err, size_t errlen);
/* Download bytes received and upload bytes the server acknowledged, so far. */
uint64_t httpload_down_bytes(const struct httpload *l);
uint64_t httpload_up_bytes(const struct httpload *l);
/* Reads TCP_INFO of every open load connection: updates the upload count, appends one
 * flow_sample per connection to *arr (growable: *n used, *cap allocated) and its RTT
 * (download: the receiver's estimate, upload: the sender's) to down / up. */
void httpload_sample(struct httpload *l, int64_t now, struct flow_sample **arr, size_t *n,
		     size_t *cap, struct probe_series *down, struct probe_series *up);
/* Retransmissions and limits of the upload connections so far (open and closed). */
void httpload_up_totals(struct httpload *l, struct tcp_totals *t);
/* Transfers of direction up that are running. */
int httpload_flows(const struct httpload *l, int up);
/* 1 when the congestion control was set on every load socket; what they use in used. */
int httpload_cc(const struct httpload *l, char *used, size_t len);
/* The download's congestion control as the server named it (Bloatmeter-Congestion-Control),
 * "" when it did not. */
const char *httpload_server_cc(const struct httpload *l);
/* The MSS of the first connection sampled (0: none yet), and whether it uses timestamps. */
int httpload_mss(const struct httpload *l, int *timestamps);
/* The last transfer failure ("" if none), and whether every transfer has given up. */
const char *httpload_error(const struct httpload *l);
int httpload_dead(const struct httpload *l);
/* Ends every transfer, closes every connection, frees l. */
void httpload_stop(struct httpload *l);

#endif

/* httpprobe: the HTTP mode's latency requests — GET /__down?bytes=0 on a fresh connection at a
 * fixed interval (never a reused one: each times a TCP handshake through the queues). Each
 * gives a probe record whose RTT is the TCP handshake (libcurl's connect time less its name
 * lookup) and a "tcp_connect" sample (handshake plus request, handshake share in aux) for
 * the responsiveness figure. A handshake whose SYN was retransmitted (its connection's
 * TCP_INFO says so) counts as lost, as a dropped probe would. Layer: client/run; caller:
 * httpmode.c. */
#ifndef BM_HTTPPROBE_H
#define BM_HTTPPROBE_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "client/model/result.h"
#include "client/run/httpload.h"
#include "probes/series.h"
#include "probes/udp.h"

struct httpprobe;

/* The probes start at once, every interval_ns (at most max_inflight outstanding; a slot
 * skipped for that counts as lost), each with a timeout of timeout_ns. conn receives the
 * "tcp_connect" samples (the caller's, must outlive the probe). NULL with err. */
struct httpprobe *httpprobe_start(struct event_base *base, const struct httpload_opts *o,
				  int64_t interval_ns, int64_t timeout_ns,
				  struct probe_series *conn, char *err, size_t errlen);
/* Sends no more. */
void httpprobe_stop_sending(struct httpprobe *p);
/* Requests still outstanding. */
int httpprobe_inflight(const struct httpprobe *p);
/* From the next slot on, one request every interval_ns. */
void httpprobe_set_interval(struct httpprobe *p, int64_t interval_ns);
/* The mean IP bytes each way ([0] down, [1] up) of the requests whose connections closed
 * with their counts known; how many (0: none yet, out untouched). */
size_t httpprobe_wire_mean(const struct httpprobe *p, double out[2]);
/* The latest handshake RTT (0 before the first). */
int64_t httpprobe_last_rtt(const struct httpprobe *p);
/* Ends what is outstanding (lost), hands the records over (free() them), frees p. *wire
 * (when not NULL) gets, parallel to the records, the IP bytes each probe's connection carried
 * each way (zero where unknown); free() it too. */
struct probe_rec *httpprobe_free(struct httpprobe *p, size_t *n, struct probe_wire **wire);

/* One request, run to its end on a private loop before the test (is the target there, does
 * it answer 200?). 0, or -1 with one sentence in err. */
int httpprobe_check(const struct httpload_opts *o, int64_t timeout_ns, char *err, size_t errlen);

#endif

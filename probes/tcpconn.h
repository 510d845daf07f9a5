/* tcpconn: the new-connection ("foreign") probe of the responsiveness draft over plain TCP.
 * Each probe opens a new connection to the daemon's control port, times the handshake, sends
 * one 32-byte connect-probe request, waits for the 8-byte answer and resets the connection.
 * Runs on the shared probe runner's loop (probes/runner.h). */
#ifndef BM_PROBE_TCPCONN_H
#define BM_PROBE_TCPCONN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <event2/event.h>

#include "common/wire.h"
#include "probes/runner.h"
#include "probes/series.h"

#define TCPCONN_DEFAULT_INTERVAL_NS (200 * 1000 * 1000LL)
#define TCPCONN_DEFAULT_TIMEOUT_NS (4 * 1000 * 1000 * 1000LL)
/* Keeps the default cadence while the loaded RTT stays under 8 x 200 ms, and stays under the
 * server's per-session cap on open probe connections (server/connprobe.h). */
#define TCPCONN_DEFAULT_MAX_OUTSTANDING 8

struct tcpconn_probe_config {
	struct sockaddr_storage server; /* the daemon's TCP port */
	socklen_t server_len;
	uint8_t token[WIRE_TOKEN_LEN];  /* the session's token from the welcome */
	int64_t interval_ns;            /* between connection starts; <= 0: the default */
	int64_t timeout_ns;             /* whole exchange; <= 0: the default */
	int dscp;                       /* 0..63, -1: leave the default */
	int max_outstanding;            /* open connections at most; <= 0: the default */
	struct sockaddr_storage local;  /* -B: the source address; AF_UNSPEC (zero): any */
};

struct tcpconn_probe;

/* Adds the probe's events to base (the runner's, before runner_start); the first connection
 * starts when the loop runs. Fills *out (which the caller initialised with series_init) from
 * the runner thread; read it only after runner_stop. Samples: rtt = connect start to the
 * whole answer (SAMPLE_OK), aux = handshake in µs; refused or reset: SAMPLE_ERROR; no answer
 * within the timeout: SAMPLE_LOST. Samples still in flight when the runner stops stay
 * SAMPLE_PENDING until series_close(). On failure: NULL with err, and *out marked unavailable
 * with err as its note. */
struct tcpconn_probe *tcpconn_probe_start(struct event_base *base,
					  const struct tcpconn_probe_config *cfg,
					  struct probe_series *out, char *err, size_t errlen);

/* For runner_add: stop_sending and destroy (closes open connections, frees the probe; the
 * series stays the caller's). */
extern const struct probe_ops tcpconn_probe_ops;

#endif

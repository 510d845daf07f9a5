/* metrics: bloatmeterd's Prometheus text exposition (format 0.0.4) for /metrics, rendered
 * from the shared counters, the running sessions and the recent tests' histograms. */
#ifndef BM_METRICS_H
#define BM_METRICS_H

#include <stdint.h>

#include <event2/buffer.h>

struct server_ctx;

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Appends the exposition to out. Main thread only (it walks the live sessions); now_ns is
 * CLOCK_MONOTONIC for the uptime. 0, or -1 when out could not grow. */
int metrics_render(const struct server_ctx *srv, int64_t now_ns, struct evbuffer *out);

#endif

/* httpmode: one measurement against an HTTP speed-test server (GET /__down, POST /__up, as
 * Cloudflare's speed test and bloatmeterd's public listener serve them) — the same phase
 * schedule as a bloatmeterd test, with HTTP transfers as the load (httpload.c), latency from
 * fresh-connection requests (httpprobe.c), the load connections' TCP_INFO and ICMP, filling the
 * same test_result for the same analysis and reports. Layer: client/run; called by the
 * command line. */
#ifndef BM_HTTPMODE_H
#define BM_HTTPMODE_H

#include <stddef.h>

#include "client/model/config.h"
#include "client/model/result.h"

/* Runs the test against cfg->http_url. res must be result_init'ed. Returns as measure_run:
 * 0 complete, 1 partial (res marked, err says why), -1 nothing measured (err). */
int httpmode_run(const struct client_config *cfg, struct test_result *res, char *err,
		 size_t errlen);

#endif

/* webresult: browser results posted to the public test listener (POST /api/v1/results,
 * docs/http.md): the strict validator of their JSON (json-c; only the contract's keys, finite
 * numbers ≥ 0 or null, a known grade, a short engine name) and the bounds on how often they
 * may come (per client address and in all), before they are stored with source
 * "browser" (server/webpost.h does that). Pure functions of their inputs (the fuzzer
 * tests/fuzz/fuzz_webresult.c calls the parser); any server module may call them. */
#ifndef BM_WEBRESULT_H
#define BM_WEBRESULT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "server/limits.h"
#include "server/testring.h"

#define WEBRESULT_MAX_BYTES 4096
#define WEBRESULT_ENGINE_MAX 64
#define WEBRESULT_PER_CLIENT_PER_MIN 6  /* one client address (IPv4, IPv6 /64) */
#define WEBRESULT_ALL_PER_MIN 120       /* every client together */
#define WEBRESULT_CLIENTS 128           /* client addresses remembered for the rate */
#define WEBRESULT_MAX_MS 1e6            /* a latency figure above this is nonsense */
#define WEBRESULT_MAX_MBPS 1e6

/* A validated result: the figures as a client-reported summary (NAN = null or absent),
 * the loaded latencies, and the engine's name. */
struct webresult {
	struct test_client_summary sum;
	double loaded_ms[2];
	char engine[WEBRESULT_ENGINE_MAX + 1];
};

/* Parses and validates len bytes of JSON: 0 and *out filled, or -1 with a one-line reason
 * in *why (a constant string). */
int webresult_parse(const char *buf, size_t len, struct webresult *out, const char **why);

/* The rate bounds: one bucket per recent client address and one for all. */
struct webresult_limiter {
	struct {
		struct sockaddr_storage peer;
		struct limits_bucket bucket;
		int used;
	} client[WEBRESULT_CLIENTS];
	struct limits_bucket all;
};

void webresult_limiter_init(struct webresult_limiter *l, int64_t now_ns);
/* Takes one post's place for peer at now_ns: 1, or 0 when over a bound. */
int webresult_limiter_take(struct webresult_limiter *l, const struct sockaddr *peer,
			   int64_t now_ns);

#endif

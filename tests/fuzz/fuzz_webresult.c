/* fuzz_webresult: hostile bytes as a browser's result post (POST /api/v1/results,
 * server/webresult.c). Whatever the bytes, the validator reads only the len bytes it was given
 * (json-c on a bounded, depth-limited tokener) and keeps only what /api/v1/tests, the
 * dashboard and /metrics can show safely: a known grade, finite figures inside their bounds
 * or null, an engine name of printable ASCII. A refusal says why. The input's first byte also
 * drives the rate limiter: a burst from one address is held to its bound. */
#include <math.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "server/webresult.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_webresult_figure(double v, double max)
{
	if (!isnan(v) && (!isfinite(v) || v < 0 || v > max))
		abort();
}

static void fuzz_webresult_check(const struct webresult *r)
{
	static const char *const grades[] = { "A+", "A", "B", "C", "D", "F" };
	size_t n = strnlen(r->engine, sizeof(r->engine)), g;

	if (!r->sum.valid || n > WEBRESULT_ENGINE_MAX)
		abort();
	for (size_t i = 0; i < n; i++)
		if (r->engine[i] < 0x20 || r->engine[i] > 0x7e)
			abort();
	for (g = 0; g < sizeof(grades) / sizeof(grades[0]); g++)
		if (strcmp(r->sum.grade, grades[g]) == 0)
			break;
	if (g == sizeof(grades) / sizeof(grades[0]))
		abort();
	fuzz_webresult_figure(r->sum.idle_ms, WEBRESULT_MAX_MS);
	for (int d = 0; d < 2; d++) {
		fuzz_webresult_figure(r->sum.increase_ms[d], WEBRESULT_MAX_MS);
		fuzz_webresult_figure(r->loaded_ms[d], WEBRESULT_MAX_MS);
		fuzz_webresult_figure(r->sum.throughput_bps[d], WEBRESULT_MAX_MBPS * 1e6);
		if (!isnan(r->sum.buffer_ms[d]))
			abort(); /* a browser reports no buffer */
	}
}

/* A burst of (1 + data[0] % 16) posts from one address at one instant: at most the client's
 * bound pass. */
static void fuzz_webresult_rate(uint8_t first)
{
	static struct webresult_limiter l;
	struct sockaddr_in peer;
	int passed = 0;

	memset(&peer, 0, sizeof(peer));
	peer.sin_family = AF_INET;
	peer.sin_addr.s_addr = htonl(0xc0000200u | first); /* 192.0.2.x */
	webresult_limiter_init(&l, 0);
	for (int i = 0; i < 1 + first % 16; i++)
		passed += webresult_limiter_take(&l, (struct sockaddr *)&peer, 0);
	if (passed > WEBRESULT_PER_CLIENT_PER_MIN)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size heap copy, not NUL-terminated: ASan sees any read past the body. */
	char *buf = malloc(size ? size : 1);
	struct webresult r;
	const char *why = NULL;

	if (buf == NULL)
		abort();
	memcpy(buf, data, size);
	if (webresult_parse(buf, size, &r, &why) == 0)
		fuzz_webresult_check(&r);
	else if (why == NULL || why[0] == '\0' || r.sum.valid)
		abort();
	if (size > 0)
		fuzz_webresult_rate(data[0]);
	free(buf);
	return 0;
}

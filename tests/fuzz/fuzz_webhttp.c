/* fuzz_webhttp: hostile bytes as a request head on the public test listener (server/webhttp.c),
 * and as the query of GET /__down. Whatever the bytes, the parser reads only the len bytes it
 * was given, and a head it accepts is one the listener can serve safely: inside the bound,
 * a target that starts with '/' without spaces or control characters, one framing of the
 * body at most, within the size bound; a query's bytes= is a count 0..1 GiB that appears in
 * it as decimal digits. A refusal carries an HTTP status and a reason. */
#include <stdlib.h>
#include <string.h>

#include "server/webhttp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_webhttp_text(const char *s, size_t max)
{
	size_t n = strnlen(s, max);

	if (n >= max)
		abort();
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f)
			abort();
}

/* A count bytes= gave must be spelt in the query as "bytes=" and those digits. */
static void fuzz_webhttp_query(const char *query)
{
	uint64_t bytes = UINT64_MAX;

	if (webhttp_query_bytes(query, &bytes) < 0)
		return;
	if (bytes > WEBHTTP_MAX_BYTES)
		abort();
	/* Leading zeros are allowed: compare the value, not the spelling. */
	for (const char *p = strstr(query, "bytes="); p; p = strstr(p + 1, "bytes=")) {
		char *end;
		unsigned long long v = strtoull(p + 6, &end, 10);

		if (end != p + 6 && v == bytes && (*end == '\0' || *end == '&'))
			return;
	}
	abort();
}

static void fuzz_webhttp_done(const struct webhttp_req *req, size_t len)
{
	if (req->head_len < 4 || req->head_len > len || req->head_len > WEBHTTP_MAX_HEAD)
		abort();
	if (req->path[0] != '/' || (req->method < WEBHTTP_GET || req->method > WEBHTTP_OTHER))
		abort();
	fuzz_webhttp_text(req->path, sizeof(req->path));
	fuzz_webhttp_text(req->query, sizeof(req->query));
	if (strlen(req->path) + strlen(req->query) >= WEBHTTP_MAX_PATH)
		abort();
	if (req->has_length && req->chunked)
		abort();
	if (req->content_length > WEBHTTP_MAX_BYTES || (!req->has_length && req->content_length))
		abort();
	fuzz_webhttp_query(req->query);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Exact-size heap copies: ASan sees any read past the head or the string. */
	char *buf = malloc(size ? size : 1), *str = malloc(size + 1);
	struct webhttp_req req;
	const char *why = NULL;
	enum webhttp_status st;

	if (buf == NULL || str == NULL)
		abort();
	memcpy(buf, data, size);
	st = webhttp_parse(buf, size, &req, &why);
	if (why == NULL)
		abort();
	switch (st) {
	case WEBHTTP_DONE:
		fuzz_webhttp_done(&req, size);
		break;
	case WEBHTTP_MORE:
		if (size >= WEBHTTP_MAX_HEAD)
			abort();
		break;
	case WEBHTTP_BAD:
	case WEBHTTP_TOO_BIG:
	case WEBHTTP_VERSION:
	case WEBHTTP_NOT_IMPL:
		if (why[0] == '\0')
			abort(); /* every refusal says why */
		break;
	default:
		abort();
	}
	/* The same bytes as a query string, up to the first NUL. */
	memcpy(str, data, size);
	str[size] = '\0';
	fuzz_webhttp_query(str);
	free(str);
	free(buf);
	return 0;
}

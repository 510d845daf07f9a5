/* webhttp: a bounded HTTP/1.x request head parser for the public test listener. It looks only at
 * what the listener needs (method, target, version, Content-Length, Transfer-Encoding,
 * Connection, Content-Type) and refuses anything ambiguous (two lengths, length and chunked,
 * bare CR, obs-fold), since the bytes come from anyone. */
#include "server/webhttp.h"

#include <string.h>
#include <strings.h>

/* The end of the head (index just past "\r\n\r\n"), or 0 if not in buf[0..len). */
static size_t webhttp_head_end(const char *buf, size_t len)
{
	for (size_t i = 3; i < len; i++)
		if (buf[i] == '\n' && buf[i - 1] == '\r' && buf[i - 2] == '\n' && buf[i - 3] == '\r')
			return i + 1;
	return 0;
}

static enum webhttp_method webhttp_method(const char *m, size_t n)
{
	static const struct { const char *name; enum webhttp_method m; } methods[] = {
		{ "GET", WEBHTTP_GET }, { "HEAD", WEBHTTP_HEAD }, { "POST", WEBHTTP_POST },
		{ "OPTIONS", WEBHTTP_OPTIONS },
	};

	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (strlen(methods[i].name) == n && memcmp(methods[i].name, m, n) == 0)
			return methods[i].m;
	return WEBHTTP_OTHER;
}

/* A decimal count 0..WEBHTTP_MAX_BYTES from s[0..n), 0 or -1. */
static int webhttp_count(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (n == 0 || n > 12)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > WEBHTTP_MAX_BYTES)
		return -1;
	*out = v;
	return 0;
}

/* Request line "METHOD SP target SP HTTP/1.x": 0 or a status. */
static enum webhttp_status webhttp_line(const char *l, size_t n, struct webhttp_req *req,
					const char **why)
{
	const char *sp1 = memchr(l, ' ', n), *sp2, *q;
	size_t tlen, plen;

	*why = "malformed request line";
	if (sp1 == NULL || sp1 == l)
		return WEBHTTP_BAD;
	req->method = webhttp_method(l, (size_t)(sp1 - l));
	sp2 = memchr(sp1 + 1, ' ', n - (size_t)(sp1 + 1 - l));
	if (sp2 == NULL || sp2 == sp1 + 1 || sp1[1] != '/')
		return WEBHTTP_BAD;
	if ((size_t)(l + n - (sp2 + 1)) != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0)
		return WEBHTTP_BAD;
	if (sp2[8] != '0' && sp2[8] != '1') {
		*why = "only HTTP/1.0 and HTTP/1.1 are served";
		return WEBHTTP_VERSION;
	}
	req->http11 = sp2[8] == '1';
	tlen = (size_t)(sp2 - (sp1 + 1));
	for (size_t i = 0; i < tlen; i++)
		if ((unsigned char)sp1[1 + i] <= ' ' || (unsigned char)sp1[1 + i] >= 0x7f)
			return WEBHTTP_BAD;
	q = memchr(sp1 + 1, '?', tlen);
	plen = q ? (size_t)(q - (sp1 + 1)) : tlen;
	if (tlen >= WEBHTTP_MAX_PATH) {
		*why = "request target too long";
		return WEBHTTP_BAD;
	}
	memcpy(req->path, sp1 + 1, plen);
	req->path[plen] = '\0';
	if (q) {
		memcpy(req->query, q + 1, tlen - plen - 1);
		req->query[tlen - plen - 1] = '\0';
	}
	return WEBHTTP_DONE;
}

/* Does the header value v[0..n) hold token tok (comma-separated, any case)? */
static int webhttp_has_token(const char *v, size_t n, const char *tok)
{
	size_t tl = strlen(tok), i = 0;

	while (i < n) {
		size_t s, e;

		while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		s = i;
		while (i < n && v[i] != ',')
			i++;
		e = i;
		while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
			e--;
		if (e - s == tl && strncasecmp(v + s, tok, tl) == 0)
			return 1;
	}
	return 0;
}

/* One header line "Name: value": 0 or a status. */
static enum webhttp_status webhttp_header(const char *l, size_t n, struct webhttp_req *req,
					  int *close_tok, int *keep_tok, const char **why)
{
	const char *colon = memchr(l, ':', n), *v;
	size_t nl, vn;

	*why = "malformed header";
	if (colon == NULL || colon == l || l[0] == ' ' || l[0] == '\t')
		return WEBHTTP_BAD;
	nl = (size_t)(colon - l);
	for (size_t i = 0; i < nl; i++)
		if ((unsigned char)l[i] <= ' ' || (unsigned char)l[i] >= 0x7f)
			return WEBHTTP_BAD;
	v = colon + 1;
	vn = n - nl - 1;
	while (vn > 0 && (*v == ' ' || *v == '\t'))
		v++, vn--;
	while (vn > 0 && (v[vn - 1] == ' ' || v[vn - 1] == '\t'))
		vn--;
	if (nl == 14 && strncasecmp(l, "Content-Length", nl) == 0) {
		uint64_t len;

		if (req->has_length || webhttp_count(v, vn, &len) < 0) {
			*why = "bad or repeated Content-Length (at most 1073741824)";
			return WEBHTTP_BAD;
		}
		req->has_length = 1;
		req->content_length = len;
	} else if (nl == 17 && strncasecmp(l, "Transfer-Encoding", nl) == 0) {
		if (req->chunked || vn != 7 || strncasecmp(v, "chunked", 7) != 0) {
			*why = "only Transfer-Encoding: chunked is understood";
			return WEBHTTP_NOT_IMPL;
		}
		req->chunked = 1;
	} else if (nl == 10 && strncasecmp(l, "Connection", nl) == 0) {
		*close_tok |= webhttp_has_token(v, vn, "close");
		*keep_tok |= webhttp_has_token(v, vn, "keep-alive");
	} else if (nl == 12 && strncasecmp(l, "Content-Type", nl) == 0) {
		req->json = vn >= 16 && strncasecmp(v, "application/json", 16) == 0 &&
			    (vn == 16 || v[16] == ';' || v[16] == ' ');
	}
	return WEBHTTP_DONE;
}

enum webhttp_status webhttp_parse(const char *buf, size_t len, struct webhttp_req *req,
				  const char **why)
{
	size_t end = webhttp_head_end(buf, len < WEBHTTP_MAX_HEAD ? len : WEBHTTP_MAX_HEAD);
	size_t pos = 0;
	int close_tok = 0, keep_tok = 0, first = 1;

	memset(req, 0, sizeof(*req));
	*why = "";
	if (end == 0) {
		if (len < WEBHTTP_MAX_HEAD)
			return WEBHTTP_MORE;
		*why = "request head too large";
		return WEBHTTP_TOO_BIG;
	}
	while (pos < end - 2) {
		const char *l = buf + pos;
		const char *nl = memchr(l, '\n', end - pos);
		size_t n = (size_t)(nl - l);
		enum webhttp_status st;

		/* Every line ends in CRLF and holds no other CR or NUL (no smuggling by bare CR). */
		if (n == 0 || l[n - 1] != '\r' || memchr(l, '\r', n - 1) || memchr(l, '\0', n)) {
			*why = "malformed line ending";
			return WEBHTTP_BAD;
		}
		n--;
		st = first ? webhttp_line(l, n, req, why)
			   : webhttp_header(l, n, req, &close_tok, &keep_tok, why);
		if (st != WEBHTTP_DONE)
			return st;
		first = 0;
		pos += n + 2;
	}
	if (req->chunked && req->has_length) {
		*why = "both Content-Length and chunked";
		return WEBHTTP_BAD;
	}
	req->keep_alive = req->http11 ? !close_tok : keep_tok && !close_tok;
	req->head_len = end;
	return WEBHTTP_DONE;
}

int webhttp_query_bytes(const char *query, uint64_t *bytes)
{
	const char *p = query;

	while (*p) {
		const char *amp = strchr(p, '&');
		size_t n = amp ? (size_t)(amp - p) : strlen(p);

		if (n > 6 && strncmp(p, "bytes=", 6) == 0)
			return webhttp_count(p + 6, n - 6, bytes);
		p += n + (amp != NULL);
	}
	return -1;
}

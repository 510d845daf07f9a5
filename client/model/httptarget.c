/* httptarget: the bounded URL parser of an HTTP speed-test target and its endpoint URLs. */
#include "client/model/httptarget.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static int fail(char *err, size_t errlen, const char *why)
{
	if (errlen > 0)
		snprintf(err, errlen, "%s", why);
	return -1;
}

int httptarget_is_url(const char *s)
{
	return strncasecmp(s, "http://", 7) == 0 || strncasecmp(s, "https://", 8) == 0;
}

/* A DNS name or IPv4 address: letters, digits, '-', '.', '_'. */
static int host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_';
}

static int v6_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') ||
	       c == ':' || c == '.';
}

/* Copies the authority's host (s[0..n)) into t; brackets mark an IPv6 literal. */
static int parse_host(struct httptarget *t, const char *s, size_t n, char *err, size_t errlen)
{
	int v6 = n >= 2 && s[0] == '[' && s[n - 1] == ']';

	if (v6) {
		s++;
		n -= 2;
	}
	if (n == 0)
		return fail(err, errlen, "the URL has no host");
	if (n >= sizeof(t->host))
		return fail(err, errlen, "the URL's host is too long");
	for (size_t i = 0; i < n; i++)
		if (!(v6 ? v6_char(s[i]) : host_char(s[i])))
			return fail(err, errlen, "the URL's host has a character a host cannot have");
	if (v6 && memchr(s, ':', n) == NULL)
		return fail(err, errlen, "the URL's bracketed host is not an IPv6 address");
	memcpy(t->host, s, n);
	t->host[n] = '\0';
	t->host_v6 = v6;
	return 0;
}

/* Decimal 1-65535, at most 5 digits. */
static int parse_port(struct httptarget *t, const char *s, size_t n, char *err, size_t errlen)
{
	unsigned v = 0;

	if (n == 0 || n > 5)
		return fail(err, errlen, "the URL's port is not a number from 1 to 65535");
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return fail(err, errlen, "the URL's port is not a number from 1 to 65535");
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v < 1 || v > 65535)
		return fail(err, errlen, "the URL's port is not a number from 1 to 65535");
	t->port = (uint16_t)v;
	return 0;
}

/* The authority s[0..n): HOST or HOST:PORT, HOST possibly [v6]. */
static int parse_authority(struct httptarget *t, const char *s, size_t n, char *err,
			   size_t errlen)
{
	const char *colon = NULL;

	if (memchr(s, '@', n) != NULL)
		return fail(err, errlen, "the URL carries user information, which is not supported");
	if (n > 0 && s[0] == '[') {
		const char *close = memchr(s, ']', n);

		if (close == NULL)
			return fail(err, errlen, "the URL's IPv6 host lacks its closing bracket");
		if (close + 1 < s + n) {
			if (close[1] != ':')
				return fail(err, errlen, "the URL has bytes after its IPv6 host");
			colon = close + 1;
		}
	} else {
		colon = memchr(s, ':', n);
	}
	if (colon == NULL)
		return parse_host(t, s, n, err, errlen);
	if (parse_host(t, s, (size_t)(colon - s), err, errlen) != 0)
		return -1;
	return parse_port(t, colon + 1, n - (size_t)(colon - s) - 1, err, errlen);
}

/* The path s[0..n) (starting with '/'): printable, no query or fragment; final '/'s dropped. */
static int parse_path(struct httptarget *t, const char *s, size_t n, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '?' || s[i] == '#')
			return fail(err, errlen, "the URL has a query or fragment; give only the base URL");
		if (s[i] <= ' ' || s[i] > '~')
			return fail(err, errlen, "the URL has a byte outside printable ASCII");
	}
	while (n > 0 && s[n - 1] == '/')
		n--;
	if (n >= sizeof(t->path))
		return fail(err, errlen, "the URL's path is too long");
	memcpy(t->path, s, n);
	t->path[n] = '\0';
	return 0;
}

int httptarget_parse(struct httptarget *t, const char *url, char *err, size_t errlen)
{
	size_t len = strnlen(url, HTTPTARGET_URL_MAX);
	const char *auth, *slash;

	memset(t, 0, sizeof(*t));
	if (len >= HTTPTARGET_URL_MAX)
		return fail(err, errlen, "the URL is too long");
	if (strncasecmp(url, "https://", 8) == 0) {
		t->tls = 1;
		t->port = 443;
		auth = url + 8;
	} else if (strncasecmp(url, "http://", 7) == 0) {
		t->port = 80;
		auth = url + 7;
	} else {
		return fail(err, errlen, "the URL does not start with http:// or https://");
	}
	slash = strchr(auth, '/');
	if (slash == NULL)
		slash = url + len;
	if (strpbrk(auth, "?#") != NULL && strpbrk(auth, "?#") < slash)
		return fail(err, errlen, "the URL has a query or fragment; give only the base URL");
	if (parse_authority(t, auth, (size_t)(slash - auth), err, errlen) != 0)
		return -1;
	return parse_path(t, slash, (size_t)(url + len - slash), err, errlen);
}

/* "scheme://host:port" + path + tail; -1 when it does not fit. */
static int build(const struct httptarget *t, const char *tail, char *out, size_t len)
{
	int n = snprintf(out, len, "%s://%s%s%s:%u%s%s", t->tls ? "https" : "http",
			 t->host_v6 ? "[" : "", t->host, t->host_v6 ? "]" : "", (unsigned)t->port,
			 t->path, tail);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int httptarget_down_url(const struct httptarget *t, uint64_t bytes, char *out, size_t len)
{
	char tail[48];

	snprintf(tail, sizeof(tail), "/__down?bytes=%" PRIu64, bytes);
	return build(t, tail, out, len);
}

int httptarget_up_url(const struct httptarget *t, char *out, size_t len)
{
	return build(t, "/__up", out, len);
}

int httptarget_format(const struct httptarget *t, char *out, size_t len)
{
	return build(t, "", out, len);
}

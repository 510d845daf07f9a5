/* httptarget: an HTTP speed-test target, http[s]://HOST[:PORT][/PATH] — the bounded parser of
 * the URL a user gives (or a configuration file holds) and the endpoint URLs built from it
 * (/__down, /__up of the contract in docs/http.md). Layer: client/model; callers: the CLI, to
 * tell a URL from a bloatmeterd SERVER, and the HTTP run, for host, port and URLs. */
#ifndef BM_HTTPTARGET_H
#define BM_HTTPTARGET_H

#include <stddef.h>
#include <stdint.h>

#define HTTPTARGET_URL_MAX 1024     /* bytes of a target URL */
#define HTTPTARGET_HOST_MAX 254     /* a DNS name (253) or an IPv6 literal, + NUL */
#define HTTPTARGET_PATH_MAX 512     /* the path prefix, + NUL */
#define HTTPTARGET_ERR_MAX 160
/* Cloudflare's public speed endpoints: the target when neither command line nor configuration
 * names one. */
#define HTTPTARGET_DEFAULT "https://speed.cloudflare.com"

struct httptarget {
	int tls;                          /* https */
	char host[HTTPTARGET_HOST_MAX];   /* name or address, IPv6 without brackets */
	int host_v6;                      /* host is an IPv6 literal (URLs need its brackets) */
	uint16_t port;                    /* explicit or the scheme's (80, 443) */
	char path[HTTPTARGET_PATH_MAX];   /* prefix before /__down, "" or "/a/b" (no final /) */
};

/* 1 when s starts with http:// or https:// (any case): a URL, not a bloatmeterd SERVER. */
int httptarget_is_url(const char *s);
/* Parses url into t; -1 with a one-sentence reason in err on anything else: another scheme,
 * user info, an empty or over-long host, a port outside 1-65535, a query or fragment, or bytes
 * outside printable ASCII. */
int httptarget_parse(struct httptarget *t, const char *url, char *err, size_t errlen);
/* "scheme://host:port" + path + "/__down?bytes=N" (or "/__up"); -1 when it does not fit. */
int httptarget_down_url(const struct httptarget *t, uint64_t bytes, char *out, size_t len);
int httptarget_up_url(const struct httptarget *t, char *out, size_t len);
/* The canonical form of the target ("https://host:443/path") for the report's `server`. */
int httptarget_format(const struct httptarget *t, char *out, size_t len);

#endif

/* httphdr: the one response header line of an HTTP speed-test server that the HTTP mode reads,
 * Bloatmeter-Congestion-Control: NAME (docs/http.md), bloatmeterd's public listener naming the
 * algorithm that sends the download. The bytes come from any server: the parser is bounded and
 * accepts only a plain algorithm name. Layer: client/model; caller: client/run/httpload.c. */
#ifndef BM_HTTPHDR_H
#define BM_HTTPHDR_H

#include <stddef.h>

#define HTTPHDR_CC_NAME "Bloatmeter-Congestion-Control"
#define HTTPHDR_CC_MAX 16 /* a kernel algorithm name (TCP_CA_NAME_MAX) with its NUL */

/* 1 and the name in out (outlen >= HTTPHDR_CC_MAX) when line[0..len) is that header with a
 * name of 1-15 of [a-z0-9_-] (the name case-insensitive, optional white space around the
 * value, an optional CRLF); 0 for any other line. */
int httphdr_cc(const char *line, size_t len, char *out, size_t outlen);

#endif

/* webhttp: the parser of the public test listener's requests (server/weblisten.h): the request
 * line and headers of one HTTP/1.x request from untrusted bytes, bounded (WEBHTTP_MAX_HEAD), with
 * no I/O and no libevent, and the query parameter bytes= of /__down. Any server module may call
 * it; tests/fuzz/fuzz_webhttp.c fuzzes it. */
#ifndef BM_WEBHTTP_H
#define BM_WEBHTTP_H

#include <stddef.h>
#include <stdint.h>

#define WEBHTTP_MAX_HEAD 8192   /* request line and headers, with the blank line */
#define WEBHTTP_MAX_PATH 256    /* path and query */
#define WEBHTTP_MAX_BYTES (1ULL << 30) /* most bytes= of /__down or body of /__up */

enum webhttp_method { WEBHTTP_GET, WEBHTTP_HEAD, WEBHTTP_POST, WEBHTTP_OPTIONS, WEBHTTP_OTHER };

struct webhttp_req {
	enum webhttp_method method;
	char path[WEBHTTP_MAX_PATH];  /* without the query */
	char query[WEBHTTP_MAX_PATH]; /* after '?', "" when none */
	int http11;                   /* HTTP/1.1 (else 1.0) */
	int keep_alive;               /* the connection may carry another request */
	int has_length;               /* Content-Length given */
	uint64_t content_length;
	int chunked;                  /* Transfer-Encoding: chunked */
	int json;                     /* Content-Type: application/json */
	size_t head_len;              /* bytes of the head, the blank line included */
};

/* Result of webhttp_parse: a whole head, more bytes needed, or a refusal with its status. */
enum webhttp_status { WEBHTTP_DONE = 0, WEBHTTP_MORE = 1, WEBHTTP_BAD = 400,
		      WEBHTTP_TOO_BIG = 431, WEBHTTP_VERSION = 505, WEBHTTP_NOT_IMPL = 501 };

/* Parses the head at the start of buf (len bytes, not NUL-terminated). DONE fills req;
 * MORE: no blank line yet and len < WEBHTTP_MAX_HEAD; otherwise the status to answer with
 * (and why, one sentence, in *why). */
enum webhttp_status webhttp_parse(const char *buf, size_t len, struct webhttp_req *req,
				  const char **why);

/* The value of bytes= in query as a count 0..WEBHTTP_MAX_BYTES: 0, or -1 if it is absent,
 * not decimal digits, or too big. Other parameters (measId, during) are ignored. */
int webhttp_query_bytes(const char *query, uint64_t *bytes);

#endif

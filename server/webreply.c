/* webreply: the public test listener's answers. Every answer carries CORS
 * (Access-Control-Allow-Origin: *) and Timing-Allow-Origin: * so a page from another origin
 * can time it, and Server-Timing: cfRequestDuration;dur=MS, the server's share of the time to
 * first byte, which @cloudflare/speedtest subtracts from it (dist/speedtest.js,
 * cfGetServerTime). Bloatmeter-Congestion-Control names the connection's sender algorithm, so
 * a client can tell a download that fills the bottleneck's buffer (cubic, reno) from one that
 * keeps it short on purpose (bbr) and report its buffer as a bound. Refusals close the connection: a client that sent a bad request is not
 * trusted to frame the next one. */
#include "server/webreply.h"

#include <inttypes.h>
#include <stdio.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "common/clock.h"

static const char *webreply_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 204: return "No Content";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 411: return "Length Required";
	case 413: return "Content Too Large";
	case 415: return "Unsupported Media Type";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Error";
	}
}

void webreply_head(struct webconn *c, int status, const char *type, uint64_t length,
		   int keep_alive)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	int64_t dur_us = (clock_mono_ns() - c->req_start_ns) / 1000;
	char clen[48] = "", cc[64] = "";

	/* A 204 has no Content-Length (RFC 9110, 8.6). */
	if (status != 204)
		snprintf(clen, sizeof(clen), "Content-Length: %" PRIu64 "\r\n", length);
	if (c->cc[0])
		snprintf(cc, sizeof(cc), "Bloatmeter-Congestion-Control: %s\r\n", c->cc);

	evbuffer_add_printf(out,
			    "HTTP/1.1 %d %s\r\n"
			    "%s"
			    "%s%s%s%s%s"
			    "Cache-Control: no-store\r\n"
			    "Access-Control-Allow-Origin: *\r\n"
			    "Timing-Allow-Origin: *\r\n"
			    "Access-Control-Expose-Headers: Server-Timing\r\n"
			    "Server-Timing: cfRequestDuration;dur=%" PRId64 ".%03" PRId64 "\r\n"
			    "Connection: %s\r\n\r\n",
			    status, webreply_reason(status),
			    clen,
			    type ? "Content-Type: " : "",
			    type ? type : "", type ? "\r\n" : "",
			    status == 429 || status == 503 ? "Retry-After: 10\r\n" : "", cc,
			    dur_us / 1000, dur_us % 1000, keep_alive ? "keep-alive" : "close");
}

void webreply_error(struct webconn *c, int status, const char *why)
{
	char line[160];
	int n = snprintf(line, sizeof(line), "%s\n", why && *why ? why : webreply_reason(status));

	if (n < 0 || (size_t)n >= sizeof(line)) {
		n = (int)sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	webreply_head(c, status, "text/plain; charset=utf-8", (uint64_t)n, 0);
	evbuffer_add(bufferevent_get_output(c->bev), line, (size_t)n);
	webconn_finish(c, 0);
}


/* webxfer: the bytes of the public test listener. /__down never copies its payload: it adds
 * slices of one constant zero buffer to the output by reference, keeping between
 * WEBXFER_LOWAT and WEBXFER_HIGH queued (the write callback fires at the low mark), so a
 * download costs no memory per byte and a slow reader only holds a bounded queue. Bodies are
 * read under a size bound with Content-Length or chunked framing; /__up's are discarded. */
#include "server/webxfer.h"

#include <stdatomic.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "common/log.h"
#include "server/ctx.h"
#include "server/webreply.h"

#define WEBXFER_SLICE (64 * 1024)     /* the zero buffer */
#define WEBXFER_HIGH (1024 * 1024)    /* queue /__down up to this */
#define WEBXFER_LOWAT (256 * 1024)    /* and top it up below this */
#define WEBXFER_BODY_READ (256 * 1024) /* read at most this much body ahead */
#define WEBXFER_CHUNK_LINE 64         /* a chunk-size line, extensions included */
#define WEBXFER_TRAILER_LINE 1024     /* one trailer line */

/* Constant data, shared by every download (it is the program's text, not state). */
static const unsigned char webxfer_zeros[WEBXFER_SLICE];

void webxfer_rate_limit(struct webconn *c)
{
	uint64_t bps = c->srv->cfg->max_rate_bps;
	struct timeval tick = { 0, 100 * 1000 };
	size_t rate, burst;

	if (bps == 0)
		return;
	rate = (size_t)(bps / 8 / 10); /* bytes per 100 ms tick */
	if (rate < 1)
		rate = 1;
	burst = rate < WEBXFER_SLICE ? WEBXFER_SLICE : rate;
	c->bucket = ev_token_bucket_cfg_new(rate, burst, rate, burst, &tick);
	if (c->bucket == NULL || bufferevent_set_rate_limit(c->bev, c->bucket) < 0)
		log_warnx("public listener: cannot apply max-rate to a connection");
}

void webxfer_down_start(struct webconn *c, uint64_t bytes)
{
	c->state = WEBCONN_DOWN;
	c->down_left = bytes;
	webconn_arm_transfer(c);
	bufferevent_setwatermark(c->bev, EV_WRITE, WEBXFER_LOWAT, 0);
	(void)webxfer_down_more(c);
}

int webxfer_down_more(struct webconn *c)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	size_t queued = evbuffer_get_length(out);

	while (c->down_left > 0 && queued < WEBXFER_HIGH) {
		size_t n = c->down_left < WEBXFER_SLICE ? (size_t)c->down_left : WEBXFER_SLICE;

		if (evbuffer_add_reference(out, webxfer_zeros, n, NULL, NULL) < 0) {
			log_warnx("public listener: cannot queue download bytes");
			break;
		}
		c->down_left -= n;
		queued += n;
		atomic_fetch_add(&c->srv->counters.web_bytes_down, n);
	}
	if (c->down_left > 0)
		return 0;
	webconn_finish(c, c->keep_alive);
	return 1;
}

void webxfer_body_start(struct webconn *c, const struct webhttp_req *req, enum webconn_body kind)
{
	c->state = WEBCONN_BODY;
	c->body_kind = kind;
	c->chunked = req->chunked;
	c->chunk_state = CHUNK_SIZE;
	c->body_left = req->chunked ? 0 : req->content_length;
	c->body_total = 0;
	c->body_whole = 0;
	if (kind == WEBBODY_RESULT && c->result == NULL)
		c->result = evbuffer_new();
	else if (c->result)
		evbuffer_drain(c->result, evbuffer_get_length(c->result));
	if (kind == WEBBODY_RESULT && c->result == NULL) {
		webreply_error(c, 503, "out of memory");
		return;
	}
	webconn_arm_transfer(c);
	bufferevent_setwatermark(c->bev, EV_READ, 0, WEBXFER_BODY_READ);
}

/* Moves n body bytes out of in: 0, or -1 after refusing a body over its bound. */
static int webxfer_consume(struct webconn *c, struct evbuffer *in, size_t n)
{
	uint64_t max = c->body_kind == WEBBODY_RESULT ? WEBXFER_RESULT_MAX : WEBHTTP_MAX_BYTES;

	if (c->body_total + n > max) {
		webconn_count_reject(c->srv, WEBREJECT_TOO_LARGE);
		webreply_error(c, 413, c->body_kind == WEBBODY_RESULT
					       ? "a result is at most 4096 bytes"
					       : "an upload is at most 1073741824 bytes");
		return -1;
	}
	if (c->body_kind == WEBBODY_RESULT)
		evbuffer_remove_buffer(in, c->result, n);
	else
		evbuffer_drain(in, n);
	c->body_total += n;
	atomic_fetch_add(&c->srv->counters.web_bytes_up, n);
	return 0;
}

/* The whole body is in: answer. */
static void webxfer_body_done(struct webconn *c)
{
	if (c->body_kind == WEBBODY_RESULT) {
		c->body_whole = 1; /* the caller answers it (server/webpost.h) */
		return;
	}
	webreply_head(c, 200, "text/plain; charset=utf-8", 0, c->keep_alive);
	webconn_finish(c, c->keep_alive);
}

/* One CRLF-terminated line of at most max bytes at the start of in, copied to buf (NUL
 * terminated, without CRLF): its length, -2 while incomplete, -1 when too long or bad. */
static int webxfer_line(struct evbuffer *in, char *buf, size_t max)
{
	size_t eol_len = 0;
	struct evbuffer_ptr p = evbuffer_search_eol(in, NULL, &eol_len, EVBUFFER_EOL_CRLF_STRICT);

	if (p.pos < 0)
		return evbuffer_get_length(in) > max + 1 ? -1 : -2;
	if ((size_t)p.pos > max)
		return -1;
	evbuffer_remove(in, buf, (size_t)p.pos);
	buf[p.pos] = '\0';
	evbuffer_drain(in, eol_len);
	return (int)p.pos;
}

/* A chunk-size line: hex digits, then maybe ";extensions". 0 or -1. */
static int webxfer_chunk_size(const char *line, uint64_t *size)
{
	uint64_t v = 0;
	int digits = 0;

	for (; *line && *line != ';'; line++, digits++) {
		int d = (*line >= '0' && *line <= '9')	 ? *line - '0'
			: (*line >= 'a' && *line <= 'f') ? *line - 'a' + 10
			: (*line >= 'A' && *line <= 'F') ? *line - 'A' + 10
							 : -1;

		if (d < 0 || digits >= 8)
			return -1;
		v = v * 16 + (uint64_t)d;
	}
	if (digits == 0)
		return -1;
	*size = v;
	return 0;
}

/* One step of chunked framing: 1 progressed, 0 needs more, -1 refused. */
static int webxfer_chunk_step(struct webconn *c, struct evbuffer *in)
{
	char line[WEBXFER_TRAILER_LINE + 1];
	int n;

	switch (c->chunk_state) {
	case CHUNK_SIZE:
		n = webxfer_line(in, line, WEBXFER_CHUNK_LINE);
		if (n == -2)
			return 0;
		if (n < 0 || webxfer_chunk_size(line, &c->body_left) < 0)
			break;
		c->chunk_state = c->body_left == 0 ? CHUNK_TRAILER : CHUNK_DATA;
		return 1;
	case CHUNK_DATA: {
		size_t avail = evbuffer_get_length(in);
		size_t take = avail < c->body_left ? avail : (size_t)c->body_left;

		if (take == 0)
			return 0;
		if (webxfer_consume(c, in, take) < 0)
			return -1;
		c->body_left -= take;
		if (c->body_left == 0)
			c->chunk_state = CHUNK_DATA_END;
		return 1;
	}
	case CHUNK_DATA_END:
		n = webxfer_line(in, line, 0);
		if (n == -2)
			return 0;
		if (n != 0)
			break;
		c->chunk_state = CHUNK_SIZE;
		return 1;
	case CHUNK_TRAILER:
		n = webxfer_line(in, line, WEBXFER_TRAILER_LINE);
		if (n == -2)
			return 0;
		if (n < 0)
			break;
		if (n == 0)
			webxfer_body_done(c);
		else if ((c->body_total += (uint64_t)n) > WEBHTTP_MAX_BYTES)
			break; /* trailer lines count against the bound too */
		return 1;
	}
	webconn_count_reject(c->srv, WEBREJECT_BAD_REQUEST);
	webreply_error(c, 400, "malformed chunked body");
	return -1;
}

int webxfer_body(struct webconn *c, struct evbuffer *in)
{
	while (c->state == WEBCONN_BODY && !c->body_whole) {
		if (c->chunked) {
			int r = webxfer_chunk_step(c, in);

			if (r < 0)
				return WEBXFER_ANSWERED;
			if (r == 0)
				return WEBXFER_MORE;
			continue;
		}
		if (c->body_left > 0) {
			size_t avail = evbuffer_get_length(in);
			size_t take = avail < c->body_left ? avail : (size_t)c->body_left;

			if (take == 0)
				return WEBXFER_MORE;
			if (webxfer_consume(c, in, take) < 0)
				return WEBXFER_ANSWERED;
			c->body_left -= take;
		}
		if (c->body_left == 0)
			webxfer_body_done(c);
	}
	return c->body_whole ? WEBXFER_RESULT : WEBXFER_ANSWERED;
}

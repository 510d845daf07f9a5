/* record: header codec, streaming parser and the sender's iovec planner for the framed bulk
 * data connections. The parser is the fuzz target (tests/fuzz/fuzz_record.c). */
#include "common/record.h"

#include <string.h>

#include "common/bytes.h"

void record_encode(const struct record_hdr *h, uint8_t out[RECORD_HDR_LEN])
{
	uint64_t ts = (uint64_t)h->ts_ns;

	out[0] = h->type;
	out[1] = 0;
	bytes_put_be16(out + 2, h->len);
	bytes_put_be32(out + 4, h->seq);
	bytes_put_be32(out + 8, (uint32_t)(ts >> 32));
	bytes_put_be32(out + 12, (uint32_t)ts);
}

/* Is type allowed on stream, and does it carry a payload there? */
static int record_type_ok(enum record_stream stream, uint8_t type, int *bulk)
{
	*bulk = stream == RECORD_STREAM_DOWN || stream == RECORD_STREAM_UP;
	switch (stream) {
	case RECORD_STREAM_DOWN:
		return type == RECORD_DATA || type == RECORD_ECHO;
	case RECORD_STREAM_UP:
		return type == RECORD_DATA || type == RECORD_PROBE;
	case RECORD_STREAM_REQUESTS:
		return type == RECORD_REQUEST;
	case RECORD_STREAM_RESPONSES:
		return type == RECORD_RESPONSE;
	}
	return 0;
}

int record_decode(const uint8_t *buf, size_t len, enum record_stream stream, struct record_hdr *h)
{
	int bulk;

	if (len < RECORD_HDR_LEN || !record_type_ok(stream, buf[0], &bulk) || buf[1] != 0)
		return -1;
	h->type = buf[0];
	h->len = bytes_be16(buf + 2);
	h->seq = bytes_be32(buf + 4);
	h->ts_ns = (int64_t)((uint64_t)bytes_be32(buf + 8) << 32 | bytes_be32(buf + 12));
	if (bulk != (h->len > 0))
		return -1;
	if (h->type == RECORD_DATA && (h->seq != 0 || h->ts_ns != 0))
		return -1;
	return 0;
}

void record_parser_init(struct record_parser *p, enum record_stream stream)
{
	memset(p, 0, sizeof(*p));
	p->stream = stream;
}

long record_parse(struct record_parser *p, const uint8_t *buf, size_t len, struct record_hdr *h,
		  int *got)
{
	size_t used, k;

	*got = 0;
	if (p->bad)
		return -1;
	used = p->skip < len ? p->skip : len;
	p->skip -= (uint32_t)used;
	if (used == len)
		return (long)used;
	k = RECORD_HDR_LEN - p->have;
	if (k > len - used)
		k = len - used;
	memcpy(p->hdr + p->have, buf + used, k);
	p->have = (uint8_t)(p->have + k);
	used += k;
	if (p->have < RECORD_HDR_LEN)
		return (long)used;
	p->have = 0;
	if (record_decode(p->hdr, RECORD_HDR_LEN, p->stream, h) < 0) {
		p->bad = 1;
		return -1;
	}
	p->skip = h->len;
	*got = 1;
	return (long)used;
}

void record_writer_init(struct record_writer *w, uint8_t tag_type, const uint8_t *payload,
			size_t payload_len)
{
	memset(w, 0, sizeof(*w));
	w->payload = payload;
	w->payload_len = payload_len;
	w->tag_type = tag_type;
	record_writer_set_size(w, RECORD_SIZE_MAX);
}

void record_writer_set_size(struct record_writer *w, size_t size)
{
	size_t max = w->payload_len < RECORD_PAYLOAD_MAX ? w->payload_len : RECORD_PAYLOAD_MAX;

	if (size < RECORD_HDR_LEN + 1)
		size = RECORD_HDR_LEN + 1;
	if (size > RECORD_HDR_LEN + max)
		size = RECORD_HDR_LEN + max;
	w->size = (uint32_t)size;
}

void record_writer_tag(struct record_writer *w, uint32_t seq, int64_t ts_ns)
{
	w->tagged = 1;
	w->tag_seq = seq;
	w->tag_ts = ts_ns;
}

void record_writer_untag(struct record_writer *w)
{
	w->tagged = 0;
}

/* Where a record of plen payload bytes starting at or after poff takes its payload: the
 * offset rotates through the whole buffer so the stream does not repeat every record. */
static uint32_t record_poff(const struct record_writer *w, uint32_t poff, uint32_t plen)
{
	return (size_t)poff + plen <= w->payload_len ? poff : 0;
}

size_t record_writer_iov(struct record_writer *w, struct iovec *iov, size_t max_iov,
			 size_t max_bytes)
{
	struct record_hdr h = { .type = RECORD_DATA, .len = (uint16_t)(w->size - RECORD_HDR_LEN) };
	uint32_t plen = h.len, poff = w->poff;
	size_t n = 0, total = 0;
	int first = 1;

	if (w->off > 0 && w->off < RECORD_HDR_LEN && max_iov >= 1) {
		iov[n++] = (struct iovec){ w->cur + w->off, RECORD_HDR_LEN - w->off };
		total += RECORD_HDR_LEN - w->off;
	}
	if (w->off > 0 && n < max_iov) {
		uint32_t skip = w->off > RECORD_HDR_LEN ? w->off - RECORD_HDR_LEN : 0;

		iov[n++] = (struct iovec){ (void *)(w->payload + w->cur_poff + skip),
					   w->cur_total - RECORD_HDR_LEN - skip };
		total += w->cur_total - RECORD_HDR_LEN - skip;
	}
	record_encode(&h, w->data_hdr);
	if (w->tagged) {
		h.type = w->tag_type;
		h.seq = w->tag_seq;
		h.ts_ns = w->tag_ts;
		record_encode(&h, w->tag_hdr);
	}
	while (n + 2 <= max_iov && (total == 0 || total + w->size <= max_bytes)) {
		poff = record_poff(w, poff, plen);
		iov[n++] = (struct iovec){ first && w->tagged ? w->tag_hdr : w->data_hdr,
					   RECORD_HDR_LEN };
		iov[n++] = (struct iovec){ (void *)(w->payload + poff), plen };
		total += w->size;
		poff += plen;
		first = 0;
	}
	return n;
}

int record_writer_sent(struct record_writer *w, size_t n)
{
	uint32_t plen = w->size - RECORD_HDR_LEN;
	int consumed = 0;

	if (w->off > 0) {
		size_t left = w->cur_total - w->off;

		if (n < left) {
			w->off += (uint32_t)n;
			return 0;
		}
		n -= left;
		w->off = 0;
	}
	while (n > 0) {
		/* A new record begins: freeze its header as planned. */
		if (w->tagged) {
			memcpy(w->cur, w->tag_hdr, RECORD_HDR_LEN);
			w->tagged = 0;
			consumed = 1;
		} else {
			memcpy(w->cur, w->data_hdr, RECORD_HDR_LEN);
		}
		w->cur_poff = record_poff(w, w->poff, plen);
		w->poff = w->cur_poff + plen;
		w->cur_total = w->size;
		if (n < w->size) {
			w->off = (uint32_t)n;
			n = 0;
		} else {
			n -= w->size;
		}
	}
	return consumed;
}

size_t record_writer_copy(struct record_writer *w, uint8_t *buf, size_t cap)
{
	/* The most iovecs RECORD_COPY_MAX bytes of the smallest records need (two each), plus
	 * the rest of a record in progress. */
	struct iovec iov[2 * (RECORD_COPY_MAX / RECORD_SIZE_MIN) + 4];
	size_t k, len = 0;

	if (cap > RECORD_COPY_MAX)
		cap = RECORD_COPY_MAX;
	k = record_writer_iov(w, iov, sizeof(iov) / sizeof(iov[0]), cap);
	for (size_t i = 0; i < k && len < cap; i++) {
		size_t c = iov[i].iov_len < cap - len ? iov[i].iov_len : cap - len;

		memcpy(buf + len, iov[i].iov_base, c);
		len += c;
	}
	(void)record_writer_sent(w, len);
	return len;
}

size_t record_size_for_rate(uint64_t bytes_per_s)
{
	uint64_t size = bytes_per_s / 1000;

	if (size < RECORD_SIZE_MIN)
		return RECORD_SIZE_MIN;
	return size > RECORD_SIZE_MAX ? RECORD_SIZE_MAX : (size_t)size;
}

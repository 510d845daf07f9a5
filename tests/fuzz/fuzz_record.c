/* fuzz_record: hostile record streams through the streaming parser (any chunking gives the
 * same headers and the same verdict, never a read past the input), and hostile operation
 * sequences through the sender's planner (its output always parses, every tag exactly once).
 * Input: byte 0 picks the stream kind and chunk size; the rest is the stream, and also read
 * as writer operations. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_OUT_CAP (512 * 1024)

struct fuzz_events {
	struct record_hdr *h;
	size_t n;
	int bad;
};

/* Feeds len bytes in chunks of step; collects header events until the stream turns bad. */
static void fuzz_record_feed(enum record_stream kind, const uint8_t *buf, size_t len, size_t step,
			     struct fuzz_events *ev)
{
	struct record_parser p;
	size_t pos = 0;

	record_parser_init(&p, kind);
	ev->n = 0;
	ev->bad = 0;
	while (pos < len && !ev->bad) {
		size_t chunk = step < len - pos ? step : len - pos;

		while (chunk > 0) {
			struct record_hdr h;
			int got;
			long k = record_parse(&p, buf + pos, chunk, &h, &got);

			if (k < 0) {
				ev->bad = 1;
				if (record_parse(&p, buf, len, &h, &got) != -1 || got)
					abort(); /* bad stays bad */
				break;
			}
			if (k == 0 || (size_t)k > chunk)
				abort(); /* always progress, never past the chunk */
			pos += (size_t)k;
			chunk -= (size_t)k;
			if (got) {
				uint8_t re[RECORD_HDR_LEN];

				record_encode(&h, re);
				if (memcmp(re, buf + pos - RECORD_HDR_LEN, RECORD_HDR_LEN) != 0)
					abort(); /* a header decodes only from its exact bytes */
				ev->h[ev->n++] = h;
			}
		}
	}
}

static void fuzz_record_parse(const uint8_t *data, size_t size)
{
	enum record_stream kind = (enum record_stream)(data[0] & 3);
	size_t step = 1 + (size_t)(data[0] >> 2) % 23;
	struct fuzz_events a, b;

	a.h = malloc((size / RECORD_HDR_LEN + 1) * sizeof(*a.h));
	b.h = malloc((size / RECORD_HDR_LEN + 1) * sizeof(*b.h));
	if (a.h == NULL || b.h == NULL)
		abort();
	fuzz_record_feed(kind, data + 1, size - 1, size, &a);
	fuzz_record_feed(kind, data + 1, size - 1, step, &b);
	if (a.n != b.n || a.bad != b.bad || memcmp(a.h, b.h, a.n * sizeof(*a.h)) != 0)
		abort();
	free(a.h);
	free(b.h);
}

/* Runs the input as writer operations, then parses what was "sent". */
static void fuzz_record_writer(const uint8_t *data, size_t size)
{
	static uint8_t payload[RECORD_SIZE_MAX];
	uint8_t *out = malloc(FUZZ_OUT_CAP);
	struct record_writer w;
	struct fuzz_events ev;
	size_t len = 0, echoes = 0;
	int tags = 0;

	if (out == NULL)
		abort();
	record_writer_init(&w, RECORD_ECHO, payload, sizeof(payload));
	for (size_t i = 0; i < size; i++) {
		struct iovec iov[8];
		size_t n, want = (size_t)data[i] * 61, sent = 0;

		switch (data[i] & 3) {
		case 0:
			record_writer_tag(&w, (uint32_t)i, -(int64_t)i);
			continue;
		case 1:
			record_writer_set_size(&w, (size_t)data[i] * 293);
			continue;
		default:
			break;
		}
		if (i + 1 == size && w.off > 0)
			want = w.cur_total - w.off; /* end on a record boundary */
		n = record_writer_iov(&w, iov, 3 + data[i] % 6, (size_t)data[i] * 1024);
		for (size_t k = 0; k < n && sent < want && len < FUZZ_OUT_CAP; k++) {
			size_t c = iov[k].iov_len;

			if (c > want - sent)
				c = want - sent;
			if (c > FUZZ_OUT_CAP - len)
				c = FUZZ_OUT_CAP - len;
			memcpy(out + len, iov[k].iov_base, c);
			len += c;
			sent += c;
		}
		tags += record_writer_sent(&w, sent);
	}
	ev.h = malloc((len / RECORD_HDR_LEN + 1) * sizeof(*ev.h));
	if (ev.h == NULL)
		abort();
	fuzz_record_feed(RECORD_STREAM_DOWN, out, len, 4096, &ev);
	if (ev.bad)
		abort();
	for (size_t k = 0; k < ev.n; k++)
		echoes += ev.h[k].type == RECORD_ECHO;
	/* the last tag may sit in a header cut off mid-way */
	if (echoes != (size_t)tags && echoes + 1 != (size_t)tags)
		abort();
	free(ev.h);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	fuzz_record_parse(data, size);
	fuzz_record_writer(data, size);
	return 0;
}

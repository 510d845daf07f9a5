/* test_record: the record header codec, the streaming parser under every chunking, and the
 * sender's planner under partial sends (headers frozen once begun, tags in the next record). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/record.h"

#define PAYLOAD_LEN (64 * 1024)
#define STREAM_CAP (1024 * 1024)

static uint8_t payload[PAYLOAD_LEN];

static int setup_payload(void **state)
{
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + (i >> 8));
	return 0;
}

/* ---- codec ---- */

static void test_round_trip(void **state)
{
	const struct {
		enum record_stream stream;
		struct record_hdr h;
	} ok[] = {
		{ RECORD_STREAM_DOWN, { RECORD_DATA, 16368, 0, 0 } },
		{ RECORD_STREAM_DOWN, { RECORD_ECHO, 1, 0xfedcba98u, INT64_MIN } },
		{ RECORD_STREAM_UP, { RECORD_DATA, 65535, 0, 0 } },
		{ RECORD_STREAM_UP, { RECORD_PROBE, 4080, 7, INT64_MAX } },
		{ RECORD_STREAM_REQUESTS, { RECORD_REQUEST, 0, 1, -1 } },
		{ RECORD_STREAM_RESPONSES, { RECORD_RESPONSE, 0, UINT32_MAX, 123456789 } },
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint8_t buf[RECORD_HDR_LEN];
		struct record_hdr out;

		record_encode(&ok[i].h, buf);
		assert_int_equal(buf[0], ok[i].h.type);
		assert_int_equal(buf[1], 0);
		assert_int_equal(record_decode(buf, sizeof(buf), ok[i].stream, &out), 0);
		assert_int_equal(out.type, ok[i].h.type);
		assert_int_equal(out.len, ok[i].h.len);
		assert_int_equal(out.seq, ok[i].h.seq);
		assert_true(out.ts_ns == ok[i].h.ts_ns);
		/* every type belongs to exactly one stream (DATA to both bulk streams) */
		for (int s = RECORD_STREAM_DOWN; s <= RECORD_STREAM_RESPONSES; s++) {
			int fits = s == (int)ok[i].stream ||
				   (ok[i].h.type == RECORD_DATA &&
				    (s == RECORD_STREAM_DOWN || s == RECORD_STREAM_UP));

			assert_int_equal(record_decode(buf, sizeof(buf), (enum record_stream)s, &out),
					 fits ? 0 : -1);
		}
		/* never reads past a short buffer */
		assert_int_equal(record_decode(buf, RECORD_HDR_LEN - 1, ok[i].stream, &out), -1);
	}
}

static void test_decode_rejects(void **state)
{
	struct record_hdr h = { RECORD_DATA, 100, 0, 0 }, out;
	uint8_t buf[RECORD_HDR_LEN];

	record_encode(&h, buf);
	buf[1] = 1; /* reserved */
	assert_int_equal(record_decode(buf, sizeof(buf), RECORD_STREAM_DOWN, &out), -1);
	h.seq = 1; /* plain data carries no tag */
	record_encode(&h, buf);
	assert_int_equal(record_decode(buf, sizeof(buf), RECORD_STREAM_DOWN, &out), -1);
	h = (struct record_hdr){ RECORD_DATA, 0, 0, 1 };
	record_encode(&h, buf);
	assert_int_equal(record_decode(buf, sizeof(buf), RECORD_STREAM_UP, &out), -1);
	h = (struct record_hdr){ RECORD_ECHO, 0, 1, 1 }; /* bulk records have a payload */
	record_encode(&h, buf);
	assert_int_equal(record_decode(buf, sizeof(buf), RECORD_STREAM_DOWN, &out), -1);
	h = (struct record_hdr){ RECORD_REQUEST, 16, 1, 1 }; /* messages do not */
	record_encode(&h, buf);
	assert_int_equal(record_decode(buf, sizeof(buf), RECORD_STREAM_REQUESTS, &out), -1);
	memset(buf, 0, sizeof(buf));
	assert_int_equal(record_decode(buf, sizeof(buf), RECORD_STREAM_DOWN, &out), -1);
	memcpy(buf, "BMD1", 4); /* an old, unframed peer's bytes */
	assert_int_equal(record_decode(buf, sizeof(buf), RECORD_STREAM_UP, &out), -1);
}

static void test_size_for_rate(void **state)
{
	assert_int_equal(record_size_for_rate(0), RECORD_SIZE_MIN);
	assert_int_equal(record_size_for_rate(2500000), RECORD_SIZE_MIN);  /* 20 Mbit/s */
	assert_int_equal(record_size_for_rate(10000000), 10000);           /* 80 Mbit/s */
	assert_int_equal(record_size_for_rate(UINT64_MAX), RECORD_SIZE_MAX);
}

/* ---- writer + parser ---- */

/* One send: plans with at most max_iov iovecs, "sends" at most maxsend bytes of it into out,
 * accounts them. Returns the bytes sent; *tag_begun from record_writer_sent. */
static size_t emit(struct record_writer *w, uint8_t *out, size_t maxsend, size_t max_iov,
		   int *tag_begun)
{
	struct iovec iov[64];
	size_t n = record_writer_iov(w, iov, max_iov, 256 * 1024), sent = 0;

	assert_true(n > 0 && n <= max_iov);
	for (size_t i = 0; i < n && sent < maxsend; i++) {
		size_t k = iov[i].iov_len < maxsend - sent ? iov[i].iov_len : maxsend - sent;

		memcpy(out + sent, iov[i].iov_base, k);
		sent += k;
	}
	*tag_begun = record_writer_sent(w, sent);
	return sent;
}

struct parsed {
	struct record_hdr *h;
	size_t *off; /* stream offset of each header */
	size_t n, cap;
};

static void parsed_alloc(struct parsed *ps, size_t cap)
{
	ps->h = calloc(cap, sizeof(*ps->h));
	ps->off = calloc(cap, sizeof(*ps->off));
	ps->cap = cap;
	ps->n = 0;
	assert_non_null(ps->h);
	assert_non_null(ps->off);
}

static void parsed_free(struct parsed *ps)
{
	free(ps->h);
	free(ps->off);
}

/* Parses stream in chunks of 1..maxchunk bytes (pseudo-random); asserts it is valid. */
static void parse_chunked(const uint8_t *stream, size_t len, enum record_stream kind,
			  size_t maxchunk, unsigned seed, struct parsed *out)
{
	struct record_parser p;
	size_t pos = 0;

	record_parser_init(&p, kind);
	out->n = 0;
	while (pos < len) {
		size_t chunk = 1 + (size_t)(rand_r(&seed) % maxchunk), left;

		if (chunk > len - pos)
			chunk = len - pos;
		left = chunk;
		while (left > 0) {
			struct record_hdr h;
			int got;
			long k = record_parse(&p, stream + pos, left, &h, &got);

			assert_true(k > 0 && (size_t)k <= left);
			pos += (size_t)k;
			left -= (size_t)k;
			if (got) {
				assert_true(out->n < out->cap);
				out->off[out->n] = pos - RECORD_HDR_LEN;
				out->h[out->n++] = h;
			}
		}
	}
	assert_int_equal(p.have, 0);
	assert_int_equal(p.skip, 0);
}

/* Payload bytes of every record are the shared buffer's, at an offset rotating through it. */
static void check_payloads(const uint8_t *stream, const struct parsed *ps)
{
	size_t poff = 0;

	for (size_t i = 0; i < ps->n; i++) {
		size_t plen = ps->h[i].len;

		if (poff + plen > PAYLOAD_LEN)
			poff = 0;
		assert_memory_equal(stream + ps->off[i] + RECORD_HDR_LEN, payload + poff, plen);
		poff += plen;
	}
}

static void test_stream_partial_sends(void **state)
{
	uint8_t *stream = malloc(STREAM_CAP);
	const size_t sizes[] = { 17, 1000, RECORD_SIZE_MIN, RECORD_SIZE_MAX, 40000 };

	assert_non_null(stream);
	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		struct record_writer w;
		struct parsed ps, one;
		unsigned seed = (unsigned)si + 1;
		size_t len = 0;
		int tags = 0, begun, echoes = 0;

		record_writer_init(&w, RECORD_ECHO, payload, sizeof(payload));
		record_writer_set_size(&w, sizes[si]);
		while (len < STREAM_CAP - 400000) {
			size_t maxsend = (size_t)(rand_r(&seed) % 50000);

			if (rand_r(&seed) % 5 == 0 && !w.tagged)
				record_writer_tag(&w, (uint32_t)tags, 1000 + tags);
			len += emit(&w, stream + len, maxsend, 3 + (size_t)(rand_r(&seed) % 40),
				    &begun);
			tags += begun;
		}
		if (w.off > 0) { /* finish the record in progress */
			len += emit(&w, stream + len, w.cur_total - w.off, 4, &begun);
			assert_int_equal(begun, 0);
		}
		assert_int_equal(w.off, 0);
		parsed_alloc(&ps, len / RECORD_HDR_LEN + 1);
		parsed_alloc(&one, len / RECORD_HDR_LEN + 1);
		parse_chunked(stream, len, RECORD_STREAM_DOWN, 70000, seed, &ps);
		/* the same stream fed one byte at a time gives the same headers */
		parse_chunked(stream, len, RECORD_STREAM_DOWN, 1, seed, &one);
		assert_int_equal(one.n, ps.n);
		assert_memory_equal(one.off, ps.off, ps.n * sizeof(ps.off[0]));
		assert_true(ps.n > 10);
		for (size_t i = 0; i < ps.n; i++) {
			assert_int_equal(ps.h[i].len, w.size - RECORD_HDR_LEN);
			if (ps.h[i].type == RECORD_ECHO) {
				/* tags come out once each, in order */
				assert_int_equal(ps.h[i].seq, (uint32_t)echoes);
				assert_true(ps.h[i].ts_ns == 1000 + echoes);
				echoes++;
			}
		}
		assert_int_equal(echoes, tags);
		assert_true(tags > 0);
		check_payloads(stream, &ps);
		parsed_free(&ps);
		parsed_free(&one);
	}
	free(stream);
}

/* record_writer_copy (the TLS senders' path): copies of random sizes, some larger than
 * RECORD_COPY_MAX, make a valid stream with every tag once and in order; no copy exceeds
 * RECORD_COPY_MAX. */
static void test_stream_copy(void **state)
{
	uint8_t *stream = malloc(STREAM_CAP);
	const size_t sizes[] = { 17, RECORD_SIZE_MIN, RECORD_SIZE_MAX, 40000 };

	assert_non_null(stream);
	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		struct record_writer w;
		struct parsed ps;
		unsigned seed = (unsigned)si + 7;
		size_t len = 0;
		int tags = 0, echoes = 0;

		record_writer_init(&w, RECORD_ECHO, payload, sizeof(payload));
		record_writer_set_size(&w, sizes[si]);
		while (len < STREAM_CAP - 400000 || w.off > 0) {
			size_t cap = 1 + (size_t)(rand_r(&seed) % 20000), n;

			if (rand_r(&seed) % 5 == 0 && !w.tagged) {
				record_writer_tag(&w, (uint32_t)tags, 1000 + tags);
				tags++;
			}
			n = record_writer_copy(&w, stream + len, cap);
			assert_true(n > 0 && n <= cap && n <= RECORD_COPY_MAX);
			len += n;
		}
		parsed_alloc(&ps, len / RECORD_HDR_LEN + 1);
		parse_chunked(stream, len, RECORD_STREAM_DOWN, 70000, seed, &ps);
		assert_true(ps.n > 10);
		for (size_t i = 0; i < ps.n; i++)
			if (ps.h[i].type == RECORD_ECHO) {
				assert_int_equal(ps.h[i].seq, (uint32_t)echoes);
				echoes++;
			}
		assert_int_equal(echoes, tags - w.tagged);
		check_payloads(stream, &ps);
		parsed_free(&ps);
	}
	free(stream);
}

/* A tag set while a header is half sent waits for the next record: the begun header is
 * frozen. */
static void test_header_frozen(void **state)
{
	uint8_t out[3 * RECORD_SIZE_MIN];
	struct record_writer w;
	struct parsed ps;
	size_t len = 0;
	int begun;

	parsed_alloc(&ps, 8);
	record_writer_init(&w, RECORD_PROBE, payload, sizeof(payload));
	record_writer_set_size(&w, RECORD_SIZE_MIN);
	len += emit(&w, out, 5, 8, &begun); /* 5 bytes of a DATA header */
	assert_int_equal(begun, 0);
	record_writer_tag(&w, 42, -42);
	len += emit(&w, out + len, RECORD_SIZE_MIN - 5 + 3, 8, &begun); /* next header begins */
	assert_int_equal(begun, 1);
	assert_int_equal(w.tagged, 0);
	len += emit(&w, out + len, sizeof(out) - len, 8, &begun);
	parse_chunked(out, len, RECORD_STREAM_UP, 7, 1, &ps);
	assert_true(ps.n >= 2);
	assert_int_equal(ps.h[0].type, RECORD_DATA);
	assert_int_equal(ps.h[1].type, RECORD_PROBE);
	assert_int_equal(ps.h[1].seq, 42);
	assert_true(ps.h[1].ts_ns == -42);
	for (size_t i = 2; i < ps.n; i++)
		assert_int_equal(ps.h[i].type, RECORD_DATA);
	parsed_free(&ps);
}

/* A send that takes nothing consumes no tag; an untagged tag never appears. */
static void test_tag_needs_bytes(void **state)
{
	uint8_t out[RECORD_SIZE_MIN];
	struct record_writer w;
	int begun;

	record_writer_init(&w, RECORD_PROBE, payload, sizeof(payload));
	record_writer_tag(&w, 1, 1);
	assert_int_equal(emit(&w, out, 0, 4, &begun), 0);
	assert_int_equal(begun, 0);
	assert_int_equal(w.tagged, 1);
	record_writer_untag(&w);
	emit(&w, out, sizeof(out), 4, &begun);
	assert_int_equal(begun, 0);
	assert_int_equal(out[0], RECORD_DATA);
}

static void test_parser_bad_is_sticky(void **state)
{
	struct record_hdr h = { RECORD_REQUEST, 0, 9, 9 };
	uint8_t buf[2 * RECORD_HDR_LEN];
	struct record_parser p;
	int got;

	record_encode(&h, buf);
	record_encode(&h, buf + RECORD_HDR_LEN);
	buf[RECORD_HDR_LEN] = 'X';
	record_parser_init(&p, RECORD_STREAM_REQUESTS);
	assert_int_equal(record_parse(&p, buf, sizeof(buf), &h, &got), RECORD_HDR_LEN);
	assert_int_equal(got, 1);
	assert_int_equal(h.seq, 9);
	assert_int_equal(record_parse(&p, buf + RECORD_HDR_LEN, RECORD_HDR_LEN, &h, &got), -1);
	assert_int_equal(got, 0);
	/* a good header afterwards does not bring it back */
	assert_int_equal(record_parse(&p, buf, RECORD_HDR_LEN, &h, &got), -1);
	assert_int_equal(record_parse(&p, buf, 0, &h, &got), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_decode_rejects),
		cmocka_unit_test(test_size_for_rate),
		cmocka_unit_test(test_stream_partial_sends),
		cmocka_unit_test(test_stream_copy),
		cmocka_unit_test(test_header_frozen),
		cmocka_unit_test(test_tag_needs_bytes),
		cmocka_unit_test(test_parser_bad_is_sticky),
	};

	return cmocka_run_group_tests(tests, setup_payload, NULL);
}

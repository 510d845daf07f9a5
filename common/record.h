/* record: the framing of bulk data connections after the hello, so that a small request can
 * ride a loaded connection (the responsiveness draft's in-flow probe). The bulk direction is a
 * sequence of records (16-byte header + payload); the reverse direction carries 16-byte
 * messages. Pure code: a streaming parser and a sender's iovec planner, no sockets. */
#ifndef BM_RECORD_H
#define BM_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define RECORD_HDR_LEN 16
#define RECORD_PAYLOAD_MAX 65535 /* the length field is 16 bits */
#define RECORD_SIZE_MIN 4096     /* header + payload, what senders choose between */
#define RECORD_SIZE_MAX 16384    /* HTTP/2's default maximum frame size */

/* Header: type(1) reserved(1, zero) payload_len(2) seq(4) ts(8), big-endian. */
enum record_type {
	RECORD_DATA = 'D',     /* bulk payload; seq and ts zero */
	RECORD_ECHO = 'E',     /* download (server → client) payload carrying an echoed REQUEST */
	RECORD_PROBE = 'P',    /* upload (client → server) payload carrying a request */
	RECORD_REQUEST = 'Q',  /* client → server on a download connection; no payload */
	RECORD_RESPONSE = 'R', /* server → client on an upload connection; no payload */
};

/* What one byte stream may carry; a header of another type means the stream is corrupt. */
enum record_stream {
	RECORD_STREAM_DOWN,      /* server → client bulk: DATA, ECHO */
	RECORD_STREAM_UP,        /* client → server bulk: DATA, PROBE */
	RECORD_STREAM_REQUESTS,  /* client → server on a download connection: REQUEST */
	RECORD_STREAM_RESPONSES, /* server → client on an upload connection: RESPONSE */
};

struct record_hdr {
	uint8_t type;   /* enum record_type */
	uint16_t len;   /* payload bytes that follow the header */
	uint32_t seq;   /* the requester's sequence number, echoed verbatim */
	int64_t ts_ns;  /* the requester's CLOCK_MONOTONIC send time, echoed verbatim */
};

void record_encode(const struct record_hdr *h, uint8_t out[RECORD_HDR_LEN]);
/* Decodes and checks one header for a stream: 0, or -1 if its type does not belong on that
 * stream, the reserved byte is set, a bulk record has no payload, a message has one, or a
 * DATA record carries a seq or ts. */
int record_decode(const uint8_t *buf, size_t len, enum record_stream stream,
		  struct record_hdr *h) __attribute__((warn_unused_result));

/* Streaming parser: feed any chunking of a stream; it holds at most one partial header and
 * skips payload by arithmetic (never touches payload bytes). No resync: once a header is bad
 * the parser stays bad. */
struct record_parser {
	enum record_stream stream;
	uint8_t hdr[RECORD_HDR_LEN];
	uint8_t have;      /* bytes of hdr collected */
	uint32_t skip;     /* payload bytes still to skip */
	int bad;
};

void record_parser_init(struct record_parser *p, enum record_stream stream);
/* Consumes bytes from buf up to the end of the next complete header (or all of len). Returns
 * the bytes consumed and sets *got = 1 with *h when a header completed; -1 once the stream is
 * corrupt. Callers loop until len is used up. */
long record_parse(struct record_parser *p, const uint8_t *buf, size_t len, struct record_hdr *h,
		  int *got) __attribute__((warn_unused_result));

/* Sender side: plans iovecs over one shared payload buffer (no copies) and tracks partial
 * sends. The header of a record, once any byte of it was sent, is frozen; a tag (seq, ts)
 * goes into the next record that begins. */
struct record_writer {
	const uint8_t *payload;   /* shared, read-only */
	size_t payload_len;
	uint8_t tag_type;         /* RECORD_ECHO or RECORD_PROBE */
	uint32_t size;            /* header + payload of records begun from now on */
	/* the record in progress (off > 0) */
	uint8_t cur[RECORD_HDR_LEN];
	uint32_t off, cur_total, cur_poff;
	uint32_t poff;            /* payload offset of the next record (rotates through payload) */
	/* headers of records planned by the last record_writer_iov() */
	uint8_t tag_hdr[RECORD_HDR_LEN], data_hdr[RECORD_HDR_LEN];
	int tagged;               /* a tag waits for the next record */
	uint32_t tag_seq;
	int64_t tag_ts;
};

/* payload_len must be at least RECORD_SIZE_MAX - RECORD_HDR_LEN. */
void record_writer_init(struct record_writer *w, uint8_t tag_type, const uint8_t *payload,
			size_t payload_len);
/* Size (header + payload) of records begun from now on, clamped to what the header allows
 * and the payload buffer holds. */
void record_writer_set_size(struct record_writer *w, size_t size);
/* The next record begun carries seq/ts (replacing a tag still waiting). */
void record_writer_tag(struct record_writer *w, uint32_t seq, int64_t ts_ns);
void record_writer_untag(struct record_writer *w);
/* Plans the next send into at most max_iov iovecs: the rest of the record in progress, then
 * whole records while the total stays within max_bytes (at least one record when none is in
 * progress). Returns the iovec count, > 0 when max_iov >= 2. What the send took goes to
 * record_writer_sent() before the writer is changed in any other way. */
size_t record_writer_iov(struct record_writer *w, struct iovec *iov, size_t max_iov,
			 size_t max_bytes);
/* Accounts n bytes sent from the last plan. Returns 1 if the tag was begun (consumed). */
int record_writer_sent(struct record_writer *w, size_t n);
/* For senders that write one buffer, not iovecs (TLS): copies the next min(cap,
 * RECORD_COPY_MAX) or fewer stream bytes into buf and accounts them as sent — committed, as a
 * sendmsg commits them (a tag set from now on waits for the next record). Returns the count. */
#define RECORD_COPY_MAX (16 * 1024)
size_t record_writer_copy(struct record_writer *w, uint8_t *buf, size_t cap);

/* The record size a sender uses at a flow's delivery rate (bytes/s): about 1 ms of it,
 * within [RECORD_SIZE_MIN, RECORD_SIZE_MAX] — the wait a tag can add behind the record in
 * progress. */
size_t record_size_for_rate(uint64_t bytes_per_s);

#endif

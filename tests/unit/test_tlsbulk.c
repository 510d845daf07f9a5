/* test_tlsbulk: the non-blocking TLS helpers of the bulk flows (common/tls.h) over a local
 * socket pair with a throw-away certificate made in memory: the event-driven handshake steps,
 * writes and reads with WANT_* retries (a write retried with the same bytes), an EOF without
 * close_notify, what a connection reports (no kernel TLS on a Unix socket), and the server's
 * handshake on its raw socket (tls_server_new, tls_accept_step) — completed, and failed with a
 * reason on garbage or a close. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "common/record.h"
#include "common/tls.h"

#define MSG_LEN 3000
#define NMSG 3

struct pair {
	SSL_CTX *sctx, *cctx;
	SSL *s, *c;
	int sfd, cfd;
};

/* A self-signed P-256 certificate for CN=test, valid for a day. */
static void make_cert(SSL_CTX *ctx)
{
	EVP_PKEY *key = EVP_EC_gen("P-256");
	X509 *x = X509_new();
	X509_NAME *name;

	assert_non_null(key);
	assert_non_null(x);
	assert_int_equal(X509_set_version(x, 2), 1);
	assert_int_equal(ASN1_INTEGER_set(X509_get_serialNumber(x), 1), 1);
	assert_non_null(X509_gmtime_adj(X509_getm_notBefore(x), -60));
	assert_non_null(X509_gmtime_adj(X509_getm_notAfter(x), 86400));
	assert_int_equal(X509_set_pubkey(x, key), 1);
	name = X509_get_subject_name(x);
	assert_int_equal(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
						    (const unsigned char *)"test", -1, -1, 0), 1);
	assert_int_equal(X509_set_issuer_name(x, name), 1);
	assert_true(X509_sign(x, key, EVP_sha256()) > 0);
	assert_int_equal(SSL_CTX_use_certificate(ctx, x), 1);
	assert_int_equal(SSL_CTX_use_PrivateKey(ctx, key), 1);
	X509_free(x);
	EVP_PKEY_free(key);
}

/* Both ends' handshakes, stepped in turn as an event loop would, on non-blocking sockets. */
static void handshake(struct pair *p)
{
	char err[256];
	int sdone = 0, cdone = 0;

	for (int i = 0; i < 1000 && !(sdone && cdone); i++) {
		if (!cdone) {
			enum tls_io r = tls_connect_step(p->c, "test", err, sizeof(err));

			assert_int_not_equal(r, TLS_IO_ERROR);
			cdone = r == TLS_IO_OK;
		}
		if (!sdone) {
			const char *why = NULL;
			enum tls_io r = tls_accept_step(p->s, &why);

			assert_int_not_equal(r, TLS_IO_ERROR);
			assert_int_not_equal(r, TLS_IO_CLOSED);
			sdone = r == TLS_IO_OK;
		}
	}
	assert_true(sdone && cdone);
}

static int setup(void **state)
{
	struct pair *p = calloc(1, sizeof(*p));
	char err[256];
	int sv[2];

	assert_non_null(p);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	p->sfd = sv[0];
	p->cfd = sv[1];
	p->sctx = SSL_CTX_new(TLS_server_method());
	assert_non_null(p->sctx);
	SSL_CTX_set_num_tickets(p->sctx, 0);
	make_cert(p->sctx);
	p->cctx = tls_client_ctx(NULL, 1, err, sizeof(err));
	assert_non_null(p->cctx);
	tls_ctx_try_ktls(p->cctx);
	p->c = tls_client_new(p->cctx, p->cfd, "test", err, sizeof(err));
	assert_non_null(p->c);
	p->s = tls_server_new(p->sctx, p->sfd);
	assert_non_null(p->s);
	handshake(p);
	tls_bulk_tune(p->c);
	*state = p;
	return 0;
}

static int teardown(void **state)
{
	struct pair *p = *state;

	SSL_free(p->s);
	SSL_free(p->c);
	SSL_CTX_free(p->sctx);
	SSL_CTX_free(p->cctx);
	close(p->sfd);
	if (p->cfd >= 0)
		close(p->cfd);
	free(p);
	return 0;
}

static void fill(uint8_t *buf, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 31 + seed);
}

/* The client sends NMSG messages of MSG_LEN bytes, one TLS record each. */
static void send_msgs(struct pair *p, uint8_t *sent)
{
	fill(sent, NMSG * MSG_LEN, 7);
	for (int i = 0; i < NMSG; i++) {
		size_t n = 0;

		assert_int_equal(tls_write_nb(p->c, sent + i * MSG_LEN, MSG_LEN, &n), TLS_IO_OK);
		assert_int_equal(n, MSG_LEN);
	}
}

/* The server reads len bytes (no WANT_READ expected: they are all on their way). */
static void recv_all(SSL *s, uint8_t *got, size_t len)
{
	size_t off = 0;

	while (off < len) {
		size_t n = 0;

		assert_int_equal(tls_read_nb(s, got + off, len - off, &n), TLS_IO_OK);
		off += n;
	}
}

static void test_round_trip(void **state)
{
	struct pair *p = *state;
	static uint8_t sent[NMSG * MSG_LEN], got[NMSG * MSG_LEN];
	struct tls_conn_info ti;
	size_t n;

	send_msgs(p, sent);
	recv_all(p->s, got, sizeof(got));
	assert_memory_equal(sent, got, sizeof(got));
	/* Nothing more: the reader waits for readability. */
	assert_int_equal(tls_read_nb(p->s, got, sizeof(got), &n), TLS_IO_WANT_READ);
	tls_conn_info(p->c, &ti);
	assert_string_equal(ti.version, "TLSv1.3");
	assert_true(ti.cipher[0] != '\0');
	/* A Unix socket never has kernel TLS: the report must say so. */
	assert_int_equal(ti.ktls_send, 0);
	assert_int_equal(ti.ktls_recv, 0);
}

/* The server's handshake steps on a fresh socket whose peer sent bytes (then closed when
 * close_peer): the step that fails reports ERROR and a reason. */
static const char *accept_fails(const void *bytes, size_t len, int close_peer)
{
	struct pair *p = calloc(1, sizeof(*p));
	const char *why = NULL;
	enum tls_io r = TLS_IO_WANT_READ;
	int sv[2];

	assert_non_null(p);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	p->sctx = SSL_CTX_new(TLS_server_method());
	assert_non_null(p->sctx);
	make_cert(p->sctx);
	p->s = tls_server_new(p->sctx, sv[0]);
	assert_non_null(p->s);
	assert_int_equal(send(sv[1], bytes, len, 0), (ssize_t)len);
	if (close_peer)
		close(sv[1]);
	for (int i = 0; i < 10 && r != TLS_IO_ERROR; i++)
		r = tls_accept_step(p->s, &why);
	assert_int_equal(r, TLS_IO_ERROR);
	assert_non_null(why);
	SSL_free(p->s);
	SSL_CTX_free(p->sctx);
	close(sv[0]);
	if (!close_peer)
		close(sv[1]);
	free(p);
	return why;
}

/* A record header (handshake, TLS 1.0) then bytes that are no ClientHello. */
static void test_accept_garbage(void **state)
{
	static const uint8_t junk[] = { 0x16, 0x03, 0x01, 0x00, 0x08, 'n', 'o', 't', ' ',
					'h', 'e', 'l', 'o' };
	const char *why = accept_fails(junk, sizeof(junk), 0);

	assert_true(strlen(why) > 0);
	assert_string_not_equal(why, "connection closed");
}

/* The start of a record, then the peer is gone. */
static void test_accept_closed(void **state)
{
	static const uint8_t part[] = { 0x16, 0x03 };

	const char *why = accept_fails(part, sizeof(part), 1);

	/* OpenSSL 3 queues "unexpected eof while reading"; without a queued error, ours. */
	assert_true(strstr(why, "eof") != NULL || strcmp(why, "connection closed") == 0);
}

/* A full socket: WANT_WRITE, then the same bytes again once the peer read; nothing is lost or
 * doubled. */
static void test_write_retry(void **state)
{
	struct pair *p = *state;
	static uint8_t buf[16384], got[16384];
	size_t written = 0, read = 0, n;
	enum tls_io r;
	int blocked = 0;

	fill(buf, sizeof(buf), 3);
	for (int i = 0; i < 10000 && !blocked; i++) {
		r = tls_write_nb(p->c, buf, sizeof(buf), &n);
		if (r == TLS_IO_OK)
			written += n;
		else
			blocked = r == TLS_IO_WANT_WRITE;
	}
	assert_true(blocked);
	/* The peer drains; the retry with the same bytes completes the record. */
	for (int i = 0; i < 100000; i++) {
		if (tls_read_nb(p->s, got, sizeof(got), &n) == TLS_IO_OK) {
			assert_int_equal(got[0], buf[(read) % sizeof(buf)]);
			read += n;
		}
		if (blocked && (r = tls_write_nb(p->c, buf, sizeof(buf), &n)) != TLS_IO_WANT_WRITE) {
			assert_int_equal(r, TLS_IO_OK);
			written += n;
			blocked = 0;
		}
		if (!blocked && read == written)
			break;
	}
	assert_false(blocked);
	assert_int_equal(read, written);
}

/* Parses what the server end can read now; counts bytes, and the last seq of a tagged record
 * (a tag replaced before its record began is never sent, so seqs only rise). */
static void tx_drain(struct pair *p, struct record_parser *rp, size_t *read, uint32_t *last)
{
	static uint8_t got[65536];
	size_t n;

	while (tls_read_nb(p->s, got, sizeof(got), &n) == TLS_IO_OK) {
		*read += n;
		for (size_t off = 0; off < n;) {
			struct record_hdr h;
			int have = 0;
			long used = record_parse(rp, got + off, n - off, &h, &have);

			assert_true(used > 0);
			off += (size_t)used;
			if (have && h.type == RECORD_PROBE) {
				assert_true(h.seq > *last);
				*last = h.seq;
			}
		}
	}
}

/* A record stream through tls_tx_send against a socket that fills up: every WANT_WRITE is
 * retried with the same bytes, so the reader sees a valid stream, with every tag in order,
 * and exactly the bytes tls_tx_send said it moved. */
static void test_tx_stream(void **state)
{
	struct pair *p = *state;
	static uint8_t payload[RECORD_SIZE_MAX];
	struct record_writer w;
	struct record_parser rp;
	struct tls_tx tx;
	size_t moved, sent = 0, read = 0;
	uint32_t tagged = 0, seen = 0;
	int waits = 0;

	fill(payload, sizeof(payload), 5);
	record_writer_init(&w, RECORD_PROBE, payload, sizeof(payload));
	record_parser_init(&rp, RECORD_STREAM_UP);
	assert_int_equal(tls_tx_init(&tx), 0);
	for (int i = 0; i < 100000 && sent < 4 * 1024 * 1024; i++) {
		enum tls_io r;

		if (i % 7 == 0)
			record_writer_tag(&w, ++tagged, 1000 + i);
		r = tls_tx_send(p->c, &tx, &w, 256 * 1024, &moved);
		assert_true(r == TLS_IO_OK || r == TLS_IO_WANT_WRITE);
		waits += r == TLS_IO_WANT_WRITE;
		sent += moved;
		tx_drain(p, &rp, &read, &seen);
	}
	/* The rest: what tx still holds goes out as the reader makes room. */
	while (tx.off < tx.len) {
		assert_int_not_equal(tls_tx_send(p->c, &tx, &w, tx.len - tx.off, &moved), TLS_IO_ERROR);
		sent += moved;
		tx_drain(p, &rp, &read, &seen);
	}
	tx_drain(p, &rp, &read, &seen);
	tls_tx_free(&tx);
	assert_true(waits > 0); /* the socket did fill up */
	assert_int_equal(read, sent);
	assert_true(seen > 0 && seen <= tagged);
}

/* The peer closes without close_notify (as both ends of a flow do): an EOF, not an error. */
static void test_eof_without_close_notify(void **state)
{
	struct pair *p = *state;
	uint8_t buf[64];
	size_t n;

	tls_bulk_tune(p->s);
	close(p->cfd);
	p->cfd = -1;
	assert_int_equal(tls_read_nb(p->s, buf, sizeof(buf), &n), TLS_IO_CLOSED);
}

int main(void)
{
	/* OpenSSL writes alerts with write(2), as in the daemon, which ignores SIGPIPE too. */
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tx_stream, setup, teardown),
		cmocka_unit_test(test_accept_garbage),
		cmocka_unit_test(test_accept_closed),
		cmocka_unit_test_setup_teardown(test_write_retry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_eof_without_close_notify, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

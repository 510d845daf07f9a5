/* tls: OpenSSL for the control channel — the server's and the client's SSL_CTX (TLS 1.2 at
 * least), the client's blocking handshake and I/O on a non-blocking socket with a deadline,
 * recognising a TLS connection by its first bytes, and one-sentence error strings — and for
 * the bulk flows of a TLS load: event-driven handshake steps and non-blocking I/O, kernel TLS
 * when the kernel has it, and what a connection negotiated. */
#ifndef BM_TLS_H
#define BM_TLS_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#define TLS_WUR __attribute__((warn_unused_result))

/* True if the first bytes of a connection may be a TLS handshake record: 0x16, then 0x03 when
 * a second byte is there (the server decides on what one peek shows; a plain first message
 * never starts with 0x16). */
int tls_is_handshake(const uint8_t *buf, size_t len);

/* A server context with the PEM certificate chain and private key; NULL with one sentence in
 * err (file unreadable, not PEM, key does not match the certificate). */
TLS_WUR SSL_CTX *tls_server_ctx(const char *cert_file, const char *key_file, char *err,
				size_t errlen);
/* A client context trusting ca_file (NULL: the system store); insecure: no verification at
 * all (tests only). NULL with one sentence in err. */
TLS_WUR SSL_CTX *tls_client_ctx(const char *ca_file, int insecure, char *err, size_t errlen);

/* Runs the client handshake on the connected non-blocking fd before deadline_ns
 * (CLOCK_MONOTONIC), checking the certificate against host (a name, or an IP literal) unless
 * the context is insecure. The SSL (caller frees; it does not own fd), or NULL with
 * "TLS handshake with HOST failed: why" in err. */
TLS_WUR SSL *tls_client_connect(SSL_CTX *ctx, int fd, const char *host, int64_t deadline_ns,
				char *err, size_t errlen);
/* Blocking I/O over ssl on its non-blocking fd until deadline_ns: all len bytes or -1 with
 * errno (ETIMEDOUT, ECONNRESET on a close, EPROTO on a TLS error). */
TLS_WUR int tls_write_all(SSL *ssl, int fd, const void *buf, size_t len, int64_t deadline_ns);
TLS_WUR int tls_read_all(SSL *ssl, int fd, void *buf, size_t len, int64_t deadline_ns);

/* ---- bulk flows (docs/protocol.md, "TLS load"): non-blocking, driven by the event loop ---- */

/* Outcome of one non-blocking TLS call. After WANT_READ wait for readability, after
 * WANT_WRITE for writability, whatever the call was (a write may need to read first); then
 * repeat the same call, a write with the same bytes. */
enum tls_io { TLS_IO_OK, TLS_IO_WANT_READ, TLS_IO_WANT_WRITE, TLS_IO_CLOSED, TLS_IO_ERROR };

/* What a connection negotiated, for the report. */
struct tls_conn_info {
	char version[16];  /* "TLSv1.3" */
	char cipher[64];   /* "TLS_AES_256_GCM_SHA384" */
	int ktls_send;     /* the kernel encrypts what we send (kernel TLS) */
	int ktls_recv;     /* the kernel decrypts what we receive */
};

/* Asks OpenSSL to hand the record layer to the kernel (SSL_OP_ENABLE_KTLS) on ctx's
 * connections whose handshake runs on their socket; without the kernel's tls module (or for
 * a cipher it lacks) OpenSSL stays in user space, so this never fails a connection. */
void tls_ctx_try_ktls(SSL_CTX *ctx);
/* A client SSL on the connected non-blocking fd, set to check host (unless ctx is insecure);
 * drive it with tls_connect_step. NULL with "TLS handshake with HOST failed: why" in err. */
TLS_WUR SSL *tls_client_new(SSL_CTX *ctx, int fd, const char *host, char *err, size_t errlen);
/* One step of the client handshake: OK when done, WANT_* to wait, ERROR with the sentence
 * of tls_client_connect in err. */
enum tls_io tls_connect_step(SSL *ssl, const char *host, char *err, size_t errlen);
/* A server SSL on the accepted non-blocking fd (a socket BIO, so that OpenSSL can hand the
 * record layer to the kernel, see tls_ctx_try_ktls); drive it with tls_accept_step. NULL when
 * out of memory. */
TLS_WUR SSL *tls_server_new(SSL_CTX *ctx, int fd);
/* One step of the server handshake: OK when done, WANT_* to wait, ERROR with the reason in
 * *why (a static string: "connection closed", "wrong version number", ...). */
enum tls_io tls_accept_step(SSL *ssl, const char **why);
/* Settings of an established bulk connection: a peer's close without close_notify is an EOF
 * (neither end sends one, as on the control connection), and reads take all the socket has
 * at once (read-ahead) unless the kernel decrypts. */
void tls_bulk_tune(SSL *ssl);
/* SSL_read_ex / SSL_write_ex on a non-blocking socket: *n bytes moved when OK. CLOSED is an
 * EOF or a reset by the peer; ERROR anything else (the error queue is cleared). */
enum tls_io tls_read_nb(SSL *ssl, void *buf, size_t len, size_t *n);
enum tls_io tls_write_nb(SSL *ssl, const void *buf, size_t len, size_t *n);

struct record_writer;
/* The sending side of a TLS bulk flow (either end): stream bytes taken from its record writer
 * that SSL_write has not accepted yet. Each SSL_write gets at most RECORD_COPY_MAX (16 KiB,
 * the largest TLS record), so each is one record; a call that returned WANT_* must be offered
 * the same bytes again. */
struct tls_tx {
	uint8_t *buf; /* RECORD_COPY_MAX bytes from tls_tx_init */
	size_t off, len;
};

TLS_WUR int tls_tx_init(struct tls_tx *tx); /* 0, or -1 when out of memory */
void tls_tx_free(struct tls_tx *tx);
/* Writes w's stream through ssl until budget bytes went (OK) or the call must wait (WANT_*:
 * call again when the socket is ready), or CLOSED / ERROR. *moved: the stream bytes SSL_write
 * took in this call, whatever it returns. */
enum tls_io tls_tx_send(SSL *ssl, struct tls_tx *tx, struct record_writer *w, size_t budget,
			size_t *moved);
/* Version, cipher and kernel TLS of an established connection. */
void tls_conn_info(SSL *ssl, struct tls_conn_info *info);

#endif

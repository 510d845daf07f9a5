/* tls: OpenSSL for the control channel — the server's and the client's SSL_CTX (TLS 1.2 at
 * least), the client's blocking handshake and I/O on a non-blocking socket with a deadline,
 * recognising a TLS connection by its first bytes, and one-sentence error strings. */
#ifndef BM_TLS_H
#define BM_TLS_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#define TLS_WUR __attribute__((warn_unused_result))

/* True if the first bytes of a connection are a TLS handshake record (0x16 0x03): needs 2. */
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

/* The reason text of an OpenSSL error code ("certificate verify failed"), never NULL. */
const char *tls_error_string(unsigned long e);

#endif

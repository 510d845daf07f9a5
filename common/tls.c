/* tls: SSL_CTX set-up for both ends, the client's deadline-bound blocking handshake and I/O
 * (the control handshake is blocking, see client/run/ctrl.c), error strings, and the non-blocking
 * handshake steps and I/O of TLS bulk flows (server/bulk.c, client/run/load.c). */
#include "common/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include "common/clock.h"
#include "common/record.h"
#include "common/sock.h"
#include "common/wire.h"

/* A TLS record header starts with content type 22 (handshake) and major version 3. As a
 * control frame length that is 0x1603xxxx, far above WIRE_CTRL_MAX, so a plain control
 * connection can never start this way. */
_Static_assert(0x16030000u > WIRE_CTRL_MAX, "a TLS record must not look like a control frame");

int tls_is_handshake(const uint8_t *buf, size_t len)
{
	return len >= 1 && buf[0] == 0x16 && (len < 2 || buf[1] == 0x03);
}

/* The reason text of an OpenSSL error code ("certificate verify failed"), never NULL. */
static const char *tls_error_string(unsigned long e)
{
	const char *s = e ? ERR_reason_error_string(e) : NULL;

	return s ? s : "unknown TLS error";
}

/* The reason of the first queued OpenSSL error (then clears the queue), or dflt. */
static const char *tls_take_error(const char *dflt)
{
	unsigned long e = ERR_peek_error();
	const char *s = e ? tls_error_string(e) : dflt;

	ERR_clear_error();
	return s;
}

/* Settings both ends share: TLS 1.2 at least (1.3 is chosen whenever both can), no
 * renegotiation (an event-driven peer gains nothing from it and it costs CPU on demand). */
static SSL_CTX *tls_ctx_new(const SSL_METHOD *method)
{
	SSL_CTX *ctx = SSL_CTX_new(method);

	if (ctx == NULL)
		return NULL;
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
	return ctx;
}

SSL_CTX *tls_server_ctx(const char *cert_file, const char *key_file, char *err, size_t errlen)
{
	SSL_CTX *ctx;

	ERR_clear_error();
	ctx = tls_ctx_new(TLS_server_method());
	if (ctx == NULL) {
		snprintf(err, errlen, "cannot create a TLS context: %s", tls_take_error("out of memory"));
		return NULL;
	}
	/* Clients never resume: tickets would only cost a write per connection. */
	if (SSL_CTX_set_num_tickets(ctx, 0) != 1 ||
	    SSL_CTX_use_certificate_chain_file(ctx, cert_file) != 1) {
		snprintf(err, errlen, "%s: cannot load the TLS certificate: %s", cert_file,
			 tls_take_error("not a PEM certificate"));
		SSL_CTX_free(ctx);
		return NULL;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM) != 1) {
		if (ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH)
			snprintf(err, errlen, "%s does not match the certificate in %s", key_file,
				 cert_file);
		else
			snprintf(err, errlen, "%s: cannot load the TLS key: %s", key_file,
				 tls_take_error("not a PEM private key"));
		ERR_clear_error();
		SSL_CTX_free(ctx);
		return NULL;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		snprintf(err, errlen, "%s does not match the certificate in %s", key_file, cert_file);
		ERR_clear_error();
		SSL_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

SSL_CTX *tls_client_ctx(const char *ca_file, int insecure, char *err, size_t errlen)
{
	SSL_CTX *ctx;
	int ok;

	ERR_clear_error();
	ctx = tls_ctx_new(TLS_client_method());
	if (ctx == NULL) {
		snprintf(err, errlen, "cannot create a TLS context: %s", tls_take_error("out of memory"));
		return NULL;
	}
	if (insecure) {
		SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
		return ctx;
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	ok = ca_file ? SSL_CTX_load_verify_locations(ctx, ca_file, NULL)
		     : SSL_CTX_set_default_verify_paths(ctx);
	if (ok != 1) {
		snprintf(err, errlen, "%s: cannot load the trusted certificates: %s",
			 ca_file ? ca_file : "system store", tls_take_error("not PEM"));
		SSL_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

/* Waits until fd is ready for what the last SSL call wants, or the deadline. 0 or -1. */
static int tls_wait(SSL *ssl, int fd, int rc, int64_t deadline_ns)
{
	int e = SSL_get_error(ssl, rc);

	if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
		errno = (e == SSL_ERROR_ZERO_RETURN ||
			 (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0)) ? ECONNRESET : EPROTO;
		return -1;
	}
	return sock_wait(fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline_ns);
}

/* Tells the SSL which name or address the certificate must carry. */
static int tls_set_peer(SSL *ssl, const char *host)
{
	struct in6_addr a6;
	struct in_addr a4;

	if (inet_pton(AF_INET, host, &a4) == 1 || inet_pton(AF_INET6, host, &a6) == 1)
		return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1 ? 0 : -1;
	if (SSL_set1_host(ssl, host) != 1 || SSL_set_tlsext_host_name(ssl, host) != 1)
		return -1;
	return 0;
}

/* One sentence for a failed handshake: the certificate's problem when there was one; a hint
 * when the server closed or answered in plain text, as one without TLS configured does. */
static void tls_connect_error(SSL *ssl, const char *host, char *err, size_t errlen)
{
	long v = SSL_get_verify_result(ssl);
	int r = ERR_GET_REASON(ERR_peek_error());
	const char *hint = (r == SSL_R_UNEXPECTED_EOF_WHILE_READING ||
			    r == SSL_R_WRONG_VERSION_NUMBER || errno == ECONNRESET)
				   ? " (the server may not offer TLS)" : "";

	if (errno == ETIMEDOUT)
		snprintf(err, errlen, "TLS handshake with %s failed: timed out", host);
	else if (v != X509_V_OK)
		snprintf(err, errlen, "TLS handshake with %s failed: certificate verify failed (%s)",
			 host, X509_verify_cert_error_string(v));
	else
		snprintf(err, errlen, "TLS handshake with %s failed: %s%s", host,
			 tls_take_error("the server closed the connection"), hint);
	ERR_clear_error();
}

SSL *tls_client_new(SSL_CTX *ctx, int fd, const char *host, char *err, size_t errlen)
{
	SSL *ssl;

	ERR_clear_error();
	ssl = SSL_new(ctx);
	if (ssl == NULL || SSL_set_fd(ssl, fd) != 1 ||
	    (SSL_CTX_get_verify_mode(ctx) != SSL_VERIFY_NONE && tls_set_peer(ssl, host) < 0)) {
		snprintf(err, errlen, "TLS handshake with %s failed: %s", host,
			 tls_take_error("cannot set up TLS"));
		SSL_free(ssl);
		return NULL;
	}
	return ssl;
}

SSL *tls_client_connect(SSL_CTX *ctx, int fd, const char *host, int64_t deadline_ns, char *err,
			size_t errlen)
{
	SSL *ssl = tls_client_new(ctx, fd, host, err, errlen);
	int rc;

	if (ssl == NULL)
		return NULL;
	errno = 0;
	while ((rc = SSL_connect(ssl)) != 1) {
		if (tls_wait(ssl, fd, rc, deadline_ns) < 0) {
			tls_connect_error(ssl, host, err, errlen);
			SSL_free(ssl);
			return NULL;
		}
	}
	return ssl;
}

/* Moves all len bytes through ssl in one direction (SSL_read_ex or SSL_write_ex), waiting on
 * fd as the TLS state asks, until deadline_ns. */
static int tls_all(SSL *ssl, int fd, uint8_t *p, size_t len, int64_t deadline_ns,
		   int (*io)(SSL *, uint8_t *, size_t, size_t *))
{
	while (len > 0) {
		size_t n = 0;
		int rc = io(ssl, p, len, &n);

		if (rc == 1) {
			p += n;
			len -= n;
		} else if (tls_wait(ssl, fd, rc, deadline_ns) < 0) {
			ERR_clear_error();
			return -1;
		}
	}
	return 0;
}

static int tls_write_io(SSL *ssl, uint8_t *p, size_t len, size_t *n)
{
	return SSL_write_ex(ssl, p, len, n);
}

static int tls_read_io(SSL *ssl, uint8_t *p, size_t len, size_t *n)
{
	return SSL_read_ex(ssl, p, len, n);
}

int tls_write_all(SSL *ssl, int fd, const void *buf, size_t len, int64_t deadline_ns)
{
	/* tls_write_io only reads through the pointer. */
	return tls_all(ssl, fd, (uint8_t *)(uintptr_t)buf, len, deadline_ns, tls_write_io);
}

int tls_read_all(SSL *ssl, int fd, void *buf, size_t len, int64_t deadline_ns)
{
	return tls_all(ssl, fd, buf, len, deadline_ns, tls_read_io);
}

void tls_ctx_try_ktls(SSL_CTX *ctx)
{
	SSL_CTX_set_options(ctx, SSL_OP_ENABLE_KTLS);
}

/* WANT_READ or WANT_WRITE for those SSL_get_error codes; ERROR for any other. */
static enum tls_io tls_want(int e)
{
	if (e == SSL_ERROR_WANT_READ)
		return TLS_IO_WANT_READ;
	if (e == SSL_ERROR_WANT_WRITE)
		return TLS_IO_WANT_WRITE;
	return TLS_IO_ERROR;
}

/* Maps the result of a TLS call that did not succeed; clears the error queue on failures so
 * that the next call on this thread starts clean (SSL_get_error reads the queue). */
static enum tls_io tls_io_result(SSL *ssl, int rc)
{
	int e = SSL_get_error(ssl, rc);
	enum tls_io r = tls_want(e);

	if (r != TLS_IO_ERROR)
		return r;
	ERR_clear_error();
	/* SYSCALL with an empty queue: the socket failed (a reset) or ended. */
	return e == SSL_ERROR_ZERO_RETURN || e == SSL_ERROR_SYSCALL ? TLS_IO_CLOSED : TLS_IO_ERROR;
}

enum tls_io tls_connect_step(SSL *ssl, const char *host, char *err, size_t errlen)
{
	int rc, e;
	enum tls_io r;

	errno = 0;
	rc = SSL_connect(ssl);
	if (rc == 1)
		return TLS_IO_OK;
	e = SSL_get_error(ssl, rc);
	if ((r = tls_want(e)) != TLS_IO_ERROR)
		return r;
	if (e == SSL_ERROR_SYSCALL && errno == 0)
		errno = ECONNRESET; /* the server closed: tls_connect_error hints at plain TCP */
	tls_connect_error(ssl, host, err, errlen);
	return TLS_IO_ERROR;
}

SSL *tls_server_new(SSL_CTX *ctx, int fd)
{
	SSL *ssl = SSL_new(ctx);

	if (ssl == NULL || SSL_set_fd(ssl, fd) != 1) {
		SSL_free(ssl);
		ERR_clear_error();
		return NULL;
	}
	SSL_set_accept_state(ssl);
	return ssl;
}

enum tls_io tls_accept_step(SSL *ssl, const char **why)
{
	int rc = SSL_do_handshake(ssl), e;
	enum tls_io r;

	if (rc == 1)
		return TLS_IO_OK;
	e = SSL_get_error(ssl, rc);
	if ((r = tls_want(e)) != TLS_IO_ERROR)
		return r;
	*why = tls_take_error(e == SSL_ERROR_SYSCALL || e == SSL_ERROR_ZERO_RETURN
				      ? "connection closed" : "unknown TLS error");
	return TLS_IO_ERROR;
}

void tls_bulk_tune(SSL *ssl)
{
	SSL_set_options(ssl, SSL_OP_IGNORE_UNEXPECTED_EOF);
	/* Without read-ahead OpenSSL reads each record with two system calls (header, body);
	 * with it one read takes what the socket has. Kernel TLS reads records itself. */
	if (!BIO_get_ktls_recv(SSL_get_rbio(ssl)))
		SSL_set_read_ahead(ssl, 1);
}

/* One non-blocking SSL_read_ex or SSL_write_ex (tls_read_io, tls_write_io). */
static enum tls_io tls_nb(SSL *ssl, uint8_t *p, size_t len, size_t *n,
			  int (*io)(SSL *, uint8_t *, size_t, size_t *))
{
	int rc = io(ssl, p, len, n);

	return rc == 1 ? TLS_IO_OK : tls_io_result(ssl, rc);
}

enum tls_io tls_read_nb(SSL *ssl, void *buf, size_t len, size_t *n)
{
	return tls_nb(ssl, buf, len, n, tls_read_io);
}

enum tls_io tls_write_nb(SSL *ssl, const void *buf, size_t len, size_t *n)
{
	/* tls_write_io only reads through the pointer. */
	return tls_nb(ssl, (uint8_t *)(uintptr_t)buf, len, n, tls_write_io);
}

int tls_tx_init(struct tls_tx *tx)
{
	tx->off = tx->len = 0;
	tx->buf = malloc(RECORD_COPY_MAX);
	return tx->buf != NULL ? 0 : -1;
}

void tls_tx_free(struct tls_tx *tx)
{
	free(tx->buf);
	tx->buf = NULL;
}

enum tls_io tls_tx_send(SSL *ssl, struct tls_tx *tx, struct record_writer *w, size_t budget,
			size_t *moved)
{
	*moved = 0;
	while (*moved < budget) {
		enum tls_io r;
		size_t n;

		/* The bytes are committed to the stream here, as sendmsg would; they stay in buf
		 * until SSL_write took them. */
		if (tx->off == tx->len) {
			tx->off = 0;
			tx->len = record_writer_copy(w, tx->buf, RECORD_COPY_MAX);
		}
		r = tls_write_nb(ssl, tx->buf + tx->off, tx->len - tx->off, &n);
		if (r != TLS_IO_OK)
			return r;
		tx->off += n;
		*moved += n;
	}
	return TLS_IO_OK;
}

void tls_conn_info(SSL *ssl, struct tls_conn_info *info)
{
	const char *c = SSL_get_cipher_name(ssl);

	snprintf(info->version, sizeof(info->version), "%s", SSL_get_version(ssl));
	snprintf(info->cipher, sizeof(info->cipher), "%s", c ? c : "unknown");
	info->ktls_send = BIO_get_ktls_send(SSL_get_wbio(ssl)) ? 1 : 0;
	info->ktls_recv = BIO_get_ktls_recv(SSL_get_rbio(ssl)) ? 1 : 0;
}

/* labcert: a self-signed certificate for the lab server's address, made with libcrypto. */
#include "client/lab/labcert.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#define LABCERT_DAYS_S (24L * 3600)

/* Adds one X509v3 extension given in OpenSSL's configuration syntax. */
static int labcert_ext(X509 *x, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (ext == NULL)
		return -1;
	ok = X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	return ok ? 0 : -1;
}

static X509 *labcert_x509(EVP_PKEY *key, const char *ip)
{
	X509 *x = X509_new();
	X509_NAME *name;
	char san[80];

	snprintf(san, sizeof(san), "IP:%s", ip);
	if (x == NULL || !X509_set_version(x, 2) ||
	    !ASN1_INTEGER_set(X509_get_serialNumber(x), (long)getpid()) ||
	    X509_gmtime_adj(X509_getm_notBefore(x), -3600) == NULL ||
	    X509_gmtime_adj(X509_getm_notAfter(x), LABCERT_DAYS_S) == NULL ||
	    !X509_set_pubkey(x, key) || (name = X509_get_subject_name(x)) == NULL ||
	    !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)ip, -1, -1,
					0) ||
	    !X509_set_issuer_name(x, name) ||
	    labcert_ext(x, NID_basic_constraints, "critical,CA:TRUE") < 0 ||
	    labcert_ext(x, NID_subject_alt_name, san) < 0 || !X509_sign(x, key, EVP_sha256())) {
		X509_free(x);
		return NULL;
	}
	return x;
}

/* Writes a PEM file of the given mode through write_pem. */
static int labcert_write(const char *path, mode_t mode, X509 *x, EVP_PKEY *key)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	int ok;

	if (f == NULL) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	ok = x ? PEM_write_X509(f, x) : PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL);
	return fclose(f) == 0 && ok ? 0 : -1;
}

int labcert_make(struct labcert *c, const char *ip, char *err, size_t errlen)
{
	EVP_PKEY *key = NULL;
	X509 *x = NULL;
	int rc = -1;

	memset(c, 0, sizeof(*c));
	snprintf(c->dir, sizeof(c->dir), "/tmp/bloatmeter-lab-XXXXXX");
	if (mkdtemp(c->dir) == NULL) {
		c->dir[0] = '\0';
		snprintf(err, errlen, "cannot make a directory for the lab certificate.");
		return -1;
	}
	snprintf(c->cert, sizeof(c->cert), "%s/server.pem", c->dir);
	snprintf(c->key, sizeof(c->key), "%s/server.key", c->dir);
	key = EVP_EC_gen("P-256");
	x = key ? labcert_x509(key, ip) : NULL;
	if (x == NULL)
		snprintf(err, errlen, "cannot make the lab's TLS certificate (libcrypto failed).");
	else if (labcert_write(c->key, 0600, NULL, key) < 0 || labcert_write(c->cert, 0644, x, NULL) < 0)
		snprintf(err, errlen, "cannot write the lab's TLS certificate to %s.", c->dir);
	else
		rc = 0;
	X509_free(x);
	EVP_PKEY_free(key);
	if (rc < 0)
		labcert_remove(c);
	return rc;
}

void labcert_remove(struct labcert *c)
{
	if (c->dir[0] == '\0')
		return;
	(void)unlink(c->cert);
	(void)unlink(c->key);
	(void)rmdir(c->dir);
	c->dir[0] = '\0';
}

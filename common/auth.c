/* auth: key files (bounded parser, permission check), the HMAC-SHA256 transcripts of the
 * challenge-response exchange, and its message codecs. */
#include "common/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "common/fileio.h"
#include "common/hex.h"
#include "common/lines.h"
#include "common/util.h"
#include "common/wire.h"

#define AUTH_LABEL "bloatmeter-auth-v1"
/* Longest transcript: label, role, two nonces, an id, a 64-char token or a cc and a number,
 * each with its 2-byte length. */
#define AUTH_TRANSCRIPT_MAX 512

int auth_is_hex(const char *s, size_t n)
{
	return hex_is_lower(s, n);
}

static int id_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

/* The id made of the n bytes at s: 1..AUTH_ID_MAX id characters. */
static int id_valid_n(const char *s, size_t n)
{
	if (n == 0 || n > AUTH_ID_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!id_char(s[i]))
			return 0;
	return 1;
}

int auth_id_valid(const char *id)
{
	size_t n = strnlen(id, AUTH_ID_MAX + 1);

	return id_valid_n(id, n) && id[n] == '\0';
}

void auth_keys_free(struct auth_keys *keys)
{
	if (keys->v != NULL) {
		OPENSSL_cleanse(keys->v, keys->n * sizeof(*keys->v));
		free(keys->v);
	}
	keys->v = NULL;
	keys->n = 0;
}

const struct auth_key *auth_keys_find(const struct auth_keys *keys, const char *id)
{
	for (size_t i = 0; i < keys->n; i++)
		if (strcmp(keys->v[i].id, id) == 0)
			return &keys->v[i];
	return NULL;
}

/* Decodes n hex digits (either case) at s into k; -1 unless n is even and in range. */
static int key_decode(const char *s, size_t n, struct auth_key *k)
{
	if (n < 2 * AUTH_KEY_MIN || n > 2 * AUTH_KEY_MAX || hex_decode(s, n, k->key) < 0)
		return -1;
	k->len = n / 2;
	return 0;
}

/* Appends one key to out, growing it (at most max keys). */
static int keys_push(struct auth_keys *out, size_t *cap, const struct auth_key *k)
{
	if (out->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 8;
		struct auth_key *v = calloc(nc, sizeof(*v));

		if (v == NULL)
			return -1;
		/* Copy and wipe rather than realloc: no stray copy of a key stays in freed memory. */
		if (out->n > 0)
			memcpy(v, out->v, out->n * sizeof(*v));
		auth_keys_free(&(struct auth_keys){ out->v, out->n });
		out->v = v;
		*cap = nc;
	}
	out->v[out->n++] = *k;
	return 0;
}

/* One line (n bytes, no newline). Empty and comment lines add nothing. */
static int auth_key_line(const char *s, size_t n, int line, size_t max_keys,
			 struct auth_keys *out, size_t *cap, char *err, size_t errlen)
{
	struct auth_key k;
	size_t i, id0, idn, key0, keyn;
	int rc = -1;

	if (n > AUTH_MAX_LINE) {
		snprintf(err, errlen, "%d: line longer than %d bytes", line, AUTH_MAX_LINE);
		return -1;
	}
	n = lines_uncomment(s, n);
	i = lines_blanks(s, n);
	if (i == n)
		return 0;
	id0 = i;
	idn = lines_word(s + i, n - i);
	i += idn;
	i += lines_blanks(s + i, n - i);
	key0 = i;
	keyn = lines_word(s + i, n - i);
	i += keyn;
	i += lines_blanks(s + i, n - i);
	if (keyn == 0 || i != n) {
		snprintf(err, errlen, "%d: expected \"ID KEY\"", line);
		return -1;
	}
	if (!id_valid_n(s + id0, idn)) {
		snprintf(err, errlen, "%d: invalid key id (1-%d of A-Z a-z 0-9 . _ -)", line,
			 AUTH_ID_MAX);
		return -1;
	}
	memset(&k, 0, sizeof(k));
	memcpy(k.id, s + id0, idn);
	if (key_decode(s + key0, keyn, &k) < 0) {
		snprintf(err, errlen, "%d: the key of \"%s\" must be %d to %d hex digits", line, k.id,
			 2 * AUTH_KEY_MIN, 2 * AUTH_KEY_MAX);
	} else if (auth_keys_find(out, k.id) != NULL) {
		snprintf(err, errlen, "%d: key id \"%s\" given twice", line, k.id);
	} else if (out->n >= max_keys) {
		snprintf(err, errlen, "%d: more than %zu key%s", line, max_keys,
			 max_keys == 1 ? "" : "s");
	} else if (keys_push(out, cap, &k) < 0) {
		snprintf(err, errlen, "%d: out of memory", line);
	} else {
		rc = 0;
	}
	OPENSSL_cleanse(&k, sizeof(k));
	return rc;
}

int auth_parse_keys(const char *text, size_t len, size_t max_keys, struct auth_keys *out,
		    char *err, size_t errlen)
{
	size_t n, cap = 0;
	struct lines it;
	const char *s;

	out->v = NULL;
	out->n = 0;
	lines_init(&it, text, len);
	while (lines_next(&it, &s, &n)) {
		if (memchr(s, '\0', n) != NULL) {
			snprintf(err, errlen, "%d: NUL byte in the line", it.line);
			auth_keys_free(out);
			return -1;
		}
		if (auth_key_line(s, n, it.line, max_keys, out, &cap, err, errlen) < 0) {
			auth_keys_free(out);
			return -1;
		}
	}
	if (out->n == 0) {
		snprintf(err, errlen, "no key in the file");
		return -1;
	}
	return 0;
}

/* The file must be a regular file that other users cannot read or change: anyone who reads a
 * key can pose as its client (or, on the client, as the server). */
static int auth_check_mode(int fd, const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s: cannot stat: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		return -1;
	}
	if (st.st_mode & (S_IROTH | S_IWOTH)) {
		snprintf(err, errlen, "%s is accessible to other users (mode %04o); a key file must "
			 "not be: chmod o-rwx %s", path, (unsigned)(st.st_mode & 07777), path);
		return -1;
	}
	return 0;
}

int auth_load_keys(const char *path, size_t max_keys, struct auth_keys *out, char *err,
		   size_t errlen)
{
	char *buf, why[256];
	ssize_t len;
	int fd, rc = -1;

	out->v = NULL;
	out->n = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	if (auth_check_mode(fd, path, err, errlen) < 0) {
		close(fd);
		return -1;
	}
	buf = malloc(AUTH_MAX_FILE + 1);
	if (buf == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		close(fd);
		return -1;
	}
	len = fileio_read_bounded(fd, buf, AUTH_MAX_FILE);
	if (len < 0 && errno == EFBIG)
		snprintf(err, errlen, "%s: larger than %d KiB", path, AUTH_MAX_FILE / 1024);
	else if (len < 0)
		snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
	else if (auth_parse_keys(buf, (size_t)len, max_keys, out, why, sizeof(why)) < 0)
		snprintf(err, errlen, "%s%s%s", path, why[0] >= '0' && why[0] <= '9' ? ":" : ": ",
			 why);
	else
		rc = 0;
	OPENSSL_cleanse(buf, AUTH_MAX_FILE + 1);
	free(buf);
	close(fd);
	return rc;
}

int auth_hmac(const uint8_t *key, size_t keylen, const uint8_t *msg, size_t len,
	      uint8_t out[AUTH_MAC_LEN])
{
	unsigned int outlen = 0;

	if (keylen > INT32_MAX ||
	    HMAC(EVP_sha256(), key, (int)keylen, msg, len, out, &outlen) == NULL ||
	    outlen != AUTH_MAC_LEN)
		return -1;
	return 0;
}

int auth_nonce(char hex[AUTH_NONCE_HEX + 1])
{
	uint8_t b[AUTH_NONCE_LEN];

	if (util_random(b, sizeof(b)) < 0)
		return -1;
	hex_encode(b, sizeof(b), hex);
	return 0;
}

/* A transcript: fields, each with its 2-byte big-endian length, so no two different field
 * lists can make the same bytes. */
struct transcript {
	uint8_t b[AUTH_TRANSCRIPT_MAX];
	size_t n;
	int overflow;
};

static void transcript_add(struct transcript *t, const char *s)
{
	size_t len = strlen(s);

	if (len > 0xffff || t->n + 2 + len > sizeof(t->b)) {
		t->overflow = 1;
		return;
	}
	t->b[t->n++] = (uint8_t)(len >> 8);
	t->b[t->n++] = (uint8_t)len;
	memcpy(t->b + t->n, s, len);
	t->n += len;
}

/* HMAC of the label, role and fields under k, as hex. */
static int auth_mac_fields(const struct auth_key *k, const char *role, const char *const *f,
			   size_t nf, char mac[AUTH_MAC_HEX + 1])
{
	struct transcript t = { .n = 0, .overflow = 0 };
	uint8_t m[AUTH_MAC_LEN];

	transcript_add(&t, AUTH_LABEL);
	transcript_add(&t, role);
	for (size_t i = 0; i < nf; i++)
		transcript_add(&t, f[i]);
	if (t.overflow || auth_hmac(k->key, k->len, t.b, t.n, m) < 0)
		return -1;
	hex_encode(m, sizeof(m), mac);
	OPENSSL_cleanse(m, sizeof(m));
	return 0;
}

int auth_client_mac(const struct auth_key *k, const char *snonce, const char *cnonce,
		    const struct auth_hello *h, char mac[AUTH_MAC_HEX + 1])
{
	char dur[24];
	const char *f[5];

	snprintf(dur, sizeof(dur), "%" PRId64, h->duration_s);
	f[0] = snonce;
	f[1] = cnonce;
	f[2] = k->id;
	f[3] = h->cc ? h->cc : "";
	f[4] = dur;
	return auth_mac_fields(k, "client", f, 5, mac);
}

int auth_server_mac(const struct auth_key *k, const char *snonce, const char *cnonce,
		    const char *token_hex, char mac[AUTH_MAC_HEX + 1])
{
	const char *f[4] = { snonce, cnonce, k->id, token_hex };

	return auth_mac_fields(k, "server", f, 4, mac);
}

/* Constant-time comparison of two MACs in hex (both already syntax-checked). */
static int mac_equal(const char *a, const char *b)
{
	return strlen(a) == AUTH_MAC_HEX && strlen(b) == AUTH_MAC_HEX &&
	       CRYPTO_memcmp(a, b, AUTH_MAC_HEX) == 0;
}

const struct auth_key *auth_verify_response(const struct auth_keys *keys, const char *snonce,
					    const struct auth_hello *h,
					    const struct auth_response *r)
{
	const struct auth_key *k = auth_keys_find(keys, r->id);
	struct auth_key dummy;
	char mac[AUTH_MAC_HEX + 1];
	int ok;

	/* Unknown id: compute a MAC anyway, under a throw-away key, and fail the same way. */
	if (k == NULL) {
		memset(&dummy, 0, sizeof(dummy));
		snprintf(dummy.id, sizeof(dummy.id), "%s", r->id);
		dummy.len = AUTH_KEY_MIN;
	}
	ok = auth_client_mac(k ? k : &dummy, snonce, r->cnonce, h, mac) == 0 &&
	     mac_equal(mac, r->mac);
	return ok && k != NULL ? k : NULL;
}

int auth_verify_server(const struct auth_key *k, const char *snonce, const char *cnonce,
		       const char *token_hex, const char *server_mac)
{
	char mac[AUTH_MAC_HEX + 1];

	if (server_mac == NULL || !auth_is_hex(server_mac, AUTH_MAC_HEX) ||
	    auth_server_mac(k, snonce, cnonce, token_hex, mac) < 0)
		return -1;
	return mac_equal(mac, server_mac) ? 0 : -1;
}

json_object *auth_challenge_new(const char *snonce)
{
	json_object *msg = wire_ctrl_new("challenge");

	json_object_object_add(msg, "nonce", json_object_new_string(snonce));
	return msg;
}

/* Copies the string field key into out (size n + 1) if it is exactly n lowercase hex digits. */
static int get_hex(json_object *msg, const char *key, size_t n, char *out)
{
	const char *s;

	if (wire_get_str(msg, key, n, &s) < 0 || !auth_is_hex(s, n))
		return -1;
	memcpy(out, s, n + 1);
	return 0;
}

int auth_challenge_parse(json_object *msg, char snonce[AUTH_NONCE_HEX + 1])
{
	if (strcmp(wire_ctrl_type(msg), "challenge") != 0)
		return -1;
	return get_hex(msg, "nonce", AUTH_NONCE_HEX, snonce);
}

json_object *auth_response_new(const struct auth_response *r)
{
	json_object *msg = wire_ctrl_new("auth");

	json_object_object_add(msg, "id", json_object_new_string(r->id));
	json_object_object_add(msg, "cnonce", json_object_new_string(r->cnonce));
	json_object_object_add(msg, "mac", json_object_new_string(r->mac));
	return msg;
}

int auth_response_parse(json_object *msg, struct auth_response *r)
{
	const char *id;

	memset(r, 0, sizeof(*r));
	if (strcmp(wire_ctrl_type(msg), "auth") != 0 ||
	    wire_get_str(msg, "id", AUTH_ID_MAX, &id) < 0 || !auth_id_valid(id) ||
	    get_hex(msg, "cnonce", AUTH_NONCE_HEX, r->cnonce) < 0 ||
	    get_hex(msg, "mac", AUTH_MAC_HEX, r->mac) < 0)
		return -1;
	snprintf(r->id, sizeof(r->id), "%s", id);
	return 0;
}

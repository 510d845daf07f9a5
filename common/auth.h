/* auth: pre-shared-key authentication of the control channel — the key files, the
 * HMAC-SHA256 challenge and answers both ends compute, and the decoders of those messages
 * (docs/protocol.md, "Authentication"). Pure except auth_load_keys, which reads one file. */
#ifndef BM_AUTH_H
#define BM_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#define AUTH_ID_MAX 64      /* characters of a key id: [A-Za-z0-9._-] */
#define AUTH_KEY_MIN 32     /* bytes of a key (64 hex digits) */
#define AUTH_KEY_MAX 128    /* bytes of a key (256 hex digits) */
#define AUTH_NONCE_LEN 16   /* random bytes of a nonce */
#define AUTH_NONCE_HEX (2 * AUTH_NONCE_LEN)
#define AUTH_MAC_LEN 32     /* HMAC-SHA256 */
#define AUTH_MAC_HEX (2 * AUTH_MAC_LEN)
#define AUTH_MAX_FILE (256 * 1024) /* bytes of a key file */
#define AUTH_MAX_LINE 1024         /* bytes of one line, without its newline */
#define AUTH_MAX_KEYS 4096         /* keys in one file */
#define AUTH_FAILED_REASON "authentication failed" /* the one answer to any bad auth */

#define AUTH_WUR __attribute__((warn_unused_result))

struct auth_key {
	char id[AUTH_ID_MAX + 1];
	uint8_t key[AUTH_KEY_MAX];
	size_t len;
};

struct auth_keys {
	struct auth_key *v;
	size_t n;
};

/* The hello fields the server acts on: the client's MAC covers them, so nobody on the path
 * can change them without the key. */
struct auth_hello {
	const char *cc;
	int64_t duration_s;
};

/* The client's answer to a challenge. */
struct auth_response {
	char id[AUTH_ID_MAX + 1];
	char cnonce[AUTH_NONCE_HEX + 1];
	char mac[AUTH_MAC_HEX + 1];
};

/* Parses key file text (len bytes, need not be NUL-terminated): lines "ID KEY" (blanks
 * between), '#' comments, blank lines; at most max_keys keys, no id twice. 0 with *out filled
 * (caller frees with auth_keys_free), or -1 with "LINE: why" in err. Never reads outside
 * text. */
AUTH_WUR int auth_parse_keys(const char *text, size_t len, size_t max_keys, struct auth_keys *out,
			     char *err, size_t errlen);
/* Reads and parses path, which must be a regular file that other users can neither read nor
 * write. 0, or -1 with one sentence ("PATH:LINE: why", "PATH: why") in err. */
AUTH_WUR int auth_load_keys(const char *path, size_t max_keys, struct auth_keys *out, char *err,
			    size_t errlen);
/* Wipes and frees the keys (safe on a zeroed struct). */
void auth_keys_free(struct auth_keys *keys);
/* The key named id, or NULL. */
const struct auth_key *auth_keys_find(const struct auth_keys *keys, const char *id);

/* HMAC-SHA256 of msg under key. 0 or -1. */
AUTH_WUR int auth_hmac(const uint8_t *key, size_t keylen, const uint8_t *msg, size_t len,
		       uint8_t out[AUTH_MAC_LEN]);
/* A fresh nonce: 16 random bytes as 32 lowercase hex digits. 0 or -1 (RNG failure). */
AUTH_WUR int auth_nonce(char hex[AUTH_NONCE_HEX + 1]);
/* True if s is exactly n lowercase hex digits. */
int auth_is_hex(const char *s, size_t n);
/* True if id is a valid key id. */
int auth_id_valid(const char *id);

/* The client's MAC: HMAC(key, "bloatmeter-auth-v1", "client", snonce, cnonce, id, cc,
 * duration_s), each field length-prefixed. 0 or -1 (a field too long). */
AUTH_WUR int auth_client_mac(const struct auth_key *k, const char *snonce, const char *cnonce,
			     const struct auth_hello *h, char mac[AUTH_MAC_HEX + 1]);
/* The server's proof in the welcome: HMAC(key, "bloatmeter-auth-v1", "server", snonce,
 * cnonce, id, token). */
AUTH_WUR int auth_server_mac(const struct auth_key *k, const char *snonce, const char *cnonce,
			     const char *token_hex, char mac[AUTH_MAC_HEX + 1]);

/* Server: the key whose MAC r carries for this challenge and hello, or NULL. An unknown id and
 * a wrong MAC take the same path and time, so the answer tells nothing about which ids exist. */
const struct auth_key *auth_verify_response(const struct auth_keys *keys, const char *snonce,
					    const struct auth_hello *h,
					    const struct auth_response *r);
/* Client: 0 if server_mac proves k for this exchange and welcome token, else -1. */
AUTH_WUR int auth_verify_server(const struct auth_key *k, const char *snonce, const char *cnonce,
				const char *token_hex, const char *server_mac);

/* Messages: {"type":"challenge","nonce"} and {"type":"auth","id","cnonce","mac"}. The
 * decoders check every field's syntax; -1 when anything is missing or malformed. */
json_object *auth_challenge_new(const char *snonce);
AUTH_WUR int auth_challenge_parse(json_object *msg, char snonce[AUTH_NONCE_HEX + 1]);
json_object *auth_response_new(const struct auth_response *r);
AUTH_WUR int auth_response_parse(json_object *msg, struct auth_response *r);

#endif

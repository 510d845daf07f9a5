/* fuzz_auth: hostile control messages in the authentication exchange — the challenge and auth
 * decoders, the server's verification of an answer (unknown ids and wrong MACs alike), and
 * the client's check of a welcome's server_mac. Nothing a peer sends may authenticate it
 * without the key. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/auth.h"
#include "common/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_SNONCE "00112233445566778899aabbccddeeff"
#define FUZZ_TOKEN "0f0e0d0c0b0a09080706050403020100"

static const char fuzz_keys[] =
	"alice a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1\n"
	"bob b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0\n";

static void fuzz_auth_message(json_object *msg, const struct auth_keys *keys)
{
	struct auth_hello h = { "cubic", 30 };
	struct auth_response r;
	char nonce[AUTH_NONCE_HEX + 1];
	const char *s;

	if (auth_challenge_parse(msg, nonce) == 0 && !auth_is_hex(nonce, AUTH_NONCE_HEX))
		abort();
	if (auth_response_parse(msg, &r) == 0) {
		if (!auth_id_valid(r.id) || !auth_is_hex(r.cnonce, AUTH_NONCE_HEX) ||
		    !auth_is_hex(r.mac, AUTH_MAC_HEX))
			abort();
		/* Finding the MAC of a fixed key by chance is a 2^-256 event: treat it as a bug. */
		if (auth_verify_response(keys, FUZZ_SNONCE, &h, &r) != NULL)
			abort();
	}
	if (wire_get_str(msg, "server_mac", 256, &s) == 0 &&
	    auth_verify_server(&keys->v[0], FUZZ_SNONCE, FUZZ_SNONCE, FUZZ_TOKEN, s) == 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct auth_keys keys;
	char err[128];
	json_object *msg;

	if (auth_parse_keys(fuzz_keys, sizeof(fuzz_keys) - 1, 4, &keys, err, sizeof(err)) < 0)
		abort();
	msg = wire_ctrl_parse(data, size, err, sizeof(err));
	if (msg != NULL) {
		fuzz_auth_message(msg, &keys);
		json_object_put(msg);
	}
	auth_keys_free(&keys);
	return 0;
}

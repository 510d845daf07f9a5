/* fuzz_psk: hostile bytes as a pre-shared-key file. Whatever the text, the parser stays inside
 * it, names the line of any refusal (or says the file has no key), never keeps a partial
 * table, and every key it keeps has a valid id, a length in range and a unique id. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/auth.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_psk_check(const struct auth_keys *k, size_t max)
{
	if (k->n == 0 || k->n > max || k->v == NULL)
		abort();
	for (size_t i = 0; i < k->n; i++) {
		const struct auth_key *a = &k->v[i];

		if (!auth_id_valid(a->id) || a->len < AUTH_KEY_MIN || a->len > AUTH_KEY_MAX ||
		    auth_keys_find(k, a->id) != a)
			abort(); /* invalid id, length out of range, or an id twice */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size heap copy without a terminator: ASan sees any read past the text. */
	char *buf = malloc(size ? size : 1);
	struct auth_keys k;
	char err[256];
	/* The first byte picks the key limit, as the client (1) and the server (many) use it. */
	size_t max = size > 0 && (data[0] & 1) ? 1 : AUTH_MAX_KEYS;
	int rc;

	if (buf == NULL)
		abort();
	memcpy(buf, data, size);
	err[0] = '\0';
	rc = auth_parse_keys(buf, size, max, &k, err, sizeof(err));
	if (rc == 0) {
		fuzz_psk_check(&k, max);
		auth_keys_free(&k);
		if (k.v != NULL || k.n != 0)
			abort();
	} else if (rc != -1 || k.v != NULL || k.n != 0 ||
		   (strcmp(err, "no key in the file") != 0 &&
		    (err[0] < '1' || err[0] > '9' || strstr(err, ": ") == NULL))) {
		abort(); /* every refusal names its line, and leaves nothing behind */
	}
	free(buf);
	return 0;
}

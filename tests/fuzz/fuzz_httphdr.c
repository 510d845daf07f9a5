/* fuzz_httphdr: hostile bytes as a response header line of an HTTP speed-test server (any
 * server a user points the HTTP mode at). The parser reads only within the given length and
 * keeps a name only of 1-15 of [a-z0-9_-]; otherwise the output stays untouched. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client/model/httphdr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size heap copy without a terminator: ASan sees any read past the line. */
	char *line = malloc(size ? size : 1), out[HTTPHDR_CC_MAX];
	size_t n;

	if (line == NULL)
		return 0;
	memcpy(line, data, size);
	memset(out, 'x', sizeof(out));
	if (httphdr_cc(line, size, out, sizeof(out))) {
		n = strnlen(out, sizeof(out));
		if (n == 0 || n >= sizeof(out) || strspn(out, "abcdefghijklmnopqrstuvwxyz0123456789_-") != n)
			abort();
	} else if (out[0] != 'x') {
		abort();
	}
	free(line);
	return 0;
}

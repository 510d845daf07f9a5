/* fuzz_lines: hostile bytes split into lines. Whatever the text, every line lies inside it,
 * holds no '\n', the numbers count up by one, and the lines and their newlines cover the
 * text exactly. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/lines.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size heap copy without a terminator: ASan sees any read past the text. */
	char *buf = malloc(size ? size : 1);
	const char *s, *next;
	struct lines it;
	size_t n;

	if (buf == NULL)
		abort();
	memcpy(buf, data, size);
	lines_init(&it, buf, size);
	next = buf;
	for (int want = 1; lines_next(&it, &s, &n); want++) {
		if (it.line != want || s != next || n > size - (size_t)(s - buf) ||
		    memchr(s, '\n', n) != NULL)
			abort();
		next = s + n;
		if (next < buf + size) {
			if (*next != '\n')
				abort();
			next++;
		}
	}
	if (next != buf + size)
		abort();
	free(buf);
	return 0;
}

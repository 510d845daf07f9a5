/* fuzz_limits: hostile bytes for the limits' small parsers — a sysfs byte counter, an
 * interface name and a rate value — each given an exact-size copy, so ASan sees any read past
 * the input, and each result checked against what the bytes allow. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/limits.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A counter parses only from digits with at most one trailing newline, and says their value. */
static void fuzz_counter(const char *buf, size_t size)
{
	uint64_t v, w = 0;
	size_t digits = size > 0 && buf[size - 1] == '\n' ? size - 1 : size;

	if (limits_parse_counter(buf, size, &v) < 0)
		return;
	if (digits == 0)
		abort();
	for (size_t i = 0; i < digits; i++) {
		if (buf[i] < '0' || buf[i] > '9')
			abort();
		w = w * 10 + (uint64_t)(buf[i] - '0');
	}
	if (v != w)
		abort();
}

/* Names and rates are strings: the input up to its first NUL, NUL-terminated. */
static void fuzz_strings(const char *s)
{
	uint64_t bps;
	size_t n = strlen(s);

	if (limits_ifname_ok(s) && (n == 0 || n > 15 || strchr(s, '/') != NULL))
		abort();
	if (limits_parse_rate(s, &bps) == 0 && bps > 1000000000000ULL)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1), *str = malloc(size + 1);

	if (buf == NULL || str == NULL)
		abort();
	memcpy(buf, data, size);
	fuzz_counter(buf, size);
	memcpy(str, data, size);
	str[size] = '\0';
	fuzz_strings(str);
	free(buf);
	free(str);
	return 0;
}

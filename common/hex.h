/* hex: hexadecimal digits to bytes and back, for tokens (common/wire.c), keys, nonces and
 * MACs (common/auth.c). Pure; any layer may call it. Output is always lower case; input is
 * read in either case, and hex_is_lower says whether a string is the lower-case form the
 * protocol sends. */
#ifndef BM_HEX_H
#define BM_HEX_H

#include <stddef.h>
#include <stdint.h>

/* The value of one hex digit (0-9, a-f, A-F), or -1. */
int hex_digit(char c);
/* Writes the n bytes at b as 2n lower-case digits and a NUL into out (2n + 1 bytes). */
void hex_encode(const uint8_t *b, size_t n, char *out);
/* Decodes the n digits at s (either case) into n / 2 bytes at out; -1 if n is odd or a
 * character is not a hex digit (out may then be partly written). */
int hex_decode(const char *s, size_t n, uint8_t *out);
/* 1 if s is exactly n lower-case hex digits followed by its NUL, else 0. */
int hex_is_lower(const char *s, size_t n);

#endif

/* util: small parsers for user input (rates, numbers), the interrupt flag, secure random. */
#ifndef BM_UTIL_H
#define BM_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define UTIL_WUR __attribute__((warn_unused_result))

/* Parses a rate like "20mbit", "1.5gbit", "800kbit", "20M" or a bare number of bit/s.
 * Returns 0 and bits per second in *bps, or -1 if malformed or outside (0, 1e12]. */
UTIL_WUR int util_parse_rate(const char *s, uint64_t *bps);
/* Parses a decimal number within [lo, hi]; rejects trailing garbage. */
UTIL_WUR int util_parse_double(const char *s, double lo, double hi, double *out);
UTIL_WUR int util_parse_long(const char *s, long lo, long hi, long *out);

/* Installs SIGINT/SIGTERM/SIGHUP handlers that only set a flag (SA_RESETHAND: a second
 * Ctrl-C kills); util_interrupted() returns the signal number or 0. */
void util_catch_interrupts(void);
int util_interrupted(void);

/* Cryptographically secure random bytes (the kernel's getrandom); -1 if it failed. */
UTIL_WUR int util_random(void *buf, size_t len);

/* Formats v rounded to dec decimals with trailing zeros trimmed, always with '.' as the
 * decimal point (whatever LC_NUMERIC says) and never "-0": numbers for JSON and Prometheus.
 * Returns the rounded value. */
double util_format_decimal(double v, int dec, char *buf, size_t len);

/* Formats an epoch-ns wall-clock time as ISO 8601 UTC with milliseconds. */
void util_iso8601(int64_t real_ns, char *buf, size_t len);

#endif

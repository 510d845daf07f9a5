/* util: input parsers, interrupt flag and random bytes shared by both programs. */
#include "common/util.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <strings.h>
#include <time.h>

#include <sys/random.h>
#include <sys/types.h>

/* The only process-wide mutable state here: written by the signal handler, read by loops. */
static volatile sig_atomic_t util_signal;

int util_parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v;

	if (s == NULL || *s == '\0')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !isfinite(v) || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int util_parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	if (s == NULL || *s == '\0')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int util_parse_rate(const char *s, uint64_t *bps)
{
	static const struct {
		const char *suffix;
		double mult;
	} units[] = {
		{ "", 1 },      { "bit", 1 },     { "k", 1e3 },  { "kbit", 1e3 }, { "m", 1e6 },
		{ "mbit", 1e6 }, { "g", 1e9 },     { "gbit", 1e9 }, { "bps", 1 },
	};
	char *end;
	double v;

	if (s == NULL || *s == '\0')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || !isfinite(v) || v <= 0 || end == s)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcasecmp(end, units[i].suffix) == 0) {
			double r = v * units[i].mult;

			if (r < 1 || r > 1e12)
				return -1;
			*bps = (uint64_t)llround(r);
			return 0;
		}
	}
	return -1;
}

static void util_on_signal(int sig)
{
	util_signal = sig;
}

void util_catch_interrupts(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = util_on_signal;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

int util_interrupted(void)
{
	return util_signal;
}

/* The kernel's generator (getrandom(2), which also seeds OpenSSL's), not RAND_bytes: the
 * first RAND_bytes sets up OpenSSL's providers and DRBGs, about 2.2 MiB of resident library
 * pages and heap that a daemon without TLS would otherwise carry from its first token on
 * (docs/scale.md, "Memory"). Above 256 bytes a read may come back short or be interrupted. */
int util_random(void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = getrandom(p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

double util_format_decimal(double v, int dec, char *buf, size_t len)
{
	double rv = v;

	if (fabs(v) >= 1e15) {
		/* too large for fixed decimals (and v × 10^dec could overflow) */
		snprintf(buf, len, "%.17g", v);
	} else {
		double scale = pow(10.0, dec);

		rv = round(v * scale) / scale;
		if (rv == 0.0)
			rv = 0.0; /* no "-0" */
		snprintf(buf, len, "%.*f", dec, rv);
		if (dec > 0 && strpbrk(buf, ".,") != NULL) {
			size_t n = strlen(buf);

			while (n > 0 && buf[n - 1] == '0')
				buf[--n] = '\0';
			if (n > 0 && (buf[n - 1] == '.' || buf[n - 1] == ','))
				buf[--n] = '\0';
		}
	}
	for (char *p = buf; *p; p++) /* a decimal comma from LC_NUMERIC would break the format */
		if (*p == ',')
			*p = '.';
	return rv;
}

void util_iso8601(int64_t real_ns, char *buf, size_t len)
{
	time_t sec = (time_t)(real_ns / 1000000000LL);
	struct tm tm;
	char tmp[32];

	gmtime_r(&sec, &tm);
	strftime(tmp, sizeof(tmp), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03dZ", tmp, (int)((real_ns / 1000000LL) % 1000));
}

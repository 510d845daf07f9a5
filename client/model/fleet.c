/* fleet: the server-list parsers and the pure choice among raced candidates (the race itself is
 * client/run/fleetrace.c). */
#include "client/model/fleet.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/fileio.h"
#include "common/lines.h"
#include "common/log.h"
#include "common/stats.h"
#include "common/util.h"

#define FLEET_ENTRY_MAX (FLEET_HOST_MAX + 8) /* "[" host "]:65535" */
#define FLEET_SCOPE_MAX 15                   /* IFNAMSIZ - 1 */

void fleet_init(struct fleet *f)
{
	memset(f, 0, sizeof(*f));
	f->chosen = -1;
	f->timing = fleet_timing_default();
}

struct fleet_timing fleet_timing_default(void)
{
	struct fleet_timing t = { .samples = 5, .spacing_ms = 100, .timeout_ms = 2000 };

	return t;
}

/* Writes one sentence into err; returns -1 for the caller to return. */
static int fleet_fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fleet_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

void fleet_note(struct fleet_candidate *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->error, sizeof(c->error), fmt, ap);
	va_end(ap);
}

/* Sets the reason fleet_split gives; returns -1. */
static int fleet_why(const char **why, const char *reason)
{
	*why = reason;
	return -1;
}

static int fleet_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Copies untrusted text for an error sentence: bounded, control bytes as '?'. */
static void fleet_quote(const char *s, size_t n, char *out, size_t outlen)
{
	size_t o = 0, i;

	for (i = 0; i < n && o + 4 < outlen && o < 40; i++)
		out[o++] = (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f ? s[i] : '?';
	if (i < n && o + 4 < outlen)
		for (int k = 0; k < 3; k++)
			out[o++] = '.';
	out[o] = '\0';
}

/* A host name or IPv4 address: letters, digits, '-', '.', '_'; getaddrinfo judges the rest. */
static int fleet_valid_name(const char *h)
{
	size_t n = strlen(h);

	if (n == 0 || n > 253 || h[0] == '-')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)h[i]) && h[i] != '-' && h[i] != '.' && h[i] != '_')
			return 0;
	return 1;
}

/* An IPv6 address, optionally with "%scope" (an interface name or number). */
static int fleet_valid_v6(const char *h)
{
	const char *pct = strchr(h, '%');
	size_t alen = pct ? (size_t)(pct - h) : strlen(h);
	char addr[INET6_ADDRSTRLEN];
	struct in6_addr a6;

	if (alen == 0 || alen >= sizeof(addr))
		return 0;
	memcpy(addr, h, alen);
	addr[alen] = '\0';
	if (inet_pton(AF_INET6, addr, &a6) != 1)
		return 0;
	if (pct == NULL)
		return 1;
	if (strlen(pct + 1) == 0 || strlen(pct + 1) > FLEET_SCOPE_MAX)
		return 0;
	for (const char *s = pct + 1; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' && *s != '.')
			return 0;
	return 1;
}

/* Parses the decimal port at s (digits only). */
static int fleet_port(const char *s, uint16_t *port)
{
	long v;

	if (!isdigit((unsigned char)s[0]) || util_parse_long(s, 1, 65535, &v) < 0)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

/* Splits the entry in buf (NUL-terminated, trimmed) into host and port; 0, or -1 with a
 * fragment of a sentence in why. */
static int fleet_split(char *buf, char **host, uint16_t *port, const char **why)
{
	char *colon;

	if (buf[0] == '[') {
		char *close = strchr(buf, ']');

		if (close == NULL)
			return fleet_why(why, "missing ']'");
		*close = '\0';
		*host = buf + 1;
		if (!fleet_valid_v6(*host))
			return fleet_why(why, "not an IPv6 address inside [ ]");
		if (close[1] == '\0')
			return 0;
		if (close[1] != ':')
			return fleet_why(why, "unexpected text after ']'");
		return fleet_port(close + 2, port) < 0 ? fleet_why(why, "invalid port (1-65535)") : 0;
	}
	*host = buf;
	colon = strchr(buf, ':');
	if (colon != NULL && strchr(colon + 1, ':') != NULL) /* a bare IPv6 address: no port */
		return fleet_valid_v6(buf) ? 0 : fleet_why(why, "not a valid IPv6 address");
	if (colon != NULL) {
		*colon = '\0';
		if (fleet_port(colon + 1, port) < 0)
			return fleet_why(why, "invalid port (1-65535)");
	}
	return fleet_valid_name(buf) ? 0 : fleet_why(why, "not a host name or address");
}

static int fleet_find(const struct fleet *f, const char *host, uint16_t port)
{
	for (int i = 0; i < f->n; i++)
		if (f->cand[i].port == port && strcasecmp(f->cand[i].host, host) == 0)
			return i;
	return -1;
}

int fleet_add_entry(struct fleet *f, const char *s, size_t n, uint16_t default_port, char *err,
		    size_t errlen)
{
	char buf[FLEET_ENTRY_MAX + 1], q[48], *host = NULL;
	const char *why = NULL;
	uint16_t port = default_port;
	struct fleet_candidate *c;

	while (n > 0 && fleet_blank(s[0])) {
		s++;
		n--;
	}
	while (n > 0 && fleet_blank(s[n - 1]))
		n--;
	fleet_quote(s, n, q, sizeof(q));
	if (n == 0)
		return fleet_fail(err, errlen, "empty server entry");
	if (n > FLEET_ENTRY_MAX)
		return fleet_fail(err, errlen, "server entry \"%s\" longer than %d bytes", q,
				  FLEET_ENTRY_MAX);
	if (memchr(s, '\0', n) != NULL)
		return fleet_fail(err, errlen, "NUL byte in server entry \"%s\"", q);
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (fleet_split(buf, &host, &port, &why) < 0)
		return fleet_fail(err, errlen, "bad server \"%s\": %s", q, why);
	if (fleet_find(f, host, port) >= 0)
		return fleet_fail(err, errlen, "server \"%s\" is listed twice", q);
	if (f->n >= FLEET_MAX)
		return fleet_fail(err, errlen, "more than %d servers", FLEET_MAX);
	if (strlen(host) >= sizeof(c->host)) /* the checks above allow 253 bytes at most */
		return fleet_fail(err, errlen, "server \"%s\" is too long", q);
	c = &f->cand[f->n++];
	memset(c, 0, sizeof(*c));
	memcpy(c->host, host, strlen(host) + 1);
	c->port = port;
	c->median_ms = c->min_ms = NAN;
	return 0;
}

int fleet_parse_list(struct fleet *f, const char *list, uint16_t default_port, char *err,
		     size_t errlen)
{
	const char *s = list;

	for (;;) {
		const char *comma = strchr(s, ',');
		size_t n = comma ? (size_t)(comma - s) : strlen(s);

		if (fleet_add_entry(f, s, n, default_port, err, errlen) < 0)
			return -1;
		if (comma == NULL)
			return 0;
		s = comma + 1;
	}
}

/* One line (n bytes, no newline) of a server list: an entry, a comment or nothing. */
static int fleet_line(struct fleet *f, const char *s, size_t n, int line, uint16_t default_port,
		      char *err, size_t errlen)
{
	char why[FLEET_ERR_MAX];
	const char *hash;
	size_t i = 0;

	if (n > FLEET_MAX_LINE)
		return fleet_fail(err, errlen, "%d: line longer than %d bytes", line, FLEET_MAX_LINE);
	hash = memchr(s, '#', n); /* no host contains '#': a comment starts anywhere */
	if (hash != NULL)
		n = (size_t)(hash - s);
	while (i < n && fleet_blank(s[i]))
		i++;
	if (i == n)
		return 0;
	if (fleet_add_entry(f, s, n, default_port, why, sizeof(why)) < 0)
		return fleet_fail(err, errlen, "%d: %s", line, why);
	return 0;
}

int fleet_parse_text(struct fleet *f, const char *text, size_t len, uint16_t default_port,
		     char *err, size_t errlen)
{
	struct lines it;
	const char *s;
	size_t n;

	lines_init(&it, text, len);
	while (lines_next(&it, &s, &n))
		if (fleet_line(f, s, n, it.line, default_port, err, errlen) < 0)
			return -1;
	if (f->n == 0)
		return fleet_fail(err, errlen, "no servers listed");
	return 0;
}

int fleet_load_file(struct fleet *f, const char *path, uint16_t default_port, char *err,
		    size_t errlen)
{
	char *buf = malloc(FLEET_MAX_FILE + 1), why[FLEET_ERR_MAX];
	int fd, rc = -1;
	ssize_t len;

	if (buf == NULL)
		return fleet_fail(err, errlen, "%s: out of memory", path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		goto out;
	}
	len = fileio_read_bounded(fd, buf, FLEET_MAX_FILE);
	if (len < 0 && errno == EFBIG)
		snprintf(err, errlen, "%s: larger than %d KiB", path, FLEET_MAX_FILE / 1024);
	else if (len < 0)
		snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
	else if (fleet_parse_text(f, buf, (size_t)len, default_port, why, sizeof(why)) < 0)
		snprintf(err, errlen, "%s:%s%s", path, isdigit((unsigned char)why[0]) ? "" : " ",
			 why);
	else
		rc = 0;
	if (close(fd) < 0 && rc == 0)
		log_warn("closing %s", path);
out:
	free(buf);
	return rc;
}

void fleet_entry_str(const struct fleet_candidate *c, char *buf, size_t len)
{
	int v6 = strchr(c->host, ':') != NULL;

	snprintf(buf, len, "%s%s%s:%u", v6 ? "[" : "", c->host, v6 ? "]" : "", c->port);
}

double fleet_median(double *v, int n)
{
	if (n <= 0)
		return NAN;
	stats_sort(v, (size_t)n);
	if (n % 2)
		return v[n / 2];
	if (isinf(v[n / 2 - 1]) || isinf(v[n / 2]))
		return INFINITY;
	return (v[n / 2 - 1] + v[n / 2]) / 2;
}

void fleet_summarise(struct fleet_candidate *c)
{
	double v[FLEET_SAMPLES_MAX];
	int n = c->attempts < FLEET_SAMPLES_MAX ? c->attempts : FLEET_SAMPLES_MAX;
	char last[sizeof(c->error)];

	c->samples = c->failed = 0;
	c->min_ms = NAN;
	for (int i = 0; i < n; i++) {
		v[i] = c->sample_ms[i];
		if (isinf(v[i])) {
			c->failed++;
			continue;
		}
		c->samples++;
		if (isnan(c->min_ms) || v[i] < c->min_ms)
			c->min_ms = v[i];
	}
	c->median_ms = fleet_median(v, n);
	if (isfinite(c->median_ms)) {
		c->error[0] = '\0';
		return;
	}
	c->median_ms = NAN;
	if (c->samples > 0) { /* most handshakes failed: flaky counts as unreachable */
		snprintf(last, sizeof(last), "%s", c->error);
		fleet_note(c, "%d of %d handshakes failed (%s)", c->failed, n,
			   last[0] ? last : "no reason");
	} else if (c->error[0] == '\0') {
		fleet_note(c, "not measured");
	}
}

int fleet_choose(const struct fleet *f)
{
	int best = -1;
	double best_us = 0;

	for (int i = 0; i < f->n; i++) {
		double us;

		if (!isfinite(f->cand[i].median_ms))
			continue;
		/* Compare what the report shows, so equal-looking medians keep the listed order. */
		us = round(f->cand[i].median_ms * 1000);
		if (best < 0 || us < best_us) {
			best = i;
			best_us = us;
		}
	}
	return best;
}

void fleet_unreachable_sentence(const struct fleet *f, char *buf, size_t len)
{
	size_t o;

	if (f->n == 1) {
		char name[FLEET_HOST_MAX + 16];

		fleet_entry_str(&f->cand[0], name, sizeof(name));
		snprintf(buf, len, "the server %s could not be reached (%s)", name,
			 f->cand[0].error[0] ? f->cand[0].error : "unreachable");
		return;
	}
	o = (size_t)snprintf(buf, len, "none of the %d servers could be reached:", f->n);
	for (int i = 0; i < f->n && o < len; i++) {
		char name[FLEET_HOST_MAX + 16];

		fleet_entry_str(&f->cand[i], name, sizeof(name));
		o += (size_t)snprintf(buf + o, len - o, "%s %s (%s)", i ? "," : "", name,
				      f->cand[i].error[0] ? f->cand[i].error : "unreachable");
	}
	if (o >= len && len > 4)
		memcpy(buf + len - 4, "...", 4); /* cut short, and say so */
}

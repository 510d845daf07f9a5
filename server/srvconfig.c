/* srvconfig: the table of bloatmeterd's options (name, short flag, range, how a value is
 * checked and stored), the configuration file parser on top of it, and the merge of defaults,
 * file and command line. */
#include "server/srvconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/dns.h"
#include "common/fileio.h"
#include "common/lines.h"
#include "common/util.h"
#include "server/http.h"
#include "server/limits.h"
#include "server/weblisten.h"
#include "server/worker.h"

struct srvconfig_option {
	const char *name;  /* long flag and file key */
	char short_flag;   /* 0 = none */
	long lo, hi;       /* range of a numeric value */
	const char *range; /* what a valid value is, for the error sentence */
	/* Checks a string value (0 = valid); NULL: the value is a number in lo..hi. */
	int (*check)(const char *value);
	void (*store)(struct server_config *cfg, long v, const char *value);
};

/* A bind address: a host name or an IPv4/IPv6 literal, maybe with a %scope; the resolver
 * decides the rest at bind time. */
static int check_bind(const char *value)
{
	size_t n = strlen(value);

	if (n == 0 || n >= sizeof(((struct server_config *)NULL)->bind_buf))
		return -1;
	for (const char *c = value; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || strchr(".:-_%", *c) != NULL))
			return -1;
	return 0;
}

static int check_zone(const char *value)
{
	struct dns_zone z;

	return dns_zone_init(&z, value) < 0 ? -1 : 0;
}

static void store_port(struct server_config *cfg, long v, const char *value)
{
	cfg->port = (uint16_t)v;
}

static void store_bind(struct server_config *cfg, long v, const char *value)
{
	snprintf(cfg->bind_buf, sizeof(cfg->bind_buf), "%s", value);
	cfg->bind_addr = cfg->bind_buf;
}

static void store_max_sessions(struct server_config *cfg, long v, const char *value)
{
	cfg->max_sessions = (int)v;
}

static void store_max_per_client(struct server_config *cfg, long v, const char *value)
{
	cfg->max_sessions_per_client = (int)v;
}

static void store_max_flows(struct server_config *cfg, long v, const char *value)
{
	cfg->max_flows = (int)v;
}

static void store_max_duration(struct server_config *cfg, long v, const char *value)
{
	cfg->max_duration_s = (int)v;
}

static void store_dns_port(struct server_config *cfg, long v, const char *value)
{
	cfg->dns_port = (uint16_t)v;
	cfg->dns_port_set = 1;
}

static void store_dns_zone(struct server_config *cfg, long v, const char *value)
{
	snprintf(cfg->zone_buf, sizeof(cfg->zone_buf), "%s", value);
	cfg->dns_zone = cfg->zone_buf;
}

static void store_verbose(struct server_config *cfg, long v, const char *value)
{
	cfg->verbose = (int)v;
}

/* A user name as Debian's adduser accepts it by default: 1-32 letters, digits, '.', '_' or
 * '-', not starting with '-' (the account itself is looked up at start-up, not here). */
static int check_user(const char *value)
{
	size_t n = strlen(value);

	if (n == 0 || n > 32 || value[0] == '-')
		return -1;
	for (const char *c = value; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || strchr("._-", *c) != NULL))
			return -1;
	return 0;
}

static int check_yes_no(const char *value)
{
	return strcmp(value, "yes") == 0 || strcmp(value, "no") == 0 ? 0 : -1;
}

static void store_user(struct server_config *cfg, long v, const char *value)
{
	snprintf(cfg->user, sizeof(cfg->user), "%s", value);
}

static void store_allow_root(struct server_config *cfg, long v, const char *value)
{
	cfg->allow_root = strcmp(value, "yes") == 0;
}

static int check_rate(const char *value)
{
	uint64_t bps;

	return limits_parse_rate(value, &bps);
}

static void store_max_rate(struct server_config *cfg, long v, const char *value)
{
	(void)limits_parse_rate(value, &cfg->max_rate_bps);
}

static void store_max_probe_rate(struct server_config *cfg, long v, const char *value)
{
	cfg->max_probe_rate = (int)v;
}

static void store_handshake_timeout(struct server_config *cfg, long v, const char *value)
{
	cfg->handshake_timeout_s = (int)v;
}

static void store_idle_timeout(struct server_config *cfg, long v, const char *value)
{
	cfg->idle_timeout_s = (int)v;
}

/* Only the name's form: the interface must exist when the daemon starts, not when a file
 * is checked (it may be checked on another host, or before the interface is up). */
static int check_ifname(const char *value)
{
	return limits_ifname_ok(value) ? 0 : -1;
}

static void store_admission_if(struct server_config *cfg, long v, const char *value)
{
	snprintf(cfg->admission_if, sizeof(cfg->admission_if), "%s", value);
}

static void store_admission_max_rate(struct server_config *cfg, long v, const char *value)
{
	(void)limits_parse_rate(value, &cfg->admission_max_rate_bps);
}

/* A file path for psk-file, tls-cert or tls-key: only its form here (1-255 bytes, no control
 * characters); the file is opened at start-up and by -n, so a file can be checked elsewhere. */
static int check_path(const char *value)
{
	size_t n = strlen(value);

	if (n == 0 || n >= sizeof(((struct server_config *)NULL)->psk_file))
		return -1;
	for (const char *c = value; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return -1;
	return 0;
}

static void store_psk_file(struct server_config *cfg, long v, const char *value)
{
	snprintf(cfg->psk_file, sizeof(cfg->psk_file), "%s", value);
}

static void store_tls_cert(struct server_config *cfg, long v, const char *value)
{
	snprintf(cfg->tls_cert, sizeof(cfg->tls_cert), "%s", value);
}

static void store_tls_key(struct server_config *cfg, long v, const char *value)
{
	snprintf(cfg->tls_key, sizeof(cfg->tls_key), "%s", value);
}

static void store_tls_required(struct server_config *cfg, long v, const char *value)
{
	cfg->tls_required = strcmp(value, "yes") == 0;
}

static void store_http_port(struct server_config *cfg, long v, const char *value)
{
	cfg->http_port = (uint16_t)v;
}

/* The same form as bind (check_bind); the buffers are the same size. */
static void store_http_bind(struct server_config *cfg, long v, const char *value)
{
	snprintf(cfg->http_bind, sizeof(cfg->http_bind), "%s", value);
}

static void store_web_port(struct server_config *cfg, long v, const char *value)
{
	cfg->web_port = (uint16_t)v;
}

static void store_web_bind(struct server_config *cfg, long v, const char *value)
{
	snprintf(cfg->web_bind, sizeof(cfg->web_bind), "%s", value);
}

static void store_web_max_conns(struct server_config *cfg, long v, const char *value)
{
	cfg->web_max_conns = (int)v;
}

static void store_web_tls(struct server_config *cfg, long v, const char *value)
{
	cfg->web_tls = strcmp(value, "yes") == 0;
}

static void store_results_log(struct server_config *cfg, long v, const char *value)
{
	snprintf(cfg->results_log, sizeof(cfg->results_log), "%s", value);
}

static void store_http_max_conns(struct server_config *cfg, long v, const char *value)
{
	cfg->http_max_conns = (int)v;
}

static void store_workers(struct server_config *cfg, long v, const char *value)
{
	cfg->workers = (int)v;
}

static void store_reflector_priority(struct server_config *cfg, long v, const char *value)
{
	cfg->reflector_priority = (int)v;
}

/* Indexed by enum srvconfig_opt. */
static const struct srvconfig_option srvconfig_options[SRVOPT_COUNT] = {
	[SRVOPT_PORT] = { "port", 'p', 1, 65535, "1-65535", NULL, store_port },
	[SRVOPT_BIND] = { "bind", 'b', 0, 0, "an IPv4 or IPv6 address or a host name", check_bind,
			  store_bind },
	[SRVOPT_MAX_SESSIONS] = { "max-sessions", 0, 1, 100000, "1-100000", NULL,
				  store_max_sessions },
	[SRVOPT_MAX_PER_CLIENT] = { "max-sessions-per-client", 0, 1, 100000, "1-100000", NULL,
				    store_max_per_client },
	[SRVOPT_MAX_FLOWS] = { "max-flows", 0, 1, 1024, "1-1024", NULL, store_max_flows },
	[SRVOPT_MAX_DURATION] = { "max-duration", 0, 5, 86400, "5-86400 s", NULL,
				  store_max_duration },
	[SRVOPT_DNS_PORT] = { "dns-port", 0, 0, 65535, "0-65535, 0 = off", NULL, store_dns_port },
	[SRVOPT_DNS_ZONE] = { "dns-zone", 0, 0, 0,
			      "a DNS name: labels of 1-63 letters, digits, '-' or '_', at most 253 "
			      "characters",
			      check_zone, store_dns_zone },
	[SRVOPT_VERBOSE] = { "verbose", 'v', 0, 2, "0-2: warnings, information, debug", NULL,
			     store_verbose },
	[SRVOPT_USER] = { "user", 0, 0, 0,
			  "a user name: 1-32 letters, digits, '.', '_' or '-', not starting with '-'",
			  check_user, store_user },
	[SRVOPT_ALLOW_ROOT] = { "allow-root", 0, 0, 0, "yes or no", check_yes_no,
				store_allow_root },
	[SRVOPT_MAX_RATE] = { "max-rate", 0, 0, 0,
			      "bit/s with an optional k, M or G (20M), at most 1000G; 0 = none",
			      check_rate, store_max_rate },
	[SRVOPT_MAX_PROBE_RATE] = { "max-probe-rate", 0, 10, 1000000,
				    "10-1000000 probes/s", NULL, store_max_probe_rate },
	[SRVOPT_HANDSHAKE_TIMEOUT] = { "handshake-timeout", 0, 1, 300, "1-300 s", NULL,
				       store_handshake_timeout },
	[SRVOPT_IDLE_TIMEOUT] = { "idle-timeout", 0, 1, 86400, "1-86400 s", NULL,
				  store_idle_timeout },
	[SRVOPT_ADMISSION_IF] = { "admission-interface", 0, 0, 0,
				  "an interface name: 1-15 bytes, no '/', ':' or blank",
				  check_ifname, store_admission_if },
	[SRVOPT_ADMISSION_MAX_RATE] = { "admission-max-rate", 0, 0, 0,
					"bit/s with an optional k, M or G (900M), at most 1000G; "
					"0 = none",
					check_rate, store_admission_max_rate },
	[SRVOPT_PSK_FILE] = { "psk-file", 0, 0, 0, "a file path of 1-255 bytes", check_path,
			      store_psk_file },
	[SRVOPT_TLS_CERT] = { "tls-cert", 0, 0, 0, "a file path of 1-255 bytes", check_path,
			      store_tls_cert },
	[SRVOPT_TLS_KEY] = { "tls-key", 0, 0, 0, "a file path of 1-255 bytes", check_path,
			     store_tls_key },
	[SRVOPT_TLS_REQUIRED] = { "tls-required", 0, 0, 0, "yes or no", check_yes_no,
				  store_tls_required },
	[SRVOPT_HTTP_PORT] = { "http-port", 0, 0, 65535, "0-65535, 0 = off", NULL,
			       store_http_port },
	[SRVOPT_HTTP_BIND] = { "http-bind", 0, 0, 0, "an IPv4 or IPv6 address or a host name",
			       check_bind, store_http_bind },
	[SRVOPT_HTTP_MAX_CONNS] = { "http-max-connections", 0, 1, 100000, "1-100000", NULL,
				    store_http_max_conns },
	[SRVOPT_WORKERS] = { "workers", 0, 0, WORKER_MAX,
			     "0-64: worker threads; 0 = one per online CPU, at most 8", NULL,
			     store_workers },
	[SRVOPT_REFLECTOR_PRIORITY] = { "reflector-priority", 0, 0, 99,
					"0-99: the reflector thread's SCHED_FIFO priority; 0 = off",
					NULL, store_reflector_priority },
	[SRVOPT_WEB_PORT] = { "web-port", 0, 0, 65535, "0-65535, 0 = off", NULL, store_web_port },
	[SRVOPT_WEB_BIND] = { "web-bind", 0, 0, 0, "an IPv4 or IPv6 address or a host name",
			      check_bind, store_web_bind },
	[SRVOPT_WEB_MAX_CONNS] = { "web-max-connections", 0, 1, 100000, "1-100000", NULL,
				   store_web_max_conns },
	[SRVOPT_WEB_TLS] = { "web-tls", 0, 0, 0, "yes or no", check_yes_no, store_web_tls },
	[SRVOPT_RESULTS_LOG] = { "results-log", 0, 0, 0, "a file path of 1-255 bytes", check_path,
				 store_results_log },
};

const char *srvconfig_option_name(enum srvconfig_opt opt)
{
	return srvconfig_options[opt].name;
}

char srvconfig_option_short(enum srvconfig_opt opt)
{
	return srvconfig_options[opt].short_flag;
}

int srvconfig_find_short(int c)
{
	for (int i = 0; i < SRVOPT_COUNT; i++)
		if (c != 0 && srvconfig_options[i].short_flag == c)
			return i;
	return -1;
}

/* The option named by the n bytes at name, or -1. */
static int srvconfig_find(const char *name, size_t n)
{
	for (int i = 0; i < SRVOPT_COUNT; i++)
		if (strlen(srvconfig_options[i].name) == n &&
		    memcmp(srvconfig_options[i].name, name, n) == 0)
			return i;
	return -1;
}

/* Copies untrusted text into out for an error sentence: bounded, control bytes as '?'. */
static void srvconfig_quote(const char *s, char *out, size_t outlen)
{
	size_t n = 0;

	for (; *s && n + 4 < outlen && n < 40; s++)
		out[n++] = (unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7f ? *s : '?';
	if (*s && n + 4 < outlen)
		for (int i = 0; i < 3; i++)
			out[n++] = '.';
	out[n] = '\0';
}

void srvconfig_defaults(struct server_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->port = SERVER_DEFAULT_PORT;
	cfg->max_sessions = 16;
	cfg->max_sessions_per_client = 4;
	cfg->max_flows = 32;
	cfg->max_duration_s = 300;
	cfg->dns_port = SERVER_DEFAULT_PORT + 1;
	cfg->max_probe_rate = LIMITS_DEFAULT_PROBE_RATE;
	cfg->handshake_timeout_s = LIMITS_DEFAULT_HANDSHAKE_S;
	cfg->idle_timeout_s = LIMITS_DEFAULT_IDLE_S;
	snprintf(cfg->http_bind, sizeof(cfg->http_bind), "%s", HTTP_DEFAULT_BIND);
	cfg->http_max_conns = HTTP_DEFAULT_MAX_CONNS;
	cfg->web_max_conns = WEB_DEFAULT_MAX_CONNS;
}

/* Values that follow others: the DNS port is the one after the control port unless given, so
 * one firewall rule pair covers both. */
static void srvconfig_derive(struct server_config *cfg)
{
	if (!cfg->dns_port_set)
		cfg->dns_port = cfg->port < 65535 ? (uint16_t)(cfg->port + 1) : 0;
}

int srvconfig_set(struct server_config *cfg, enum srvconfig_opt opt, const char *value, char *err,
		  size_t errlen)
{
	const struct srvconfig_option *o = &srvconfig_options[opt];
	char q[48];
	long v = 0;

	if (o->check ? o->check(value) < 0 : util_parse_long(value, o->lo, o->hi, &v) < 0) {
		srvconfig_quote(value, q, sizeof(q));
		snprintf(err, errlen, "invalid %s \"%s\" (%s)", o->name, q, o->range);
		return -1;
	}
	o->store(cfg, v, value);
	srvconfig_derive(cfg);
	return 0;
}

/* Trims blanks from both ends of s in place; returns the new start. */
static char *srvconfig_trim(char *s)
{
	size_t n = strlen(s), skip = lines_blanks(s, n);

	s += skip;
	s[lines_rtrim(s, n - skip)] = '\0';
	return s;
}

_Static_assert(SRVOPT_COUNT <= 64, "srvconfig_parse keeps one bit per option in a uint64_t");

/* One line (n bytes, no newline) of the file. seen: the keys already set in this file. */
static int srvconfig_line(const char *text, size_t n, int line, struct server_config *cfg,
			  uint64_t *seen, char *err, size_t errlen)
{
	char buf[SRVCONFIG_MAX_LINE + 1], q[48], why[SRVCONFIG_ERR_MAX];
	char *key, *value, *eq;
	int opt;

	if (n > SRVCONFIG_MAX_LINE) {
		snprintf(err, errlen, "%d: line longer than %d bytes", line, SRVCONFIG_MAX_LINE);
		return -1;
	}
	if (memchr(text, '\0', n) != NULL) {
		snprintf(err, errlen, "%d: NUL byte in the line", line);
		return -1;
	}
	n = lines_uncomment(text, n);
	memcpy(buf, text, n);
	buf[n] = '\0';
	key = srvconfig_trim(buf);
	if (*key == '\0')
		return 0;
	eq = strchr(key, '=');
	if (eq == NULL) {
		srvconfig_quote(key, q, sizeof(q));
		snprintf(err, errlen, "%d: missing \"=\" in \"%s\" (lines are key = value)", line,
			 q);
		return -1;
	}
	*eq = '\0';
	key = srvconfig_trim(key);
	value = srvconfig_trim(eq + 1);
	if (*key == '\0') {
		snprintf(err, errlen, "%d: missing key before \"=\"", line);
		return -1;
	}
	opt = srvconfig_find(key, strlen(key));
	if (opt < 0) {
		srvconfig_quote(key, q, sizeof(q));
		snprintf(err, errlen, "%d: unknown key \"%s\"", line, q);
		return -1;
	}
	if (*seen & (UINT64_C(1) << opt)) {
		snprintf(err, errlen, "%d: repeated key \"%s\"", line, srvconfig_options[opt].name);
		return -1;
	}
	*seen |= UINT64_C(1) << opt;
	if (*value == '\0') {
		snprintf(err, errlen, "%d: empty value for \"%s\"", line,
			 srvconfig_options[opt].name);
		return -1;
	}
	if (srvconfig_set(cfg, opt, value, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "%d: %s", line, why);
		return -1;
	}
	return 0;
}

int srvconfig_parse(const char *text, size_t len, struct server_config *cfg, char *err,
		    size_t errlen)
{
	uint64_t seen = 0; /* a bit per option */
	struct lines it;
	const char *s;
	size_t n;

	lines_init(&it, text, len);
	while (lines_next(&it, &s, &n))
		if (srvconfig_line(s, n, it.line, cfg, &seen, err, errlen) < 0)
			return -1;
	return 0;
}

int srvconfig_load(const char *path, struct server_config *cfg, char *err, size_t errlen)
{
	char *buf = malloc(SRVCONFIG_MAX_FILE + 1), why[SRVCONFIG_ERR_MAX];
	int fd, rc = -1;
	ssize_t len;

	if (buf == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		free(buf);
		return -1;
	}
	len = fileio_read_bounded(fd, buf, SRVCONFIG_MAX_FILE);
	if (len < 0 && errno == EFBIG)
		snprintf(err, errlen, "%s: larger than %d KiB", path, SRVCONFIG_MAX_FILE / 1024);
	else if (len < 0)
		snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
	else if (srvconfig_parse(buf, (size_t)len, cfg, why, sizeof(why)) < 0)
		snprintf(err, errlen, "%s:%s", path, why);
	else
		rc = 0;
	close(fd);
	free(buf);
	return rc;
}

int srvconfig_build(const char *path, int optional, const char *const *overrides,
		    struct server_config *cfg, char *err, size_t errlen)
{
	srvconfig_defaults(cfg);
	cfg->config_path = path;
	cfg->config_optional = optional;
	cfg->overrides = overrides;
	if (path != NULL && !(optional && access(path, F_OK) < 0 && errno == ENOENT)) {
		if (srvconfig_load(path, cfg, err, errlen) < 0)
			return -1;
		cfg->config_loaded = 1;
	}
	for (int i = 0; overrides && i < SRVOPT_COUNT; i++)
		if (overrides[i] != NULL && srvconfig_set(cfg, i, overrides[i], err, errlen) < 0)
			return -1;
	srvconfig_derive(cfg);
	return 0;
}

void srvconfig_copy(struct server_config *dst, const struct server_config *src)
{
	*dst = *src;
	if (src->bind_addr == src->bind_buf)
		dst->bind_addr = dst->bind_buf;
	if (src->dns_zone == src->zone_buf)
		dst->dns_zone = dst->zone_buf;
}

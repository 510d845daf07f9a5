/* srvconfig: bloatmeterd's options — one table shared by the command line and the
 * configuration file, so both validate a value the same way — and the bounded, I/O-free parser
 * of that file (key = value lines, see docs/bloatmeterd.conf.md). */
#ifndef BM_SRVCONFIG_H
#define BM_SRVCONFIG_H

#include <stddef.h>

#include "server/config.h"

#define SRVCONFIG_DEFAULT_PATH "/etc/bloatmeter/bloatmeterd.conf"
#define SRVCONFIG_MAX_FILE (64 * 1024) /* bytes of a configuration file */
#define SRVCONFIG_MAX_LINE 1024        /* bytes of one line, without its newline */
#define SRVCONFIG_ERR_MAX 512          /* enough for any error sentence, path included */

/* The options, in the order of the table (and of the overrides array). */
enum srvconfig_opt {
	SRVOPT_PORT,
	SRVOPT_BIND,
	SRVOPT_MAX_SESSIONS,
	SRVOPT_MAX_PER_CLIENT,
	SRVOPT_MAX_FLOWS,
	SRVOPT_MAX_DURATION,
	SRVOPT_DNS_PORT,
	SRVOPT_DNS_ZONE,
	SRVOPT_VERBOSE,
	SRVOPT_USER,
	SRVOPT_ALLOW_ROOT,
	SRVOPT_MAX_RATE,
	SRVOPT_MAX_PROBE_RATE,
	SRVOPT_HANDSHAKE_TIMEOUT,
	SRVOPT_IDLE_TIMEOUT,
	SRVOPT_ADMISSION_IF,
	SRVOPT_ADMISSION_MAX_RATE,
	SRVOPT_PSK_FILE,
	SRVOPT_TLS_CERT,
	SRVOPT_TLS_KEY,
	SRVOPT_TLS_REQUIRED,
	SRVOPT_HTTP_PORT,
	SRVOPT_HTTP_BIND,
	SRVOPT_HTTP_MAX_CONNS,
	SRVOPT_WORKERS,
	SRVOPT_REFLECTOR_PRIORITY,
	SRVOPT_WEB_PORT,
	SRVOPT_WEB_BIND,
	SRVOPT_WEB_MAX_CONNS,
	SRVOPT_WEB_TLS,
	SRVOPT_RESULTS_LOG,
	SRVOPT_COUNT
};

/* The long flag and file key of option opt ("max-sessions"), and its short flag or 0. */
const char *srvconfig_option_name(enum srvconfig_opt opt);
char srvconfig_option_short(enum srvconfig_opt opt);
/* The option whose short flag is c, or -1. */
int srvconfig_find_short(int c);

/* The built-in defaults (no file, no flags). */
void srvconfig_defaults(struct server_config *cfg);
/* Validates value for opt and stores it in cfg; -1 with one sentence in err
 * ("invalid port \"70000\" (1-65535)") if it is out of range or malformed. */
int srvconfig_set(struct server_config *cfg, enum srvconfig_opt opt, const char *value, char *err,
		  size_t errlen);
/* Applies the configuration file text (len bytes, need not be NUL-terminated) on top of cfg.
 * -1 on the first bad line with "LINE: why" in err (cfg is then partly updated). Never reads
 * outside text. */
int srvconfig_parse(const char *text, size_t len, struct server_config *cfg, char *err,
		    size_t errlen);
/* Reads path (at most SRVCONFIG_MAX_FILE bytes) and parses it onto cfg; -1 with
 * "PATH:LINE: why" or "PATH: why" in err. */
int srvconfig_load(const char *path, struct server_config *cfg, char *err, size_t errlen);
/* The whole configuration: defaults, then the file at path (if optional, a missing file is
 * no error), then overrides (SRVOPT_COUNT values from the command line, NULL = not given).
 * Records path, optional and overrides in cfg so a reload can repeat this. 0 or -1 with one
 * sentence in err. */
int srvconfig_build(const char *path, int optional, const char *const *overrides,
		    struct server_config *cfg, char *err, size_t errlen);
/* Copies src to dst, keeping bind_addr and dns_zone pointing into dst's own storage. */
void srvconfig_copy(struct server_config *dst, const struct server_config *src);

#endif

/* options: the one table of bloatmeter's options (the measurement command's and the lab's).
 * getopt_long's array, the short-option string and the --help text are all built from it, and
 * tests/packaging/check_man.sh checks it against `bloatmeter --help` and bloatmeter(1).
 * What an option does with its value is cli.c's, one case per entry. */
#ifndef BM_OPTIONS_H
#define BM_OPTIONS_H

#include <getopt.h>
#include <stdio.h>

/* The options, in the order of the table and, within each scope, of the help. */
enum client_opt {
	CLIOPT_PORT,
	CLIOPT_VERSION4,
	CLIOPT_VERSION6,
	CLIOPT_BIND,
	CLIOPT_PARALLEL,
	CLIOPT_TIME,
	CLIOPT_INTERVAL,
	CLIOPT_PHASES,
	CLIOPT_CC,
	CLIOPT_IDLE,
	CLIOPT_GAP,
	CLIOPT_QUICK,
	CLIOPT_REVERSE,
	CLIOPT_BIDIR,
	CLIOPT_PROBE_SIZE,
	CLIOPT_PROBES,
	CLIOPT_PROBE_INTERVAL,
	CLIOPT_DSCP,
	CLIOPT_ECN,
	CLIOPT_DNS_RESOLVER,
	CLIOPT_PCAP_FILE,
	CLIOPT_JSON_STDOUT,
	CLIOPT_JSON,
	CLIOPT_LOG,
	CLIOPT_PROMETHEUS,
	CLIOPT_HTML,
	CLIOPT_FLENT,
	CLIOPT_QUIET,
	CLIOPT_VERBOSE,
	CLIOPT_HELP,
	CLIOPT_VERSION,
	CLIOPT_TLS,
	CLIOPT_TLS_LOAD,
	CLIOPT_CA,
	CLIOPT_INSECURE,
	CLIOPT_PSK_FILE,
	CLIOPT_SERVERS,
	CLIOPT_SERVER_LIST,
	CLIOPT_DOWN_RATE,
	CLIOPT_UP_RATE,
	CLIOPT_DOWN_BUFFER,
	CLIOPT_UP_BUFFER,
	CLIOPT_IPV6,
	CLIOPT_DOWN_LOSS,
	CLIOPT_UP_LOSS,
	CLIOPT_DAEMON,
	CLIOPT_QDISC,
	CLIOPT_ECN_MARK,
	CLIOPT_DELAY,
	CLIOPT_HOPS,
	CLIOPT_BOTTLENECK_HOP,
	CLIOPT_JSON_FILE,
	CLIOPT_HTTP,
	CLIOPT_HTTPS,
	CLIOPT_PER_HOP,
	CLIOPT_USER,
	CLIOPT_COUNT
};

/* Which command takes an option; the other one refuses it as unknown (but cli.c lets the lab
 * parse --servers and --server-list, to say why they do not apply). */
enum client_opt_scope {
	CLIOPT_ALL,  /* both the measurement and `bloatmeter lab` */
	CLIOPT_TEST, /* the measurement only */
	CLIOPT_LAB,  /* `bloatmeter lab` only */
};

struct client_option {
	const char *name; /* long flag, without the dashes */
	char short_flag;  /* 0 = none */
	/* The value's name in the help ("PORT"); NULL: the option takes no value. getopt's
	 * has_arg follows from it (required_argument or no_argument). */
	const char *arg;
	enum client_opt_scope scope;
	const char *help; /* one or more lines, '\n' between them, none at the end */
};

/* 1 when o's value is optional and given only as --name=VALUE (getopt's optional_argument;
 * the help shows "--name[=VALUE]"). A function, not a field: positional table entries would
 * otherwise all need it spelled out (clang's -Wmissing-field-initializers). */
int options_arg_optional(const struct client_option *o);

/* 1 when o takes no value in `bloatmeter lab` (--http: the measurement's takes the URL, the
 * lab's only switches the lab to HTTP against its own daemon). */
int options_lab_switch(const struct client_option *o);

/* The short-option string: a leading ':' and two bytes per option at most, and the NUL. */
#define OPTIONS_SHORTS_MAX (2 + 2 * CLIOPT_COUNT)

/* The table entry of opt. */
const struct client_option *options_get(enum client_opt opt);
/* Whether the lab (lab != 0) or the measurement command takes opt. */
int options_applies(enum client_opt opt, int lab);
/* Fills getopt_long's array (terminated) and short-option string (':' first, so a missing
 * value is reported as ':') for the whole table, as the lab (lab != 0) or the measurement
 * parses it. */
void options_getopt(struct option longopts[CLIOPT_COUNT + 1], char shorts[OPTIONS_SHORTS_MAX],
		    int lab);
/* The option that a getopt_long return value built by options_getopt stands for, or -1. */
int options_find(int c);
/* Prints the usage: the synopsis, then every option of the table with its help. */
void options_usage(FILE *f);

#endif

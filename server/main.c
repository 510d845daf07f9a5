/* bloatmeterd: command line of the bufferbloat measurement daemon. Option values go through
 * the table of server/srvconfig.c, so flags and configuration file keys are checked alike. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dns.h"
#include "common/log.h"
#include "server/server.h"
#include "server/srvconfig.h"

/* getopt values of the table's options: OPT_TABLE + enum srvconfig_opt. */
#define OPT_TABLE 256

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bloatmeterd [-nv] [-c FILE] [-b ADDR] [-p PORT] [--max-sessions N]\n"
		"                   [--max-flows N] [--max-duration SECONDS] [--dns-port N]\n"
		"                   [--dns-zone NAME]\n"
		"  -c, --config FILE      configuration file (default %s,\n"
		"                         if it exists); flags override its values\n"
		"  -n, --check            check the configuration and flags, then exit\n"
		"  -p, --port PORT        TCP and UDP port (default %d)\n"
		"  -b, --bind ADDR        address to bind (default: all, IPv4 and IPv6)\n"
		"      --max-sessions N   concurrent test sessions (default 16)\n"
		"      --max-flows N      bulk flows per session and direction (default 32)\n"
		"      --max-duration S   longest session in seconds (default 300)\n"
		"      --dns-port N       UDP port of the authoritative DNS responder for the DNS\n"
		"                         probe (default: PORT + 1; 0 turns it off)\n"
		"      --dns-zone NAME    the zone it answers for (default %s)\n"
		"      --user NAME        started as root: the user to run as once the ports are\n"
		"                         bound (default: bloatmeter, if that user exists)\n"
		"      --allow-root yes|no  keep running as root when no user is set (default no)\n"
		"      --max-rate RATE    bulk rate per session and direction, bit/s with k/M/G\n"
		"                         (e.g. 100M; default 0 = none)\n"
		"      --max-probe-rate N UDP probes per second and session (default 2000)\n"
		"      --handshake-timeout S  seconds to say hello (default 5)\n"
		"      --idle-timeout S   close data connections and sessions idle this long\n"
		"                         (default 30)\n"
		"      --admission-interface IF  refuse new sessions while IF sends more than\n"
		"      --admission-max-rate RATE  this many bit/s (default: off)\n"
		"      --psk-file FILE    every session must authenticate with a pre-shared key from\n"
		"                         FILE (lines \"ID KEY\", not readable by other users)\n"
		"      --tls-cert FILE    TLS on control connections: certificate chain (PEM) ...\n"
		"      --tls-key FILE     ... and its private key (PEM)\n"
		"      --tls-required yes|no  refuse plain control connections (default no)\n"
		"      --http-port N      HTTP port for /metrics, /healthz, /api/v1/tests and the\n"
		"                         web dashboard (default 0 = off)\n"
		"      --http-bind ADDR   its address (default 127.0.0.1; :: to publish it)\n"
		"      --http-max-connections N  HTTP connections at once; more wait in the\n"
		"                         accept queue (default 64)\n"
		"      --web-port N       public test listener (/__down, /__up, the browser test\n"
		"                         page and result posts; default 0 = off)\n"
		"      --web-bind ADDR    its address (default: all addresses)\n"
		"      --web-max-connections N  its connections at once (default 256)\n"
		"      --web-tls yes|no   serve it as HTTPS with tls-cert/tls-key (default no)\n"
		"      --results-log FILE one JSON line per finished test (CLI and browser) appended\n"
		"                         to FILE, reopened on SIGHUP (default: off)\n"
		"      --workers N        threads that run the sessions (default 0 = one per\n"
		"                         online CPU, at most 8; 1 = the main thread)\n"
		"      --reflector-priority N  real-time (SCHED_FIFO) priority 1-99 of the UDP\n"
		"                         reflector thread (default 0 = normal scheduling)\n"
		"  -v, --verbose          more logging (twice for debug)\n"
		"  -q, --quiet            log errors only (default: warnings, the start and\n"
		"                         each session)\n"
		"  -h, --help             this help\n"
		"  -V, --version          print the version\n"
		"SIGHUP reloads the session, flow, duration, rate and timeout limits from the file\n"
		"and reopens the results-log.\n",
		SRVCONFIG_DEFAULT_PATH, SERVER_DEFAULT_PORT, DNS_DEFAULT_ZONE);
}

/* Reports one bad flag in one sentence and where the usage is (printing the whole usage would
 * scroll the sentence away), and exits 2. */
static _Noreturn void bad_usage(const char *what, const char *arg)
{
	if (arg)
		fprintf(stderr, "bloatmeterd: %s: %s\n", what, arg);
	else
		fprintf(stderr, "bloatmeterd: %s\n", what);
	fputs("Try 'bloatmeterd --help'.\n", stderr);
	exit(2);
}

/* The long options: the table's, then the command-line-only ones. */
static void main_long_options(struct option *opts)
{
	static const struct option extra[] = {
		{ "config", required_argument, NULL, 'c' }, { "check", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },         { "version", no_argument, NULL, 'V' },
		{ "quiet", no_argument, NULL, 'q' },        { NULL, 0, NULL, 0 },
	};

	for (int i = 0; i < SRVOPT_COUNT; i++)
		opts[i] = (struct option){ srvconfig_option_name(i),
					   i == SRVOPT_VERBOSE ? no_argument : required_argument,
					   NULL, OPT_TABLE + i };
	memcpy(opts + SRVOPT_COUNT, extra, sizeof(extra));
}

/* Records a table option's value after checking it, so a bad flag is reported as a flag. */
static void main_table_option(int opt, const char *arg, const char **over, int *verbose)
{
	struct server_config scratch;
	char err[SRVCONFIG_ERR_MAX];

	if (opt == SRVOPT_VERBOSE) {
		(*verbose)++;
		return;
	}
	srvconfig_defaults(&scratch);
	if (srvconfig_set(&scratch, opt, arg, err, sizeof(err)) < 0)
		bad_usage(err, NULL);
	over[opt] = arg; /* the last one given wins */
}

int main(int argc, char **argv)
{
	struct option opts[SRVOPT_COUNT + 6];
	const char *over[SRVOPT_COUNT] = { NULL };
	const char *path = NULL;
	struct server_config cfg;
	char err[SRVCONFIG_ERR_MAX], vbuf[12];
	int verbose = 0, quiet = 0, check = 0, c, opt;

	main_long_options(opts);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:b:vqc:nhV", opts, NULL)) != -1) {
		opt = c >= OPT_TABLE ? c - OPT_TABLE : srvconfig_find_short(c);
		if (opt >= 0 && opt < SRVOPT_COUNT) {
			main_table_option(opt, optarg, over, &verbose);
			continue;
		}
		switch (c) {
		case 'c':
			path = optarg;
			break;
		case 'n':
			check = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("bloatmeterd %s\n", BM_VERSION);
			return 0;
		case ':':
			bad_usage("option needs a value", argv[optind - 1]);
		default:
			bad_usage("unknown option", argv[optind - 1]);
		}
	}
	if (optind < argc)
		bad_usage("unexpected argument", argv[optind]);
	if (verbose) {
		snprintf(vbuf, sizeof(vbuf), "%d", verbose > 2 ? 2 : verbose);
		over[SRVOPT_VERBOSE] = vbuf;
	}
	/* The default file is optional; one named with -c must exist. */
	if (srvconfig_build(path ? path : SRVCONFIG_DEFAULT_PATH, path == NULL, over, &cfg, err,
			    sizeof(err)) < 0) {
		fprintf(stderr, "bloatmeterd: %s\n", err);
		return 2;
	}
	/* The key and certificate files are opened here too, so -n finds what start-up would. */
	if (check && server_check_security(&cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "bloatmeterd: %s\n", err);
		return 2;
	}
	if (check) {
		printf("bloatmeterd: configuration OK (%s)\n",
		       cfg.config_loaded ? cfg.config_path : "no configuration file");
		return 0;
	}
	log_init("bloatmeterd", quiet		  ? LOG_LVL_ERROR
				: cfg.verbose >= 2 ? LOG_LVL_DEBUG
				: cfg.verbose	  ? LOG_LVL_INFO
						  : LOG_LVL_NOTICE);
	return server_run(&cfg);
}

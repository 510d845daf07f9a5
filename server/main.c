/* bloatmeterd: command line of the bufferbloat measurement daemon. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dns.h"
#include "common/log.h"
#include "common/util.h"
#include "server/server.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bloatmeterd [-v] [-b ADDR] [-p PORT] [--max-sessions N] [--max-flows N]\n"
		"                   [--max-duration SECONDS] [--dns-port N] [--dns-zone NAME]\n"
		"  -p, --port PORT        TCP and UDP port (default %d)\n"
		"  -b, --bind ADDR        address to bind (default: all, IPv4 and IPv6)\n"
		"      --max-sessions N   concurrent test sessions (default 16)\n"
		"      --max-flows N      bulk flows per session and direction (default 32)\n"
		"      --max-duration S   longest session in seconds (default 300)\n"
		"      --dns-port N       UDP port of the authoritative DNS responder for the DNS\n"
		"                         probe (default: PORT + 1; 0 turns it off)\n"
		"      --dns-zone NAME    the zone it answers for (default %s)\n"
		"  -v, --verbose          more logging (twice for debug)\n"
		"  -h, --help             this help\n"
		"  -V, --version          print the version\n",
		SERVER_DEFAULT_PORT, DNS_DEFAULT_ZONE);
}

/* Reports one bad flag in one sentence plus usage, and exits 2. */
static _Noreturn void bad_usage(const char *what, const char *arg)
{
	fprintf(stderr, "bloatmeterd: %s: %s\n", what, arg ? arg : "");
	usage(stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'p' },  { "bind", required_argument, NULL, 'b' },
		{ "verbose", no_argument, NULL, 'v' },     { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },     { "max-sessions", required_argument, NULL, 1 },
		{ "max-flows", required_argument, NULL, 2 }, { "max-duration", required_argument, NULL, 3 },
		{ "dns-port", required_argument, NULL, 4 }, { "dns-zone", required_argument, NULL, 5 },
		{ NULL, 0, NULL, 0 },
	};
	struct server_config cfg = {
		.port = SERVER_DEFAULT_PORT, .max_sessions = 16, .max_flows = 32, .max_duration_s = 300,
	};
	struct dns_zone zone;
	int verbose = 0, c, dns_port = -1;
	long v;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:b:vhV", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (util_parse_long(optarg, 1, 65535, &v) < 0)
				bad_usage("invalid port (1-65535)", optarg);
			cfg.port = (uint16_t)v;
			break;
		case 'b':
			cfg.bind_addr = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("bloatmeterd %s\n", BM_VERSION);
			return 0;
		case 1:
			if (util_parse_long(optarg, 1, 100000, &v) < 0)
				bad_usage("invalid --max-sessions (1-100000)", optarg);
			cfg.max_sessions = (int)v;
			break;
		case 2:
			if (util_parse_long(optarg, 1, 1024, &v) < 0)
				bad_usage("invalid --max-flows (1-1024)", optarg);
			cfg.max_flows = (int)v;
			break;
		case 3:
			if (util_parse_long(optarg, 5, 86400, &v) < 0)
				bad_usage("invalid --max-duration (5-86400 s)", optarg);
			cfg.max_duration_s = (int)v;
			break;
		case 4:
			if (util_parse_long(optarg, 0, 65535, &v) < 0)
				bad_usage("invalid --dns-port (0-65535, 0 = off)", optarg);
			dns_port = (int)v;
			break;
		case 5:
			if (dns_zone_init(&zone, optarg) < 0)
				bad_usage("invalid --dns-zone (a DNS name: labels of 1-63 "
					  "letters, digits, '-' or '_', at most 253 characters)",
					  optarg);
			cfg.dns_zone = optarg;
			break;
		case ':':
			bad_usage("option needs a value", argv[optind - 1]);
		default:
			bad_usage("unknown option", argv[optind - 1]);
		}
	}
	if (optind < argc)
		bad_usage("unexpected argument", argv[optind]);
	/* Default: the port after the control port, so one firewall rule pair covers both. */
	if (dns_port < 0)
		dns_port = cfg.port < 65535 ? cfg.port + 1 : 0;
	cfg.dns_port = (uint16_t)dns_port;
	log_init("bloatmeterd", verbose >= 2 ? LOG_LVL_DEBUG : verbose ? LOG_LVL_INFO : LOG_LVL_WARN);
	return server_run(&cfg);
}

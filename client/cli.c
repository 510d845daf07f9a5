/* cli: parses flags (one clear sentence and exit 2 on bad input), runs a test or a lab, and
 * hands the result to the writers. */
#include "client/cli.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/thread.h>

#include "client/analysis/analysis.h"
#include "client/analyze_cmd.h"
#include "client/lab/lab.h"
#include "client/model/config.h"
#include "client/model/fleet.h"
#include "client/model/result.h"
#include "client/report/flent.h"
#include "client/report/history.h"
#include "client/report/html.h"
#include "client/report/json.h"
#include "client/report/prom.h"
#include "client/report/text.h"
#include "client/run/fleetrace.h"
#include "client/run/measure.h"
#include "common/log.h"
#include "common/util.h"

enum {
	OPT_PHASES = 256, OPT_CC, OPT_JSON, OPT_IDLE, OPT_GAP, OPT_PROBE_SIZE,
	OPT_DOWN_RATE, OPT_UP_RATE, OPT_DOWN_BUF, OPT_UP_BUF, OPT_IPV6, OPT_DAEMON,
	OPT_LOG, OPT_PROM, OPT_HTML, OPT_FLENT, OPT_DOWN_LOSS, OPT_UP_LOSS, OPT_PROBES,
	OPT_PROBE_INTERVAL, OPT_DSCP, OPT_DNS_RESOLVER, OPT_PCAP_FILE,
	OPT_SERVERS, OPT_SERVER_LIST,
};

/* The control channel's security options (measurement only, the lab runs a plain daemon). */
enum { OPT_TLS = 512, OPT_CA, OPT_INSECURE, OPT_PSK_FILE, OPT_TLS_LOAD };

static void cli_usage(FILE *f)
{
	fprintf(f,
		"usage: bloatmeter [options] SERVER\n"
		"       bloatmeter [options] --servers LIST | --server-list FILE\n"
		"       bloatmeter analyze [-J] FILE.pcap   (passive analysis of a capture)\n"
		"       bloatmeter lab [--down-rate RATE] [--up-rate RATE] [--down-buffer MS]\n"
		"                      [--up-buffer MS] [--ipv6] [options]\n"
		"Measures latency under load (bufferbloat) and the bottleneck buffer per direction.\n"
		"  -p, --port PORT        server port (default %d)\n"
		"  -P, --parallel N|auto  TCP flows per loaded direction (default 8); auto: start with\n"
		"                         one and add one per second until one more gains < 5 %%\n"
		"  -t, --time SECONDS     length of each loaded phase (default 10)\n"
		"  -i, --interval MS      UDP probe interval (default 10)\n"
		"      --phases LIST      comma list of idle,download,upload,bidirectional (default all)\n"
		"      --cc NAME          congestion control of load flows, both ends (default cubic)\n"
		"      --idle SECONDS     length of the idle phase (default 5)\n"
		"      --gap SECONDS      drain gap after each loaded phase (default 2)\n"
		"      --probe-size BYTES UDP probe size, 64-1400 (default 100)\n"
		"      --probes LIST      probe kinds: udp,icmp,dns,tcp,inflow,pcap (default all but\n"
		"                         pcap; lab: all; udp always runs)\n"
		"      --probe-interval KIND=MS  interval of one kind (icmp 100, dns 200, tcp 200,\n"
		"                         inflow 100 per direction; udp = -i)\n"
		"      --dscp N           DSCP (0-63) on probe packets, e.g. 46 (EF)\n"
		"      --dns-resolver ADDR|system  also time DNS queries to a real resolver\n"
		"      --pcap-file FILE   with pcap: save the capture there\n"
		"      --tls              TLS on the control connection (the load stays plain TCP)\n"
		"      --tls-load         TLS on the load flows too, like HTTPS (implies --tls;\n"
		"                         kernel TLS when the kernel has it; goodput counts\n"
		"                         application bytes)\n"
		"      --ca FILE          with --tls: trust these PEM certificates instead of the\n"
		"                         system store; the server's name or address is checked\n"
		"      --insecure         with --tls: no certificate check at all (tests only)\n"
		"      --psk-file FILE    authenticate with the pre-shared key in FILE (one line\n"
		"                         \"ID KEY\", not readable by other users); the server must\n"
		"                         prove it holds the key too\n"
		"      --servers LIST     comma list of HOST, HOST:PORT, [IPV6]:PORT; measures the one\n"
		"                         with the lowest idle RTT (median of 5 TCP handshakes)\n"
		"      --server-list FILE the same from a file: one server per line, # comments,\n"
		"                         at most %d\n"
		"  -J, --json-stdout      print the JSON report instead of text\n"
		"      --json FILE        also write the JSON report to FILE\n"
		"      --log FILE         append one compact JSON line per run (history)\n"
		"      --prometheus FILE  write a node_exporter textfile (atomically)\n"
		"      --html FILE        write a self-contained HTML report with charts\n"
		"      --flent FILE       write a flent data file (.flent.gz) flent can plot\n"
		"  -q, --quiet            no text output\n"
		"  -v, --verbose          details in the text report, more logging (twice: debug)\n"
		"  -h, --help             this help;  -V, --version  print the version\n"
		"lab (needs root): emulates a bottleneck in network namespaces and runs the real\n"
		"daemon and client through it, printing the measurement next to the configured truth.\n"
		"      --down-rate RATE   e.g. 20mbit (default 20mbit)   --up-rate RATE (default 20mbit)\n"
		"      --down-buffer MS   bottleneck buffer, ms (default 100)  --up-buffer MS (default 100)\n"
		"      --ipv6             reach the server over IPv6\n"
		"      --down-loss PCT    random loss on the downlink (nftables), e.g. 1 (default 0)\n"
		"      --up-loss PCT      random loss on the uplink (default 0)\n"
		"      --daemon PATH      bloatmeterd to run (default: next to this program)\n",
		CLIENT_DEFAULT_PORT, FLEET_MAX);
}

static _Noreturn void cli_bad(const char *what, const char *arg)
{
	fprintf(stderr, "bloatmeter: %s%s%s\n", what, arg ? ": " : "", arg ? arg : "");
	cli_usage(stderr);
	exit(2);
}

static double cli_double(const char *arg, double lo, double hi, const char *what)
{
	double v;

	if (util_parse_double(arg, lo, hi, &v) < 0)
		cli_bad(what, arg);
	return v;
}

static long cli_long(const char *arg, long lo, long hi, const char *what)
{
	long v;

	if (util_parse_long(arg, lo, hi, &v) < 0)
		cli_bad(what, arg);
	return v;
}

/* Applies one option shared by the measurement and lab commands; 0 if not one of them. */
static int cli_common_opt(int c, struct client_config *cfg)
{
	switch (c) {
	case 'p':
		cfg->port = (uint16_t)cli_long(optarg, 1, 65535, "invalid port (1-65535)");
		return 1;
	case 'P':
		cfg->flows_auto = strcmp(optarg, "auto") == 0;
		cfg->flows = cfg->flows_auto ? 1 : (int)cli_long(optarg, 1, 64, "invalid flow count (1-64 or auto)");
		return 1;
	case 't':
		cfg->duration_s = cli_double(optarg, 2, 3600, "invalid phase length (2-3600 s)");
		return 1;
	case 'i':
		cfg->interval_ms = cli_double(optarg, 1, 1000, "invalid probe interval (1-1000 ms)");
		cfg->probe_interval_ms[PROBE_UDP] = cfg->interval_ms;
		return 1;
	case OPT_IDLE:
		cfg->idle_s = cli_double(optarg, 1, 600, "invalid idle length (1-600 s)");
		return 1;
	case OPT_GAP:
		cfg->gap_s = cli_double(optarg, 0, 60, "invalid gap length (0-60 s)");
		return 1;
	case OPT_PROBE_SIZE:
		cfg->probe_size = (int)cli_long(optarg, 64, 1400, "invalid probe size (64-1400 bytes)");
		return 1;
	case OPT_PHASES:
		if (config_parse_phases(cfg, optarg) < 0)
			cli_bad("invalid --phases (use idle,download,upload,bidirectional, each once)", optarg);
		return 1;
	case OPT_CC:
		if (strlen(optarg) == 0 || strlen(optarg) >= sizeof(cfg->cc) ||
		    strspn(optarg, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(optarg))
			cli_bad("invalid congestion control name", optarg);
		snprintf(cfg->cc, sizeof(cfg->cc), "%s", optarg);
		return 1;
	case 'J':
		cfg->json_stdout = 1;
		return 1;
	case OPT_JSON:
		cfg->json_file = optarg;
		return 1;
	case OPT_LOG:
		cfg->log_file = optarg;
		return 1;
	case OPT_PROM:
		cfg->prom_file = optarg;
		return 1;
	case OPT_HTML:
		cfg->html_file = optarg;
		return 1;
	case OPT_FLENT:
		cfg->flent_file = optarg;
		return 1;
	case OPT_PROBES:
		if (config_parse_probes(cfg, optarg) < 0)
			cli_bad("invalid --probes (use udp,icmp,dns,tcp,inflow,pcap)", optarg);
		return 1;
	case OPT_PROBE_INTERVAL:
		if (config_parse_interval(cfg, optarg) < 0)
			cli_bad("invalid --probe-interval (KIND=MS, 1-10000 ms; udp 1-1000)", optarg);
		return 1;
	case OPT_DSCP:
		cfg->dscp = (int)cli_long(optarg, 0, 63, "invalid --dscp (0-63)");
		return 1;
	case OPT_DNS_RESOLVER:
		if (optarg[0] == '\0' || strlen(optarg) > 64)
			cli_bad("invalid --dns-resolver (an address or \"system\")", optarg);
		cfg->dns_resolver = optarg;
		return 1;
	case OPT_PCAP_FILE:
		cfg->pcap_file = optarg;
		return 1;
	case OPT_SERVERS:
		cfg->servers = optarg;
		return 1;
	case OPT_SERVER_LIST:
		cfg->server_list = optarg;
		return 1;
	case 'q':
		cfg->quiet = 1;
		return 1;
	case 'v':
		cfg->verbose++;
		return 1;
	}
	return 0;
}

static const struct option cli_opts[] = {
	{ "port", required_argument, NULL, 'p' },
	{ "parallel", required_argument, NULL, 'P' },
	{ "time", required_argument, NULL, 't' },
	{ "interval", required_argument, NULL, 'i' },
	{ "phases", required_argument, NULL, OPT_PHASES },
	{ "cc", required_argument, NULL, OPT_CC },
	{ "idle", required_argument, NULL, OPT_IDLE },
	{ "gap", required_argument, NULL, OPT_GAP },
	{ "probe-size", required_argument, NULL, OPT_PROBE_SIZE },
	{ "json-stdout", no_argument, NULL, 'J' },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "log", required_argument, NULL, OPT_LOG },
	{ "prometheus", required_argument, NULL, OPT_PROM },
	{ "html", required_argument, NULL, OPT_HTML },
	{ "flent", required_argument, NULL, OPT_FLENT },
	{ "probes", required_argument, NULL, OPT_PROBES },
	{ "probe-interval", required_argument, NULL, OPT_PROBE_INTERVAL },
	{ "dscp", required_argument, NULL, OPT_DSCP },
	{ "dns-resolver", required_argument, NULL, OPT_DNS_RESOLVER },
	{ "pcap-file", required_argument, NULL, OPT_PCAP_FILE },
	{ "tls", no_argument, NULL, OPT_TLS },
	{ "tls-load", no_argument, NULL, OPT_TLS_LOAD },
	{ "ca", required_argument, NULL, OPT_CA },
	{ "insecure", no_argument, NULL, OPT_INSECURE },
	{ "psk-file", required_argument, NULL, OPT_PSK_FILE },
	{ "servers", required_argument, NULL, OPT_SERVERS },
	{ "server-list", required_argument, NULL, OPT_SERVER_LIST },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "down-rate", required_argument, NULL, OPT_DOWN_RATE },
	{ "up-rate", required_argument, NULL, OPT_UP_RATE },
	{ "down-buffer", required_argument, NULL, OPT_DOWN_BUF },
	{ "up-buffer", required_argument, NULL, OPT_UP_BUF },
	{ "ipv6", no_argument, NULL, OPT_IPV6 },
	{ "down-loss", required_argument, NULL, OPT_DOWN_LOSS },
	{ "up-loss", required_argument, NULL, OPT_UP_LOSS },
	{ "daemon", required_argument, NULL, OPT_DAEMON },
	{ NULL, 0, NULL, 0 },
};

/* Applies one lab-only option; 0 if not one of them. */
static int cli_lab_opt(int c, struct lab_config *lab)
{
	switch (c) {
	case OPT_DOWN_RATE:
		if (util_parse_rate(optarg, &lab->down_rate_bps) < 0)
			cli_bad("invalid --down-rate (e.g. 20mbit)", optarg);
		return 1;
	case OPT_UP_RATE:
		if (util_parse_rate(optarg, &lab->up_rate_bps) < 0)
			cli_bad("invalid --up-rate (e.g. 20mbit)", optarg);
		return 1;
	case OPT_DOWN_BUF:
		lab->down_buffer_ms = cli_double(optarg, 1, 10000, "invalid --down-buffer (1-10000 ms)");
		return 1;
	case OPT_UP_BUF:
		lab->up_buffer_ms = cli_double(optarg, 1, 10000, "invalid --up-buffer (1-10000 ms)");
		return 1;
	case OPT_IPV6:
		lab->ipv6 = 1;
		return 1;
	case OPT_DOWN_LOSS:
		lab->down_loss_pct = cli_double(optarg, 0, 99, "invalid --down-loss (0-99 %)");
		return 1;
	case OPT_UP_LOSS:
		lab->up_loss_pct = cli_double(optarg, 0, 99, "invalid --up-loss (0-99 %)");
		return 1;
	case OPT_DAEMON:
		lab->daemon_path = optarg;
		return 1;
	}
	return 0;
}

/* Applies one control-channel security option; 0 if not one of them. */
static int cli_secure_opt(int c, struct client_config *cfg)
{
	switch (c) {
	case OPT_TLS:
		cfg->tls = 1;
		return 1;
	case OPT_TLS_LOAD:
		/* The data connections are authorised by the token: TLS on them alone would not
		 * keep it off the wire. */
		cfg->tls = cfg->tls_load = 1;
		return 1;
	case OPT_CA:
		cfg->tls_ca = optarg;
		return 1;
	case OPT_INSECURE:
		cfg->tls_insecure = 1;
		return 1;
	case OPT_PSK_FILE:
		cfg->psk_file = optarg;
		return 1;
	}
	return 0;
}

/* --ca and --insecure only mean something with --tls, and contradict each other. */
static void cli_check_secure(const struct client_config *cfg)
{
	if ((cfg->tls_ca || cfg->tls_insecure) && !cfg->tls)
		cli_bad("--ca and --insecure need --tls", NULL);
	if (cfg->tls_ca && cfg->tls_insecure)
		cli_bad("--ca and --insecure cannot be combined", NULL);
}

/* Parses argv; *is_lab says which command. Exits on bad usage, -h and -V. */
static void cli_parse(int argc, char **argv, struct client_config *cfg, struct lab_config *lab,
		      int *is_lab)
{
	int c;

	*is_lab = argc > 1 && strcmp(argv[1], "lab") == 0;
	if (*is_lab) {
		argv++;
		argc--;
	}
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:P:t:i:JqvhV", cli_opts, NULL)) != -1) {
		if (c == 'h') {
			cli_usage(stdout);
			exit(0);
		}
		if (c == 'V') {
			printf("bloatmeter %s\n", BM_VERSION);
			exit(0);
		}
		if (c == ':')
			cli_bad("option needs a value", argv[optind - 1]);
		if (cli_common_opt(c, cfg))
			continue;
		if (*is_lab && cli_lab_opt(c, lab))
			continue;
		if (!*is_lab && cli_secure_opt(c, cfg))
			continue;
		cli_bad("unknown option", argv[optind - 1]);
	}
	cli_check_secure(cfg);
	if (*is_lab && optind < argc)
		cli_bad("unexpected argument", argv[optind]);
	if (cfg->servers && cfg->server_list)
		cli_bad("--servers and --server-list cannot be combined", NULL);
	if (*is_lab && (cfg->servers || cfg->server_list))
		cli_bad("the lab runs its own server: --servers and --server-list do not apply", NULL);
	if (!*is_lab && (cfg->servers || cfg->server_list)) {
		if (optind < argc)
			cli_bad("give either SERVER or --servers/--server-list, not both", argv[optind]);
		return;
	}
	if (!*is_lab) {
		if (optind >= argc)
			cli_bad("missing SERVER (or use: bloatmeter lab)", NULL);
		if (optind + 1 < argc)
			cli_bad("unexpected argument", argv[optind + 1]);
		cfg->server = argv[optind];
	}
}

/* Writes every requested view of the result. Returns 0 or 1. */
static int cli_output(const struct test_result *res)
{
	const struct client_config *cfg = &res->cfg;
	int rc = 0;

	if (cfg->json_file && report_json_write(res, cfg->json_file) < 0)
		rc = 1;
	if (cfg->log_file && history_append(res, cfg->log_file) < 0)
		rc = 1;
	if (cfg->prom_file && prom_write(res, cfg->prom_file) < 0)
		rc = 1;
	if (cfg->html_file && html_write(res, cfg->html_file) < 0)
		rc = 1;
	if (cfg->flent_file && flent_write(res, cfg->flent_file) < 0)
		rc = 1;
	if (cfg->json_stdout) {
		if (report_json_write(res, "-") < 0)
			rc = 1;
	} else if (!cfg->quiet) {
		report_text(res, stdout);
	}
	return rc;
}

static int cli_measure(const struct client_config *cfg, struct test_result *res)
{
	char err[256];

	if (measure_run(cfg, res, err, sizeof(err)) < 0) {
		log_error("%s", err);
		return 1;
	}
	analysis_run(res);
	return 0;
}

static int cli_lab(struct client_config *cfg, const struct lab_config *lcfg, struct test_result *res)
{
	char err[256];
	struct lab *lab = lab_create(lcfg, err, sizeof(err));
	int rc;

	if (lab == NULL) {
		log_error("%s", err);
		return 1;
	}
	if (lab_enter_client(lab, err, sizeof(err)) < 0) {
		log_error("%s", err);
		lab_destroy(lab);
		return 1;
	}
	cfg->server = lab_server_host(lab);
	/* The lab runs as root on its own namespaces: show every probe kind unless told not to. */
	if (!cfg->probes_set)
		cfg->probes |= PROBE_BIT(PROBE_PCAP);
	result_init(res, cfg);
	rc = cli_measure(cfg, res);
	if (lab_leave_client(lab) < 0)
		log_warnx("cannot return to the original network namespace");
	res->lab = 1;
	lab_get_truth(lab, &res->truth);
	lab_destroy(lab);
	return rc;
}

/* Parses --servers or --server-list (a bad list is bad usage: exit 2); NULL without either. */
static struct fleet *cli_fleet(const struct client_config *cfg)
{
	char err[1024];
	struct fleet *f;
	int rc;

	if (cfg->servers == NULL && cfg->server_list == NULL)
		return NULL;
	f = malloc(sizeof(*f));
	if (f == NULL)
		fatalx("out of memory");
	fleet_init(f);
	rc = cfg->servers ? fleet_parse_list(f, cfg->servers, cfg->port, err, sizeof(err))
			  : fleet_load_file(f, cfg->server_list, cfg->port, err, sizeof(err));
	if (rc < 0) {
		free(f);
		cli_bad(cfg->servers ? "invalid --servers" : "invalid --server-list", err);
	}
	return f;
}

/* Races the candidates' idle RTTs and points cfg at the winner. 0, or 1 after one sentence. */
static int cli_choose(struct client_config *cfg, struct fleet *fleet)
{
	struct fleet_timing t = fleet_timing_default();
	char err[1024];
	int i = fleet_measure(fleet, &t, err, sizeof(err));

	if (i < 0) {
		log_error("%s", err);
		return 1;
	}
	/* The test connects to the address that was timed (a name with several addresses could
	 * resolve to another one) and checks a TLS certificate against the name as listed. */
	cfg->server = fleet->cand[i].host;
	cfg->server_addr = fleet->cand[i].numeric;
	cfg->port = fleet->cand[i].port;
	return 0;
}

int cli_main(int argc, char **argv)
{
	struct client_config cfg;
	struct lab_config lab = {
		.down_rate_bps = 20000000, .up_rate_bps = 20000000,
		.down_buffer_ms = 100, .up_buffer_ms = 100,
	};
	struct test_result res;
	struct fleet *fleet;
	int is_lab, rc;

	if (argc > 1 && strcmp(argv[1], "analyze") == 0)
		return analyze_main(argc - 1, argv + 1);
	config_defaults(&cfg);
	cli_parse(argc, argv, &cfg, &lab, &is_lab);
	fleet = cli_fleet(&cfg);
	log_init("bloatmeter", cfg.verbose >= 2 ? LOG_LVL_DEBUG
			       : cfg.verbose   ? LOG_LVL_INFO
			       : cfg.quiet     ? LOG_LVL_ERROR : LOG_LVL_WARN);
	if (evthread_use_pthreads() < 0) {
		log_error("cannot initialise libevent threading");
		return 1;
	}
	util_catch_interrupts();
	lab.port = cfg.port;
	lab.daemon_verbose = cfg.verbose >= 2;
	memset(&res, 0, sizeof(res));
	if (is_lab) {
		rc = cli_lab(&cfg, &lab, &res);
	} else {
		rc = fleet ? cli_choose(&cfg, fleet) : 0;
		result_init(&res, &cfg);
		res.fleet = fleet;
		if (rc == 0)
			rc = cli_measure(&cfg, &res);
	}
	if (rc == 0)
		rc = cli_output(&res);
	result_free(&res);
	free(fleet);
	return rc;
}

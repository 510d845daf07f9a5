/* cli: parses flags (one clear sentence and exit 2 on bad input) against the option table of
 * options.c, runs a test or a lab, and hands the result to the writers. */
#include "client/cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <event2/thread.h>

#include "client/analysis/analysis.h"
#include "client/analyze_cmd.h"
#include "client/lab/lab.h"
#include "client/lab/labtopo.h"
#include "client/lab/userns.h"
#include "client/model/config.h"
#include "client/model/clientconf.h"
#include "client/model/fleet.h"
#include "client/model/httptarget.h"
#include "client/model/result.h"
#include "client/options.h"
#include "client/report/flent.h"
#include "client/report/history.h"
#include "client/report/html.h"
#include "client/report/json.h"
#include "client/report/prom.h"
#include "client/report/text.h"
#include "client/run/ecn.h"
#include "client/run/fleetrace.h"
#include "client/run/httpmode.h"
#include "client/run/dropuser.h"
#include "client/run/measure.h"
#include "common/log.h"
#include "common/sock.h"
#include "common/util.h"

/* Bad usage: one sentence and where to look, not the whole usage, which would scroll the
 * sentence away (as GNU tools do). */
static _Noreturn void cli_bad(const char *what, const char *arg)
{
	fprintf(stderr, "bloatmeter: %s%s%s\nTry 'bloatmeter --help'.\n", what, arg ? ": " : "",
		arg ? arg : "");
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

/* Applies option opt with its value arg (NULL if it takes none); exits on a bad value, and
 * after --help and --version. */
static void cli_option(enum client_opt opt, const char *arg, struct client_config *cfg,
		       struct lab_config *lab)
{
	switch (opt) {
	case CLIOPT_PORT:
		cfg->port = (uint16_t)cli_long(arg, 1, 65535, "invalid port (1-65535)");
		break;
	case CLIOPT_PARALLEL:
		cfg->flows_auto = strcmp(arg, "auto") == 0;
		cfg->flows = cfg->flows_auto ? 1 : (int)cli_long(arg, 1, 64, "invalid flow count (1-64 or auto)");
		break;
	case CLIOPT_TIME:
		cfg->duration_s = cli_double(arg, 2, 3600, "invalid phase length (2-3600 s)");
		break;
	case CLIOPT_INTERVAL:
		cfg->interval_ms = cli_double(arg, 1, 1000, "invalid probe interval (1-1000 ms)");
		cfg->probe_interval_ms[PROBE_UDP] = cfg->interval_ms;
		break;
	case CLIOPT_IDLE:
		cfg->idle_s = cli_double(arg, 1, 600, "invalid idle length (1-600 s)");
		break;
	case CLIOPT_GAP:
		cfg->gap_s = cli_double(arg, 0, 60, "invalid gap length (0-60 s)");
		break;
	case CLIOPT_VERSION4:
		cfg->family = AF_INET;
		break;
	case CLIOPT_VERSION6:
		cfg->family = AF_INET6;
		break;
	case CLIOPT_BIND:
		if (sock_parse_ip(arg, &cfg->local) < 0)
			cli_bad("invalid --bind (a numeric IPv4 or IPv6 address of this host)", arg);
		cfg->bind = arg;
		break;
	case CLIOPT_REVERSE:
		(void)config_parse_phases(cfg, "idle,download");
		break;
	case CLIOPT_BIDIR:
		(void)config_parse_phases(cfg, "idle,bidirectional");
		break;
	case CLIOPT_QUICK:
		/* The shortest run that still reaches the steady window (7 × 250 ms after a
		 * second of ramp) in both directions: 1 + 4 + 0.5 + 4 + 0.5 = 10 s of schedule. */
		cfg->idle_s = 1;
		cfg->duration_s = 4;
		cfg->gap_s = 0.5;
		(void)config_parse_phases(cfg, "idle,download,upload");
		break;
	case CLIOPT_PROBE_SIZE:
		cfg->probe_size = (int)cli_long(arg, 64, 1400, "invalid probe size (64-1400 bytes)");
		break;
	case CLIOPT_PHASES:
		if (config_parse_phases(cfg, arg) < 0)
			cli_bad("invalid --phases (use idle,download,upload,bidirectional, each once)", arg);
		break;
	case CLIOPT_CC:
		if (strlen(arg) == 0 || strlen(arg) >= sizeof(cfg->cc) ||
		    strspn(arg, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(arg))
			cli_bad("invalid congestion control name", arg);
		snprintf(cfg->cc, sizeof(cfg->cc), "%s", arg);
		break;
	case CLIOPT_PROBES:
		if (config_parse_probes(cfg, arg) < 0)
			cli_bad("invalid --probes (use udp,icmp,dns,tcp,inflow,pcap)", arg);
		break;
	case CLIOPT_PROBE_INTERVAL:
		if (config_parse_interval(cfg, arg) < 0)
			cli_bad("invalid --probe-interval (KIND=MS, 1-10000 ms; udp 1-1000)", arg);
		break;
	case CLIOPT_DSCP:
		cfg->dscp = (int)cli_long(arg, 0, 63, "invalid --dscp (0-63)");
		break;
	case CLIOPT_ECN:
		cfg->ecn = 1;
		break;
	case CLIOPT_DNS_RESOLVER:
		if (arg[0] == '\0' || strlen(arg) > 64)
			cli_bad("invalid --dns-resolver (an address or \"system\")", arg);
		cfg->dns_resolver = arg;
		break;
	case CLIOPT_PCAP_FILE:
		cfg->pcap_file = arg;
		break;
	case CLIOPT_JSON_STDOUT:
		cfg->json_stdout = 1;
		break;
	case CLIOPT_JSON:
		if (arg) /* bare: cli_json_bare() decides once the operands are known */
			cfg->json_file = arg;
		break;
	case CLIOPT_JSON_FILE:
		cfg->json_file = arg;
		break;
	case CLIOPT_LOG:
		cfg->log_file = arg;
		break;
	case CLIOPT_PROMETHEUS:
		cfg->prom_file = arg;
		break;
	case CLIOPT_HTML:
		cfg->html_file = arg;
		break;
	case CLIOPT_FLENT:
		cfg->flent_file = arg;
		break;
	case CLIOPT_QUIET:
		cfg->quiet = 1;
		break;
	case CLIOPT_VERBOSE:
		cfg->verbose++;
		break;
	case CLIOPT_HELP:
		options_usage(stdout);
		exit(0);
	case CLIOPT_VERSION:
		printf("bloatmeter %s\n", BM_VERSION);
		exit(0);
	case CLIOPT_TLS:
		cfg->tls = 1;
		break;
	case CLIOPT_PER_HOP:
		if (strcmp(arg, "icmp") != 0 && strcmp(arg, "udp") != 0)
			cli_bad("invalid --per-hop (use icmp or udp)", arg);
		cfg->per_hop = strcmp(arg, "icmp") == 0 ? 1 : 2; /* enum hop_mode */
		break;
	case CLIOPT_TLS_LOAD:
		/* The data connections are authorised by the token: TLS on them alone would not
		 * keep it off the wire. */
		cfg->tls = cfg->tls_load = 1;
		break;
	case CLIOPT_CA:
		cfg->tls_ca = arg;
		break;
	case CLIOPT_INSECURE:
		cfg->tls_insecure = 1;
		break;
	case CLIOPT_PSK_FILE:
		cfg->psk_file = arg;
		break;
	case CLIOPT_SERVERS:
		cfg->servers = arg;
		break;
	case CLIOPT_SERVER_LIST:
		cfg->server_list = arg;
		break;
	case CLIOPT_DOWN_RATE:
		if (util_parse_rate(arg, &lab->down_rate_bps) < 0)
			cli_bad("invalid --down-rate (e.g. 20mbit)", arg);
		break;
	case CLIOPT_UP_RATE:
		if (util_parse_rate(arg, &lab->up_rate_bps) < 0)
			cli_bad("invalid --up-rate (e.g. 20mbit)", arg);
		break;
	case CLIOPT_DOWN_BUFFER:
		lab->down_buffer_ms = cli_double(arg, 1, 10000, "invalid --down-buffer (1-10000 ms)");
		break;
	case CLIOPT_UP_BUFFER:
		lab->up_buffer_ms = cli_double(arg, 1, 10000, "invalid --up-buffer (1-10000 ms)");
		break;
	case CLIOPT_IPV6:
		lab->ipv6 = 1;
		break;
	case CLIOPT_DOWN_LOSS:
		lab->down_loss_pct = cli_double(arg, 0, 99, "invalid --down-loss (0-99 %)");
		break;
	case CLIOPT_UP_LOSS:
		lab->up_loss_pct = cli_double(arg, 0, 99, "invalid --up-loss (0-99 %)");
		break;
	case CLIOPT_DAEMON:
		lab->daemon_path = arg;
		break;
	case CLIOPT_HTTP:
		if (arg == NULL) /* the lab's switch */
			lab->http = lab->http ? lab->http : LAB_HTTP_PLAIN;
		else
			cfg->http_url = arg;
		break;
	case CLIOPT_HTTPS:
		lab->http = LAB_HTTP_TLS;
		break;
	case CLIOPT_QDISC: {
		int q = lab_qdisc_parse(arg);

		if (q < 0)
			cli_bad("invalid --qdisc (tbf, fifo, codel, fqcodel or pie)", arg);
		lab->qdisc = (enum lab_qdisc)q;
		break;
	}
	case CLIOPT_ECN_MARK:
		lab->ecn_mark = 1;
		break;
	case CLIOPT_DELAY:
		lab->delay_ms = cli_double(arg, 0, 1000, "invalid --delay (0-1000 ms)");
		break;
	case CLIOPT_HOPS:
		lab->hops = (int)cli_long(arg, 1, LABTOPO_MAX_HOPS, "invalid --hops (1-8 routers)");
		break;
	case CLIOPT_BOTTLENECK_HOP:
		lab->bottleneck_hop = (int)cli_long(arg, 1, LABTOPO_MAX_HOPS,
						    "invalid --bottleneck-hop (1-8, at most --hops)");
		break;
	case CLIOPT_USER:
		if (arg[0] == '\0' || strlen(arg) > 32)
			cli_bad("invalid --user (a user name)", arg);
		cfg->run_as = arg;
		cfg->run_as_set = 1;
		break;
	case CLIOPT_COUNT:
		break;
	}
}

/* --ca and --insecure only mean something with --tls (or an https target), and contradict
 * each other. */
static void cli_check_secure(const struct client_config *cfg)
{
	int https = cfg->http_url && strncasecmp(cfg->http_url, "https:", 6) == 0;

	if ((cfg->tls_ca || cfg->tls_insecure) && !cfg->tls && !https)
		cli_bad("--ca and --insecure need --tls or an https:// target", NULL);
	if (cfg->tls_ca && cfg->tls_insecure)
		cli_bad("--ca and --insecure cannot be combined", NULL);
}

static const char *cli_family_name(int family)
{
	return family == AF_INET ? "IPv4" : "IPv6";
}

/* -B: of the family -4/-6 asked for (and then implying it), an address of this host, and of
 * a family SERVER has (when SERVER resolves at all: a failed lookup is the test's to report).
 * Each mismatch is bad usage, said in one sentence before anything is sent. */
static void cli_check_bind(struct client_config *cfg)
{
	struct sockaddr_storage sa[16];
	socklen_t len[16];
	char err[256], what[320];
	int fam = cfg->local.ss_family, fd, n;

	if (cfg->bind == NULL)
		return;
	if (cfg->family != AF_UNSPEC && cfg->family != fam) {
		snprintf(what, sizeof(what), "--bind %s is an %s address, but %s asks for %s",
			 cfg->bind, cli_family_name(fam), cfg->family == AF_INET ? "-4" : "-6",
			 cli_family_name(cfg->family));
		cli_bad(what, NULL);
	}
	cfg->family = fam;
	fd = socket(fam, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || sock_bind_local(fd, &cfg->local) < 0) {
		snprintf(what, sizeof(what), "--bind %s: cannot use it here (%s)", cfg->bind,
			 strerror(errno));
		cli_bad(what, NULL);
	}
	close(fd);
	if (cfg->server == NULL)
		return;
	n = sock_resolve_all(cfg->server, cfg->port, SOCK_STREAM, AF_UNSPEC, sa, len, 16, err,
			     sizeof(err));
	for (int i = 0; i < n; i++)
		if (sa[i].ss_family == fam)
			return;
	if (n > 0) {
		snprintf(what, sizeof(what), "--bind %s is an %s address, but %s has no %s address",
			 cfg->bind, cli_family_name(fam), cfg->server, cli_family_name(fam));
		cli_bad(what, NULL);
	}
}

/* A bare --json: "--json FILE SERVER", as older scripts write it (getopt leaves FILE among
 * the operands, one more than the command takes), else the report on stdout as with -J. */
static void cli_json_bare(int argc, char **argv, struct client_config *cfg, int is_lab)
{
	int operands = is_lab || cfg->servers || cfg->server_list || cfg->http_url ? 0 : 1;

	if (argc - optind == operands + 1)
		cfg->json_file = argv[optind++];
	else
		cfg->json_stdout = 1;
}

/* The HTTP target: SERVER given as a URL, or --http URL; checked here so a bad URL is bad
 * usage. The bloatmeterd-only options do not apply to it. */
static void cli_http_target(struct client_config *cfg)
{
	struct httptarget t;
	char err[HTTPTARGET_ERR_MAX];

	if (httptarget_parse(&t, cfg->http_url, err, sizeof(err)) < 0)
		cli_bad(err, cfg->http_url);
	if (cfg->tls || cfg->psk_file)
		cli_bad("--tls, --tls-load and --psk-file are for a bloatmeterd, not an HTTP target",
			NULL);
	cfg->server = cfg->http_url;
}

/* Which target a measurement uses: SERVER or --http URL from the command line, else the
 * configuration file's default-target, else the built-in one (HTTPTARGET_DEFAULT); a URL
 * selects the HTTP mode. A bad configuration file is bad usage (exit 2). */
static void cli_target(struct client_config *cfg, struct clientconf *conf)
{
	char err[CLIENTCONF_ERR_MAX + CLIENTCONF_PATH_MAX];

	if (cfg->server == NULL && cfg->http_url == NULL) {
		if (clientconf_load(conf, err, sizeof(err)) < 0)
			cli_bad("bad configuration file", err);
		if (conf->default_target[0] != '\0') {
			snprintf(conf->source, sizeof(conf->source), "configuration file %s", conf->path);
			cfg->server = conf->default_target;
		} else {
			snprintf(conf->source, sizeof(conf->source), "built-in default");
			cfg->server = HTTPTARGET_DEFAULT;
		}
		cfg->target_source = conf->source;
	}
	if (cfg->http_url == NULL && cfg->server != NULL && httptarget_is_url(cfg->server))
		cfg->http_url = cfg->server;
	if (cfg->http_url)
		cli_http_target(cfg);
}

/* Parses argv; *is_lab says which command. Exits on bad usage, -h and -V. */
static void cli_parse(int argc, char **argv, struct client_config *cfg, struct lab_config *lab,
		      struct clientconf *conf, int *is_lab)
{
	struct option longopts[CLIOPT_COUNT + 1];
	char shorts[OPTIONS_SHORTS_MAX];
	int c, opt, json_bare = 0;

	*is_lab = argc > 1 && strcmp(argv[1], "lab") == 0;
	if (*is_lab) {
		argv++;
		argc--;
	}
	options_getopt(longopts, shorts, *is_lab);
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
		if (c == ':')
			cli_bad("option needs a value", argv[optind - 1]);
		opt = options_find(c);
		/* The lab parses --servers and --server-list to say below why they do not apply. */
		if (opt < 0 || !(options_applies(opt, *is_lab) || opt == CLIOPT_SERVERS ||
				 opt == CLIOPT_SERVER_LIST))
			cli_bad("unknown option", argv[optind - 1]);
		if (opt == CLIOPT_JSON)
			json_bare = optarg == NULL;
		cli_option(opt, optarg, cfg, lab);
	}
	if (json_bare)
		cli_json_bare(argc, argv, cfg, *is_lab);
	if (*is_lab && optind < argc)
		cli_bad("unexpected argument", argv[optind]);
	if (cfg->servers && cfg->server_list)
		cli_bad("--servers and --server-list cannot be combined", NULL);
	if (*is_lab && (cfg->servers || cfg->server_list))
		cli_bad("the lab runs its own server: --servers and --server-list do not apply", NULL);
	if (!*is_lab && (cfg->servers || cfg->server_list)) {
		if (optind < argc)
			cli_bad("give either SERVER or --servers/--server-list, not both", argv[optind]);
		if (cfg->http_url)
			cli_bad("--http and --servers/--server-list cannot be combined", NULL);
		cli_check_secure(cfg);
		cli_check_bind(cfg);
		return;
	}
	if (!*is_lab) {
		if (optind + 1 < argc)
			cli_bad("unexpected argument", argv[optind + 1]);
		if (optind < argc && cfg->http_url)
			cli_bad("give either SERVER or --http URL, not both", argv[optind]);
		cfg->server = optind < argc ? argv[optind] : NULL;
		cli_target(cfg, conf);
	}
	cli_check_secure(cfg);
	cli_check_bind(cfg);
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

/* Exit codes (bloatmeter(1), EXIT STATUS). */
enum {
	EXIT_COMPLETE = 0,
	EXIT_FAILURE_ = 1, /* nothing measured, or an output could not be written */
	EXIT_USAGE = 2,
	EXIT_PARTIAL = 3,  /* a failure mid-run: the outputs hold what was measured */
	EXIT_BUSY = 4,     /* the server refused for now: retry later */
};

/* Runs the measurement and its analysis. EXIT_COMPLETE or EXIT_PARTIAL with res analysed,
 * or EXIT_FAILURE_ / EXIT_BUSY with the reason in res->error after one logged sentence. */
static int cli_measure(const struct client_config *cfg, struct test_result *res)
{
	char err[256];
	int rc;

	if (cfg->ecn && !res->ecn.requested) /* the lab asked already, in its own namespace */
		ecn_request(0, &res->ecn);
	if (res->ecn.requested)
		log_info("ECN: %s", res->ecn.how);
	rc = cfg->http_url ? httpmode_run(cfg, res, err, sizeof(err))
			   : measure_run(cfg, res, err, sizeof(err));

	if (rc < 0) {
		log_error("%s", err);
		snprintf(res->error, sizeof(res->error), "%s", err);
		return res->server_busy ? EXIT_BUSY : EXIT_FAILURE_;
	}
	if (rc > 0)
		log_error("%s; the results measured until then are saved as partial", err);
	analysis_run(res);
	return rc > 0 ? EXIT_PARTIAL : EXIT_COMPLETE;
}

/* Nothing was measured: -J, --json and --log still get a document that says so, as iperf3's
 * {"error": ...}, so a script or a timer's history sees the failure. */
static int cli_output_failed(const struct test_result *res)
{
	const struct client_config *cfg = &res->cfg;
	int rc = 0;

	if (cfg->json_file && report_json_failed_write(res, cfg->json_file) < 0)
		rc = 1;
	if (cfg->log_file && history_append_failed(res, cfg->log_file) < 0)
		rc = 1;
	if (cfg->json_stdout && report_json_failed_write(res, "-") < 0)
		rc = 1;
	return rc;
}

/* What the reports name of a lab, kept past the lab (its strings go with lab_destroy). */
struct cli_lab_names {
	char server[INET6_ADDRSTRLEN];
	char url[128];
};

/* Points the configuration and the result's copy of it at names' copies of the lab's strings. */
static void cli_lab_keep(struct client_config *cfg, struct test_result *res,
			 struct cli_lab_names *names)
{
	snprintf(names->server, sizeof(names->server), "%s", cfg->server ? cfg->server : "");
	cfg->server = res->cfg.server = names->server;
	if (cfg->http_url != NULL) {
		snprintf(names->url, sizeof(names->url), "%s", cfg->http_url);
		cfg->http_url = res->cfg.http_url = names->url;
		cfg->server = res->cfg.server = names->url;
	}
	cfg->tls_ca = res->cfg.tls_ca = NULL; /* the lab's certificate is deleted with it */
}

static int cli_lab(struct client_config *cfg, const struct lab_config *lcfg, struct test_result *res,
		   struct cli_lab_names *names)
{
	char err[512];
	struct lab *lab;
	int rc;

	/* Not root: the whole lab in a user namespace of its own, entered while this process
	 * still has one thread (unshare refuses a user namespace to a threaded process). */
	if (lab_userns_enter(err, sizeof(err)) < 0) {
		log_error("%s", err);
		return 1;
	}
	lab = lab_create(lcfg, err, sizeof(err));
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
	if (lab_http_url(lab) != NULL) { /* --http / --https: the daemon's public listener */
		cfg->http_url = cfg->server = lab_http_url(lab);
		cfg->tls_ca = lab_http_ca(lab);
	}
	cfg->run_as = NULL; /* the namespaces need root to the end: no -Z */
	/* The lab runs as root on its own namespaces: show every probe kind unless told not to. */
	if (!cfg->probes_set)
		cfg->probes |= PROBE_BIT(PROBE_PCAP);
	result_init(res, cfg);
	if (cfg->ecn) /* in the lab's client namespace: setting tcp_ecn there touches nothing else */
		ecn_request(1, &res->ecn);
	rc = cli_measure(cfg, res);
	if (lab_leave_client(lab) < 0)
		log_warnx("cannot return to the original network namespace");
	res->lab = 1;
	lab_get_truth(lab, &res->truth);
	lab_get_bneck(lab, res);
	cli_lab_keep(cfg, res, names);
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

/* -Z: before anything is measured, whether the user can write the output files (they are
 * written after the run, as that user). 0, or 1 after one sentence (also in res->error). */
static int cli_check_user(const struct client_config *cfg, struct test_result *res)
{
	struct dropuser_out outs[5];
	size_t n = 0;
	char err[sizeof(res->error)];

	if (cfg->json_file && strcmp(cfg->json_file, "-") != 0)
		outs[n++] = (struct dropuser_out){ cfg->json_file, 0 };
	if (cfg->log_file)
		outs[n++] = (struct dropuser_out){ cfg->log_file, 1 };
	if (cfg->prom_file)
		outs[n++] = (struct dropuser_out){ cfg->prom_file, 0 };
	if (cfg->html_file)
		outs[n++] = (struct dropuser_out){ cfg->html_file, 0 };
	if (cfg->flent_file)
		outs[n++] = (struct dropuser_out){ cfg->flent_file, 0 };
	if (dropuser_check(cfg->run_as, outs, n, err, sizeof(err)) == 0)
		return 0;
	log_error("%s", err);
	snprintf(res->error, sizeof(res->error), "%s", err);
	return 1;
}

/* Without -Z, a client that sudo started runs as the user who called sudo: the outputs they
 * asked for then land where they can write and belong to them (tcpdump's fixed default user
 * cannot write to a home directory). */
static void cli_default_user(struct client_config *cfg)
{
	const char *sudo_user = getenv("SUDO_USER");

	if (cfg->run_as == NULL || cfg->run_as_set || sudo_user == NULL || sudo_user[0] == '\0')
		return;
	cfg->run_as = sudo_user;
}

/* Races the candidates' idle RTTs and points cfg at the winner. 0, or 1 after one sentence. */
static int cli_choose(struct client_config *cfg, struct fleet *fleet)
{
	struct fleet_timing t = fleet_timing_default();
	char err[1024];
	int i = fleet_measure(fleet, &t, cfg->bind ? &cfg->local : NULL, err, sizeof(err));

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
	struct cli_lab_names lab_names;
	struct fleet *fleet;
	struct clientconf *conf = calloc(1, sizeof(*conf));
	int is_lab, rc;

	if (argc > 1 && strcmp(argv[1], "analyze") == 0)
		return analyze_main(argc - 1, argv + 1);
	if (conf == NULL)
		fatalx("out of memory");
	config_defaults(&cfg);
	cli_parse(argc, argv, &cfg, &lab, conf, &is_lab);
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
		rc = cli_lab(&cfg, &lab, &res, &lab_names);
	} else {
		cli_default_user(&cfg);
		result_init(&res, &cfg);
		rc = cli_check_user(&cfg, &res);
		if (rc == 0 && fleet)
			rc = cli_choose(&cfg, fleet);
		res.cfg = cfg; /* cli_choose pointed it at the chosen server */
		res.fleet = fleet;
		if (rc == 0)
			rc = cli_measure(&cfg, &res);
	}
	if (rc == EXIT_COMPLETE || rc == EXIT_PARTIAL) {
		if (cli_output(&res) != 0)
			rc = EXIT_FAILURE_;
	} else if (cli_output_failed(&res) != 0) {
		rc = EXIT_FAILURE_;
	}
	result_free(&res);
	free(fleet);
	free(conf);
	return rc;
}

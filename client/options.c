/* options: the table of bloatmeter's options and what is built from it — getopt_long's array,
 * the short-option string and the usage text. */
#include "client/options.h"

#include <string.h>

#include "client/model/config.h"
#include "client/model/fleet.h"
#include "client/model/httptarget.h"

#define OPTIONS_STR_(x) #x
#define OPTIONS_STR(x) OPTIONS_STR_(x)

/* getopt_long's value for an option without a short flag: OPTIONS_LONG + its index. */
#define OPTIONS_LONG 256
/* The help text starts in this column; a longer flag puts it on the next line. */
#define OPTIONS_HELP_COL 25

int options_arg_optional(const struct client_option *o)
{
	return strcmp(o->name, "json") == 0; /* --json alone = -J; --json=FILE */
}

int options_lab_switch(const struct client_option *o)
{
	return strcmp(o->name, "http") == 0; /* the lab's --http: no URL, its own daemon */
}

static const struct client_option options_table[CLIOPT_COUNT] = {
	[CLIOPT_PORT] = { "port", 'p', "PORT", CLIOPT_ALL,
			  "server port (default " OPTIONS_STR(CLIENT_DEFAULT_PORT) ")" },
	[CLIOPT_VERSION4] = { "version4", '4', NULL, CLIOPT_TEST,
			      "only IPv4 addresses of SERVER" },
	[CLIOPT_VERSION6] = { "version6", '6', NULL, CLIOPT_TEST,
			      "only IPv6 addresses of SERVER" },
	[CLIOPT_BIND] = { "bind", 'B', "ADDR", CLIOPT_TEST,
			  "send everything from the local address ADDR: control,\n"
			  "load and probes (implies its family, as -4/-6)" },
	[CLIOPT_PARALLEL] = { "parallel", 'P', "N|auto", CLIOPT_ALL,
			      "TCP flows per loaded direction, 1-64 (default 8); auto:\n"
			      "start with one and add one per second until one more\n"
			      "gains < 5 %" },
	[CLIOPT_TIME] = { "time", 't', "SECONDS", CLIOPT_ALL,
			  "length of each loaded phase, 2-3600 (default 10; a\n"
			  "default run takes about 41 s)" },
	[CLIOPT_INTERVAL] = { "interval", 'i', "MS", CLIOPT_ALL,
			      "UDP probe interval, 1-1000 (default 10)" },
	[CLIOPT_PHASES] = { "phases", 0, "LIST", CLIOPT_ALL,
			    "comma list of idle,download,upload,bidirectional, each\n"
			    "at most once (default all)" },
	[CLIOPT_CC] = { "cc", 0, "NAME", CLIOPT_ALL,
			"congestion control of the load flows, both ends\n"
			"(default cubic)" },
	[CLIOPT_IDLE] = { "idle", 0, "SECONDS", CLIOPT_ALL,
			  "length of the idle phase, 1-600 (default 5)" },
	[CLIOPT_GAP] = { "gap", 0, "SECONDS", CLIOPT_ALL,
			 "drain gap after each loaded phase, 0-60 (default 2)" },
	[CLIOPT_REVERSE] = { "reverse", 'R', NULL, CLIOPT_ALL,
			     "the download only, as iperf3 -R\n"
			     "(--phases idle,download)" },
	[CLIOPT_BIDIR] = { "bidir", 0, NULL, CLIOPT_ALL,
			   "both directions at once only, as iperf3 --bidir\n"
			   "(--phases idle,bidirectional)" },
	[CLIOPT_QUICK] = { "quick", 0, NULL, CLIOPT_ALL,
			   "an 11 s run: idle 1 s, download and upload 4 s each,\n"
			   "0.5 s gaps, no bidirectional phase (shorter windows:\n"
			   "wider intervals; later options override it)" },
	[CLIOPT_PROBE_SIZE] = { "probe-size", 0, "BYTES", CLIOPT_ALL,
				"UDP probe size, 64-1400 (default 100)" },
	[CLIOPT_PROBES] = { "probes", 0, "LIST", CLIOPT_ALL,
			    "probe kinds: udp,icmp,dns,tcp,inflow,pcap (default all\n"
			    "but pcap; lab: all; udp always runs)" },
	[CLIOPT_PROBE_INTERVAL] = { "probe-interval", 0, "KIND=MS", CLIOPT_ALL,
				    "interval of one kind (icmp 100, dns 200, tcp 200,\n"
				    "inflow 100 per direction; udp is -i)" },
	[CLIOPT_DSCP] = { "dscp", 0, "N", CLIOPT_ALL,
			  "DSCP (0-63) on probe packets, e.g. 46 (EF)" },
	[CLIOPT_ECN] = { "ecn", 0, NULL, CLIOPT_ALL,
			 "ask for ECN on the load flows (the network namespace's\n"
			 "net.ipv4.tcp_ecn; the lab sets it in its client) and\n"
			 "report whether the path marks or drops" },
	[CLIOPT_DNS_RESOLVER] = { "dns-resolver", 0, "ADDRESS|system", CLIOPT_ALL,
				  "also time DNS queries to a real resolver" },
	[CLIOPT_PCAP_FILE] = { "pcap-file", 0, "FILE", CLIOPT_ALL,
			       "with the pcap probe: keep the capture in FILE" },
	[CLIOPT_JSON_STDOUT] = { "json-stdout", 'J', NULL, CLIOPT_ALL,
				 "print the JSON report instead of text" },
	[CLIOPT_JSON] = { "json", 0, "FILE", CLIOPT_ALL,
			  "alone: the JSON report on stdout (like -J); =FILE:\n"
			  "also to FILE (\"--json FILE SERVER\" still works)" },
	[CLIOPT_LOG] = { "log", 0, "FILE", CLIOPT_ALL,
			 "append one compact JSON line per run (history)" },
	[CLIOPT_PROMETHEUS] = { "prometheus", 0, "FILE", CLIOPT_ALL,
				"write a node_exporter textfile (atomically)" },
	[CLIOPT_HTML] = { "html", 0, "FILE", CLIOPT_ALL,
			  "write a self-contained HTML report with charts" },
	[CLIOPT_FLENT] = { "flent", 0, "FILE", CLIOPT_ALL,
			   "write a flent data file (.flent.gz) flent can plot" },
	[CLIOPT_QUIET] = { "quiet", 'q', NULL, CLIOPT_ALL, "no text output" },
	[CLIOPT_VERBOSE] = { "verbose", 'v', NULL, CLIOPT_ALL,
			     "details in the text report, more logging (twice: debug)" },
	[CLIOPT_HELP] = { "help", 'h', NULL, CLIOPT_ALL, "print this help and exit" },
	[CLIOPT_VERSION] = { "version", 'V', NULL, CLIOPT_ALL, "print the version and exit" },
	[CLIOPT_TLS] = { "tls", 0, NULL, CLIOPT_TEST,
			 "TLS on the control connection (the load stays plain\n"
			 "TCP)" },
	[CLIOPT_TLS_LOAD] = { "tls-load", 0, NULL, CLIOPT_TEST,
			      "TLS on the load flows too, like HTTPS (implies --tls;\n"
			      "kernel TLS when the kernel has it; goodput counts\n"
			      "application bytes)" },
	[CLIOPT_CA] = { "ca", 0, "FILE", CLIOPT_TEST,
			"with --tls: trust these PEM certificates instead of the\n"
			"system store; the server's name or address is checked" },
	[CLIOPT_INSECURE] = { "insecure", 0, NULL, CLIOPT_TEST,
			      "with --tls: no certificate check at all (tests only)" },
	[CLIOPT_PSK_FILE] = { "psk-file", 0, "FILE", CLIOPT_TEST,
			      "authenticate with the pre-shared key in FILE (one line\n"
			      "\"ID KEY\", not readable by other users); the server\n"
			      "must prove it holds the key too" },
	[CLIOPT_SERVERS] = { "servers", 0, "LIST", CLIOPT_TEST,
			     "comma list of HOST, HOST:PORT, [IPV6]:PORT; measures\n"
			     "the one with the lowest idle RTT (median of 5 TCP\n"
			     "handshakes)" },
	[CLIOPT_SERVER_LIST] = { "server-list", 0, "FILE", CLIOPT_TEST,
				 "the same from a file: one server per line, # comments,\n"
				 "at most " OPTIONS_STR(FLEET_MAX) },
	[CLIOPT_DOWN_RATE] = { "down-rate", 0, "RATE", CLIOPT_LAB,
			       "downlink rate, e.g. 20mbit (default 20mbit)" },
	[CLIOPT_UP_RATE] = { "up-rate", 0, "RATE", CLIOPT_LAB, "uplink rate (default 20mbit)" },
	[CLIOPT_DOWN_BUFFER] = { "down-buffer", 0, "MS", CLIOPT_LAB,
				 "downlink bottleneck buffer, 1-10000 (default 100)" },
	[CLIOPT_UP_BUFFER] = { "up-buffer", 0, "MS", CLIOPT_LAB,
			       "uplink bottleneck buffer, 1-10000 (default 100)" },
	[CLIOPT_IPV6] = { "ipv6", 0, NULL, CLIOPT_LAB, "reach the server over IPv6" },
	[CLIOPT_DOWN_LOSS] = { "down-loss", 0, "PCT", CLIOPT_LAB,
			       "random loss on the downlink (nftables), 0-99, e.g. 1\n"
			       "(default 0)" },
	[CLIOPT_UP_LOSS] = { "up-loss", 0, "PCT", CLIOPT_LAB,
			     "random loss on the uplink, 0-99 (default 0)" },
	[CLIOPT_DAEMON] = { "daemon", 0, "PATH", CLIOPT_LAB,
			    "bloatmeterd to run (default: next to this program, or\n"
			    "in ../sbin)" },
	[CLIOPT_QDISC] = { "qdisc", 0, "NAME", CLIOPT_LAB,
			   "bottleneck queue: tbf (kernel, default), or in\n"
			   "userspace on TUN devices (up to 100 Mbit/s): fifo\n"
			   "(tail-drop), codel, fqcodel or pie" },
	[CLIOPT_ECN_MARK] = { "ecn-mark", 0, NULL, CLIOPT_LAB,
			      "the AQM CE-marks ECN-capable packets instead of\n"
			      "dropping them (codel, fqcodel, pie)" },
	[CLIOPT_DELAY] = { "delay", 0, "MS", CLIOPT_LAB,
			   "one-way path delay added each way, 0-1000 (default 0;\n"
			   "needs a userspace --qdisc)" },
	[CLIOPT_HOPS] = { "hops", 0, "N", CLIOPT_LAB,
			  "routers between client and server, 1-8 (default 1)" },
	[CLIOPT_BOTTLENECK_HOP] = { "bottleneck-hop", 0, "K", CLIOPT_LAB,
				    "the router that holds the bottleneck, 1 to --hops\n"
				    "(default 1); the others forward at full speed" },
	[CLIOPT_JSON_FILE] = { "json-file", 0, "FILE", CLIOPT_ALL,
			       "also write the JSON report to FILE (= --json=FILE)" },
	[CLIOPT_HTTP] = { "http", 0, "URL", CLIOPT_ALL,
			  "test against an HTTP speed-test server (GET /__down,\n"
			  "POST /__up), as SERVER http[s]://HOST[:PORT] does; lab:\n"
			  "--http without URL runs the HTTP mode against the lab\n"
			  "daemon's public listener" },
	[CLIOPT_HTTPS] = { "https", 0, NULL, CLIOPT_LAB,
			   "the same over HTTPS, with a lab certificate" },
	[CLIOPT_PER_HOP] = { "per-hop", 0, "icmp|udp", CLIOPT_ALL,
			     "latency of every hop to the server under load, from\n"
			     "TTL-limited probes (20/s), and where the queue builds" },
	[CLIOPT_USER] = { "user", 'Z', "USER", CLIOPT_TEST,
			  "started as root: run as USER once the sockets and\n"
			  "the capture are open, as tcpdump -Z (default: who ran\n"
			  "sudo, else nobody; -Z root keeps root); files are\n"
			  "written as USER" },
};

const struct client_option *options_get(enum client_opt opt)
{
	return &options_table[opt];
}

int options_applies(enum client_opt opt, int lab)
{
	enum client_opt_scope s = options_table[opt].scope;

	return s == CLIOPT_ALL || s == (lab ? CLIOPT_LAB : CLIOPT_TEST);
}

void options_getopt(struct option longopts[CLIOPT_COUNT + 1], char shorts[OPTIONS_SHORTS_MAX],
		    int lab)
{
	size_t n = 0;

	shorts[n++] = ':';
	for (int i = 0; i < CLIOPT_COUNT; i++) {
		const struct client_option *o = &options_table[i];

		/* The lab's --http is a switch; the measurement's takes the URL. */
		int has = !o->arg || (lab && options_lab_switch(o)) ? no_argument
			  : options_arg_optional(o)		    ? optional_argument
							    : required_argument;

		longopts[i] = (struct option){ o->name, has, NULL,
					       o->short_flag ? o->short_flag : OPTIONS_LONG + i };
		if (o->short_flag) {
			shorts[n++] = o->short_flag;
			if (o->arg)
				shorts[n++] = ':';
		}
	}
	shorts[n] = '\0';
	longopts[CLIOPT_COUNT] = (struct option){ NULL, 0, NULL, 0 };
}

int options_find(int c)
{
	if (c >= OPTIONS_LONG && c < OPTIONS_LONG + CLIOPT_COUNT)
		return c - OPTIONS_LONG;
	for (int i = 0; c > 0 && i < CLIOPT_COUNT; i++)
		if (options_table[i].short_flag == c)
			return i;
	return -1;
}

/* "  -p, --port PORT        server port ...": the flags, then the help from OPTIONS_HELP_COL
 * on, each further line of it indented to there. */
static void options_print(FILE *f, const struct client_option *o)
{
	int col;

	if (o->short_flag)
		col = fprintf(f, "  -%c, --%s", o->short_flag, o->name);
	else
		col = fprintf(f, "      --%s", o->name);
	if (o->arg)
		col += fprintf(f, options_arg_optional(o) ? "[=%s]" : " %s", o->arg);
	if (col >= OPTIONS_HELP_COL) {
		fputc('\n', f);
		col = 0;
	}
	fprintf(f, "%*s", OPTIONS_HELP_COL - col, "");
	for (const char *s = o->help; *s; s++) {
		fputc(*s, f);
		if (*s == '\n')
			fprintf(f, "%*s", OPTIONS_HELP_COL, "");
	}
	fputc('\n', f);
}

void options_usage(FILE *f)
{
	/* What comes before each scope's options. */
	static const char *const heading[] = {
		[CLIOPT_ALL] = "Measures latency under load (bufferbloat) and the bottleneck buffer "
			       "each way.\n",
		[CLIOPT_TEST] = "measurement only:\n",
		[CLIOPT_LAB] = "lab only: emulates a bottleneck in network namespaces, runs the real "
			       "daemon and\nclient through it and prints the measurement next to "
			       "the configured truth.\nRoot, or any user where the kernel allows "
			       "user namespaces (it runs in its own).\n",
	};

	fputs("usage: bloatmeter [options] SERVER\n"
	      "       bloatmeter [options] http[s]://HOST[:PORT][/PATH]  (HTTP speed test)\n"
	      "       bloatmeter [options]   (the configuration's default-target, else\n"
	      "                              " HTTPTARGET_DEFAULT ")\n"
	      "       bloatmeter [options] --servers LIST | --server-list FILE\n"
	      "       bloatmeter analyze [-J] FILE.pcap   (passive analysis of a capture)\n"
	      "       bloatmeter lab [--down-rate RATE] [--up-rate RATE] [--down-buffer MS]\n"
	      "                      [--up-buffer MS] [--qdisc NAME] [--ecn-mark]\n"
	      "                      [--delay MS] [--hops N] [--bottleneck-hop K] [--ipv6]\n"
	      "                      [options]\n",
	      f);
	for (int s = CLIOPT_ALL; s <= CLIOPT_LAB; s++) {
		fputs(heading[s], f);
		for (int i = 0; i < CLIOPT_COUNT; i++)
			if (options_table[i].scope == (enum client_opt_scope)s)
				options_print(f, &options_table[i]);
	}
}

/* config: everything the user chose for one client run, after parsing and validation. */
#ifndef BM_CLIENT_CONFIG_H
#define BM_CLIENT_CONFIG_H

#include <stdint.h>
#include <sys/socket.h>

enum phase_kind { PHASE_IDLE = 0, PHASE_DOWNLOAD, PHASE_UPLOAD, PHASE_BIDIR, PHASE_KINDS };

#define CLIENT_DEFAULT_PORT 4750

/* Probe kinds (--probes); UDP always runs: the buffer estimates and clock sync need it. */
enum probe_kind {
	PROBE_UDP = 0, PROBE_ICMP, PROBE_DNS, PROBE_TCP, PROBE_INFLOW, PROBE_PCAP, PROBE_KINDS
};
#define PROBE_BIT(k) (1u << (k))
#define PROBES_DEFAULT (PROBE_BIT(PROBE_UDP) | PROBE_BIT(PROBE_ICMP) | PROBE_BIT(PROBE_DNS) | \
			PROBE_BIT(PROBE_TCP) | PROBE_BIT(PROBE_INFLOW))

struct client_config {
	const char *server;       /* host name or address */
	const char *servers;      /* --servers LIST: candidates, the lowest idle RTT is used */
	const char *server_list;  /* --server-list FILE: the same, one per line */
	const char *server_addr;  /* the numeric address chosen from those for server (which
				   * stays the name, for TLS); NULL: resolve server */
	uint16_t port;
	enum phase_kind phases[PHASE_KINDS]; /* in run order */
	int nphases;
	int flows;                /* TCP flows per loaded direction (the start with flows_auto) */
	int flows_auto;           /* -P auto: add flows until one more gains < 5 % */
	double duration_s;        /* each loaded phase */
	double idle_s;            /* the idle phase */
	double gap_s;             /* drain gap after each loaded phase */
	double interval_ms;       /* UDP probe interval */
	int probe_size;           /* UDP probe bytes (payload) */
	char cc[16];              /* congestion control for load flows */
	int json_stdout;          /* -J */
	const char *json_file;    /* --json FILE */
	const char *log_file;     /* --log FILE: JSONL history */
	const char *prom_file;    /* --prometheus FILE */
	const char *html_file;    /* --html FILE */
	const char *flent_file;   /* --flent FILE */
	unsigned probes;          /* PROBE_BIT set (--probes) */
	int probes_set;           /* --probes was given (the lab adds pcap otherwise) */
	double probe_interval_ms[PROBE_KINDS]; /* per kind; [PROBE_UDP] mirrors interval_ms */
	int dscp;                 /* DSCP of probe packets, -1: leave the default */
	int ecn;                  /* --ecn: ask for ECN on the load flows */
	const char *dns_resolver; /* --dns-resolver ADDR|system, NULL: only the server's */
	const char *pcap_file;    /* --pcap-file FILE: save the capture */
	int quiet;                /* -q */
	int family;               /* -4 / -6: AF_INET, AF_INET6; AF_UNSPEC: any (default) */
	const char *bind;         /* -B ADDR as given; NULL: none */
	struct sockaddr_storage local; /* -B parsed (port 0): every socket of the test leaves
					* from it; AF_UNSPEC (zero): the kernel's choice */
	int verbose;
	/* The control channel (measurement only): --tls, its trust anchors (--ca FILE, NULL: the
	 * system store) or none at all (--insecure), and --psk-file FILE ("ID KEY"). */
	int tls;
	const char *tls_ca;
	int tls_insecure;
	const char *psk_file;
	int tls_load;             /* --tls-load: the load flows run TLS too (implies tls) */
	/* HTTP mode: the speed-test server's URL (SERVER given as http[s]://..., --http URL, or
	 * the configuration's default-target); NULL: a bloatmeterd test. */
	const char *http_url;
	const char *target_source; /* where the target came from: NULL, the command line; or
				    * "configuration file PATH", "built-in default" */
	int per_hop;              /* --per-hop icmp|udp: enum hop_mode (0: off) */
	/* -Z USER: started as root, run as USER once the sockets and capture are open (default
	 * CONFIG_DEFAULT_USER; a uid-0 user keeps root). NULL: no drop (the lab, which needs
	 * root for its namespaces to the end). */
	const char *run_as;
	int run_as_set;           /* -Z given (else a sudo caller's SUDO_USER is the default) */
};

#define CONFIG_DEFAULT_USER "nobody"

const char *phase_name(enum phase_kind k);
const char *probe_kind_name(enum probe_kind k);
/* Parses "udp,icmp,..." into cfg->probes (udp is added when missing); -1 on an unknown name. */
int config_parse_probes(struct client_config *cfg, const char *list);
/* Parses "KIND=MS" into cfg->probe_interval_ms; -1 on a bad kind or an interval outside
 * 1..10000 ms (udp: 1..1000). */
int config_parse_interval(struct client_config *cfg, const char *spec);
/* Parses "idle,download,..." into cfg->phases; -1 on an unknown or repeated name. */
int config_parse_phases(struct client_config *cfg, const char *list);
void config_defaults(struct client_config *cfg);

#endif

/* config: bloatmeterd's configuration as one value — what srvconfig parses from the file and
 * the flags, what the daemon's modules read (through server_ctx.cfg, swapped whole on reload).
 * A plain type, no functions. Layer: server; any server module may include it. */
#ifndef BM_SERVER_CONFIG_H
#define BM_SERVER_CONFIG_H

#include <stdint.h>

struct server_config {
	const char *bind_addr;  /* NULL = dual-stack wildcard */
	uint16_t port;          /* TCP control/data port; the UDP reflector uses the same number */
	int max_sessions;       /* concurrent test sessions */
	int max_sessions_per_client; /* ... from one IPv4 address or IPv6 /64 */
	int max_flows;          /* bulk connections per session and direction */
	int max_duration_s;     /* a session is closed after this long */
	uint16_t dns_port;      /* UDP port of the DNS responder; 0 = off */
	const char *dns_zone;   /* its zone; NULL = DNS_DEFAULT_ZONE */
	int verbose;            /* 0 warnings, 1 information, 2 debug */
	int dns_port_set;       /* dns-port was given; otherwise it follows port */
	/* Storage behind bind_addr and dns_zone when a flag or the file set them (server/srvconfig.c). */
	char bind_buf[256];
	char zone_buf[256];
	/* Where the values came from, so SIGHUP can build them again: the file (config_optional:
	 * it may be absent; config_loaded: it was read) and the command-line values that override
	 * it (SRVOPT_COUNT entries, NULL = not given; see server/srvconfig.h). */
	const char *config_path;
	int config_optional;
	int config_loaded;
	const char *const *overrides;
	/* Who to run as once the sockets are bound when started as root (server/privdrop.c):
	 * user "" = not set; allow_root: staying root is allowed. */
	char user[64];
	int allow_root;
	/* Limits (server/limits.h): bulk rate per session and direction (bit/s, 0 = none), UDP
	 * probe requests per second and session, seconds to classify a connection and say hello,
	 * seconds without traffic before a data connection or session is closed, and admission
	 * control (admission_if "" = off; refuse sessions while its egress exceeds the rate). */
	uint64_t max_rate_bps;
	int max_probe_rate;
	int handshake_timeout_s;
	int idle_timeout_s;
	char admission_if[16];
	uint64_t admission_max_rate_bps;
	/* Control-channel security (docs/bloatmeterd.conf.md): the pre-shared-key file, the TLS
	 * certificate chain and key (PEM), "" = not set; tls_required: plain control connections
	 * are refused. The parser checks only their form; server_check_security opens them. */
	char psk_file[256];
	char tls_cert[256];
	char tls_key[256];
	int tls_required;
	/* HTTP listener for /metrics, /healthz, the API and the dashboard (server/http.h): its
	 * port (0 = off) and address (default 127.0.0.1: the operator's, not the public's). */
	uint16_t http_port;
	char http_bind[256];
	int http_max_conns;     /* HTTP connections at once; more wait in the accept queue */
	/* Worker threads that run the sessions (server/worker.h); 0 = one per online CPU, at
	 * most 8; 1 = the main thread runs them too. */
	int workers;
	/* SCHED_FIFO priority of the UDP reflector thread (server/reflector.h); 0 = normal. */
	int reflector_priority;
	/* The public test listener (server/weblisten.h): its port (0 = off), address ("" = all),
	 * connections at once, and web_tls: serve HTTPS with tls-cert/tls-key. */
	uint16_t web_port;
	char web_bind[256];
	int web_max_conns;
	int web_tls;
	/* One JSON line per finished test (server/resultslog.h); "" = off. */
	char results_log[256];
};

#define SERVER_DEFAULT_PORT 4750

#endif

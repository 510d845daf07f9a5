/* server: bloatmeterd's top level — listeners, the accept path, and the threads it runs. */
#ifndef BM_SERVER_H
#define BM_SERVER_H

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
};

#define SERVER_DEFAULT_PORT 4750
#define SERVER_DRAIN_S 2 /* on SIGTERM, how long running sessions get to end */

/* Runs the daemon until SIGINT/SIGTERM, which end the running sessions within
 * SERVER_DRAIN_S seconds; SIGHUP reloads the run-time limits from cfg->config_path. Returns 0
 * on a clean stop, 1 if start-up failed. */
int server_run(const struct server_config *cfg);

#endif

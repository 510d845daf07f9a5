/* server: bloatmeterd's top level — listeners, the accept path, and the threads it runs. */
#ifndef BM_SERVER_H
#define BM_SERVER_H

#include <stdint.h>

struct server_config {
	const char *bind_addr;  /* NULL = dual-stack wildcard */
	uint16_t port;          /* TCP control/data port; the UDP reflector uses the same number */
	int max_sessions;       /* concurrent test sessions */
	int max_flows;          /* bulk connections per session and direction */
	int max_duration_s;     /* a session is closed after this long */
	uint16_t dns_port;      /* UDP port of the DNS responder; 0 = off */
	const char *dns_zone;   /* its zone; NULL = DNS_DEFAULT_ZONE */
};

#define SERVER_DEFAULT_PORT 4750

/* Runs the daemon until SIGINT/SIGTERM. Returns 0 on a clean stop, 1 if start-up failed. */
int server_run(const struct server_config *cfg);

#endif

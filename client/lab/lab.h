/* lab: an emulated bottleneck in network namespaces — client — router(s) — server joined by
 * veth pairs (a chain of up to 8 routers, labtopo.h), one tbf per direction on the bottleneck
 * router's egress ports (queue limit = rate × buffer)
 * or a userspace bottleneck on TUN devices in the router (tunfwd: a FIFO or an AQM, and a path
 * delay) — with the real bloatmeterd running in the server namespace. */
#ifndef BM_LAB_H
#define BM_LAB_H

#include <stddef.h>
#include <stdint.h>

#include "client/lab/labweb.h"
#include "client/model/result.h"

/* The bottleneck's queue: the kernel's tbf, or one run by the userspace bottleneck. */
enum lab_qdisc { LAB_QDISC_TBF, LAB_QDISC_FIFO, LAB_QDISC_CODEL, LAB_QDISC_FQCODEL,
		 LAB_QDISC_PIE, LAB_QDISCS };

/* The qdisc named by s ("tbf", "fifo", "codel", "fqcodel", "pie"), or -1. */
int lab_qdisc_parse(const char *s);

struct lab_config {
	enum lab_qdisc qdisc;
	int ecn_mark;              /* AQMs CE-mark ECT packets instead of dropping them */
	double delay_ms;           /* one-way delay per direction, userspace bottleneck only */
	uint64_t down_rate_bps;    /* tbf rate, server → client */
	uint64_t up_rate_bps;      /* tbf rate, client → server */
	double down_buffer_ms;     /* tbf queue limit = down_rate × down_buffer */
	double up_buffer_ms;
	double down_loss_pct;      /* random loss injected on the router (nftables), 0 = none */
	double up_loss_pct;
	int ipv6;                  /* the client reaches the server over IPv6 */
	int hops;                  /* routers in the chain, 1-8 (0 = 1) */
	int bottleneck_hop;        /* the router that holds the bottleneck, 1..hops (0 = 1) */
	const char *daemon_path;   /* bloatmeterd binary; NULL = look next to this program */
	uint16_t port;             /* daemon's control port */
	int daemon_verbose;        /* pass -v to the daemon */
	int http;                  /* LAB_HTTP_* (labweb.h): the daemon's public listener, and the client
				    * tests it in HTTP mode */
};

struct lab;

/* Creates the namespaces, links, addresses, routes, forwarding and tbf qdiscs and starts
 * bloatmeterd in the server namespace, returning once it accepts connections. Needs root.
 * On failure removes whatever it created and returns NULL with one sentence in err. */
struct lab *lab_create(const struct lab_config *cfg, char *err, size_t errlen);
/* The server's address as the client should dial it (numeric, no brackets). */
const char *lab_server_host(const struct lab *lab);
/* With cfg->http: the URL of the daemon's public listener, and the certificate to trust for
 * HTTPS (NULL for plain HTTP); NULL without cfg->http. */
const char *lab_http_url(const struct lab *lab);
const char *lab_http_ca(const struct lab *lab);
/* Moves the calling thread into the client namespace; call before creating threads. */
int lab_enter_client(struct lab *lab, char *err, size_t errlen);
/* Moves the calling thread back to the namespace it started in. */
int lab_leave_client(struct lab *lab);
void lab_get_truth(const struct lab *lab, struct lab_truth *truth);
/* After lab_get_truth, with the userspace bottleneck: its counters, and per loaded phase of res
 * its packets' sojourn percentiles over the phase's steady window (res->truth.sojourn). */
void lab_get_bneck(const struct lab *lab, struct test_result *res);
/* Stops the daemon and deletes every namespace the lab created; safe on partial set-up. */
void lab_destroy(struct lab *lab);

#endif

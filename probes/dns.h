/* dns (probe): DNS lookup latency on the runner's loop — one UDP query per interval, each for
 * a name never asked before (<seq>-<8 random hex>.<zone>), so no cache on the way can answer
 * it: against the server's authoritative responder (bloatmeterd --dns-port) or, with RD set,
 * through a recursive resolver. */
#ifndef BM_PROBE_DNS_H
#define BM_PROBE_DNS_H

#include <stdint.h>
#include <sys/socket.h>

#include <event2/event.h>

#include "probes/runner.h"
#include "probes/series.h"

struct dns_probe_config {
	struct sockaddr_storage server; /* where queries go, port included */
	socklen_t server_len;
	char zone[256];                 /* the names asked end in this zone */
	int recursion_desired;          /* RD bit: 1 when server is a recursive resolver */
	uint16_t qtype;                 /* DNS_TYPE_A, DNS_TYPE_AAAA, ...; 0 = A */
	int64_t interval_ns;            /* > 0 */
	int64_t timeout_ns;             /* > 0: a later answer makes the sample SAMPLE_LOST */
	int dscp;                       /* 0..63, or -1 to leave the default */
	struct sockaddr_storage local;  /* -B: the source address; AF_UNSPEC (zero): any */
};

struct dns_probe;

/* Opens a UDP socket connected to the server and adds the probe's events to base (the
 * runner's); the first query leaves when base starts running, later ones on an absolute
 * schedule. Samples go to out (its name is the caller's: "dns" or "dns_resolver"; method,
 * available, and target when empty, are set here), which must outlive the probe. A sample is
 * SAMPLE_OK for NOERROR and NXDOMAIN, SAMPLE_ERROR for any other rcode (aux = rcode either
 * way), SAMPLE_LOST without an answer within timeout_ns; answers that do not match id, source
 * and question are counted in out->bad_replies and ignored. NULL with one sentence in err
 * (also copied to out->note, with out->available = 0) on an invalid configuration or socket
 * failure. */
struct dns_probe *dns_probe_start(struct event_base *base, const struct dns_probe_config *cfg,
				  struct probe_series *out, char *err, size_t errlen);
/* For runner_add: stop_sending ends the schedule (answers still count during the runner's
 * grace period); destroy marks what is still pending SAMPLE_LOST, closes and frees. */
extern const struct probe_ops dns_probe_ops;

#endif

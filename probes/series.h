/* series: the samples of one auxiliary probe kind against one target (ICMP, DNS, new TCP
 * connection, in-flow, passive capture). Every kind produces the same record so analysis and
 * output treat them alike. Times are client CLOCK_MONOTONIC ns. */
#ifndef BM_PROBE_SERIES_H
#define BM_PROBE_SERIES_H

#include <stddef.h>
#include <stdint.h>

enum sample_status {
	SAMPLE_PENDING = 0, /* sent, no answer yet (becomes SAMPLE_LOST when the probe ends) */
	SAMPLE_OK = 1,      /* rtt_ns is valid */
	SAMPLE_LOST = 2,    /* no answer within the probe's timeout */
	SAMPLE_ERROR = 3,   /* an answer that is an error (ICMP unreachable, DNS SERVFAIL, RST…) */
};

struct rtt_sample {
	int64_t send_ns;
	int64_t rtt_ns;     /* valid when status == SAMPLE_OK */
	int32_t status;     /* enum sample_status */
	int32_t aux;        /* kind-specific detail (e.g. DNS rcode, TCP handshake share in µs) */
};

#define SERIES_NAME_LEN 24
#define SERIES_TARGET_LEN 80
#define SERIES_NOTE_LEN 320

struct probe_series {
	char name[SERIES_NAME_LEN];     /* "icmp", "icmp_hop", "dns", "dns_resolver", "tcp_connect",
					 * "inflow_down", "inflow_up", "pcap_rtt_down", ... */
	char target[SERIES_TARGET_LEN]; /* address (and port) probed, for the report */
	char method[32];                /* e.g. "ping socket", "raw socket", "udp" */
	int available;                  /* 0: the probe could not run; note says why */
	char note[SERIES_NOTE_LEN];     /* one sentence for the report, or "" */
	uint64_t bad_replies;           /* malformed or unmatched answers, ignored */
	struct rtt_sample *s;
	size_t n, cap;
};

/* Sets name/target and zeroes the rest. */
void series_init(struct probe_series *ps, const char *name, const char *target);
/* Appends a PENDING sample sent at send_ns; returns its index, or -1 when out of memory. */
long series_push(struct probe_series *ps, int64_t send_ns);
/* Completes sample i (ignored if i is out of range or the sample is no longer pending). */
void series_complete(struct probe_series *ps, long i, int64_t rtt_ns, enum sample_status st);
/* Marks every still-pending sample LOST (called when the probe stops). */
void series_close(struct probe_series *ps);
/* Formats a note (one sentence) into ps->note. */
void series_note(struct probe_series *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void series_free(struct probe_series *ps);

#endif

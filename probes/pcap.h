/* pcap: live passive capture of the test's own traffic (libpcap, root or CAP_NET_RAW) on its
 * own thread, fed to the passive analyzer (probes/pcapanalyze.h) with capture times converted
 * to CLOCK_MONOTONIC so they compare with probe times; optionally saved to a file that
 * `bloatmeter analyze` reads. */
#ifndef BM_PROBE_PCAP_H
#define BM_PROBE_PCAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "probes/pcapanalyze.h"

#define PCAP_CAPTURE_SNAPLEN 192 /* link + IP + TCP with options, or UDP + the 64-byte probe
				  * header; never the bulk payload */

struct pcap_capture_config {
	const char *ifname;              /* NULL: the interface the kernel routes the server by */
	struct sockaddr_storage client;  /* AF_UNSPEC: any address of this host */
	struct sockaddr_storage server;  /* required; its port is not used */
	uint16_t tcp_port;               /* control and data connections (required) */
	uint16_t udp_port;               /* UDP probes; 0: none */
	uint16_t dns_port;               /* the server's DNS responder, TCP and UDP; 0: none */
	const char *save_file;           /* NULL: keep nothing; else a pcap file (nanoseconds) */
};

struct pcap_capture;

/* Opens the interface (snaplen PCAP_CAPTURE_SNAPLEN, immediate mode, nanosecond stamps when
 * the kernel has them), sets a BPF filter on the server address and ports, and starts the
 * thread. NULL with one sentence in err when not permitted, no such interface, or libpcap
 * fails. */
struct pcap_capture *pcap_capture_start(const struct pcap_capture_config *cfg, char *err,
					size_t errlen);
/* Stops the thread after draining what the kernel already holds, reads the drop counters and
 * closes the interface and the saved file. Idempotent. */
void pcap_capture_stop(struct pcap_capture *c);
/* After stop: the analyzer (owned by c). */
struct pa *pcap_capture_analyzer(struct pcap_capture *c);
/* After stop: packets the kernel or interface dropped before libpcap saw them. */
uint64_t pcap_capture_drops(const struct pcap_capture *c);
/* After stop: packets libpcap handed over; 1 if stamps were nanosecond. */
uint64_t pcap_capture_packets(const struct pcap_capture *c);
int pcap_capture_nano(const struct pcap_capture *c);
/* The interface captured on. */
const char *pcap_capture_ifname(const struct pcap_capture *c);
/* After stop: one sentence if the capture thread failed, else NULL. */
const char *pcap_capture_error(const struct pcap_capture *c);
/* Stops if needed and frees everything (NULL is fine). */
void pcap_capture_free(struct pcap_capture *c);

/* The BPF filter for cfg into buf (exposed for tests). -1 if it does not fit or the server
 * address is not IP. */
int pcap_capture_filter(const struct pcap_capture_config *cfg, char *buf, size_t len);

#endif

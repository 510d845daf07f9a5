/* fuzz_pcap: hostile captures for the passive analyzer. The first byte chooses the mode:
 *  - bit 7 set: the rest is a capture file (pcap or pcapng) read through fmemopen and
 *    pcap_fopen_offline into the analyze path (summary as text, or JSON with bit 0);
 *  - else: the rest is a run of packets, each a 2-byte big-endian length and that many bytes
 *    (the last one takes what is left), fed to pa_packet under the link type the low bits
 *    name, with the server fixed or not (bit 6); then the whole rest once more as one packet
 *    for every supported link type. Every packet is handed over in a buffer of exactly its
 *    captured length, so ASan sees any read past it. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <pcap/pcap.h>

#include "client/analyze_cmd.h"
#include "client/model/result.h"
#include "probes/pcapanalyze.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const int fuzz_links[] = { DLT_EN10MB, DLT_LINUX_SLL, DLT_LINUX_SLL2, DLT_RAW,
				  DLT_IPV4,   DLT_IPV6,      DLT_NULL,       DLT_LOOP };
#define FUZZ_NLINKS (sizeof(fuzz_links) / sizeof(fuzz_links[0]))

/* The summary's destination; one per process (harness state, not production code). */
static FILE *fuzz_sink(void)
{
	static FILE *sink;

	if (sink == NULL && (sink = fopen("/dev/null", "w")) == NULL)
		abort();
	return sink;
}

static void fuzz_file(const uint8_t *data, size_t size, int json)
{
	char errbuf[PCAP_ERRBUF_SIZE], err[PCAP_ERRBUF_SIZE + 512];
	FILE *f;
	pcap_t *p;
	int rc;

	if (size == 0)
		return;
	f = fmemopen((void *)data, size, "rb");
	if (f == NULL)
		return;
	p = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, errbuf);
	if (p == NULL) {
		fclose(f); /* not taken over on failure */
		return;
	}
	rc = analyze_capture(p, "fuzz", json, fuzz_sink(), err, sizeof(err));
	if (rc != 0 && err[0] == '\0')
		abort(); /* every failure and warning has its sentence */
	pcap_close(p); /* closes f */
}

/* One packet in a buffer of exactly caplen bytes. */
static void fuzz_packet(struct pa *pa, int link, int64_t ts, const uint8_t *data, size_t caplen,
			size_t wirelen)
{
	uint8_t *copy = malloc(caplen ? caplen : 1);

	if (copy == NULL)
		abort();
	memcpy(copy, data, caplen);
	pa_packet(pa, link, ts, copy, caplen, wirelen);
	free(copy);
}

static void fuzz_results(const struct pa *pa)
{
	struct pa_summary s;
	struct probe_series ps;
	struct probe_rec recs[4];
	struct pa_wire w;

	pa_summary(pa, &s);
	if (s.up.packets + s.down.packets + s.other + s.malformed != s.packets)
		abort();
	for (int cls = PA_CLASS_UP; cls <= PA_CLASS_DOWN; cls++) {
		if (pa_rtt_series(pa, (enum pa_class)cls, &ps) == 0) {
			for (size_t i = 1; i < ps.n; i++)
				if (ps.s[i].send_ns < ps.s[i - 1].send_ns || ps.s[i].status != SAMPLE_OK)
					abort();
		}
		series_free(&ps);
	}
	memset(recs, 0, sizeof(recs));
	for (uint32_t i = 0; i < 4; i++) {
		recs[i].seq = i;
		recs[i].received = (uint8_t)(i & 1);
		recs[i].send_ns = (int64_t)i * 1000;
		recs[i].rtt_ns = 500;
	}
	recs[3].send_ns = INT64_MAX;
	recs[3].rtt_ns = INT64_MAX;
	if (pa_probe_wire(pa, recs, 4, &w) == 0 && (w.n_tx > 4 || w.n_rx > 2))
		abort();
}

static void fuzz_packets(const uint8_t *data, size_t size, uint8_t mode)
{
	struct pa_config cfg;
	struct sockaddr_in *sin = (struct sockaddr_in *)&cfg.server;
	struct pa *pa;
	int link = fuzz_links[mode % FUZZ_NLINKS];
	int64_t ts = 1700000000LL * 1000000000LL;
	size_t o = 0;

	memset(&cfg, 0, sizeof(cfg));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(0xc6336401); /* 198.51.100.1 */
	cfg.server_ports[0] = 4750;
	pa = pa_new((mode & 0x40) ? &cfg : NULL);
	if (pa == NULL)
		abort();
	while (o < size) {
		size_t len = size - o;

		if (len > 2) {
			size_t want = (size_t)data[o] << 8 | data[o + 1];

			o += 2;
			len = want < size - o ? want : size - o;
		}
		/* the wire length: as captured, or longer as a snaplen leaves it */
		fuzz_packet(pa, link, ts, data + o, len, len + (len & 1) * 1400);
		ts += (int64_t)(len & 0xff) * 100000;
		o += len;
	}
	for (size_t i = 0; i < FUZZ_NLINKS; i++)
		fuzz_packet(pa, fuzz_links[i], ts, data, size, size);
	fuzz_results(pa);
	pa_free(pa);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 0x80)
		fuzz_file(data + 1, size - 1, data[0] & 1);
	else
		fuzz_packets(data + 1, size - 1, data[0]);
	return 0;
}

/* test_pcapanalyze: the passive analyzer on hand-built captures written with libpcap — an
 * IPv4 download flow with its handshake and bloatmeter's data hello, an IPv6 upload flow seen
 * without its SYN and with sequence numbers wrapping, one retransmission each way, a CE mark,
 * TSval/TSecr pairs at known times, a BMP1 probe request and reply — read back through
 * pcap_open_offline and checked exactly; every supported link type; and `analyze` on good,
 * truncated, foreign and unsupported files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <math.h>
#include <unistd.h>

#include <json-c/json.h>
#include <pcap/pcap.h>

#include "client/analyze_cmd.h"
#include "client/model/result.h"
#include "common/bytes.h"
#include "common/wire.h"
#include "probes/pcap.h"
#include "probes/pcapanalyze.h"

#define T0_NS (1700000000LL * 1000000000LL)
#define MS(x) ((int64_t)(x) * 1000000LL)
#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_PSH 0x08
#define TH_ACK 0x10
#define UP 0
#define DOWN 1

static char tmpdir[64];
static char good_path[128];

/* What the good capture holds, counted while it is written. */
static struct {
	uint64_t packets[2], bytes[2];
} expect;

/* ---- building packets ---- */

struct seg {
	int v6;
	const char *src, *dst;
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags, tos;
	int ts;
	uint32_t tsval, tsecr;
	size_t payload;          /* on the wire */
	const uint8_t *data;     /* the first data_cap bytes of it are captured */
	size_t data_cap;
};

/* IP header for l4_len transport bytes; returns its length. */
static size_t build_ip(uint8_t *b, int v6, const char *src, const char *dst, uint8_t tos,
		       uint8_t proto, size_t l4_len)
{
	if (v6) {
		memset(b, 0, 40);
		b[0] = (uint8_t)(0x60 | tos >> 4);
		b[1] = (uint8_t)(tos << 4);
		bytes_put_be16(b + 4, (uint16_t)l4_len);
		b[6] = proto;
		b[7] = 64;
		assert_int_equal(inet_pton(AF_INET6, src, b + 8), 1);
		assert_int_equal(inet_pton(AF_INET6, dst, b + 24), 1);
		return 40;
	}
	memset(b, 0, 20);
	b[0] = 0x45;
	b[1] = tos;
	bytes_put_be16(b + 2, (uint16_t)(20 + l4_len));
	b[6] = 0x40; /* DF */
	b[8] = 64;
	b[9] = proto;
	assert_int_equal(inet_pton(AF_INET, src, b + 12), 1);
	assert_int_equal(inet_pton(AF_INET, dst, b + 16), 1);
	return 20;
}

/* Ethernet + IP + TCP (+ NOP NOP TS) + the captured payload. Returns caplen. */
static size_t build_tcp(uint8_t *out, const struct seg *s, size_t *wirelen)
{
	size_t thl = s->ts ? 32 : 20, off;
	uint8_t *t;

	memset(out, 0, 14);
	out[0] = 0x02;
	out[6] = 0x02;
	bytes_put_be16(out + 12, s->v6 ? 0x86dd : 0x0800);
	off = 14 + build_ip(out + 14, s->v6, s->src, s->dst, s->tos, IPPROTO_TCP, thl + s->payload);
	t = out + off;
	memset(t, 0, thl);
	bytes_put_be16(t, s->sport);
	bytes_put_be16(t + 2, s->dport);
	bytes_put_be32(t + 4, s->seq);
	bytes_put_be32(t + 8, s->ack);
	t[12] = (uint8_t)((thl / 4) << 4);
	t[13] = s->flags;
	bytes_put_be16(t + 14, 65535);
	if (s->ts) {
		t[20] = 1;
		t[21] = 1;
		t[22] = 8;
		t[23] = 10;
		bytes_put_be32(t + 24, s->tsval);
		bytes_put_be32(t + 28, s->tsecr);
	}
	off += thl;
	if (s->data_cap)
		memcpy(out + off, s->data, s->data_cap);
	*wirelen = off + s->payload;
	return off + s->data_cap;
}

/* Ethernet + IPv4 + UDP carrying a probe of size bytes, of which the 64-byte header is
 * captured (as the live capture's snaplen does). */
static size_t build_probe(uint8_t *out, const char *src, const char *dst, uint16_t sport,
			  uint16_t dport, const struct wire_probe *w, size_t size, size_t *wirelen)
{
	size_t off;
	uint8_t body[WIRE_PROBE_MAX];

	memset(out, 0, 14);
	bytes_put_be16(out + 12, 0x0800);
	off = 14 + build_ip(out + 14, 0, src, dst, 0, IPPROTO_UDP, 8 + size);
	bytes_put_be16(out + off, sport);
	bytes_put_be16(out + off + 2, dport);
	bytes_put_be16(out + off + 4, (uint16_t)(8 + size));
	bytes_put_be16(out + off + 6, 0);
	wire_probe_encode(w, body, size);
	memcpy(out + off + 8, body, WIRE_PROBE_MIN);
	*wirelen = off + 8 + size;
	return off + 8 + WIRE_PROBE_MIN;
}

static void dump_at(pcap_dumper_t *d, int64_t ns, const uint8_t *buf, size_t caplen,
		    size_t wirelen)
{
	struct pcap_pkthdr h;

	memset(&h, 0, sizeof(h));
	h.ts.tv_sec = (time_t)(ns / 1000000000LL);
	h.ts.tv_usec = (suseconds_t)(ns % 1000000000LL); /* nanoseconds in a nano dump */
	h.caplen = (bpf_u_int32)caplen;
	h.len = (bpf_u_int32)wirelen;
	pcap_dump((u_char *)d, &h, buf);
}

static void put_seg(pcap_dumper_t *d, int64_t t_ms, int dir, const struct seg *s)
{
	uint8_t buf[256];
	size_t wirelen, caplen = build_tcp(buf, s, &wirelen);

	dump_at(d, T0_NS + MS(t_ms), buf, caplen, wirelen);
	expect.packets[dir]++;
	expect.bytes[dir] += wirelen;
}

/* ---- the good capture ---- */

#define C4 "192.0.2.1"
#define S4 "198.51.100.1"
#define C6 "2001:db8::1"
#define S6 "2001:db8::2"

/* IPv4 download flow. The client's port (1000) is below the server's, so only the SYN can
 * make it the client. Client TSvals are echoed 10 ms (SYN) and 20..29 ms (pure ACKs echoed by
 * data) later; server TSvals are echoed 1 ms later. Data segment 3 is CE-marked, the others
 * ECT(0); segment 3 is sent again at the end. */
static void write_download(pcap_dumper_t *d)
{
	uint8_t hello[WIRE_DATA_HELLO_LEN];
	struct wire_data_hello h = { .version = WIRE_VERSION, .dir = WIRE_DIR_DOWN, .flow_id = 1 };
	struct seg up = { .src = C4, .dst = S4, .sport = 1000, .dport = 4750, .ts = 1 };
	struct seg dn = { .src = S4, .dst = C4, .sport = 4750, .dport = 1000, .ts = 1 };
	int64_t t = 100;

	wire_data_hello_encode(&h, hello);
	up.seq = 100;
	up.flags = TH_SYN;
	up.tsval = 1000;
	put_seg(d, 0, UP, &up);
	dn.seq = 5000;
	dn.ack = 101;
	dn.flags = TH_SYN | TH_ACK;
	dn.tsval = 7000;
	dn.tsecr = 1000;
	put_seg(d, 10, DOWN, &dn);
	up.seq = 101;
	up.ack = 5001;
	up.flags = TH_ACK | TH_PSH;
	up.tsval = 1001;
	up.tsecr = 7000;
	up.payload = up.data_cap = sizeof(hello);
	up.data = hello;
	put_seg(d, 11, UP, &up);
	up.seq = 133;
	up.payload = up.data_cap = 0;
	dn.flags = TH_ACK;
	dn.ack = 133;
	dn.payload = 1448;
	for (uint32_t k = 0; k < 10; k++) {
		up.ack = 5001 + 1448 * k;
		up.flags = TH_ACK;
		up.tsval = 2000 + k;
		up.tsecr = k == 0 ? 7000 : 8000 + k - 1;
		put_seg(d, t, UP, &up);
		dn.seq = 5001 + 1448 * k;
		dn.tsval = 8000 + k;
		dn.tsecr = 2000 + k;
		dn.tos = k == 3 ? 0x03 : 0x02;
		put_seg(d, t + 20 + k, DOWN, &dn);
		t += 20 + k + 1;
	}
	/* the retransmission echoes a TSval that was timed already: no sample */
	dn.seq = 5001 + 1448 * 3;
	dn.tsval = 8100;
	dn.tsecr = 2009;
	dn.tos = 0x02;
	put_seg(d, t + 5, DOWN, &dn);
}

/* IPv6 upload flow seen mid-way (no SYN, no hello): the server has the lower port. 50 data
 * segments from a sequence number 4096 below the wrap, ECT(1); each new client TSval (every
 * 5 segments, 10 ms apart) is echoed by a server pure ACK 30..39 ms later; segment 10 is sent
 * again at the end. */
static void write_upload(pcap_dumper_t *d)
{
	struct seg up = { .v6 = 1, .src = C6, .dst = S6, .sport = 50000, .dport = 4750, .ts = 1,
			  .flags = TH_ACK, .tos = 0x01, .payload = 1448, .ack = 77 };
	struct seg dn = { .v6 = 1, .src = S6, .dst = C6, .sport = 4750, .dport = 50000, .ts = 1,
			  .flags = TH_ACK, .seq = 77 };
	const uint32_t seq0 = 0xfffff000u;

	/* client segments at 1000 + 2i ms; server ACK j at 1000 + 10 j + 30 + j ms */
	for (int64_t ms = 1000; ms <= 1200; ms++) {
		if (ms % 2 == 0 && ms < 1100) {
			uint32_t i = (uint32_t)(ms - 1000) / 2;

			up.seq = seq0 + 1448 * i;
			up.tsval = 3000 + i / 5;
			put_seg(d, ms, UP, &up);
		}
		for (uint32_t j = 0; j < 10; j++) {
			if (ms != 1000 + 10 * j + 30 + j)
				continue;
			dn.ack = seq0 + 1448 * (5 * j + 5);
			dn.tsval = 9000 + j;
			dn.tsecr = 3000 + j;
			put_seg(d, ms, DOWN, &dn);
		}
	}
	up.seq = seq0 + 1448 * 10;
	up.tsval = 3010;
	put_seg(d, 1300, UP, &up);
}

/* Probe seq 7: request on the wire at 2000 ms, reply at 2015 ms. */
static void write_probe(pcap_dumper_t *d)
{
	struct wire_probe w = { .kind = WIRE_PROBE_REQ, .seq = 7, .client_send_ns = 123 };
	uint8_t buf[256];
	size_t caplen, wirelen;

	caplen = build_probe(buf, C4, S4, 40001, 4750, &w, 100, &wirelen);
	dump_at(d, T0_NS + MS(2000), buf, caplen, wirelen);
	expect.packets[UP]++;
	expect.bytes[UP] += wirelen;
	w.kind = WIRE_PROBE_REPLY;
	w.server_rx_ns = 5;
	w.server_tx_ns = 6;
	caplen = build_probe(buf, S4, C4, 4750, 40001, &w, 100, &wirelen);
	dump_at(d, T0_NS + MS(2015), buf, caplen, wirelen);
	expect.packets[DOWN]++;
	expect.bytes[DOWN] += wirelen;
}

static void write_good(const char *path)
{
	pcap_t *p = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535,
							 PCAP_TSTAMP_PRECISION_NANO);
	pcap_dumper_t *d;
	uint8_t arp[42] = { 0 };

	assert_non_null(p);
	d = pcap_dump_open(p, path);
	assert_non_null(d);
	memset(&expect, 0, sizeof(expect));
	write_download(d);
	write_upload(d);
	write_probe(d);
	bytes_put_be16(arp + 12, 0x0806); /* not IP: "other" */
	dump_at(d, T0_NS + MS(2100), arp, sizeof(arp), 60);
	pcap_dump_close(d);
	pcap_close(p);
}

/* Reads a capture file into a new analyzer, as analyze does. */
static struct pa *read_file(const char *path, const struct pa_config *cfg, uint64_t *n)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO,
							    errbuf);
	struct pcap_pkthdr *h;
	const u_char *data;
	struct pa *pa = pa_new(cfg);

	assert_non_null(p);
	assert_non_null(pa);
	*n = 0;
	while (pcap_next_ex(p, &h, &data) == 1) {
		int64_t ns = (int64_t)h->ts.tv_sec * 1000000000LL + h->ts.tv_usec;

		pa_packet(pa, pcap_datalink(p), ns, data, h->caplen, h->len);
		(*n)++;
	}
	pcap_close(p);
	return pa;
}

static int setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_pcapanalyze.XXXXXX");
	if (mkdtemp(tmpdir) == NULL)
		return -1;
	snprintf(good_path, sizeof(good_path), "%s/good.pcap", tmpdir);
	write_good(good_path);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

#define assert_near(a, b) assert_true(fabs((a) - (b)) < 1e-6)

/* ---- tests ---- */

static void test_counts_and_directions(void **state)
{
	uint64_t n;
	struct pa *pa = read_file(good_path, NULL, &n);
	struct pa_summary s;

	pa_summary(pa, &s);
	assert_int_equal(n, 88);
	assert_int_equal(s.packets, 88);
	assert_int_equal(s.other, 1);
	assert_int_equal(s.malformed, 0);
	assert_int_equal(s.tcp_flows, 2);
	assert_int_equal(s.up.flows, 1);
	assert_int_equal(s.down.flows, 1);
	assert_int_equal(s.up.packets, expect.packets[UP]);
	assert_int_equal(s.down.packets, expect.packets[DOWN]);
	assert_int_equal(s.up.packets, 12 + 51 + 1);
	assert_int_equal(s.down.packets, 12 + 10 + 1);
	assert_int_equal(s.up.bytes, expect.bytes[UP]);
	assert_int_equal(s.down.bytes, expect.bytes[DOWN]);
	assert_int_equal(s.up.data_segments, 1 + 51);
	assert_int_equal(s.down.data_segments, 11);
	assert_int_equal(s.up.payload_bytes, 32 + 51 * 1448 + 100);
	assert_int_equal(s.down.payload_bytes, 11 * 1448 + 100);
	/* one each way; the wrapping sequence numbers are not mistaken for old ones */
	assert_int_equal(s.up.retrans, 1);
	assert_int_equal(s.down.retrans, 1);
	assert_near(s.up.retrans_pct, 100.0 / 52);
	assert_near(s.down.retrans_pct, 100.0 / 11);
	assert_int_equal(s.down.ce, 1);
	assert_int_equal(s.down.ect0, 10);
	assert_int_equal(s.up.ect1, 51);
	assert_int_equal(s.up.ce + s.up.ect0, 0);
	assert_int_equal(s.probe_requests, 1);
	assert_int_equal(s.probe_replies, 1);
	assert_true(s.first_ns == T0_NS);
	assert_true(s.last_ns == T0_NS + MS(2100));
	assert_near(s.duration_s, 2.1);
	assert_true(s.up.first_ns == T0_NS && s.up.last_ns == T0_NS + MS(2000));
	assert_near(s.up.mbps, (double)expect.bytes[UP] * 8 / 2.0 / 1e6);
	pa_free(pa);
}

static void test_passive_rtt(void **state)
{
	uint64_t n;
	struct pa *pa = read_file(good_path, NULL, &n);
	struct pa_summary s;

	pa_summary(pa, &s);
	/* download flow, client TSvals: 10 (SYN) and 20..29 ms */
	assert_int_equal(s.down.rtt_server.n, 11);
	assert_near(s.down.rtt_server.min_ms, 10);
	assert_near(s.down.rtt_server.p50_ms, 24);
	assert_near(s.down.rtt_server.p95_ms, 28.5);
	assert_near(s.down.rtt_server.p99_ms, 28.9);
	assert_near(s.down.rtt_server.max_ms, 29);
	assert_near(s.down.rtt_server.increase_ms, 18.5);
	/* end to end: plus the latest client half (1 ms), none yet at the SYN-ACK */
	assert_int_equal(s.down.rtt.n, 11);
	assert_near(s.down.rtt.min_ms, 10);
	assert_near(s.down.rtt.p50_ms, 25);
	assert_near(s.down.rtt.p95_ms, 29.5);
	assert_near(s.down.rtt.p99_ms, 29.9);
	assert_near(s.down.rtt.max_ms, 30);
	assert_near(s.down.rtt.increase_ms, 19.5);
	/* server TSvals echoed by the client 1 ms later: the hello and 9 ACKs */
	assert_int_equal(s.down.rtt_client.n, 10);
	assert_near(s.down.rtt_client.min_ms, 1);
	assert_near(s.down.rtt_client.max_ms, 1);
	/* upload flow: 30..39 ms; nothing echoes the client side (TSecr 0), so the end-to-end
	 * figures are the server half's */
	assert_int_equal(s.up.rtt_server.n, 10);
	assert_near(s.up.rtt_server.p95_ms, 38.55);
	assert_int_equal(s.up.rtt.n, 10);
	assert_near(s.up.rtt.min_ms, 30);
	assert_near(s.up.rtt.p50_ms, 34.5);
	assert_near(s.up.rtt.p95_ms, 38.55);
	assert_near(s.up.rtt.p99_ms, 38.91);
	assert_near(s.up.rtt.increase_ms, 8.55);
	assert_int_equal(s.up.rtt_client.n, 0);
	assert_true(isnan(s.up.rtt_client.min_ms));
	assert_int_equal(s.ts_evicted, 0);
	pa_free(pa);
}

static void test_series(void **state)
{
	uint64_t n;
	struct pa *pa = read_file(good_path, NULL, &n);
	struct probe_series ps;

	assert_int_equal(pa_rtt_series(pa, PA_CLASS_DOWN, &ps), 0);
	assert_string_equal(ps.name, "pcap_rtt_down");
	assert_int_equal(ps.n, 11);
	/* end-to-end RTT, sorted by send time = echo time − rtt: the SYN first (10 ms), then
	 * each ACK's echo (20 + k ms) plus the 1 ms client half */
	assert_true(ps.s[0].send_ns == T0_NS && ps.s[0].rtt_ns == MS(10));
	assert_int_equal(ps.s[0].status, SAMPLE_OK);
	assert_true(ps.s[1].send_ns == T0_NS + MS(99) && ps.s[1].rtt_ns == MS(21));
	assert_true(ps.s[2].send_ns == T0_NS + MS(120) && ps.s[2].rtt_ns == MS(22));
	for (size_t i = 1; i < ps.n; i++)
		assert_true(ps.s[i].send_ns > ps.s[i - 1].send_ns);
	series_free(&ps);
	assert_int_equal(pa_rtt_series(pa, PA_CLASS_UP, &ps), 0);
	assert_string_equal(ps.name, "pcap_rtt_up");
	assert_int_equal(ps.n, 10);
	assert_true(ps.s[0].send_ns == T0_NS + MS(1000) && ps.s[0].rtt_ns == MS(30));
	assert_true(ps.s[9].send_ns == T0_NS + MS(1090) && ps.s[9].rtt_ns == MS(39));
	series_free(&ps);
	pa_free(pa);
}

/* With the server's IPv6 address and port fixed, only the upload flow is the test's. */
static void test_fixed_server(void **state)
{
	struct pa_config cfg;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&cfg.server;
	uint64_t n;
	struct pa *pa;
	struct pa_summary s;

	memset(&cfg, 0, sizeof(cfg));
	sin6->sin6_family = AF_INET6;
	assert_int_equal(inet_pton(AF_INET6, S6, &sin6->sin6_addr), 1);
	cfg.server_ports[0] = 4750;
	pa = read_file(good_path, &cfg, &n);
	pa_summary(pa, &s);
	assert_int_equal(s.up.packets, 51);
	assert_int_equal(s.down.packets, 10);
	assert_int_equal(s.other, 88 - 61);
	assert_int_equal(s.tcp_flows, 1);
	assert_int_equal(s.up.retrans, 1);
	assert_int_equal(s.up.rtt.n, 10);
	pa_free(pa);

	/* an IPv4-mapped server address matches the IPv4 flow and the probes */
	memset(&cfg, 0, sizeof(cfg));
	sin6->sin6_family = AF_INET6;
	assert_int_equal(inet_pton(AF_INET6, "::ffff:" S4, &sin6->sin6_addr), 1);
	cfg.server_ports[0] = 4750;
	pa = read_file(good_path, &cfg, &n);
	pa_summary(pa, &s);
	assert_int_equal(s.up.packets, 12 + 1);
	assert_int_equal(s.down.packets, 12 + 1);
	assert_int_equal(s.down.retrans, 1);
	assert_int_equal(s.down.rtt.n, 11);
	pa_free(pa);

	/* the wrong port: nothing is the test's */
	sin6->sin6_family = AF_INET6;
	assert_int_equal(inet_pton(AF_INET6, S6, &sin6->sin6_addr), 1);
	cfg.server_ports[0] = 4751;
	pa = read_file(good_path, &cfg, &n);
	pa_summary(pa, &s);
	assert_int_equal(s.up.packets + s.down.packets, 0);
	pa_free(pa);
}

static void test_probe_wire(void **state)
{
	uint64_t n;
	struct pa *pa = read_file(good_path, NULL, &n);
	struct probe_rec recs[2];
	struct pa_wire w;

	memset(recs, 0, sizeof(recs));
	/* send() 5 µs before the request hit the wire; the socket stamped the reply 3 µs after */
	recs[0].seq = 7;
	recs[0].received = 1;
	recs[0].send_ns = T0_NS + MS(2000) - 5000;
	recs[0].rtt_ns = MS(15) + 8000;
	recs[1].seq = 8; /* never captured */
	recs[1].send_ns = T0_NS + MS(2010);
	assert_int_equal(pa_probe_wire(pa, recs, 2, &w), 0);
	assert_int_equal(w.n_tx, 1);
	assert_int_equal(w.n_rx, 1);
	assert_near(w.tx_p50_us, 5);
	assert_near(w.tx_p99_us, 5);
	assert_near(w.rx_p50_us, 3);
	assert_near(w.rx_p99_us, 3);
	/* a lost reply gives no receive figure */
	recs[0].received = 0;
	assert_int_equal(pa_probe_wire(pa, recs, 1, &w), 0);
	assert_int_equal(w.n_rx, 0);
	assert_true(isnan(w.rx_p50_us));
	pa_free(pa);
}

/* One SYN (client port 40000 above the server's 80, so the SYN and port rules agree)
 * wrapped in each supported link layer. */
static void test_link_types(void **state)
{
	struct seg s = { .src = C4, .dst = S4, .sport = 40000, .dport = 80, .flags = TH_SYN,
			 .seq = 1 };
	struct seg s6 = { .v6 = 1, .src = C6, .dst = S6, .sport = 40000, .dport = 80,
			  .flags = TH_SYN, .seq = 1 };
	uint8_t eth[256], eth6[256], buf[300];
	size_t wl, wl6, cl = build_tcp(eth, &s, &wl), cl6 = build_tcp(eth6, &s6, &wl6);
	const uint8_t *ip = eth + 14, *ip6 = eth6 + 14;
	size_t ipl = cl - 14, ipl6 = cl6 - 14;
	struct {
		int dlt;
		size_t hdr;
		const char *what;
	} cases[] = {
		{ DLT_LINUX_SLL, 16, "sll" }, { DLT_LINUX_SLL2, 20, "sll2" },
		{ DLT_RAW, 0, "raw" },        { DLT_IPV4, 0, "ipv4" },
		{ DLT_IPV6, 0, "ipv6" },      { DLT_NULL, 4, "null" },
		{ DLT_LOOP, 4, "loop" },      { DLT_EN10MB, 18, "vlan" },
		{ DLT_EN10MB, 22, "qinq" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (int v6 = 0; v6 < 2; v6++) {
			struct pa *pa = pa_new(NULL);
			struct pa_summary sum;
			uint16_t etype = v6 ? 0x86dd : 0x0800;
			size_t h = cases[i].hdr, len = v6 ? ipl6 : ipl;

			if ((cases[i].dlt == DLT_IPV4 && v6) || (cases[i].dlt == DLT_IPV6 && !v6)) {
				pa_free(pa);
				continue;
			}
			memset(buf, 0, h);
			if (cases[i].dlt == DLT_LINUX_SLL)
				bytes_put_be16(buf + 14, etype);
			if (cases[i].dlt == DLT_LINUX_SLL2)
				bytes_put_be16(buf, etype);
			if (cases[i].dlt == DLT_NULL) /* host order, BSD's AF_INET6 = 24 */
				buf[0] = v6 ? 24 : 2;
			if (cases[i].dlt == DLT_LOOP)
				buf[3] = v6 ? 30 : 2;
			if (cases[i].dlt == DLT_EN10MB) {
				bytes_put_be16(buf + 12, h == 22 ? 0x88a8 : 0x8100);
				bytes_put_be16(buf + 16, h == 22 ? 0x8100 : etype);
				bytes_put_be16(buf + h - 2, etype);
			}
			memcpy(buf + h, v6 ? ip6 : ip, len);
			pa_packet(pa, cases[i].dlt, 1, buf, h + len, h + len);
			pa_summary(pa, &sum);
			if (sum.up.packets != 1)
				fail_msg("%s v6=%d: up %llu other %llu malformed %llu", cases[i].what,
					 v6, (unsigned long long)sum.up.packets,
					 (unsigned long long)sum.other,
					 (unsigned long long)sum.malformed);
			assert_int_equal(sum.tcp_flows, 1);
			/* every byte counted must have been captured: a cut packet is never read */
			for (size_t cut = 0; cut < h + len; cut++)
				pa_packet(pa, cases[i].dlt, 2, buf, cut, h + len);
			pa_free(pa);
		}
	}
	assert_false(pa_linktype_supported(DLT_IEEE802_11));
}

/* pcapng: one section, one Ethernet interface (µs), the download flow's SYN. */
static void test_pcapng(void **state)
{
	struct seg s = { .src = C4, .dst = S4, .sport = 1000, .dport = 4750, .flags = TH_SYN,
			 .seq = 1, .ts = 1, .tsval = 5 };
	uint8_t pkt[256], file[512];
	size_t wl, cl = build_tcp(pkt, &s, &wl), o = 0, epb, pad = (4 - cl % 4) % 4;
	uint64_t us = 1700000000ULL * 1000000ULL;
	uint32_t w32[] = { 0x0a0d0d0a, 28, 0x1a2b3c4d };
	char path[160];
	FILE *f;
	uint64_t n;
	struct pa *pa;
	struct pa_summary sum;
	char *argv[] = { "analyze", path, NULL };

	/* section header block */
	memcpy(file + o, w32, 12);
	o += 12;
	file[o++] = 1; /* major 1, minor 0 (little-endian) */
	file[o++] = 0;
	file[o++] = 0;
	file[o++] = 0;
	memset(file + o, 0xff, 8);
	o += 8;
	memcpy(file + o, &w32[1], 4);
	o += 4;
	/* interface description block: Ethernet, snaplen 0 */
	w32[0] = 1;
	w32[1] = 20;
	memcpy(file + o, w32, 8);
	o += 8;
	file[o++] = 1;
	memset(file + o, 0, 7);
	o += 7;
	memcpy(file + o, &w32[1], 4);
	o += 4;
	/* enhanced packet block */
	epb = 32 + cl + pad;
	w32[0] = 6;
	w32[1] = (uint32_t)epb;
	memcpy(file + o, w32, 8);
	o += 8;
	memset(file + o, 0, 4);
	o += 4;
	w32[0] = (uint32_t)(us >> 32);
	w32[1] = (uint32_t)us;
	w32[2] = (uint32_t)cl;
	memcpy(file + o, w32, 12);
	o += 12;
	memcpy(file + o, &w32[2], 4); /* original length = captured */
	o += 4;
	memcpy(file + o, pkt, cl);
	o += cl;
	memset(file + o, 0, pad);
	o += pad;
	w32[0] = (uint32_t)epb;
	memcpy(file + o, w32, 4);
	o += 4;
	snprintf(path, sizeof(path), "%s/one.pcapng", tmpdir);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(file, 1, o, f), o);
	assert_int_equal(fclose(f), 0);

	pa = read_file(path, NULL, &n);
	pa_summary(pa, &sum);
	assert_int_equal(n, 1);
	assert_int_equal(sum.up.packets, 1);
	assert_true(sum.first_ns == (int64_t)us * 1000);
	pa_free(pa);
	assert_int_equal(analyze_main(2, argv), 0);
}

static void write_bytes(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* The good file's first len bytes at path. */
static void write_prefix(const char *path, long cut_from_end, long keep)
{
	static uint8_t buf[1 << 16];
	FILE *f = fopen(good_path, "rb");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf), f);
	assert_int_equal(fclose(f), 0);
	assert_true(n > 1000 && n < sizeof(buf));
	write_bytes(path, buf, keep >= 0 ? (size_t)keep : n - (size_t)cut_from_end);
}

static int analyze_run(const char *opt, const char *path)
{
	char *argv[] = { "analyze", (char *)opt, (char *)path, NULL };

	if (opt == NULL) {
		argv[1] = (char *)path;
		argv[2] = NULL;
		return analyze_main(2, argv);
	}
	return analyze_main(3, argv);
}

static void test_analyze_exit_codes(void **state)
{
	char path[160];
	pcap_t *p;
	pcap_dumper_t *d;
	uint8_t frame[64] = { 0 };

	assert_int_equal(analyze_run(NULL, good_path), 0);
	assert_int_equal(analyze_run("-J", good_path), 0);

	/* not a capture */
	snprintf(path, sizeof(path), "%s/notes.txt", tmpdir);
	write_bytes(path, "this is not a capture file\n", 27);
	assert_int_equal(analyze_run(NULL, path), 1);
	/* empty, and cut inside the file header */
	snprintf(path, sizeof(path), "%s/empty.pcap", tmpdir);
	write_bytes(path, "", 0);
	assert_int_equal(analyze_run(NULL, path), 1);
	snprintf(path, sizeof(path), "%s/header.pcap", tmpdir);
	write_prefix(path, 0, 10);
	assert_int_equal(analyze_run(NULL, path), 1);
	/* a header and a cut first record: nothing readable */
	write_prefix(path, 0, 24 + 16 + 5);
	assert_int_equal(analyze_run("-J", path), 1);
	/* missing file */
	snprintf(path, sizeof(path), "%s/missing.pcap", tmpdir);
	assert_int_equal(analyze_run(NULL, path), 1);
	/* a link type analyze does not read */
	snprintf(path, sizeof(path), "%s/wifi.pcap", tmpdir);
	p = pcap_open_dead(DLT_IEEE802_11, 65535);
	assert_non_null(p);
	d = pcap_dump_open(p, path);
	assert_non_null(d);
	dump_at(d, T0_NS, frame, sizeof(frame), sizeof(frame));
	pcap_dump_close(d);
	pcap_close(p);
	assert_int_equal(analyze_run(NULL, path), 1);
	/* usage */
	{
		char *none[] = { "analyze", NULL };
		char *bad[] = { "analyze", "--bogus", good_path, NULL };

		assert_int_equal(analyze_main(1, none), 2);
		assert_int_equal(analyze_main(3, bad), 2);
	}
}

/* A last record cut short: the packets before it are summarised, with a warning. */
static void test_truncated_last_record(void **state)
{
	char path[160], err[512];
	char errbuf[PCAP_ERRBUF_SIZE];
	pcap_t *p;
	FILE *out = tmpfile();
	json_object *j, *v;
	long len;
	char *txt;

	assert_non_null(out);
	snprintf(path, sizeof(path), "%s/cut.pcap", tmpdir);
	write_prefix(path, 7, -1);
	assert_int_equal(analyze_run(NULL, path), 0);

	p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, errbuf);
	assert_non_null(p);
	assert_int_equal(analyze_capture(p, "cut.pcap", 1, out, err, sizeof(err)), 1);
	pcap_close(p);
	assert_non_null(strstr(err, "cut short after 87 packets"));
	len = ftell(out);
	assert_true(len > 0);
	rewind(out);
	txt = calloc(1, (size_t)len + 1);
	assert_non_null(txt);
	assert_int_equal(fread(txt, 1, (size_t)len, out), (size_t)len);
	fclose(out);
	j = json_tokener_parse(txt);
	assert_non_null(j);
	assert_true(json_object_object_get_ex(j, "packets", &v));
	assert_int_equal(json_object_get_int64(v), 87);
	assert_true(json_object_object_get_ex(j, "truncated", &v));
	assert_true(json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(j, "down", &v));
	assert_true(json_object_object_get_ex(v, "retransmissions", &v));
	assert_int_equal(json_object_get_int64(v), 1);
	json_object_put(j);
	free(txt);
}

/* The JSON of the good file carries the figures the analyzer computed. */
static void test_analyze_json(void **state)
{
	char err[512], errbuf[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline_with_tstamp_precision(good_path, PCAP_TSTAMP_PRECISION_NANO,
							    errbuf);
	FILE *out = tmpfile();
	char txt[8192];
	size_t len;
	json_object *j, *down, *rtt, *v;

	assert_non_null(p);
	assert_non_null(out);
	assert_int_equal(analyze_capture(p, "good.pcap", 1, out, err, sizeof(err)), 0);
	pcap_close(p);
	rewind(out);
	len = fread(txt, 1, sizeof(txt) - 1, out);
	txt[len] = '\0';
	fclose(out);
	j = json_tokener_parse(txt);
	assert_non_null(j);
	assert_true(json_object_object_get_ex(j, "link_type", &v));
	assert_string_equal(json_object_get_string(v), "EN10MB");
	assert_true(json_object_object_get_ex(j, "down", &down));
	assert_true(json_object_object_get_ex(down, "rtt_ms", &rtt));
	assert_true(json_object_object_get_ex(rtt, "p50", &v));
	assert_near(json_object_get_double(v), 25);
	assert_true(json_object_object_get_ex(rtt, "increase", &v));
	assert_near(json_object_get_double(v), 19.5);
	assert_true(json_object_object_get_ex(down, "rtt_server_ms", &rtt));
	assert_true(json_object_object_get_ex(rtt, "p50", &v));
	assert_near(json_object_get_double(v), 24);
	assert_true(json_object_object_get_ex(down, "ecn", &v));
	assert_true(json_object_object_get_ex(v, "ce", &v));
	assert_int_equal(json_object_get_int64(v), 1);
	assert_true(json_object_object_get_ex(j, "truncated", &v));
	assert_false(json_object_get_boolean(v));
	json_object_put(j);
}

/* Headers that lie about their lengths are counted as malformed, never read past. */
static void test_hostile_headers(void **state)
{
	struct seg s = { .src = C4, .dst = S4, .sport = 40000, .dport = 80, .flags = TH_ACK,
			 .seq = 1, .ts = 1, .tsval = 9, .payload = 10 };
	uint8_t buf[256], *copy;
	size_t wl, cl = build_tcp(buf, &s, &wl);
	struct pa *pa = pa_new(NULL);
	struct pa_summary sum;

	buf[14] = 0x4f;             /* IHL 60 > what is captured after the real header */
	copy = malloc(cl);          /* exact size: ASan sees any overread */
	assert_non_null(copy);
	memcpy(copy, buf, cl);
	pa_packet(pa, DLT_EN10MB, 1, copy, 14 + 40, wl);
	buf[14] = 0x45;
	buf[14 + 20 + 12] = 0xf0;   /* TCP data offset 60 > the segment */
	bytes_put_be16(buf + 16, 20 + 32);   /* total length: TCP header only */
	memcpy(copy, buf, cl);
	pa_packet(pa, DLT_EN10MB, 2, copy, cl, wl);
	buf[14 + 20 + 12] = 0x80;
	buf[14 + 20 + 20 + 2] = 8;  /* TS option: kind 8 but length 200 */
	buf[14 + 20 + 20 + 3] = 200;
	memcpy(copy, buf, cl);
	pa_packet(pa, DLT_EN10MB, 3, copy, cl, wl);
	bytes_put_be16(buf + 16, 3);         /* total length below the header */
	memcpy(copy, buf, cl);
	pa_packet(pa, DLT_EN10MB, 4, copy, cl, wl);
	pa_packet(pa, DLT_EN10MB, 5, NULL, 0, 0);
	pa_summary(pa, &sum);
	assert_int_equal(sum.packets, 5);
	assert_int_equal(sum.malformed, 3);
	assert_int_equal(sum.up.packets, 1); /* the bad option list only ends the walk */
	assert_int_equal(sum.other, 1);
	free(copy);
	pa_free(pa);
}

/* More pending TSvals than the table holds: the oldest give way, counted. */
static void test_ts_eviction(void **state)
{
	struct seg s = { .src = C4, .dst = S4, .sport = 40000, .dport = 80, .flags = TH_ACK,
			 .ts = 1, .payload = 100 };
	uint8_t buf[256];
	size_t wl, cl;
	struct pa *pa = pa_new(NULL);
	struct pa_summary sum;

	for (uint32_t i = 0; i < 100000; i++) {
		s.seq = 1 + 100 * i;
		s.tsval = i;
		cl = build_tcp(buf, &s, &wl);
		pa_packet(pa, DLT_EN10MB, T0_NS + (int64_t)i * 1000, buf, cl, wl);
	}
	pa_summary(pa, &sum);
	assert_true(sum.ts_evicted >= 100000 - 65536);
	assert_int_equal(sum.up.retrans, 0);
	assert_int_equal(sum.up.data_segments, 100000);
	pa_free(pa);
}

/* The live capture's BPF filter: server address and ports, IPv4-mapped made plain. */
static void test_capture_filter(void **state)
{
	struct pcap_capture_config cfg;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&cfg.server;
	struct sockaddr_in *cli = (struct sockaddr_in *)&cfg.client;
	char f[256];

	memset(&cfg, 0, sizeof(cfg));
	sin6->sin6_family = AF_INET6;
	assert_int_equal(inet_pton(AF_INET6, S6, &sin6->sin6_addr), 1);
	cfg.tcp_port = 4750;
	assert_int_equal(pcap_capture_filter(&cfg, f, sizeof(f)), 0);
	assert_string_equal(f, "host 2001:db8::2 and (tcp port 4750)");
	cfg.udp_port = 4750;
	cfg.dns_port = 5353;
	assert_int_equal(inet_pton(AF_INET6, "::ffff:" S4, &sin6->sin6_addr), 1);
	cli->sin_family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, C4, &cli->sin_addr), 1);
	assert_int_equal(pcap_capture_filter(&cfg, f, sizeof(f)), 0);
	assert_string_equal(f, "host " S4 " and host " C4
			       " and (tcp port 4750 or udp port 4750 or port 5353)");
	assert_int_equal(pcap_capture_filter(&cfg, f, 20), -1);
	cfg.server.ss_family = AF_UNIX;
	assert_int_equal(pcap_capture_filter(&cfg, f, sizeof(f)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_and_directions),
		cmocka_unit_test(test_passive_rtt),
		cmocka_unit_test(test_series),
		cmocka_unit_test(test_fixed_server),
		cmocka_unit_test(test_probe_wire),
		cmocka_unit_test(test_link_types),
		cmocka_unit_test(test_pcapng),
		cmocka_unit_test(test_analyze_exit_codes),
		cmocka_unit_test(test_truncated_last_record),
		cmocka_unit_test(test_analyze_json),
		cmocka_unit_test(test_hostile_headers),
		cmocka_unit_test(test_ts_eviction),
		cmocka_unit_test(test_capture_filter),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

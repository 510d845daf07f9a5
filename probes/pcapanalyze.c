/* pcapanalyze: link, IP and transport header walks bounded by the captured length; a flow
 * table for TCP state; a set-associative table of pending TSvals for passive RTT; append-only
 * stores of RTT samples and probe capture times. Lengths in a packet are only ever compared
 * with the captured length, never trusted to read by. */
#include "probes/pcapanalyze.h"

#include "probes/udp.h"

#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/dlt.h>

#include "common/bytes.h"
#include "common/clock.h"
#include "common/stats.h"
#include "common/wire.h"

enum { PA_UP = 0, PA_DOWN = 1 };

#define PA_FLOW_SLOTS 8192          /* power of two; at most half used keeps probes short */
#define PA_MAX_FLOWS (PA_FLOW_SLOTS / 2)
#define PA_TS_BUCKETS 16384         /* power of two */
#define PA_TS_WAYS 4                /* 64 Ki pending TSvals: ~1 s of 1 kHz TS clocks × 64 flows */
#define PA_TS_MAX_AGE_NS (10 * NS_PER_SEC) /* pping's limit: older entries are stale */
#define PA_HALF_MAX_AGE_NS NS_PER_SEC /* the other half's sample still describes the path */
#define PA_MAX_SAMPLES (1u << 21)
#define PA_MAX_PROBE_TIMES (1u << 21)
#define PA_MAX_VLAN_TAGS 4
#define PA_MAX_V6_EXT 8
/* A flow without bloatmeter's hello counts as bulk when one direction carried this much
 * payload, four times the other, in segments that average at least a minimal MSS: the
 * control connection (small messages both ways) stays out. */
#define PA_BULK_BYTES 65536
#define PA_BULK_SEG 512

#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_ACK 0x10

struct pa_endpoint {
	uint8_t addr[16]; /* IPv4 in the first 4 bytes, the rest zero */
	uint16_t port;
	uint8_t family;
};

/* One direction of a TCP flow. */
struct pa_half {
	uint32_t snd_max;        /* highest sequence number + 1 seen */
	uint8_t seq_valid;
	uint64_t payload, data_segs, retrans;
	/* The latest RTT sample of this side's TSvals: the capture point → the peer → back. */
	int64_t last_rtt_ns, last_t_ns;
	uint8_t has_rtt;
};

struct pa_flow {
	uint8_t used;
	uint8_t cls;             /* enum pa_class from the data hello; NONE if not seen */
	uint8_t hello_checked;   /* the client's first payload was looked at */
	struct pa_endpoint ep[2]; /* [PA_UP] client, [PA_DOWN] server */
	struct pa_half h[2];     /* [PA_UP] client→server */
};

/* A TSval waiting for its echo; flow == 0 is an empty slot. */
struct pa_ts {
	int64_t t_ns;            /* capture time of the first packet carrying it */
	uint32_t flow;           /* flow slot + 1 */
	uint32_t tsval;
	uint8_t dir;             /* who sent it */
	uint8_t pure_ack;        /* recorded from a segment without payload, SYN or FIN */
	uint8_t echoed;          /* answered already: later copies are not timed again */
};

struct pa_sample {
	int64_t t_ns;            /* capture time of the echoing packet */
	int64_t rtt_ns;          /* this half: the capture point → the TSval's receiver → back */
	int64_t e2e_ns;          /* client TSvals: plus the latest sample of the other half */
	uint32_t flow;           /* flow slot */
	uint8_t dir;             /* who sent the TSval */
};

struct pa_probe_time {
	int64_t t_ns;
	uint32_t seq;
	uint8_t kind;            /* enum wire_probe_kind */
};

struct pa_count {
	uint64_t packets, bytes, payload, data_segs, retrans, ect0, ect1, ce;
	int64_t first_ns, last_ns;
};

struct pa {
	struct pa_config cfg;
	int fixed;               /* directions from cfg's server address */
	struct pa_endpoint server, client;
	int nports;
	struct pa_count dir[2];
	int64_t first_ns, last_ns;
	uint64_t packets, other, malformed, untracked, ts_evicted, dropped;
	uint64_t probe_req, probe_rep;
	struct pa_flow *flows;   /* PA_FLOW_SLOTS, allocated with the first TCP packet */
	size_t nflows;
	struct pa_ts *ts;        /* PA_TS_BUCKETS × PA_TS_WAYS, with the first timestamp */
	struct pa_sample *samples;
	size_t nsamples, capsamples;
	struct pa_probe_time *probes;
	size_t nprobes, capprobes;
	int alloc_failed;
};

/* One IP packet as the headers describe it. */
struct pa_ip {
	uint8_t family;          /* AF_INET / AF_INET6 */
	uint8_t src[16], dst[16];
	uint8_t tos;             /* IPv4 TOS / IPv6 traffic class */
	uint8_t proto;           /* 0: the transport header is not in this packet */
	const uint8_t *l4;       /* captured transport bytes */
	size_t l4_cap;
	size_t l4_len;           /* transport bytes as the IP header says */
};

struct pa_tcp {
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	size_t payload;          /* as the headers say */
	const uint8_t *data;     /* captured payload */
	size_t data_cap;
	int has_ts;
	uint32_t tsval, tsecr;
};

/* Sequence numbers wrap: a is before b when the signed distance is negative. */
static int seq_lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

/* a − b without signed overflow on hostile timestamps; INT64_MAX when it would overflow. */
static int64_t pa_sub(int64_t a, int64_t b)
{
	int64_t d;

	return __builtin_sub_overflow(a, b, &d) ? INT64_MAX : d;
}

static int64_t pa_add(int64_t a, int64_t b)
{
	int64_t d;

	return __builtin_add_overflow(a, b, &d) ? INT64_MAX : d;
}

static uint32_t pa_mix(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

static uint32_t pa_ep_hash(const struct pa_endpoint *e)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < sizeof(e->addr); i++)
		h = (h ^ e->addr[i]) * 16777619u;
	h = (h ^ e->port) * 16777619u;
	return pa_mix(h ^ e->family);
}

static int pa_ep_eq(const struct pa_endpoint *a, const struct pa_endpoint *b)
{
	return a->family == b->family && a->port == b->port &&
	       memcmp(a->addr, b->addr, sizeof(a->addr)) == 0;
}

static int pa_addr_eq(const struct pa_endpoint *e, uint8_t family, const uint8_t *addr)
{
	return e->family == family && memcmp(e->addr, addr, sizeof(e->addr)) == 0;
}

/* Reads a configured address; IPv4-mapped IPv6 becomes IPv4 (packets carry plain IPv4).
 * Returns 0, or -1 when the family is not an IP family. */
static int pa_ep_from_sockaddr(struct pa_endpoint *e, const struct sockaddr_storage *ss)
{
	memset(e, 0, sizeof(*e));
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;

		e->family = AF_INET;
		memcpy(e->addr, &sin->sin_addr, 4);
		return 0;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;

		if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
			e->family = AF_INET;
			memcpy(e->addr, sin6->sin6_addr.s6_addr + 12, 4);
		} else {
			e->family = AF_INET6;
			memcpy(e->addr, &sin6->sin6_addr, 16);
		}
		return 0;
	}
	return -1;
}

struct pa *pa_new(const struct pa_config *cfg)
{
	struct pa *pa = calloc(1, sizeof(*pa));

	if (pa == NULL)
		return NULL;
	if (cfg != NULL) {
		pa->cfg = *cfg;
		pa->fixed = pa_ep_from_sockaddr(&pa->server, &cfg->server) == 0;
		if (pa_ep_from_sockaddr(&pa->client, &cfg->client) != 0)
			pa->client.family = 0;
		for (int i = 0; i < PA_MAX_PORTS; i++)
			pa->nports += cfg->server_ports[i] != 0;
	}
	return pa;
}

void pa_free(struct pa *pa)
{
	if (pa == NULL)
		return;
	free(pa->flows);
	free(pa->ts);
	free(pa->samples);
	free(pa->probes);
	free(pa);
}

/* ---- link layer ---- */

int pa_linktype_supported(int linktype)
{
	switch (linktype) {
	case DLT_EN10MB:
	case DLT_LINUX_SLL:
	case DLT_LINUX_SLL2:
	case DLT_RAW:
	case DLT_IPV4:
	case DLT_IPV6:
	case DLT_NULL:
	case DLT_LOOP:
		return 1;
	}
	return 0;
}

/* The IP version from the first nibble of an IP header at data[off]; 0 if none. */
static int pa_version_at(const uint8_t *data, size_t caplen, size_t off)
{
	int v;

	if (off >= caplen)
		return 0;
	v = data[off] >> 4;
	return v == 4 || v == 6 ? v : 0;
}

static int pa_ethertype_version(uint16_t type)
{
	if (type == 0x0800)
		return 4;
	if (type == 0x86dd)
		return 6;
	return 0;
}

/* Ethernet with up to PA_MAX_VLAN_TAGS 802.1Q / 802.1ad tags. */
static int pa_link_ether(const uint8_t *data, size_t caplen, size_t *off)
{
	size_t o = 12;
	uint16_t type;

	if (caplen < 14)
		return 0;
	type = bytes_be16(data + o);
	for (int tags = 0; (type == 0x8100 || type == 0x88a8) && tags < PA_MAX_VLAN_TAGS; tags++) {
		o += 4;
		if (o + 2 > caplen)
			return 0;
		type = bytes_be16(data + o);
	}
	*off = o + 2;
	return pa_ethertype_version(type);
}

/* Finds the IP header: returns 4 or 6 with *off set, or 0 when the packet is not IP. */
static int pa_link(int linktype, const uint8_t *data, size_t caplen, size_t *off)
{
	switch (linktype) {
	case DLT_EN10MB:
		return pa_link_ether(data, caplen, off);
	case DLT_LINUX_SLL: /* packet type, ARPHRD, address length, address (8), protocol */
		if (caplen < 16)
			return 0;
		*off = 16;
		return pa_ethertype_version(bytes_be16(data + 14));
	case DLT_LINUX_SLL2: /* protocol first, then 18 bytes of interface and address */
		if (caplen < 20)
			return 0;
		*off = 20;
		return pa_ethertype_version(bytes_be16(data));
	case DLT_RAW:
	case DLT_IPV4:
	case DLT_IPV6:
		*off = 0;
		return pa_version_at(data, caplen, 0);
	case DLT_NULL:
	case DLT_LOOP:
		/* A 4-byte address family in the capturing host's (NULL) or network (LOOP) byte
		 * order, with per-OS values for IPv6: the IP header's own version is surer. */
		*off = 4;
		return pa_version_at(data, caplen, 4);
	}
	return 0;
}

/* ---- IP ---- */

/* Fills ip from an IPv4 header at d (cap captured bytes, rest = wire bytes from d on).
 * -1 when the header does not add up. */
static int pa_ipv4(const uint8_t *d, size_t cap, size_t rest, struct pa_ip *ip)
{
	size_t ihl, total;
	uint16_t frag;

	if (cap < 20)
		return -1;
	ihl = (size_t)(d[0] & 0x0f) * 4;
	if (ihl < 20 || ihl > cap)
		return -1;
	total = bytes_be16(d + 2);
	/* A zero length is what segmentation offload leaves on captured outgoing packets. */
	if (total == 0)
		total = rest;
	if (total < ihl)
		return -1;
	ip->family = AF_INET;
	memset(ip->src, 0, sizeof(ip->src));
	memset(ip->dst, 0, sizeof(ip->dst));
	memcpy(ip->src, d + 12, 4);
	memcpy(ip->dst, d + 16, 4);
	ip->tos = d[1];
	frag = bytes_be16(d + 6);
	/* Only the first fragment carries the transport header. */
	ip->proto = (frag & 0x1fff) ? 0 : d[9];
	ip->l4 = d + ihl;
	ip->l4_cap = cap - ihl;
	ip->l4_len = total - ihl;
	return 0;
}

/* Walks IPv6 extension headers (bounded in count and by the captured bytes). */
static int pa_ipv6(const uint8_t *d, size_t cap, size_t rest, struct pa_ip *ip)
{
	size_t off = 40, plen;
	uint8_t next;

	if (cap < 40)
		return -1;
	plen = bytes_be16(d + 4);
	if (plen == 0) /* jumbogram or offload: the wire length is all there is */
		plen = rest >= 40 ? rest - 40 : 0;
	ip->family = AF_INET6;
	memcpy(ip->src, d + 8, 16);
	memcpy(ip->dst, d + 24, 16);
	ip->tos = (uint8_t)((d[0] & 0x0f) << 4 | d[1] >> 4);
	next = d[6];
	for (int i = 0; i < PA_MAX_V6_EXT; i++) {
		size_t len;

		if (next != 0 && next != 43 && next != 60 && next != 44)
			break;
		if (off + 8 > cap)
			return -1;
		if (next == 44) { /* fragment: a later one carries no transport header */
			if (bytes_be16(d + off + 2) & 0xfff8)
				next = 0xff;
			else
				next = d[off];
			len = 8;
		} else {
			len = ((size_t)d[off + 1] + 1) * 8;
			next = d[off];
		}
		off += len;
		if (next == 0xff)
			break;
	}
	if (off > cap || off - 40 > plen)
		return -1;
	ip->proto = next == 0xff || next == 0 || next == 43 || next == 60 || next == 44 ? 0 : next;
	ip->l4 = d + off;
	ip->l4_cap = cap - off;
	ip->l4_len = plen - (off - 40);
	return 0;
}

/* ---- transport ---- */

/* TCP options: only the timestamp option matters; a malformed list ends the walk. */
static void pa_tcp_options(const uint8_t *o, size_t len, struct pa_tcp *t)
{
	size_t i = 0;

	while (i < len) {
		uint8_t kind = o[i];
		size_t olen;

		if (kind == 0)
			return;
		if (kind == 1) {
			i++;
			continue;
		}
		if (i + 1 >= len)
			return;
		olen = o[i + 1];
		if (olen < 2 || i + olen > len)
			return;
		if (kind == 8 && olen == 10) {
			t->has_ts = 1;
			t->tsval = bytes_be32(o + i + 2);
			t->tsecr = bytes_be32(o + i + 6);
		}
		i += olen;
	}
}

static int pa_tcp_parse(const struct pa_ip *ip, struct pa_tcp *t)
{
	size_t doff, optcap;

	memset(t, 0, sizeof(*t));
	if (ip->l4_cap < 20 || ip->l4_len < 20)
		return -1;
	t->sport = bytes_be16(ip->l4);
	t->dport = bytes_be16(ip->l4 + 2);
	t->seq = bytes_be32(ip->l4 + 4);
	t->ack = bytes_be32(ip->l4 + 8);
	doff = (size_t)(ip->l4[12] >> 4) * 4;
	t->flags = ip->l4[13];
	if (doff < 20 || doff > ip->l4_len)
		return -1;
	optcap = doff < ip->l4_cap ? doff : ip->l4_cap; /* a short snaplen may cut options */
	pa_tcp_options(ip->l4 + 20, optcap - 20, t);
	t->payload = ip->l4_len - doff;
	t->data = ip->l4 + optcap;
	t->data_cap = ip->l4_cap > doff ? ip->l4_cap - doff : 0;
	return 0;
}

/* ---- directions ---- */

static int pa_port_ok(const struct pa *pa, uint16_t port)
{
	if (pa->nports == 0)
		return 1;
	for (int i = 0; i < PA_MAX_PORTS; i++)
		if (pa->cfg.server_ports[i] != 0 && pa->cfg.server_ports[i] == port)
			return 1;
	return 0;
}

/* With a configured server: PA_UP, PA_DOWN, or -1 for a packet that is not the test's. */
static int pa_fixed_dir(const struct pa *pa, const struct pa_ip *ip, uint16_t sport,
			uint16_t dport)
{
	int to_srv = pa_addr_eq(&pa->server, ip->family, ip->dst) && pa_port_ok(pa, dport);
	int from_srv = pa_addr_eq(&pa->server, ip->family, ip->src) && pa_port_ok(pa, sport);
	const uint8_t *peer;
	int dir;

	if (to_srv)
		dir = PA_UP;
	else if (from_srv)
		dir = PA_DOWN;
	else
		return -1;
	peer = dir == PA_UP ? ip->src : ip->dst;
	if (pa->client.family != 0 && !pa_addr_eq(&pa->client, ip->family, peer))
		return -1;
	return dir;
}

/* Without a configured server: the side with the lower port is the server (ties: the lower
 * address), so a flow seen without its SYN still gets one consistent direction. */
static int pa_port_dir(const struct pa_ip *ip, uint16_t sport, uint16_t dport)
{
	if (sport != dport)
		return sport > dport ? PA_UP : PA_DOWN;
	return memcmp(ip->src, ip->dst, sizeof(ip->src)) >= 0 ? PA_UP : PA_DOWN;
}

/* The direction of the packet that opens a flow entry. */
static int pa_tcp_first_dir(const struct pa *pa, const struct pa_ip *ip, const struct pa_tcp *t)
{
	if (pa->fixed)
		return pa_fixed_dir(pa, ip, t->sport, t->dport);
	if ((t->flags & (TH_SYN | TH_ACK)) == TH_SYN)
		return PA_UP;
	if ((t->flags & (TH_SYN | TH_ACK)) == (TH_SYN | TH_ACK))
		return PA_DOWN;
	return pa_port_dir(ip, t->sport, t->dport);
}

static void pa_ep_set(struct pa_endpoint *e, const struct pa_ip *ip, const uint8_t *addr,
		      uint16_t port)
{
	memset(e, 0, sizeof(*e));
	e->family = ip->family;
	memcpy(e->addr, addr, sizeof(e->addr));
	e->port = port;
}

/* Finds or creates the packet's flow; *dir is the packet's direction in it. NULL when the
 * table is full or refused memory (*dir then comes from the rules alone, -1: not ours). */
static struct pa_flow *pa_flow_get(struct pa *pa, const struct pa_ip *ip,
				   const struct pa_tcp *t, int *dir)
{
	struct pa_endpoint s, d;
	uint32_t h, slot = 0;
	struct pa_flow *f;

	pa_ep_set(&s, ip, ip->src, t->sport);
	pa_ep_set(&d, ip, ip->dst, t->dport);
	if (pa->flows == NULL && !pa->alloc_failed) {
		pa->flows = calloc(PA_FLOW_SLOTS, sizeof(*pa->flows));
		pa->alloc_failed = pa->flows == NULL;
	}
	if (pa->flows != NULL) {
		/* A commutative hash: both directions land on the same chain. */
		h = pa_ep_hash(&s) + pa_ep_hash(&d);
		for (uint32_t i = 0; i < PA_FLOW_SLOTS; i++) {
			slot = (h + i) & (PA_FLOW_SLOTS - 1);
			f = &pa->flows[slot];
			if (!f->used)
				break;
			if (pa_ep_eq(&f->ep[PA_UP], &s) && pa_ep_eq(&f->ep[PA_DOWN], &d)) {
				*dir = PA_UP;
				return f;
			}
			if (pa_ep_eq(&f->ep[PA_DOWN], &s) && pa_ep_eq(&f->ep[PA_UP], &d)) {
				*dir = PA_DOWN;
				return f;
			}
		}
	}
	*dir = pa_tcp_first_dir(pa, ip, t);
	if (*dir < 0)
		return NULL;
	if (pa->flows == NULL || pa->nflows >= PA_MAX_FLOWS) {
		pa->untracked++;
		return NULL;
	}
	f = &pa->flows[slot];
	f->used = 1;
	f->ep[*dir == PA_UP ? PA_UP : PA_DOWN] = s;
	f->ep[*dir == PA_UP ? PA_DOWN : PA_UP] = d;
	pa->nflows++;
	return f;
}

/* ---- counting ---- */

static void pa_count(struct pa *pa, int dir, int64_t ts, size_t wirelen, size_t payload,
		     uint8_t tos)
{
	struct pa_count *c = &pa->dir[dir];

	if (c->packets == 0)
		c->first_ns = ts;
	c->last_ns = ts;
	c->packets++;
	c->bytes += wirelen;
	c->payload += payload;
	switch (tos & 3) {
	case 1:
		c->ect1++;
		break;
	case 2:
		c->ect0++;
		break;
	case 3:
		c->ce++;
		break;
	}
}

/* ---- passive RTT (pping) ---- */

static struct pa_ts *pa_ts_bucket(struct pa *pa, uint32_t flow, uint8_t dir, uint32_t tsval)
{
	uint32_t h = pa_mix(flow * 0x9e3779b1u ^ pa_mix(tsval) ^ dir);

	return &pa->ts[(h & (PA_TS_BUCKETS - 1)) * PA_TS_WAYS];
}

static int pa_ts_live(const struct pa_ts *e, int64_t now)
{
	return e->flow != 0 && pa_sub(now, e->t_ns) <= PA_TS_MAX_AGE_NS;
}

/* Remembers the capture time of the first packet carrying tsval in this flow direction. A
 * full bucket gives up its oldest entry (counted). */
static void pa_ts_record(struct pa *pa, uint32_t flow, uint8_t dir, uint32_t tsval, int64_t now,
			 int pure_ack)
{
	struct pa_ts *b, *victim = NULL;

	if (pa->ts == NULL && !pa->alloc_failed) {
		pa->ts = calloc((size_t)PA_TS_BUCKETS * PA_TS_WAYS, sizeof(*pa->ts));
		pa->alloc_failed = pa->ts == NULL;
	}
	if (pa->ts == NULL)
		return;
	b = pa_ts_bucket(pa, flow, dir, tsval);
	for (int i = 0; i < PA_TS_WAYS; i++)
		if (b[i].flow == flow && b[i].dir == dir && b[i].tsval == tsval && pa_ts_live(&b[i], now))
			return; /* not the first packet with this TSval */
	for (int i = 0; i < PA_TS_WAYS; i++) {
		if (!pa_ts_live(&b[i], now)) {
			victim = &b[i];
			break;
		}
		if (victim == NULL || b[i].t_ns < victim->t_ns)
			victim = &b[i];
	}
	if (pa_ts_live(victim, now) && !victim->echoed)
		pa->ts_evicted++;
	*victim = (struct pa_ts){ .t_ns = now, .flow = flow, .tsval = tsval, .dir = dir,
				  .pure_ack = (uint8_t)pure_ack };
}

static void pa_sample_add(struct pa *pa, int64_t now, int64_t rtt, int64_t e2e, uint32_t flow,
			  uint8_t dir)
{
	if (pa->nsamples == pa->capsamples) {
		size_t cap = pa->capsamples ? pa->capsamples * 2 : 1024;
		struct pa_sample *s;

		if (cap > PA_MAX_SAMPLES || (s = realloc(pa->samples, cap * sizeof(*s))) == NULL) {
			pa->dropped++;
			return;
		}
		pa->samples = s;
		pa->capsamples = cap;
	}
	pa->samples[pa->nsamples++] = (struct pa_sample){ now, rtt, e2e, flow, dir };
}

/* A sample of one half of the path. A capture point splits every RTT in two: TSvals the
 * client sent time the way through the server and back, the server's the way through the
 * client. Where the queue sits relative to the capture point decides which half holds it —
 * at the client, an upload queue in its own qdisc lies before the capture point and shows in
 * the client half. So each client-TSval sample also gets an end-to-end value: itself plus
 * the flow's latest client-half sample (none within PA_HALF_MAX_AGE_NS counts as 0). */
static void pa_rtt_sample(struct pa *pa, struct pa_flow *f, uint8_t sender, int64_t now,
			  int64_t rtt)
{
	struct pa_half *other = &f->h[PA_DOWN];
	int64_t e2e = rtt;

	f->h[sender].last_rtt_ns = rtt;
	f->h[sender].last_t_ns = now;
	f->h[sender].has_rtt = 1;
	if (sender == PA_UP && other->has_rtt && pa_sub(now, other->last_t_ns) <= PA_HALF_MAX_AGE_NS)
		e2e = pa_add(rtt, other->last_rtt_ns);
	pa_sample_add(pa, now, rtt, e2e, (uint32_t)(f - pa->flows), sender);
}

/* A packet echoing tsecr answers the other direction's TSval. A TSval first seen on a pure
 * ACK is timed only by an echo that carries payload (or a SYN): a pure ACK answering a pure
 * ACK says when the peer next had something to say, not how far away it is. */
static void pa_ts_match(struct pa *pa, struct pa_flow *f, uint8_t dir, const struct pa_tcp *t,
			int64_t now)
{
	uint32_t flow = (uint32_t)(f - pa->flows) + 1;
	uint8_t sender = (uint8_t)(1 - dir);
	struct pa_ts *b;
	int64_t rtt;

	if (pa->ts == NULL)
		return;
	b = pa_ts_bucket(pa, flow, sender, t->tsecr);
	for (int i = 0; i < PA_TS_WAYS; i++) {
		struct pa_ts *e = &b[i];

		if (e->flow != flow || e->dir != sender || e->tsval != t->tsecr ||
		    !pa_ts_live(e, now) || e->echoed)
			continue;
		e->echoed = 1;
		if (e->pure_ack && t->payload == 0 && !(t->flags & TH_SYN))
			return;
		rtt = pa_sub(now, e->t_ns);
		if (rtt >= 0) /* a capture file's clock may step back */
			pa_rtt_sample(pa, f, sender, now, rtt);
		return;
	}
}

/* pping: TSvals are recorded from data, SYN, FIN and pure ACK segments (not RSTs), matched by
 * any ACK carrying a non-zero TSecr. */
static void pa_tcp_ts(struct pa *pa, struct pa_flow *f, int dir, const struct pa_tcp *t,
		      int64_t now)
{
	uint32_t flow = (uint32_t)(f - pa->flows) + 1;
	int pure_ack;

	if (!t->has_ts || (t->flags & TH_RST))
		return;
	if ((t->flags & TH_ACK) && t->tsecr != 0)
		pa_ts_match(pa, f, (uint8_t)dir, t, now);
	pure_ack = t->payload == 0 && !(t->flags & (TH_SYN | TH_FIN));
	if (pure_ack && !(t->flags & TH_ACK))
		return;
	pa_ts_record(pa, flow, (uint8_t)dir, t->tsval, now, pure_ack);
}

/* The client's first payload on a bloatmeter data connection is its hello, which names
 * the direction the load flows. */
static void pa_tcp_hello(struct pa_flow *f, int dir, const struct pa_tcp *t)
{
	struct wire_data_hello h;

	if (dir != PA_UP || f->hello_checked || t->payload == 0)
		return;
	f->hello_checked = 1;
	/* The first bulk bytes may share the segment with the hello. */
	if (t->data_cap < WIRE_DATA_HELLO_LEN ||
	    wire_data_hello_decode(t->data, WIRE_DATA_HELLO_LEN, &h) != 0)
		return;
	f->cls = h.dir == WIRE_DIR_DOWN ? PA_CLASS_DOWN : PA_CLASS_UP;
}

/* Sequence tracking: a data segment that starts below the highest sequence number seen in
 * its direction repeats bytes already sent — a retransmission (or reordering in the path
 * before the capture point, which a passive observer cannot tell apart). */
static void pa_tcp_seq(struct pa *pa, struct pa_flow *f, int dir, const struct pa_tcp *t)
{
	struct pa_half *h = &f->h[dir];
	uint32_t end = t->seq + (uint32_t)t->payload + !!(t->flags & TH_SYN) + !!(t->flags & TH_FIN);

	if (t->payload > 0) {
		h->data_segs++;
		h->payload += t->payload;
		if (h->seq_valid && seq_lt(t->seq, h->snd_max)) {
			h->retrans++;
			pa->dir[dir].retrans++;
		}
	}
	if (t->flags & TH_RST)
		return;
	if (!h->seq_valid || seq_lt(h->snd_max, end)) {
		h->snd_max = end;
		h->seq_valid = 1;
	}
}

static void pa_tcp_packet(struct pa *pa, const struct pa_ip *ip, int64_t ts, size_t wirelen)
{
	struct pa_tcp t;
	struct pa_flow *f;
	int dir;

	if (pa_tcp_parse(ip, &t) != 0) {
		pa->malformed++;
		return;
	}
	f = pa_flow_get(pa, ip, &t, &dir);
	if (f == NULL && dir >= 0 && !pa->fixed)
		dir = pa_port_dir(ip, t.sport, t.dport);
	if (dir < 0) {
		pa->other++;
		return;
	}
	pa_count(pa, dir, ts, wirelen, t.payload, ip->tos);
	if (t.payload > 0)
		pa->dir[dir].data_segs++;
	if (f == NULL)
		return;
	pa_tcp_hello(f, dir, &t);
	pa_tcp_seq(pa, f, dir, &t);
	pa_tcp_ts(pa, f, dir, &t, ts);
}

static void pa_probe_add(struct pa *pa, const struct wire_probe *w, int64_t ts)
{
	if (pa->nprobes == pa->capprobes) {
		size_t cap = pa->capprobes ? pa->capprobes * 2 : 256;
		struct pa_probe_time *p;

		if (cap > PA_MAX_PROBE_TIMES || (p = realloc(pa->probes, cap * sizeof(*p))) == NULL) {
			pa->dropped++;
			return;
		}
		pa->probes = p;
		pa->capprobes = cap;
	}
	pa->probes[pa->nprobes++] = (struct pa_probe_time){ ts, w->seq, w->kind };
}

/* A bloatmeter probe: a UDP payload of 64..1400 bytes whose captured first 64 bytes decode.
 * Returns 1 and fills w if so. */
static int pa_udp_probe(const uint8_t *data, size_t cap, size_t len, struct wire_probe *w)
{
	if (len < WIRE_PROBE_MIN || len > WIRE_PROBE_MAX || cap < WIRE_PROBE_MIN)
		return 0;
	/* The snaplen keeps only the header: decode that, the padding is not needed. */
	return wire_probe_decode(data, WIRE_PROBE_MIN, w) == 0;
}

static void pa_udp_packet(struct pa *pa, const struct pa_ip *ip, int64_t ts, size_t wirelen)
{
	uint16_t sport, dport;
	size_t payload;
	struct wire_probe w;
	int dir, probe;

	if (ip->l4_cap < 8 || ip->l4_len < 8) {
		pa->malformed++;
		return;
	}
	sport = bytes_be16(ip->l4);
	dport = bytes_be16(ip->l4 + 2);
	payload = ip->l4_len - 8;
	probe = pa_udp_probe(ip->l4 + 8, ip->l4_cap - 8, payload, &w);
	if (pa->fixed)
		dir = pa_fixed_dir(pa, ip, sport, dport);
	else if (probe)
		dir = w.kind == WIRE_PROBE_REQ ? PA_UP : PA_DOWN;
	else
		dir = pa_port_dir(ip, sport, dport);
	if (dir < 0) {
		pa->other++;
		return;
	}
	pa_count(pa, dir, ts, wirelen, payload, ip->tos);
	/* A request seen going down (or a reply going up) is not our client's probe. */
	if (!probe || (w.kind == WIRE_PROBE_REQ) != (dir == PA_UP))
		return;
	if (w.kind == WIRE_PROBE_REQ)
		pa->probe_req++;
	else
		pa->probe_rep++;
	pa_probe_add(pa, &w, ts);
}

void pa_packet(struct pa *pa, int linktype, int64_t ts_ns, const uint8_t *data, size_t caplen,
	       size_t wirelen)
{
	struct pa_ip ip;
	size_t off = 0, rest;
	int v, rc;

	if (pa->packets == 0)
		pa->first_ns = ts_ns;
	pa->last_ns = ts_ns;
	pa->packets++;
	v = data != NULL ? pa_link(linktype, data, caplen, &off) : 0;
	if (v == 0 || pa_version_at(data, caplen, off) != v) {
		pa->other++;
		return;
	}
	rest = wirelen > off ? wirelen - off : 0;
	if (v == 4)
		rc = pa_ipv4(data + off, caplen - off, rest, &ip);
	else
		rc = pa_ipv6(data + off, caplen - off, rest, &ip);
	if (rc != 0) {
		pa->malformed++;
		return;
	}
	if (ip.proto == IPPROTO_TCP)
		pa_tcp_packet(pa, &ip, ts_ns, wirelen);
	else if (ip.proto == IPPROTO_UDP)
		pa_udp_packet(pa, &ip, ts_ns, wirelen);
	else
		pa->other++;
}

/* ---- results ---- */

static enum pa_class pa_flow_class(const struct pa_flow *f)
{
	const struct pa_half *up = &f->h[PA_UP], *down = &f->h[PA_DOWN];
	const struct pa_half *big = up->payload >= down->payload ? up : down;
	const struct pa_half *small = big == up ? down : up;

	if (f->cls != PA_CLASS_NONE)
		return (enum pa_class)f->cls;
	if (big->payload < PA_BULK_BYTES || big->payload / 4 < small->payload ||
	    big->payload / big->data_segs < PA_BULK_SEG)
		return PA_CLASS_NONE;
	return big == up ? PA_CLASS_UP : PA_CLASS_DOWN;
}

static void pa_rtt_fill(double *v, size_t n, struct pa_rtt *out)
{
	struct stats_summary s;

	memset(out, 0, sizeof(*out));
	out->min_ms = out->p50_ms = out->p95_ms = out->p99_ms = out->max_ms = NAN;
	out->increase_ms = NAN;
	if (stats_summarize(v, n, &s) != 0)
		return;
	out->n = s.n;
	out->min_ms = s.min;
	out->p50_ms = s.p50;
	out->p95_ms = s.p95;
	out->p99_ms = s.p99;
	out->max_ms = s.max;
	out->increase_ms = s.p95 - s.min;
}

/* The RTT of class cls from TSvals sent by side `sender` (end to end: e2e), in ms. */
static void pa_rtt_of(const struct pa *pa, const uint8_t *cls, enum pa_class want, uint8_t sender,
		      int e2e, struct pa_rtt *out)
{
	double *v = malloc((pa->nsamples ? pa->nsamples : 1) * sizeof(*v));
	size_t n = 0;

	if (v != NULL) {
		for (size_t i = 0; i < pa->nsamples; i++) {
			const struct pa_sample *s = &pa->samples[i];

			if (s->dir == sender && cls[s->flow] == want)
				v[n++] = ns_to_ms(e2e ? s->e2e_ns : s->rtt_ns);
		}
	}
	pa_rtt_fill(v, n, out);
	free(v);
}

static void pa_dir_fill(const struct pa *pa, int dir, struct pa_dir *out)
{
	const struct pa_count *c = &pa->dir[dir];
	int64_t span = pa_sub(c->last_ns, c->first_ns);

	memset(out, 0, sizeof(*out));
	out->packets = c->packets;
	out->bytes = c->bytes;
	out->payload_bytes = c->payload;
	out->data_segments = c->data_segs;
	out->retrans = c->retrans;
	out->retrans_pct = c->data_segs ? 100.0 * (double)c->retrans / (double)c->data_segs : NAN;
	out->ect0 = c->ect0;
	out->ect1 = c->ect1;
	out->ce = c->ce;
	out->first_ns = c->first_ns;
	out->last_ns = c->last_ns;
	out->mbps = c->packets > 1 && span > 0 ? (double)c->bytes * 8 / ((double)span / 1e3) : NAN;
}

void pa_summary(const struct pa *pa, struct pa_summary *out)
{
	uint8_t *cls = calloc(PA_FLOW_SLOTS, 1);
	int64_t span = pa_sub(pa->last_ns, pa->first_ns);

	memset(out, 0, sizeof(*out));
	out->first_ns = pa->first_ns;
	out->last_ns = pa->last_ns;
	out->duration_s = pa->packets > 1 && span > 0 && span != INT64_MAX ? (double)span / 1e9 : 0;
	out->packets = pa->packets;
	out->other = pa->other;
	out->malformed = pa->malformed;
	out->tcp_flows = pa->nflows;
	out->untracked = pa->untracked;
	out->probe_requests = pa->probe_req;
	out->probe_replies = pa->probe_rep;
	out->ts_evicted = pa->ts_evicted;
	out->dropped_samples = pa->dropped;
	pa_dir_fill(pa, PA_UP, &out->up);
	pa_dir_fill(pa, PA_DOWN, &out->down);
	if (cls == NULL) {
		for (int d = 0; d < 2; d++) {
			struct pa_dir *pd = d == PA_UP ? &out->up : &out->down;

			pa_rtt_fill(NULL, 0, &pd->rtt);
			pa_rtt_fill(NULL, 0, &pd->rtt_server);
			pa_rtt_fill(NULL, 0, &pd->rtt_client);
		}
		return;
	}
	for (size_t i = 0; pa->flows != NULL && i < PA_FLOW_SLOTS; i++) {
		if (!pa->flows[i].used)
			continue;
		cls[i] = (uint8_t)pa_flow_class(&pa->flows[i]);
		out->up.flows += cls[i] == PA_CLASS_UP;
		out->down.flows += cls[i] == PA_CLASS_DOWN;
	}
	pa_rtt_of(pa, cls, PA_CLASS_UP, PA_UP, 1, &out->up.rtt);
	pa_rtt_of(pa, cls, PA_CLASS_UP, PA_UP, 0, &out->up.rtt_server);
	pa_rtt_of(pa, cls, PA_CLASS_UP, PA_DOWN, 0, &out->up.rtt_client);
	pa_rtt_of(pa, cls, PA_CLASS_DOWN, PA_UP, 1, &out->down.rtt);
	pa_rtt_of(pa, cls, PA_CLASS_DOWN, PA_UP, 0, &out->down.rtt_server);
	pa_rtt_of(pa, cls, PA_CLASS_DOWN, PA_DOWN, 0, &out->down.rtt_client);
	free(cls);
}

static int pa_sample_cmp(const void *a, const void *b)
{
	const struct rtt_sample *x = a, *y = b;

	return (x->send_ns > y->send_ns) - (x->send_ns < y->send_ns);
}

int pa_rtt_series(const struct pa *pa, enum pa_class cls, struct probe_series *out)
{
	series_init(out, cls == PA_CLASS_UP ? "pcap_rtt_up" : "pcap_rtt_down", "");
	snprintf(out->method, sizeof(out->method), "libpcap TCP timestamps");
	out->available = 1;
	for (size_t i = 0; i < pa->nsamples; i++) {
		const struct pa_sample *s = &pa->samples[i];
		long k;

		if (s->dir != PA_UP || pa->flows == NULL ||
		    pa_flow_class(&pa->flows[s->flow]) != cls)
			continue;
		k = series_push(out, pa_sub(s->t_ns, s->e2e_ns));
		if (k < 0)
			return -1;
		series_complete(out, k, s->e2e_ns, SAMPLE_OK);
	}
	if (out->n > 1)
		qsort(out->s, out->n, sizeof(*out->s), pa_sample_cmp);
	return 0;
}

static int pa_probe_cmp(const void *a, const void *b)
{
	const struct pa_probe_time *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return (x->t_ns > y->t_ns) - (x->t_ns < y->t_ns);
}

/* The first capture time of (seq, kind) in the sorted array, or 0 when never seen. */
static const struct pa_probe_time *pa_probe_find(const struct pa_probe_time *v, size_t n,
						 uint32_t seq, uint8_t kind)
{
	struct pa_probe_time key = { INT64_MIN, seq, kind };
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pa_probe_cmp(&v[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].seq == seq && v[lo].kind == kind ? &v[lo] : NULL;
}

int pa_probe_wire(const struct pa *pa, const struct probe_rec *recs, size_t n, struct pa_wire *out)
{
	size_t np = pa->nprobes;
	struct pa_probe_time *v = malloc((np ? np : 1) * sizeof(*v));
	double *tx = malloc((n ? n : 1) * sizeof(*tx)), *rx = malloc((n ? n : 1) * sizeof(*rx));
	int rc = -1;

	memset(out, 0, sizeof(*out));
	out->tx_p50_us = out->tx_p99_us = out->rx_p50_us = out->rx_p99_us = NAN;
	if (v == NULL || tx == NULL || rx == NULL)
		goto done;
	if (np > 0)
		memcpy(v, pa->probes, np * sizeof(*v));
	qsort(v, np, sizeof(*v), pa_probe_cmp);
	for (size_t i = 0; i < n; i++) {
		const struct probe_rec *r = &recs[i];
		const struct pa_probe_time *req = pa_probe_find(v, np, r->seq, WIRE_PROBE_REQ);
		const struct pa_probe_time *rep = pa_probe_find(v, np, r->seq, WIRE_PROBE_REPLY);

		if (req != NULL)
			tx[out->n_tx++] = (double)pa_sub(req->t_ns, r->send_ns) / 1e3;
		if (rep != NULL && r->received)
			rx[out->n_rx++] = (double)pa_sub(pa_add(r->send_ns, r->rtt_ns), rep->t_ns) / 1e3;
	}
	if (out->n_tx > 0) {
		stats_sort(tx, out->n_tx);
		out->tx_p50_us = stats_percentile_sorted(tx, out->n_tx, 50);
		out->tx_p99_us = stats_percentile_sorted(tx, out->n_tx, 99);
	}
	if (out->n_rx > 0) {
		stats_sort(rx, out->n_rx);
		out->rx_p50_us = stats_percentile_sorted(rx, out->n_rx, 50);
		out->rx_p99_us = stats_percentile_sorted(rx, out->n_rx, 99);
	}
	rc = 0;
done:
	free(v);
	free(tx);
	free(rx);
	return rc;
}

/* hopprobe: TTL-limited probes and their answers (see hopprobe.h). */
#include "probes/hopprobe.h"

#include <errno.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/sock.h"
#include "common/util.h"
#include "probes/icmp.h"
#include "probes/icmperr.h"
#include "probes/probebase.h"
#include "probes/schedule.h"

#define HOP_PAYLOAD 12       /* cookie and probe number: ours, when a router quotes it */
#define HOP_RECV_MAX 2048
#define HOP_CTL_MAX 512      /* extended error, offender address, timestamp */
#define HOP_RECV_BATCH 64
#define HOP_MIN_INTERVAL_NS (10 * NS_PER_MS) /* at most 100 probes/s: never a load */

/* The probe sent with a given number modulo HOPPROBE_PORTS (its UDP port / echo sequence). */
struct hop_slot {
	int64_t n;   /* probe number, -1: none */
	int ttl;
	long idx;    /* sample index in out->ttl[ttl - 1] */
};

struct hop_probe {
	struct probe_base pb;   /* first: the runner's ops take the probe as its base */
	struct hop_probe_config cfg;
	struct hop_trace *out;
	int fd, family;
	int raw;        /* ICMP through a raw socket (root, no ping socket allowed) */
	uint16_t id;    /* raw sockets: our echo identifier */
	uint64_t cookie;
	struct event *recv_ev;
	int64_t nsent;
	int next_ttl, limit;
	size_t expire_from[HOPPROBE_MAX_TTL];
	struct hop_slot slot[HOPPROBE_PORTS];
};

/* One answer, whatever socket path it came by. */
struct hop_answer {
	long slot;                       /* index into slot[], -1: unknown */
	int from_target;                 /* the server answered (echo reply, port unreachable) */
	int error;                       /* another ICMP error: the sample is SAMPLE_ERROR */
	struct sockaddr_storage from;    /* who answered */
	int64_t rx_ns;
};

static void hop_expire(struct hop_probe *p, int64_t now)
{
	for (int t = 0; t < HOPPROBE_MAX_TTL; t++) {
		struct probe_series *ps = &p->out->ttl[t];

		while (p->expire_from[t] < ps->n &&
		       ps->s[p->expire_from[t]].send_ns + p->cfg.timeout_ns <= now) {
			series_complete(ps, (long)p->expire_from[t], 0, SAMPLE_LOST);
			p->expire_from[t]++;
		}
	}
}

static int hop_set_ttl(struct hop_probe *p, int ttl)
{
	if (p->family == AF_INET6)
		return setsockopt(p->fd, IPPROTO_IPV6, IPV6_UNICAST_HOPS, &ttl, sizeof(ttl));
	return setsockopt(p->fd, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl));
}

/* Builds the datagram of probe n and its destination (UDP: the port names the probe). */
static size_t hop_build(struct hop_probe *p, int64_t n, uint8_t *buf,
			struct sockaddr_storage *to)
{
	*to = p->cfg.target;
	if (p->cfg.mode == HOP_MODE_ICMP)
		return icmp_build_echo(p->family, p->id, (uint32_t)n, p->cookie, buf, HOP_PAYLOAD);
	uint16_t port = htons((uint16_t)(HOPPROBE_UDP_PORT + n % HOPPROBE_PORTS));

	if (p->family == AF_INET6)
		((struct sockaddr_in6 *)to)->sin6_port = port;
	else
		((struct sockaddr_in *)to)->sin_port = port;
	memcpy(buf, &p->cookie, 8);
	memcpy(buf + 8, &(uint32_t){ (uint32_t)n }, 4);
	return HOP_PAYLOAD;
}

static void hop_send(struct hop_probe *p)
{
	uint8_t buf[ICMP_HDR_LEN + HOP_PAYLOAD];
	struct sockaddr_storage to;
	int ttl = p->next_ttl;
	struct probe_series *ps = &p->out->ttl[ttl - 1];
	struct hop_slot *s = &p->slot[p->nsent % HOPPROBE_PORTS];
	size_t len = hop_build(p, p->nsent, buf, &to);
	long i;

	p->next_ttl = ttl % p->limit + 1;
	if (hop_set_ttl(p, ttl) < 0) {
		log_debug("hop probe: cannot set TTL %d: %s", ttl, strerror(errno));
		return;
	}
	/* Read the clock last, right before the syscall. */
	i = series_push(ps, clock_mono_ns());
	if (i < 0) {
		log_warnx("hop probe: out of memory for samples; no more probes");
		p->pb.stopping = 1;
		return;
	}
	*s = (struct hop_slot){ .n = p->nsent, .ttl = ttl, .idx = i };
	p->nsent++;
	if (sendto(p->fd, buf, len, 0, (const struct sockaddr *)&to, p->cfg.target_len) < 0)
		log_debug("hop probe send: %s", strerror(errno)); /* stays pending: lost */
}

static void hop_send_callback(evutil_socket_t fd, short what, void *arg)
{
	struct hop_probe *p = arg;

	(void)fd;
	(void)what;
	if (p->pb.stopping)
		return;
	hop_send(p);
	hop_expire(p, clock_mono_ns());
	if (schedule_rearm(&p->pb.sched, p->pb.send_ev) < 0)
		log_warnx("hop probe: cannot schedule the next probe");
}

/* Records an answer: the sample's RTT, the responder, and the hop count when the server
 * itself answered at a lower TTL than before. */
static void hop_record(struct hop_probe *p, const struct hop_answer *a)
{
	struct hop_slot *s;
	struct probe_series *ps;
	char addr[SERIES_TARGET_LEN];
	int64_t rtt;

	if (a->slot < 0 || p->slot[a->slot].n < 0) {
		p->out->ttl[0].bad_replies++;
		return;
	}
	s = &p->slot[a->slot];
	ps = &p->out->ttl[s->ttl - 1];
	rtt = a->rx_ns - ps->s[s->idx].send_ns;
	if (ps->s[s->idx].status != SAMPLE_PENDING || rtt < 0) {
		ps->bad_replies++; /* duplicated, or late after its timeout was declared */
		return;
	}
	series_complete(ps, s->idx, a->error ? 0 : rtt, a->error ? SAMPLE_ERROR : SAMPLE_OK);
	ps->s[s->idx].aux = a->from_target;
	sock_ip_str((const struct sockaddr *)&a->from, addr, sizeof(addr));
	if (ps->target[0] == '\0')
		snprintf(ps->target, sizeof(ps->target), "%s", addr);
	else if (strcmp(ps->target, addr) != 0)
		p->out->other_addrs++;
	if (a->from_target && (p->out->hop_count == 0 || s->ttl < p->out->hop_count)) {
		p->out->hop_count = s->ttl;
		p->limit = s->ttl;
		if (p->next_ttl > p->limit)
			p->next_ttl = 1;
	}
}

/* The slot a 16-bit echo sequence or UDP port offset names, if that probe is ours. */
static long hop_slot_of(const struct hop_probe *p, uint16_t low16)
{
	long k = low16 % HOPPROBE_PORTS;

	return (uint16_t)p->slot[k].n == low16 ? k : -1;
}

/* The extended error and its timestamp from an error-queue message. */
static int hop_errqueue_meta(struct msghdr *mh, struct sock_extended_err *ee,
			     struct sockaddr_storage *offender, int64_t *rx)
{
	int found = 0;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS &&
		    c->cmsg_len == CMSG_LEN(sizeof(struct timespec))) {
			struct timespec ts;

			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			if (ts.tv_sec != 0 || ts.tv_nsec != 0)
				*rx = clock_real_to_mono((int64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec);
			continue;
		}
		if (!((c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
		      (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR)) ||
		    c->cmsg_len < CMSG_LEN(sizeof(*ee)))
			continue;
		memcpy(ee, CMSG_DATA(c), sizeof(*ee));
		memset(offender, 0, sizeof(*offender));
		size_t olen = c->cmsg_len - CMSG_LEN(sizeof(*ee));

		if (olen > sizeof(*offender))
			olen = sizeof(*offender);
		memcpy(offender, CMSG_DATA(c) + sizeof(*ee), olen);
		found = ee->ee_origin == SO_EE_ORIGIN_ICMP || ee->ee_origin == SO_EE_ORIGIN_ICMP6;
	}
	return found;
}

/* Time exceeded is a hop; port unreachable (UDP) from the server is the server; anything
 * else is an error for that sample. */
static void hop_classify_error(struct hop_probe *p, const struct sock_extended_err *ee,
			       struct hop_answer *a)
{
	int v6 = p->family == AF_INET6;
	int exceeded = v6 ? ee->ee_type == 3 : ee->ee_type == 11;
	int port_unreach = v6 ? ee->ee_type == 1 && ee->ee_code == 4
			      : ee->ee_type == 3 && ee->ee_code == 3;

	a->from_target = sock_same_ip((const struct sockaddr *)&a->from,
				      (const struct sockaddr *)&p->cfg.target) && !exceeded;
	a->error = !exceeded && !(port_unreach && p->cfg.mode == HOP_MODE_UDP && a->from_target);
}

/* Which probe an error-queue message is about: the quoted echo's sequence, or the original
 * destination port of the UDP datagram (msg_name); the cookie, when quoted, must be ours. */
static long hop_errqueue_slot(const struct hop_probe *p, const uint8_t *buf, size_t n,
			      const struct sockaddr_storage *dst)
{
	if (p->cfg.mode == HOP_MODE_ICMP) {
		struct icmp_parsed m;

		if (icmp_parse_quoted_echo(p->family, buf, n, &m) != ICMP_PARSE_ERROR ||
		    (m.has_cookie && m.cookie != p->cookie))
			return -1;
		return hop_slot_of(p, m.seq);
	}
	uint16_t port = ntohs(dst->ss_family == AF_INET6
				      ? ((const struct sockaddr_in6 *)dst)->sin6_port
				      : ((const struct sockaddr_in *)dst)->sin_port);

	if (port < HOPPROBE_UDP_PORT || port >= HOPPROBE_UDP_PORT + HOPPROBE_PORTS)
		return -1;
	long k = port - HOPPROBE_UDP_PORT;
	uint32_t n32 = (uint32_t)p->slot[k].n;

	if (p->slot[k].n < 0)
		return -1;
	/* Routers that quote past the UDP header (Linux does) prove the datagram is ours. */
	if (n >= HOP_PAYLOAD && (memcmp(buf, &p->cookie, 8) != 0 || memcmp(buf + 8, &n32, 4) != 0))
		return -1;
	return k;
}

static void hop_drain_errqueue(struct hop_probe *p)
{
	for (int k = 0; k < HOP_RECV_BATCH; k++) {
		uint8_t buf[HOP_RECV_MAX];
		union {
			char buf[HOP_CTL_MAX];
			struct cmsghdr align;
		} ctl;
		struct sockaddr_storage name;
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
		struct msghdr mh = { .msg_name = &name, .msg_namelen = sizeof(name),
				     .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
		struct sock_extended_err ee;
		struct hop_answer a = { .slot = -1 };
		ssize_t n;

		memset(&name, 0, sizeof(name));
		n = recvmsg(p->fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return; /* EAGAIN: the queue is empty */
		}
		a.rx_ns = clock_mono_ns();
		if (!hop_errqueue_meta(&mh, &ee, &a.from, &a.rx_ns))
			continue; /* a local error (e.g. EMSGSIZE) */
		a.slot = hop_errqueue_slot(p, buf, (size_t)n, &name);
		hop_classify_error(p, &ee, &a);
		hop_record(p, &a);
	}
}

/* A raw socket's message (IPv4: IP header first): time exceeded quoting our echo, or the
 * server's echo reply; other programs' ICMP is silently not ours. */
static void hop_on_raw(struct hop_probe *p, const uint8_t *buf, size_t n,
		       const struct sockaddr_storage *peer, int64_t rx)
{
	struct icmperr_msg m;
	struct hop_answer a = { .slot = -1, .rx_ns = rx, .from = *peer };
	struct icmp_parsed pm;
	enum icmperr_kind k;
	size_t hl = 0;

	/* icmp_parse checks the checksum raw IPv4 sockets leave unverified, and the cookie
	 * where the echo (answered or quoted) carries it. */
	if (icmp_parse(p->family, 1, buf, n, &pm) <= ICMP_PARSE_OTHER ||
	    (pm.has_cookie && pm.cookie != p->cookie))
		return;
	if (p->family == AF_INET) {
		if (n < 20 || (buf[0] & 0x0f) < 5 || (size_t)(buf[0] & 0x0f) * 4 > n)
			return;
		hl = (size_t)(buf[0] & 0x0f) * 4;
	}
	k = icmperr_parse(p->family, buf + hl, n - hl, &m);
	if (k <= ICMPERR_OTHER || m.proto != ICMPERR_Q_ECHO || m.id != p->id)
		return;
	a.slot = hop_slot_of(p, m.seq);
	a.from_target = k == ICMPERR_ECHO_REPLY &&
			sock_same_ip((const struct sockaddr *)peer,
				     (const struct sockaddr *)&p->cfg.target);
	a.error = k != ICMPERR_TIME_EXCEEDED && !a.from_target;
	if (k == ICMPERR_ECHO_REPLY && !a.from_target)
		return;
	hop_record(p, &a);
}

/* An echo reply on a ping socket (the server answered an ICMP probe). */
static void hop_on_datagram(struct hop_probe *p, const uint8_t *buf, size_t n,
			    const struct sockaddr_storage *peer, int64_t rx)
{
	struct icmp_parsed m;
	struct hop_answer a = { .slot = -1, .rx_ns = rx, .from = *peer };

	/* The cookie is big-endian on the wire (icmp_build_echo): compare the parsed value. */
	if (p->cfg.mode != HOP_MODE_ICMP || icmp_parse(p->family, 0, buf, n, &m) != ICMP_PARSE_REPLY ||
	    (m.has_cookie && m.cookie != p->cookie) ||
	    !sock_same_ip((const struct sockaddr *)peer, (const struct sockaddr *)&p->cfg.target)) {
		p->out->ttl[0].bad_replies++;
		return;
	}
	a.slot = hop_slot_of(p, m.seq);
	a.from_target = 1;
	hop_record(p, &a);
}

static void hop_recv_callback(evutil_socket_t fd, short what, void *arg)
{
	struct hop_probe *p = arg;
	uint8_t buf[HOP_RECV_MAX];

	(void)what;
	hop_drain_errqueue(p); /* libevent reports a pending socket error as readable */
	for (int k = 0; k < HOP_RECV_BATCH; k++) {
		struct sockaddr_storage peer;
		socklen_t plen;
		int64_t rx;
		enum ts_source src;
		ssize_t n = sock_recv_ts(fd, buf, sizeof(buf), &peer, &plen, &rx, &src);

		if (n >= 0) {
			if (p->raw)
				hop_on_raw(p, buf, (size_t)n, &peer, rx);
			else
				hop_on_datagram(p, buf, (size_t)n, &peer, rx);
			continue;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		if (errno == EINTR || errno == EMSGSIZE)
			continue;
		hop_drain_errqueue(p); /* each queued error is reported once as a socket error */
	}
}

static void hop_destroy(void *arg)
{
	struct hop_probe *p = arg;

	if (p == NULL)
		return;
	for (int t = 0; t < HOPPROBE_MAX_TTL; t++)
		series_close(&p->out->ttl[t]);
	probe_base_free(&p->pb);
	if (p->recv_ev)
		event_free(p->recv_ev);
	if (p->fd >= 0)
		close(p->fd);
	free(p);
}

const struct probe_ops hop_probe_ops = {
	.set_interval = probe_base_set_interval,
	.stop_sending = probe_base_stop_sending,
	.destroy = hop_destroy,
};

/* A ping socket or a UDP socket, with the error queue on. */
static int hop_open(struct hop_probe *p, char *err, size_t errlen)
{
	int one = 1, icmp = p->family == AF_INET6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP;
	int proto = p->cfg.mode == HOP_MODE_ICMP ? icmp : IPPROTO_UDP;
	int rc;

	p->fd = socket(p->family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
	if (p->fd < 0 && p->cfg.mode == HOP_MODE_ICMP && (errno == EACCES || errno == EPERM)) {
		/* no ping socket for this group: a raw one if we may (root, CAP_NET_RAW) */
		p->fd = socket(p->family, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
		if (p->fd >= 0) {
			p->raw = 1;
			snprintf(p->out->method, sizeof(p->out->method), "raw socket");
			(void)sock_enable_rx_timestamps(p->fd);
			return util_random(&p->id, sizeof(p->id));
		}
		/* Neither: UDP with IP_RECVERR needs no privilege and finds the same hops. */
		p->cfg.mode = HOP_MODE_UDP;
		p->out->mode = HOP_MODE_UDP;
		snprintf(p->out->note, sizeof(p->out->note), "per-hop probes use UDP: ICMP needs a "
			 "ping socket (net.ipv4.ping_group_range) or root");
		p->fd = socket(p->family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
	}
	if (p->fd < 0) {
		snprintf(err, errlen, "cannot open the per-hop probe socket: %s", strerror(errno));
		return -1;
	}
	rc = p->family == AF_INET6 ? setsockopt(p->fd, SOL_IPV6, IPV6_RECVERR, &one, sizeof(one))
				   : setsockopt(p->fd, SOL_IP, IP_RECVERR, &one, sizeof(one));
	if (rc < 0) {
		snprintf(err, errlen, "cannot ask for ICMP errors on the per-hop probe socket: %s",
			 strerror(errno));
		return -1;
	}
	snprintf(p->out->method, sizeof(p->out->method), "%s",
		 p->cfg.mode == HOP_MODE_ICMP ? "ping socket" : "udp");
	(void)sock_enable_rx_timestamps(p->fd); /* else user-space times: still valid */
	return 0;
}

static int hop_check_config(struct hop_probe_config *cfg, char *err, size_t errlen)
{
	int fam = cfg->target.ss_family;

	if (fam == AF_INET6 &&
	    IN6_IS_ADDR_V4MAPPED(&((struct sockaddr_in6 *)&cfg->target)->sin6_addr)) {
		struct sockaddr_in sin = { .sin_family = AF_INET };

		memcpy(&sin.sin_addr, &((struct sockaddr_in6 *)&cfg->target)->sin6_addr.s6_addr[12],
		       4);
		memset(&cfg->target, 0, sizeof(cfg->target));
		memcpy(&cfg->target, &sin, sizeof(sin));
		fam = AF_INET;
	}
	/* Raw IPv6 sockets read sin6_port as the protocol (EINVAL unless 0); UDP sets its own. */
	if (fam == AF_INET6)
		((struct sockaddr_in6 *)&cfg->target)->sin6_port = 0;
	else
		((struct sockaddr_in *)&cfg->target)->sin_port = 0;
	cfg->target_len = fam == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	if ((fam != AF_INET && fam != AF_INET6) ||
	    (cfg->mode != HOP_MODE_ICMP && cfg->mode != HOP_MODE_UDP) ||
	    cfg->interval_ns < HOP_MIN_INTERVAL_NS || cfg->timeout_ns <= 0) {
		snprintf(err, errlen, "the per-hop probe needs an IPv4 or IPv6 server, a mode, an "
			 "interval of at least 10 ms and a timeout");
		return -1;
	}
	return 0;
}

static int hop_init_trace(struct hop_trace *out, enum hop_mode mode)
{
	memset(out, 0, sizeof(*out));
	out->mode = mode;
	for (int t = 0; t < HOPPROBE_MAX_TTL; t++)
		series_init(&out->ttl[t], "hop", "");
	return 0;
}

struct hop_probe *hop_probe_start(struct event_base *base, const struct hop_probe_config *cfg,
				  struct hop_trace *out, char *err, size_t errlen)
{
	struct hop_probe *p = calloc(1, sizeof(*p));
	struct timeval now = { 0, 0 };

	hop_init_trace(out, cfg->mode);
	if (p == NULL) {
		snprintf(err, errlen, "out of memory for the per-hop probe");
		goto fail;
	}
	p->fd = -1;
	p->out = out;
	p->cfg = *cfg;
	p->next_ttl = 1;
	p->limit = HOPPROBE_MAX_TTL;
	p->pb.sched.interval_ns = cfg->interval_ns;
	for (int k = 0; k < HOPPROBE_PORTS; k++)
		p->slot[k].n = -1;
	if (hop_check_config(&p->cfg, err, errlen) < 0)
		goto fail;
	p->family = p->cfg.target.ss_family;
	if (util_random(&p->cookie, sizeof(p->cookie)) < 0) {
		snprintf(err, errlen, "cannot draw the per-hop probe's random cookie");
		goto fail;
	}
	if (hop_open(p, err, errlen) < 0)
		goto fail;
	if (sock_bind_local(p->fd, &p->cfg.local) < 0) {
		snprintf(err, errlen, "cannot bind the per-hop probe socket to the -B address: %s",
			 strerror(errno));
		goto fail;
	}
	p->pb.send_ev = evtimer_new(base, hop_send_callback, p);
	p->recv_ev = event_new(base, p->fd, EV_READ | EV_PERSIST, hop_recv_callback, p);
	if (p->pb.send_ev == NULL || p->recv_ev == NULL || event_add(p->recv_ev, NULL) < 0 ||
	    evtimer_add(p->pb.send_ev, &now) < 0) {
		snprintf(err, errlen, "cannot create the per-hop probe's events");
		goto fail;
	}
	out->available = 1;
	return p;
fail:
	out->available = 0;
	snprintf(out->note, sizeof(out->note), "%s", err);
	if (p)
		hop_destroy(p);
	return NULL;
}

void hop_trace_free(struct hop_trace *t)
{
	for (int k = 0; k < HOPPROBE_MAX_TTL; k++)
		series_free(&t->ttl[k]);
}

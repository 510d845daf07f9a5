/* icmp: ICMP echo requests on an absolute schedule, matched to replies and to ICMP errors by
 * cookie and sequence number, timed with kernel receive timestamps; plus the pure parser of
 * what ping and raw sockets receive. */
#include "probes/icmp.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/icmp6.h>
#include <linux/errqueue.h>
#include <linux/icmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/bytes.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/sock.h"
#include "common/util.h"
#include "probes/probebase.h"
#include "probes/schedule.h"

#define ICMP_IPV4_MIN 20
#define ICMP_IPV6_LEN 40
#define ICMP_RECV_MAX 2048  /* a reply or an error quoting our largest echo, with IP header */
#define ICMP_RECV_BATCH 64  /* messages per wake-up: the send timer must not starve */
#define ICMP_CTL_MAX 256    /* extended error, offender address and timestamp */

struct icmp_probe {
	struct probe_base pb;         /* first: the runner's ops take the probe as its base */
	struct icmp_probe_config cfg; /* target normalized: plain IPv4 or IPv6, port 0 */
	struct probe_series *out;
	struct event *recv_ev;
	int fd;
	int family;
	int raw;             /* raw socket (else ping socket) */
	uint16_t id;         /* raw sockets: ours; ping sockets get theirs from the kernel */
	uint64_t cookie;
	size_t expire_from;  /* samples before this one are no longer pending */
	uint8_t pkt[ICMP_HDR_LEN + ICMP_PAYLOAD_MAX];
};

uint16_t icmp_checksum(const uint8_t *buf, size_t len)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += bytes_be16(buf + i);
	if (len & 1)
		sum += (uint32_t)buf[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

size_t icmp_build_echo(int family, uint16_t id, uint32_t seq32, uint64_t cookie, uint8_t *buf,
		       size_t payload_len)
{
	size_t len = ICMP_HDR_LEN + payload_len;

	memset(buf, 0, len);
	buf[0] = family == AF_INET6 ? ICMP6_ECHO_REQUEST : ICMP_ECHO;
	bytes_put_be16(buf + 4, id);
	bytes_put_be16(buf + 6, (uint16_t)seq32);
	bytes_put_be32(buf + 8, (uint32_t)(cookie >> 32));
	bytes_put_be32(buf + 12, (uint32_t)cookie);
	bytes_put_be32(buf + 16, seq32);
	if (family == AF_INET)
		bytes_put_be16(buf + 2, icmp_checksum(buf, len));
	return len;
}

/* Identifier, sequence number and our payload prefix of an echo (len >= ICMP_HDR_LEN). */
static void icmp_echo_fields(const uint8_t *buf, size_t len, struct icmp_parsed *out)
{
	out->id = bytes_be16(buf + 4);
	out->seq = bytes_be16(buf + 6);
	out->payload_len = len - ICMP_HDR_LEN;
	if (out->payload_len >= ICMP_COOKIE_LEN) {
		out->has_cookie = 1;
		out->cookie = (uint64_t)bytes_be32(buf + 8) << 32 | bytes_be32(buf + 12);
		out->seq32 = bytes_be32(buf + 16);
	}
}

enum icmp_parse_result icmp_parse_quoted_echo(int family, const uint8_t *buf, size_t len,
					      struct icmp_parsed *out)
{
	uint8_t request = family == AF_INET6 ? ICMP6_ECHO_REQUEST : ICMP_ECHO;

	memset(out, 0, sizeof(*out));
	if (len < ICMP_HDR_LEN)
		return ICMP_PARSE_BAD;
	if (buf[0] != request || buf[1] != 0)
		return ICMP_PARSE_OTHER; /* an error about some other ICMP message */
	icmp_echo_fields(buf, len, out);
	return ICMP_PARSE_ERROR;
}

/* The IPv4 packet an ICMP error quotes: an echo request, unless it is another protocol or a
 * later fragment (which has no ICMP header). */
static enum icmp_parse_result icmp_quoted_v4(const uint8_t *buf, size_t len,
					     struct icmp_parsed *out)
{
	size_t hl;

	if (len < ICMP_IPV4_MIN || buf[0] >> 4 != 4)
		return ICMP_PARSE_BAD;
	hl = (size_t)(buf[0] & 0x0f) * 4;
	if (hl < ICMP_IPV4_MIN || hl > len)
		return ICMP_PARSE_BAD;
	if (buf[9] != IPPROTO_ICMP || (bytes_be16(buf + 6) & 0x1fff) != 0)
		return ICMP_PARSE_OTHER;
	return icmp_parse_quoted_echo(AF_INET, buf + hl, len - hl, out);
}

/* The IPv6 packet an ICMPv6 error quotes; we never send extension headers, so an echo of
 * ours has ICMPv6 as its next header. */
static enum icmp_parse_result icmp_quoted_v6(const uint8_t *buf, size_t len,
					     struct icmp_parsed *out)
{
	if (len < ICMP_IPV6_LEN || buf[0] >> 4 != 6)
		return ICMP_PARSE_BAD;
	if (buf[6] != IPPROTO_ICMPV6)
		return ICMP_PARSE_OTHER;
	return icmp_parse_quoted_echo(AF_INET6, buf + ICMP_IPV6_LEN, len - ICMP_IPV6_LEN, out);
}

static int icmp_is_error_type(int family, uint8_t type)
{
	if (family == AF_INET6)
		return type == ICMP6_DST_UNREACH || type == ICMP6_PACKET_TOO_BIG ||
		       type == ICMP6_TIME_EXCEEDED || type == ICMP6_PARAM_PROB;
	return type == ICMP_DEST_UNREACH || type == ICMP_TIME_EXCEEDED ||
	       type == ICMP_PARAMETERPROB;
}

/* One ICMP(v6) message, header first. */
static enum icmp_parse_result icmp_parse_msg(int family, const uint8_t *buf, size_t len,
					     struct icmp_parsed *out)
{
	uint8_t reply = family == AF_INET6 ? ICMP6_ECHO_REPLY : ICMP_ECHOREPLY;
	uint8_t type, code;
	enum icmp_parse_result r;

	if (len < ICMP_HDR_LEN)
		return ICMP_PARSE_BAD;
	type = buf[0];
	code = buf[1];
	if (type == reply) {
		if (code != 0)
			return ICMP_PARSE_BAD;
		icmp_echo_fields(buf, len, out);
		r = ICMP_PARSE_REPLY;
	} else if (icmp_is_error_type(family, type)) {
		r = family == AF_INET6 ? icmp_quoted_v6(buf + ICMP_HDR_LEN, len - ICMP_HDR_LEN, out)
				       : icmp_quoted_v4(buf + ICMP_HDR_LEN, len - ICMP_HDR_LEN, out);
	} else {
		r = ICMP_PARSE_OTHER;
	}
	out->type = type;
	out->code = code;
	return r;
}

/* A raw IPv4 socket's packet: IPv4 header (any options; Linux leaves its total length in
 * network order), then an ICMP message whose checksum nobody has verified yet. */
static enum icmp_parse_result icmp_parse_raw_v4(const uint8_t *buf, size_t len,
						struct icmp_parsed *out)
{
	size_t hl, total;

	if (len < ICMP_IPV4_MIN || buf[0] >> 4 != 4)
		return ICMP_PARSE_BAD;
	hl = (size_t)(buf[0] & 0x0f) * 4;
	total = bytes_be16(buf + 2);
	/* A packet shorter than its header says was cut; longer carries trailing bytes. */
	if (hl < ICMP_IPV4_MIN || total < hl + ICMP_HDR_LEN || total > len ||
	    buf[9] != IPPROTO_ICMP)
		return ICMP_PARSE_BAD;
	if (icmp_checksum(buf + hl, total - hl) != 0)
		return ICMP_PARSE_BAD;
	return icmp_parse_msg(AF_INET, buf + hl, total - hl, out);
}

enum icmp_parse_result icmp_parse(int family, int raw, const uint8_t *buf, size_t len,
				  struct icmp_parsed *out)
{
	memset(out, 0, sizeof(*out));
	if (family != AF_INET && family != AF_INET6)
		return ICMP_PARSE_BAD;
	if (family == AF_INET && raw)
		return icmp_parse_raw_v4(buf, len, out);
	return icmp_parse_msg(family, buf, len, out);
}

/* ---- the probe ---- */

/* Marks samples whose timeout passed without an answer; they are sent in order, so one
 * index moving forward finds them all. */
static void icmp_expire(struct icmp_probe *p, int64_t now)
{
	struct probe_series *ps = p->out;

	while (p->expire_from < ps->n &&
	       ps->s[p->expire_from].send_ns + p->cfg.timeout_ns <= now) {
		series_complete(ps, (long)p->expire_from, 0, SAMPLE_LOST);
		p->expire_from++;
	}
}

static void icmp_send(struct icmp_probe *p)
{
	struct probe_series *ps = p->out;
	uint32_t seq32 = (uint32_t)ps->n;
	size_t len = icmp_build_echo(p->family, p->id, seq32, p->cookie, p->pkt, p->cfg.size);
	/* Read the clock last, right before the syscall. */
	long i = series_push(ps, clock_mono_ns());

	if (i < 0) {
		log_warnx("icmp probe: out of memory for samples; no more echoes");
		p->pb.stopping = 1;
		return;
	}
	if (sendto(p->fd, p->pkt, len, 0, (const struct sockaddr *)&p->cfg.target,
		   p->cfg.target_len) < 0)
		log_debug("icmp send: %s", strerror(errno)); /* stays pending: counts as lost */
}

/* One-shot timer re-armed for the next slot of the absolute schedule. */
static void icmp_send_callback(evutil_socket_t fd, short what, void *arg)
{
	struct icmp_probe *p = arg;

	if (p->pb.stopping)
		return;
	icmp_send(p);
	icmp_expire(p, clock_mono_ns());
	if (schedule_rearm(&p->pb.sched, p->pb.send_ev) < 0)
		log_warnx("icmp probe: cannot schedule the next echo");
}

/* The pending sample an answer belongs to, or -1. The cookie proves it answers an echo of
 * this probe; the 16-bit header number must agree with the 32-bit one in the payload. */
static long icmp_match(const struct icmp_probe *p, const struct icmp_parsed *m, int is_reply)
{
	const struct probe_series *ps = p->out;
	size_t i;

	if (ps->n == 0)
		return -1;
	if (m->has_cookie) {
		if (m->cookie != p->cookie || (uint16_t)m->seq32 != m->seq)
			return -1;
		i = m->seq32;
	} else {
		/* Every echo carries the cookie; only an error may quote less (RFC 792 routers
		 * quote 8 bytes): take the latest sample with that 16-bit number. */
		size_t last = ps->n - 1;
		size_t back = (uint16_t)((uint16_t)last - m->seq);

		if (is_reply || back > last)
			return -1;
		i = last - back;
	}
	if (i >= ps->n || ps->s[i].status != SAMPLE_PENDING)
		return -1;
	return (long)i;
}

static void icmp_on_reply(struct icmp_probe *p, const struct icmp_parsed *m,
			  const struct sockaddr_storage *peer, int64_t rx)
{
	struct probe_series *ps = p->out;
	int from_target = sock_same_ip((const struct sockaddr *)peer,
				       (const struct sockaddr *)&p->cfg.target);
	/* An echo reply carries the whole payload back. */
	int size_ok = m->payload_len == p->cfg.size;
	long i = icmp_match(p, m, 1);
	int64_t rtt;

	if (!from_target || !size_ok || i < 0) {
		ps->bad_replies++; /* forged, duplicated, or late after its timeout was declared */
		return;
	}
	rtt = rx - ps->s[i].send_ns;
	if (rtt < 0) {
		ps->bad_replies++; /* the wall clock stepped under the kernel timestamp */
		return;
	}
	series_complete(ps, i, rtt, rtt <= p->cfg.timeout_ns ? SAMPLE_OK : SAMPLE_LOST);
}

static void icmp_on_error(struct icmp_probe *p, const struct icmp_parsed *m)
{
	struct probe_series *ps = p->out;
	long i = icmp_match(p, m, 0);

	if (i < 0) {
		ps->bad_replies++;
		return;
	}
	series_complete(ps, i, 0, SAMPLE_ERROR);
	ps->s[i].aux = m->type << 8 | m->code; /* which error, for the report */
}

static void icmp_handle(struct icmp_probe *p, const uint8_t *buf, size_t len,
			const struct sockaddr_storage *peer, int64_t rx)
{
	struct icmp_parsed m;
	enum icmp_parse_result r = icmp_parse(p->family, p->raw, buf, len, &m);

	if (r == ICMP_PARSE_BAD || (r == ICMP_PARSE_OTHER && !p->raw)) {
		p->out->bad_replies++;
		return;
	}
	/* A raw socket sees every echo and ICMP error of the host: other programs' (another
	 * identifier, or another cookie should identifiers collide) are not answers to us. */
	if (p->raw && (r == ICMP_PARSE_OTHER || m.id != p->id ||
		       (m.has_cookie && m.cookie != p->cookie)))
		return;
	if (r == ICMP_PARSE_REPLY)
		icmp_on_reply(p, &m, peer, rx);
	else
		icmp_on_error(p, &m);
}

/* The ICMP error that came with an error-queue message, if it is one. */
static int icmp_queued_error(struct msghdr *mh, struct sock_extended_err *ee)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		int is_err = (c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
			     (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR);

		if (!is_err || c->cmsg_len < CMSG_LEN(sizeof(*ee)))
			continue;
		memcpy(ee, CMSG_DATA(c), sizeof(*ee));
		return ee->ee_origin == SO_EE_ORIGIN_ICMP || ee->ee_origin == SO_EE_ORIGIN_ICMP6;
	}
	return 0;
}

/* Ping sockets deliver ICMP errors on the error queue: the quoted echo as data, the error's
 * type and code in a control message. */
static void icmp_drain_errqueue(struct icmp_probe *p)
{
	for (int k = 0; k < ICMP_RECV_BATCH; k++) {
		uint8_t buf[ICMP_RECV_MAX];
		union {
			char buf[ICMP_CTL_MAX];
			struct cmsghdr align;
		} ctl;
		struct sockaddr_storage name;
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
		struct msghdr mh = { .msg_name = &name, .msg_namelen = sizeof(name),
				     .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
		struct sock_extended_err ee;
		struct icmp_parsed m;
		ssize_t n = recvmsg(p->fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return; /* EAGAIN: the queue is empty */
		}
		if (!icmp_queued_error(&mh, &ee))
			continue; /* a local error (e.g. EMSGSIZE); the send already reported it */
		if (icmp_parse_quoted_echo(p->family, buf, (size_t)n, &m) != ICMP_PARSE_ERROR) {
			p->out->bad_replies++;
			continue;
		}
		m.type = ee.ee_type;
		m.code = ee.ee_code;
		icmp_on_error(p, &m);
	}
}

static void icmp_recv_callback(evutil_socket_t fd, short what, void *arg)
{
	struct icmp_probe *p = arg;
	uint8_t buf[ICMP_RECV_MAX];

	/* libevent reports a pending socket error (EPOLLERR) as readable: look there first. */
	if (!p->raw)
		icmp_drain_errqueue(p);
	for (int k = 0; k < ICMP_RECV_BATCH; k++) {
		struct sockaddr_storage peer;
		socklen_t plen;
		int64_t rx;
		enum ts_source src;
		ssize_t n = sock_recv_ts(fd, buf, sizeof(buf), &peer, &plen, &rx, &src);

		if (n >= 0) {
			icmp_handle(p, buf, (size_t)n, &peer, rx);
			continue;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		if (errno == EMSGSIZE) {
			p->out->bad_replies++; /* longer than anything we could have caused */
			continue;
		}
		if (errno == EINTR)
			continue;
		if (!p->raw) {
			/* A ping socket reports each queued ICMP error once as a socket error. */
			icmp_drain_errqueue(p);
			continue;
		}
		log_debug("icmp recv: %s", strerror(errno));
		return;
	}
}

static void icmp_destroy(void *arg)
{
	struct icmp_probe *p = arg;

	if (p == NULL)
		return;
	series_close(p->out);
	if (p->pb.sched.skipped)
		log_debug("icmp probe: %llu send slots skipped after stalls",
			  (unsigned long long)p->pb.sched.skipped);
	probe_base_free(&p->pb);
	if (p->recv_ev)
		event_free(p->recv_ev);
	if (p->fd >= 0)
		close(p->fd);
	free(p);
}

const struct probe_ops icmp_probe_ops = {
	.set_interval = probe_base_set_interval,
	.stop_sending = probe_base_stop_sending,
	.destroy = icmp_destroy,
};

/* The target as plain IPv4 or IPv6 with port 0 (raw IPv6 sockets read the port as the
 * protocol and refuse anything but 0 or ICMPv6). */
static int icmp_normalize_target(struct icmp_probe_config *cfg)
{
	struct sockaddr_storage t = cfg->target;

	memset(&cfg->target, 0, sizeof(cfg->target));
	if (t.ss_family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&cfg->target;

		memcpy(sin, &t, sizeof(*sin));
		sin->sin_port = 0;
		cfg->target_len = sizeof(*sin);
		return 0;
	}
	if (t.ss_family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&cfg->target;

		memcpy(sin6, &t, sizeof(*sin6));
		sin6->sin6_port = 0;
		cfg->target_len = sizeof(*sin6);
		if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
			struct sockaddr_in sin = { .sin_family = AF_INET };

			memcpy(&sin.sin_addr, &sin6->sin6_addr.s6_addr[12], sizeof(sin.sin_addr));
			memset(&cfg->target, 0, sizeof(cfg->target));
			memcpy(&cfg->target, &sin, sizeof(sin));
			cfg->target_len = sizeof(sin);
		}
		return 0;
	}
	return -1;
}

static int icmp_check_config(struct icmp_probe_config *cfg, char *err, size_t errlen)
{
	if (cfg->size == 0)
		cfg->size = ICMP_PAYLOAD_DEFAULT;
	if (icmp_normalize_target(cfg) < 0) {
		snprintf(err, errlen, "the ICMP probe needs an IPv4 or IPv6 target");
		return -1;
	}
	if (cfg->interval_ns <= 0 || cfg->timeout_ns <= 0) {
		snprintf(err, errlen, "the ICMP probe needs a positive interval and timeout");
		return -1;
	}
	if (cfg->size < ICMP_PAYLOAD_MIN || cfg->size > ICMP_PAYLOAD_MAX) {
		snprintf(err, errlen, "the ICMP payload must be %d to %d bytes", ICMP_PAYLOAD_MIN,
			 ICMP_PAYLOAD_MAX);
		return -1;
	}
	if (cfg->dscp < -1 || cfg->dscp > 63) {
		snprintf(err, errlen, "the DSCP value must be 0 to 63");
		return -1;
	}
	return 0;
}

/* Raw sockets wake for every ICMP message of the host: let through only echo replies and
 * the errors that can be about our echoes. Also pick our identifier. */
static int icmp_setup_raw(struct icmp_probe *p)
{
	if (util_random(&p->id, sizeof(p->id)) < 0) {
		errno = EIO;
		return -1;
	}
	if (p->family == AF_INET) {
		struct icmp_filter f = {
			.data = ~(uint32_t)(1U << ICMP_ECHOREPLY | 1U << ICMP_DEST_UNREACH |
					    1U << ICMP_TIME_EXCEEDED | 1U << ICMP_PARAMETERPROB),
		};

		return setsockopt(p->fd, SOL_RAW, ICMP_FILTER, &f, sizeof(f));
	} else {
		struct icmp6_filter f;

		ICMP6_FILTER_SETBLOCKALL(&f);
		ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &f);
		ICMP6_FILTER_SETPASS(ICMP6_DST_UNREACH, &f);
		ICMP6_FILTER_SETPASS(ICMP6_PACKET_TOO_BIG, &f);
		ICMP6_FILTER_SETPASS(ICMP6_TIME_EXCEEDED, &f);
		ICMP6_FILTER_SETPASS(ICMP6_PARAM_PROB, &f);
		return setsockopt(p->fd, IPPROTO_ICMPV6, ICMP6_FILTER, &f, sizeof(f));
	}
}

/* Ping sockets pass ICMP errors about our echoes only through the error queue. */
static int icmp_setup_ping(struct icmp_probe *p)
{
	int one = 1;

	if (p->family == AF_INET)
		return setsockopt(p->fd, SOL_IP, IP_RECVERR, &one, sizeof(one));
	return setsockopt(p->fd, SOL_IPV6, IPV6_RECVERR, &one, sizeof(one));
}

/* A ping socket if this group may open one, else a raw socket, else one clear sentence. */
static int icmp_open(struct icmp_probe *p, char *err, size_t errlen)
{
	int proto = p->family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6;
	int ping_errno, raw_errno;

	p->fd = socket(p->family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
	if (p->fd >= 0) {
		p->raw = 0;
		snprintf(p->out->method, sizeof(p->out->method), "ping socket");
		if (icmp_setup_ping(p) == 0)
			return 0;
		snprintf(err, errlen, "cannot ask the ping socket for ICMP errors: %s",
			 strerror(errno));
		return -1;
	}
	ping_errno = errno;
	p->fd = socket(p->family, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
	if (p->fd >= 0) {
		p->raw = 1;
		snprintf(p->out->method, sizeof(p->out->method), "raw socket");
		if (icmp_setup_raw(p) == 0)
			return 0;
		snprintf(err, errlen, "cannot set up the raw ICMP socket: %s", strerror(errno));
		return -1;
	}
	raw_errno = errno;
	if ((ping_errno == EACCES || ping_errno == EPERM) &&
	    (raw_errno == EACCES || raw_errno == EPERM))
		snprintf(err, errlen,
			 "neither an unprivileged ping socket nor a raw socket is allowed: add "
			 "your group to net.ipv4.ping_group_range (e.g. sysctl -w "
			 "net.ipv4.ping_group_range=\"0 2147483647\") or run as root (CAP_NET_RAW)");
	else
		snprintf(err, errlen, "cannot open an ICMP socket: %s",
			 strerror(ping_errno == EACCES ? raw_errno : ping_errno));
	return -1;
}

static int icmp_setup_events(struct icmp_probe *p, struct event_base *base)
{
	struct timeval now = { 0, 0 };

	p->pb.send_ev = evtimer_new(base, icmp_send_callback, p);
	p->recv_ev = event_new(base, p->fd, EV_READ | EV_PERSIST, icmp_recv_callback, p);
	if (p->pb.send_ev == NULL || p->recv_ev == NULL || event_add(p->recv_ev, NULL) < 0 ||
	    evtimer_add(p->pb.send_ev, &now) < 0)
		return -1;
	return 0;
}

struct icmp_probe *icmp_probe_start(struct event_base *base, const struct icmp_probe_config *cfg,
				    struct probe_series *out, char *err, size_t errlen)
{
	struct icmp_probe *p = calloc(1, sizeof(*p));

	if (p == NULL) {
		snprintf(err, errlen, "out of memory for the ICMP probe");
		goto fail;
	}
	p->fd = -1;
	p->out = out;
	p->cfg = *cfg;
	p->pb.sched.interval_ns = cfg->interval_ns;
	if (icmp_check_config(&p->cfg, err, errlen) < 0)
		goto fail;
	p->family = p->cfg.target.ss_family;
	if (util_random(&p->cookie, sizeof(p->cookie)) < 0) {
		snprintf(err, errlen, "cannot draw the ICMP probe's random cookie");
		goto fail;
	}
	if (icmp_open(p, err, errlen) < 0)
		goto fail;
	if (sock_bind_local(p->fd, &p->cfg.local) < 0) {
		snprintf(err, errlen, "cannot bind the ICMP probe socket to the -B address: %s",
			 strerror(errno));
		goto fail;
	}
	if (p->cfg.dscp >= 0 && sock_set_dscp(p->fd, p->cfg.dscp) < 0) {
		snprintf(err, errlen, "cannot mark ICMP probes with DSCP %d: %s", p->cfg.dscp,
			 strerror(errno));
		goto fail;
	}
	(void)sock_enable_rx_timestamps(p->fd); /* else user-space times: still valid */
	if (icmp_setup_events(p, base) < 0) {
		snprintf(err, errlen, "cannot create the ICMP probe's events");
		goto fail;
	}
	out->available = 1;
	return p;
fail:
	out->available = 0;
	out->method[0] = '\0';
	series_note(out, "%s", err);
	if (p)
		icmp_destroy(p);
	return NULL;
}

/* dns (server): receives queries together with the local address they arrived on
 * (IP_PKTINFO / IPV6_PKTINFO), drops sources over their rate, answers with dns_answer() from
 * that same local address (so a multi-homed host answers from the address that was asked),
 * and counts every outcome in server_counters. */
#include "server/dns.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/dns.h"
#include "common/log.h"
#include "common/util.h"
#include "server/fdloop.h"

/* Datagrams handled per wake-up: a flood cannot keep the thread from seeing a stop request or
 * from pausing (server/fdloop.h). */
#define DNS_DRAIN_MAX 1024
/* Receive buffer: EDNS clients may pad queries (RFC 7830); larger ones count as bad. */
#define DNS_RECV_MAX 2048

struct dns_responder {
	struct server_ctx *srv;
	struct dns_zone zone;
	struct dns_ratelimit rl;
	int fd;
	struct fdloop loop;
};

/* One received datagram's addresses. */
struct dns_dgram {
	struct sockaddr_storage peer, local;
	socklen_t peerlen;
	int have_local;
	int ifindex;
};

union dns_cmsg {
	char buf[CMSG_SPACE(sizeof(struct in6_pktinfo)) + CMSG_SPACE(sizeof(struct in_pktinfo))];
	struct cmsghdr align;
};

/* splitmix64's finaliser: a bijective mixer that spreads every input bit over the output. */
static uint64_t dns_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

void dns_ratelimit_init(struct dns_ratelimit *rl, uint64_t key)
{
	memset(rl, 0, sizeof(*rl));
	rl->key = key;
}

/* The bucket of a source: IPv4 address (plain or mapped) or IPv6 /64, mixed with the key. */
static size_t dns_rl_slot(const struct dns_ratelimit *rl, const struct sockaddr *src)
{
	uint64_t v = 0, fam = 0;

	if (src->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)src;

		v = ntohl(s4->sin_addr.s_addr);
		fam = 4;
	} else if (src->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)src)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(a)) {
			v = (uint64_t)a->s6_addr[12] << 24 | (uint64_t)a->s6_addr[13] << 16 |
			    (uint64_t)a->s6_addr[14] << 8 | a->s6_addr[15];
			fam = 4;
		} else {
			for (int i = 0; i < 8; i++)
				v = v << 8 | a->s6_addr[i];
			fam = 6;
		}
	}
	return (size_t)(dns_mix(dns_mix(v ^ rl->key) + fam) % DNS_RL_SLOTS);
}

int dns_ratelimit_allow(struct dns_ratelimit *rl, const struct sockaddr *src, int64_t now_ns)
{
	const int64_t step = NS_PER_SEC / DNS_RL_RATE;
	int64_t *tat = &rl->tat[dns_rl_slot(rl, src)];
	int64_t t = *tat > now_ns ? *tat : now_ns;

	/* The bucket is empty when its next conforming time lies a whole burst ahead. */
	if (t - now_ns > (int64_t)(DNS_RL_BURST - 1) * step)
		return 0;
	*tat = t + step;
	return 1;
}

static int dns_enable_pktinfo(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int one = 1;

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
		return -1;
	/* On a dual-stack socket IPV6_PKTINFO also reports IPv4 arrivals, as mapped addresses. */
	if (ss.ss_family == AF_INET6)
		return setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one));
	return setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
}

/* Takes the local address out of a packet-info control message. */
static void dns_read_pktinfo(struct msghdr *mh, struct dns_dgram *d)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct in_pktinfo))) {
			struct in_pktinfo pi;
			struct sockaddr_in *s4 = (struct sockaddr_in *)&d->local;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			s4->sin_family = AF_INET;
			/* spec_dst: the local address to answer from (== destination for unicast). */
			s4->sin_addr = pi.ipi_spec_dst;
			d->ifindex = pi.ipi_ifindex;
			d->have_local = 1;
		} else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO &&
			   c->cmsg_len >= CMSG_LEN(sizeof(struct in6_pktinfo))) {
			struct in6_pktinfo pi;
			struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&d->local;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			s6->sin6_family = AF_INET6;
			s6->sin6_addr = pi.ipi6_addr;
			d->ifindex = (int)pi.ipi6_ifindex;
			d->have_local = 1;
		}
	}
}

/* Receives one datagram with its addresses; length, or -1 with errno (EMSGSIZE if cut). */
static ssize_t dns_recv(int fd, uint8_t *buf, size_t cap, struct dns_dgram *d)
{
	union dns_cmsg ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = cap };
	struct msghdr mh = {
		.msg_name = &d->peer,
		.msg_namelen = sizeof(d->peer),
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	ssize_t n;

	memset(d, 0, sizeof(*d));
	n = recvmsg(fd, &mh, MSG_DONTWAIT);
	if (n < 0)
		return -1;
	d->peerlen = mh.msg_namelen;
	if (mh.msg_flags & MSG_TRUNC) {
		errno = EMSGSIZE;
		return -1;
	}
	dns_read_pktinfo(&mh, d);
	return n;
}

/* Sends the answer from the address the query was sent to: a reply from any other address
 * would be dropped by the client as not coming from the server it asked. */
static int dns_send(int fd, const uint8_t *buf, size_t len, const struct dns_dgram *d)
{
	union dns_cmsg ctl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = {
		.msg_name = (void *)&d->peer,
		.msg_namelen = d->peerlen,
		.msg_iov = &iov,
		.msg_iovlen = 1,
	};

	memset(&ctl, 0, sizeof(ctl));
	if (d->have_local) {
		struct cmsghdr *c;

		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&mh);
		if (d->local.ss_family == AF_INET) {
			struct in_pktinfo pi = {
				.ipi_spec_dst = ((const struct sockaddr_in *)&d->local)->sin_addr,
			};

			c->cmsg_level = IPPROTO_IP;
			c->cmsg_type = IP_PKTINFO;
			c->cmsg_len = CMSG_LEN(sizeof(pi));
			memcpy(CMSG_DATA(c), &pi, sizeof(pi));
			mh.msg_controllen = CMSG_SPACE(sizeof(pi));
		} else {
			struct in6_pktinfo pi = {
				.ipi6_addr = ((const struct sockaddr_in6 *)&d->local)->sin6_addr,
			};

			/* The interface matters only where the address does not name one. */
			if (IN6_IS_ADDR_LINKLOCAL(&pi.ipi6_addr))
				pi.ipi6_ifindex = (unsigned int)d->ifindex;
			c->cmsg_level = IPPROTO_IPV6;
			c->cmsg_type = IPV6_PKTINFO;
			c->cmsg_len = CMSG_LEN(sizeof(pi));
			memcpy(CMSG_DATA(c), &pi, sizeof(pi));
			mh.msg_controllen = CMSG_SPACE(sizeof(pi));
		}
	}
	if (sendmsg(fd, &mh, 0) >= 0)
		return 0;
	if (errno != EINVAL || !d->have_local)
		return -1;
	/* A source the kernel refuses (e.g. the address just went away): let it choose. */
	mh.msg_control = NULL;
	mh.msg_controllen = 0;
	return sendmsg(fd, &mh, 0) < 0 ? -1 : 0;
}

/* Rate check, answer, send, and the counters for one query. */
static void dns_handle(struct dns_responder *d, const uint8_t *q, size_t qlen,
		       const struct dns_dgram *dg)
{
	struct server_counters *c = &d->srv->counters;
	uint8_t out[DNS_UDP_MAX];
	size_t n;
	int rcode;

	atomic_fetch_add(&c->dns_queries, 1);
	/* Before parsing: garbage costs its sender tokens too. */
	if (!dns_ratelimit_allow(&d->rl, (const struct sockaddr *)&dg->peer, clock_mono_ns())) {
		atomic_fetch_add(&c->dns_ratelimited, 1);
		return;
	}
	n = dns_answer(&d->zone, q, qlen, dg->have_local ? (const struct sockaddr *)&dg->local : NULL,
		       (const struct sockaddr *)&dg->peer, out, sizeof(out));
	if (n == 0) {
		atomic_fetch_add(&c->dns_bad, 1);
		return;
	}
	rcode = out[3] & 0xf;
	if (rcode == DNS_RCODE_FORMERR || rcode == DNS_RCODE_NOTIMP)
		atomic_fetch_add(&c->dns_bad, 1);
	else if (rcode == DNS_RCODE_REFUSED)
		atomic_fetch_add(&c->dns_refused, 1);
	if (dns_send(d->fd, out, n, dg) < 0)
		log_debug("dns send: %s", strerror(errno));
	else
		atomic_fetch_add(&c->dns_answered, 1);
}

static int dns_drain(void *arg)
{
	struct dns_responder *d = arg;
	uint8_t q[DNS_RECV_MAX];

	for (int i = 0; i < DNS_DRAIN_MAX; i++) {
		struct dns_dgram dg;
		ssize_t n = dns_recv(d->fd, q, sizeof(q), &dg);

		if (n < 0) {
			if (errno == EMSGSIZE) {
				atomic_fetch_add(&d->srv->counters.dns_queries, 1);
				atomic_fetch_add(&d->srv->counters.dns_bad, 1);
				continue;
			}
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				log_debug("dns recv: %s", strerror(errno));
			return 0;
		}
		dns_handle(d, q, (size_t)n, &dg);
	}
	return 1;
}

struct dns_responder *dns_responder_start(struct server_ctx *srv, int udp_fd)
{
	const char *zone = srv->cfg->dns_zone ? srv->cfg->dns_zone : DNS_DEFAULT_ZONE;
	struct dns_responder *d = calloc(1, sizeof(*d));
	uint64_t key;

	if (d == NULL) {
		log_warnx("out of memory for the DNS responder");
		close(udp_fd);
		return NULL;
	}
	d->srv = srv;
	d->fd = udp_fd;
	if (dns_zone_init(&d->zone, zone) < 0) {
		log_error("invalid DNS zone %s", zone);
		goto fail;
	}
	if (util_random(&key, sizeof(key)) < 0) {
		log_error("no random key for the DNS rate limiter");
		goto fail;
	}
	dns_ratelimit_init(&d->rl, key);
	if (dns_enable_pktinfo(udp_fd) < 0) {
		log_warn("cannot learn the local address of DNS queries");
		goto fail;
	}
	d->loop = (struct fdloop){ .fd = udp_fd, .name = "DNS responder", .drain = dns_drain,
				   .arg = d };
	if (fdloop_start(&d->loop) < 0)
		goto fail;
	log_info("DNS responder for %s on UDP port %u", zone, srv->cfg->dns_port);
	return d;
fail:
	close(udp_fd);
	free(d);
	return NULL;
}

void dns_responder_stop(struct dns_responder *d)
{
	struct server_counters *c;

	if (d == NULL)
		return;
	c = &d->srv->counters;
	fdloop_stop(&d->loop);
	log_info("DNS: %llu queries, %llu answered, %llu refused, %llu bad, %llu rate-limited",
		 (unsigned long long)atomic_load(&c->dns_queries),
		 (unsigned long long)atomic_load(&c->dns_answered),
		 (unsigned long long)atomic_load(&c->dns_refused),
		 (unsigned long long)atomic_load(&c->dns_bad),
		 (unsigned long long)atomic_load(&c->dns_ratelimited));
	close(d->fd);
	free(d);
}

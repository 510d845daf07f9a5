/* dns (probe): sends the queries on an absolute schedule, keeps the recent ones in a ring
 * (their exact bytes, so a reply is checked against the question really asked), times answers
 * with kernel receive timestamps, and expires unanswered queries after the timeout. */
#include "probes/dns.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/dns.h"
#include "common/log.h"
#include "common/sock.h"
#include "common/util.h"
#include "probes/probebase.h"
#include "probes/schedule.h"

#define DNS_PROBE_MAX_SLOTS 4096
/* Receive buffer: without EDNS a conforming answer has at most 512 bytes; more is bad. */
#define DNS_PROBE_RECV_MAX 1500

/* One query in flight (or answered and kept to recognise duplicates and late answers). */
struct dns_pending {
	uint8_t query[DNS_QUERY_MAX];
	size_t qlen;                 /* 0: slot never used */
	long idx;                    /* its sample in the series */
	int64_t send_ns;
	int open;                    /* no answer yet and not expired */
};

struct dns_probe {
	struct probe_base pb;        /* first: the runner's ops take the probe as its base */
	struct dns_probe_config cfg;
	struct probe_series *out;
	struct event *recv_ev, *expire_ev;
	int fd;
	uint64_t seq;
	uint64_t unreachable;        /* ICMP port/host unreachable reported on the socket */
	struct dns_pending *slot;
	size_t nslots;
};

static void dns_probe_send(struct dns_probe *p)
{
	struct dns_pending *s = &p->slot[p->seq % p->nslots];
	char name[DNS_NAME_MAX + 32];
	uint8_t rnd[6];
	long idx;

	/* Only when more queries than slots fit in one timeout: its answer is now unrecognisable. */
	if (s->open)
		series_complete(p->out, s->idx, 0, SAMPLE_LOST);
	s->open = 0;
	if (util_random(rnd, sizeof(rnd)) < 0) {
		log_debug("dns probe: no random bytes");
		return;
	}
	snprintf(name, sizeof(name), "%" PRIu64 "-%02x%02x%02x%02x.%s", p->seq, rnd[0], rnd[1],
		 rnd[2], rnd[3], p->cfg.zone);
	s->qlen = dns_build_query(s->query, sizeof(s->query), (uint16_t)(rnd[4] << 8 | rnd[5]), name,
				  p->cfg.qtype, p->cfg.recursion_desired);
	/* Padded so the responder's answer, never larger than the query, still carries the record. */
	s->qlen = s->qlen ? dns_query_pad(s->query, s->qlen, sizeof(s->query)) : 0;
	idx = series_push(p->out, 0);
	p->seq++;
	if (s->qlen == 0 || idx < 0)
		return; /* cannot happen for a zone checked at start; out of memory */
	s->idx = idx;
	s->open = 1;
	/* Read the clock last, right before the syscall. */
	s->send_ns = p->out->s[idx].send_ns = clock_mono_ns();
	if (send(p->fd, s->query, s->qlen, 0) < 0)
		log_debug("dns probe send: %s", strerror(errno)); /* expires as lost: honest */
}

/* One-shot timer re-armed for the next slot of the absolute schedule. */
static void dns_probe_send_callback(evutil_socket_t fd, short what, void *arg)
{
	struct dns_probe *p = arg;

	if (p->pb.stopping)
		return;
	dns_probe_send(p);
	if (schedule_rearm(&p->pb.sched, p->pb.send_ev) < 0)
		log_warnx("cannot schedule the next DNS probe");
}

/* The connected socket already filters by source; checked again so the rule does not depend
 * on how the socket was set up. */
static int dns_probe_from_server(const struct dns_probe *p, const struct sockaddr *peer)
{
	const struct sockaddr *srv = (const struct sockaddr *)&p->cfg.server;

	return sock_same_ip(peer, srv) && sock_port(peer) == sock_port(srv);
}

/* Finds the query a datagram answers and completes its sample; anything else is bad. */
static void dns_probe_match(struct dns_probe *p, const uint8_t *buf, size_t n,
			    const struct sockaddr *peer, int64_t rx, int64_t rx_user)
{
	struct dns_reply r;

	if (n < 2 || !dns_probe_from_server(p, peer)) {
		p->out->bad_replies++;
		return;
	}
	for (size_t i = 0; i < p->nslots; i++) {
		struct dns_pending *s = &p->slot[i];
		int rc;

		if (s->qlen == 0 || memcmp(s->query, buf, 2) != 0)
			continue;
		rc = dns_parse_reply(buf, n, s->query, s->qlen, &r);
		if (rc == DNS_REPLY_MALFORMED)
			break;
		if (rc == DNS_REPLY_MISMATCH)
			continue;
		if (!s->open)
			return; /* a duplicate, or late after its timeout was declared */
		s->open = 0;
		if (rx < s->send_ns)
			rx = rx_user;
		if (rx - s->send_ns > p->cfg.timeout_ns) {
			series_complete(p->out, s->idx, 0, SAMPLE_LOST);
			return;
		}
		p->out->s[s->idx].aux = r.rcode;
		series_complete(p->out, s->idx, rx - s->send_ns,
				r.rcode == DNS_RCODE_NOERROR || r.rcode == DNS_RCODE_NXDOMAIN ?
					SAMPLE_OK : SAMPLE_ERROR);
		return;
	}
	p->out->bad_replies++;
}

static void dns_probe_recv_callback(evutil_socket_t fd, short what, void *arg)
{
	struct dns_probe *p = arg;
	uint8_t buf[DNS_PROBE_RECV_MAX];

	for (;;) {
		struct sockaddr_storage peer;
		socklen_t plen;
		int64_t rx;
		enum ts_source src;
		ssize_t n = sock_recv_ts(fd, buf, sizeof(buf), &peer, &plen, &rx, &src);
		int64_t user;

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			if (errno == ECONNREFUSED || errno == EHOSTUNREACH || errno == ENETUNREACH) {
				p->unreachable++; /* the queries it concerns expire as lost */
				continue;
			}
			if (errno == EMSGSIZE) {
				p->out->bad_replies++;
				continue;
			}
			if (errno == EINTR)
				continue;
			log_debug("dns probe recv: %s", strerror(errno));
			return;
		}
		/* Converting the kernel's CLOCK_REALTIME stamp can be off by a preemption between
		 * two clock reads; a stamp before the send is such a glitch: use the user-space
		 * receive time then (on loopback real RTTs are only ~10 us). */
		user = clock_mono_ns();
		dns_probe_match(p, buf, (size_t)n, (struct sockaddr *)&peer, rx, user);
	}
}

/* Declares queries without an answer after the timeout lost. */
static void dns_probe_expire_callback(evutil_socket_t fd, short what, void *arg)
{
	struct dns_probe *p = arg;
	int64_t now = clock_mono_ns();

	for (size_t i = 0; i < p->nslots; i++) {
		struct dns_pending *s = &p->slot[i];

		if (s->open && now - s->send_ns > p->cfg.timeout_ns) {
			s->open = 0;
			series_complete(p->out, s->idx, 0, SAMPLE_LOST);
		}
	}
}

static void dns_probe_destroy(void *arg)
{
	struct dns_probe *p = arg;

	if (p == NULL)
		return;
	if (p->out) {
		series_close(p->out);
		if (p->unreachable && p->out->n > 0 && p->out->note[0] == '\0')
			series_note(p->out, "%llu ICMP unreachable errors came back for DNS queries "
				    "(is a DNS server listening there?).",
				    (unsigned long long)p->unreachable);
		else if (p->pb.sched.skipped && p->out->note[0] == '\0')
			series_note(p->out, "%llu DNS queries left late (the probe loop was stalled).",
				    (unsigned long long)p->pb.sched.skipped);
	}
	probe_base_free(&p->pb);
	if (p->recv_ev)
		event_free(p->recv_ev);
	if (p->expire_ev)
		event_free(p->expire_ev);
	if (p->fd >= 0)
		close(p->fd);
	free(p->slot);
	free(p);
}

const struct probe_ops dns_probe_ops = {
	.set_interval = probe_base_set_interval,
	.stop_sending = probe_base_stop_sending,
	.destroy = dns_probe_destroy,
};

/* Checks what the caller asked for; -1 with one sentence in err. */
static int dns_probe_check_config(const struct dns_probe_config *cfg, char *err, size_t errlen)
{
	uint8_t q[DNS_QUERY_MAX];
	char name[DNS_NAME_MAX + 32];
	struct dns_zone z;

	if (cfg->server.ss_family != AF_INET && cfg->server.ss_family != AF_INET6) {
		snprintf(err, errlen, "the DNS probe needs an IPv4 or IPv6 server address");
		return -1;
	}
	if (cfg->interval_ns <= 0 || cfg->timeout_ns <= 0) {
		snprintf(err, errlen, "the DNS probe needs a positive interval and timeout");
		return -1;
	}
	/* The longest name the probe will ever ask must fit: the largest seq, 8 hex digits. */
	snprintf(name, sizeof(name), "%" PRIu64 "-ffffffff.%s", UINT64_MAX, cfg->zone);
	if (dns_zone_init(&z, cfg->zone) < 0 ||
	    dns_build_query(q, sizeof(q), 0, name, DNS_TYPE_A, 0) == 0) {
		snprintf(err, errlen, "the DNS probe zone \"%.64s\" is not a valid name short enough "
			 "for probe names", cfg->zone);
		return -1;
	}
	return 0;
}

/* The socket, connected to the server so the kernel drops datagrams from anyone else. */
static int dns_probe_socket(struct dns_probe *p, char *err, size_t errlen)
{
	const struct dns_probe_config *cfg = &p->cfg;

	p->fd = socket(cfg->server.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (p->fd >= 0 && sock_bind_local(p->fd, &cfg->local) < 0) {
		snprintf(err, errlen, "cannot send DNS queries to %s from the -B address: %s",
			 cfg->server.ss_family == AF_INET6 ? "an IPv6 server" : "an IPv4 server",
			 strerror(errno));
		return -1;
	}
	if (p->fd < 0 || connect(p->fd, (const struct sockaddr *)&cfg->server, cfg->server_len) < 0) {
		snprintf(err, errlen, "cannot open the DNS probe socket: %s", strerror(errno));
		return -1;
	}
	if (cfg->dscp >= 0 && sock_set_dscp(p->fd, cfg->dscp) < 0) {
		snprintf(err, errlen, "cannot set DSCP %d on the DNS probe socket: %s", cfg->dscp,
			 strerror(errno));
		return -1;
	}
	(void)sock_enable_rx_timestamps(p->fd); /* else user-space receive times */
	return 0;
}

/* Ring size: every query that can still be answered within the timeout keeps its slot. */
static size_t dns_probe_slots(const struct dns_probe_config *cfg)
{
	int64_t n = cfg->timeout_ns / cfg->interval_ns + 2;

	if (n < 4)
		n = 4;
	return n > DNS_PROBE_MAX_SLOTS ? DNS_PROBE_MAX_SLOTS : (size_t)n;
}

/* Expiry runs often enough that a lost sample is declared within ~10 % of the timeout. */
static struct timeval dns_probe_expire_period(const struct dns_probe_config *cfg)
{
	int64_t ns = cfg->timeout_ns / 10;
	struct timeval tv;

	if (ns < NS_PER_MS)
		ns = NS_PER_MS;
	if (ns > 100 * NS_PER_MS)
		ns = 100 * NS_PER_MS;
	tv.tv_sec = 0;
	tv.tv_usec = (suseconds_t)(ns / 1000);
	return tv;
}

struct dns_probe *dns_probe_start(struct event_base *base, const struct dns_probe_config *cfg,
				  struct probe_series *out, char *err, size_t errlen)
{
	struct dns_probe *p = NULL;
	struct timeval now = { 0, 0 }, period;

	if (dns_probe_check_config(cfg, err, errlen) < 0)
		goto fail;
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	p->cfg = *cfg;
	p->pb.sched.interval_ns = cfg->interval_ns;
	if (p->cfg.qtype == 0)
		p->cfg.qtype = DNS_TYPE_A;
	p->fd = -1;
	p->nslots = dns_probe_slots(cfg);
	p->slot = calloc(p->nslots, sizeof(*p->slot));
	if (p->slot == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (dns_probe_socket(p, err, errlen) < 0)
		goto fail;
	period = dns_probe_expire_period(cfg);
	p->pb.send_ev = evtimer_new(base, dns_probe_send_callback, p);
	p->recv_ev = event_new(base, p->fd, EV_READ | EV_PERSIST, dns_probe_recv_callback, p);
	p->expire_ev = event_new(base, -1, EV_PERSIST, dns_probe_expire_callback, p);
	if (p->pb.send_ev == NULL || p->recv_ev == NULL || p->expire_ev == NULL ||
	    event_add(p->recv_ev, NULL) < 0 || event_add(p->expire_ev, &period) < 0 ||
	    event_add(p->pb.send_ev, &now) < 0) {
		snprintf(err, errlen, "cannot create the DNS probe's events");
		goto fail;
	}
	p->out = out;
	snprintf(out->method, sizeof(out->method), "udp");
	if (out->target[0] == '\0')
		sock_addr_str((const struct sockaddr *)&cfg->server, out->target, sizeof(out->target));
	out->available = 1;
	return p;
fail:
	out->available = 0;
	series_note(out, "%s", err);
	dns_probe_destroy(p);
	return NULL;
}

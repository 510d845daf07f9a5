/* sock: socket options, address helpers and the timestamped recvmsg. */
#include "common/sock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/tcp.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/fileio.h"

int sock_set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -1;
	return fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int sock_set_nodelay(int fd)
{
	int one = 1;

	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int sock_set_notsent_lowat(int fd, int bytes)
{
	return setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &bytes, sizeof(bytes));
}

int sock_set_abortive_close(int fd)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	return setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}

int sock_set_cc(int fd, const char *name)
{
	return setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, (socklen_t)strlen(name));
}

int sock_cc_listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	if (n == 0)
		return 0;
	for (const char *p = list; *p;) {
		size_t w;

		p += strspn(p, " \t\n");
		w = strcspn(p, " \t\n");
		if (w == n && memcmp(p, name, n) == 0)
			return 1;
		p += w;
	}
	return 0;
}

int sock_cc_available(const char *name)
{
	char list[4096 + 1]; /* the kernel's list is one line of names of at most 15 bytes */
	int fd = open("/proc/sys/net/ipv4/tcp_available_congestion_control", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? fileio_read_bounded(fd, list, sizeof(list) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n < 0)
		return 0;
	list[n] = '\0';
	return sock_cc_listed(list, name);
}

int sock_get_cc(int fd, char *buf, size_t len)
{
	char tmp[32] = { 0 };
	socklen_t tl = sizeof(tmp) - 1;

	if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, tmp, &tl) < 0)
		return -1;
	snprintf(buf, len, "%s", tmp);
	return 0;
}

int sock_tcp_info(int fd, struct sock_tcp_stats *st)
{
	struct tcp_info ti;
	socklen_t l = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	memset(st, 0, sizeof(*st));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &l) < 0)
		return -1;
	st->snd_mss = ti.tcpi_snd_mss;
	st->rcv_mss = ti.tcpi_rcv_mss;
	st->rtt_us = ti.tcpi_rtt;
	st->min_rtt_us = ti.tcpi_min_rtt;
	st->rcv_rtt_us = ti.tcpi_rcv_rtt;
	st->snd_cwnd = ti.tcpi_snd_cwnd;
	st->total_retrans = ti.tcpi_total_retrans;
	st->timestamps = (ti.tcpi_options & TCPI_OPT_TIMESTAMPS) != 0;
	st->ecn = (ti.tcpi_options & TCPI_OPT_ECN) != 0;
	/* An older kernel fills a shorter struct: the field is known only when it was written. */
	st->delivered_ce_known = l >= offsetof(struct tcp_info, tcpi_delivered_ce) +
					      sizeof(ti.tcpi_delivered_ce);
	st->delivered_ce = st->delivered_ce_known ? ti.tcpi_delivered_ce : 0;
	/* tcpi_delivered came with tcpi_delivered_ce; it counts segments, a bulk flow's all of
	 * one MSS. */
	st->delivered_bytes = st->delivered_ce_known ? (uint64_t)ti.tcpi_delivered * ti.tcpi_snd_mss : 0;
	st->delivery_rate = ti.tcpi_delivery_rate;
	st->bytes_acked = ti.tcpi_bytes_acked;
	st->busy_us = ti.tcpi_busy_time;
	st->rwnd_limited_us = ti.tcpi_rwnd_limited;
	st->sndbuf_limited_us = ti.tcpi_sndbuf_limited;
	st->bytes_known = l >= offsetof(struct tcp_info, tcpi_bytes_sent) + sizeof(ti.tcpi_bytes_sent);
	st->bytes_sent = st->bytes_known ? ti.tcpi_bytes_sent : 0;
	st->bytes_received = ti.tcpi_bytes_received;
	st->segs_out = ti.tcpi_segs_out;
	st->segs_in = ti.tcpi_segs_in;
	return 0;
}

void sock_tcp_totals_add_stats(const struct sock_tcp_stats *st, struct tcp_totals *t)
{
	t->retrans += st->total_retrans;
	t->busy_us += st->busy_us;
	t->rwnd_limited_us += st->rwnd_limited_us;
	t->sndbuf_limited_us += st->sndbuf_limited_us;
	t->delivered_bytes += st->delivered_bytes;
}

void sock_tcp_totals_add(int fd, struct tcp_totals *t)
{
	struct sock_tcp_stats st;

	if (sock_tcp_info(fd, &st) == 0)
		sock_tcp_totals_add_stats(&st, t);
}

int sock_tune_notsent_lowat(int fd)
{
	struct sock_tcp_stats ti;
	uint64_t lowat;

	if (sock_tcp_info(fd, &ti) < 0)
		return -1;
	lowat = ti.delivery_rate * 5 / 1000; /* bytes/s × 5 ms */
	if (lowat < 16 * 1024)
		lowat = 16 * 1024;
	if (lowat > 64 * 1024 * 1024)
		lowat = 64 * 1024 * 1024;
	return sock_set_notsent_lowat(fd, (int)lowat);
}

int sock_set_rcvbuf(int fd, int bytes)
{
	int got;
	socklen_t len = sizeof(got);

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)) < 0 &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes)) < 0)
		return -1;
	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &len) < 0)
		return -1;
	return got;
}

enum ts_source sock_enable_rx_timestamps(int fd)
{
	int one = 1;

	if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) == 0)
		return TS_SRC_KERNEL;
	return TS_SRC_USER;
}

/* The receive time of a datagram from its SCM_TIMESTAMPNS cmsg, when the kernel gave one
 * (the user-space time otherwise stays). */
static void sock_msg_rx_time(struct msghdr *mh, int64_t *rx_mono, enum ts_source *src)
{
	if (mh->msg_flags & MSG_CTRUNC)
		return; /* keep the datagram, fall back to the user-space time */
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		struct timespec ts;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS ||
		    c->cmsg_len != CMSG_LEN(sizeof(ts)))
			continue;
		memcpy(&ts, CMSG_DATA(c), sizeof(ts));
		if (ts.tv_sec == 0 && ts.tv_nsec == 0)
			continue;
		*rx_mono = clock_real_to_mono((int64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec);
		*src = TS_SRC_KERNEL;
	}
}

ssize_t sock_recv_ts(int fd, void *buf, size_t cap, struct sockaddr_storage *peer,
		     socklen_t *peerlen, int64_t *rx_mono, enum ts_source *src)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct timespec))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = cap };
	struct msghdr mh = {
		.msg_name = peer,
		.msg_namelen = sizeof(*peer),
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT);

	if (n < 0)
		return -1;
	*rx_mono = clock_mono_ns();
	*src = TS_SRC_USER;
	*peerlen = mh.msg_namelen;
	if (mh.msg_flags & MSG_TRUNC) {
		errno = EMSGSIZE;
		return -1;
	}
	sock_msg_rx_time(&mh, rx_mono, src);
	return n;
}

int sock_recv_ts_batch(int fd, struct sock_dgram *d, int n)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct timespec))];
		struct cmsghdr align;
	} ctl[SOCK_BATCH_MAX];
	struct mmsghdr mm[SOCK_BATCH_MAX];
	struct iovec iov[SOCK_BATCH_MAX];
	int64_t now;
	int got;

	if (n > SOCK_BATCH_MAX)
		n = SOCK_BATCH_MAX;
	for (int i = 0; i < n; i++) {
		iov[i] = (struct iovec){ .iov_base = d[i].buf, .iov_len = d[i].cap };
		mm[i] = (struct mmsghdr){ .msg_hdr = {
			.msg_name = &d[i].peer,
			.msg_namelen = sizeof(d[i].peer),
			.msg_iov = &iov[i],
			.msg_iovlen = 1,
			.msg_control = ctl[i].buf,
			.msg_controllen = sizeof(ctl[i].buf),
		} };
	}
	got = recvmmsg(fd, mm, (unsigned)n, MSG_DONTWAIT, NULL);
	if (got <= 0)
		return got < 0 ? -1 : (errno = EAGAIN, -1);
	now = clock_mono_ns();
	for (int i = 0; i < got; i++) {
		d[i].len = mm[i].msg_len;
		d[i].peerlen = mm[i].msg_hdr.msg_namelen;
		d[i].rx_mono = now;
		d[i].src = TS_SRC_USER;
		d[i].truncated = (mm[i].msg_hdr.msg_flags & MSG_TRUNC) != 0;
		sock_msg_rx_time(&mm[i].msg_hdr, &d[i].rx_mono, &d[i].src);
	}
	return got;
}

int sock_send_batch(int fd, const struct sock_dgram *d, int n)
{
	struct mmsghdr mm[SOCK_BATCH_MAX];
	struct iovec iov[SOCK_BATCH_MAX];
	int sent = 0;

	if (n > SOCK_BATCH_MAX)
		n = SOCK_BATCH_MAX;
	for (int i = 0; i < n; i++) {
		iov[i] = (struct iovec){ .iov_base = d[i].buf, .iov_len = d[i].len };
		mm[i] = (struct mmsghdr){ .msg_hdr = {
			.msg_name = (void *)&d[i].peer,
			.msg_namelen = d[i].peerlen,
			.msg_iov = &iov[i],
			.msg_iovlen = 1,
		} };
	}
	/* sendmmsg stops at the first datagram that fails: skip it and go on with the rest. */
	for (int i = 0; i < n;) {
		int r = sendmmsg(fd, mm + i, (unsigned)(n - i), MSG_DONTWAIT);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			i++;
			continue;
		}
		sent += r;
		i += r;
	}
	return sent;
}

int sock_resolve_all(const char *host, uint16_t port, int socktype, int family,
		     struct sockaddr_storage *out, socklen_t *lens, int max, char *err,
		     size_t errlen)
{
	struct addrinfo hints, *res = NULL;
	char portstr[8];
	int rc, n = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = family;
	hints.ai_socktype = socktype;
	hints.ai_flags = host ? AI_ADDRCONFIG : AI_PASSIVE;
	snprintf(portstr, sizeof(portstr), "%u", port);
	rc = getaddrinfo(host, portstr, &hints, &res);
	if (rc == EAI_NONAME || rc == EAI_ADDRFAMILY || rc == EAI_NODATA) {
		hints.ai_flags &= ~AI_ADDRCONFIG; /* literal addresses of a family not yet configured */
		rc = getaddrinfo(host, portstr, &hints, &res);
	}
	if (rc != 0) {
		snprintf(err, errlen, "cannot resolve %s%s: %s", host ? host : "*",
			 family == AF_INET ? " (IPv4 only)" : family == AF_INET6 ? " (IPv6 only)" : "",
			 gai_strerror(rc));
		return -1;
	}
	for (const struct addrinfo *a = res; a && n < max; a = a->ai_next) {
		if (a->ai_addrlen > sizeof(out[n]))
			continue;
		memcpy(&out[n], a->ai_addr, a->ai_addrlen);
		lens[n++] = a->ai_addrlen;
	}
	freeaddrinfo(res);
	if (n == 0)
		snprintf(err, errlen, "cannot resolve %s: no usable address", host ? host : "*");
	return n > 0 ? n : -1;
}

int sock_resolve(const char *host, uint16_t port, int socktype, struct sockaddr_storage *out,
		 socklen_t *outlen, char *err, size_t errlen)
{
	return sock_resolve_all(host, port, socktype, AF_UNSPEC, out, outlen, 1, err, errlen) < 0
		       ? -1 : 0;
}

int sock_parse_ip(const char *s, struct sockaddr_storage *out)
{
	struct addrinfo hints, *res = NULL;

	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = AI_NUMERICHOST;
	hints.ai_socktype = SOCK_DGRAM;
	if (getaddrinfo(s, NULL, &hints, &res) != 0 || res == NULL)
		return -1;
	memset(out, 0, sizeof(*out));
	memcpy(out, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

int sock_bind_local(int fd, const struct sockaddr_storage *local)
{
	socklen_t len;

	if (local == NULL || local->ss_family == AF_UNSPEC)
		return 0;
	len = local->ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	return bind(fd, (const struct sockaddr *)local, len);
}

int sock_connect_start(const struct sockaddr_storage *sa, socklen_t len)
{
	return sock_connect_start_from(sa, len, NULL);
}

int sock_connect_start_from(const struct sockaddr_storage *sa, socklen_t len,
			    const struct sockaddr_storage *local)
{
	int fd = socket(sa->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (sock_bind_local(fd, local) < 0 ||
	    (connect(fd, (const struct sockaddr *)sa, len) < 0 && errno != EINPROGRESS)) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int sock_connect_result(int fd)
{
	int soerr = 0;
	socklen_t sl = sizeof(soerr);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
		return -1;
	if (soerr != 0) {
		errno = soerr;
		return -1;
	}
	return 0;
}

int sock_connect_tcp(const struct sockaddr_storage *sa, socklen_t len, int timeout_ms, char *err,
		     size_t errlen)
{
	char addr[SOCK_ADDRSTRLEN];
	int fd = sock_connect_start(sa, len);
	struct pollfd pfd;

	sock_addr_str((const struct sockaddr *)sa, addr, sizeof(addr));
	if (fd < 0) {
		snprintf(err, errlen, "cannot connect to %s: %s", addr, strerror(errno));
		return -1;
	}
	pfd.fd = fd;
	pfd.events = POLLOUT;
	for (;;) {
		int rc = poll(&pfd, 1, timeout_ms);

		if (rc < 0 && errno == EINTR)
			continue;
		if (rc == 0) {
			snprintf(err, errlen, "cannot connect to %s: timed out after %d ms", addr,
				 timeout_ms);
			goto fail;
		}
		if (rc < 0) {
			snprintf(err, errlen, "poll: %s", strerror(errno));
			goto fail;
		}
		break;
	}
	if (sock_connect_result(fd) < 0) {
		snprintf(err, errlen, "cannot connect to %s: %s", addr, strerror(errno));
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

/* Creates and binds a socket; a wildcard bind is dual-stack so IPv4 and IPv6 share one port. */
static int sock_bind_any(const char *bind_addr, uint16_t port, int type, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd, one = 1, zero = 0;

	if (bind_addr == NULL) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		memset(&ss, 0, sizeof(ss));
		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_any;
		s6->sin6_port = htons(port);
		sl = sizeof(*s6);
	} else if (sock_resolve(bind_addr, port, type, &ss, &sl, err, errlen) < 0) {
		return -1;
	}
	fd = socket(ss.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 && bind_addr == NULL && errno == EAFNOSUPPORT) {
		/* No IPv6 in this kernel or namespace: fall back to IPv4 only. */
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		memset(&ss, 0, sizeof(ss));
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		sl = sizeof(*s4);
		fd = socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	}
	if (fd < 0) {
		snprintf(err, errlen, "cannot create socket: %s", strerror(errno));
		return -1;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6 && bind_addr == NULL)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0) {
		snprintf(err, errlen, "cannot bind %s port %u: %s", bind_addr ? bind_addr : "*", port,
			 strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int sock_listen_tcp(const char *bind_addr, uint16_t port, char *err, size_t errlen)
{
	int fd = sock_bind_any(bind_addr, port, SOCK_STREAM, err, errlen);

	if (fd >= 0 && listen(fd, 128) < 0) {
		snprintf(err, errlen, "cannot listen: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int sock_bind_udp(const char *bind_addr, uint16_t port, char *err, size_t errlen)
{
	return sock_bind_any(bind_addr, port, SOCK_DGRAM, err, errlen);
}

/* Returns a pointer to the IPv4 address inside sa (plain or IPv4-mapped), else NULL. */
static const struct in_addr *sock_v4(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return &((const struct sockaddr_in *)sa)->sin_addr;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(a6))
			return (const struct in_addr *)&a6->s6_addr[12];
	}
	return NULL;
}

void sock_ip_str(const struct sockaddr *sa, char *buf, size_t len)
{
	const struct in_addr *v4 = sock_v4(sa);
	const char *ok = NULL;

	if (v4)
		ok = inet_ntop(AF_INET, v4, buf, (socklen_t)len);
	else if (sa->sa_family == AF_INET6)
		ok = inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buf,
			       (socklen_t)len);
	if (ok == NULL)
		snprintf(buf, len, "?");
}

void sock_addr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];

	sock_ip_str(sa, ip, sizeof(ip));
	if (sock_v4(sa))
		snprintf(buf, len, "%s:%u", ip, sock_port(sa));
	else if (sa->sa_family == AF_INET6)
		snprintf(buf, len, "[%s]:%u", ip, sock_port(sa));
	else
		snprintf(buf, len, "?");
}

int sock_same_ip(const struct sockaddr *a, const struct sockaddr *b)
{
	const struct in_addr *a4 = sock_v4(a), *b4 = sock_v4(b);

	if (a4 || b4)
		return a4 && b4 && a4->s_addr == b4->s_addr;
	if (a->sa_family != AF_INET6 || b->sa_family != AF_INET6)
		return 0;
	return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		      &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr)) == 0;
}

int sock_same_client(const struct sockaddr *a, const struct sockaddr *b)
{
	if (sock_v4(a) || sock_v4(b) || a->sa_family != AF_INET6 || b->sa_family != AF_INET6)
		return sock_same_ip(a, b);
	return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		      &((const struct sockaddr_in6 *)b)->sin6_addr, 8) == 0;
}

uint16_t sock_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)sa)->sin_port);
	if (sa->sa_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	return 0;
}

int sock_set_dscp(int fd, int dscp)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int tos;

	if (dscp < 0)
		return 0;
	if (dscp > 63) {
		errno = EINVAL;
		return -1;
	}
	tos = dscp << 2; /* DSCP is the upper six bits; ECN bits stay 0 */
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -1;
	if (ss.ss_family == AF_INET6)
		return setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof(tos));
	return setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos));
}

uint64_t sock_pacing_share(uint64_t max_bps, int nflows)
{
	uint64_t share;

	if (max_bps == 0 || nflows <= 0)
		return 0;
	share = max_bps / 8 / (uint64_t)nflows;
	return share > 0 ? share : 1; /* 0 would mean "no cap" */
}

int sock_set_pacing(int fd, uint64_t bytes_per_s)
{
	/* ~0U is the kernel's "no cap"; the 32-bit form works on every kernel. */
	uint32_t v = bytes_per_s == 0 ? UINT32_MAX
		     : bytes_per_s >= UINT32_MAX ? UINT32_MAX - 1
						 : (uint32_t)bytes_per_s;

	return setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &v, sizeof(v));
}

int sock_wait(int fd, short events, int64_t deadline_ns)
{
	struct pollfd pfd = { .fd = fd, .events = events };

	for (;;) {
		int64_t left = (deadline_ns - clock_mono_ns()) / NS_PER_MS;
		int n;

		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		n = poll(&pfd, 1, left > INT_MAX ? INT_MAX : (int)left);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -1;
	}
}

int sock_send_all(int fd, const void *buf, size_t len, int64_t deadline_ns)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
		} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
			return -1;
		} else if (sock_wait(fd, POLLOUT, deadline_ns) < 0) {
			return -1;
		}
	}
	return 0;
}

int sock_recv_all(int fd, void *buf, size_t len, int64_t deadline_ns)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = recv(fd, p, len, 0);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
		} else if (n == 0) {
			errno = ECONNRESET;
			return -1;
		} else if (errno != EAGAIN && errno != EINTR) {
			return -1;
		} else if (sock_wait(fd, POLLIN, deadline_ns) < 0) {
			return -1;
		}
	}
	return 0;
}

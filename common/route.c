/* route: one RTM_GETROUTE round trip over rtnetlink, and the pure parser of its answer. */
#include "common/route.h"

#include <errno.h>
#include <limits.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/sock.h"

#define ROUTE_RECV_TRIES 8    /* other messages before ours are unlikely; never loop forever */
#define ROUTE_TIMEOUT_SEC 2

/* Copies an address attribute of the route's family into ss; -1 if its length is wrong. */
static int route_addr(int family, const void *data, size_t len, struct sockaddr_storage *ss,
		      socklen_t *sslen)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET && len == sizeof(struct in_addr)) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, data, len);
		if (sslen)
			*sslen = sizeof(*sin);
		return 0;
	}
	if (family == AF_INET6 && len == sizeof(struct in6_addr)) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, data, len);
		if (sslen)
			*sslen = sizeof(*sin6);
		return 0;
	}
	return -1;
}

/* RTA_VIA: a gateway of another family (IPv4 routes via an IPv6 next hop). */
static int route_via(const void *data, size_t len, struct route_info *out)
{
	uint16_t fam;

	if (len < sizeof(fam))
		return -1;
	memcpy(&fam, data, sizeof(fam));
	if (route_addr(fam, (const uint8_t *)data + sizeof(fam), len - sizeof(fam), &out->gateway,
		       &out->gateway_len) < 0)
		return -1;
	out->has_gateway = 1;
	return 0;
}

/* One attribute of the route; -1 if an attribute we use has the wrong size. */
static int route_attr(int family, const struct rtattr *rta, struct route_info *out)
{
	const void *data = RTA_DATA(rta);
	size_t len = RTA_PAYLOAD(rta);

	switch (rta->rta_type) {
	case RTA_GATEWAY:
		if (route_addr(family, data, len, &out->gateway, &out->gateway_len) < 0)
			return -1;
		out->has_gateway = 1;
		return 0;
	case RTA_VIA:
		return route_via(data, len, out);
	case RTA_OIF:
		if (len != sizeof(int))
			return -1;
		memcpy(&out->ifindex, data, sizeof(int));
		return 0;
	case RTA_PREFSRC:
		return route_addr(family, data, len, &out->src, NULL);
	default:
		return 0;
	}
}

/* Route types that mean "no way there", as IPv6 reports them (IPv4 answers with an error). */
static const char *route_type_refusal(unsigned char type)
{
	switch (type) {
	case RTN_UNREACHABLE:
		return "the route is unreachable";
	case RTN_BLACKHOLE:
		return "the route is a blackhole";
	case RTN_PROHIBIT:
		return "the route is prohibited";
	case RTN_THROW:
		return "the route lookup was thrown out of its table";
	default:
		return NULL;
	}
}

/* The RTM_NEWROUTE answer: its header, then every attribute within its own length. */
static int route_parse_newroute(const struct nlmsghdr *nh, int family, struct route_info *out,
				char *err, size_t errlen)
{
	const struct rtmsg *rt;
	const struct rtattr *rta;
	const char *refusal;
	int alen;

	if (nh->nlmsg_len < NLMSG_SPACE(sizeof(struct rtmsg))) {
		snprintf(err, errlen, "the kernel's route answer is truncated");
		return -1;
	}
	rt = NLMSG_DATA(nh);
	if (rt->rtm_family != family) {
		snprintf(err, errlen, "the kernel's route answer is for another address family");
		return -1;
	}
	refusal = route_type_refusal(rt->rtm_type);
	if (refusal) {
		snprintf(err, errlen, "%s", refusal);
		return -1;
	}
	alen = (int)RTM_PAYLOAD(nh);
	for (rta = RTM_RTA(rt); RTA_OK(rta, alen); rta = RTA_NEXT(rta, alen)) {
		if (route_attr(family, rta, out) < 0) {
			snprintf(err, errlen, "the kernel's route answer has a malformed attribute");
			return -1;
		}
	}
	/* A link-local gateway means nothing without its interface. */
	if (out->has_gateway && out->gateway.ss_family == AF_INET6) {
		struct sockaddr_in6 *gw = (struct sockaddr_in6 *)&out->gateway;

		if (IN6_IS_ADDR_LINKLOCAL(&gw->sin6_addr) && out->ifindex > 0)
			gw->sin6_scope_id = (uint32_t)out->ifindex;
	}
	return 1;
}

static int route_parse_error(const struct nlmsghdr *nh, char *err, size_t errlen)
{
	const struct nlmsgerr *e;

	if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr))) {
		snprintf(err, errlen, "the kernel's route error is truncated");
		return -1;
	}
	e = NLMSG_DATA(nh);
	if (e->error == 0)
		snprintf(err, errlen, "the kernel acknowledged the request without a route");
	else
		snprintf(err, errlen, "%s", strerror(e->error == INT_MIN ? EINVAL : -e->error));
	return -1;
}

/* NLMSG_OK with its signedness spelled out (the macro compares a __u32 with an int). */
static int route_msg_ok(const struct nlmsghdr *nh, int left)
{
	return left >= (int)sizeof(*nh) && nh->nlmsg_len >= sizeof(*nh) &&
	       nh->nlmsg_len <= (unsigned int)left;
}

int route_parse_reply(const void *buf, size_t len, uint32_t seq, int family,
		      struct route_info *out, char *err, size_t errlen)
{
	const struct nlmsghdr *nh;
	int left;

	if (len > INT_MAX) {
		snprintf(err, errlen, "the kernel's route answer is too long");
		return -1;
	}
	memset(out, 0, sizeof(*out));
	left = (int)len;
	for (nh = buf; route_msg_ok(nh, left); nh = NLMSG_NEXT(nh, left)) {
		if (nh->nlmsg_seq != seq)
			continue; /* not an answer to this request */
		switch (nh->nlmsg_type) {
		case RTM_NEWROUTE:
			return route_parse_newroute(nh, family, out, err, errlen);
		case NLMSG_ERROR:
			return route_parse_error(nh, err, errlen);
		case NLMSG_DONE:
			snprintf(err, errlen, "the kernel returned no route");
			return -1;
		default:
			break;
		}
	}
	return 0;
}

/* The destination as a plain IPv4 or IPv6 address (IPv4-mapped IPv6 becomes IPv4). */
static int route_normalize(const struct sockaddr_storage *dst, struct sockaddr_storage *out)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)dst;

	memset(out, 0, sizeof(*out));
	if (dst->ss_family == AF_INET) {
		memcpy(out, dst, sizeof(struct sockaddr_in));
		return 0;
	}
	if (dst->ss_family != AF_INET6)
		return -1;
	if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
		struct sockaddr_in *sin = (struct sockaddr_in *)out;

		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, &sin6->sin6_addr.s6_addr[12], sizeof(sin->sin_addr));
		return 0;
	}
	memcpy(out, dst, sizeof(*sin6));
	return 0;
}

/* Appends one attribute to the request (the buffer is sized for the two we send). */
static void route_put_attr(struct nlmsghdr *nh, unsigned short type, const void *data,
			   size_t len)
{
	struct rtattr *rta = (struct rtattr *)((char *)nh + NLMSG_ALIGN(nh->nlmsg_len));

	rta->rta_type = type;
	rta->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(rta), data, len);
	nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

static int route_send_request(int fd, const struct sockaddr_storage *dst, uint32_t seq)
{
	struct {
		struct nlmsghdr nh;
		struct rtmsg rt;
		char attrs[64];
	} req;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };

	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.rt));
	req.nh.nlmsg_type = RTM_GETROUTE;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.nh.nlmsg_seq = seq;
	req.rt.rtm_family = (unsigned char)dst->ss_family;
	if (dst->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)dst;

		req.rt.rtm_dst_len = 32;
		route_put_attr(&req.nh, RTA_DST, &sin->sin_addr, sizeof(sin->sin_addr));
	} else {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)dst;
		int oif = (int)sin6->sin6_scope_id;

		req.rt.rtm_dst_len = 128;
		route_put_attr(&req.nh, RTA_DST, &sin6->sin6_addr, sizeof(sin6->sin6_addr));
		if (oif > 0) /* a scoped (link-local) destination: only that interface reaches it */
			route_put_attr(&req.nh, RTA_OIF, &oif, sizeof(oif));
	}
	if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -1;
	return 0;
}

/* Reads answers until the one for seq; 1, or -1 with err. */
static int route_recv_answer(int fd, uint32_t seq, int family, struct route_info *out,
			     char *err, size_t errlen)
{
	union {
		struct nlmsghdr align;
		char buf[8192];
	} u;

	for (int i = 0; i < ROUTE_RECV_TRIES; i++) {
		struct sockaddr_nl from;
		struct iovec iov = { .iov_base = u.buf, .iov_len = sizeof(u.buf) };
		struct msghdr mh = { .msg_name = &from, .msg_namelen = sizeof(from),
				     .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n = recvmsg(fd, &mh, 0);
		int rc;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "no answer from the kernel's routing table: %s",
				 errno == EAGAIN ? "timed out" : strerror(errno));
			return -1;
		}
		if (mh.msg_flags & MSG_TRUNC) {
			snprintf(err, errlen, "the kernel's route answer did not fit the buffer");
			return -1;
		}
		if (mh.msg_namelen != sizeof(from) || from.nl_pid != 0)
			continue; /* only the kernel answers route requests */
		rc = route_parse_reply(u.buf, (size_t)n, seq, family, out, err, errlen);
		if (rc != 0)
			return rc;
	}
	snprintf(err, errlen, "the kernel never answered the route request");
	return -1;
}

int route_lookup(const struct sockaddr_storage *dst, struct route_info *out, char *err,
		 size_t errlen)
{
	struct sockaddr_storage d;
	struct timeval tv = { .tv_sec = ROUTE_TIMEOUT_SEC };
	char addr[SOCK_ADDRSTRLEN], why[160];
	/* Any number works on a private socket; the clock keeps successive calls apart. */
	uint32_t seq = (uint32_t)clock_mono_ns();
	int fd, rc;

	memset(out, 0, sizeof(*out));
	if (route_normalize(dst, &d) < 0) {
		snprintf(err, errlen, "cannot look up a route for a non-IP address");
		return -1;
	}
	sock_addr_str((const struct sockaddr *)&d, addr, sizeof(addr));
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open a routing socket to find the route to %s: %s",
			 addr, strerror(errno));
		return -1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    route_send_request(fd, &d, seq) < 0) {
		snprintf(err, errlen, "cannot ask the kernel for the route to %s: %s", addr,
			 strerror(errno));
		close(fd);
		return -1;
	}
	rc = route_recv_answer(fd, seq, d.ss_family, out, why, sizeof(why));
	close(fd);
	if (rc < 0) {
		snprintf(err, errlen, "no route to %s: %s", addr, why);
		return -1;
	}
	if (out->ifindex > 0 && if_indextoname((unsigned)out->ifindex, out->ifname) == NULL)
		out->ifname[0] = '\0'; /* the interface vanished meanwhile: keep its index */
	return 0;
}

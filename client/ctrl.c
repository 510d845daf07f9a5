/* ctrl: client control protocol helpers. */
#include "client/ctrl.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/dns.h"

/* Writes all of buf before the deadline (fd is non-blocking). */
static int ctrl_write_all(int fd, const uint8_t *buf, size_t len, int64_t deadline)
{
	while (len > 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
		int64_t left;

		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		left = (deadline - clock_mono_ns()) / NS_PER_MS;
		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
	}
	return 0;
}

/* Reads exactly len bytes before the deadline. */
static int ctrl_read_all(int fd, uint8_t *buf, size_t len, int64_t deadline)
{
	while (len > 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n = recv(fd, buf, len, 0);
		int64_t left;

		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0) {
			errno = ECONNRESET;
			return -1;
		}
		if (errno != EAGAIN && errno != EINTR)
			return -1;
		left = (deadline - clock_mono_ns()) / NS_PER_MS;
		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
	}
	return 0;
}

static json_object *ctrl_read_msg(int fd, int64_t deadline, char *err, size_t errlen)
{
	uint8_t hdr[WIRE_CTRL_HDR], *body;
	size_t len;
	json_object *msg;

	if (ctrl_read_all(fd, hdr, sizeof(hdr), deadline) < 0) {
		snprintf(err, errlen, "no answer from the server: %s",
			 errno == ETIMEDOUT ? "timed out" : strerror(errno));
		return NULL;
	}
	if (wire_frame_peek(hdr, sizeof(hdr), &len) != WIRE_FRAME_OK) {
		snprintf(err, errlen, "the server does not speak the bloatmeter protocol");
		return NULL;
	}
	body = malloc(len);
	if (body == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (ctrl_read_all(fd, body, len, deadline) < 0) {
		snprintf(err, errlen, "the server's answer was cut short: %s", strerror(errno));
		free(body);
		return NULL;
	}
	msg = wire_ctrl_parse(body, len, err, errlen);
	free(body);
	return msg;
}

static void ctrl_copy_str(json_object *msg, const char *key, char *dst, size_t len)
{
	const char *s;

	if (wire_get_str(msg, key, len - 1, &s) == 0)
		snprintf(dst, len, "%s", s);
}

/* The DNS responder fields are optional (older servers lack them): absent or unusable means
 * no DNS probe against this server, never a failed test. */
static void ctrl_parse_welcome_dns(json_object *msg, struct ctrl_welcome *w)
{
	struct dns_zone z;
	int64_t port;

	ctrl_copy_str(msg, "dns_zone", w->dns_zone, sizeof(w->dns_zone));
	if (wire_get_int(msg, "dns_port", 1, 65535, &port) < 0 ||
	    dns_zone_init(&z, w->dns_zone) < 0) {
		w->dns_port = 0;
		w->dns_zone[0] = '\0';
		return;
	}
	w->dns_port = (uint16_t)port;
}

static int ctrl_parse_welcome(json_object *msg, struct ctrl_welcome *w, char *err, size_t errlen)
{
	const char *tok;
	int64_t port, flows;

	memset(w, 0, sizeof(*w));
	if (wire_get_str(msg, "token", 64, &tok) < 0 || wire_token_from_hex(tok, w->token) < 0 ||
	    wire_get_int(msg, "udp_port", 1, 65535, &port) < 0 ||
	    wire_get_int(msg, "max_flows", 1, 1 << 20, &flows) < 0 ||
	    wire_get_bool(msg, "cc_ok", &w->cc_ok) < 0) {
		snprintf(err, errlen, "the server's welcome is malformed");
		return -1;
	}
	w->udp_port = (uint16_t)port;
	w->max_flows = (int)flows;
	ctrl_copy_str(msg, "cc_used", w->cc_used, sizeof(w->cc_used));
	ctrl_copy_str(msg, "cc_error", w->cc_error, sizeof(w->cc_error));
	ctrl_copy_str(msg, "server_version", w->server_version, sizeof(w->server_version));
	ctrl_copy_str(msg, "udp_timestamps", w->udp_ts, sizeof(w->udp_ts));
	ctrl_parse_welcome_dns(msg, w);
	return 0;
}

int ctrl_handshake(int fd, const char *cc, int duration_s, int timeout_ms, struct ctrl_welcome *w,
		   char *err, size_t errlen)
{
	int64_t deadline = clock_mono_ns() + (int64_t)timeout_ms * NS_PER_MS;
	json_object *hello = wire_ctrl_new("hello"), *reply;
	const char *type, *reason;
	uint8_t *buf;
	size_t len;
	int64_t retry;
	int rc = -1;

	json_object_object_add(hello, "client_version", json_object_new_string(BM_VERSION));
	json_object_object_add(hello, "cc", json_object_new_string(cc));
	json_object_object_add(hello, "duration_s", json_object_new_int(duration_s));
	buf = wire_ctrl_encode(hello, &len);
	json_object_put(hello);
	if (buf == NULL || ctrl_write_all(fd, buf, len, deadline) < 0) {
		snprintf(err, errlen, "cannot send hello to the server: %s", strerror(errno));
		free(buf);
		return -1;
	}
	free(buf);
	reply = ctrl_read_msg(fd, deadline, err, errlen);
	if (reply == NULL)
		return -1;
	type = wire_ctrl_type(reply);
	if (strcmp(type, "welcome") == 0) {
		rc = ctrl_parse_welcome(reply, w, err, errlen);
	} else if (strcmp(type, "busy") == 0) {
		if (wire_get_int(reply, "retry_after_s", 0, 86400, &retry) < 0)
			retry = 60;
		snprintf(err, errlen, "the server is busy, retry after %lld s", (long long)retry);
	} else if (strcmp(type, "error") == 0 && wire_get_str(reply, "reason", 200, &reason) == 0) {
		snprintf(err, errlen, "the server refused the test: %s", reason);
	} else {
		snprintf(err, errlen, "unexpected answer from the server (%s)", type);
	}
	json_object_put(reply);
	return rc;
}

int ctrl_parse_stats(json_object *msg, struct ctrl_stats *st)
{
	int64_t t, up, down, udp, ccf;

	memset(st, 0, sizeof(*st));
	if (strcmp(wire_ctrl_type(msg), "stats") != 0 ||
	    wire_get_int(msg, "t_ns", 0, INT64_MAX, &t) < 0 ||
	    wire_get_int(msg, "up_rx_bytes", 0, INT64_MAX, &up) < 0 ||
	    wire_get_int(msg, "down_tx_bytes", 0, INT64_MAX, &down) < 0 ||
	    wire_get_int(msg, "udp_rx", 0, INT64_MAX, &udp) < 0 ||
	    wire_get_int(msg, "cc_failures", 0, INT64_MAX, &ccf) < 0)
		return -1;
	st->t_ns = t;
	st->up_rx_bytes = (uint64_t)up;
	st->down_tx_bytes = (uint64_t)down;
	st->udp_rx = (uint64_t)udp;
	st->cc_failures = ccf;
	/* Optional (older servers): the download flows' TCP_INFO totals. */
	if (wire_get_int(msg, "down_retrans", 0, INT64_MAX, &t) == 0)
		st->down.retrans = (uint64_t)t;
	if (wire_get_int(msg, "down_busy_us", 0, INT64_MAX, &t) == 0)
		st->down.busy_us = (uint64_t)t;
	if (wire_get_int(msg, "down_rwnd_limited_us", 0, INT64_MAX, &t) == 0)
		st->down.rwnd_limited_us = (uint64_t)t;
	if (wire_get_int(msg, "down_sndbuf_limited_us", 0, INT64_MAX, &t) == 0)
		st->down.sndbuf_limited_us = (uint64_t)t;
	st->loop_cpu_ns = wire_get_int(msg, "loop_cpu_ns", 0, INT64_MAX, &t) == 0 ? t : -1;
	if (wire_get_bool(msg, "final", &st->final) < 0)
		st->final = 0;
	return 0;
}

json_object *ctrl_bye(void)
{
	return wire_ctrl_new("bye");
}

/* tcpconn: starts a new TCP connection per interval on an absolute schedule, each in its own
 * slot (at most max_outstanding), with one deadline for the whole exchange. Connections end
 * with a reset (SO_LINGER 0) so that neither end accumulates TIME_WAIT state. */
#include "probes/tcpconn.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/sock.h"
#include "probes/probebase.h"
#include "probes/schedule.h"

enum conn_state { CONN_FREE = 0, CONN_CONNECTING, CONN_WAITING };

struct tcpconn_conn {
	struct tcpconn_probe *p;
	enum conn_state state;
	int fd;
	struct event *ev;          /* reassigned to each connection's fd: write, then read */
	long idx;                  /* sample index in the series */
	uint32_t seq;
	int64_t start_ns;          /* right before connect() */
	int64_t deadline_ns;
	uint8_t resp[WIRE_CONNPROBE_RESP_LEN + 1]; /* one spare byte reveals a longer answer */
	size_t got;
};

struct tcpconn_probe {
	struct probe_base pb;      /* first: the runner's ops take the probe as its base */
	struct tcpconn_probe_config cfg;
	struct event_base *base;
	struct probe_series *out;
	struct tcpconn_conn *conn; /* cfg.max_outstanding slots */
	uint32_t next_seq;
	uint64_t attempts;         /* schedule slots that wanted a connection */
	uint64_t skipped_busy;     /* ... but every slot was still open */
	uint64_t local_fail;       /* ... but no socket could be opened here */
	int dscp_warned;
};

static void tcpconn_conn_callback(evutil_socket_t fd, short what, void *arg);

/* Time left until the connection's deadline, at least 1 µs so the event still fires. */
static struct timeval tcpconn_left(const struct tcpconn_conn *c)
{
	int64_t left = c->deadline_ns - clock_mono_ns();
	struct timeval tv;

	if (left < 1000)
		left = 1000;
	tv.tv_sec = (time_t)(left / NS_PER_SEC);
	tv.tv_usec = (suseconds_t)(left % NS_PER_SEC / 1000);
	return tv;
}

/* Ends the connection with a reset and frees its slot; the sample is completed first. */
static void tcpconn_finish(struct tcpconn_conn *c, enum sample_status st, int64_t rtt_ns)
{
	series_complete(c->p->out, c->idx, rtt_ns, st);
	event_del(c->ev);
	if (close(c->fd) < 0)
		log_debug("connect probe close: %s", strerror(errno));
	c->fd = -1;
	c->state = CONN_FREE;
}

/* Waits for fd to become readable or writable, or for the deadline. */
static void tcpconn_wait(struct tcpconn_conn *c, short what)
{
	struct timeval tv = tcpconn_left(c);

	if (event_assign(c->ev, c->p->base, c->fd, what, tcpconn_conn_callback, c) < 0 ||
	    event_add(c->ev, &tv) < 0) {
		log_warnx("cannot wait for a connect probe");
		tcpconn_finish(c, SAMPLE_LOST, 0);
	}
}

/* Connected: record the handshake time and send the request. */
static void tcpconn_connected(struct tcpconn_conn *c)
{
	struct tcpconn_probe *p = c->p;
	int64_t hs_us = (clock_mono_ns() - c->start_ns) / 1000;
	struct wire_connprobe_req req = { .version = WIRE_VERSION, .seq = c->seq };
	uint8_t buf[WIRE_CONNPROBE_REQ_LEN];

	p->out->s[c->idx].aux = (int32_t)(hs_us < INT32_MAX ? hs_us : INT32_MAX);
	memcpy(req.token, p->cfg.token, WIRE_TOKEN_LEN);
	wire_connprobe_req_encode(&req, buf);
	/* 32 bytes into a fresh socket's empty buffer: a short write means the peer is gone. */
	if (send(c->fd, buf, sizeof(buf), MSG_NOSIGNAL) != (ssize_t)sizeof(buf)) {
		tcpconn_finish(c, SAMPLE_ERROR, 0);
		return;
	}
	c->state = CONN_WAITING;
	tcpconn_wait(c, EV_READ);
}

/* Reads what has arrived of the answer; completes the sample once it is whole. */
static void tcpconn_read(struct tcpconn_conn *c)
{
	struct tcpconn_probe *p = c->p;
	struct sockaddr_storage peer;
	socklen_t plen;
	int64_t rx_ns;
	enum ts_source src;
	uint32_t seq;
	ssize_t n = sock_recv_ts(c->fd, c->resp + c->got, sizeof(c->resp) - c->got, &peer, &plen,
				 &rx_ns, &src);

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
		tcpconn_wait(c, EV_READ);
		return;
	}
	if (n <= 0) {
		/* Closed or reset without a whole answer: the server refused us. A partial
		 * answer is also malformed. */
		if (c->got > 0)
			p->out->bad_replies++;
		tcpconn_finish(c, SAMPLE_ERROR, 0);
		return;
	}
	c->got += (size_t)n;
	if (c->got < WIRE_CONNPROBE_RESP_LEN) {
		tcpconn_wait(c, EV_READ);
		return;
	}
	if (wire_connprobe_resp_decode(c->resp, c->got, &seq) < 0 || seq != c->seq) {
		p->out->bad_replies++;
		tcpconn_finish(c, SAMPLE_ERROR, 0);
		return;
	}
	tcpconn_finish(c, SAMPLE_OK, rx_ns - c->start_ns);
}

static void tcpconn_conn_callback(evutil_socket_t fd, short what, void *arg)
{
	struct tcpconn_conn *c = arg;

	if (what & EV_TIMEOUT) {
		tcpconn_finish(c, SAMPLE_LOST, 0);
		return;
	}
	if (c->state == CONN_CONNECTING) {
		if (sock_connect_result(c->fd) < 0)
			tcpconn_finish(c, SAMPLE_ERROR, 0); /* refused, reset, unreachable */
		else
			tcpconn_connected(c);
		return;
	}
	tcpconn_read(c);
}

/* Opens a socket with every option set before connect(), so the SYN already carries the DSCP
 * mark (sock_connect_start would connect before we could set it). Returns the fd with the
 * connect in progress or done, or -1 with errno; *start_ns is taken right before connect(). */
static int tcpconn_open(struct tcpconn_probe *p, int64_t *start_ns, int *connect_errno)
{
	int fd = socket(p->cfg.server.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	*connect_errno = 0;
	if (fd < 0)
		return -1;
	if (sock_set_nodelay(fd) < 0 || sock_set_abortive_close(fd) < 0 ||
	    sock_bind_local(fd, &p->cfg.local) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	if (p->cfg.dscp >= 0 && sock_set_dscp(fd, p->cfg.dscp) < 0 && !p->dscp_warned) {
		p->dscp_warned = 1;
		log_warn("cannot set DSCP %d on connect probes", p->cfg.dscp);
	}
	(void)sock_enable_rx_timestamps(fd); /* answers timed by the kernel where it can */
	*start_ns = clock_mono_ns();
	if (connect(fd, (const struct sockaddr *)&p->cfg.server, p->cfg.server_len) < 0 &&
	    errno != EINPROGRESS)
		*connect_errno = errno; /* an immediate refusal is still an answer */
	return fd;
}

static struct tcpconn_conn *tcpconn_free_slot(struct tcpconn_probe *p)
{
	for (int i = 0; i < p->cfg.max_outstanding; i++)
		if (p->conn[i].state == CONN_FREE)
			return &p->conn[i];
	return NULL;
}

/* Starts one connection in a free slot, or counts why it could not. */
static void tcpconn_launch(struct tcpconn_probe *p)
{
	struct tcpconn_conn *c = tcpconn_free_slot(p);
	int64_t start;
	int cerr;

	p->attempts++;
	if (c == NULL) {
		p->skipped_busy++;
		return;
	}
	c->fd = tcpconn_open(p, &start, &cerr);
	if (c->fd < 0) {
		p->local_fail++;
		log_debug("connect probe socket: %s", strerror(errno));
		return;
	}
	c->idx = series_push(p->out, start);
	if (c->idx < 0) {
		p->local_fail++;
		close(c->fd);
		c->fd = -1;
		return;
	}
	c->seq = p->next_seq++;
	c->start_ns = start;
	c->deadline_ns = start + p->cfg.timeout_ns;
	c->got = 0;
	c->state = CONN_CONNECTING;
	if (cerr != 0)
		tcpconn_finish(c, SAMPLE_ERROR, 0);
	else
		tcpconn_wait(c, EV_WRITE); /* writable once connected, or with the error */
}

/* One-shot timer re-armed for the next slot of the absolute schedule. */
static void tcpconn_send_callback(evutil_socket_t fd, short what, void *arg)
{
	struct tcpconn_probe *p = arg;

	if (p->pb.stopping)
		return;
	tcpconn_launch(p);
	if (schedule_rearm(&p->pb.sched, p->pb.send_ev) < 0)
		log_warnx("cannot schedule the next connect probe");
}

/* In the runner thread: no new connections; open ones finish during the grace period. */
static void tcpconn_stop_sending(void *arg)
{
	struct tcpconn_probe *p = arg;

	probe_base_stop(&p->pb);
	if (p->skipped_busy > 0)
		series_note(p->out, "%llu of %llu connection probes were not started because %d "
			    "connections were still waiting for an answer",
			    (unsigned long long)p->skipped_busy, (unsigned long long)p->attempts,
			    p->cfg.max_outstanding);
	else if (p->local_fail > 0)
		series_note(p->out, "%llu of %llu connection probes could not open a socket",
			    (unsigned long long)p->local_fail, (unsigned long long)p->attempts);
}

static void tcpconn_destroy(void *arg)
{
	struct tcpconn_probe *p = arg;

	if (p == NULL)
		return;
	for (int i = 0; p->conn && i < p->cfg.max_outstanding; i++) {
		struct tcpconn_conn *c = &p->conn[i];

		if (c->state != CONN_FREE) {
			event_del(c->ev);
			close(c->fd); /* its sample stays pending: series_close() makes it lost */
		}
		if (c->ev)
			event_free(c->ev);
	}
	probe_base_free(&p->pb);
	free(p->conn);
	free(p);
}

const struct probe_ops tcpconn_probe_ops = {
	.set_interval = probe_base_set_interval,
	.stop_sending = tcpconn_stop_sending,
	.destroy = tcpconn_destroy,
};

/* Applies the defaults and refuses values the schedule cannot work with. */
static int tcpconn_config(struct tcpconn_probe_config *cfg, char *err, size_t errlen)
{
	if (cfg->interval_ns <= 0)
		cfg->interval_ns = TCPCONN_DEFAULT_INTERVAL_NS;
	if (cfg->timeout_ns <= 0)
		cfg->timeout_ns = TCPCONN_DEFAULT_TIMEOUT_NS;
	if (cfg->max_outstanding <= 0)
		cfg->max_outstanding = TCPCONN_DEFAULT_MAX_OUTSTANDING;
	if (cfg->interval_ns < NS_PER_MS) {
		snprintf(err, errlen, "connect probe interval below 1 ms");
		return -1;
	}
	if (cfg->dscp > 63) {
		snprintf(err, errlen, "DSCP %d out of range (0-63)", cfg->dscp);
		return -1;
	}
	if (cfg->server.ss_family != AF_INET && cfg->server.ss_family != AF_INET6) {
		snprintf(err, errlen, "connect probe needs an IPv4 or IPv6 server address");
		return -1;
	}
	return 0;
}

static int tcpconn_alloc(struct tcpconn_probe *p)
{
	p->conn = calloc((size_t)p->cfg.max_outstanding, sizeof(*p->conn));
	p->pb.send_ev = evtimer_new(p->base, tcpconn_send_callback, p);
	if (p->conn == NULL || p->pb.send_ev == NULL)
		return -1;
	for (int i = 0; i < p->cfg.max_outstanding; i++) {
		p->conn[i].p = p;
		p->conn[i].fd = -1;
		/* Allocated once and reassigned per connection: no allocation on the probe path. */
		p->conn[i].ev = event_new(p->base, -1, 0, tcpconn_conn_callback, &p->conn[i]);
		if (p->conn[i].ev == NULL)
			return -1;
	}
	return 0;
}

struct tcpconn_probe *tcpconn_probe_start(struct event_base *base,
					  const struct tcpconn_probe_config *cfg,
					  struct probe_series *out, char *err, size_t errlen)
{
	struct tcpconn_probe *p = calloc(1, sizeof(*p));
	struct timeval now = { 0, 0 };

	snprintf(out->method, sizeof(out->method), "tcp");
	if (p == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	p->cfg = *cfg;
	p->base = base;
	p->out = out;
	if (tcpconn_config(&p->cfg, err, errlen) < 0)
		goto fail;
	p->pb.sched.interval_ns = p->cfg.interval_ns; /* after the defaults are applied */
	if (tcpconn_alloc(p) < 0) {
		snprintf(err, errlen, "cannot create connect probe events");
		goto fail;
	}
	if (event_add(p->pb.send_ev, &now) < 0) {
		snprintf(err, errlen, "cannot schedule the first connect probe");
		goto fail;
	}
	out->available = 1;
	return p;
fail:
	tcpconn_destroy(p);
	series_note(out, "%s", err);
	return NULL;
}

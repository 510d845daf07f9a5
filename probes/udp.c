/* udp: sends one request per interval on an absolute schedule, matches replies by sequence
 * number and times them with kernel receive timestamps. */
#include "probes/udp.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/sock.h"
#include "probes/probebase.h"
#include "probes/schedule.h"

struct udp_probe {
	struct probe_base pb;         /* send timer, schedule and stop flag, as every kind's */
	struct udp_probe_config cfg;
	int fd;
	struct event_base *base;
	struct event *recv_ev, *stop_ev;
	pthread_t thread;
	struct probe_rec *rec;
	size_t nsent;
	size_t kernel_stamps;
	_Atomic int64_t last_rtt_ns;  /* for live progress in another thread */
	_Atomic uint64_t replies;     /* valid replies so far, for the caller's liveness check */
	_Atomic uint64_t sent;        /* nsent, readable from the caller's thread */
	int64_t grace_ns;
};

int udp_probe_reply_valid(const struct wire_probe *w, const uint8_t *token, size_t nsent,
			  size_t len, size_t sent_len)
{
	/* A reply, not a request bounced back by something else. */
	int is_reply = w->kind == WIRE_PROBE_REPLY;
	/* Our session's token: not another session's or a forged reply. */
	int our_token = memcmp(w->token, token, WIRE_TOKEN_LEN) == 0;
	/* A sequence number we actually sent. */
	int seq_sent = w->seq < nsent;
	/* The reflector never grows a packet. */
	int size_ok = len == sent_len;
	/* The server's hold time is non-negative (its two stamps come from one clock). */
	int hold_ok = w->server_tx_ns >= w->server_rx_ns;

	return is_reply && our_token && seq_sent && size_ok && hold_ok;
}

static void udp_probe_send(struct udp_probe *p)
{
	uint8_t buf[WIRE_PROBE_MAX];
	struct wire_probe w;
	struct probe_rec *r;

	if (p->nsent >= p->cfg.max_probes)
		return;
	memset(&w, 0, sizeof(w));
	w.kind = WIRE_PROBE_REQ;
	memcpy(w.token, p->cfg.token, WIRE_TOKEN_LEN);
	w.seq = (uint32_t)p->nsent;
	r = &p->rec[p->nsent];
	r->seq = w.seq;
	/* Read the clock last, right before the syscall. */
	w.client_send_ns = clock_mono_ns();
	wire_probe_encode(&w, buf, p->cfg.size);
	r->send_ns = w.client_send_ns;
	if (send(p->fd, buf, p->cfg.size, 0) < 0)
		log_debug("probe send: %s", strerror(errno)); /* counts as lost: honest */
	p->nsent++;
	atomic_store_explicit(&p->sent, p->nsent, memory_order_relaxed);
}

/* One-shot timer re-armed for the next slot of the absolute schedule. */
static void udp_probe_send_callback(evutil_socket_t fd, short what, void *arg)
{
	struct udp_probe *p = arg;

	if (p->pb.stopping)
		return;
	udp_probe_send(p);
	if (schedule_rearm(&p->pb.sched, p->pb.send_ev) < 0)
		log_warnx("cannot schedule the next probe");
}

static void udp_probe_recv_callback(evutil_socket_t fd, short what, void *arg)
{
	struct udp_probe *p = arg;
	uint8_t buf[WIRE_PROBE_MAX + 1];

	for (;;) {
		struct sockaddr_storage peer;
		socklen_t plen;
		int64_t rx;
		enum ts_source src;
		struct wire_probe w;
		struct probe_rec *r;
		ssize_t n = sock_recv_ts(fd, buf, sizeof(buf), &peer, &plen, &rx, &src);

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			if (errno == ECONNREFUSED) /* ICMP port unreachable: keep probing */
				continue;
			if (errno == EMSGSIZE || errno == EINTR)
				continue;
			log_debug("probe recv: %s", strerror(errno));
			return;
		}
		if (wire_probe_decode(buf, (size_t)n, &w) < 0 ||
		    !udp_probe_reply_valid(&w, p->cfg.token, p->nsent, (size_t)n, p->cfg.size))
			continue;
		r = &p->rec[w.seq];
		if (r->received || w.client_send_ns != r->send_ns)
			continue; /* duplicate, or not the packet we sent with this number */
		r->received = 1;
		r->ts_kernel = src == TS_SRC_KERNEL;
		r->rtt_ns = rx - r->send_ns;
		r->srv_rx_ns = w.server_rx_ns;
		r->srv_tx_ns = w.server_tx_ns;
		r->srv_count = w.server_rx_count;
		p->kernel_stamps += r->ts_kernel;
		atomic_store_explicit(&p->last_rtt_ns, r->rtt_ns, memory_order_relaxed);
		atomic_fetch_add_explicit(&p->replies, 1, memory_order_relaxed);
	}
}

static void udp_probe_grace_callback(evutil_socket_t fd, short what, void *arg)
{
	struct udp_probe *p = arg;

	event_base_loopbreak(p->base);
}

/* Runs in the probe thread when the main thread asks to stop (event_active is thread-safe). */
static void udp_probe_stop_callback(evutil_socket_t fd, short what, void *arg)
{
	struct udp_probe *p = arg;
	struct timeval tv = { (time_t)(p->grace_ns / NS_PER_SEC),
			      (suseconds_t)(p->grace_ns % NS_PER_SEC / 1000) };

	probe_base_stop(&p->pb);
	event_free(p->stop_ev);
	p->stop_ev = evtimer_new(p->base, udp_probe_grace_callback, p);
	if (p->stop_ev == NULL || evtimer_add(p->stop_ev, &tv) < 0)
		event_base_loopbreak(p->base);
}

static void *udp_probe_main(void *arg)
{
	struct udp_probe *p = arg;

	udp_probe_send_callback(-1, 0, p);
	if (event_base_dispatch(p->base) < 0)
		log_warnx("probe event loop failed");
	return NULL;
}

struct udp_probe *udp_probe_start(const struct udp_probe_config *cfg, char *err, size_t errlen)
{
	struct udp_probe *p = calloc(1, sizeof(*p));
	struct event_config *ec = event_config_new();
	int rc;

	if (p == NULL || ec == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	p->cfg = *cfg;
	p->pb.sched.interval_ns = cfg->interval_ns;
	p->fd = -1;
	p->rec = calloc(cfg->max_probes, sizeof(*p->rec));
	if (p->rec == NULL) {
		snprintf(err, errlen, "out of memory for %zu probe records", cfg->max_probes);
		goto fail;
	}
	p->fd = socket(cfg->server.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (p->fd < 0 || sock_bind_local(p->fd, &cfg->local) < 0 ||
	    connect(p->fd, (const struct sockaddr *)&cfg->server, cfg->server_len) < 0) {
		snprintf(err, errlen, "cannot open the UDP probe socket: %s", strerror(errno));
		goto fail;
	}
	(void)sock_enable_rx_timestamps(p->fd);
	/* Precise timers: libevent otherwise may use a coarse clock for timeouts. */
	event_config_set_flag(ec, EVENT_BASE_FLAG_PRECISE_TIMER);
	p->base = event_base_new_with_config(ec);
	event_config_free(ec);
	ec = NULL;
	if (p->base == NULL) {
		snprintf(err, errlen, "cannot create the probe event loop");
		goto fail;
	}
	p->pb.send_ev = evtimer_new(p->base, udp_probe_send_callback, p);
	p->recv_ev = event_new(p->base, p->fd, EV_READ | EV_PERSIST, udp_probe_recv_callback, p);
	p->stop_ev = event_new(p->base, -1, 0, udp_probe_stop_callback, p);
	if (p->pb.send_ev == NULL || p->recv_ev == NULL || p->stop_ev == NULL ||
	    event_add(p->recv_ev, NULL) < 0) {
		snprintf(err, errlen, "cannot create probe events");
		goto fail;
	}
	rc = pthread_create(&p->thread, NULL, udp_probe_main, p);
	if (rc != 0) {
		snprintf(err, errlen, "cannot start the probe thread: %s", strerror(rc));
		goto fail;
	}
	return p;
fail:
	if (ec)
		event_config_free(ec);
	if (p) {
		p->thread = 0;
		free(udp_probe_free(p, NULL));
	}
	return NULL;
}

void udp_probe_stop(struct udp_probe *p, int64_t grace_ns)
{
	p->grace_ns = grace_ns;
	event_active(p->stop_ev, 0, 0);
	pthread_join(p->thread, NULL);
	p->thread = 0;
}

struct probe_rec *udp_probe_records(struct udp_probe *p, size_t *n)
{
	*n = p->nsent;
	return p->rec;
}

int64_t udp_probe_last_rtt(const struct udp_probe *p)
{
	return atomic_load_explicit(&p->last_rtt_ns, memory_order_relaxed);
}

uint64_t udp_probe_replies(const struct udp_probe *p)
{
	return atomic_load_explicit(&p->replies, memory_order_relaxed);
}

uint64_t udp_probe_sent(const struct udp_probe *p)
{
	return atomic_load_explicit(&p->sent, memory_order_relaxed);
}

size_t udp_probe_kernel_stamps(const struct udp_probe *p)
{
	return p->kernel_stamps;
}

void udp_probe_set_interval(struct udp_probe *p, int64_t interval_ns)
{
	schedule_set_interval(&p->pb.sched, interval_ns);
}

uint64_t udp_probe_late_sends(const struct udp_probe *p)
{
	return p->pb.sched.skipped;
}

struct probe_rec *udp_probe_free(struct udp_probe *p, size_t *n)
{
	struct probe_rec *rec = p->rec;

	if (n)
		*n = p->nsent;
	probe_base_free(&p->pb);
	if (p->recv_ev)
		event_free(p->recv_ev);
	if (p->stop_ev)
		event_free(p->stop_ev);
	if (p->base)
		event_base_free(p->base);
	if (p->fd >= 0)
		close(p->fd);
	free(p);
	return rec;
}

/* load: raw non-blocking sockets with one persistent event each; senders keep their unsent
 * data small (TCP_NOTSENT_LOWAT) so the measured queue is the network's, not ours. */
#include "client/load.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/sock.h"
#include "common/util.h"

#define LOAD_CHUNK (256 * 1024)
#define LOAD_CONNECT_TIMEOUT_MS 5000

struct load_flow {
	struct load *l;
	int fd;
	int up;
	struct event *ev;
};

struct load {
	struct load_flow *flows;
	int n;
	int open;
	uint64_t down_bytes;
	struct tcp_totals up_closed;   /* TCP_INFO totals of closed upload flows */
	struct load_info info;
	uint8_t buf[LOAD_CHUNK]; /* upload payload (random) and download scratch */
};

static void load_flow_close(struct load_flow *f)
{
	if (f->fd < 0)
		return;
	if (f->up)
		sock_tcp_totals_add(f->fd, &f->l->up_closed);
	/* Without this the kernel keeps sending what the socket buffered after the phase ends,
	 * and the drain gap would time our own backlog instead of the network's recovery. */
	if (f->up && sock_set_abortive_close(f->fd) < 0)
		log_debug("SO_LINGER: %s", strerror(errno));
	if (f->ev) {
		event_free(f->ev);
		f->ev = NULL;
		f->l->open--;
	}
	close(f->fd);
	f->fd = -1;
}

static void load_recv_callback(evutil_socket_t fd, short what, void *arg)
{
	struct load_flow *f = arg;

	for (int i = 0; i < 4; i++) { /* bounded so timers and other flows get their turn */
		ssize_t n = recv(fd, f->l->buf, sizeof(f->l->buf), 0);

		if (n > 0) {
			f->l->down_bytes += (uint64_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return;
		log_debug("download flow closed by the server");
		load_flow_close(f);
		return;
	}
}

static void load_send_callback(evutil_socket_t fd, short what, void *arg)
{
	struct load_flow *f = arg;
	ssize_t n = send(fd, f->l->buf, sizeof(f->l->buf), MSG_NOSIGNAL);

	if (n >= 0 || errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return;
	log_debug("upload flow failed: %s", strerror(errno));
	load_flow_close(f);
}

/* Sets the congestion control and records, once, what the socket really uses. */
static void load_set_cc(struct load *l, int fd, const char *cc)
{
	if (sock_set_cc(fd, cc) < 0 && l->info.cc_ok) {
		l->info.cc_ok = 0;
		snprintf(l->info.cc_error, sizeof(l->info.cc_error), "%s", strerror(errno));
	}
	if (l->info.cc_used[0] == '\0' && sock_get_cc(fd, l->info.cc_used, sizeof(l->info.cc_used)) < 0)
		snprintf(l->info.cc_used, sizeof(l->info.cc_used), "unknown");
}

/* Starts every flow's connect at once, so a phase's flows start together even when an
 * already-filled queue delays each handshake. */
static int load_connect_all(struct load *l, const struct sockaddr_storage *sa, socklen_t len,
			    const char *cc, char *err, size_t errlen)
{
	int64_t deadline = clock_mono_ns() + (int64_t)LOAD_CONNECT_TIMEOUT_MS * NS_PER_MS;
	struct pollfd *pfd = calloc((size_t)l->n, sizeof(*pfd));
	int pending = l->n, rc = -1;

	if (pfd == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int i = 0; i < l->n; i++) {
		l->flows[i].fd = sock_connect_start(sa, len);
		if (l->flows[i].fd < 0) {
			snprintf(err, errlen, "cannot open a load flow: %s", strerror(errno));
			goto out;
		}
		load_set_cc(l, l->flows[i].fd, cc);
		pfd[i].fd = l->flows[i].fd;
		pfd[i].events = POLLOUT;
	}
	while (pending > 0) {
		int64_t left = (deadline - clock_mono_ns()) / NS_PER_MS;
		int n;

		if (left <= 0) {
			snprintf(err, errlen, "load flows could not connect within %d ms",
				 LOAD_CONNECT_TIMEOUT_MS);
			goto out;
		}
		n = poll(pfd, (nfds_t)l->n, (int)left);
		if (n < 0 && errno != EINTR) {
			snprintf(err, errlen, "poll: %s", strerror(errno));
			goto out;
		}
		for (int i = 0; i < l->n && n > 0; i++) {
			if (pfd[i].fd < 0 || pfd[i].revents == 0)
				continue;
			if (sock_connect_result(pfd[i].fd) < 0) {
				snprintf(err, errlen, "a load flow could not connect: %s", strerror(errno));
				goto out;
			}
			pfd[i].fd = -1; /* poll ignores negative fds */
			pending--;
		}
	}
	rc = 0;
out:
	free(pfd);
	return rc;
}

/* Announces a connected flow with its data hello and starts moving bytes. */
static int load_run_flow(struct load *l, struct event_base *base, struct load_flow *f,
			 const uint8_t *token, uint16_t id, char *err, size_t errlen)
{
	struct wire_data_hello h = { .version = WIRE_VERSION, .dir = f->up ? WIRE_DIR_UP : WIRE_DIR_DOWN,
				     .flow_id = id };
	uint8_t hello[WIRE_DATA_HELLO_LEN];

	memcpy(h.token, token, WIRE_TOKEN_LEN);
	wire_data_hello_encode(&h, hello);
	/* A fresh socket's send buffer always takes 32 bytes at once. */
	if (send(f->fd, hello, sizeof(hello), MSG_NOSIGNAL) != (ssize_t)sizeof(hello)) {
		snprintf(err, errlen, "cannot start a load flow: %s", strerror(errno));
		return -1;
	}
	if (f->up && sock_set_notsent_lowat(f->fd, 16 * 1024) < 0)
		log_debug("TCP_NOTSENT_LOWAT: %s", strerror(errno));
	f->ev = event_new(base, f->fd, (f->up ? EV_WRITE : EV_READ) | EV_PERSIST,
			  f->up ? load_send_callback : load_recv_callback, f);
	if (f->ev == NULL || event_add(f->ev, NULL) < 0) {
		snprintf(err, errlen, "cannot watch a load flow");
		return -1;
	}
	l->open++;
	return 0;
}

/* MSS and options of an established flow, to convert goodput to IP bytes. */
static void load_read_mss(struct load *l)
{
	struct sock_tcp_stats ti;

	for (int i = 0; i < l->n; i++) {
		if (l->flows[i].fd >= 0 && sock_tcp_info(l->flows[i].fd, &ti) == 0) {
			l->info.mss = (int)ti.snd_mss;
			l->info.timestamps = ti.timestamps;
			return;
		}
	}
}

struct load *load_start(struct event_base *base, const struct sockaddr_storage *sa, socklen_t len,
			const uint8_t *token, int ndown, int nup, const char *cc, char *err,
			size_t errlen)
{
	struct load *l = calloc(1, sizeof(*l));

	if (l == NULL || (l->flows = calloc((size_t)(ndown + nup), sizeof(*l->flows))) == NULL) {
		free(l);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (util_random(l->buf, sizeof(l->buf)) < 0)
		memset(l->buf, 0x5a, sizeof(l->buf));
	l->info.cc_ok = 1;
	l->n = ndown + nup;
	for (int i = 0; i < l->n; i++) {
		l->flows[i].l = l;
		l->flows[i].fd = -1;
		l->flows[i].up = i >= ndown;
	}
	if (load_connect_all(l, sa, len, cc, err, errlen) < 0)
		goto fail;
	for (int i = 0; i < l->n; i++)
		if (load_run_flow(l, base, &l->flows[i], token, (uint16_t)i, err, errlen) < 0)
			goto fail;
	load_read_mss(l);
	return l;
fail:
	load_stop(l);
	return NULL;
}

uint64_t load_down_bytes(const struct load *l)
{
	return l->down_bytes;
}

int load_open_flows(const struct load *l)
{
	return l->open;
}

void load_up_totals(const struct load *l, struct tcp_totals *t)
{
	*t = l->up_closed;
	for (int i = 0; i < l->n; i++)
		if (l->flows[i].up && l->flows[i].fd >= 0)
			sock_tcp_totals_add(l->flows[i].fd, t);
}

void load_tune(struct load *l)
{
	for (int i = 0; i < l->n; i++)
		if (l->flows[i].up && l->flows[i].fd >= 0)
			(void)sock_tune_notsent_lowat(l->flows[i].fd);
}

void load_get_info(const struct load *l, struct load_info *info)
{
	*info = l->info;
}

void load_stop(struct load *l)
{
	if (l == NULL)
		return;
	for (int i = 0; i < l->n; i++)
		load_flow_close(&l->flows[i]);
	free(l->flows);
	free(l);
}

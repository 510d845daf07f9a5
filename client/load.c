/* load: raw non-blocking sockets with one persistent event each; senders keep their unsent
 * data small (TCP_NOTSENT_LOWAT) so the measured queue is the network's, not ours. Streams are
 * framed into records (common/record.h): download requests go out on the otherwise idle
 * reverse direction and come back as echoes behind the server's queued data; upload requests
 * ride in the next record we begin and come back as responses. Two timers on the load base:
 * in-flow requests every interval, TCP_INFO samples every 100 ms. */
#include "client/load.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/record.h"
#include "common/sock.h"
#include "common/util.h"

#define LOAD_CHUNK (256 * 1024)
#define LOAD_IOV (2 * (LOAD_CHUNK / RECORD_SIZE_MIN) + 4)
#define LOAD_RESP_READ 4096 /* responses are 16 bytes: an upload socket reads little */
#define LOAD_CONNECT_TIMEOUT_MS 5000
#define LOAD_SAMPLE_NS (100 * NS_PER_MS)
#define LOAD_INFLOW_TIMEOUT_NS (10 * NS_PER_SEC)
#define LOAD_KEEP_MAX (1u << 20) /* samples kept between two takes, per kind */

struct load_flow {
	struct load *l;
	int fd;
	int up;
	int connecting;               /* added later: its connect is still in progress */
	uint16_t id;
	struct event *ev;
	struct record_parser rx;      /* download: the server's records; upload: its responses */
	struct record_writer w;       /* upload: the records we send */
	uint8_t req[RECORD_HDR_LEN];  /* download: the unsent rest of a request */
	uint8_t req_left;
	int outstanding;              /* one in-flow request waits for its answer */
	uint32_t seq;
	int64_t sent_ns;
};

struct load {
	struct event_base *base;
	struct load_flow *flows;
	int n, cap;                    /* flows started, room for (load_add_flow) */
	struct sockaddr_storage sa;    /* for flows added later */
	socklen_t salen;
	uint8_t token[WIRE_TOKEN_LEN];
	char cc[16];
	int open;
	uint64_t down_bytes;
	struct tcp_totals up_closed;   /* TCP_INFO totals of closed upload flows */
	struct load_info info;
	struct load_opts opts;
	struct event *inflow_ev, *sample_ev;
	uint32_t next_seq;
	int rr[2];                     /* round-robin position per direction ([1] upload) */
	struct rtt_sample *done[2];    /* completed in-flow samples per direction, not yet taken */
	size_t ndone[2], capdone[2];
	uint64_t unmatched[2];
	struct flow_sample *samples;   /* TCP_INFO samples not yet taken */
	size_t nsamples, capsamples;
	uint8_t buf[LOAD_CHUNK];       /* upload payload (random), shared by the upload flows */
	uint8_t scratch[LOAD_CHUNK];   /* download receive space */
};

/* Makes room for one more element of size elem after n in arr: returns the (maybe moved)
 * array, or NULL (arr unchanged) when out of memory or when LOAD_KEEP_MAX wait already (a
 * caller that never takes must not grow us without bound). */
static void *load_grow(void *arr, size_t *cap, size_t n, size_t elem)
{
	size_t nc;
	void *a;

	if (n < *cap)
		return arr;
	if (n >= LOAD_KEEP_MAX)
		return NULL;
	nc = *cap ? *cap * 2 : 256;
	a = realloc(arr, nc * elem);
	if (a != NULL)
		*cap = nc;
	return a;
}

/* Records the end of f's outstanding request. */
static void load_inflow_done(struct load_flow *f, int64_t rtt_ns, enum sample_status st)
{
	struct load *l = f->l;
	int d = f->up;
	struct rtt_sample *a = load_grow(l->done[d], &l->capdone[d], l->ndone[d], sizeof(*a));

	f->outstanding = 0;
	if (a == NULL)
		return;
	l->done[d] = a;
	l->done[d][l->ndone[d]++] = (struct rtt_sample){ .send_ns = f->sent_ns, .rtt_ns = rtt_ns,
							 .status = st };
}

/* An echo (download) or response (upload) arrived at now. */
static void load_on_answer(struct load_flow *f, const struct record_hdr *h, int64_t now)
{
	if (!f->outstanding || h->seq != f->seq || h->ts_ns != f->sent_ns) {
		f->l->unmatched[f->up]++;
		f->l->info.inflow_unmatched++;
		return;
	}
	load_inflow_done(f, now - f->sent_ns, SAMPLE_OK);
}

/* Paces the open upload flows to share the server's max-rate (its welcome's max_rate_bps),
 * as the server paces its download senders: SO_MAX_PACING_RATE, which Linux TCP enforces by
 * itself since 4.13 (kernel commit 218af599fa63) and counts payload only. A server that
 * announces a cap would otherwise throttle its reads, and our flows would look receive-window
 * limited. Recomputed whenever a flow opens or closes. */
static void load_pace_uploads(struct load *l)
{
	uint64_t share;
	int n = 0;

	if (l->opts.max_rate_bps == 0)
		return;
	for (int i = 0; i < l->n; i++)
		n += l->flows[i].up && l->flows[i].fd >= 0 && !l->flows[i].connecting;
	share = sock_pacing_share(l->opts.max_rate_bps, n);
	for (int i = 0; i < l->n; i++) {
		struct load_flow *f = &l->flows[i];

		if (f->up && f->fd >= 0 && !f->connecting && sock_set_pacing(f->fd, share) < 0)
			log_debug("SO_MAX_PACING_RATE: %s", strerror(errno));
	}
}

static void load_flow_close(struct load_flow *f)
{
	int paced = f->up && f->fd >= 0 && !f->connecting;

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
		if (!f->connecting)
			f->l->open--;
	}
	f->connecting = 0;
	close(f->fd);
	f->fd = -1;
	f->outstanding = 0; /* a request still out is dropped, not lost */
	if (paced)
		load_pace_uploads(f->l);
}

static int load_would_block(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

/* Feeds received stream bytes to f's parser; -1 (flow closed) if the stream is corrupt. */
static int load_parse(struct load_flow *f, const uint8_t *buf, size_t len, int64_t now)
{
	while (len > 0) {
		struct record_hdr h;
		int got;
		long k = record_parse(&f->rx, buf, len, &h, &got);

		if (k < 0) {
			log_warnx("%s flow %u: the server sent a corrupt record stream",
				  f->up ? "upload" : "download", f->id);
			f->l->info.corrupt_streams++;
			load_flow_close(f);
			return -1;
		}
		buf += k;
		len -= (size_t)k;
		if (got && (h.type == RECORD_ECHO || h.type == RECORD_RESPONSE))
			load_on_answer(f, &h, now);
	}
	return 0;
}

static void load_recv_callback(evutil_socket_t fd, short what, void *arg)
{
	struct load_flow *f = arg;

	for (int i = 0; i < 4; i++) { /* bounded so timers and other flows get their turn */
		ssize_t n = recv(fd, f->l->scratch, sizeof(f->l->scratch), 0);

		if (n > 0) {
			f->l->down_bytes += (uint64_t)n;
			if (load_parse(f, f->l->scratch, (size_t)n, clock_mono_ns()) < 0)
				return;
			continue;
		}
		if (n < 0 && load_would_block())
			return;
		log_debug("download flow closed by the server");
		load_flow_close(f);
		return;
	}
}

/* Upload flows read only the server's 16-byte responses. 0, or -1 after closing f. */
static int load_read_responses(struct load_flow *f)
{
	ssize_t n = recv(f->fd, f->l->scratch, LOAD_RESP_READ, 0);

	if (n > 0)
		return load_parse(f, f->l->scratch, (size_t)n, clock_mono_ns());
	if (n < 0 && load_would_block())
		return 0;
	log_debug("upload flow closed by the server");
	load_flow_close(f);
	return -1;
}

static void load_send_callback(evutil_socket_t fd, short what, void *arg)
{
	struct load_flow *f = arg;
	struct iovec iov[LOAD_IOV];
	struct msghdr mh = { .msg_iov = iov };
	ssize_t n;

	if ((what & EV_READ) && load_read_responses(f) < 0)
		return;
	if (!(what & EV_WRITE))
		return;
	mh.msg_iovlen = record_writer_iov(&f->w, iov, LOAD_IOV, LOAD_CHUNK);
	n = sendmsg(fd, &mh, MSG_NOSIGNAL);
	if (n > 0) {
		(void)record_writer_sent(&f->w, (size_t)n);
		return;
	}
	if (n < 0 && load_would_block())
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
		if (sock_set_dscp(l->flows[i].fd, l->opts.dscp) < 0)
			log_debug("DSCP %d on a load flow: %s", l->opts.dscp, strerror(errno));
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
			 const uint8_t *token, char *err, size_t errlen)
{
	struct wire_data_hello h = { .version = WIRE_VERSION, .dir = f->up ? WIRE_DIR_UP : WIRE_DIR_DOWN,
				     .flow_id = f->id };
	uint8_t hello[WIRE_DATA_HELLO_LEN];

	memcpy(h.token, token, WIRE_TOKEN_LEN);
	wire_data_hello_encode(&h, hello);
	/* A fresh socket's send buffer always takes 32 bytes at once. */
	if (send(f->fd, hello, sizeof(hello), MSG_NOSIGNAL) != (ssize_t)sizeof(hello)) {
		snprintf(err, errlen, "cannot start a load flow: %s", strerror(errno));
		return -1;
	}
	record_parser_init(&f->rx, f->up ? RECORD_STREAM_RESPONSES : RECORD_STREAM_DOWN);
	if (f->up) {
		record_writer_init(&f->w, RECORD_PROBE, l->buf, sizeof(l->buf));
		/* Until the first TCP_INFO sample knows the rate, the small records of a slow flow. */
		record_writer_set_size(&f->w, RECORD_SIZE_MIN);
		if (sock_set_notsent_lowat(f->fd, 16 * 1024) < 0)
			log_debug("TCP_NOTSENT_LOWAT: %s", strerror(errno));
	}
	/* Upload flows also read: the server's responses come back on them. */
	f->ev = event_new(base, f->fd, (f->up ? EV_READ | EV_WRITE : EV_READ) | EV_PERSIST,
			  f->up ? load_send_callback : load_recv_callback, f);
	if (f->ev == NULL || event_add(f->ev, NULL) < 0) {
		snprintf(err, errlen, "cannot watch a load flow");
		return -1;
	}
	l->open++;
	return 0;
}

/* Writes what is left of a download request; 0 when none is left. */
static int load_flush_request(struct load_flow *f)
{
	ssize_t n;

	if (f->req_left == 0)
		return 0;
	n = send(f->fd, f->req + RECORD_HDR_LEN - f->req_left, f->req_left,
		 MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n > 0)
		f->req_left = (uint8_t)(f->req_left - n);
	return f->req_left;
}

/* Sends one in-flow request on f: a REQUEST message on a download flow (echoed in the
 * server's next record), a tag on the next record of an upload flow (answered at once). */
static void load_send_request(struct load_flow *f, int64_t now)
{
	struct record_hdr h = { .type = RECORD_REQUEST, .seq = f->l->next_seq++, .ts_ns = now };

	if (!f->up) {
		if (load_flush_request(f) > 0) {
			f->l->info.inflow_unsent++;
			return;
		}
		record_encode(&h, f->req);
		f->req_left = RECORD_HDR_LEN;
		if (load_flush_request(f) == RECORD_HDR_LEN) {
			/* Not even its first byte went out: skip it rather than queue it. */
			f->req_left = 0;
			f->l->info.inflow_unsent++;
			return;
		}
	} else {
		record_writer_tag(&f->w, h.seq, now);
	}
	f->outstanding = 1;
	f->seq = h.seq;
	f->sent_ns = now;
}

/* The next open flow of direction up without an outstanding request, round-robin; NULL if
 * every one is busy. */
static struct load_flow *load_next_idle(struct load *l, int up)
{
	for (int k = 0; k < l->n; k++) {
		int i = (l->rr[up] + k) % l->n;
		struct load_flow *f = &l->flows[i];

		if (f->up == up && f->fd >= 0 && !f->connecting && !f->outstanding) {
			l->rr[up] = i + 1;
			return f;
		}
	}
	return NULL;
}

static void load_inflow_callback(evutil_socket_t fd, short what, void *arg)
{
	struct load *l = arg;
	int64_t now = clock_mono_ns();

	for (int i = 0; i < l->n; i++) {
		struct load_flow *f = &l->flows[i];

		if (f->fd < 0 || f->connecting)
			continue;
		(void)load_flush_request(f);
		if (f->outstanding && now - f->sent_ns > LOAD_INFLOW_TIMEOUT_NS) {
			if (f->up && f->w.tagged && f->w.tag_seq == f->seq)
				record_writer_untag(&f->w);
			load_inflow_done(f, 0, SAMPLE_LOST);
		}
	}
	for (int up = 0; up < 2; up++) {
		struct load_flow *f = load_next_idle(l, up);

		if (f)
			load_send_request(f, now);
	}
}

/* Every 100 ms: one TCP_INFO reading of each open flow; upload flows also size their
 * records from it. */
static void load_sample_callback(evutil_socket_t fd, short what, void *arg)
{
	struct load *l = arg;
	int64_t now = clock_mono_ns();

	for (int i = 0; i < l->n; i++) {
		struct load_flow *f = &l->flows[i];
		struct sock_tcp_stats ti;
		struct flow_sample *a;

		if (f->fd < 0 || sock_tcp_info(f->fd, &ti) < 0)
			continue;
		if (f->up)
			record_writer_set_size(&f->w, record_size_for_rate(ti.delivery_rate));
		a = load_grow(l->samples, &l->capsamples, l->nsamples, sizeof(*a));
		if (a == NULL)
			continue;
		l->samples = a;
		l->samples[l->nsamples++] = (struct flow_sample){
			.t_ns = now, .flow_id = f->id, .up = (uint8_t)f->up,
			.rtt_us = ti.rtt_us, .min_rtt_us = ti.min_rtt_us, .rcv_rtt_us = ti.rcv_rtt_us,
			.total_retrans = ti.total_retrans, .snd_cwnd = ti.snd_cwnd,
			.delivery_rate = ti.delivery_rate, .busy_us = ti.busy_us,
			.rwnd_limited_us = ti.rwnd_limited_us, .sndbuf_limited_us = ti.sndbuf_limited_us,
		};
	}
}

/* A persistent timer on the load base firing every period_ns. */
static struct event *load_timer(struct load *l, int64_t period_ns, event_callback_fn cb)
{
	struct timeval tv = { (time_t)(period_ns / NS_PER_SEC),
			      (suseconds_t)(period_ns % NS_PER_SEC / 1000) };
	struct event *ev = event_new(l->base, -1, EV_PERSIST, cb, l);

	if (ev && event_add(ev, &tv) < 0) {
		event_free(ev);
		ev = NULL;
	}
	return ev;
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
			const uint8_t *token, int ndown, int nup, const char *cc,
			const struct load_opts *opts, char *err, size_t errlen)
{
	struct load *l = calloc(1, sizeof(*l));
	int cap = opts && opts->max_flows > ndown + nup ? opts->max_flows : ndown + nup;

	/* Room for every flow up front: events point into this array, so it never moves. */
	if (l == NULL || (l->flows = calloc((size_t)cap, sizeof(*l->flows))) == NULL) {
		free(l);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	l->cap = cap;
	l->sa = *sa;
	l->salen = len;
	memcpy(l->token, token, WIRE_TOKEN_LEN);
	snprintf(l->cc, sizeof(l->cc), "%s", cc ? cc : "");
	if (util_random(l->buf, sizeof(l->buf)) < 0)
		memset(l->buf, 0x5a, sizeof(l->buf));
	l->base = base;
	l->opts = opts ? *opts : (struct load_opts){ .inflow_interval_ns = 0, .dscp = -1 };
	l->info.cc_ok = 1;
	l->n = ndown + nup;
	for (int i = 0; i < l->n; i++) {
		l->flows[i].l = l;
		l->flows[i].fd = -1;
		l->flows[i].up = i >= ndown;
		l->flows[i].id = (uint16_t)i;
	}
	if (load_connect_all(l, sa, len, cc, err, errlen) < 0)
		goto fail;
	for (int i = 0; i < l->n; i++)
		if (load_run_flow(l, base, &l->flows[i], token, err, errlen) < 0)
			goto fail;
	load_read_mss(l);
	load_pace_uploads(l);
	l->sample_ev = load_timer(l, LOAD_SAMPLE_NS, load_sample_callback);
	if (l->opts.inflow_interval_ns > 0)
		l->inflow_ev = load_timer(l, l->opts.inflow_interval_ns, load_inflow_callback);
	if (l->sample_ev == NULL || (l->opts.inflow_interval_ns > 0 && l->inflow_ev == NULL)) {
		snprintf(err, errlen, "cannot start the load timers");
		goto fail;
	}
	return l;
fail:
	load_stop(l);
	return NULL;
}

/* A flow added during the phase finished its connect: say hello and start moving bytes. */
static void load_connected_callback(evutil_socket_t fd, short what, void *arg)
{
	struct load_flow *f = arg;
	struct load *l = f->l;
	char err[128];

	event_free(f->ev);
	f->ev = NULL;
	f->connecting = 0;
	if (what & EV_TIMEOUT) {
		log_warnx("an added load flow did not connect within %d ms", LOAD_CONNECT_TIMEOUT_MS);
		load_flow_close(f);
	} else if (sock_connect_result(fd) < 0) {
		log_warn("an added load flow could not connect");
		load_flow_close(f);
	} else if (load_run_flow(l, l->base, f, l->token, err, sizeof(err)) < 0) {
		log_warnx("%s", err);
		load_flow_close(f);
	} else if (f->up) {
		load_pace_uploads(l);
	}
}

int load_add_flow(struct load *l, int up, char *err, size_t errlen)
{
	struct load_flow *f;
	struct timeval tv = { LOAD_CONNECT_TIMEOUT_MS / 1000, 0 };

	if (l->n >= l->cap) {
		snprintf(err, errlen, "no room for another load flow");
		return -1;
	}
	f = &l->flows[l->n];
	*f = (struct load_flow){ .l = l, .fd = -1, .up = up, .id = (uint16_t)l->n };
	f->fd = sock_connect_start(&l->sa, l->salen);
	if (f->fd < 0) {
		snprintf(err, errlen, "cannot open a load flow: %s", strerror(errno));
		return -1;
	}
	l->n++;
	load_set_cc(l, f->fd, l->cc);
	if (sock_set_dscp(f->fd, l->opts.dscp) < 0)
		log_debug("DSCP %d on a load flow: %s", l->opts.dscp, strerror(errno));
	/* The connect finishes on the loop (a full queue can delay the handshake by seconds). */
	f->connecting = 1;
	f->ev = event_new(l->base, f->fd, EV_WRITE, load_connected_callback, f);
	if (f->ev == NULL || event_add(f->ev, &tv) < 0) {
		snprintf(err, errlen, "cannot watch a load flow");
		load_flow_close(f);
		return -1;
	}
	return 0;
}

int load_flows(const struct load *l, int up)
{
	int n = 0;

	for (int i = 0; i < l->n; i++)
		n += l->flows[i].up == up && l->flows[i].fd >= 0;
	return n;
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

static int load_cmp_send(const void *a, const void *b)
{
	const struct rtt_sample *x = a, *y = b;

	return (x->send_ns > y->send_ns) - (x->send_ns < y->send_ns);
}

void load_take_inflow(struct load *l, struct probe_series *down, struct probe_series *up)
{
	struct probe_series *ps[2] = { down, up };

	for (int d = 0; d < 2; d++) {
		if (l->ndone[d] > 1)
			qsort(l->done[d], l->ndone[d], sizeof(*l->done[d]), load_cmp_send);
		for (size_t i = 0; ps[d] && i < l->ndone[d]; i++) {
			const struct rtt_sample *s = &l->done[d][i];
			long k = series_push(ps[d], s->send_ns);

			if (k < 0)
				break;
			series_complete(ps[d], k, s->rtt_ns, (enum sample_status)s->status);
		}
		if (ps[d])
			ps[d]->bad_replies += l->unmatched[d];
		l->ndone[d] = 0;
		l->unmatched[d] = 0;
	}
}

size_t load_take_samples(struct load *l, struct flow_sample **arr, size_t *n, size_t *cap)
{
	size_t k = l->nsamples;

	if (k == 0)
		return 0;
	if (*n + k > *cap) {
		size_t nc = *cap ? *cap : 1024;
		struct flow_sample *a;

		while (nc < *n + k)
			nc *= 2;
		a = realloc(*arr, nc * sizeof(*a));
		if (a == NULL)
			return 0;
		*arr = a;
		*cap = nc;
	}
	memcpy(*arr + *n, l->samples, k * sizeof(*l->samples));
	*n += k;
	l->nsamples = 0;
	return k;
}

void load_stop(struct load *l)
{
	if (l == NULL)
		return;
	if (l->inflow_ev)
		event_free(l->inflow_ev);
	if (l->sample_ev)
		event_free(l->sample_ev);
	for (int i = 0; i < l->n; i++)
		load_flow_close(&l->flows[i]);
	for (int d = 0; d < 2; d++)
		free(l->done[d]);
	free(l->samples);
	free(l->flows);
	free(l);
}

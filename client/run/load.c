/* load: raw non-blocking sockets with one persistent event each; senders keep their unsent
 * data small (TCP_NOTSENT_LOWAT) so the measured queue is the network's, not ours. Streams are
 * framed into records (common/record.h): download requests go out on the otherwise idle
 * reverse direction and come back as echoes behind the server's queued data; upload requests
 * ride in the next record we begin and come back as responses. Two timers on the load base:
 * in-flow requests every interval, TCP_INFO samples every 100 ms. A TLS load runs the same
 * streams through SSL_read/SSL_write (common/tls.h) on the same sockets, each event watching
 * what the pending TLS calls wait for; senders copy one TLS record of the stream at a time. */
#include "client/run/load.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/record.h"
#include "common/sock.h"
#include "common/tls.h"
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
	int connecting;               /* its connect (or TLS handshake) is still in progress */
	int initial;                  /* one of the phase's flows, not -P auto's: its failure
				       * fails the phase */
	uint16_t id;
	struct event *ev;
	struct record_parser rx;      /* download: the server's records; upload: its responses */
	struct record_writer w;       /* upload: the records we send */
	uint8_t req[RECORD_HDR_LEN];  /* download: the unsent rest of a request */
	uint8_t req_left;
	int outstanding;              /* one in-flow request waits for its answer */
	uint32_t seq;
	int64_t sent_ns;
	/* TLS load: the stream runs inside ssl (NULL: plain). */
	SSL *ssl;
	struct tls_tx tx;             /* upload: what SSL_write has not taken yet */
	short rd_wants, wr_wants;     /* events the pending read and write wait for (0: none) */
	short events;                 /* what ev watches now */
	int failed;                   /* a TLS call failed inside a helper: close at the end */
	int64_t hs_deadline_ns;       /* TLS: end of its handshake */
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
	int fail_told;                 /* opts.on_fail was called */
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
	/* No close_notify (docs/protocol.md): a close is an EOF, as on a plain flow. */
	SSL_free(f->ssl);
	f->ssl = NULL;
	tls_tx_free(&f->tx);
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

/* Makes f's event watch what its pending TLS calls wait for (f->rd_wants | f->wr_wants). */
static void load_watch(struct load_flow *f)
{
	short want = f->rd_wants | f->wr_wants;
	event_callback_fn cb;

	if (f->ev == NULL || want == f->events)
		return;
	cb = event_get_callback(f->ev);
	if (event_del(f->ev) < 0 ||
	    event_assign(f->ev, f->l->base, f->fd, want | EV_PERSIST, cb, f) < 0 ||
	    event_add(f->ev, NULL) < 0) {
		f->failed = 1;
		return;
	}
	f->events = want;
}

/* After TLS calls outside f's own callback or at its end: watch what they wait for, and
 * close f if one of them failed. */
static void load_tls_settle(struct load_flow *f)
{
	if (f->ssl == NULL || f->fd < 0)
		return;
	load_watch(f);
	if (f->failed) {
		log_debug("%s flow %u: TLS write failed", f->up ? "upload" : "download", f->id);
		load_flow_close(f);
	}
}

/* The events a TLS call that returned r waits for (0: it finished or failed). */
static short load_tls_wants(enum tls_io r)
{
	return r == TLS_IO_WANT_READ ? EV_READ : r == TLS_IO_WANT_WRITE ? EV_WRITE : 0;
}

/* TLS: more plaintext may wait inside the TLS layer (its read-ahead) than the socket shows:
 * come back to it after the other events had their turn. */
static void load_tls_kick(struct load_flow *f)
{
	if ((f->rd_wants & EV_READ) && SSL_has_pending(f->ssl))
		event_active(f->ev, EV_READ, 0);
}

/* TLS: reads the server's records (download) or responses (upload), up to max bytes this
 * call. 0, or -1 after closing f. */
static int load_tls_read(struct load_flow *f, size_t max)
{
	size_t got = 0, room = f->up ? LOAD_RESP_READ : sizeof(f->l->scratch);

	while (got < max) {
		size_t n;
		enum tls_io r = tls_read_nb(f->ssl, f->l->scratch, room, &n);

		if (r != TLS_IO_OK) {
			f->rd_wants = load_tls_wants(r);
			if (f->rd_wants)
				return 0;
			log_debug("%s flow closed by the server", f->up ? "upload" : "download");
			load_flow_close(f);
			return -1;
		}
		f->rd_wants = EV_READ;
		got += n;
		if (!f->up)
			f->l->down_bytes += (uint64_t)n; /* goodput: application bytes */
		if (load_parse(f, f->l->scratch, n, clock_mono_ns()) < 0)
			return -1;
	}
	load_tls_kick(f);
	return 0;
}

/* TLS upload: like the plain sendmsg, up to LOAD_CHUNK bytes while the socket takes them
 * (TCP_NOTSENT_LOWAT; our own unsent part is at most one TLS record, a tag waiting for the
 * next one). 0, or -1 after closing f. */
static int load_tls_send(struct load_flow *f)
{
	size_t moved;
	enum tls_io r = tls_tx_send(f->ssl, &f->tx, &f->w, LOAD_CHUNK, &moved);

	/* WANT_READ: wait for readability (not writability) before the retry. */
	f->wr_wants = r == TLS_IO_OK ? EV_WRITE : load_tls_wants(r);
	if (f->wr_wants)
		return 0;
	log_debug("upload flow failed (TLS)");
	load_flow_close(f);
	return -1;
}

static int load_flush_request(struct load_flow *f);

/* TLS download: the server's records; a request waiting for the socket goes out first. */
static void load_tls_recv_callback(evutil_socket_t fd, short what, void *arg)
{
	struct load_flow *f = arg;

	if ((what & f->wr_wants) && f->req_left)
		(void)load_flush_request(f);
	if ((what & f->rd_wants) && load_tls_read(f, 4 * LOAD_CHUNK) < 0)
		return;
	load_tls_settle(f);
}

/* TLS upload: the server's responses, then our records. */
static void load_tls_send_callback(evutil_socket_t fd, short what, void *arg)
{
	struct load_flow *f = arg;

	if ((what & f->rd_wants) && load_tls_read(f, 4 * LOAD_RESP_READ) < 0)
		return;
	if ((what & f->wr_wants) && load_tls_send(f) < 0)
		return;
	load_tls_settle(f);
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

/* Counts a TLS flow in the load's info, and logs per flow whether the kernel does its TLS. */
static void load_note_tls(struct load *l, const struct load_flow *f)
{
	struct tls_conn_info ti;

	tls_conn_info(f->ssl, &ti);
	if (l->info.tls_flows++ == 0) {
		snprintf(l->info.tls_version, sizeof(l->info.tls_version), "%s", ti.version);
		snprintf(l->info.tls_cipher, sizeof(l->info.tls_cipher), "%s", ti.cipher);
	}
	l->info.ktls_send_flows += ti.ktls_send;
	l->info.ktls_recv_flows += ti.ktls_recv;
	log_debug("%s flow %u: %s %s, kernel TLS: send %s, receive %s", f->up ? "upload" : "download",
		  f->id, ti.version, ti.cipher, ti.ktls_send ? "yes" : "no", ti.ktls_recv ? "yes" : "no");
}

/* Sends the data hello: plain, or as the first bytes inside TLS. A fresh connection always
 * takes 32 bytes at once. 0 or -1. */
static int load_send_hello(struct load_flow *f, const uint8_t *hello)
{
	size_t n;

	if (f->ssl == NULL)
		return send(f->fd, hello, WIRE_DATA_HELLO_LEN, MSG_NOSIGNAL) == WIRE_DATA_HELLO_LEN
			       ? 0 : -1;
	errno = EPROTO;
	return tls_write_nb(f->ssl, hello, WIRE_DATA_HELLO_LEN, &n) == TLS_IO_OK ? 0 : -1;
}

/* Announces a connected flow with its data hello and starts moving bytes. */
static int load_run_flow(struct load *l, struct event_base *base, struct load_flow *f,
			 const uint8_t *token, char *err, size_t errlen)
{
	struct wire_data_hello h = { .version = WIRE_VERSION, .dir = f->up ? WIRE_DIR_UP : WIRE_DIR_DOWN,
				     .flow_id = f->id };
	uint8_t hello[WIRE_DATA_HELLO_LEN];
	event_callback_fn cb = f->up ? load_send_callback : load_recv_callback;

	memcpy(h.token, token, WIRE_TOKEN_LEN);
	wire_data_hello_encode(&h, hello);
	if (load_send_hello(f, hello) < 0) {
		snprintf(err, errlen, "cannot start a load flow: %s", strerror(errno));
		return -1;
	}
	if (f->ssl) {
		tls_bulk_tune(f->ssl);
		load_note_tls(l, f);
		cb = f->up ? load_tls_send_callback : load_tls_recv_callback;
		f->rd_wants = EV_READ;
		f->wr_wants = f->up ? EV_WRITE : 0;
		f->events = f->rd_wants | f->wr_wants;
		if (f->up && tls_tx_init(&f->tx) < 0) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
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
	f->ev = event_new(base, f->fd, (f->up ? EV_READ | EV_WRITE : EV_READ) | EV_PERSIST, cb, f);
	if (f->ev == NULL || event_add(f->ev, NULL) < 0) {
		snprintf(err, errlen, "cannot watch a load flow");
		return -1;
	}
	l->open++;
	return 0;
}

/* TLS: writes the pending request; once SSL_write began its record it must be offered the
 * same bytes again, so it stays pending, whole, until the socket takes it. Returns what is
 * left (0 or RECORD_HDR_LEN). */
static int load_tls_flush_request(struct load_flow *f)
{
	size_t n;
	enum tls_io r = tls_write_nb(f->ssl, f->req, RECORD_HDR_LEN, &n);

	f->wr_wants = load_tls_wants(r);
	if (f->wr_wants == 0) {
		f->failed |= r != TLS_IO_OK;
		f->req_left = 0;
	}
	return f->req_left;
}

/* Writes what is left of a download request; 0 when none is left. */
static int load_flush_request(struct load_flow *f)
{
	ssize_t n;

	if (f->req_left == 0)
		return 0;
	if (f->ssl)
		return load_tls_flush_request(f);
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
		if (load_flush_request(f) == RECORD_HDR_LEN && f->ssl == NULL) {
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
	load_tls_settle(f);
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
		load_tls_settle(f);
		if (f->fd < 0)
			continue;
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

		if (f->fd < 0 || f->connecting || sock_tcp_info(f->fd, &ti) < 0)
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
			.ecn = (uint8_t)ti.ecn,
			.delivered_ce = ti.delivered_ce_known ? (int64_t)ti.delivered_ce : -1,
			.delivered_bytes = ti.delivered_bytes,
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

void load_set_inflow_interval(struct load *l, int64_t interval_ns)
{
	struct timeval tv = { (time_t)(interval_ns / NS_PER_SEC),
			      (suseconds_t)(interval_ns % NS_PER_SEC / 1000) };

	if (l->inflow_ev == NULL || interval_ns <= 0 || interval_ns == l->opts.inflow_interval_ns)
		return;
	l->opts.inflow_interval_ns = interval_ns;
	/* Re-adding a pending persistent timer restarts its period from now: one longer gap,
	 * then the new period on the monotonic clock. */
	if (event_add(l->inflow_ev, &tv) < 0)
		log_warnx("cannot change the in-flow probe interval");
}

/* MSS and options of the first established flow, to convert goodput to IP bytes. */
static void load_read_mss(struct load *l, const struct load_flow *f)
{
	struct sock_tcp_stats ti;

	if (l->info.mss == 0 && sock_tcp_info(f->fd, &ti) == 0) {
		l->info.mss = (int)ti.snd_mss;
		l->info.timestamps = ti.timestamps;
	}
}

/* A flow could not start: one of the phase's own fails the phase (once, through
 * opts.on_fail); an added one (-P auto) is only logged. Closes it. */
static void load_flow_failed(struct load_flow *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void load_flow_failed(struct load_flow *f, const char *fmt, ...)
{
	struct load *l = f->l;
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!f->initial || l->opts.on_fail == NULL)
		log_warnx("%s%s", f->initial ? "" : "an added load flow: ", msg);
	else if (!l->fail_told++)
		l->opts.on_fail(l->opts.fail_arg, msg);
	load_flow_close(f);
}

/* A connected (and, with TLS, handshaken) flow: its hello, then bytes. */
static void load_flow_ready(struct load_flow *f)
{
	struct load *l = f->l;
	char err[256];

	if (load_run_flow(l, l->base, f, l->token, err, sizeof(err)) < 0) {
		load_flow_failed(f, "%s", err);
		return;
	}
	f->connecting = 0;
	load_read_mss(l, f);
	if (f->up)
		load_pace_uploads(l);
}

/* One step of a flow's TLS handshake, whenever its socket is ready for it (the loop carries
 * the running flows and the control connection meanwhile); then its hello. */
static void load_handshake_callback(evutil_socket_t fd, short what, void *arg)
{
	struct load_flow *f = arg;
	struct load *l = f->l;
	int64_t left = f->hs_deadline_ns - clock_mono_ns();
	struct timeval tv;
	enum tls_io r = TLS_IO_ERROR;
	char err[256] = "";

	if (f->ev) {
		event_free(f->ev);
		f->ev = NULL;
	}
	if (left > 0)
		r = tls_connect_step(f->ssl, l->opts.tls_host, err, sizeof(err));
	if (r == TLS_IO_OK) {
		load_flow_ready(f);
		return;
	}
	if (r == TLS_IO_ERROR) {
		if (left <= 0)
			load_flow_failed(f, "TLS handshakes of the load flows did not finish within %d ms",
					 LOAD_CONNECT_TIMEOUT_MS);
		else
			load_flow_failed(f, "%s", err);
		return;
	}
	tv = (struct timeval){ (time_t)(left / NS_PER_SEC), (suseconds_t)(left % NS_PER_SEC / 1000) };
	f->ev = event_new(l->base, f->fd, r == TLS_IO_WANT_READ ? EV_READ : EV_WRITE,
			  load_handshake_callback, f);
	if (f->ev == NULL || event_add(f->ev, &tv) < 0)
		load_flow_failed(f, "cannot watch a load flow");
}

/* A TLS flow is connected: its handshake runs on the loop, still counted as connecting,
 * within the connect timeout from now. */
static void load_handshake_start(struct load_flow *f)
{
	char err[256];

	f->ssl = tls_client_new(f->l->opts.tls_ctx, f->fd, f->l->opts.tls_host, err, sizeof(err));
	if (f->ssl == NULL) {
		load_flow_failed(f, "%s", err);
		return;
	}
	f->hs_deadline_ns = clock_mono_ns() + (int64_t)LOAD_CONNECT_TIMEOUT_MS * NS_PER_MS;
	load_handshake_callback(f->fd, 0, f);
}

/* A flow's connect finished (or timed out): TLS, or straight to its hello. */
static void load_connected_callback(evutil_socket_t fd, short what, void *arg)
{
	struct load_flow *f = arg;

	event_free(f->ev);
	f->ev = NULL;
	if (what & EV_TIMEOUT)
		load_flow_failed(f, "load flows could not connect within %d ms",
				 LOAD_CONNECT_TIMEOUT_MS);
	else if (sock_connect_result(fd) < 0)
		load_flow_failed(f, "a load flow could not connect: %s", strerror(errno));
	else if (f->l->opts.tls_ctx)
		load_handshake_start(f);
	else
		load_flow_ready(f);
}

/* Opens one flow of direction up; its connect finishes on the loop, never blocking it (a
 * full queue or a lost SYN can delay a handshake by seconds, and the flows that did connect
 * should not wait for it). 0, or -1 with err when there is no room or no socket. */
static int load_open_flow(struct load *l, int up, int initial, char *err, size_t errlen)
{
	struct load_flow *f;
	struct timeval tv = { LOAD_CONNECT_TIMEOUT_MS / 1000, LOAD_CONNECT_TIMEOUT_MS % 1000 * 1000 };

	if (l->n >= l->cap) {
		snprintf(err, errlen, "no room for another load flow");
		return -1;
	}
	f = &l->flows[l->n];
	*f = (struct load_flow){ .l = l, .fd = -1, .up = up, .id = (uint16_t)l->n,
				 .initial = initial };
	f->fd = sock_connect_start_from(&l->sa, l->salen, &l->opts.local);
	if (f->fd < 0) {
		snprintf(err, errlen, "cannot open a load flow: %s", strerror(errno));
		return -1;
	}
	l->n++;
	load_set_cc(l, f->fd, l->cc);
	if (sock_set_dscp(f->fd, l->opts.dscp) < 0)
		log_debug("DSCP %d on a load flow: %s", l->opts.dscp, strerror(errno));
	f->connecting = 1;
	f->ev = event_new(l->base, f->fd, EV_WRITE, load_connected_callback, f);
	if (f->ev == NULL || event_add(f->ev, &tv) < 0) {
		snprintf(err, errlen, "cannot watch a load flow");
		load_flow_close(f);
		return -1;
	}
	return 0;
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
	/* Every connect starts at once, so the phase's flows start together. */
	for (int i = 0; i < ndown + nup; i++)
		if (load_open_flow(l, i >= ndown, 1, err, errlen) < 0)
			goto fail;
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

int load_add_flow(struct load *l, int up, char *err, size_t errlen)
{
	return load_open_flow(l, up, 0, err, errlen);
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

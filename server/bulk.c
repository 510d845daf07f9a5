/* bulk: non-blocking bulk senders and sinks on raw sockets (no bufferevent copies). Senders
 * keep their unsent backlog near rate × 5 ms via TCP_NOTSENT_LOWAT so that the tool itself
 * does not add a queue (as the responsiveness draft asks). Senders frame the stream into
 * records from one shared payload (sendmsg with iovecs, no copies) and echo the client's
 * requests in the next record they begin; sinks parse records and answer tagged ones at once.
 * A TLS load runs the same streams through SSL_read/SSL_write on the same sockets (one event
 * each, watching what the pending TLS calls wait for); its senders copy the stream into one
 * TLS record's worth of plaintext at a time. */
#include "server/bulk.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/sock.h"
#include "common/tls.h"
#include "common/util.h"
#include "server/worker.h"

#define BULK_CHUNK (256 * 1024)
#define BULK_LOWAT_MIN (16 * 1024)
/* Enough iovecs for one chunk of the smallest records (two each) plus a partial record. */
#define BULK_IOV (2 * (BULK_CHUNK / RECORD_SIZE_MIN) + 4)
#define BULK_REQ_READ 4096 /* requests are 16 bytes: a download socket reads little */

/* Shared read-only payload for senders, filled with random bytes (incompressible) by the
 * first flow of the daemon's life; scratch space for sinks, one per thread that runs flows
 * (each worker runs its own event loop), allocated by that thread's first flow and freed when
 * it ends (the key's destructor). Neither exists before a load flow: an idle or probe-only
 * daemon carries neither (docs/scale.md, "Memory") — a 256 KiB _Thread_local array cost
 * every thread, the reflector's and the main one's too, 256 KiB of RSS at start, as glibc
 * clears each thread's TLS block. A flow runs on the thread that attached it (the session's
 * worker), so its callbacks find that thread's scratch set. */
static uint8_t bulk_payload[BULK_CHUNK];
static pthread_once_t bulk_once = PTHREAD_ONCE_INIT;
static pthread_key_t bulk_scratch_key;
static int bulk_scratch_key_ok;
static _Thread_local uint8_t *bulk_scratch;

static void bulk_init_once(void)
{
	if (util_random(bulk_payload, sizeof(bulk_payload)) < 0)
		memset(bulk_payload, 0xa5, sizeof(bulk_payload));
	bulk_scratch_key_ok = pthread_key_create(&bulk_scratch_key, free) == 0;
}

/* The payload filled and this thread's scratch allocated: 0, or -1 (out of memory or keys). */
static int bulk_thread_ready(void)
{
	uint8_t *buf;

	if (pthread_once(&bulk_once, bulk_init_once) != 0 || !bulk_scratch_key_ok)
		return -1;
	if (bulk_scratch != NULL)
		return 0;
	buf = malloc(BULK_CHUNK);
	if (buf == NULL)
		return -1;
	if (pthread_setspecific(bulk_scratch_key, buf) != 0) {
		free(buf);
		return -1;
	}
	bulk_scratch = buf;
	return 0;
}

static void bulk_unlink(struct bulk_flow *f)
{
	struct bulk_flow **pp = &f->sess->flows;

	while (*pp && *pp != f)
		pp = &(*pp)->next;
	if (*pp)
		*pp = f->next;
	f->sess->nflows[f->dir == WIRE_DIR_UP]--;
}

/* A rate-limited session's download flows share max-rate equally (the kernel paces each
 * socket, see sock_set_pacing); recomputed whenever one attaches or closes, so the
 * session's total stays at the cap whatever the client's flow count. */
static void bulk_pace(struct session *sess)
{
	uint64_t share = sock_pacing_share(sess->max_rate_bps, sess->nflows[0]);

	if (sess->max_rate_bps == 0)
		return;
	for (struct bulk_flow *f = sess->flows; f; f = f->next)
		if (f->dir == WIRE_DIR_DOWN && sock_set_pacing(f->fd, share) < 0)
			log_debug("session %llu: SO_MAX_PACING_RATE on flow %u: %s",
				  (unsigned long long)sess->id, f->flow_id, strerror(errno));
}

void bulk_close(struct bulk_flow *f)
{
	struct session *sess = f->sess;
	int down = f->dir == WIRE_DIR_DOWN;

	if (f->dir == WIRE_DIR_DOWN)
		sock_tcp_totals_add(f->fd, &f->sess->down_closed);
	if (f->requests || f->resp_dropped)
		log_debug("session %llu: flow %u answered %llu in-flow requests, dropped %llu",
			  (unsigned long long)f->sess->id, f->flow_id,
			  (unsigned long long)f->requests, (unsigned long long)f->resp_dropped);
	bulk_unlink(f);
	event_free(f->ev);
	/* No close_notify (docs/protocol.md): a close is an EOF, as on a plain flow. */
	SSL_free(f->ssl);
	tls_tx_free(&f->tx);
	close(f->fd);
	free(f);
	if (down)
		bulk_pace(sess);
}

static int bulk_would_block(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

/* Makes f's event watch what its pending TLS calls wait for (f->rd_wants | f->wr_wants).
 * A throttled sink stays unwatched (bulk_limits_tick adds it again). */
static void bulk_watch(struct bulk_flow *f)
{
	short want = f->rd_wants | f->wr_wants;
	struct event_base *base = event_get_base(f->ev);
	event_callback_fn cb = event_get_callback(f->ev);

	if (want == f->events || f->throttled)
		return;
	if (event_del(f->ev) < 0 || event_assign(f->ev, base, f->fd, want | EV_PERSIST, cb, f) < 0 ||
	    event_add(f->ev, NULL) < 0) {
		f->failed = 1;
		return;
	}
	f->events = want;
}

/* The events a TLS call that returned r waits for (0: it finished or failed). */
static short bulk_tls_wants(enum tls_io r)
{
	return r == TLS_IO_WANT_READ ? EV_READ : r == TLS_IO_WANT_WRITE ? EV_WRITE : 0;
}

/* TLS: writes the pending response (the same 16 bytes until SSL_write takes them: once it
 * began a record it must be offered the same bytes again, so a response is never dropped
 * half-way; a request arriving meanwhile is). Returns what is left, 0 or RECORD_HDR_LEN. */
static int bulk_tls_flush_response(struct bulk_flow *f)
{
	size_t n;
	enum tls_io r = tls_write_nb(f->ssl, f->resp, RECORD_HDR_LEN, &n);

	f->wr_wants = bulk_tls_wants(r);
	if (r == TLS_IO_OK || r == TLS_IO_CLOSED || r == TLS_IO_ERROR) {
		f->failed |= r != TLS_IO_OK;
		f->resp_left = 0;
	}
	return f->resp_left;
}

/* Writes what is left of a response; 0 when none is left. */
static int bulk_flush_response(struct bulk_flow *f)
{
	ssize_t n;

	if (f->resp_left == 0)
		return 0;
	if (f->ssl)
		return bulk_tls_flush_response(f);
	n = send(f->fd, f->resp + RECORD_HDR_LEN - f->resp_left, f->resp_left,
		 MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n > 0)
		f->resp_left = (uint8_t)(f->resp_left - n);
	return f->resp_left;
}

/* Answers a tagged upload record at once on the otherwise idle reverse direction; when the
 * socket cannot take it the response is dropped (the client counts it lost). */
static void bulk_respond(struct bulk_flow *f, const struct record_hdr *req)
{
	struct record_hdr h = { .type = RECORD_RESPONSE, .seq = req->seq, .ts_ns = req->ts_ns };

	f->requests++;
	if (bulk_flush_response(f) > 0) {
		f->resp_dropped++;
		return;
	}
	record_encode(&h, f->resp);
	f->resp_left = RECORD_HDR_LEN;
	if (bulk_flush_response(f) == RECORD_HDR_LEN && f->ssl == NULL) {
		f->resp_left = 0;
		f->resp_dropped++;
	}
}

static void bulk_on_record(struct bulk_flow *f, const struct record_hdr *h)
{
	if (h->type == RECORD_PROBE) {
		bulk_respond(f, h);
	} else if (h->type == RECORD_REQUEST) {
		/* The echo rides in the next record we begin, behind our own unsent data. */
		f->requests++;
		record_writer_tag(&f->w, h->seq, h->ts_ns);
	}
}

/* Feeds stream bytes to the flow's parser; -1 if the stream is corrupt. */
static int bulk_parse(struct bulk_flow *f, const uint8_t *buf, size_t len)
{
	while (len > 0) {
		struct record_hdr h;
		int got;
		long k = record_parse(&f->rx, buf, len, &h, &got);

		if (k < 0) {
			log_debug("session %llu: flow %u sent a corrupt record stream",
				  (unsigned long long)f->sess->id, f->flow_id);
			return -1;
		}
		buf += k;
		len -= (size_t)k;
		if (got)
			bulk_on_record(f, &h);
	}
	return 0;
}

/* Download flows read only the client's 16-byte requests. 0, or -1 after closing f. */
static int bulk_read_requests(struct bulk_flow *f)
{
	ssize_t n = recv(f->fd, bulk_scratch, BULK_REQ_READ, 0);

	if (n > 0)
		f->active_ns = clock_mono_ns();
	if (n > 0 && bulk_parse(f, bulk_scratch, (size_t)n) == 0)
		return 0;
	if (n < 0 && bulk_would_block())
		return 0;
	/* The client closes download flows at the end of its phase: this is normal. */
	if (n <= 0)
		log_debug("session %llu: download flow %u ended", (unsigned long long)f->sess->id,
			  f->flow_id);
	bulk_close(f);
	return -1;
}

static void bulk_send(struct bulk_flow *f)
{
	struct iovec iov[BULK_IOV];
	struct msghdr mh = { .msg_iov = iov };
	ssize_t n;

	mh.msg_iovlen = record_writer_iov(&f->w, iov, BULK_IOV, BULK_CHUNK);
	n = sendmsg(f->fd, &mh, MSG_NOSIGNAL);
	if (n > 0) {
		(void)record_writer_sent(&f->w, (size_t)n);
		f->sess->down_tx_bytes += (uint64_t)n;
		f->active_ns = clock_mono_ns();
		return;
	}
	if (n < 0 && bulk_would_block())
		return;
	log_debug("session %llu: download flow %u ended", (unsigned long long)f->sess->id,
		  f->flow_id);
	bulk_close(f);
}

static void bulk_send_callback(evutil_socket_t fd, short what, void *arg)
{
	struct bulk_flow *f = arg;

	if ((what & EV_READ) && bulk_read_requests(f) < 0)
		return;
	if (what & EV_WRITE)
		bulk_send(f);
}

/* Bytes a sink may read now: all it can hold, or what the session's upload bucket allows
 * under max-rate (0: stop reading until the next tick; the client's sender then sees the
 * receive window close, and reports its uploads receive-window limited). */
static size_t bulk_sink_allowance(struct bulk_flow *f, int64_t now)
{
	double avail;

	if (f->sess->max_rate_bps == 0)
		return BULK_CHUNK;
	avail = limits_bucket_avail(&f->sess->up_bucket, now);
	if (avail < 1)
		return 0;
	return avail < (double)BULK_CHUNK ? (size_t)avail : BULK_CHUNK;
}

static void bulk_sink_callback(evutil_socket_t fd, short what, void *arg)
{
	struct bulk_flow *f = arg;

	(void)bulk_flush_response(f);
	for (int i = 0; i < 4; i++) { /* bounded: let other flows and timers run */
		int64_t now = clock_mono_ns();
		size_t want = bulk_sink_allowance(f, now);
		ssize_t n;

		if (want == 0) {
			/* bulk_limits_tick adds the event again. */
			if (event_del(f->ev) == 0)
				f->throttled = 1;
			return;
		}
		n = recv(fd, bulk_scratch, want, 0);
		if (n > 0) {
			f->active_ns = now;
			if (f->sess->max_rate_bps > 0)
				limits_bucket_charge(&f->sess->up_bucket, now, (double)n);
			f->sess->up_rx_bytes += (uint64_t)n;
			if (bulk_parse(f, bulk_scratch, (size_t)n) < 0) {
				bulk_close(f);
				return;
			}
			continue;
		}
		if (n < 0 && bulk_would_block())
			return;
		log_debug("session %llu: upload flow %u ended", (unsigned long long)f->sess->id,
			  f->flow_id);
		bulk_close(f);
		return;
	}
}

/* TLS: more plaintext may wait inside the TLS layer (its read-ahead) than the socket shows:
 * come back to it after the other events had their turn. */
static void bulk_tls_kick(struct bulk_flow *f)
{
	if ((f->rd_wants & EV_READ) && SSL_has_pending(f->ssl))
		event_active(f->ev, EV_READ, 0);
}

/* TLS download: the client's requests. 0, or -1 after closing f. */
static int bulk_tls_read_requests(struct bulk_flow *f)
{
	for (int i = 0; i < 16; i++) {
		size_t n;
		enum tls_io r = tls_read_nb(f->ssl, bulk_scratch, BULK_REQ_READ, &n);

		if (r == TLS_IO_OK) {
			f->rd_wants = EV_READ;
			f->active_ns = clock_mono_ns();
			if (bulk_parse(f, bulk_scratch, n) < 0) {
				bulk_close(f);
				return -1;
			}
			continue;
		}
		f->rd_wants = bulk_tls_wants(r);
		if (f->rd_wants)
			return 0;
		log_debug("session %llu: download flow %u ended", (unsigned long long)f->sess->id,
			  f->flow_id);
		bulk_close(f);
		return -1;
	}
	bulk_tls_kick(f);
	return 0;
}

/* TLS download: like the plain sendmsg, up to BULK_CHUNK bytes while the socket takes them
 * (TCP_NOTSENT_LOWAT keeps the kernel's unsent part small; ours is at most one TLS record, an
 * echo waiting for the next one). Goodput counts application bytes. 0, or -1 after closing f. */
static int bulk_tls_send(struct bulk_flow *f)
{
	size_t moved;
	enum tls_io r = tls_tx_send(f->ssl, &f->tx, &f->w, BULK_CHUNK, &moved);

	f->sess->down_tx_bytes += (uint64_t)moved;
	if (moved > 0)
		f->active_ns = clock_mono_ns();
	/* WANT_READ: wait for readability (not writability) before the retry. */
	f->wr_wants = r == TLS_IO_OK ? EV_WRITE : bulk_tls_wants(r);
	if (f->wr_wants)
		return 0;
	log_debug("session %llu: download flow %u ended", (unsigned long long)f->sess->id,
		  f->flow_id);
	bulk_close(f);
	return -1;
}

static void bulk_tls_send_callback(evutil_socket_t fd, short what, void *arg)
{
	struct bulk_flow *f = arg;

	if ((what & f->rd_wants) && bulk_tls_read_requests(f) < 0)
		return;
	if ((what & f->wr_wants) && bulk_tls_send(f) < 0)
		return;
	bulk_watch(f);
	if (f->failed)
		bulk_close(f);
}

/* TLS upload: reads records within the session's max-rate allowance, as the plain sink. */
static void bulk_tls_sink_callback(evutil_socket_t fd, short what, void *arg)
{
	struct bulk_flow *f = arg;
	size_t got = 0;

	if (what & f->wr_wants)
		(void)bulk_flush_response(f);
	while (!f->failed && (what & f->rd_wants) && got < 4 * BULK_CHUNK) {
		int64_t now = clock_mono_ns();
		size_t want = bulk_sink_allowance(f, now), n;
		enum tls_io r;

		if (want == 0) {
			/* bulk_limits_tick adds the event again. */
			if (event_del(f->ev) == 0)
				f->throttled = 1;
			return;
		}
		r = tls_read_nb(f->ssl, bulk_scratch, want, &n);
		if (r != TLS_IO_OK) {
			f->rd_wants = bulk_tls_wants(r);
			if (f->rd_wants)
				break;
			log_debug("session %llu: upload flow %u ended", (unsigned long long)f->sess->id,
				  f->flow_id);
			bulk_close(f);
			return;
		}
		f->rd_wants = EV_READ;
		f->active_ns = now;
		got += n;
		if (f->sess->max_rate_bps > 0)
			limits_bucket_charge(&f->sess->up_bucket, now, (double)n);
		f->sess->up_rx_bytes += (uint64_t)n;
		if (bulk_parse(f, bulk_scratch, n) < 0) {
			bulk_close(f);
			return;
		}
	}
	if (got >= 4 * BULK_CHUNK)
		bulk_tls_kick(f);
	bulk_watch(f);
	if (f->failed)
		bulk_close(f);
}

/* Sets the session's congestion control on a load socket; counts failures for the report. One
 * the welcome said this server cannot set (not available here, server/sessionlife.c) is not
 * tried: it fails on every flow. */
static void bulk_set_cc(struct bulk_flow *f)
{
	if (f->sess->cc[0] == '\0')
		return;
	if (!f->sess->cc_ok) {
		f->sess->cc_failures++;
		return;
	}
	if (sock_set_cc(f->fd, f->sess->cc) < 0) {
		f->sess->cc_failures++;
		log_debug("session %llu: cannot set %s on flow %u: %s",
			  (unsigned long long)f->sess->id, f->sess->cc, f->flow_id, strerror(errno));
	}
}

/* Sets a new TLS flow up: its settings, the sender's plaintext buffer, what its event waits
 * for first. 0 or -1. */
static int bulk_tls_init(struct bulk_flow *f)
{
	int up = f->dir == WIRE_DIR_UP;

	tls_bulk_tune(f->ssl);
	f->rd_wants = EV_READ;
	f->wr_wants = up ? 0 : EV_WRITE;
	f->events = f->rd_wants | f->wr_wants;
	if (!up && tls_tx_init(&f->tx) < 0)
		return -1;
	return 0;
}

/* A TLS flow joined its session: counted, with whether the kernel took over its records
 * (server.c asked OpenSSL for kernel TLS; /metrics shows how often it got it). */
static void bulk_count_tls(struct server_ctx *srv, SSL *ssl)
{
	struct tls_conn_info ti;

	tls_conn_info(ssl, &ti);
	atomic_fetch_add(&srv->counters.tls_flows, 1);
	atomic_fetch_add(&srv->counters.tls_flows_ktls_send, ti.ktls_send != 0);
	atomic_fetch_add(&srv->counters.tls_flows_ktls_recv, ti.ktls_recv != 0);
}

int bulk_attach_ssl(struct session *sess, int fd, SSL *ssl, const struct wire_data_hello *h,
		    const uint8_t *pre, size_t prelen)
{
	struct bulk_flow *f;
	int up = h->dir == WIRE_DIR_UP;
	event_callback_fn cb;

	if (bulk_thread_ready() < 0) {
		log_warnx("session %llu: load flow refused: no memory for its scratch",
			  (unsigned long long)sess->id);
		SSL_free(ssl);
		close(fd);
		return -1;
	}
	if (sess->tls_load && ssl == NULL)
		log_debug("session %llu: plain data connection refused (the session asked for a TLS "
			  "load)", (unsigned long long)sess->id);
	f = sess->state != SESS_ACTIVE || sess->nflows[up] >= sess->srv->cfg->max_flows ||
			    (sess->tls_load && ssl == NULL)
		    ? NULL : calloc(1, sizeof(*f));
	if (f == NULL) {
		SSL_free(ssl);
		close(fd);
		return -1;
	}
	f->ssl = ssl;
	f->fd = fd;
	f->active_ns = clock_mono_ns();
	f->dir = h->dir;
	f->flow_id = h->flow_id;
	f->sess = sess;
	record_parser_init(&f->rx, up ? RECORD_STREAM_UP : RECORD_STREAM_REQUESTS);
	record_writer_init(&f->w, RECORD_ECHO, bulk_payload, sizeof(bulk_payload));
	/* Until the first tune knows the rate, the small records of a slow flow. */
	record_writer_set_size(&f->w, RECORD_SIZE_MIN);
	bulk_set_cc(f);
	if (!up && sock_set_notsent_lowat(fd, BULK_LOWAT_MIN) < 0)
		log_debug("TCP_NOTSENT_LOWAT: %s", strerror(errno));
	if (ssl)
		cb = up ? bulk_tls_sink_callback : bulk_tls_send_callback;
	else
		cb = up ? bulk_sink_callback : bulk_send_callback;
	/* Download flows also read: the client's requests come back on them. */
	f->ev = event_new(sess->base, fd, (up ? EV_READ : EV_READ | EV_WRITE) | EV_PERSIST, cb, f);
	if (f->ev == NULL || (ssl && bulk_tls_init(f) < 0) || event_add(f->ev, NULL) < 0) {
		if (f->ev)
			event_free(f->ev);
		SSL_free(ssl);
		tls_tx_free(&f->tx);
		close(fd);
		free(f);
		return -1;
	}
	if (ssl)
		bulk_count_tls(sess->srv, ssl);
	if (up)
		sess->up_rx_bytes += prelen;
	f->next = sess->flows;
	sess->flows = f;
	sess->nflows[up]++;
	if (!up)
		bulk_pace(sess);
	if (bulk_parse(f, pre, prelen) < 0) {
		bulk_close(f);
		return -1;
	}
	/* The TLS layer may already hold stream bytes (decrypted or read ahead at hand-over). */
	if (ssl)
		event_active(f->ev, EV_READ, 0);
	return 0;
}

void bulk_down_totals(const struct session *sess, struct tcp_totals *t, uint32_t *srtt_us)
{
	uint64_t sum = 0, n = 0;

	*t = sess->down_closed;
	for (const struct bulk_flow *f = sess->flows; f; f = f->next) {
		struct sock_tcp_stats ti;

		if (f->dir != WIRE_DIR_DOWN || sock_tcp_info(f->fd, &ti) < 0)
			continue;
		sock_tcp_totals_add_stats(&ti, t);
		if (ti.rtt_us > 0) {
			sum += ti.rtt_us;
			n++;
		}
	}
	*srtt_us = n > 0 ? (uint32_t)(sum / n) : 0;
}

void bulk_tune(struct session *sess)
{
	for (struct bulk_flow *f = sess->flows; f; f = f->next) {
		struct sock_tcp_stats ti;

		if (f->dir != WIRE_DIR_DOWN)
			continue;
		(void)sock_tune_notsent_lowat(f->fd);
		if (sock_tcp_info(f->fd, &ti) == 0)
			record_writer_set_size(&f->w, record_size_for_rate(ti.delivery_rate));
	}
}

void bulk_limits_tick(struct session *sess, int64_t now_ns)
{
	int64_t idle = (int64_t)sess->srv->cfg->idle_timeout_s * NS_PER_SEC;
	struct bulk_flow *f, *next;

	for (f = sess->flows; f; f = next) {
		next = f->next; /* closing f re-paces the others but frees only f */
		if (now_ns - f->active_ns > idle) {
			atomic_fetch_add(&sess->srv->counters.flows_idle, 1);
			log_debug("session %llu: %s flow %u idle for %d s, closed",
				  (unsigned long long)sess->id, f->dir == WIRE_DIR_UP ? "upload" : "download",
				  f->flow_id, sess->srv->cfg->idle_timeout_s);
			bulk_close(f);
			continue;
		}
		if (f->throttled) {
			f->throttled = 0;
			if (event_add(f->ev, NULL) < 0)
				bulk_close(f);
			else if (f->ssl)
				bulk_tls_kick(f);
		}
	}
}

/* loadgen: one process that holds N probe-only sessions against one bloatmeterd, each sending
 * UDP probes at a fixed rate, and prints what the daemon did with them: sessions held, the
 * reflector's hold time (server send − server receive stamps in every reply), loss, and with
 * -P the daemon's CPU and RSS. A benchmark: it prints figures and asserts nothing.
 *
 * It speaks the real protocol with the client's own code: the TCP connect and hello/welcome
 * handshake of client/run/ctrl.c, control frames through common/frame.c (the 100 ms stats are
 * read and parsed, a `bye` ends each session and its final stats are awaited), probe packets
 * through common/wire.c, replies checked by probes/udp.c's udp_probe_reply_valid. Unlike the
 * client it shares one UDP socket among all sessions and sends with sendmmsg/recvmmsg, so that
 * on a small host the generator's own CPU time stays well below the daemon's. The probes of
 * all sessions are spread evenly over each interval (session i's k-th probe leaves at
 * t0 + k·interval + i·interval/N), as independent clients would be.
 *
 * Usage: loadgen -p PORT -n N [-H HOST] [-r PROBES_PER_S] [-w WARMUP_S] [-t SECONDS]
 *                [-s SIZE] [-P DAEMON_PID] [-T]
 * -T prints the table's header line first. Output: a few lines of detail and one table row. */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "client/run/ctrl.h"
#include "common/clock.h"
#include "common/frame.h"
#include "common/sock.h"
#include "common/wire.h"
#include "probes/udp.h"
#include "tests/bench/procstat.h"

#define LG_BATCH 64                   /* datagrams per sendmmsg / recvmmsg */
#define LG_SLOT_NS (100 * 1000)       /* the sender wakes at most every 100 µs */
#define LG_HANDSHAKE_MS 5000
#define LG_BYE_WAIT_MS 5000
#define LG_RCVBUF (8 << 20)

struct lg_opts {
	const char *host;
	uint16_t port;
	int n;
	int rate;
	int warmup_s;
	int secs;
	size_t size;
	int pid;
	int header;
};

struct lg_session {
	uint8_t token[WIRE_TOKEN_LEN];
	struct bufferevent *ctrl;
	_Atomic uint32_t nsent;       /* probes sent so far (the sender thread writes) */
	uint8_t *got;                 /* a bit per sequence number: reply seen (receiver thread) */
	uint64_t stats_rx;            /* stats messages taken */
	int closed;                   /* its control connection ended */
	int final;                    /* its final stats arrived (after bye) */
	int bye;                      /* bye sent: a close from then on is the normal end */
	char why[160];                /* why it ended early: the server's error or a frame error */
};

struct loadgen {
	struct lg_opts o;
	struct sockaddr_storage srv;
	socklen_t srvlen;
	int udp_fd;
	struct lg_session *s;
	int n;                        /* sessions held (welcomed) */
	uint16_t udp_port;            /* the reflector's, from the welcome */
	int *hash;                    /* token → session index, open addressing, −1 empty */
	uint32_t hmask;
	struct event_base *base;
	int64_t t0;                   /* the probe schedule's origin */
	uint32_t nprobes;             /* probes per session */
	uint32_t k0, k1;              /* measured window, as sequence numbers [k0, k1) */
	int32_t *hold;                /* hold ns per (k − k0)·n + i; −1 = no reply */
	atomic_int stop;
	atomic_uint_fast64_t replies, bad, dups, late, send_err;
	atomic_uint_fast32_t ovfl;    /* datagrams the kernel dropped at our socket (SO_RXQ_OVFL) */
	struct procstat_sample d0, d1; /* the daemon at the window's start and end */
	int64_t w0_ns, w1_ns;
	struct event *timer[3];       /* window start, window end, bye wait */
	double lg_cpu0, lg_cpu1;      /* this process's CPU seconds at the same points */
};

static void lg_usage(void)
{
	fprintf(stderr, "usage: loadgen -p PORT -n N [-H HOST] [-r PROBES_PER_S] [-w WARMUP_S] "
		"[-t SECONDS] [-s SIZE] [-P DAEMON_PID] [-T]\n");
	exit(2);
}

static void lg_parse(int argc, char **argv, struct lg_opts *o)
{
	int c;

	*o = (struct lg_opts){ .host = "127.0.0.1", .rate = 100, .warmup_s = 3, .secs = 20,
			       .size = WIRE_PROBE_MIN };
	while ((c = getopt(argc, argv, "H:p:n:r:w:t:s:P:T")) != -1) {
		switch (c) {
		case 'H': o->host = optarg; break;
		case 'p': o->port = (uint16_t)atoi(optarg); break;
		case 'n': o->n = atoi(optarg); break;
		case 'r': o->rate = atoi(optarg); break;
		case 'w': o->warmup_s = atoi(optarg); break;
		case 't': o->secs = atoi(optarg); break;
		case 's': o->size = (size_t)atoi(optarg); break;
		case 'P': o->pid = atoi(optarg); break;
		case 'T': o->header = 1; break;
		default: lg_usage();
		}
	}
	if (o->port == 0 || o->n < 1 || o->n > 100000 || o->rate < 1 || o->rate > 1000 ||
	    o->warmup_s < 0 || o->secs < 1 || o->size < WIRE_PROBE_MIN || o->size > WIRE_PROBE_MAX)
		lg_usage();
}

/* Two descriptors per session are not enough under the usual soft limit of 1024. */
static void lg_raise_nofile(int n)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)n + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		fprintf(stderr, "loadgen: cannot raise RLIMIT_NOFILE: %s\n", strerror(errno));
}

/* ---- token → session ---- */

static uint32_t lg_token_hash(const uint8_t *tok)
{
	uint32_t h;

	memcpy(&h, tok, sizeof(h)); /* tokens are 128 random bits from the server */
	return h;
}

static int lg_hash_init(struct loadgen *lg, int n)
{
	uint32_t cap = 16;

	while (cap < 2u * (uint32_t)n)
		cap <<= 1;
	lg->hash = malloc(cap * sizeof(*lg->hash));
	if (lg->hash == NULL)
		return -1;
	memset(lg->hash, 0xff, cap * sizeof(*lg->hash));
	lg->hmask = cap - 1;
	return 0;
}

static void lg_hash_put(struct loadgen *lg, int idx)
{
	uint32_t h = lg_token_hash(lg->s[idx].token) & lg->hmask;

	while (lg->hash[h] >= 0)
		h = (h + 1) & lg->hmask;
	lg->hash[h] = idx;
}

static struct lg_session *lg_hash_find(struct loadgen *lg, const uint8_t *tok, int *idx)
{
	uint32_t h = lg_token_hash(tok) & lg->hmask;

	for (; lg->hash[h] >= 0; h = (h + 1) & lg->hmask) {
		if (memcmp(lg->s[lg->hash[h]].token, tok, WIRE_TOKEN_LEN) == 0) {
			*idx = lg->hash[h];
			return &lg->s[*idx];
		}
	}
	return NULL;
}

/* ---- control connections ---- */

static void lg_ctrl_read_callback(struct bufferevent *bev, void *arg)
{
	struct lg_session *s = arg;
	struct ctrl_stats st;
	json_object *msg;
	const char *reason;
	char err[128];
	int rc;

	while ((rc = frame_take(bufferevent_get_input(bev), &msg, err, sizeof(err))) == 1) {
		if (ctrl_parse_stats(msg, &st) == 0) {
			s->stats_rx++;
			s->final |= st.final;
		} else if (strcmp(wire_ctrl_type(msg), "error") == 0 &&
			   wire_get_str(msg, "reason", 140, &reason) == 0) {
			snprintf(s->why, sizeof(s->why), "server error: %s", reason);
		}
		json_object_put(msg);
	}
	if (rc < 0 && s->why[0] == '\0')
		snprintf(s->why, sizeof(s->why), "bad frame: %s", err);
}

static void lg_ctrl_event_callback(struct bufferevent *bev, short what, void *arg)
{
	struct lg_session *s = arg;

	if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
		return;
	lg_ctrl_read_callback(bev, arg);
	s->closed = 1;
	if (!s->bye && s->why[0] == '\0')
		snprintf(s->why, sizeof(s->why), "control connection closed by the server");
	bufferevent_disable(bev, EV_READ | EV_WRITE);
}

/* One session: connect, hello/welcome, then its control connection on the event loop. */
static int lg_open_session(struct loadgen *lg, struct lg_session *s, int duration_s)
{
	struct ctrl_welcome welcome, *w = &welcome;
	char err[256];
	int fd = sock_connect_tcp(&lg->srv, lg->srvlen, LG_HANDSHAKE_MS, err, sizeof(err));

	if (fd < 0) {
		fprintf(stderr, "loadgen: session %d: %s\n", lg->n, err);
		return -1;
	}
	if (ctrl_handshake(fd, "cubic", duration_s, LG_HANDSHAKE_MS, w, err, sizeof(err)) < 0) {
		fprintf(stderr, "loadgen: session %d: %s\n", lg->n, err);
		close(fd);
		return -1;
	}
	memcpy(s->token, w->token, WIRE_TOKEN_LEN);
	lg->udp_port = w->udp_port;
	s->ctrl = bufferevent_socket_new(lg->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (s->ctrl == NULL) {
		close(fd);
		return -1;
	}
	bufferevent_setcb(s->ctrl, lg_ctrl_read_callback, NULL, lg_ctrl_event_callback, s);
	return bufferevent_enable(s->ctrl, EV_READ);
}

/* Opens the sessions one after another (a burst would meet the daemon's per-client cap on
 * connections in their hello stage), serving the control connections in between. */
static void lg_open_all(struct loadgen *lg)
{
	int duration_s = lg->o.warmup_s + lg->o.secs + 60;

	for (int i = 0; i < lg->o.n; i++) {
		if (lg_open_session(lg, &lg->s[i], duration_s) < 0)
			break;
		lg_hash_put(lg, i);
		lg->n++;
		(void)event_base_loop(lg->base, EVLOOP_NONBLOCK);
	}
}

/* ---- probes ---- */

static int lg_udp_open(struct loadgen *lg, uint16_t udp_port)
{
	struct sockaddr_storage dst = lg->srv;
	int one = 1, buf = LG_RCVBUF;

	if (dst.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&dst)->sin6_port = htons(udp_port);
	else
		((struct sockaddr_in *)&dst)->sin_port = htons(udp_port);
	lg->udp_fd = socket(dst.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (lg->udp_fd < 0)
		return -1;
	/* A large buffer and the kernel's drop count: a reply dropped here is the generator's
	 * loss, not the daemon's, and is reported apart. */
	if (setsockopt(lg->udp_fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)) < 0)
		(void)setsockopt(lg->udp_fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	(void)setsockopt(lg->udp_fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	if (setsockopt(lg->udp_fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one)) < 0)
		return -1;
	struct timeval tv = { 0, 100 * 1000 }; /* the receiver looks at the stop flag */
	if (setsockopt(lg->udp_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		return -1;
	return connect(lg->udp_fd, (struct sockaddr *)&dst, lg->srvlen);
}

static void lg_sleep_until(int64_t t_ns)
{
	struct timespec ts = { (time_t)(t_ns / NS_PER_SEC), (long)(t_ns % NS_PER_SEC) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* Sends the probes numbered [j, end) of the merged schedule (probe j is session j mod n's
 * sequence number j / n) in one sendmmsg. */
static void lg_send_batch(struct loadgen *lg, uint64_t j, uint64_t end)
{
	static __thread uint8_t buf[LG_BATCH][WIRE_PROBE_MAX];
	struct mmsghdr mm[LG_BATCH];
	struct iovec iov[LG_BATCH];
	int m = 0;

	memset(mm, 0, sizeof(mm));
	for (; j < end; j++, m++) {
		struct lg_session *s = &lg->s[j % (uint64_t)lg->n];
		struct wire_probe p = { .kind = WIRE_PROBE_REQ, .seq = (uint32_t)(j / (uint64_t)lg->n) };

		memcpy(p.token, s->token, WIRE_TOKEN_LEN);
		p.client_send_ns = clock_mono_ns();
		wire_probe_encode(&p, buf[m], lg->o.size);
		/* Counted before it leaves: a reply can be back before sendmmsg returns. */
		atomic_store(&s->nsent, p.seq + 1);
		iov[m] = (struct iovec){ buf[m], lg->o.size };
		mm[m].msg_hdr.msg_iov = &iov[m];
		mm[m].msg_hdr.msg_iovlen = 1;
	}
	for (int done = 0; done < m;) {
		int r = sendmmsg(lg->udp_fd, mm + done, (unsigned)(m - done), 0);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			atomic_fetch_add(&lg->send_err, (uint64_t)(m - done)); /* lost: honest */
			break;
		}
		done += r;
	}
}

/* The sender: every probe due by now, then sleep to the next one (at most every slot). */
static void *lg_sender(void *arg)
{
	struct loadgen *lg = arg;
	uint64_t total = (uint64_t)lg->nprobes * (uint64_t)lg->n, j = 0;
	int64_t gap = NS_PER_SEC / lg->o.rate / lg->n, interval = NS_PER_SEC / lg->o.rate;

	if (gap < 1)
		gap = 1;
	lg_sleep_until(lg->t0);
	while (j < total && !atomic_load(&lg->stop)) {
		int64_t now = clock_mono_ns(), next;
		uint64_t due = (uint64_t)((now - lg->t0) / gap) + 1;

		if (due > total)
			due = total;
		if (j < due && now - (lg->t0 + (int64_t)j * gap) > interval)
			atomic_fetch_add(&lg->late, 1); /* the schedule slipped a whole interval */
		while (j < due) {
			uint64_t end = due - j > LG_BATCH ? j + LG_BATCH : due;

			lg_send_batch(lg, j, end);
			j = end;
		}
		next = lg->t0 + (int64_t)j * gap;
		if (next < now + LG_SLOT_NS)
			next = now + LG_SLOT_NS;
		lg_sleep_until(next);
	}
	return NULL;
}

/* One datagram: a valid reply of one of our sessions, seen for the first time. */
static void lg_take_reply(struct loadgen *lg, const uint8_t *buf, size_t len)
{
	struct wire_probe p;
	struct lg_session *s;
	int idx;

	if (wire_probe_decode(buf, len, &p) < 0 || (s = lg_hash_find(lg, p.token, &idx)) == NULL ||
	    !udp_probe_reply_valid(&p, s->token, atomic_load(&s->nsent), len, lg->o.size) ||
	    p.client_send_ns < lg->t0) {
		atomic_fetch_add(&lg->bad, 1);
		return;
	}
	if (s->got[p.seq / 8] & (1u << (p.seq % 8))) {
		atomic_fetch_add(&lg->dups, 1);
		return;
	}
	s->got[p.seq / 8] |= (uint8_t)(1u << (p.seq % 8));
	atomic_fetch_add(&lg->replies, 1);
	if (p.seq >= lg->k0 && p.seq < lg->k1) {
		int64_t h = p.server_tx_ns - p.server_rx_ns;

		lg->hold[(size_t)(p.seq - lg->k0) * (size_t)lg->n + (size_t)idx] =
			h > INT32_MAX ? INT32_MAX : (int32_t)h;
	}
}

/* The kernel's count of datagrams dropped at this socket so far, from a SO_RXQ_OVFL cmsg. */
static void lg_note_ovfl(struct loadgen *lg, struct msghdr *mh)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		uint32_t v;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SO_RXQ_OVFL ||
		    c->cmsg_len != CMSG_LEN(sizeof(v)))
			continue;
		memcpy(&v, CMSG_DATA(c), sizeof(v));
		if (v > atomic_load(&lg->ovfl))
			atomic_store(&lg->ovfl, v);
	}
}

/* The receiver: batches of replies until told to stop. */
static void *lg_receiver(void *arg)
{
	struct loadgen *lg = arg;
	static __thread uint8_t buf[LG_BATCH][WIRE_PROBE_MAX + 1];
	static __thread char cbuf[LG_BATCH][CMSG_SPACE(sizeof(uint32_t))];
	struct mmsghdr mm[LG_BATCH];
	struct iovec iov[LG_BATCH];

	while (!atomic_load(&lg->stop)) {
		int r;

		for (int m = 0; m < LG_BATCH; m++) {
			iov[m] = (struct iovec){ buf[m], sizeof(buf[m]) };
			mm[m] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[m], .msg_iovlen = 1,
							       .msg_control = cbuf[m],
							       .msg_controllen = sizeof(cbuf[m]) } };
		}
		r = recvmmsg(lg->udp_fd, mm, LG_BATCH, MSG_WAITFORONE, NULL);
		for (int m = 0; m < r; m++) {
			lg_note_ovfl(lg, &mm[m].msg_hdr);
			if (!(mm[m].msg_hdr.msg_flags & MSG_TRUNC))
				lg_take_reply(lg, buf[m], mm[m].msg_len);
		}
	}
	return NULL;
}

/* ---- the run ---- */

static void lg_sample(struct loadgen *lg, struct procstat_sample *d, int64_t *t, double *own)
{
	*t = clock_mono_ns();
	*own = procstat_self_cpu_s();
	if (lg->o.pid > 0 && procstat_read(lg->o.pid, d) < 0)
		memset(d, 0, sizeof(*d));
}

static void lg_window_start_callback(evutil_socket_t fd, short what, void *arg)
{
	struct loadgen *lg = arg;

	lg_sample(lg, &lg->d0, &lg->w0_ns, &lg->lg_cpu0);
}

static void lg_window_end_callback(evutil_socket_t fd, short what, void *arg)
{
	struct loadgen *lg = arg;

	lg_sample(lg, &lg->d1, &lg->w1_ns, &lg->lg_cpu1);
	event_base_loopbreak(lg->base);
}

static void lg_bye_wait_callback(evutil_socket_t fd, short what, void *arg)
{
	struct loadgen *lg = arg;
	int open = 0;

	for (int i = 0; i < lg->n; i++)
		open += !lg->s[i].final && !lg->s[i].closed;
	if (open == 0)
		event_base_loopbreak(lg->base);
}

/* Arms timer slot `slot` (freed by lg_free) to call cb at at_ns, repeatedly with persist. */
static void lg_timer(struct loadgen *lg, int slot, event_callback_fn cb, int64_t at_ns,
		     int persist)
{
	int64_t d = at_ns - clock_mono_ns();
	struct timeval tv = { (time_t)(d > 0 ? d / NS_PER_SEC : 0),
			      (suseconds_t)(d > 0 ? d % NS_PER_SEC / 1000 : 0) };
	struct event *ev = event_new(lg->base, -1, persist ? EV_PERSIST : 0, cb, lg);

	if (ev == NULL || event_add(ev, &tv) < 0) {
		fprintf(stderr, "loadgen: cannot arm a timer\n");
		exit(1);
	}
	lg->timer[slot] = ev;
}

/* Runs the schedule to its end, with the window's samples taken on the event loop. */
static void lg_run(struct loadgen *lg)
{
	pthread_t snd, rcv;
	int64_t interval = NS_PER_SEC / lg->o.rate;

	lg->t0 = clock_mono_ns() + 100 * NS_PER_MS;
	if (pthread_create(&rcv, NULL, lg_receiver, lg) != 0 ||
	    pthread_create(&snd, NULL, lg_sender, lg) != 0) {
		fprintf(stderr, "loadgen: cannot start threads\n");
		exit(1);
	}
	lg_timer(lg, 0, lg_window_start_callback, lg->t0 + (int64_t)lg->k0 * interval, 0);
	lg_timer(lg, 1, lg_window_end_callback, lg->t0 + (int64_t)lg->k1 * interval, 0);
	(void)event_base_dispatch(lg->base);
	(void)pthread_join(snd, NULL);
	/* Late replies of the window's last probes: a second more, then the receiver stops. */
	struct timeval one = { 1, 0 };
	(void)event_base_loopexit(lg->base, &one);
	(void)event_base_dispatch(lg->base);
	atomic_store(&lg->stop, 1);
	(void)pthread_join(rcv, NULL);
}

/* bye on every session still open, then the final stats (or a close), at most LG_BYE_WAIT_MS. */
static void lg_bye_all(struct loadgen *lg)
{
	struct timeval wait = { LG_BYE_WAIT_MS / 1000, 0 };

	for (int i = 0; i < lg->n; i++) {
		struct lg_session *s = &lg->s[i];

		if (s->closed)
			continue;
		s->bye = 1;
		if (frame_put(bufferevent_get_output(s->ctrl), ctrl_bye()) < 0)
			snprintf(s->why, sizeof(s->why), "cannot queue bye");
	}
	lg_timer(lg, 2, lg_bye_wait_callback, clock_mono_ns() + 50 * NS_PER_MS, 1);
	(void)event_base_loopexit(lg->base, &wait);
	(void)event_base_dispatch(lg->base);
}

static int lg_cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

/* The window's hold times: p50, p99, max in µs; returns how many replies it had. */
static size_t lg_hold_figures(struct loadgen *lg, double *p50, double *p99, double *mx)
{
	size_t total = (size_t)(lg->k1 - lg->k0) * (size_t)lg->n, m = 0;

	for (size_t i = 0; i < total; i++)
		if (lg->hold[i] >= 0)
			lg->hold[m++] = lg->hold[i];
	*p50 = *p99 = *mx = 0;
	if (m == 0)
		return 0;
	qsort(lg->hold, m, sizeof(*lg->hold), lg_cmp_i32);
	*p50 = lg->hold[(m - 1) / 2] / 1e3;
	*p99 = lg->hold[(size_t)((double)(m - 1) * 0.99)] / 1e3;
	*mx = lg->hold[m - 1] / 1e3;
	return m;
}

/* Sessions that ended before their bye, with the first reason seen. */
static int lg_lost_sessions(const struct loadgen *lg, const char **why)
{
	int lost = 0;

	*why = "";
	for (int i = 0; i < lg->n; i++) {
		const struct lg_session *s = &lg->s[i];

		if (s->why[0] != '\0' && (!s->bye || !s->final)) {
			if (lost++ == 0)
				*why = s->why;
		}
	}
	return lost;
}

static void lg_print_header(void)
{
	printf("%6s %6s %9s %9s %9s %8s %7s %8s %8s %8s %8s %9s %8s\n", "N", "held", "hold_p50",
	       "hold_p99", "hold_max", "loss_%", "lost", "cpu_%", "idle_MiB", "anon_MiB",
	       "rss_MiB", "KiB/sess", "gen_cpu%");
	printf("%6s %6s %9s %9s %9s %8s %7s %8s %8s %8s %8s %9s %8s\n", "", "", "us", "us", "us",
	       "", "sess", "daemon", "VmRSS", "idle", "held", "", "");
}

static void lg_report(struct loadgen *lg, const struct procstat_sample *idle)
{
	double p50, p99, mx, wall = (double)(lg->w1_ns - lg->w0_ns) / 1e9;
	size_t expect = (size_t)(lg->k1 - lg->k0) * (size_t)lg->n;
	size_t got = lg_hold_figures(lg, &p50, &p99, &mx);
	const char *why;
	int lost = lg_lost_sessions(lg, &why);
	double loss = expect ? 100.0 * (double)(expect - got) / (double)expect : 0;
	double cpu = procstat_cpu_pct(&lg->d0, &lg->d1, wall);
	double per = lg->n ? (double)(lg->d1.rss_kib - idle->rss_kib) / lg->n : 0;

	printf("window %.1f s: %zu probes sent, %zu replies; generator: %llu late sends, %llu send "
	       "errors, %u dropped at its socket, %llu bad and %llu duplicate replies\n",
	       wall, expect, got, (unsigned long long)atomic_load(&lg->late),
	       (unsigned long long)atomic_load(&lg->send_err), (unsigned)atomic_load(&lg->ovfl),
	       (unsigned long long)atomic_load(&lg->bad), (unsigned long long)atomic_load(&lg->dups));
	if (lost)
		printf("sessions lost: %d (first: %s)\n", lost, why);
	if (lg->o.pid > 0) {
		printf("daemon threads over the window (%% of one core):");
		procstat_print_threads(&lg->d0, &lg->d1, wall);
		printf("\ndaemon VmHWM %.1f MiB, fds %d\n", lg->d1.hwm_kib / 1024.0, lg->d1.fds);
	}
	if (lg->o.header)
		lg_print_header();
	printf("%6d %6d %9.0f %9.0f %9.0f %8.3f %7d %8.1f %8.2f %8.2f %8.2f %9.1f %8.1f\n",
	       lg->o.n, lg->n, p50, p99, mx, loss, lost, cpu, idle->rss_kib / 1024.0,
	       idle->anon_kib / 1024.0, lg->d1.rss_kib / 1024.0, per,
	       100 * (lg->lg_cpu1 - lg->lg_cpu0) / wall);
}

static int lg_setup(struct loadgen *lg)
{
	char err[256];
	uint32_t bits;

	lg->s = calloc((size_t)lg->o.n, sizeof(*lg->s));
	lg->base = event_base_new();
	if (lg->s == NULL || lg->base == NULL || lg_hash_init(lg, lg->o.n) < 0)
		return -1;
	if (sock_resolve(lg->o.host, lg->o.port, SOCK_STREAM, &lg->srv, &lg->srvlen, err,
			 sizeof(err)) < 0) {
		fprintf(stderr, "loadgen: %s\n", err);
		return -1;
	}
	lg->k0 = (uint32_t)(lg->o.warmup_s * lg->o.rate);
	lg->k1 = lg->k0 + (uint32_t)(lg->o.secs * lg->o.rate);
	lg->nprobes = lg->k1;
	bits = (lg->nprobes + 7) / 8;
	for (int i = 0; i < lg->o.n; i++)
		if ((lg->s[i].got = calloc(bits, 1)) == NULL)
			return -1;
	lg->hold = malloc((size_t)(lg->k1 - lg->k0) * (size_t)lg->o.n * sizeof(*lg->hold));
	if (lg->hold == NULL)
		return -1;
	memset(lg->hold, 0xff, (size_t)(lg->k1 - lg->k0) * (size_t)lg->o.n * sizeof(*lg->hold));
	return 0;
}

static void lg_free(struct loadgen *lg)
{
	for (int i = 0; i < lg->o.n; i++) {
		if (lg->s[i].ctrl)
			bufferevent_free(lg->s[i].ctrl);
		free(lg->s[i].got);
	}
	free(lg->s);
	free(lg->hash);
	free(lg->hold);
	for (int i = 0; i < 3; i++)
		if (lg->timer[i])
			event_free(lg->timer[i]);
	if (lg->udp_fd >= 0)
		close(lg->udp_fd);
	event_base_free(lg->base);
}

int main(int argc, char **argv)
{
	struct loadgen lg;
	struct procstat_sample idle;
	memset(&lg, 0, sizeof(lg));
	memset(&idle, 0, sizeof(idle));
	lg.udp_fd = -1;
	lg_parse(argc, argv, &lg.o);
	lg_raise_nofile(lg.o.n + 16);
	if (lg_setup(&lg) < 0) {
		fprintf(stderr, "loadgen: out of memory or no event base\n");
		return 1;
	}
	if (lg.o.pid > 0 && procstat_read(lg.o.pid, &idle) < 0) {
		fprintf(stderr, "loadgen: cannot read /proc/%d\n", lg.o.pid);
		return 1;
	}
	int64_t r0 = clock_mono_ns();
	lg_open_all(&lg);
	printf("N=%d: %d sessions opened in %.2f s\n", lg.o.n, lg.n,
	       (double)(clock_mono_ns() - r0) / 1e9);
	if (lg.n == 0 || lg_udp_open(&lg, lg.udp_port) < 0) {
		fprintf(stderr, "loadgen: no session, or no UDP socket: %s\n", strerror(errno));
		return 1;
	}
	lg_run(&lg);
	lg_bye_all(&lg);
	lg_report(&lg, &idle);
	lg_free(&lg);
	return 0;
}

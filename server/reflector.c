/* reflector: receives probe requests with kernel timestamps and answers each valid one
 * with the same number of bytes, adding receive/send times and the session's receive count. */
#include "server/reflector.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/sock.h"
#include "server/fdloop.h"

/* Datagrams per recvmmsg and sendmmsg: a system call per datagram cost most of the thread's
 * time (docs/scale.md), while 32 replies leave within microseconds of each other. */
#define REFLECTOR_MMSG 32

struct reflector {
	struct server_ctx *srv;
	int fd;
	struct fdloop loop;
	/* One batch: requests as received, and the replies (the thread's alone). */
	struct sock_dgram in[REFLECTOR_MMSG], out[REFLECTOR_MMSG];
	uint8_t req[REFLECTOR_MMSG][WIRE_PROBE_MAX + 1];
	uint8_t reply[REFLECTOR_MMSG][WIRE_PROBE_MAX];
};

/* A probe's hold time is mostly the wait for the reflector thread to be scheduled after the
 * packet arrived: under a normal policy it queues behind every runnable thread of the host
 * (the bulk workers, other processes); at a real-time priority it runs at once. Privileges are
 * dropped before any thread starts (server/privdrop.h), so the thread cannot take the policy
 * itself: the calling thread takes it while still privileged (CAP_SYS_NICE, or RLIMIT_RTPRIO
 * from the service unit), the reflector thread inherits it, and the caller returns to the
 * normal policy, which needs no privilege. */
int reflector_rt_begin(int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	int rc;

	if (prio <= 0)
		return 0;
	rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (rc != 0) {
		log_warnx("the reflector runs without real-time priority: %s (reflector-priority %d "
			  "needs root at start-up, or LimitRTPRIO=%d in the service unit)",
			  strerror(rc), prio, prio);
		return -1;
	}
	return 0;
}

/* After the reflector thread inherited the real-time policy: the caller goes back. */
static int reflector_rt_end(void)
{
	struct sched_param sp = { .sched_priority = 0 };
	int rc = pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);

	if (rc != 0) {
		log_error("cannot return the main thread to normal scheduling: %s", strerror(rc));
		return -1;
	}
	return 0;
}

/* Says which policy the thread runs under, once. */
static void reflector_log_policy(void)
{
	struct sched_param sp;
	int policy;

	if (pthread_getschedparam(pthread_self(), &policy, &sp) == 0 && policy == SCHED_FIFO)
		log_info("reflector thread: SCHED_FIFO priority %d", sp.sched_priority);
}

size_t reflector_answer(struct session_table *t, struct server_counters *c, const uint8_t *req,
			size_t len, const struct sockaddr *src, int64_t rx_ns, uint8_t *reply)
{
	struct wire_probe p;
	uint64_t count;
	int ok;

	if (wire_probe_decode(req, len, &p) < 0 || p.kind != WIRE_PROBE_REQ) {
		atomic_fetch_add(&c->udp_bad, 1);
		return 0;
	}
	/* Never answer without a live token from the session's own address: no reflection
	 * attacks, no amplification (the reply is never longer than the request). */
	ok = session_table_count_probe(t, p.token, src, rx_ns, &count);
	if (ok == 0) {
		atomic_fetch_add(&c->udp_unknown, 1);
		return 0;
	}
	/* Over max-probe-rate: the receive time is the bucket's clock (monotonic, and what a
	 * fake clock in a test controls). */
	if (ok < 0) {
		atomic_fetch_add(&c->udp_ratelimited, 1);
		return 0;
	}
	p.kind = WIRE_PROBE_REPLY;
	p.server_rx_ns = rx_ns;
	p.server_rx_count = count;
	p.server_tx_ns = clock_mono_ns();
	wire_probe_encode(&p, reply, len);
	return len;
}

/* Datagrams handled per wake-up, bad ones included: then the thread pauses (server/fdloop.h),
 * so a flood cannot spin it — at a real-time priority, a whole CPU. A batch takes well under
 * a millisecond; legitimate probes (max-probe-rate per session) rarely fill one. */
#define REFLECTOR_BATCH 256

/* Answers one received batch: the replies are built, stamped with one send time right before
 * they leave together, and sent with one call. Returns how many were answers. */
static int reflector_answer_batch(struct reflector *r, int n)
{
	struct server_ctx *srv = r->srv;
	int m = 0, sent;
	int64_t tx;

	for (int i = 0; i < n; i++) {
		struct sock_dgram *in = &r->in[i];
		size_t out;

		if (in->truncated) {
			atomic_fetch_add(&srv->counters.udp_bad, 1);
			continue;
		}
		out = reflector_answer(&srv->table, &srv->counters, in->buf, in->len,
				       (struct sockaddr *)&in->peer, in->rx_mono, r->reply[m]);
		if (out == 0)
			continue;
		r->out[m] = (struct sock_dgram){ .buf = r->reply[m], .len = out, .peer = in->peer,
						 .peerlen = in->peerlen };
		m++;
	}
	if (m == 0)
		return 0;
	/* The send time as late as possible: sendmmsg follows directly. */
	tx = clock_mono_ns();
	for (int j = 0; j < m; j++)
		wire_probe_set_server_tx(r->reply[j], tx);
	sent = sock_send_batch(r->fd, r->out, m);
	if (sent < m)
		log_debug("reflector: %d of %d replies not sent", m - sent, m);
	atomic_fetch_add(&srv->counters.udp_reflected, (uint64_t)sent);
	return m;
}

/* Drains what is queued, REFLECTOR_MMSG at a time, answering each group at once to keep hold
 * time low. After REFLECTOR_BATCH datagrams it returns 1 (fdloop pauses) when most of them
 * went unanswered — a flood of bad, unknown or over-rate datagrams — and 0 (poll again at once)
 * when most were answered probes: those are bounded by max-sessions × max-probe-rate, and
 * pausing on them dropped the probes of 1000 sessions at 100/s each (docs/scale.md). */
static int reflector_drain(void *arg)
{
	struct reflector *r = arg;
	int done = 0, answered = 0;

	while (done < REFLECTOR_BATCH) {
		int n = sock_recv_ts_batch(r->fd, r->in, REFLECTOR_MMSG);

		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				log_debug("reflector recv: %s", strerror(errno));
			return 0;
		}
		answered += reflector_answer_batch(r, n);
		done += n;
		if (n < REFLECTOR_MMSG)
			return 0; /* the queue was empty: back to poll */
	}
	return 2 * answered < done;
}

/* The first thing the thread does. */
static void reflector_begin(void *arg)
{
	/* A name for top -H and /proc/PID/task/TID/comm (tests/integration/workers checks its policy). */
	(void)pthread_setname_np(pthread_self(), "bmd-reflector");
	reflector_log_policy();
}

struct reflector *reflector_start(struct server_ctx *srv, int udp_fd, int rt)
{
	struct reflector *r = calloc(1, sizeof(*r));

	if (r == NULL) {
		close(udp_fd);
		return NULL;
	}
	r->srv = srv;
	r->fd = udp_fd;
	for (int i = 0; i < REFLECTOR_MMSG; i++)
		r->in[i] = (struct sock_dgram){ .buf = r->req[i], .cap = sizeof(r->req[i]) };
	srv->udp_ts_kernel = sock_enable_rx_timestamps(udp_fd) == TS_SRC_KERNEL;
	r->loop = (struct fdloop){ .fd = udp_fd, .name = "reflector", .begin = reflector_begin,
				   .drain = reflector_drain, .arg = r };
	if (fdloop_start(&r->loop) < 0) {
		if (rt)
			(void)reflector_rt_end();
		close(udp_fd);
		free(r);
		return NULL;
	}
	/* The thread has inherited the policy; no thread started from here on may. */
	if (rt && reflector_rt_end() < 0) {
		reflector_stop(r);
		return NULL;
	}
	return r;
}

void reflector_stop(struct reflector *r)
{
	if (r == NULL)
		return;
	fdloop_stop(&r->loop);
	close(r->fd);
	free(r);
}

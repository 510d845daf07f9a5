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

struct reflector {
	struct server_ctx *srv;
	int fd;
	struct fdloop loop;
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

/* Drains what is queued, at most REFLECTOR_BATCH datagrams (then 1); replies immediately, one
 * at a time, to keep hold time low. */
static int reflector_drain(void *arg)
{
	struct reflector *r = arg;
	uint8_t req[WIRE_PROBE_MAX + 1], reply[WIRE_PROBE_MAX];
	struct server_ctx *srv = r->srv;

	for (int i = 0; i < REFLECTOR_BATCH; i++) {
		struct sockaddr_storage peer;
		socklen_t plen;
		int64_t rx;
		enum ts_source src;
		ssize_t n = sock_recv_ts(r->fd, req, sizeof(req), &peer, &plen, &rx, &src);
		size_t out;

		if (n < 0) {
			if (errno == EMSGSIZE) {
				atomic_fetch_add(&srv->counters.udp_bad, 1);
				continue;
			}
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				log_debug("reflector recv: %s", strerror(errno));
			return 0;
		}
		out = reflector_answer(&srv->table, &srv->counters, req, (size_t)n,
				       (struct sockaddr *)&peer, rx, reply);
		if (out == 0)
			continue;
		/* Patch in the send time as late as possible: sendto follows directly. */
		if (sendto(r->fd, reply, out, 0, (struct sockaddr *)&peer, plen) < 0)
			log_debug("reflector send: %s", strerror(errno));
		else
			atomic_fetch_add(&srv->counters.udp_reflected, 1);
	}
	return 1;
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

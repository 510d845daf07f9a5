/* bulk: non-blocking bulk senders and sinks on raw sockets (no bufferevent copies). Senders
 * keep their unsent backlog near rate × 5 ms via TCP_NOTSENT_LOWAT so that the tool itself
 * does not add a queue (as the responsiveness draft asks). */
#include "server/bulk.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/sock.h"
#include "common/util.h"

#define BULK_CHUNK (256 * 1024)
#define BULK_LOWAT_MIN (16 * 1024)

/* Shared read-only payload for senders and scratch space for sinks: the event loop is single
 * threaded, so one buffer each is enough. Filled once with random bytes (incompressible). */
static uint8_t bulk_payload[BULK_CHUNK];
static uint8_t bulk_scratch[BULK_CHUNK];
static int bulk_payload_ready;

static void bulk_unlink(struct bulk_flow *f)
{
	struct bulk_flow **pp = &f->sess->flows;

	while (*pp && *pp != f)
		pp = &(*pp)->next;
	if (*pp)
		*pp = f->next;
	f->sess->nflows[f->dir == WIRE_DIR_UP]--;
}

void bulk_close(struct bulk_flow *f)
{
	if (f->dir == WIRE_DIR_DOWN)
		sock_tcp_totals_add(f->fd, &f->sess->down_closed);
	bulk_unlink(f);
	event_free(f->ev);
	close(f->fd);
	free(f);
}

static void bulk_send_callback(evutil_socket_t fd, short what, void *arg)
{
	struct bulk_flow *f = arg;
	ssize_t n = send(fd, bulk_payload, sizeof(bulk_payload), MSG_NOSIGNAL);

	if (n > 0) {
		f->sess->down_tx_bytes += (uint64_t)n;
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	/* The client closes download flows at the end of its phase: an error here is normal. */
	log_debug("session %llu: download flow %u ended", (unsigned long long)f->sess->id,
		  f->flow_id);
	bulk_close(f);
}

static void bulk_sink_callback(evutil_socket_t fd, short what, void *arg)
{
	struct bulk_flow *f = arg;

	for (int i = 0; i < 4; i++) { /* bounded: let other flows and timers run */
		ssize_t n = recv(fd, bulk_scratch, sizeof(bulk_scratch), 0);

		if (n > 0) {
			f->sess->up_rx_bytes += (uint64_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return;
		log_debug("session %llu: upload flow %u ended", (unsigned long long)f->sess->id,
			  f->flow_id);
		bulk_close(f);
		return;
	}
}

/* Sets the session's congestion control on a load socket; counts failures for the report. */
static void bulk_set_cc(struct bulk_flow *f)
{
	if (f->sess->cc[0] == '\0')
		return;
	if (sock_set_cc(f->fd, f->sess->cc) < 0) {
		f->sess->cc_failures++;
		log_debug("session %llu: cannot set %s on flow %u: %s",
			  (unsigned long long)f->sess->id, f->sess->cc, f->flow_id, strerror(errno));
	}
}

int bulk_attach(struct session *sess, int fd, const struct wire_data_hello *h, size_t prelen)
{
	struct bulk_flow *f;
	int up = h->dir == WIRE_DIR_UP;

	if (!bulk_payload_ready) {
		if (util_random(bulk_payload, sizeof(bulk_payload)) < 0)
			memset(bulk_payload, 0xa5, sizeof(bulk_payload));
		bulk_payload_ready = 1;
	}
	if (sess->state != SESS_ACTIVE || sess->nflows[up] >= sess->srv->cfg->max_flows) {
		close(fd);
		return -1;
	}
	f = calloc(1, sizeof(*f));
	if (f == NULL) {
		close(fd);
		return -1;
	}
	f->fd = fd;
	f->dir = h->dir;
	f->flow_id = h->flow_id;
	f->sess = sess;
	bulk_set_cc(f);
	if (!up && sock_set_notsent_lowat(fd, BULK_LOWAT_MIN) < 0)
		log_debug("TCP_NOTSENT_LOWAT: %s", strerror(errno));
	f->ev = event_new(sess->srv->base, fd, (up ? EV_READ : EV_WRITE) | EV_PERSIST,
			  up ? bulk_sink_callback : bulk_send_callback, f);
	if (f->ev == NULL || event_add(f->ev, NULL) < 0) {
		if (f->ev)
			event_free(f->ev);
		close(fd);
		free(f);
		return -1;
	}
	if (up)
		sess->up_rx_bytes += prelen;
	f->next = sess->flows;
	sess->flows = f;
	sess->nflows[up]++;
	return 0;
}

void bulk_down_totals(const struct session *sess, struct tcp_totals *t)
{
	*t = sess->down_closed;
	for (const struct bulk_flow *f = sess->flows; f; f = f->next)
		if (f->dir == WIRE_DIR_DOWN)
			sock_tcp_totals_add(f->fd, t);
}

void bulk_tune(struct session *sess)
{
	for (struct bulk_flow *f = sess->flows; f; f = f->next)
		if (f->dir == WIRE_DIR_DOWN)
			(void)sock_tune_notsent_lowat(f->fd);
}

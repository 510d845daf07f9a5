/* fuzz_control: the server's whole control-channel state machine — the hello stage
 * (server/hello.c: hello, with a psk-file the challenge and auth), admission, the session's
 * life (server/sessionlife.c: summary, bye, anything else) and the closing reply
 * (server/ctrlmsg.c) — driven by frames in any order on up to three connections at once, over
 * in-memory bufferevent pairs instead of sockets. Per input: a fresh server context (one
 * worker on this thread, as workers = 1), the connections handed to hello_start as the accept
 * stage would, the input's records fed one by one with a pass of the event loop after each,
 * then every connection closed and the context torn down as server.c does at exit.
 * Checked: nothing crashes or leaks (ASan), every place (sessions, lingering closes, the
 * token table) is given back, and every byte the server sent is a well-formed frame of a
 * type the protocol lets it send.
 *
 * Input: byte 0 the set-up (bit 0: psk-file set; bit 1: max-sessions 1, else 4, and 1 per
 * client; bits 2-3: connections, 1 + value mod 3), then records: an op byte (bits 0-1: the
 * connection, mod their number; bits 2-3: 0 raw bytes with a 1-byte length, 1 a frame with a
 * 2-byte big-endian body length (the header is added), 2 the client closes its end, 3 raw
 * bytes with a 2-byte length). tests/fuzz/fuzz_seeds.c writes seeds of this form. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <json-c/json.h>

#include "common/auth.h"
#include "common/clock.h"
#include "common/frame.h"
#include "common/log.h"
#include "common/wire.h"
#include "server/accept.h"
#include "server/ctx.h"
#include "server/hello.h"
#include "server/sessionlife.h"
#include "server/srvconfig.h"
#include "server/testring.h"
#include "server/worker.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CONNS 3

/* One client end: its bufferevent (NULL once closed) and everything the server sent it. */
struct fuzz_conn {
	struct bufferevent *bev;
	struct evbuffer *got;
};

static const struct worker_ops fuzz_worker_ops = {
	.run = accept_job_run,
	.drop = accept_job_drop,
	.shutdown = sessionlife_shutdown_all,
};

/* The keys of a psk-file with one key, loaded once (auth_load_keys reads a file). */
static struct auth_keys *fuzz_psk(void)
{
	static struct auth_keys keys;
	static int loaded;
	char path[] = "/tmp/fuzz_control_psk_XXXXXX", err[256];
	const char *line =
		"fuzz 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n";
	int fd;

	if (loaded)
		return &keys;
	fd = mkstemp(path);
	if (fd < 0 || fchmod(fd, 0600) < 0 || write(fd, line, strlen(line)) != (ssize_t)strlen(line) ||
	    auth_load_keys(path, AUTH_MAX_KEYS, &keys, err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_control: cannot load a key: %s\n", err);
		abort();
	}
	close(fd);
	unlink(path);
	loaded = 1;
	return &keys;
}

static void fuzz_client_read(struct bufferevent *bev, void *arg)
{
	struct fuzz_conn *c = arg;

	evbuffer_add_buffer(c->got, bufferevent_get_input(bev));
}

static void fuzz_client_event(struct bufferevent *bev, short what, void *arg)
{
}

/* Everything the server sent c is whole frames (a partial one last at most) of the types it
 * may send. */
static void fuzz_check_replies(struct fuzz_conn *c)
{
	static const char *const types[] = { "welcome", "error", "busy", "challenge", "stats" };
	json_object *msg;
	char err[128];
	int rc, known;

	while ((rc = frame_take(c->got, &msg, err, sizeof(err))) == 1) {
		known = 0;
		for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			known |= strcmp(wire_ctrl_type(msg), types[i]) == 0;
		json_object_put(msg);
		if (!known)
			abort();
	}
	if (rc < 0)
		abort(); /* the server sent a malformed frame */
}

static void fuzz_loop(struct event_base *base)
{
	for (int i = 0; i < 3; i++)
		(void)event_base_loop(base, EVLOOP_NONBLOCK);
}

/* The client closes its end: the server's end sees EOF. */
static void fuzz_close(struct fuzz_conn *c)
{
	if (c->bev == NULL)
		return;
	(void)bufferevent_flush(c->bev, EV_WRITE, BEV_FINISHED);
	fuzz_loop(bufferevent_get_base(c->bev));
	fuzz_client_read(c->bev, c);
	bufferevent_free(c->bev);
	c->bev = NULL;
}

/* Feeds the records after the set-up byte; returns when they run out. */
static void fuzz_records(struct event_base *base, struct fuzz_conn *conns, int n,
			 const uint8_t *p, size_t size)
{
	while (size > 0) {
		struct fuzz_conn *c = &conns[(p[0] & 3) % n];
		int act = (p[0] >> 2) & 3;
		size_t hdr = act == 0 ? 2 : 3, len;
		uint8_t frame_hdr[WIRE_CTRL_HDR];

		if (act == 2) {
			fuzz_close(c);
			p++, size--;
			continue;
		}
		if (size < hdr)
			return;
		len = act == 0 ? p[1] : ((size_t)p[1] << 8 | p[2]);
		p += hdr, size -= hdr;
		if (len > size)
			len = size;
		if (c->bev != NULL) {
			if (act == 1) {
				frame_hdr[0] = frame_hdr[1] = 0;
				frame_hdr[2] = (uint8_t)(len >> 8);
				frame_hdr[3] = (uint8_t)len;
				(void)bufferevent_write(c->bev, frame_hdr, sizeof(frame_hdr));
			}
			(void)bufferevent_write(c->bev, p, len);
		}
		p += len, size -= len;
		fuzz_loop(base);
	}
}

static int fuzz_lock_init(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;
	int rc;

	if (pthread_mutexattr_init(&a) != 0)
		return -1;
	rc = pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE) == 0 &&
	     pthread_mutex_init(m, &a) == 0 ? 0 : -1;
	pthread_mutexattr_destroy(&a);
	return rc;
}

/* A fresh context: configuration from the set-up byte, the loop, one worker on it. */
static void fuzz_srv_init(struct server_ctx *srv, struct server_config *cfg, uint8_t setup)
{
	static struct testring ring;

	srvconfig_defaults(cfg);
	cfg->max_sessions = setup & 2 ? 1 : 4;
	cfg->max_sessions_per_client = 1;
	memset(srv, 0, sizeof(*srv));
	srv->cfg = cfg;
	srv->tests = &ring;
	srv->psk = setup & 1 ? fuzz_psk() : NULL;
	srv->start_ns = clock_mono_ns();
	if (fuzz_lock_init(&srv->lock) < 0 || session_table_init(&srv->table, cfg->max_sessions) < 0 ||
	    (srv->base = event_base_new()) == NULL ||
	    (srv->workers = worker_pool_start(srv, srv->base, 1, &fuzz_worker_ops)) == NULL)
		abort();
}

/* As server.c stops: the workers, the sessions, what the worker still lists; then checks
 * that every place was given back. */
static void fuzz_srv_free(struct server_ctx *srv)
{
	worker_pool_stop(srv->workers);
	sessionlife_close_all(srv);
	accept_close_main(srv);
	worker_pool_free(srv->workers);
	if (srv->sessions != NULL || srv->nsessions != 0 || srv->nlingering != 0 ||
	    srv->npending != 0)
		abort();
	for (int i = 0; i < srv->table.cap; i++)
		if (srv->table.e[i].used)
			abort();
	session_table_free(&srv->table);
	event_base_free(srv->base);
	pthread_mutex_destroy(&srv->lock);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct server_ctx srv;
	struct server_config cfg;
	struct fuzz_conn conns[FUZZ_CONNS];
	struct sockaddr_in peer = { .sin_family = AF_INET, .sin_port = htons(40000) };
	int n;

	if (size < 1)
		return 0;
	log_init("fuzz_control", LOG_LVL_ERROR);
	fuzz_srv_init(&srv, &cfg, data[0]);
	n = 1 + ((data[0] >> 2) & 3) % FUZZ_CONNS;
	inet_pton(AF_INET, "192.0.2.1", &peer.sin_addr);
	for (int i = 0; i < n; i++) {
		struct bufferevent *pair[2];

		if (bufferevent_pair_new(srv.base, BEV_OPT_DEFER_CALLBACKS, pair) < 0 ||
		    (conns[i].got = evbuffer_new()) == NULL)
			abort();
		conns[i].bev = pair[1];
		bufferevent_setcb(pair[1], fuzz_client_read, NULL, fuzz_client_event, &conns[i]);
		bufferevent_enable(pair[1], EV_READ | EV_WRITE);
		bufferevent_enable(pair[0], EV_READ | EV_WRITE);
		/* As the accept stage hands a control connection over (server/accept.c). */
		hello_start(&srv, 0, pair[0], (const struct sockaddr *)&peer, NULL,
			    clock_mono_ns() + 5 * NS_PER_SEC);
	}
	fuzz_records(srv.base, conns, n, data + 1, size - 1);
	for (int i = 0; i < n; i++)
		fuzz_close(&conns[i]);
	fuzz_srv_free(&srv);
	for (int i = 0; i < n; i++) {
		fuzz_check_replies(&conns[i]);
		evbuffer_free(conns[i].got);
	}
	return 0;
}

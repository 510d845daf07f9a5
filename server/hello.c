/* hello: the pending control connection, its authentication, the hello's checks and the
 * welcome, under the deadline and the place under the caps it brought from the accept
 * stage. */
#include "server/hello.h"

#include <stdlib.h>
#include <string.h>

#include <event2/bufferevent_ssl.h>

#include "common/auth.h"
#include "common/clock.h"
#include "common/dns.h"
#include "common/log.h"
#include "common/sock.h"
#include "common/wire.h"
#include "server/admission.h"
#include "server/ctrlmsg.h"
#include "server/pendcap.h"
#include "server/sessionlife.h"
#include "server/worker.h"

/* A control connection before hello: no session yet, so its state is just this. */
struct pending_ctrl {
	struct server_ctx *srv;
	int worker;                   /* whose thread runs it (and the session it becomes) */
	struct bufferevent *bev;      /* its connection, for a close at shutdown */
	struct worker_obj obj;        /* listed on that worker for shutdown */
	struct sockaddr_storage peer;
	struct pendcap_slot *slot;    /* its place under the pending caps until the stage ends */
	struct event *deadline;       /* the accept stage's: the whole exchange ends by then */
	/* With a psk-file (docs/protocol.md, "Authentication"): the hello held until its auth
	 * answer, both nonces, and the key that answered. */
	json_object *hello;
	char snonce[AUTH_NONCE_HEX + 1];
	char cnonce[AUTH_NONCE_HEX + 1];
	const struct auth_key *key;
};

/* Frees pc and gives its place back; its connection has moved on or been freed. */
static void pending_ctrl_free(struct pending_ctrl *pc)
{
	worker_obj_remove(&pc->obj);
	if (pc->deadline)
		event_free(pc->deadline);
	pendcap_release(pc->srv, pc->slot);
	json_object_put(pc->hello);
	free(pc);
}

/* At shutdown: the connection goes too. */
static void pending_ctrl_close(struct worker_obj *o)
{
	struct pending_ctrl *pc = WORKER_OBJ_OF(o, struct pending_ctrl, obj);

	bufferevent_free(pc->bev);
	pending_ctrl_free(pc);
}

/* The hello fields the client's MAC covers, as the hello has them; a hello without valid ones
 * is refused by hello_fields after authentication, as without a psk-file. */
static void hello_auth_fields(json_object *hello, struct auth_hello *h)
{
	const char *cc;
	int64_t d;

	h->cc = wire_get_str(hello, "cc", 15, &cc) == 0 ? cc : "";
	h->duration_s = wire_get_int(hello, "duration_s", 1, 86400, &d) == 0 ? d : 0;
}

/* One answer for every failed authentication (unknown id, wrong MAC, bad auth message), so
 * it tells nothing about which ids exist; counted, the detail only at debug level. */
static void hello_auth_fail(struct pending_ctrl *pc, struct bufferevent *bev, const char *why)
{
	char addr[64];

	atomic_fetch_add(&pc->srv->counters.auth_failed, 1);
	sock_addr_str((struct sockaddr *)&pc->peer, addr, sizeof(addr));
	log_debug("control: authentication from %s failed: %s", addr, why);
	ctrlmsg_fail(pc->srv, bev, AUTH_FAILED_REASON);
	pending_ctrl_free(pc);
}

/* The first hello with a psk-file: held, and answered with a challenge. Consumes hello (pc
 * kept or freed). */
static void hello_challenge(struct pending_ctrl *pc, struct bufferevent *bev, json_object *hello)
{
	if (auth_nonce(pc->snonce) < 0) {
		json_object_put(hello);
		ctrlmsg_fail(pc->srv, bev, "server cannot create a session now");
		pending_ctrl_free(pc);
		return;
	}
	pc->hello = hello;
	if (ctrlmsg_send(bev, auth_challenge_new(pc->snonce)) < 0) {
		bufferevent_free(bev);
		pending_ctrl_free(pc);
	}
}

/* The client's answer to the challenge: 0 when it proves a key (pc->key), or -1 after the
 * refusal (pc freed). Consumes msg. */
static int hello_verify(struct pending_ctrl *pc, struct bufferevent *bev, json_object *msg)
{
	struct auth_response r;
	struct auth_hello h;

	if (auth_response_parse(msg, &r) < 0) {
		json_object_put(msg);
		hello_auth_fail(pc, bev, "no valid auth message");
		return -1;
	}
	json_object_put(msg);
	hello_auth_fields(pc->hello, &h);
	pc->key = auth_verify_response(pc->srv->psk, pc->snonce, &h, &r);
	if (pc->key == NULL) {
		hello_auth_fail(pc, bev, auth_keys_find(pc->srv->psk, r.id) ? "wrong MAC"
									: "unknown key id");
		return -1;
	}
	log_debug("control: authenticated with key %s", pc->key->id);
	memcpy(pc->cnonce, r.cnonce, sizeof(pc->cnonce));
	return 0;
}

/* psk-file set: hello → challenge, auth → (verified) the held hello goes on to the welcome.
 * Returns 1 with *msg the hello to handle as usual (or, before any hello, the message that
 * came instead, for the usual refusal); 0 when this consumed *msg (pc kept or freed). */
static int hello_auth(struct pending_ctrl *pc, struct bufferevent *bev, json_object **msg)
{
	if (pc->hello == NULL) {
		if (strcmp(wire_ctrl_type(*msg), "hello") != 0)
			return 1;
		hello_challenge(pc, bev, *msg);
		*msg = NULL;
		return 0;
	}
	if (hello_verify(pc, bev, *msg) < 0) {
		*msg = NULL;
		return 0;
	}
	*msg = pc->hello;
	pc->hello = NULL;
	return 1;
}

/* With a key: the welcome proves that the server holds it too; the client refuses a welcome
 * without this proof, so removing the challenge on the path gains nothing. */
static void hello_auth_welcome(const struct pending_ctrl *pc, json_object *w, const char *token_hex)
{
	char mac[AUTH_MAC_HEX + 1];

	if (pc->key != NULL && auth_server_mac(pc->key, pc->snonce, pc->cnonce, token_hex, mac) == 0)
		json_object_object_add(w, "server_mac", json_object_new_string(mac));
}

/* Checks a hello's fields; 0, or -1 after an error reply. */
static int hello_fields(struct server_ctx *srv, struct bufferevent *bev, json_object *msg,
			const char **cc, int64_t *duration)
{
	if (wire_get_str(msg, "cc", 15, cc) < 0 ||
	    wire_get_int(msg, "duration_s", 1, 86400, duration) < 0) {
		atomic_fetch_add(&srv->counters.ctrl_bad, 1);
		ctrlmsg_fail(srv, bev, "hello needs cc (string) and duration_s (1..86400)");
		return -1;
	}
	for (const char *c = *cc; *c; c++) {
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_')) {
			atomic_fetch_add(&srv->counters.ctrl_bad, 1);
			ctrlmsg_fail(srv, bev, "invalid congestion control name");
			return -1;
		}
	}
	return 0;
}

/* The hello's optional tls_load (docs/protocol.md, "TLS load"): the session's data
 * connections must then run TLS. 0, or -1 after an error reply when this server has no
 * certificate to offer them. */
static int hello_tls_load(struct server_ctx *srv, struct bufferevent *bev, json_object *msg,
			  int *tls_load)
{
	if (wire_get_bool(msg, "tls_load", tls_load) < 0)
		*tls_load = 0;
	if (*tls_load && srv->tls == NULL) {
		atomic_fetch_add(&srv->counters.ctrl_bad, 1);
		ctrlmsg_fail(srv, bev, "this server has no TLS certificate for a TLS load (tls-cert)");
		return -1;
	}
	return 0;
}

/* The welcome message of session s (docs/protocol.md). */
static json_object *hello_welcome(const struct session *s, const struct pending_ctrl *pc,
				  const char *used, const char *why)
{
	const struct server_config *cfg = s->srv->cfg;
	json_object *w = wire_ctrl_new("welcome");
	char hex[2 * WIRE_TOKEN_LEN + 1];

	wire_token_to_hex(s->token, hex);
	json_object_object_add(w, "session", json_object_new_int64((int64_t)s->id));
	json_object_object_add(w, "token", json_object_new_string(hex));
	json_object_object_add(w, "udp_port", json_object_new_int(cfg->port));
	json_object_object_add(w, "server_version", json_object_new_string(BM_VERSION));
	json_object_object_add(w, "cc", json_object_new_string(s->cc));
	json_object_object_add(w, "cc_ok", json_object_new_boolean(s->cc_ok));
	json_object_object_add(w, "cc_used", json_object_new_string(s->cc_ok ? s->cc : used));
	if (!s->cc_ok)
		json_object_object_add(w, "cc_error", json_object_new_string(why));
	json_object_object_add(w, "max_flows", json_object_new_int(cfg->max_flows));
	json_object_object_add(w, "max_rate_bps", json_object_new_int64((int64_t)s->max_rate_bps));
	json_object_object_add(w, "udp_timestamps",
			       json_object_new_string(s->srv->udp_ts_kernel ? "kernel" : "user"));
	json_object_object_add(w, "dns_port", json_object_new_int(cfg->dns_port));
	json_object_object_add(w, "dns_zone",
			       json_object_new_string(cfg->dns_zone ? cfg->dns_zone : DNS_DEFAULT_ZONE));
	hello_auth_welcome(pc, w, hex);
	/* This server accepts the client's `summary` message (older ones close on it). */
	json_object_object_add(w, "summary", json_object_new_boolean(1));
	/* The hello asked for a TLS load and this server will carry it (older ones ignore the
	 * request: the client checks for this). */
	if (s->tls_load)
		json_object_object_add(w, "tls_load", json_object_new_boolean(1));
	return w;
}

/* Validates a hello and turns the pending connection into a session. */
static void hello_handle(struct pending_ctrl *pc, struct bufferevent *bev, json_object *msg)
{
	struct server_ctx *srv = pc->srv;
	char used[SESSIONLIFE_CC_USED_LEN] = "", why[SESSIONLIFE_CC_WHY_LEN] = "";
	const char *cc;
	int64_t duration, busy_until = 0;
	struct session *s;
	int tls_load;

	/* pc stays owned by the caller; the session copies what it needs. */
	if (hello_fields(srv, bev, msg, &cc, &duration) < 0 ||
	    hello_tls_load(srv, bev, msg, &tls_load) < 0 ||
	    admission_admit(srv, bev, (struct sockaddr *)&pc->peer, duration) < 0)
		return;
	s = sessionlife_new(srv, pc->worker, bev, &pc->peer, cc, duration, used, why, &busy_until);
	if (s == NULL && busy_until != 0) {
		admission_refuse_client(srv, bev, busy_until);
		return;
	}
	if (s == NULL) {
		ctrlmsg_fail(srv, bev, "server cannot create a session now");
		return;
	}
	s->tls_load = tls_load;
	sessionlife_start(s, hello_welcome(s, pc, used, why));
}

static void hello_read_callback(struct bufferevent *bev, void *arg)
{
	struct pending_ctrl *pc = arg;
	json_object *msg = NULL;
	char err[160];
	int rc = ctrlmsg_take(bev, &msg, err, sizeof(err));

	if (rc == 0)
		return;
	if (rc > 0 && pc->srv->psk != NULL && hello_auth(pc, bev, &msg) == 0)
		return;
	if (rc < 0 || strcmp(wire_ctrl_type(msg), "hello") != 0) {
		atomic_fetch_add(&pc->srv->counters.ctrl_bad, 1);
		log_debug("control: %s", rc < 0 ? err : "expected hello");
		ctrlmsg_fail(pc->srv, bev, rc < 0 ? err : "expected hello");
		pending_ctrl_free(pc);
		json_object_put(msg);
		return;
	}
	hello_handle(pc, bev, msg);
	pending_ctrl_free(pc);
	json_object_put(msg);
}

static void hello_event_callback(struct bufferevent *bev, short what, void *arg)
{
	bufferevent_free(bev);
	pending_ctrl_free(arg);
}

/* The handshake timeout from accept ran out before the welcome (a peer that holds the
 * challenge unanswered, or pipelines nothing after a partial exchange): closed, counted. */
static void hello_deadline_callback(evutil_socket_t fd, short what, void *arg)
{
	struct pending_ctrl *pc = arg;
	char addr[64];

	atomic_fetch_add(&pc->srv->counters.ctrl_timeout, 1);
	sock_addr_str((struct sockaddr *)&pc->peer, addr, sizeof(addr));
	log_debug("control: %s did not finish its hello within the handshake timeout", addr);
	bufferevent_free(pc->bev);
	pending_ctrl_free(pc);
}

/* Sets pc's timer to fire at deadline_ns (at once when that has passed). 0 or -1. */
static int hello_deadline_start(struct pending_ctrl *pc, int64_t deadline_ns)
{
	int64_t left = deadline_ns - clock_mono_ns();
	struct timeval tv = { 0, 0 };

	if (left > 0) {
		tv.tv_sec = left / NS_PER_SEC;
		tv.tv_usec = (left % NS_PER_SEC) / 1000;
	}
	pc->deadline = evtimer_new(bufferevent_get_base(pc->bev), hello_deadline_callback, pc);
	return pc->deadline != NULL && evtimer_add(pc->deadline, &tv) == 0 ? 0 : -1;
}

void hello_start(struct server_ctx *srv, int worker, struct bufferevent *bev,
		 const struct sockaddr *peer, struct pendcap_slot *slot, int64_t deadline_ns)
{
	struct pending_ctrl *pc = calloc(1, sizeof(*pc));

	if (pc == NULL) {
		bufferevent_free(bev);
		pendcap_release(srv, slot);
		return;
	}
	pc->srv = srv;
	pc->worker = worker;
	pc->bev = bev;
	pc->slot = slot;
	worker_obj_init(&pc->obj, pending_ctrl_close);
	memcpy(&pc->peer, peer, peer->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
							     : sizeof(struct sockaddr_in));
	/* tls-required: a plain control connection gets one error it can read, then a close. */
	if (srv->cfg->tls_required && bufferevent_openssl_get_ssl(bev) == NULL) {
		atomic_fetch_add(&srv->counters.ctrl_bad, 1);
		log_debug("control: plain connection refused (tls-required)");
		ctrlmsg_fail(srv, bev, "this server accepts control connections only over TLS "
				   "(bloatmeter --tls)");
		pending_ctrl_free(pc);
		return;
	}
	if (hello_deadline_start(pc, deadline_ns) < 0) {
		bufferevent_free(bev);
		pending_ctrl_free(pc);
		return;
	}
	worker_obj_add(srv->workers, worker, &pc->obj);
	bufferevent_setcb(bev, hello_read_callback, NULL, hello_event_callback, pc);
	hello_read_callback(bev, pc);
}

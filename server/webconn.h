/* webconn: one connection of the public test listener (server/weblisten.h): its state and
 * its deadlines — an absolute head deadline (handshake-timeout), an idle deadline
 * (idle-timeout) and max-duration for a transfer — and keep-alive or close after an answer.
 * The listener's modules (webroute, webreply, webxfer, webpost, weblisten) call it, on the
 * main event loop. */
#ifndef BM_WEBCONN_H
#define BM_WEBCONN_H

#include <stdint.h>
#include <sys/queue.h>
#include <sys/socket.h>

struct bufferevent;
struct event;
struct ev_token_bucket_cfg;
struct server_ctx;
struct webconn;
struct webresult_limiter;
struct evbuffer;

/* Called once when the connection closes, to give its places back. */
typedef void (*webconn_closed_fn)(struct webconn *c, void *arg);

/* Why the listener refused or cut a connection (bloatmeterd_web_rejected_total{reason}). */
enum webreject {
	WEBREJECT_BAD_REQUEST, /* malformed head or body framing, bad bytes=, bad method */
	WEBREJECT_TOO_LARGE,   /* head, body or result over its bound */
	WEBREJECT_TIMEOUT,     /* head deadline, idle-timeout or max-duration */
	WEBREJECT_CONN_CAP,    /* web-max-connections reached */
	WEBREJECT_CLIENT_CAP,  /* one client's connections */
	WEBREJECT_BUSY,        /* admission control or shutting down */
	WEBREJECT_RATE,        /* result posts over their rate */
	WEBREJECT_NOT_FOUND,
	WEBREJECT_COUNT
};

enum webconn_state { WEBCONN_HEAD, WEBCONN_BODY, WEBCONN_DOWN, WEBCONN_CLOSING };
enum webconn_body { WEBBODY_UP, WEBBODY_RESULT };
enum webconn_chunk { CHUNK_SIZE, CHUNK_DATA, CHUNK_DATA_END, CHUNK_TRAILER };

/* Shared by the listener's modules (webconn, webroute, webxfer, weblisten) and nobody else. */
struct webconn {
	struct server_ctx *srv;
	struct bufferevent *bev;
	struct sockaddr_storage peer;
	webconn_closed_fn closed;
	void *closed_arg;
	LIST_ENTRY(webconn) link;         /* weblisten's list, for stop */
	enum webconn_state state;
	int head_started;                 /* the head deadline runs */
	int held;                         /* no request is read until the answers drain */
	struct event *deadline;           /* head deadline, or the last answer's */
	int64_t req_start_ns;             /* the current request's head was whole */
	struct ev_token_bucket_cfg *bucket; /* max-rate, NULL = none */
	int keep_alive;                   /* the current request allows another */
	int tls;                          /* served over TLS */
	char cc[16];                      /* its congestion control, "" when unknown */
	/* DOWN: zero bytes still to queue. BODY: what is read and how. */
	uint64_t down_left;
	enum webconn_body body_kind;
	int chunked;
	enum webconn_chunk chunk_state;
	uint64_t body_left;               /* Content-Length, or the current chunk's */
	uint64_t body_total;              /* bytes of body so far */
	struct evbuffer *result;          /* WEBBODY_RESULT: the body, bounded */
	int body_whole;                   /* ... and it is all in */
	struct webresult_limiter *results; /* the listener's bounds on result posts */
};

/* Takes bev over (and the socket it owns), without callbacks yet (server/webroute.h sets
 * them). NULL if out of memory (bev is then freed). */
struct webconn *webconn_new(struct server_ctx *srv, struct bufferevent *bev,
			    const struct sockaddr_storage *peer, webconn_closed_fn closed,
			    void *arg);
const struct sockaddr_storage *webconn_peer(const struct webconn *c);
/* Closes it now (calls closed). Only from a deadline or event callback, or weblisten_stop:
 * the others end a request with webconn_finish, and a refusal closes after it has left. */
void webconn_close(struct webconn *c);
/* The answer to the current request is queued: keep_alive waits for the next request,
 * otherwise the connection closes once the answer has left. */
void webconn_finish(struct webconn *c, int keep_alive);
/* A body or a download moves: idle-timeout without progress closes. */
void webconn_arm_transfer(struct webconn *c);
/* Waits for a request head: the first within handshake-timeout of accept, later ones within
 * idle-timeout for their first byte and handshake-timeout from there. */
void webconn_arm_head(struct webconn *c, int first);
/* Answers of pipelined requests over WEBCONN_OUT_MAX wait unread: read no more requests until
 * they drain below WEBCONN_OUT_MAX / 2 (webconn_unhold), and close after idle-timeout without a
 * byte of them leaving. Else a client that sends small requests and never reads would make the
 * daemon queue answers (~10x their requests) without bound. 1 when held. */
#define WEBCONN_OUT_MAX (64 * 1024)
int webconn_hold(struct webconn *c);
/* The answers have drained: wait for the next head again (webconn_arm_head). 1 if it was held. */
int webconn_unhold(struct webconn *c);
/* The deadline of a head that has begun to arrive (once per head). */
void webconn_head_begun(struct webconn *c);
void webconn_count_reject(struct server_ctx *srv, enum webreject why);
/* The name of a reason for /metrics ("bad_request"). */
const char *webconn_reject_name(enum webreject why);

#endif

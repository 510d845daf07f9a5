/* bulk: the server's end of the load flows — a source for download, a sink for upload — with
 * the in-flow request/response framing of docs/protocol.md (echoes, responses), over plain TCP
 * or, for a TLS load, inside TLS. */
#ifndef BM_BULK_H
#define BM_BULK_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "common/record.h"
#include "common/tls.h"
#include "server/ctx.h"

struct bulk_flow {
	int fd;
	uint8_t dir; /* enum wire_data_dir */
	uint16_t flow_id;
	struct event *ev;
	struct session *sess;
	struct record_writer w;        /* download: the records we send (echoes ride in them) */
	struct record_parser rx;       /* download: the client's requests; upload: its records */
	uint8_t resp[RECORD_HDR_LEN];  /* upload: the unsent rest of a response */
	uint8_t resp_left;
	uint64_t requests;             /* in-flow requests seen (echoed or answered) */
	uint64_t resp_dropped;         /* upload: responses dropped because the socket was full */
	int64_t active_ns;             /* last time a byte moved (idle-timeout) */
	int throttled;                 /* upload: not reading, over the session's max-rate */
	struct bulk_flow *next;
	/* TLS load (docs/protocol.md): the record stream runs inside ssl; NULL: plain TCP. */
	struct ssl_st *ssl;
	struct tls_tx tx;              /* download: what SSL_write has not taken yet */
	short rd_wants, wr_wants;      /* events the pending read and write wait for (0: none) */
	short events;                  /* what ev watches now */
	int failed;                    /* a TLS call failed inside a helper: close at the end */
};

/* Attaches an accepted, validated data connection to sess and starts moving bytes. ssl: NULL
 * for a plain one; for a data connection of a TLS load the record stream runs inside it (its
 * handshake done on fd, so that OpenSSL could hand it to kernel TLS). pre/prelen: stream bytes
 * already read (decrypted) past the hello; they are parsed (and counted for upload flows) like
 * any later bytes. Takes fd and ssl (freed on failure). A session that asked for a TLS load
 * (session.tls_load) refuses plain flows. Returns 0, or -1 when the flow could not start or
 * pre is not a valid record stream. */
int bulk_attach_ssl(struct session *sess, int fd, struct ssl_st *ssl,
		    const struct wire_data_hello *h, const uint8_t *pre, size_t prelen);
/* Closes and frees one flow, unlinking it from its session. */
void bulk_close(struct bulk_flow *f);
/* TCP_INFO totals of the session's download flows, open and closed, and (in *srtt_us) the
 * mean smoothed RTT of the open ones as their sender measures it, 0 without one: Karn's rule
 * keeps retransmissions out of it, unlike the client's receive-side estimate, which loss
 * recovery inflates. One TCP_INFO reading per flow. */
void bulk_down_totals(const struct session *sess, struct tcp_totals *t, uint32_t *srtt_us);
/* Re-tunes TCP_NOTSENT_LOWAT of the session's senders from their delivery rate. */
void bulk_tune(struct session *sess);
/* Every tick: closes the session's flows that moved no byte for idle-timeout, and lets
 * sinks throttled by max-rate read again. */
void bulk_limits_tick(struct session *sess, int64_t now_ns);

#endif

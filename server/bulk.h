/* bulk: the server's end of the load flows — a source for download, a sink for upload. */
#ifndef BM_BULK_H
#define BM_BULK_H

#include <stddef.h>
#include <stdint.h>

#include "server/ctx.h"

struct bulk_flow {
	int fd;
	uint8_t dir; /* enum wire_data_dir */
	uint16_t flow_id;
	struct event *ev;
	struct session *sess;
	struct bulk_flow *next;
};

/* Attaches an accepted, validated data connection to sess and starts moving bytes.
 * prelen: payload bytes already read past the hello (counted for upload flows).
 * Takes ownership of fd (closed on failure). Returns 0 or -1. */
int bulk_attach(struct session *sess, int fd, const struct wire_data_hello *h,
		size_t prelen);
/* Closes and frees one flow, unlinking it from its session. */
void bulk_close(struct bulk_flow *f);
/* TCP_INFO totals of the session's download flows, open and closed. */
void bulk_down_totals(const struct session *sess, struct tcp_totals *t);
/* Re-tunes TCP_NOTSENT_LOWAT of the session's senders from their delivery rate. */
void bulk_tune(struct session *sess);

#endif

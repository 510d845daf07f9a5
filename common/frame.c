/* frame: glue between the pure codecs in wire.c and libevent's evbuffers. */
#include "common/frame.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/wire.h"

int frame_take(struct evbuffer *in, json_object **msg, char *err, size_t errlen)
{
	size_t avail = evbuffer_get_length(in), body = 0;
	uint8_t hdr[WIRE_CTRL_HDR];
	uint8_t *p;

	*msg = NULL;
	if (avail < WIRE_CTRL_HDR)
		return 0;
	if (evbuffer_copyout(in, hdr, sizeof(hdr)) != (ssize_t)sizeof(hdr))
		return 0;
	if (wire_frame_peek(hdr, sizeof(hdr), &body) != WIRE_FRAME_OK) {
		snprintf(err, errlen, "bad control frame length");
		return -1;
	}
	if (avail < WIRE_CTRL_HDR + body)
		return 0;
	p = evbuffer_pullup(in, (ssize_t)(WIRE_CTRL_HDR + body));
	if (p == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	*msg = wire_ctrl_parse(p + WIRE_CTRL_HDR, body, err, errlen);
	evbuffer_drain(in, WIRE_CTRL_HDR + body);
	return *msg ? 1 : -1;
}

int frame_put(struct evbuffer *out, json_object *msg)
{
	size_t len;
	uint8_t *buf = msg ? wire_ctrl_encode(msg, &len) : NULL;
	int rc = -1;

	if (buf) {
		rc = evbuffer_add(out, buf, len);
		free(buf);
	}
	json_object_put(msg);
	return rc;
}

/* frame: control messages over libevent buffers — both ends take and queue frames here. */
#ifndef BM_FRAME_H
#define BM_FRAME_H

#include <stddef.h>

#include <event2/buffer.h>
#include <json-c/json.h>

/* Removes one complete frame from in: 1 with *msg parsed (caller puts), 0 if more bytes are
 * needed, -1 on a protocol error with the reason in err. */
int frame_take(struct evbuffer *in, json_object **msg, char *err, size_t errlen)
	__attribute__((warn_unused_result));
/* Encodes msg as one frame onto out and releases msg. 0 or -1. */
int frame_put(struct evbuffer *out, json_object *msg);

#endif

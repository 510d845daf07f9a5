/* fuzz_ctrl: hostile bytes on the control channel — frame header, JSON body, field readers,
 * the client's stats decoder and the evbuffer framing both ends use. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <json-c/json.h>

#include "client/run/ctrl.h"
#include "common/frame.h"
#include "common/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Reads every field a peer could send through the typed readers. */
static void fuzz_ctrl_fields(json_object *msg)
{
	static const char *const keys[] = {
		"v", "type", "token", "session", "t_ns", "up_rx_bytes", "down_tx_bytes", "udp_rx",
		"flows_down", "flows_up", "cc_failures", "final", "cc", "cc_ok", "cc_used",
		"cc_error", "duration_s", "udp_port", "max_flows", "udp_timestamps", "reason",
		"retry_after_s", "client_version", "server_version",
	};
	struct ctrl_stats st;
	const char *s;
	int64_t i;
	int b;
	uint8_t tok[WIRE_TOKEN_LEN];

	(void)wire_ctrl_type(msg);
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		if (wire_get_int(msg, keys[k], INT64_MIN, INT64_MAX, &i) == 0 &&
		    wire_get_int(msg, keys[k], 0, 65535, &i) == 0 && (i < 0 || i > 65535))
			abort(); /* a bounded read returned an out-of-bounds value */
		if (wire_get_str(msg, keys[k], 64, &s) == 0) {
			if (strlen(s) > 64)
				abort();
			(void)wire_token_from_hex(s, tok);
		}
		if (wire_get_bool(msg, keys[k], &b) == 0 && b != 0 && b != 1)
			abort();
	}
	if (ctrl_parse_stats(msg, &st) == 0 && (st.t_ns < 0 || st.cc_failures < 0))
		abort();
}

/* A message that parsed must survive encode -> peek -> parse with the same type. */
static void fuzz_ctrl_reencode(json_object *msg)
{
	char err[128];
	size_t len = 0, body = 0;
	uint8_t *buf = wire_ctrl_encode(msg, &len);
	json_object *back;

	if (buf == NULL)
		return; /* escaping can grow a body past the cap */
	if (wire_frame_peek(buf, len, &body) != WIRE_FRAME_OK || body + WIRE_CTRL_HDR != len)
		abort();
	back = wire_ctrl_parse(buf + WIRE_CTRL_HDR, body, err, sizeof(err));
	if (back == NULL || strcmp(wire_ctrl_type(back), wire_ctrl_type(msg)) != 0)
		abort();
	json_object_put(back);
	free(buf);
}

/* The input as a byte stream through frame_take, then every parsed frame back through
 * frame_put and frame_take again. */
static void fuzz_ctrl_stream(const uint8_t *data, size_t size)
{
	struct evbuffer *in = evbuffer_new(), *loop = evbuffer_new();
	json_object *msg;
	char err[128];
	int rc;

	if (in == NULL || loop == NULL)
		abort();
	evbuffer_add(in, data, size);
	while ((rc = frame_take(in, &msg, err, sizeof(err))) == 1) {
		json_object *again;

		if (msg == NULL)
			abort();
		fuzz_ctrl_fields(msg);
		if (frame_put(loop, json_object_get(msg)) == 0) {
			if (frame_take(loop, &again, err, sizeof(err)) != 1)
				abort();
			json_object_put(again);
		}
		json_object_put(msg);
	}
	if (rc == -1 && msg != NULL)
		abort(); /* an error never hands out a message */
	evbuffer_free(in);
	evbuffer_free(loop);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[128];
	size_t body = 0;
	json_object *msg;

	/* The whole input as one frame: header then body. */
	if (wire_frame_peek(data, size, &body) == WIRE_FRAME_OK) {
		if (body == 0 || body > WIRE_CTRL_MAX)
			abort();
		if (size - WIRE_CTRL_HDR >= body) {
			msg = wire_ctrl_parse(data + WIRE_CTRL_HDR, body, err, sizeof(err));
			json_object_put(msg);
		}
	}
	/* The whole input as a body. */
	msg = wire_ctrl_parse(data, size, err, sizeof(err));
	if (msg != NULL) {
		const char *type = wire_ctrl_type(msg);

		if (!json_object_is_type(msg, json_type_object) || type[0] == '\0')
			abort();
		fuzz_ctrl_fields(msg);
		fuzz_ctrl_reencode(msg);
		json_object_put(msg);
	}
	fuzz_ctrl_stream(data, size);
	return 0;
}

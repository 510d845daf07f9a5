/* wire: control framing, data hello, connect probe and probe packet codecs. Every decoder is bounded and
 * fails without side effects; these functions are the fuzz targets. */
#include "common/wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "common/hex.h"

#define DATA_MAGIC 0x424d4431u  /* "BMD1" */
#define PROBE_MAGIC 0x424d5031u /* "BMP1" */
#define CONNPROBE_MAGIC 0x424d4331u /* "BMC1" */

enum wire_frame_status wire_frame_peek(const uint8_t *buf, size_t avail, size_t *body_len)
{
	uint32_t len;

	if (avail < WIRE_CTRL_HDR)
		return WIRE_FRAME_NEED_MORE;
	len = bytes_be32(buf);
	if (len == 0 || len > WIRE_CTRL_MAX)
		return WIRE_FRAME_BAD;
	*body_len = len;
	return WIRE_FRAME_OK;
}

json_object *wire_ctrl_parse(const uint8_t *body, size_t len, char *err, size_t errlen)
{
	json_tokener *tok;
	json_object *msg, *v, *type;

	if (len == 0 || len > WIRE_CTRL_MAX) {
		snprintf(err, errlen, "control message size %zu out of range", len);
		return NULL;
	}
	if (memchr(body, '\0', len) != NULL) {
		snprintf(err, errlen, "control message contains a NUL byte");
		return NULL;
	}
	tok = json_tokener_new_ex(16); /* our messages are shallow: refuse deep nesting */
	if (tok == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	msg = json_tokener_parse_ex(tok, (const char *)body, (int)len);
	if (msg == NULL || json_tokener_get_error(tok) != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != len) {
		snprintf(err, errlen, "control message is not one JSON value");
		json_object_put(msg);
		json_tokener_free(tok);
		return NULL;
	}
	json_tokener_free(tok);
	if (!json_object_is_type(msg, json_type_object)) {
		snprintf(err, errlen, "control message is not a JSON object");
		goto bad;
	}
	if (!json_object_object_get_ex(msg, "v", &v) || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) != WIRE_VERSION) {
		snprintf(err, errlen, "unsupported protocol version (this side speaks %d)", WIRE_VERSION);
		goto bad;
	}
	if (!json_object_object_get_ex(msg, "type", &type) ||
	    !json_object_is_type(type, json_type_string) || json_object_get_string_len(type) == 0 ||
	    json_object_get_string_len(type) > 32) {
		snprintf(err, errlen, "control message has no valid type");
		goto bad;
	}
	return msg;
bad:
	json_object_put(msg);
	return NULL;
}

const char *wire_ctrl_type(json_object *msg)
{
	json_object *type;

	if (!json_object_object_get_ex(msg, "type", &type))
		return "";
	return json_object_get_string(type);
}

json_object *wire_ctrl_new(const char *type)
{
	json_object *msg = json_object_new_object();

	if (msg == NULL)
		return NULL;
	json_object_object_add(msg, "v", json_object_new_int(WIRE_VERSION));
	json_object_object_add(msg, "type", json_object_new_string(type));
	return msg;
}

uint8_t *wire_ctrl_encode(json_object *msg, size_t *out_len)
{
	size_t len;
	const char *s = json_object_to_json_string_length(msg, JSON_C_TO_STRING_PLAIN, &len);
	uint8_t *buf;

	if (s == NULL || len == 0 || len > WIRE_CTRL_MAX)
		return NULL;
	buf = malloc(WIRE_CTRL_HDR + len);
	if (buf == NULL)
		return NULL;
	bytes_put_be32(buf, (uint32_t)len);
	memcpy(buf + WIRE_CTRL_HDR, s, len);
	*out_len = WIRE_CTRL_HDR + len;
	return buf;
}

int wire_get_int(json_object *msg, const char *key, int64_t lo, int64_t hi, int64_t *out)
{
	json_object *v;
	int64_t x;

	if (!json_object_object_get_ex(msg, key, &v) || !json_object_is_type(v, json_type_int))
		return -1;
	x = json_object_get_int64(v);
	if (x < lo || x > hi)
		return -1;
	*out = x;
	return 0;
}

int wire_get_str(json_object *msg, const char *key, size_t maxlen, const char **out)
{
	json_object *v;

	if (!json_object_object_get_ex(msg, key, &v) || !json_object_is_type(v, json_type_string))
		return -1;
	if ((size_t)json_object_get_string_len(v) > maxlen)
		return -1;
	*out = json_object_get_string(v);
	return 0;
}

int wire_get_bool(json_object *msg, const char *key, int *out)
{
	json_object *v;

	if (!json_object_object_get_ex(msg, key, &v) || !json_object_is_type(v, json_type_boolean))
		return -1;
	*out = json_object_get_boolean(v);
	return 0;
}

void wire_token_to_hex(const uint8_t tok[WIRE_TOKEN_LEN], char hex[2 * WIRE_TOKEN_LEN + 1])
{
	hex_encode(tok, WIRE_TOKEN_LEN, hex);
}

int wire_token_from_hex(const char *hex, uint8_t tok[WIRE_TOKEN_LEN])
{
	uint8_t tmp[WIRE_TOKEN_LEN];

	/* Tokens travel in lower case only. */
	if (!hex_is_lower(hex, 2 * WIRE_TOKEN_LEN) || hex_decode(hex, 2 * WIRE_TOKEN_LEN, tmp) < 0)
		return -1;
	memcpy(tok, tmp, WIRE_TOKEN_LEN);
	return 0;
}

/* Data hello layout: magic(4) version(1) dir(1) flow_id(2) token(16) reserved(8, zero). */
void wire_data_hello_encode(const struct wire_data_hello *h, uint8_t out[WIRE_DATA_HELLO_LEN])
{
	memset(out, 0, WIRE_DATA_HELLO_LEN);
	bytes_put_be32(out, DATA_MAGIC);
	out[4] = h->version;
	out[5] = h->dir;
	bytes_put_be16(out + 6, h->flow_id);
	memcpy(out + 8, h->token, WIRE_TOKEN_LEN);
}

int wire_is_data_magic(const uint8_t *buf, size_t len)
{
	return len >= 4 && bytes_be32(buf) == DATA_MAGIC;
}

int wire_data_hello_decode(const uint8_t *buf, size_t len, struct wire_data_hello *h)
{
	struct wire_data_hello tmp;

	memset(&tmp, 0, sizeof(tmp));
	if (len != WIRE_DATA_HELLO_LEN || !wire_is_data_magic(buf, len))
		return -1;
	tmp.version = buf[4];
	tmp.dir = buf[5];
	if (tmp.version != WIRE_VERSION || (tmp.dir != WIRE_DIR_DOWN && tmp.dir != WIRE_DIR_UP))
		return -1;
	for (size_t i = 24; i < WIRE_DATA_HELLO_LEN; i++)
		if (buf[i] != 0)
			return -1;
	tmp.flow_id = bytes_be16(buf + 6);
	memcpy(tmp.token, buf + 8, WIRE_TOKEN_LEN);
	*h = tmp;
	return 0;
}

/* Connect-probe request layout: magic(4) version(1) reserved(3, zero) token(16) seq(4)
 * reserved(4, zero). */
void wire_connprobe_req_encode(const struct wire_connprobe_req *r,
			       uint8_t out[WIRE_CONNPROBE_REQ_LEN])
{
	memset(out, 0, WIRE_CONNPROBE_REQ_LEN);
	bytes_put_be32(out, CONNPROBE_MAGIC);
	out[4] = r->version;
	memcpy(out + 8, r->token, WIRE_TOKEN_LEN);
	bytes_put_be32(out + 24, r->seq);
}

int wire_is_connprobe_magic(const uint8_t *buf, size_t len)
{
	return len >= 4 && bytes_be32(buf) == CONNPROBE_MAGIC;
}

int wire_connprobe_req_decode(const uint8_t *buf, size_t len, struct wire_connprobe_req *r)
{
	struct wire_connprobe_req tmp;
	static const size_t reserved[] = { 5, 6, 7, 28, 29, 30, 31 };

	memset(&tmp, 0, sizeof(tmp));
	if (len != WIRE_CONNPROBE_REQ_LEN || !wire_is_connprobe_magic(buf, len))
		return -1;
	tmp.version = buf[4];
	if (tmp.version != WIRE_VERSION)
		return -1;
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (buf[reserved[i]] != 0)
			return -1;
	memcpy(tmp.token, buf + 8, WIRE_TOKEN_LEN);
	tmp.seq = bytes_be32(buf + 24);
	*r = tmp;
	return 0;
}

/* Connect-probe response layout: magic(4) seq(4). */
void wire_connprobe_resp_encode(uint32_t seq, uint8_t out[WIRE_CONNPROBE_RESP_LEN])
{
	bytes_put_be32(out, CONNPROBE_MAGIC);
	bytes_put_be32(out + 4, seq);
}

int wire_connprobe_resp_decode(const uint8_t *buf, size_t len, uint32_t *seq)
{
	if (len != WIRE_CONNPROBE_RESP_LEN || !wire_is_connprobe_magic(buf, len))
		return -1;
	*seq = bytes_be32(buf + 4);
	return 0;
}

/* Probe layout: magic(4) version(1) kind(1) reserved(2) token(16) seq(4) reserved(4)
 * client_send(8) server_rx(8) server_tx(8) server_rx_count(8) = 64 bytes, then zero padding. */
void wire_probe_encode(const struct wire_probe *p, uint8_t *buf, size_t len)
{
	memset(buf, 0, len);
	bytes_put_be32(buf, PROBE_MAGIC);
	buf[4] = WIRE_VERSION;
	buf[5] = p->kind;
	memcpy(buf + 8, p->token, WIRE_TOKEN_LEN);
	bytes_put_be32(buf + 24, p->seq);
	bytes_put_be64(buf + 32, (uint64_t)p->client_send_ns);
	bytes_put_be64(buf + 40, (uint64_t)p->server_rx_ns);
	bytes_put_be64(buf + 48, (uint64_t)p->server_tx_ns);
	bytes_put_be64(buf + 56, p->server_rx_count);
}

void wire_probe_set_server_tx(uint8_t *buf, int64_t server_tx_ns)
{
	bytes_put_be64(buf + 48, (uint64_t)server_tx_ns);
}

int wire_probe_decode(const uint8_t *buf, size_t len, struct wire_probe *p)
{
	struct wire_probe tmp;

	memset(&tmp, 0, sizeof(tmp));
	if (len < WIRE_PROBE_MIN || len > WIRE_PROBE_MAX)
		return -1;
	if (bytes_be32(buf) != PROBE_MAGIC || buf[4] != WIRE_VERSION)
		return -1;
	tmp.kind = buf[5];
	if (tmp.kind != WIRE_PROBE_REQ && tmp.kind != WIRE_PROBE_REPLY)
		return -1;
	memcpy(tmp.token, buf + 8, WIRE_TOKEN_LEN);
	tmp.seq = bytes_be32(buf + 24);
	tmp.client_send_ns = (int64_t)bytes_be64(buf + 32);
	tmp.server_rx_ns = (int64_t)bytes_be64(buf + 40);
	tmp.server_tx_ns = (int64_t)bytes_be64(buf + 48);
	tmp.server_rx_count = bytes_be64(buf + 56);
	*p = tmp;
	return 0;
}

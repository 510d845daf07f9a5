/* wire: the bytes both ends speak — control frames, the data-connection hello, the connect
 * probe and the UDP probe packet. Pure codecs: no sockets, no allocation beyond json-c objects, no logging. */
#ifndef BM_WIRE_H
#define BM_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#define WIRE_VERSION 1
#define WIRE_TOKEN_LEN 16
#define WIRE_CTRL_MAX 65536 /* hard cap on one control frame's JSON body */
#define WIRE_CTRL_HDR 4     /* big-endian body length */

#define WIRE_WUR __attribute__((warn_unused_result))

/* ---- control frames: 4-byte big-endian length + JSON object {"v":1,"type":...} ---- */

enum wire_frame_status { WIRE_FRAME_NEED_MORE = 0, WIRE_FRAME_OK = 1, WIRE_FRAME_BAD = -1 };

/* Looks at the first bytes of a stream: NEED_MORE, or OK with *body_len set, or BAD when the
 * announced length is 0 or above WIRE_CTRL_MAX. */
WIRE_WUR enum wire_frame_status wire_frame_peek(const uint8_t *buf, size_t avail, size_t *body_len);

/* Parses a control body. Returns a new JSON object (caller puts it) whose "v" equals
 * WIRE_VERSION and whose "type" is a non-empty string, or NULL with a reason in err. */
WIRE_WUR json_object *wire_ctrl_parse(const uint8_t *body, size_t len, char *err, size_t errlen);

/* Returns the "type" string of a parsed message (lives as long as msg). */
const char *wire_ctrl_type(json_object *msg);

/* Creates {"v":WIRE_VERSION,"type":type}; the caller adds fields and puts it. */
json_object *wire_ctrl_new(const char *type);

/* Serialises msg as one frame into a malloc'd buffer (caller frees); NULL if too large. */
WIRE_WUR uint8_t *wire_ctrl_encode(json_object *msg, size_t *out_len);

/* Typed field readers with bounds; return 0 on success, -1 if missing or out of range. */
WIRE_WUR int wire_get_int(json_object *msg, const char *key, int64_t lo, int64_t hi, int64_t *out);
WIRE_WUR int wire_get_str(json_object *msg, const char *key, size_t maxlen, const char **out);
WIRE_WUR int wire_get_bool(json_object *msg, const char *key, int *out);

/* Token as 32 lowercase hex characters in control messages. */
void wire_token_to_hex(const uint8_t tok[WIRE_TOKEN_LEN], char hex[2 * WIRE_TOKEN_LEN + 1]);
WIRE_WUR int wire_token_from_hex(const char *hex, uint8_t tok[WIRE_TOKEN_LEN]);

/* ---- data-connection hello: first 32 bytes of every bulk TCP connection ---- */
/* Its magic "BMD1" can never be a control frame: 0x424d4431 exceeds WIRE_CTRL_MAX. */

#define WIRE_DATA_HELLO_LEN 32
enum wire_data_dir { WIRE_DIR_DOWN = 'D', WIRE_DIR_UP = 'U' }; /* D: server sends, U: server sinks */

struct wire_data_hello {
	uint8_t version;
	uint8_t dir; /* enum wire_data_dir */
	uint16_t flow_id;
	uint8_t token[WIRE_TOKEN_LEN];
};

void wire_data_hello_encode(const struct wire_data_hello *h, uint8_t out[WIRE_DATA_HELLO_LEN]);
/* 0 on success; -1 on bad magic, version, direction or non-zero reserved bytes. */
WIRE_WUR int wire_data_hello_decode(const uint8_t *buf, size_t len, struct wire_data_hello *h);
/* True if the first 4 bytes are the data magic (so the stream is a data connection). */
int wire_is_data_magic(const uint8_t *buf, size_t len);

/* ---- connect probe: a new TCP connection carrying one tiny request/response ---- */
/* Its magic "BMC1" can never be a control frame either: 0x424d4331 exceeds WIRE_CTRL_MAX. */

#define WIRE_CONNPROBE_REQ_LEN 32
#define WIRE_CONNPROBE_RESP_LEN 8 /* smaller than the request: the server never amplifies */

struct wire_connprobe_req {
	uint8_t version;
	uint8_t token[WIRE_TOKEN_LEN];
	uint32_t seq;
};

void wire_connprobe_req_encode(const struct wire_connprobe_req *r,
			       uint8_t out[WIRE_CONNPROBE_REQ_LEN]);
/* 0 on success; -1 on a wrong length, magic or version, or non-zero reserved bytes. */
WIRE_WUR int wire_connprobe_req_decode(const uint8_t *buf, size_t len, struct wire_connprobe_req *r);
/* True if the first 4 bytes are the connect-probe magic. */
int wire_is_connprobe_magic(const uint8_t *buf, size_t len);
/* The answer echoes the magic and the request's sequence number. */
void wire_connprobe_resp_encode(uint32_t seq, uint8_t out[WIRE_CONNPROBE_RESP_LEN]);
/* 0 with *seq set; -1 on a wrong length or magic. */
WIRE_WUR int wire_connprobe_resp_decode(const uint8_t *buf, size_t len, uint32_t *seq);

/* ---- UDP probe packet ---- */

#define WIRE_PROBE_MIN 64   /* header size; requests shorter than this are never answered */
#define WIRE_PROBE_MAX 1400 /* stays below common path MTUs */
enum wire_probe_kind { WIRE_PROBE_REQ = 1, WIRE_PROBE_REPLY = 2 };

struct wire_probe {
	uint8_t kind;                        /* enum wire_probe_kind */
	uint8_t token[WIRE_TOKEN_LEN];
	uint32_t seq;
	int64_t client_send_ns;              /* client monotonic clock */
	int64_t server_rx_ns;                /* server monotonic clock, 0 in requests */
	int64_t server_tx_ns;
	uint64_t server_rx_count;            /* probes the server received for this session */
};

/* Writes the header into buf (len >= WIRE_PROBE_MIN); bytes after the header are zeroed. */
void wire_probe_encode(const struct wire_probe *p, uint8_t *buf, size_t len);
/* Overwrites the server send time of an encoded probe (buf holds ≥ WIRE_PROBE_MIN bytes): a
 * reflector that answers a batch stamps it right before the batch leaves. */
void wire_probe_set_server_tx(uint8_t *buf, int64_t server_tx_ns);
/* 0 on success; -1 if too short/long, wrong magic/version/kind. Decodes into a zeroed *p. */
WIRE_WUR int wire_probe_decode(const uint8_t *buf, size_t len, struct wire_probe *p);

#endif

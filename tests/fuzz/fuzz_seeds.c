/* fuzz_seeds: writes the binary seed inputs (framed control messages, probe requests, a data
 * hello, fuzz_control's records) into the fuzzers' corpus directories, built with the production encoders. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/wire.h"

#include "fuzz_common.h"

static void seed_write(const char *dir, const char *name, const uint8_t *buf, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

/* Appends msg as one frame to out (at *len), then puts msg. */
static void seed_frame(json_object *msg, uint8_t *out, size_t cap, size_t *len)
{
	size_t n = 0;
	uint8_t *buf = wire_ctrl_encode(msg, &n);

	if (buf == NULL || *len + n > cap) {
		fprintf(stderr, "fuzz_seeds: cannot encode a seed\n");
		exit(1);
	}
	memcpy(out + *len, buf, n);
	*len += n;
	free(buf);
	json_object_put(msg);
}

static void seeds_ctrl(const char *dir)
{
	uint8_t out[2048];
	size_t len = 0;
	json_object *m;

	m = wire_ctrl_new("hello");
	json_object_object_add(m, "client_version", json_object_new_string("0.1.0"));
	json_object_object_add(m, "cc", json_object_new_string("cubic"));
	json_object_object_add(m, "duration_s", json_object_new_int(10));
	seed_frame(m, out, sizeof(out), &len);
	seed_write(dir, "frame_hello", out, len);

	/* a stats frame followed by a bye: two frames in one read */
	len = 0;
	m = wire_ctrl_new("stats");
	json_object_object_add(m, "t_ns", json_object_new_int64(987654321));
	json_object_object_add(m, "up_rx_bytes", json_object_new_int64(1 << 20));
	json_object_object_add(m, "down_tx_bytes", json_object_new_int64(1 << 24));
	json_object_object_add(m, "udp_rx", json_object_new_int64(500));
	json_object_object_add(m, "cc_failures", json_object_new_int64(0));
	json_object_object_add(m, "final", json_object_new_boolean(1));
	seed_frame(m, out, sizeof(out), &len);
	seed_frame(wire_ctrl_new("bye"), out, sizeof(out), &len);
	seed_write(dir, "frame_stats_bye", out, len);
}

static void seeds_probe(const char *dir)
{
	uint8_t buf[WIRE_PROBE_MAX];
	struct wire_probe p;
	struct wire_data_hello h;

	memset(&p, 0, sizeof(p));
	p.kind = WIRE_PROBE_REQ;
	memcpy(p.token, fuzz_token, WIRE_TOKEN_LEN);
	p.seq = 42;
	p.client_send_ns = 123456789012LL;
	wire_probe_encode(&p, buf, WIRE_PROBE_MIN);
	seed_write(dir, "request_64", buf, WIRE_PROBE_MIN);
	p.seq = 43;
	wire_probe_encode(&p, buf, 100);
	seed_write(dir, "request_100", buf, 100);

	p.kind = WIRE_PROBE_REPLY;
	p.server_rx_ns = 5000;
	p.server_tx_ns = 6000;
	p.server_rx_count = 1;
	wire_probe_encode(&p, buf, WIRE_PROBE_MIN);
	seed_write(dir, "reply_64", buf, WIRE_PROBE_MIN);

	memset(&h, 0, sizeof(h));
	h.version = WIRE_VERSION;
	h.dir = WIRE_DIR_DOWN;
	h.flow_id = 3;
	memcpy(h.token, fuzz_token, WIRE_TOKEN_LEN);
	wire_data_hello_encode(&h, buf);
	seed_write(dir, "data_hello", buf, WIRE_DATA_HELLO_LEN);
}

/* fuzz_control's records (see there): op, then a 2-byte length and a frame's JSON body. */
static void control_frame(uint8_t *out, size_t cap, size_t *len, int conn, const char *json)
{
	size_t n = strlen(json);

	if (*len + 3 + n > cap) {
		fprintf(stderr, "fuzz_seeds: control seed too long\n");
		exit(1);
	}
	out[(*len)++] = (uint8_t)(4 | conn);
	out[(*len)++] = (uint8_t)(n >> 8);
	out[(*len)++] = (uint8_t)n;
	memcpy(out + *len, json, n);
	*len += n;
}

static void seeds_control(const char *dir)
{
	static const char hello[] = "{\"v\":1,\"type\":\"hello\",\"client_version\":\"0.1.0\","
				    "\"cc\":\"cubic\",\"duration_s\":10}";
	static const char summary[] = "{\"v\":1,\"type\":\"summary\",\"idle_latency_ms\":3.5,"
				      "\"download_increase_ms\":25,\"grade\":\"B\"}";
	static const char bye[] = "{\"v\":1,\"type\":\"bye\"}";
	static const char auth[] = "{\"v\":1,\"type\":\"auth\",\"id\":\"fuzz\",\"cnonce\":"
				   "\"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\","
				   "\"mac\":\"00\"}";
	uint8_t out[1024];
	size_t len;

	/* One connection: hello, summary, bye. */
	len = 0;
	out[len++] = 0;
	control_frame(out, sizeof(out), &len, 0, hello);
	control_frame(out, sizeof(out), &len, 0, summary);
	control_frame(out, sizeof(out), &len, 0, bye);
	seed_write(dir, "hello_summary_bye", out, len);
	/* Three connections of one client, one session allowed: busy, then a close. */
	len = 0;
	out[len++] = 2 | (2 << 2);
	control_frame(out, sizeof(out), &len, 0, hello);
	control_frame(out, sizeof(out), &len, 1, hello);
	control_frame(out, sizeof(out), &len, 2, summary);
	out[len++] = (uint8_t)(8 | 0);
	control_frame(out, sizeof(out), &len, 1, hello);
	seed_write(dir, "three_conns_busy", out, len);
	/* psk-file set: hello, challenge, a wrong auth. */
	len = 0;
	out[len++] = 1;
	control_frame(out, sizeof(out), &len, 0, hello);
	control_frame(out, sizeof(out), &len, 0, auth);
	seed_write(dir, "psk_hello_auth", out, len);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: fuzz_seeds CTRL_DIR PROBE_DIR CONTROL_DIR\n");
		return 2;
	}
	seeds_ctrl(argv[1]);
	seeds_probe(argv[2]);
	seeds_control(argv[3]);
	return 0;
}

/* fuzz_probe: hostile datagrams and data hellos — the probe and hello decoders, and the UDP
 * reflector with one live session, so valid-looking requests reach the reply path. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/wire.h"
#include "server/ctx.h"
#include "server/reflector.h"
#include "server/session.h"

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct session_table fuzz_table;
static struct server_counters fuzz_counters;
static struct sockaddr_in fuzz_client, fuzz_stranger;
static struct sockaddr_in6 fuzz_mapped;

/* Once per process: a table with one session for FUZZ_CLIENT_IP. */
static void fuzz_probe_init(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	fuzz_client.sin_family = AF_INET;
	fuzz_client.sin_port = htons(4750);
	fuzz_stranger = fuzz_client;
	fuzz_mapped.sin6_family = AF_INET6;
	if (inet_pton(AF_INET, FUZZ_CLIENT_IP, &fuzz_client.sin_addr) != 1 ||
	    inet_pton(AF_INET, "198.51.100.7", &fuzz_stranger.sin_addr) != 1 ||
	    inet_pton(AF_INET6, "::ffff:" FUZZ_CLIENT_IP, &fuzz_mapped.sin6_addr) != 1 ||
	    session_table_init(&fuzz_table, 2) != 0 ||
	    session_table_add(&fuzz_table, fuzz_token, (struct sockaddr *)&fuzz_client) != 0)
		abort();
}

/* A decoded probe survives encode -> decode unchanged. */
static void fuzz_probe_codec(const uint8_t *data, size_t size)
{
	struct wire_probe p, q;
	uint8_t buf[WIRE_PROBE_MAX];

	if (wire_probe_decode(data, size, &p) != 0)
		return;
	if (size < WIRE_PROBE_MIN || size > WIRE_PROBE_MAX ||
	    (p.kind != WIRE_PROBE_REQ && p.kind != WIRE_PROBE_REPLY))
		abort();
	wire_probe_encode(&p, buf, size);
	if (wire_probe_decode(buf, size, &q) != 0 || memcmp(&p, &q, sizeof(p)) != 0)
		abort();
}

/* A hello has no free bits: whatever decodes re-encodes to the same 32 bytes. */
static void fuzz_probe_hello(const uint8_t *data, size_t size)
{
	struct wire_data_hello h;
	uint8_t buf[WIRE_DATA_HELLO_LEN];

	if (wire_data_hello_decode(data, size, &h) != 0)
		return;
	if (size != WIRE_DATA_HELLO_LEN || !wire_is_data_magic(data, size))
		abort();
	wire_data_hello_encode(&h, buf);
	if (memcmp(buf, data, WIRE_DATA_HELLO_LEN) != 0)
		abort();
}

/* The reflector answers only valid requests with the live token from the session's IP, with
 * exactly as many bytes as it got, and counts each one. */
static void fuzz_probe_reflect(const uint8_t *data, size_t size)
{
	uint8_t *reply = malloc(size ? size : 1); /* exact size: ASan catches any overrun */
	struct wire_probe req, rep;
	uint64_t before = session_table_probe_count(&fuzz_table, fuzz_token);
	size_t out;
	int valid;

	if (reply == NULL)
		abort();
	valid = wire_probe_decode(data, size, &req) == 0 && req.kind == WIRE_PROBE_REQ &&
		memcmp(req.token, fuzz_token, WIRE_TOKEN_LEN) == 0;

	/* a stranger is never answered, whatever it sends */
	if (reflector_answer(&fuzz_table, &fuzz_counters, data, size,
			     (struct sockaddr *)&fuzz_stranger, 1, reply) != 0)
		abort();

	out = reflector_answer(&fuzz_table, &fuzz_counters, data, size,
			       (size & 1) ? (struct sockaddr *)&fuzz_mapped
					  : (struct sockaddr *)&fuzz_client,
			       1000, reply);
	if (out != (valid ? size : 0))
		abort();
	if (out > 0) {
		if (wire_probe_decode(reply, out, &rep) != 0 || rep.kind != WIRE_PROBE_REPLY ||
		    memcmp(rep.token, fuzz_token, WIRE_TOKEN_LEN) != 0 || rep.seq != req.seq ||
		    rep.client_send_ns != req.client_send_ns || rep.server_rx_ns != 1000 ||
		    rep.server_rx_count != before + 1)
			abort();
	}
	free(reply);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_probe_init();
	fuzz_probe_codec(data, size);
	fuzz_probe_hello(data, size);
	fuzz_probe_reflect(data, size);
	return 0;
}

/* fuzz_connprobe: hostile connect-probe bytes — the request and response decoders, and the
 * server's verdict with one live session, so valid-looking requests reach the limit logic. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/wire.h"
#include "server/connprobe.h"
#include "server/ctx.h"

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* libFuzzer calls us with no context: the fake server lives for the process. */
static struct server_ctx fuzz_srv;
static struct session fuzz_sess;
static struct sockaddr_in fuzz_client, fuzz_stranger;
static int64_t fuzz_now;

static void fuzz_connprobe_init(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	fuzz_client.sin_family = AF_INET;
	fuzz_client.sin_port = htons(40000);
	fuzz_stranger = fuzz_client;
	if (inet_pton(AF_INET, FUZZ_CLIENT_IP, &fuzz_client.sin_addr) != 1 ||
	    inet_pton(AF_INET, "198.51.100.7", &fuzz_stranger.sin_addr) != 1)
		abort();
	memcpy(fuzz_sess.token, fuzz_token, WIRE_TOKEN_LEN);
	memcpy(&fuzz_sess.peer, &fuzz_client, sizeof(fuzz_client));
	fuzz_sess.srv = &fuzz_srv;
	fuzz_srv.sessions = &fuzz_sess;
	fuzz_srv.nsessions = 1;
}

/* The request has no free bits: whatever decodes re-encodes to the same 32 bytes. */
static void fuzz_connprobe_req(const uint8_t *data, size_t size)
{
	struct wire_connprobe_req r;
	uint8_t buf[WIRE_CONNPROBE_REQ_LEN];

	if (wire_connprobe_req_decode(data, size, &r) != 0)
		return;
	if (size != WIRE_CONNPROBE_REQ_LEN || r.version != WIRE_VERSION)
		abort();
	wire_connprobe_req_encode(&r, buf);
	if (memcmp(buf, data, sizeof(buf)) != 0)
		abort();
}

static void fuzz_connprobe_resp(const uint8_t *data, size_t size)
{
	uint8_t buf[WIRE_CONNPROBE_RESP_LEN];
	uint32_t seq;

	if (wire_connprobe_resp_decode(data, size, &seq) != 0)
		return;
	if (size != WIRE_CONNPROBE_RESP_LEN)
		abort();
	wire_connprobe_resp_encode(seq, buf);
	if (memcmp(buf, data, sizeof(buf)) != 0)
		abort();
}

/* A stranger is never answered; the client only for a decodable request with the live token,
 * and never beyond the session's limits. Time moves 7 ms per input and connections close now
 * and then, so every limit path is reached. */
static void fuzz_connprobe_judge(const uint8_t *data, size_t size)
{
	struct wire_connprobe_req req, ref;
	const char *why;
	int valid = wire_connprobe_req_decode(data, size, &ref) == 0 &&
		    memcmp(ref.token, fuzz_token, WIRE_TOKEN_LEN) == 0;
	enum connprobe_verdict v;

	fuzz_now += 7 * NS_PER_MS;
	if (connprobe_judge(&fuzz_srv, data, size, (struct sockaddr *)&fuzz_stranger, fuzz_now, &req,
			    &why) == CONNPROBE_ANSWER)
		abort();
	v = connprobe_judge(&fuzz_srv, data, size, (struct sockaddr *)&fuzz_client, fuzz_now, &req,
			    &why);
	if ((v != CONNPROBE_BAD) != valid || (v == CONNPROBE_ANSWER) != (why == NULL))
		abort();
	if (v == CONNPROBE_ANSWER && req.seq != ref.seq)
		abort();
	if (fuzz_sess.cprobe_open > CONNPROBE_OPEN_MAX ||
	    fuzz_sess.cprobe_window_n > CONNPROBE_RATE_MAX)
		abort();
	if (size > 0 && (data[size - 1] & 3) == 0 && fuzz_sess.cprobe_open > 0)
		fuzz_sess.cprobe_open--;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_connprobe_init();
	fuzz_connprobe_req(data, size);
	fuzz_connprobe_resp(data, size);
	fuzz_connprobe_judge(data, size);
	return 0;
}

/* ctrl: client control protocol helpers. */
#include "client/run/ctrl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client/model/result.h"
#include "common/clock.h"
#include "common/dns.h"
#include "common/tls.h"
#include "common/util.h"

/* Writes all of buf before the deadline (fd is non-blocking), through ssl when it is set. */
static int ctrl_write_all(int fd, SSL *ssl, const uint8_t *buf, size_t len, int64_t deadline)
{
	return ssl ? tls_write_all(ssl, fd, buf, len, deadline) :
		     sock_send_all(fd, buf, len, deadline);
}

/* Reads exactly len bytes before the deadline. */
static int ctrl_read_all(int fd, SSL *ssl, uint8_t *buf, size_t len, int64_t deadline)
{
	return ssl ? tls_read_all(ssl, fd, buf, len, deadline) : sock_recv_all(fd, buf, len, deadline);
}

static json_object *ctrl_read_msg(int fd, SSL *ssl, int64_t deadline, char *err, size_t errlen)
{
	uint8_t hdr[WIRE_CTRL_HDR], *body;
	size_t len;
	json_object *msg;

	if (ctrl_read_all(fd, ssl, hdr, sizeof(hdr), deadline) < 0) {
		snprintf(err, errlen, "no answer from the server: %s",
			 errno == ETIMEDOUT ? "timed out" : strerror(errno));
		return NULL;
	}
	if (wire_frame_peek(hdr, sizeof(hdr), &len) != WIRE_FRAME_OK) {
		snprintf(err, errlen, "the server does not speak the bloatmeter protocol");
		return NULL;
	}
	body = malloc(len);
	if (body == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (ctrl_read_all(fd, ssl, body, len, deadline) < 0) {
		snprintf(err, errlen, "the server's answer was cut short: %s", strerror(errno));
		free(body);
		return NULL;
	}
	msg = wire_ctrl_parse(body, len, err, errlen);
	free(body);
	return msg;
}

static void ctrl_copy_str(json_object *msg, const char *key, char *dst, size_t len)
{
	const char *s;

	if (wire_get_str(msg, key, len - 1, &s) == 0)
		snprintf(dst, len, "%s", s);
}

/* The DNS responder fields are optional (older servers lack them): absent or unusable means
 * no DNS probe against this server, never a failed test. */
static void ctrl_parse_welcome_dns(json_object *msg, struct ctrl_welcome *w)
{
	struct dns_zone z;
	int64_t port;

	ctrl_copy_str(msg, "dns_zone", w->dns_zone, sizeof(w->dns_zone));
	if (wire_get_int(msg, "dns_port", 1, 65535, &port) < 0 ||
	    dns_zone_init(&z, w->dns_zone) < 0) {
		w->dns_port = 0;
		w->dns_zone[0] = '\0';
		return;
	}
	w->dns_port = (uint16_t)port;
}

static int ctrl_parse_welcome(json_object *msg, struct ctrl_welcome *w, char *err, size_t errlen)
{
	const char *tok;
	int64_t port, flows, rate;

	memset(w, 0, sizeof(*w));
	if (wire_get_str(msg, "token", 64, &tok) < 0 || wire_token_from_hex(tok, w->token) < 0 ||
	    wire_get_int(msg, "udp_port", 1, 65535, &port) < 0 ||
	    wire_get_int(msg, "max_flows", 1, 1 << 20, &flows) < 0 ||
	    wire_get_bool(msg, "cc_ok", &w->cc_ok) < 0) {
		snprintf(err, errlen, "the server's welcome is malformed");
		return -1;
	}
	w->udp_port = (uint16_t)port;
	w->max_flows = (int)flows;
	ctrl_copy_str(msg, "cc_used", w->cc_used, sizeof(w->cc_used));
	ctrl_copy_str(msg, "cc_error", w->cc_error, sizeof(w->cc_error));
	ctrl_copy_str(msg, "server_version", w->server_version, sizeof(w->server_version));
	ctrl_copy_str(msg, "udp_timestamps", w->udp_ts, sizeof(w->udp_ts));
	ctrl_parse_welcome_dns(msg, w);
	/* Optional (older servers): their load is never capped. */
	if (wire_get_int(msg, "max_rate_bps", 0, INT64_MAX, &rate) == 0)
		w->max_rate_bps = (uint64_t)rate;
	/* Optional (older servers): they end the session on a message they do not know. */
	if (wire_get_bool(msg, "summary", &w->summary_ok) < 0)
		w->summary_ok = 0;
	/* Optional (older servers ignore the hello's tls_load, and cannot carry one). */
	if (wire_get_bool(msg, "tls_load", &w->tls_load) < 0)
		w->tls_load = 0;
	return 0;
}

/* Sends one message (and releases it). */
static int ctrl_send(int fd, SSL *ssl, json_object *msg, int64_t deadline)
{
	size_t len;
	uint8_t *buf = wire_ctrl_encode(msg, &len);
	int rc;

	json_object_put(msg);
	if (buf == NULL) {
		errno = ENOMEM;
		return -1;
	}
	rc = ctrl_write_all(fd, ssl, buf, len, deadline);
	free(buf);
	return rc;
}

/* One sentence for an answer that is not a welcome. */
static void ctrl_refusal(json_object *reply, const struct ctrl_secure *sec,
			 struct ctrl_welcome *w, char *err, size_t errlen)
{
	const char *type = wire_ctrl_type(reply), *reason;
	int64_t retry;

	if (strcmp(type, "busy") == 0) {
		if (wire_get_int(reply, "retry_after_s", 0, 86400, &retry) < 0)
			retry = 60;
		w->busy = 1;
		snprintf(err, errlen, "server busy, retry after %lld s", (long long)retry);
	} else if (strcmp(type, "error") == 0 && wire_get_str(reply, "reason", 200, &reason) == 0) {
		if (sec->psk != NULL && strcmp(reason, AUTH_FAILED_REASON) == 0)
			snprintf(err, errlen, "server rejected the pre-shared key");
		else
			snprintf(err, errlen, "the server refused the test: %s", reason);
	} else if (strcmp(type, "challenge") == 0) {
		snprintf(err, errlen, "the server requires a pre-shared key (--psk-file)");
	} else {
		snprintf(err, errlen, "unexpected answer from the server (%s)", type);
	}
}

/* Answers the server's challenge with the key (keeping both nonces for the welcome's proof)
 * and returns the next message, or NULL with one sentence in err. */
static json_object *ctrl_authenticate(int fd, const struct ctrl_secure *sec, json_object *challenge,
				      const struct auth_hello *h, char *snonce, char *cnonce,
				      int64_t deadline, char *err, size_t errlen)
{
	struct auth_response r;

	if (auth_challenge_parse(challenge, snonce) < 0) {
		snprintf(err, errlen, "the server's challenge is malformed");
		return NULL;
	}
	memset(&r, 0, sizeof(r));
	snprintf(r.id, sizeof(r.id), "%s", sec->psk->id);
	if (auth_nonce(r.cnonce) < 0 || auth_client_mac(sec->psk, snonce, r.cnonce, h, r.mac) < 0) {
		snprintf(err, errlen, "cannot compute the answer to the server's challenge");
		return NULL;
	}
	memcpy(cnonce, r.cnonce, sizeof(r.cnonce));
	if (ctrl_send(fd, sec->ssl, auth_response_new(&r), deadline) < 0) {
		snprintf(err, errlen, "cannot answer the server's challenge: %s", strerror(errno));
		return NULL;
	}
	return ctrl_read_msg(fd, sec->ssl, deadline, err, errlen);
}

/* With a key, the welcome must carry the server's proof for this exchange: without it anyone
 * on the path could strip the challenge and pose as the server. */
static int ctrl_check_proof(json_object *welcome, const struct ctrl_welcome *w,
			    const struct ctrl_secure *sec, const char *snonce, const char *cnonce,
			    char *err, size_t errlen)
{
	char hex[2 * WIRE_TOKEN_LEN + 1];
	const char *mac;

	if (sec->psk == NULL)
		return 0;
	wire_token_to_hex(w->token, hex);
	if (snonce[0] == '\0') {
		snprintf(err, errlen, "server could not prove the pre-shared key (it did not ask for one)");
		return -1;
	}
	if (wire_get_str(welcome, "server_mac", AUTH_MAC_HEX, &mac) < 0 ||
	    auth_verify_server(sec->psk, snonce, cnonce, hex, mac) < 0) {
		snprintf(err, errlen, "server could not prove the pre-shared key");
		return -1;
	}
	return 0;
}

/* A TLS load needs a server that says it carries one: an older server would take the TLS
 * data connections for control connections and end the test. */
static int ctrl_check_tls_load(const struct ctrl_welcome *w, const struct ctrl_secure *sec,
			       char *err, size_t errlen)
{
	if (!sec->tls_load || w->tls_load)
		return 0;
	snprintf(err, errlen, "the server cannot carry the load over TLS (--tls-load): it is older "
		 "than this client");
	return -1;
}

int ctrl_handshake_secure(int fd, const struct ctrl_secure *sec, const char *cc, int duration_s,
			  int timeout_ms, struct ctrl_welcome *w, char *err, size_t errlen)
{
	static const struct ctrl_secure plain = { NULL, NULL, 0 };
	int64_t deadline = clock_mono_ns() + (int64_t)timeout_ms * NS_PER_MS;
	struct auth_hello h = { cc, duration_s };
	char snonce[AUTH_NONCE_HEX + 1] = "", cnonce[AUTH_NONCE_HEX + 1] = "";
	json_object *hello = wire_ctrl_new("hello"), *reply, *next;
	int rc = -1;

	w->busy = 0;
	if (sec == NULL)
		sec = &plain;
	json_object_object_add(hello, "client_version", json_object_new_string(BM_VERSION));
	json_object_object_add(hello, "cc", json_object_new_string(cc));
	json_object_object_add(hello, "duration_s", json_object_new_int(duration_s));
	if (sec->tls_load)
		json_object_object_add(hello, "tls_load", json_object_new_boolean(1));
	if (ctrl_send(fd, sec->ssl, hello, deadline) < 0) {
		snprintf(err, errlen, "cannot send hello to the server: %s", strerror(errno));
		return -1;
	}
	reply = ctrl_read_msg(fd, sec->ssl, deadline, err, errlen);
	if (reply != NULL && sec->psk != NULL && strcmp(wire_ctrl_type(reply), "challenge") == 0) {
		next = ctrl_authenticate(fd, sec, reply, &h, snonce, cnonce, deadline, err, errlen);
		json_object_put(reply);
		reply = next;
	}
	if (reply == NULL)
		return -1;
	if (strcmp(wire_ctrl_type(reply), "welcome") == 0)
		rc = ctrl_parse_welcome(reply, w, err, errlen) == 0 &&
		     ctrl_check_proof(reply, w, sec, snonce, cnonce, err, errlen) == 0 &&
		     ctrl_check_tls_load(w, sec, err, errlen) == 0 ? 0 : -1;
	else
		ctrl_refusal(reply, sec, w, err, errlen);
	json_object_put(reply);
	return rc;
}

int ctrl_handshake(int fd, const char *cc, int duration_s, int timeout_ms, struct ctrl_welcome *w,
		   char *err, size_t errlen)
{
	return ctrl_handshake_secure(fd, NULL, cc, duration_s, timeout_ms, w, err, errlen);
}

int ctrl_parse_stats(json_object *msg, struct ctrl_stats *st)
{
	int64_t t, up, down, udp, ccf;

	memset(st, 0, sizeof(*st));
	if (strcmp(wire_ctrl_type(msg), "stats") != 0 ||
	    wire_get_int(msg, "t_ns", 0, INT64_MAX, &t) < 0 ||
	    wire_get_int(msg, "up_rx_bytes", 0, INT64_MAX, &up) < 0 ||
	    wire_get_int(msg, "down_tx_bytes", 0, INT64_MAX, &down) < 0 ||
	    wire_get_int(msg, "udp_rx", 0, INT64_MAX, &udp) < 0 ||
	    wire_get_int(msg, "cc_failures", 0, INT64_MAX, &ccf) < 0)
		return -1;
	st->t_ns = t;
	st->up_rx_bytes = (uint64_t)up;
	st->down_tx_bytes = (uint64_t)down;
	st->udp_rx = (uint64_t)udp;
	st->cc_failures = ccf;
	/* Optional (older servers): the download flows' TCP_INFO totals. */
	if (wire_get_int(msg, "down_retrans", 0, INT64_MAX, &t) == 0)
		st->down.retrans = (uint64_t)t;
	if (wire_get_int(msg, "down_busy_us", 0, INT64_MAX, &t) == 0)
		st->down.busy_us = (uint64_t)t;
	if (wire_get_int(msg, "down_rwnd_limited_us", 0, INT64_MAX, &t) == 0)
		st->down.rwnd_limited_us = (uint64_t)t;
	if (wire_get_int(msg, "down_sndbuf_limited_us", 0, INT64_MAX, &t) == 0)
		st->down.sndbuf_limited_us = (uint64_t)t;
	if (wire_get_int(msg, "down_delivered_bytes", 0, INT64_MAX, &t) == 0)
		st->down.delivered_bytes = (uint64_t)t;
	if (wire_get_int(msg, "down_srtt_us", 1, UINT32_MAX, &t) == 0)
		st->down_srtt_us = (uint32_t)t;
	st->loop_cpu_ns = wire_get_int(msg, "loop_cpu_ns", 0, INT64_MAX, &t) == 0 ? t : -1;
	if (wire_get_bool(msg, "final", &st->final) < 0)
		st->final = 0;
	return 0;
}

json_object *ctrl_bye(void)
{
	return wire_ctrl_new("bye");
}

/* Adds key: v when v is a figure the server accepts (finite, within lo..hi). */
static void ctrl_summary_num(json_object *msg, const char *key, double v, double lo, double hi)
{
	char buf[48];

	if (isfinite(v) && v >= lo && v <= hi)
		json_object_object_add(msg, key, json_object_new_double_s(
							 util_format_decimal(v, 3, buf, sizeof(buf)), buf));
}

json_object *ctrl_summary(const struct test_result *r)
{
	json_object *msg = wire_ctrl_new("summary");
	const struct phase_result *idle = result_find_phase(r, PHASE_IDLE);
	const struct phase_result *down = result_find_phase(r, PHASE_DOWNLOAD);
	const struct phase_result *up = result_find_phase(r, PHASE_UPLOAD);

	if (idle && idle->rtt_ms.n > 0)
		ctrl_summary_num(msg, "idle_latency_ms", idle->rtt_ms.p50, 0, 60000);
	if (down) {
		ctrl_summary_num(msg, "download_increase_ms", down->latency_increase_ms, -1000, 60000);
		ctrl_summary_num(msg, "download_bps", down->down_mbps * 1e6, 0, 1e12);
	}
	if (up) {
		ctrl_summary_num(msg, "upload_increase_ms", up->latency_increase_ms, -1000, 60000);
		ctrl_summary_num(msg, "upload_bps", up->up_mbps * 1e6, 0, 1e12);
	}
	if (r->buffer_down.valid)
		ctrl_summary_num(msg, "download_buffer_ms", r->buffer_down.ms, 0, 60000);
	if (r->buffer_up.valid)
		ctrl_summary_num(msg, "upload_buffer_ms", r->buffer_up.ms, 0, 60000);
	if (r->grade_overall)
		json_object_object_add(msg, "grade", json_object_new_string(r->grade_overall));
	return msg;
}

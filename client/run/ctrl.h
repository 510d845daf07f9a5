/* ctrl: the client side of the control protocol — hello/welcome handshake, server stats,
 * bye. The handshake is blocking with a deadline; later messages flow through libevent. */
#ifndef BM_CTRL_H
#define BM_CTRL_H

#include <stdint.h>

#include <json-c/json.h>
#include <openssl/ssl.h>

#include "common/auth.h"
#include "common/sock.h"
#include "common/wire.h"

struct ctrl_welcome {
	uint8_t token[WIRE_TOKEN_LEN];
	uint16_t udp_port;
	int max_flows;
	int cc_ok;
	char cc_used[16];
	char cc_error[96];
	char server_version[32];
	char udp_ts[8];
	uint16_t dns_port;         /* the server's DNS responder; 0 when it has none */
	char dns_zone[256];        /* its zone (a valid DNS name when dns_port != 0) */
	uint64_t max_rate_bps;     /* the server's bulk rate cap per direction; 0 = none */
	int summary_ok;            /* the server accepts a `summary` before bye */
	int tls_load;              /* the server carries this session's load inside TLS */
	int busy;                  /* set when the handshake failed because the server was busy */
};

struct ctrl_stats {
	int64_t t_ns;          /* server monotonic clock */
	uint64_t up_rx_bytes;
	uint64_t down_tx_bytes;
	uint64_t udp_rx;
	int64_t cc_failures;
	struct tcp_totals down; /* TCP_INFO totals of the server's download flows (0 if absent) */
	int64_t loop_cpu_ns;    /* CPU time of the server's load loop (-1 if absent) */
	uint32_t down_srtt_us;  /* mean smoothed RTT of its open download flows (0: none/absent) */
	int final;
};

/* Sends hello on a connected fd and waits up to timeout_ms for the welcome. 0, or -1 with one
 * sentence in err (server error text, busy, timeout, or protocol violation). */
int ctrl_handshake(int fd, const char *cc, int duration_s, int timeout_ms, struct ctrl_welcome *w,
		   char *err, size_t errlen);

/* How the control connection is protected; either part may be absent. */
struct ctrl_secure {
	SSL *ssl;                   /* TLS already set up on fd (tls_client_connect), NULL: plain */
	const struct auth_key *psk; /* answer the server's challenge with this key, and require the
				     * welcome to prove the server holds it; NULL: no key */
	int tls_load;               /* ask for a TLS load (every data connection TLS, plain ones
				     * refused); a welcome without tls_load fails the handshake */
};

/* ctrl_handshake over sec (NULL: plain, no key). With a key, a server that does not ask for
 * it or cannot prove it fails the handshake ("server could not prove the pre-shared key"),
 * and a refused key says "server rejected the pre-shared key". */
int ctrl_handshake_secure(int fd, const struct ctrl_secure *sec, const char *cc, int duration_s,
			  int timeout_ms, struct ctrl_welcome *w, char *err, size_t errlen);
/* Decodes a "stats" message; -1 if malformed. */
int ctrl_parse_stats(json_object *msg, struct ctrl_stats *st) __attribute__((warn_unused_result));
/* A new "bye" message (caller queues it with frame_put). */
json_object *ctrl_bye(void);
struct test_result;
/* A new "summary" message (docs/protocol.md) from an analysed result: the client's own
 * figures for the server's list of recent tests; figures not measured are left out. Send it
 * only when the welcome's summary_ok is set (older servers end the session on it). */
json_object *ctrl_summary(const struct test_result *r);

#endif

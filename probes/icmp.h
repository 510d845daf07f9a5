/* icmp: the ICMP echo probe (to the server, and to the first-hop gateway) on the runner's
 * loop. Uses an unprivileged ping socket when net.ipv4.ping_group_range allows it, else a raw
 * socket; each echo carries a random cookie and its sequence number, so only our own answers
 * count. */
#ifndef BM_PROBE_ICMP_H
#define BM_PROBE_ICMP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <event2/event.h>

#include "probes/runner.h"
#include "probes/series.h"

#define ICMP_HDR_LEN 8
#define ICMP_COOKIE_LEN 12     /* payload prefix: 64-bit cookie, 32-bit sequence number */
#define ICMP_PAYLOAD_MIN ICMP_COOKIE_LEN
#define ICMP_PAYLOAD_MAX 1452  /* an echo that fits a 1500-byte IPv6 packet */
#define ICMP_PAYLOAD_DEFAULT 56

struct icmp_probe_config {
	struct sockaddr_storage target; /* IPv4, IPv6 or IPv4-mapped IPv6; the port is ignored */
	socklen_t target_len;
	int64_t interval_ns;            /* > 0 */
	int64_t timeout_ns;             /* > 0: later answers make the sample SAMPLE_LOST */
	size_t size;                    /* payload bytes, ICMP_PAYLOAD_MIN..MAX; 0 = default */
	int dscp;                       /* 0..63, or -1 to leave the default */
	struct sockaddr_storage local;  /* -B: the source address; AF_UNSPEC (zero): any */
};

struct icmp_probe;

/* Opens the socket and adds the probe's events to base (the runner's); the first echo leaves
 * when base starts running. Samples go to out (name/target are the caller's; method and
 * available are set here), which must outlive the probe. Returns NULL with one sentence in err
 * (also copied to out->note, with out->available = 0) when neither socket kind is allowed or
 * the configuration is invalid. */
struct icmp_probe *icmp_probe_start(struct event_base *base, const struct icmp_probe_config *cfg,
				    struct probe_series *out, char *err, size_t errlen);
/* For runner_add: stop_sending ends the schedule; destroy marks what is still pending
 * SAMPLE_LOST, closes the socket and frees the probe. A SAMPLE_ERROR sample's aux is the ICMP
 * error's type << 8 | code. */
extern const struct probe_ops icmp_probe_ops;

/* What icmp_parse returns. */
enum icmp_parse_result {
	ICMP_PARSE_BAD = -1,   /* truncated, malformed or bad checksum */
	ICMP_PARSE_OTHER = 0,  /* well formed, but neither an echo reply nor an error about one */
	ICMP_PARSE_REPLY = 1,  /* an echo reply */
	ICMP_PARSE_ERROR = 2,  /* an ICMP error quoting an echo request */
};

struct icmp_parsed {
	uint8_t type, code;   /* of the message received (the error's, for errors) */
	uint16_t id, seq;     /* of the echo replied to or quoted */
	int has_cookie;       /* enough payload for cookie and seq32 (errors may quote less) */
	uint64_t cookie;
	uint32_t seq32;
	size_t payload_len;   /* echo payload bytes present (quoted bytes, for errors) */
};

/* Parses one received message. family: AF_INET or AF_INET6. raw: 1 when it came from a raw
 * IPv4 socket (starts with the IPv4 header, whose length may include options; the ICMP
 * checksum is checked since the kernel hands raw sockets unverified packets); otherwise it
 * starts with the ICMP header (ping sockets, and raw IPv6 sockets, which never include the
 * IPv6 header). Pure and bounded: reads only buf[0..len). */
enum icmp_parse_result icmp_parse(int family, int raw, const uint8_t *buf, size_t len,
				  struct icmp_parsed *out);
/* Parses the quoted echo request a ping socket's error queue returns (ICMP header first);
 * type and code are left to the caller (they come with the error). ICMP_PARSE_ERROR or
 * ICMP_PARSE_OTHER / ICMP_PARSE_BAD. Pure and bounded. */
enum icmp_parse_result icmp_parse_quoted_echo(int family, const uint8_t *buf, size_t len,
					      struct icmp_parsed *out);
/* Writes an echo request (header and payload_len payload bytes) into buf, which must hold
 * ICMP_HDR_LEN + payload_len bytes; payload_len >= ICMP_PAYLOAD_MIN. The checksum is filled
 * for IPv4 (a raw socket needs it; ping sockets and ICMPv6 overwrite it). Returns the length. */
size_t icmp_build_echo(int family, uint16_t id, uint32_t seq32, uint64_t cookie, uint8_t *buf,
		       size_t payload_len);
/* The Internet checksum (RFC 1071) of buf, in host order, ready to be stored big-endian. */
uint16_t icmp_checksum(const uint8_t *buf, size_t len);

#endif

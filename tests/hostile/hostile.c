/* hostile: throws bad input at a live bloatmeterd — garbage, truncated, oversized and
 * wrong-version control messages, forged data hellos and connect probes, random and forged UDP
 * datagrams, a client that vanishes mid-test, a client beyond the session limit — and checks
 * each gets at most an error reply and a close, never a UDP answer. Usage: hostile HOST PORT. Exit 0 if the daemon behaved.
 * `hostile --silent PORT SECONDS` instead listens on 127.0.0.1 without ever answering. */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/ctrl.h"
#include "common/clock.h"
#include "common/sock.h"
#include "common/util.h"
#include "common/wire.h"

static struct sockaddr_storage srv;
static socklen_t srvlen;
static int failures;

static void expect(int ok, const char *what)
{
	printf("%s %s\n", ok ? "ok  " : "FAIL", what);
	failures += !ok;
}

static int tcp_open(void)
{
	char err[256];
	int fd = sock_connect_tcp(&srv, srvlen, 2000, err, sizeof(err));

	if (fd < 0) {
		fprintf(stderr, "hostile: %s\n", err);
		exit(2);
	}
	return fd;
}

static void send_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len > 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
		} else if (n < 0 && errno == EAGAIN) {
			poll(&pfd, 1, 1000);
		} else {
			return; /* the server may close on us mid-way: that is allowed */
		}
	}
}

/* Reads until the server closes or timeout; returns bytes read, -1 if still open. */
static ssize_t read_until_close(int fd, int timeout_ms, char *buf, size_t cap)
{
	int64_t deadline = clock_mono_ns() + (int64_t)timeout_ms * NS_PER_MS;
	size_t got = 0;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int64_t left = (deadline - clock_mono_ns()) / NS_PER_MS;
		char tmp[4096];
		ssize_t n;

		if (left <= 0)
			return -1;
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		n = recv(fd, tmp, sizeof(tmp), 0);
		if (n == 0 || (n < 0 && errno != EAGAIN)) {
			if (buf && cap)
				buf[got < cap ? got : cap - 1] = '\0';
			return (ssize_t)got;
		}
		if (n > 0 && buf && got + 1 < cap) {
			size_t c = (size_t)n < cap - 1 - got ? (size_t)n : cap - 1 - got;

			memcpy(buf + got, tmp, c);
			got += c;
		}
	}
}

static void send_frame(int fd, const char *json)
{
	uint8_t hdr[4];
	uint32_t len = (uint32_t)strlen(json);

	hdr[0] = (uint8_t)(len >> 24);
	hdr[1] = (uint8_t)(len >> 16);
	hdr[2] = (uint8_t)(len >> 8);
	hdr[3] = (uint8_t)len;
	send_all(fd, hdr, 4);
	send_all(fd, json, len);
}

/* One control-port case: send bytes, expect a close within timeout (and optionally an error
 * reply containing `needle`). */
static void ctrl_case(const char *what, const void *bytes, size_t len, const char *json,
		      const char *needle, int timeout_ms)
{
	int fd = tcp_open();
	char reply[2048] = "";
	ssize_t n;

	if (bytes)
		send_all(fd, bytes, len);
	if (json)
		send_frame(fd, json);
	n = read_until_close(fd, timeout_ms, reply, sizeof(reply));
	if (n < 0) {
		expect(0, what);
	} else if (needle) {
		/* Skip the 4-byte frame header when looking for the reason. */
		expect(n > 4 && strstr(reply + 4, needle) != NULL, what);
	} else {
		expect(1, what);
	}
	close(fd);
}

/* Connect probes: a forged request and garbage after the magic get a close and not one byte. */
static void connprobe_cases(uint8_t junk[4096])
{
	struct wire_connprobe_req req = { .version = WIRE_VERSION, .seq = 1 };
	uint8_t forged[WIRE_CONNPROBE_REQ_LEN];
	static const char *const what[2] = {
		"a connect probe with an unknown token is closed unanswered",
		"garbage after the connect-probe magic is closed unanswered",
	};

	if (util_random(req.token, sizeof(req.token)) < 0)
		exit(2);
	wire_connprobe_req_encode(&req, forged);
	memcpy(junk, forged, 4); /* the magic, then 4092 random bytes */
	for (int i = 0; i < 2; i++) {
		int fd = tcp_open();
		char reply[64];

		send_all(fd, i == 0 ? forged : junk, i == 0 ? sizeof(forged) : 4096);
		expect(read_until_close(fd, 3000, reply, sizeof(reply)) == 0, what[i]);
		close(fd);
	}
}

static void tcp_cases(void)
{
	uint8_t junk[4096], big[4] = { 0x00, 0x10, 0x00, 0x00 }, forged[WIRE_DATA_HELLO_LEN];
	struct wire_data_hello h = { .version = WIRE_VERSION, .dir = WIRE_DIR_DOWN };

	if (util_random(junk, sizeof(junk)) < 0)
		exit(2);
	junk[0] = 0x7f; /* a length far above the cap: must be refused, not buffered */
	ctrl_case("random bytes on the control port are refused", junk, sizeof(junk), NULL, "length", 3000);
	ctrl_case("oversized frame length gets an error and a close", big, sizeof(big), NULL, "length", 3000);
	ctrl_case("malformed JSON gets an error", NULL, 0, "{\"v\":1,\"type\":", "JSON", 3000);
	ctrl_case("wrong protocol version gets an error naming it", NULL, 0,
		  "{\"v\":99,\"type\":\"hello\"}", "version", 3000);
	ctrl_case("hello with bad fields gets an error", NULL, 0,
		  "{\"v\":1,\"type\":\"hello\",\"cc\":\"cubic\",\"duration_s\":-5}", "duration", 3000);
	ctrl_case("unexpected first message gets an error", NULL, 0, "{\"v\":1,\"type\":\"bye\"}",
		  "hello", 3000);
	ctrl_case("a truncated header is dropped after the handshake timeout", "\x00\x00", 2, NULL,
		  NULL, 8000);
	if (util_random(h.token, sizeof(h.token)) < 0)
		exit(2);
	wire_data_hello_encode(&h, forged);
	ctrl_case("a data hello with an unknown token is dropped", forged, sizeof(forged), NULL, NULL,
		  3000);
	connprobe_cases(junk);
}

/* UDP: nothing may come back for garbage or unknown tokens. */
static void udp_cases(void)
{
	int fd = socket(srv.ss_family, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	uint8_t buf[1500];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int answered = 0;

	if (fd < 0 || connect(fd, (struct sockaddr *)&srv, srvlen) < 0)
		exit(2);
	for (int i = 0; i < 300; i++) {
		size_t len = (size_t)(rand() % 1500) + 1;

		if (util_random(buf, len) < 0)
			exit(2);
		if (i % 2) { /* well-formed probe request with a random token */
			struct wire_probe p = { .kind = WIRE_PROBE_REQ, .seq = (uint32_t)i };

			memcpy(p.token, buf + 64, WIRE_TOKEN_LEN);
			len = 64 + (size_t)(rand() % 100);
			wire_probe_encode(&p, buf, len);
		}
		(void)send(fd, buf, len, 0);
	}
	while (poll(&pfd, 1, 500) > 0) {
		if (recv(fd, buf, sizeof(buf), 0) > 0)
			answered++;
		else
			break;
	}
	expect(answered == 0, "random and forged UDP datagrams get no answer");
	close(fd);
}

/* With --max-sessions 1 and one session open, a second client gets a clear busy reply. */
static void busy_case(void)
{
	int fd = tcp_open();
	struct ctrl_welcome w;
	char err[256];

	if (ctrl_handshake(fd, "cubic", 30, 3000, &w, err, sizeof(err)) < 0) {
		printf("FAIL handshake for the first session: %s\n", err);
		failures++;
	} else {
		int fd2 = tcp_open();
		int rc = ctrl_handshake(fd2, "cubic", 30, 3000, &w, err, sizeof(err));

		expect(rc < 0 && strstr(err, "busy, retry after") != NULL,
		       "a client beyond the session limit is told busy, retry after N s");
		close(fd2);
	}
	close(fd);
	usleep(300 * 1000); /* let the server notice the close */
}

/* Listens without ever answering, so the client's handshake deadline can be tested. */
static int silent_listener(const char *port, const char *seconds)
{
	char err[256];
	int fd = sock_listen_tcp("127.0.0.1", (uint16_t)atoi(port), err, sizeof(err));

	if (fd < 0) {
		fprintf(stderr, "hostile: %s\n", err);
		return 2;
	}
	sleep((unsigned)atoi(seconds));
	close(fd);
	return 0;
}

/* A real session whose client disappears without bye; the server must free it (the wrapper
 * runs the daemon with --max-sessions 1, so a leaked session would refuse the next test). */
static void vanish_case(void)
{
	int fd = tcp_open(), dfd;
	struct ctrl_welcome w;
	struct wire_data_hello h = { .version = WIRE_VERSION, .dir = WIRE_DIR_DOWN };
	uint8_t hello[WIRE_DATA_HELLO_LEN], buf[65536];
	char err[256];
	ssize_t got = 0;

	if (ctrl_handshake(fd, "cubic", 30, 3000, &w, err, sizeof(err)) < 0) {
		printf("FAIL handshake for the vanishing client: %s\n", err);
		failures++;
		close(fd);
		return;
	}
	dfd = tcp_open();
	memcpy(h.token, w.token, WIRE_TOKEN_LEN);
	wire_data_hello_encode(&h, hello);
	send_all(dfd, hello, sizeof(hello));
	for (int i = 0; i < 50 && got < 100000; i++) {
		struct pollfd pfd = { .fd = dfd, .events = POLLIN };
		ssize_t n;

		poll(&pfd, 1, 100);
		n = recv(dfd, buf, sizeof(buf), 0);
		if (n > 0)
			got += n;
	}
	expect(got > 0, "a valid session streams download data");
	close(dfd);
	close(fd); /* vanish: no bye */
}

int main(int argc, char **argv)
{
	char err[256];

	if (argc == 4 && strcmp(argv[1], "--silent") == 0)
		return silent_listener(argv[2], argv[3]);
	if (argc != 3) {
		fprintf(stderr, "usage: hostile HOST PORT | hostile --silent PORT SECONDS\n");
		return 2;
	}
	if (sock_resolve(argv[1], (uint16_t)atoi(argv[2]), SOCK_STREAM, &srv, &srvlen, err, sizeof(err)) < 0) {
		fprintf(stderr, "hostile: %s\n", err);
		return 2;
	}
	srand(1);
	tcp_cases();
	udp_cases();
	busy_case();
	vanish_case();
	printf("%d failures\n", failures);
	return failures ? 1 : 0;
}

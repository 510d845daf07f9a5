/* hostile: throws bad input at a live bloatmeterd — garbage, truncated, oversized and
 * wrong-version control messages, forged data hellos and connect probes, random and forged UDP
 * datagrams, a client that vanishes mid-test, a client beyond the session limit — and checks
 * each gets at most an error reply and a close, never a UDP answer. Usage: hostile HOST PORT. Exit 0 if the daemon behaved.
 * `hostile --silent PORT SECONDS` instead listens on 127.0.0.1 without ever answering.
 * Load modes, run by hostile.sh next to a real client (SRC: the attacker's source address):
 * `hostile --slowloris HOST PORT SRC CONNS SECONDS` keeps CONNS connections that never finish
 * their first message (silent, a control frame trickled one byte every 2 s, a partial data
 * hello) and checks none outlives the handshake deadline;
 * `hostile --udp-flood HOST PORT SRC SECONDS RATE` sends RATE bad datagrams a second to the
 * reflector (PORT) and the DNS responder (PORT + 1) and checks the reflector answers none and
 * the responder no more than its per-source rate limit allows;
 * `hostile --psk-hold HOST PORT SRC CONNS MAXHELD` (a daemon with a psk-file) opens CONNS
 * connections, each sending a 64 KiB hello, reading the challenge and never answering it, and
 * checks that at most MAXHELD got a challenge (the rest are reset at accept: the hello stage
 * counts against the client's pending cap) and that the server closes each one within the
 * handshake timeout from its connect;
 * `hostile --session-hog HOST PORT SRC CONNS VICTIM` starts a real session from SRC, then
 * opens CONNS silent connections from SRC, and checks that a client at VICTIM still gets its
 * welcome: a running session exempts no one from the per-client pending cap;
 * `hostile --bye-hold HOST PORT` (a daemon with --max-sessions 1) runs a session with a tiny
 * receive buffer that never reads its control connection, says bye, and keeps sending a probe
 * every 0.5 s; a new client must get a welcome within a few seconds of the bye: a closing
 * session is freed within a bounded time;
 * `hostile --cc HOST PORT NAME` says hello asking for congestion control NAME and prints what
 * the welcome says of it (hostile.sh checks under strace that the daemon never tried a name
 * the kernel does not have);
 * `hostile --linger-flood HOST PORT SRC CONNS` opens CONNS connections 1 ms apart, each with a
 * zero-length frame (one error reply, then the server's lingering close), never reads or
 * closes them, and holds them 2.5 s; hostile.sh counts the daemon's descriptors meanwhile. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/run/ctrl.h"
#include "common/clock.h"
#include "common/sock.h"
#include "common/util.h"
#include "common/wire.h"
#include "server/ctx.h"

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

/* ---- load modes ---- */

enum loris_kind { LORIS_SILENT, LORIS_TRICKLE, LORIS_PARTIAL_HELLO, LORIS_KINDS };

#define LORIS_TRICKLE_NS (2 * NS_PER_SEC)     /* one byte this often: resets idle timers */
#define LORIS_REFUSED_NS (200 * NS_PER_MS)    /* closed sooner: refused at accept */
#define LORIS_REOPEN_NS (100 * NS_PER_MS)     /* an attacker retries, without spinning */
#define LORIS_CONNECT_NS (2 * NS_PER_SEC)     /* a connect not done by then has failed */
#define LORIS_SLACK_NS (1500 * NS_PER_MS)     /* scheduling slack over the deadline */

struct loris_conn {
	int fd;                 /* -1: closed, reopen at next_ns */
	int connected;
	enum loris_kind kind;
	int64_t opened_ns;
	int64_t next_ns;        /* next byte (trickle) or reopen */
};

struct loris_stats {
	uint64_t opened, refused, closed, connect_failed;
	int64_t max_life_ns;
};

/* Opens one attack connection from src (non-blocking; finishes in loris_poll). */
static void loris_open(struct loris_conn *c, const struct sockaddr_storage *src, socklen_t srclen,
		       struct loris_stats *st, int64_t now)
{
	c->connected = 0;
	c->opened_ns = now;
	c->next_ns = now + LORIS_TRICKLE_NS;
	c->fd = socket(srv.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		perror("hostile: socket");
		exit(2);
	}
	if (bind(c->fd, (const struct sockaddr *)src, srclen) < 0 ||
	    (connect(c->fd, (struct sockaddr *)&srv, srvlen) < 0 && errno != EINPROGRESS)) {
		st->connect_failed++;
		close(c->fd);
		c->fd = -1;
		c->next_ns = now + LORIS_REOPEN_NS;
		return;
	}
	st->opened++;
}

/* The connection's first bytes once connected: nothing, a control frame header announcing
 * 1000 bytes, or the data magic and half a hello. */
static void loris_first(struct loris_conn *c)
{
	static const uint8_t frame[4] = { 0, 0, 0x03, 0xe8 }, hello[8] = "BMD1\x01" "D";

	c->connected = 1;
	if (c->kind == LORIS_TRICKLE)
		(void)send(c->fd, frame, sizeof(frame), MSG_NOSIGNAL);
	else if (c->kind == LORIS_PARTIAL_HELLO)
		(void)send(c->fd, hello, sizeof(hello), MSG_NOSIGNAL);
}

/* The server closed (or reset) c: a refusal if at once, else a deadline we time. */
static void loris_closed(struct loris_conn *c, struct loris_stats *st, int64_t now)
{
	int64_t life = now - c->opened_ns;

	if (life < LORIS_REFUSED_NS) {
		st->refused++;
	} else {
		st->closed++;
		if (life > st->max_life_ns)
			st->max_life_ns = life;
	}
	close(c->fd);
	c->fd = -1;
	c->next_ns = now + LORIS_REOPEN_NS;
}

/* One connection's turn after poll: connect completion, a close by the server, a byte due. */
static void loris_step(struct loris_conn *c, short revents, struct loris_stats *st, int64_t now)
{
	uint8_t buf[512];

	if (!c->connected) {
		int soerr = 0;
		socklen_t l = sizeof(soerr);

		if (revents == 0) {
			if (now - c->opened_ns > LORIS_CONNECT_NS) {
				st->connect_failed++;
				close(c->fd);
				c->fd = -1;
				c->next_ns = now + LORIS_REOPEN_NS;
			}
			return;
		}
		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &l) < 0 || soerr != 0) {
			loris_closed(c, st, now);
			return;
		}
		loris_first(c);
		return;
	}
	if (revents & (POLLIN | POLLHUP | POLLERR)) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), 0);

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			loris_closed(c, st, now);
			return;
		}
	}
	if (c->kind != LORIS_SILENT && now >= c->next_ns) {
		(void)send(c->fd, "x", 1, MSG_NOSIGNAL);
		c->next_ns = now + LORIS_TRICKLE_NS;
	}
}

/* Keeps n connections from src open against the server for `seconds`, reopening each one the
 * server closes, and checks none outlived the handshake deadline. */
static int slowloris(const char *srcaddr, int n, double seconds)
{
	struct loris_conn *c = calloc((size_t)n, sizeof(*c));
	struct pollfd *pfd = calloc((size_t)n, sizeof(*pfd));
	struct loris_stats st = { 0 };
	struct sockaddr_storage src;
	socklen_t srclen;
	char err[256];
	int64_t now = clock_mono_ns(), end = now + (int64_t)(seconds * 1e9);
	int64_t limit = (int64_t)SERVER_HANDSHAKE_TIMEOUT_S * NS_PER_SEC + LORIS_SLACK_NS;
	int open_at_end = 0;

	if (c == NULL || pfd == NULL ||
	    sock_resolve(srcaddr, 0, SOCK_STREAM, &src, &srclen, err, sizeof(err)) < 0) {
		fprintf(stderr, "hostile: %s\n", c && pfd ? err : "out of memory");
		return 2;
	}
	for (int i = 0; i < n; i++) {
		c[i].kind = (enum loris_kind)(i % LORIS_KINDS);
		loris_open(&c[i], &src, srclen, &st, now);
	}
	while ((now = clock_mono_ns()) < end) {
		for (int i = 0; i < n; i++) {
			pfd[i].fd = c[i].fd;
			pfd[i].events = c[i].connected ? POLLIN : POLLOUT;
			pfd[i].revents = 0;
		}
		if (poll(pfd, (nfds_t)n, 50) < 0 && errno != EINTR) {
			perror("hostile: poll");
			return 2;
		}
		now = clock_mono_ns();
		for (int i = 0; i < n; i++) {
			if (c[i].fd < 0) {
				if (now >= c[i].next_ns)
					loris_open(&c[i], &src, srclen, &st, now);
				continue;
			}
			loris_step(&c[i], pfd[i].revents, &st, now);
		}
	}
	for (int i = 0; i < n; i++) {
		if (c[i].fd >= 0) {
			open_at_end++;
			close(c[i].fd);
		}
	}
	printf("slowloris from %s: %d connections for %.0f s: opened %llu, refused at once %llu, "
	       "closed by the deadline %llu (longest %.2f s), connect failed %llu, open at end %d\n",
	       srcaddr, n, seconds, (unsigned long long)st.opened, (unsigned long long)st.refused,
	       (unsigned long long)st.closed, (double)st.max_life_ns / 1e9,
	       (unsigned long long)st.connect_failed, open_at_end);
	expect(st.max_life_ns <= limit, "no unfinished connection outlives the handshake deadline");
	expect(st.closed > 0, "silent and trickling connections are closed by the server");
	free(pfd);
	free(c);
	return failures ? 1 : 0;
}

#define FLOOD_MAX 65000 /* about the largest UDP payload */

/* One bad datagram for the reflector: random bytes, a truncated header, a well-formed request
 * with a wrong token, or (1 in 16) the largest UDP payload. */
static size_t flood_probe(uint64_t k, const uint8_t *rnd, size_t rndlen, uint8_t *out)
{
	size_t off = (size_t)(k * 7919) % (rndlen - 2048), len;
	struct wire_probe p = { .kind = WIRE_PROBE_REQ, .seq = (uint32_t)k };

	if (k % 16 == 15)
		return FLOOD_MAX; /* sent straight from the random buffer */
	switch (k % 3) {
	case 0:
		len = 1 + (size_t)rand() % WIRE_PROBE_MAX;
		memcpy(out, rnd + off, len);
		return len;
	case 1:
		wire_probe_encode(&p, out, WIRE_PROBE_MIN);
		return 1 + (size_t)rand() % (WIRE_PROBE_MIN - 1);
	default:
		memcpy(p.token, rnd + off, WIRE_TOKEN_LEN);
		len = WIRE_PROBE_MIN + (size_t)rand() % (WIRE_PROBE_MAX - WIRE_PROBE_MIN + 1);
		wire_probe_encode(&p, out, len);
		return len;
	}
}

/* One bad datagram for the DNS responder: random bytes, a header cut short, a "response"
 * (QR set: must never be answered), or the largest UDP payload. */
static size_t flood_dns(uint64_t k, const uint8_t *rnd, size_t rndlen, uint8_t *out)
{
	size_t off = (size_t)(k * 104729) % (rndlen - 2048), len;

	if (k % 16 == 15)
		return FLOOD_MAX;
	switch (k % 3) {
	case 0:
		len = 1 + (size_t)rand() % 512;
		memcpy(out, rnd + off, len);
		return len;
	case 1:
		len = 1 + (size_t)rand() % 11;
		memcpy(out, rnd + off, len);
		return len;
	default:
		len = 12 + (size_t)rand() % 100;
		memcpy(out, rnd + off, len);
		out[2] |= 0x80; /* QR: a response */
		return len;
	}
}

/* Counts datagrams waiting on fd without blocking. */
static uint64_t drain_replies(int fd)
{
	uint8_t buf[2048];
	uint64_t n = 0;

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
		n++;
	return n;
}

/* A UDP socket from src, connected to the server's port. */
static int flood_socket(const struct sockaddr_storage *src, socklen_t srclen, uint16_t port)
{
	struct sockaddr_storage dst = srv;
	int fd = socket(srv.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (dst.ss_family == AF_INET)
		((struct sockaddr_in *)&dst)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)&dst)->sin6_port = htons(port);
	if (fd < 0 || bind(fd, (const struct sockaddr *)src, srclen) < 0 ||
	    connect(fd, (struct sockaddr *)&dst, srvlen) < 0) {
		perror("hostile: flood socket");
		exit(2);
	}
	return fd;
}

/* Sends `rate` bad datagrams a second, alternating between the reflector and the DNS port,
 * for `seconds`; the reflector must answer none, the responder at most its rate limit. */
static int udp_flood(const char *srcaddr, uint16_t port, double seconds, long rate)
{
	static uint8_t rnd[FLOOD_MAX + 4096], out[WIRE_PROBE_MAX + 1];
	struct sockaddr_storage src;
	socklen_t srclen;
	char err[256];
	int fd[2];
	uint64_t sent[2] = { 0, 0 }, replies[2] = { 0, 0 }, k = 0;
	int64_t t0 = clock_mono_ns(), end = t0 + (int64_t)(seconds * 1e9);
	/* The responder's bucket: a burst of 100, then 200 a second (server/dns.h). */
	double dns_allowed = 100 + 200 * seconds * 1.1;

	if (sock_resolve(srcaddr, 0, SOCK_DGRAM, &src, &srclen, err, sizeof(err)) < 0) {
		fprintf(stderr, "hostile: %s\n", err);
		return 2;
	}
	if (util_random(rnd, sizeof(rnd)) < 0)
		return 2;
	fd[0] = flood_socket(&src, srclen, port);
	fd[1] = flood_socket(&src, srclen, (uint16_t)(port + 1));
	while (clock_mono_ns() < end) {
		/* Bursts of 100, paced to the rate. */
		for (int i = 0; i < 100; i++, k++) {
			int d = (int)(k & 1);
			size_t len = d ? flood_dns(k >> 1, rnd, sizeof(rnd), out)
				       : flood_probe(k >> 1, rnd, sizeof(rnd), out);

			if (send(fd[d], len == FLOOD_MAX ? rnd : out, len, 0) == (ssize_t)len)
				sent[d]++;
		}
		replies[0] += drain_replies(fd[0]);
		replies[1] += drain_replies(fd[1]);
		while (clock_mono_ns() < t0 + (int64_t)((double)k / (double)rate * 1e9))
			usleep(1000);
	}
	usleep(300 * 1000);
	replies[0] += drain_replies(fd[0]);
	replies[1] += drain_replies(fd[1]);
	printf("udp flood from %s: %.0f s at %ld/s: %llu to the reflector (%llu answered), "
	       "%llu to the DNS responder (%llu answered, at most %.0f allowed)\n", srcaddr, seconds,
	       rate, (unsigned long long)sent[0], (unsigned long long)replies[0],
	       (unsigned long long)sent[1], (unsigned long long)replies[1], dns_allowed);
	expect(sent[0] > 0 && replies[0] == 0, "the reflector answers no bad datagram");
	expect((double)replies[1] <= dns_allowed, "the DNS responder stays within its rate limit");
	close(fd[0]);
	close(fd[1]);
	return failures ? 1 : 0;
}

/* A blocking TCP connection from src to the server (2 s timeouts on its reads and writes),
 * or -1. */
static int connect_from(const struct sockaddr_storage *src, socklen_t srclen)
{
	struct timeval tv = { 2, 0 };
	int fd = socket(srv.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		perror("hostile: socket");
		exit(2);
	}
	if (bind(fd, (const struct sockaddr *)src, srclen) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
	    connect(fd, (struct sockaddr *)&srv, srvlen) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Reads one control frame's body into buf (NUL-terminated, cut to cap - 1): its length, or -1
 * when the connection closed or broke first. */
static ssize_t read_frame(int fd, char *buf, size_t cap)
{
	uint8_t hdr[4];
	size_t len, got = 0;

	if (recv(fd, hdr, 4, MSG_WAITALL) != 4)
		return -1;
	len = (size_t)hdr[0] << 24 | (size_t)hdr[1] << 16 | (size_t)hdr[2] << 8 | hdr[3];
	while (got < len) {
		char tmp[4096];
		size_t want = len - got < sizeof(tmp) ? len - got : sizeof(tmp);
		ssize_t n = recv(fd, tmp, want, 0);

		if (n <= 0)
			return -1;
		if (got < cap - 1)
			memcpy(buf + got, tmp, (size_t)n < cap - 1 - got ? (size_t)n : cap - 1 - got);
		got += (size_t)n;
	}
	buf[got < cap - 1 ? got : cap - 1] = '\0';
	return (ssize_t)len;
}

/* A hello padded to the largest frame (64 KiB), as a psk attacker would send to make the
 * server hold as much as it can while the challenge waits. */
static char *big_hello(void)
{
	static const char head[] = "{\"v\":1,\"type\":\"hello\",\"client_version\":\"hostile\","
				   "\"cc\":\"cubic\",\"duration_s\":10,\"pad\":\"";
	char *j = malloc(WIRE_CTRL_MAX + 1);
	size_t n = sizeof(head) - 1, pad = WIRE_CTRL_MAX - n - 2;

	if (j == NULL)
		exit(2);
	memcpy(j, head, n);
	memset(j + n, 'a', pad);
	memcpy(j + n + pad, "\"}", 3);
	return j;
}

/* Opens conns connections from src one after the other, each with a 64 KiB hello whose
 * challenge it reads and never answers; then waits for the server to close them. */
static int psk_hold(const char *srcaddr, int conns, int max_held)
{
	int64_t limit = (int64_t)SERVER_HANDSHAKE_TIMEOUT_S * NS_PER_SEC + LORIS_SLACK_NS;
	int *fd = calloc((size_t)conns, sizeof(*fd));
	int64_t *opened = calloc((size_t)conns, sizeof(*opened)), longest = 0;
	char *hello = big_hello(), reply[512], err[256];
	struct sockaddr_storage src;
	socklen_t srclen;
	int held = 0, refused = 0, closed = 0, open_late = 0;

	if (fd == NULL || opened == NULL ||
	    sock_resolve(srcaddr, 0, SOCK_STREAM, &src, &srclen, err, sizeof(err)) < 0) {
		fprintf(stderr, "hostile: %s\n", fd && opened ? err : "out of memory");
		return 2;
	}
	for (int i = 0; i < conns; i++) {
		opened[i] = clock_mono_ns();
		fd[i] = connect_from(&src, srclen);
		if (fd[i] >= 0)
			send_frame(fd[i], hello);
		if (fd[i] >= 0 && read_frame(fd[i], reply, sizeof(reply)) > 0 &&
		    strstr(reply, "\"challenge\"") != NULL) {
			held++;
			continue;
		}
		refused++; /* reset at accept, or no challenge: not held */
		if (fd[i] >= 0)
			close(fd[i]);
		fd[i] = -1;
	}
	/* Now the server must close every held one by its deadline. */
	for (int i = 0; i < conns; i++) {
		struct pollfd pfd = { .fd = fd[i], .events = POLLIN };
		int64_t left = (opened[i] + limit - clock_mono_ns()) / NS_PER_MS;
		char b[64];

		if (fd[i] < 0)
			continue;
		if (left > 0 && poll(&pfd, 1, (int)left) > 0 && recv(fd[i], b, sizeof(b), 0) <= 0) {
			int64_t life = clock_mono_ns() - opened[i];

			closed++;
			longest = life > longest ? life : longest;
		} else {
			open_late++;
		}
		close(fd[i]);
	}
	printf("psk hold from %s: %d connections with a 64 KiB hello: %d got the challenge and "
	       "held it, %d refused; of the held, %d closed by the server (longest %.2f s), %d "
	       "still open after %.1f s\n", srcaddr, conns, held, refused, closed,
	       (double)longest / 1e9, open_late, (double)limit / 1e9);
	expect(held > 0 && held <= max_held,
	       "connections in the hello stage count against the client's pending cap");
	expect(open_late == 0, "a challenge held unanswered is closed within the handshake timeout");
	free(hello);
	free(opened);
	free(fd);
	return failures ? 1 : 0;
}

/* A client with a running session (from srcaddr) opens conns silent connections; a client at
 * victim must still be served. */
static int session_hog(const char *srcaddr, int conns, const char *victim)
{
	struct sockaddr_storage src, vsrc;
	socklen_t srclen, vlen;
	struct ctrl_welcome w;
	char err[256];
	int *fd = calloc((size_t)conns, sizeof(*fd));
	int ctrl, vfd, open_n = 0, reset = 0, served;

	if (fd == NULL || sock_resolve(srcaddr, 0, SOCK_STREAM, &src, &srclen, err, sizeof(err)) < 0 ||
	    sock_resolve(victim, 0, SOCK_STREAM, &vsrc, &vlen, err, sizeof(err)) < 0) {
		fprintf(stderr, "hostile: %s\n", fd ? err : "out of memory");
		return 2;
	}
	ctrl = connect_from(&src, srclen);
	if (ctrl < 0 || ctrl_handshake(ctrl, "cubic", 30, 3000, &w, err, sizeof(err)) < 0) {
		printf("FAIL the hog's own session: %s\n", ctrl < 0 ? "no connection" : err);
		return 1;
	}
	for (int i = 0; i < conns; i++)
		fd[i] = connect_from(&src, srclen);
	usleep(300 * 1000); /* the server accepts (or resets) them */
	for (int i = 0; i < conns; i++) {
		struct pollfd pfd = { .fd = fd[i], .events = POLLIN };
		char b[8];

		if (fd[i] >= 0 && (poll(&pfd, 1, 0) == 0 || recv(fd[i], b, sizeof(b), MSG_DONTWAIT) > 0))
			open_n++;
		else
			reset++;
	}
	vfd = connect_from(&vsrc, vlen);
	served = vfd >= 0 && ctrl_handshake(vfd, "cubic", 5, 3000, &w, err, sizeof(err)) == 0;
	printf("session hog from %s: %d silent connections next to its session: %d held, %d reset; "
	       "a client at %s: %s\n", srcaddr, conns, open_n, reset, victim,
	       served ? "welcome" : vfd < 0 ? "no connection" : err);
	expect(served, "another client is served while one with a session hogs connections");
	if (vfd >= 0)
		close(vfd);
	for (int i = 0; i < conns; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	close(ctrl);
	free(fd);
	return failures ? 1 : 0;
}

#define BYE_HOLD_LIMIT_NS (8 * NS_PER_SEC) /* bye → the place is free again, with slack */

/* One probe request of the session token to the server's UDP port (a connected socket). */
static void bye_hold_probe(int ufd, const uint8_t *token, uint32_t seq)
{
	struct wire_probe p = { .kind = WIRE_PROBE_REQ, .seq = seq };
	uint8_t buf[WIRE_PROBE_MIN];

	memcpy(p.token, token, WIRE_TOKEN_LEN);
	p.client_send_ns = clock_mono_ns();
	wire_probe_encode(&p, buf, sizeof(buf));
	(void)send(ufd, buf, sizeof(buf), MSG_DONTWAIT);
}

/* With --max-sessions 1: whether a new client gets a welcome within limit_ns (probing the held
 * session's token meanwhile, so it stays in use); how long that took, or -1. err gets the last
 * refusal. */
static int64_t place_freed(int ufd, const uint8_t *token, uint32_t *seq, int64_t limit_ns,
			   char *err, size_t errlen)
{
	int64_t t0 = clock_mono_ns();

	while (clock_mono_ns() - t0 < limit_ns) {
		int nfd = tcp_open();
		struct ctrl_welcome w2;
		int ok = ctrl_handshake(nfd, "cubic", 5, 2000, &w2, err, errlen) == 0;

		close(nfd);
		if (ok)
			return clock_mono_ns() - t0;
		bye_hold_probe(ufd, token, (*seq)++);
		usleep(500 * 1000);
	}
	return -1;
}

/* A session (duration_s long) whose client never reads its control connection: a socket with
 * the smallest receive window, so the server's stats soon fill it and its send buffer. */
static int unread_session(int *fd, int *ufd, int duration_s, struct ctrl_welcome *w)
{
	int rcvbuf = 1;
	char err[256];

	*fd = socket(srv.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	*ufd = socket(srv.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (*fd < 0 || *ufd < 0 || setsockopt(*fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) < 0 ||
	    connect(*fd, (struct sockaddr *)&srv, srvlen) < 0 ||
	    connect(*ufd, (struct sockaddr *)&srv, srvlen) < 0) {
		perror("hostile: unread session sockets");
		exit(2);
	}
	if (ctrl_handshake(*fd, "cubic", duration_s, 3000, w, err, sizeof(err)) < 0) {
		printf("FAIL the unread session's handshake: %s\n", err);
		return -1;
	}
	return 0;
}

/* A session whose client never reads, says bye and keeps probing: its place must come free. */
static int bye_hold(void)
{
	int fd, ufd;
	struct ctrl_welcome w;
	char err[256] = "";
	uint32_t seq = 0;
	int64_t freed_ns;

	if (unread_session(&fd, &ufd, 30, &w) < 0)
		return 1;
	for (int i = 0; i < 8; i++) { /* 4 s of stats nobody reads */
		bye_hold_probe(ufd, w.token, seq++);
		usleep(500 * 1000);
	}
	send_frame(fd, "{\"v\":1,\"type\":\"bye\"}");
	freed_ns = place_freed(ufd, w.token, &seq, 2 * BYE_HOLD_LIMIT_NS, err, sizeof(err));
	if (freed_ns < 0)
		printf("closing session: still holding the only place %.0f s after its bye (%s)\n",
		       (double)(2 * BYE_HOLD_LIMIT_NS) / 1e9, err);
	else
		printf("closing session: its place was free %.1f s after its bye\n",
		       (double)freed_ns / 1e9);
	expect(freed_ns >= 0 && freed_ns <= BYE_HOLD_LIMIT_NS,
	       "a session whose client never reads after bye is freed within a bounded time");
	close(ufd);
	close(fd);
	usleep(300 * 1000); /* let the server notice the closes */
	return failures ? 1 : 0;
}

/* With 4 KiB kernel send buffers, SESSIONLIFE_BACKLOG_MAX (16 KiB) of stats at ~2.4 kB/s queue
 * within about 10 s; with slack. */
#define READ_HOLD_LIMIT_NS (25 * NS_PER_SEC)

/* An active session (280 s asked: the default max-duration is 300 s) whose client probes but
 * never reads its control connection: the server must end it once its unread stats pass the
 * backlog cap, long before the deadline. */
static int read_hold(void)
{
	int fd, ufd;
	struct ctrl_welcome w;
	char err[256] = "";
	uint32_t seq = 0;
	int64_t freed_ns;

	if (unread_session(&fd, &ufd, 280, &w) < 0)
		return 1;
	freed_ns = place_freed(ufd, w.token, &seq, READ_HOLD_LIMIT_NS + 5 * NS_PER_SEC, err,
			       sizeof(err));
	if (freed_ns < 0)
		printf("unread session: still holding the only place after %.0f s (%s)\n",
		       (double)(READ_HOLD_LIMIT_NS + 5 * NS_PER_SEC) / 1e9, err);
	else
		printf("unread session: its place was free %.1f s after its welcome\n",
		       (double)freed_ns / 1e9);
	expect(freed_ns >= 0 && freed_ns <= READ_HOLD_LIMIT_NS,
	       "an active session whose client never reads is ended at the backlog cap");
	close(ufd);
	close(fd);
	usleep(300 * 1000);
	return failures ? 1 : 0;
}

/* A hello asking for cc; prints the welcome's verdict. 0 when a welcome came. */
static int cc_ask(const char *cc)
{
	int fd = tcp_open();
	struct ctrl_welcome w;
	char err[256];

	if (ctrl_handshake(fd, cc, 5, 3000, &w, err, sizeof(err)) < 0) {
		printf("FAIL hello with cc %s: %s\n", cc, err);
		close(fd);
		return 1;
	}
	printf("cc %s: cc_ok %d, cc_used %s%s%s\n", cc, w.cc_ok, w.cc_used,
	       w.cc_ok ? "" : ", cc_error ", w.cc_ok ? "" : w.cc_error);
	close(fd);
	return 0;
}

/* Connections that each earn one error reply and a lingering close, held open unread. */
static int linger_flood(const char *srcaddr, int conns)
{
	static const uint8_t empty[4] = { 0, 0, 0, 0 }; /* a zero-length frame: an error */
	struct sockaddr_storage src;
	socklen_t srclen;
	char err[256];
	int *fd = calloc((size_t)conns, sizeof(*fd)), opened = 0, reset = 0;
	int64_t t0 = clock_mono_ns();

	if (fd == NULL || sock_resolve(srcaddr, 0, SOCK_STREAM, &src, &srclen, err, sizeof(err)) < 0) {
		fprintf(stderr, "hostile: %s\n", fd ? err : "out of memory");
		return 2;
	}
	for (int i = 0; i < conns; i++) {
		fd[i] = connect_from(&src, srclen);
		if (fd[i] >= 0) {
			send_all(fd[i], empty, sizeof(empty));
			opened++;
		}
		usleep(1000);
	}
	printf("linger flood from %s: %d of %d connections opened in %.2f s\n", srcaddr, opened,
	       conns, (double)(clock_mono_ns() - t0) / 1e9);
	fflush(stdout);
	usleep(2500 * 1000);
	for (int i = 0; i < conns; i++) {
		char b[64];
		ssize_t n;

		if (fd[i] < 0)
			continue;
		/* A reset (before its reply was read): the server dropped it over its cap. */
		while ((n = recv(fd[i], b, sizeof(b), MSG_DONTWAIT)) > 0)
			;
		reset += n < 0 && errno == ECONNRESET;
		close(fd[i]);
	}
	printf("linger flood from %s: %d of them found reset\n", srcaddr, reset);
	free(fd);
	return 0;
}

/* Resolves the target of a load mode into srv; exits on failure. */
static void load_target(const char *host, const char *port)
{
	char err[256];

	if (sock_resolve(host, (uint16_t)atoi(port), SOCK_STREAM, &srv, &srvlen, err, sizeof(err)) < 0) {
		fprintf(stderr, "hostile: %s\n", err);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	char err[256];

	if (argc == 4 && strcmp(argv[1], "--silent") == 0)
		return silent_listener(argv[2], argv[3]);
	if (argc == 7 && strcmp(argv[1], "--slowloris") == 0) {
		load_target(argv[2], argv[3]);
		return slowloris(argv[4], atoi(argv[5]), atof(argv[6]));
	}
	if (argc == 7 && strcmp(argv[1], "--psk-hold") == 0) {
		load_target(argv[2], argv[3]);
		return psk_hold(argv[4], atoi(argv[5]), atoi(argv[6]));
	}
	if (argc == 7 && strcmp(argv[1], "--session-hog") == 0) {
		load_target(argv[2], argv[3]);
		return session_hog(argv[4], atoi(argv[5]), argv[6]);
	}
	if (argc == 4 && strcmp(argv[1], "--bye-hold") == 0) {
		load_target(argv[2], argv[3]);
		return bye_hold();
	}
	if (argc == 4 && strcmp(argv[1], "--read-hold") == 0) {
		load_target(argv[2], argv[3]);
		return read_hold();
	}
	if (argc == 5 && strcmp(argv[1], "--cc") == 0) {
		load_target(argv[2], argv[3]);
		return cc_ask(argv[4]);
	}
	if (argc == 6 && strcmp(argv[1], "--linger-flood") == 0) {
		load_target(argv[2], argv[3]);
		return linger_flood(argv[4], atoi(argv[5]));
	}
	if (argc == 7 && strcmp(argv[1], "--udp-flood") == 0) {
		load_target(argv[2], argv[3]);
		srand(2);
		return udp_flood(argv[4], (uint16_t)atoi(argv[3]), atof(argv[5]), atol(argv[6]));
	}
	if (argc != 3) {
		fprintf(stderr, "usage: hostile HOST PORT | hostile --silent PORT SECONDS\n"
			"       hostile --slowloris HOST PORT SRC CONNS SECONDS\n"
			"       hostile --udp-flood HOST PORT SRC SECONDS RATE\n"
			"       hostile --psk-hold HOST PORT SRC CONNS MAXHELD\n"
			"       hostile --session-hog HOST PORT SRC CONNS VICTIM\n"
			"       hostile --bye-hold HOST PORT\n"
			"       hostile --read-hold HOST PORT\n"
			"       hostile --cc HOST PORT NAME\n"
			"       hostile --linger-flood HOST PORT SRC CONNS\n");
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

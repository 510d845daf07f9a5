/* inflow_check: in-flow request/response probes on the load flows against the real bloatmeterd
 * on loopback. Starts the daemon on a free port, opens a session, runs 2 download + 2 upload
 * flows with in-flow probes for 2 s on a libevent base and checks bytes flowed both ways,
 * enough good samples each way, TCP_INFO samples of every flow and no corrupt stream. Then a
 * request sent in the same segment as the hello (the server must parse the bytes it read with
 * the hello), and corrupt streams on both kinds of data connection, which the server must
 * close. Usage: inflow_check BLOATMETERD LOGFILE. Exit 0 if all held. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "client/run/ctrl.h"
#include "client/run/load.h"
#include "common/clock.h"
#include "common/frame.h"
#include "common/record.h"
#include "common/sock.h"
#include "common/wire.h"
#include "probes/series.h"

#define RUN_MS 2000
#define INTERVAL_NS (50 * NS_PER_MS)

struct check {
	struct sockaddr_storage srv;
	socklen_t srvlen;
	uint16_t port;
	pid_t daemon;
	int ctrl_fd;
	uint8_t token[WIRE_TOKEN_LEN];
	int failures;
};

static void expect(struct check *ck, int ok, const char *what)
{
	printf("%s %s\n", ok ? "ok  " : "FAIL", what);
	fflush(stdout);
	ck->failures += !ok;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* A port that is free on 127.0.0.1 right now (the daemon needs it for TCP and UDP). */
static uint16_t free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	uint16_t port = 0;

	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &al) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static pid_t spawn_daemon(const char *bin, const char *log, uint16_t port)
{
	char portstr[8];
	pid_t pid;

	snprintf(portstr, sizeof(portstr), "%u", port);
	pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd < 0 || dup2(fd, STDERR_FILENO) < 0 || dup2(fd, STDOUT_FILENO) < 0)
			_exit(126);
		execl(bin, "bloatmeterd", "--allow-root", "yes", "-b", "127.0.0.1", "-p", portstr,
		      "-vv", (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Starts the daemon and waits until it accepts; retries on another port if it lost a race. */
static int start_daemon(struct check *ck, const char *bin, const char *log)
{
	char err[256];

	for (int attempt = 0; attempt < 5; attempt++) {
		ck->port = free_port();
		if (ck->port == 0 ||
		    sock_resolve("127.0.0.1", ck->port, SOCK_STREAM, &ck->srv, &ck->srvlen, err,
				 sizeof(err)) < 0 ||
		    (ck->daemon = spawn_daemon(bin, log, ck->port)) < 0)
			return -1;
		for (int i = 0; i < 60; i++) {
			int fd;

			sleep_ms(50);
			if (waitpid(ck->daemon, NULL, WNOHANG) == ck->daemon)
				break; /* it exited: port taken meanwhile */
			fd = sock_connect_tcp(&ck->srv, ck->srvlen, 500, err, sizeof(err));
			if (fd >= 0) {
				close(fd);
				return 0;
			}
		}
		kill(ck->daemon, SIGKILL);
		waitpid(ck->daemon, NULL, 0);
	}
	return -1;
}

static int open_session(struct check *ck)
{
	struct ctrl_welcome w;
	char err[256];

	ck->ctrl_fd = sock_connect_tcp(&ck->srv, ck->srvlen, 2000, err, sizeof(err));
	if (ck->ctrl_fd < 0 || ctrl_handshake(ck->ctrl_fd, "cubic", 60, 3000, &w, err,
					      sizeof(err)) < 0) {
		fprintf(stderr, "inflow_check: %s\n", err);
		return -1;
	}
	memcpy(ck->token, w.token, WIRE_TOKEN_LEN);
	return 0;
}

/* The largest up_rx_bytes in the server's stats received so far on the control connection. */
static uint64_t server_up_bytes(struct check *ck)
{
	struct evbuffer *in = evbuffer_new();
	uint64_t best = 0;
	json_object *msg;
	char err[256];

	if (in == NULL)
		return 0;
	while (evbuffer_read(in, ck->ctrl_fd, 65536) > 0)
		;
	while (frame_take(in, &msg, err, sizeof(err)) == 1) {
		struct ctrl_stats st;

		if (strcmp(wire_ctrl_type(msg), "stats") == 0 && ctrl_parse_stats(msg, &st) == 0 &&
		    st.up_rx_bytes > best)
			best = st.up_rx_bytes;
		json_object_put(msg);
	}
	evbuffer_free(in);
	return best;
}

struct tally {
	size_t ok, lost, in_range;
	int64_t med_ns, max_ns;
};

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static struct tally tally(const struct probe_series *s)
{
	struct tally t = { 0 };
	int64_t *rtt = calloc(s->n + 1, sizeof(*rtt));

	if (rtt == NULL)
		abort();
	for (size_t i = 0; i < s->n; i++) {
		const struct rtt_sample *x = &s->s[i];

		t.lost += x->status == SAMPLE_LOST;
		if (x->status != SAMPLE_OK)
			continue;
		rtt[t.ok++] = x->rtt_ns;
		t.in_range += x->rtt_ns > 0 && x->rtt_ns < NS_PER_SEC;
	}
	qsort(rtt, t.ok, sizeof(*rtt), cmp_i64);
	if (t.ok) {
		t.med_ns = rtt[t.ok / 2];
		t.max_ns = rtt[t.ok - 1];
	}
	free(rtt);
	return t;
}

static void check_direction(struct check *ck, const char *name, const struct probe_series *s)
{
	struct tally t = tally(s);
	char what[200];

	snprintf(what, sizeof(what),
		 "%s: %zu samples, %zu OK (>= 10), all OK within (0, 1 s) (median %.3f ms, max %.3f ms), %zu lost, %llu bad",
		 name, s->n, t.ok, ns_to_ms(t.med_ns), ns_to_ms(t.max_ns), t.lost,
		 (unsigned long long)s->bad_replies);
	expect(ck, t.ok >= 10 && t.in_range == t.ok && s->bad_replies == 0, what);
}

static void load_run(struct check *ck)
{
	struct load_opts opts = { .inflow_interval_ns = INTERVAL_NS, .dscp = -1 };
	struct timeval run = { RUN_MS / 1000, (RUN_MS % 1000) * 1000 };
	struct probe_series down, up;
	struct flow_sample *fs = NULL;
	size_t nfs = 0, capfs = 0;
	struct event_base *base = event_base_new();
	struct load_info li;
	struct load *l;
	char err[256], what[200];
	uint64_t down_bytes, up_bytes;
	int seen[4] = { 0 }, open;

	series_init(&down, "inflow_down", "127.0.0.1");
	series_init(&up, "inflow_up", "127.0.0.1");
	l = base ? load_start(base, &ck->srv, ck->srvlen, ck->token, 2, 2, "cubic", &opts, err,
			      sizeof(err)) : NULL;
	expect(ck, l != NULL, "load_start with 2 download + 2 upload flows and in-flow probes");
	if (l == NULL) {
		fprintf(stderr, "inflow_check: %s\n", base ? err : "no event base");
		return;
	}
	if (event_base_loopexit(base, &run) < 0 || event_base_dispatch(base) < 0)
		expect(ck, 0, "event loop ran");
	load_take_inflow(l, &down, &up);
	(void)load_take_samples(l, &fs, &nfs, &capfs);
	load_get_info(l, &li);
	down_bytes = load_down_bytes(l);
	open = load_open_flows(l);
	load_stop(l);
	event_base_free(base);
	sleep_ms(250); /* a fresh stats message from the server */
	up_bytes = server_up_bytes(ck);

	snprintf(what, sizeof(what), "every flow stayed open (%d of 4)", open);
	expect(ck, open == 4, what);
	snprintf(what, sizeof(what), "bytes flowed both ways (down %.1f MB, up %.1f MB in %d ms)",
		 (double)down_bytes / 1e6, (double)up_bytes / 1e6, RUN_MS);
	expect(ck, down_bytes > 1000000 && up_bytes > 1000000, what);
	check_direction(ck, "inflow_down", &down);
	check_direction(ck, "inflow_up", &up);
	snprintf(what, sizeof(what),
		 "no corrupt stream, unmatched answer or unsent request (%llu, %llu, %llu)",
		 (unsigned long long)li.corrupt_streams, (unsigned long long)li.inflow_unmatched,
		 (unsigned long long)li.inflow_unsent);
	expect(ck, li.corrupt_streams == 0 && li.inflow_unmatched == 0 && li.inflow_unsent == 0,
	       what);
	for (size_t i = 0; i < nfs; i++)
		if (fs[i].flow_id < 4 && fs[i].up == (fs[i].flow_id >= 2) && fs[i].t_ns > 0)
			seen[fs[i].flow_id]++;
	snprintf(what, sizeof(what),
		 "TCP_INFO samples of every flow every ~100 ms (%zu samples: %d %d %d %d)", nfs,
		 seen[0], seen[1], seen[2], seen[3]);
	expect(ck, seen[0] >= 10 && seen[1] >= 10 && seen[2] >= 10 && seen[3] >= 10 &&
		   seen[0] <= 25, what);
	series_free(&down);
	series_free(&up);
	free(fs);
}

/* Opens a data connection and sends its hello followed by extra in one write. */
static int data_conn(struct check *ck, uint8_t dir, const uint8_t *extra, size_t extralen)
{
	struct wire_data_hello h = { .version = WIRE_VERSION, .dir = dir, .flow_id = 99 };
	uint8_t buf[WIRE_DATA_HELLO_LEN + 256];
	char err[256];
	int fd = sock_connect_tcp(&ck->srv, ck->srvlen, 2000, err, sizeof(err));

	if (fd < 0 || extralen > 256)
		return -1;
	memcpy(h.token, ck->token, WIRE_TOKEN_LEN);
	wire_data_hello_encode(&h, buf);
	memcpy(buf + WIRE_DATA_HELLO_LEN, extra, extralen);
	if (send(fd, buf, WIRE_DATA_HELLO_LEN + extralen, MSG_NOSIGNAL) !=
	    (ssize_t)(WIRE_DATA_HELLO_LEN + extralen)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Reads up to cap bytes within timeout_ms. Returns the bytes read, or -1 once the peer closed
 * (EOF or reset) before cap bytes came. */
static ssize_t read_some(int fd, uint8_t *buf, size_t cap, int timeout_ms)
{
	int64_t deadline = clock_mono_ns() + (int64_t)timeout_ms * NS_PER_MS;
	size_t got = 0;

	while (got < cap) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int64_t left = (deadline - clock_mono_ns()) / NS_PER_MS;
		ssize_t n;

		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			break;
		n = recv(fd, buf + got, cap - got, 0);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return -1;
		if (n > 0)
			got += (size_t)n;
	}
	return (ssize_t)got;
}

/* An upload record carrying a request in the hello's own segment is answered. */
static void prefix_case(struct check *ck)
{
	struct record_hdr req = { .type = RECORD_PROBE, .len = 100, .seq = 4242, .ts_ns = 777 }, rsp;
	uint8_t out[RECORD_HDR_LEN + 100] = { 0 }, in[RECORD_HDR_LEN];
	int fd;

	record_encode(&req, out);
	fd = data_conn(ck, WIRE_DIR_UP, out, sizeof(out));
	expect(ck, fd >= 0 && read_some(fd, in, sizeof(in), 2000) == (ssize_t)sizeof(in) &&
		   record_decode(in, sizeof(in), RECORD_STREAM_RESPONSES, &rsp) == 0 &&
		   rsp.seq == 4242 && rsp.ts_ns == 777,
	       "a request in the hello's segment is answered (server parses the bytes behind the hello)");
	if (fd >= 0)
		close(fd);
}

/* A bad header on either kind of data connection makes the server close it. */
static void corrupt_cases(struct check *ck)
{
	static const uint8_t junk[RECORD_HDR_LEN] = "not a record!!!";
	const uint8_t dirs[2] = { WIRE_DIR_UP, WIRE_DIR_DOWN };

	for (int i = 0; i < 2; i++) {
		uint8_t buf[65536];
		int fd = data_conn(ck, dirs[i], junk, sizeof(junk)), closed = 0;
		char what[120];

		/* A download connection first gets bulk data: read until the server closes. */
		for (int k = 0; fd >= 0 && k < 400 && !closed; k++)
			closed = read_some(fd, buf, sizeof(buf), 50) < 0;
		snprintf(what, sizeof(what), "a corrupt %s stream is closed by the server",
			 dirs[i] == WIRE_DIR_UP ? "upload" : "request");
		expect(ck, closed, what);
		if (fd >= 0)
			close(fd);
	}
}

static void stop_daemon(struct check *ck)
{
	int status = -1;

	close(ck->ctrl_fd);
	kill(ck->daemon, SIGTERM);
	for (int i = 0; i < 100 && waitpid(ck->daemon, &status, WNOHANG) == 0; i++)
		sleep_ms(50);
	if (status == -1) {
		kill(ck->daemon, SIGKILL);
		waitpid(ck->daemon, &status, 0);
	}
	expect(ck, WIFEXITED(status) && WEXITSTATUS(status) == 0, "daemon stopped cleanly");
}

int main(int argc, char **argv)
{
	struct check ck = { .ctrl_fd = -1 };

	if (argc != 3) {
		fprintf(stderr, "usage: inflow_check BLOATMETERD LOGFILE\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if (start_daemon(&ck, argv[1], argv[2]) < 0) {
		fprintf(stderr, "inflow_check: cannot start %s\n", argv[1]);
		return 2;
	}
	printf("     daemon pid %d on 127.0.0.1 port %u\n", (int)ck.daemon, ck.port);
	if (open_session(&ck) < 0) {
		kill(ck.daemon, SIGKILL);
		return 2;
	}
	load_run(&ck);
	prefix_case(&ck);
	corrupt_cases(&ck);
	stop_daemon(&ck);
	printf("%d failures\n", ck.failures);
	return ck.failures ? 1 : 0;
}

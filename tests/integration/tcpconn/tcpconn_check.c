/* tcpconn_check: the new-connection probe against the real bloatmeterd on loopback. Starts the
 * daemon on a free port, opens a session, runs the probe on a probe runner and checks its
 * samples; then forged tokens, a silent listener (timeouts, the outstanding cap), a closed
 * port, a wrong client IP, garbage after the magic and both per-session limits, and that the daemon still serves, left no TIME_WAIT behind, logged each
 * refusal and stops cleanly. Usage: tcpconn_check BLOATMETERD LOGFILE. Exit 0 if all held. */
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

#include <event2/thread.h>

#include "client/run/ctrl.h"
#include "common/clock.h"
#include "common/sock.h"
#include "common/util.h"
#include "common/wire.h"
#include "probes/runner.h"
#include "probes/tcpconn.h"
#include "server/connprobe.h"

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
		      "-vv", "--max-sessions", "2", (char *)NULL);
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
				(void)sock_set_abortive_close(fd); /* no TIME_WAIT to confuse the count */
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
		fprintf(stderr, "tcpconn_check: %s\n", err);
		return -1;
	}
	memcpy(ck->token, w.token, WIRE_TOKEN_LEN);
	return 0;
}

/* A probe config against ck's daemon with the given token and schedule. */
static struct tcpconn_probe_config probe_config(const struct check *ck, const uint8_t *token,
						int64_t interval_ns)
{
	struct tcpconn_probe_config cfg = { .server = ck->srv, .server_len = ck->srvlen,
					    .interval_ns = interval_ns,
					    .timeout_ns = NS_PER_SEC, .dscp = -1 };

	memcpy(cfg.token, token, WIRE_TOKEN_LEN);
	return cfg;
}

/* Runs the probe for run_ms on its own runner, waits out the answers, closes the series. */
static int run_probe(const struct tcpconn_probe_config *cfg, int run_ms, struct probe_series *out)
{
	struct probe_runner *r;
	struct tcpconn_probe *p;
	char err[256];

	series_init(out, "tcp_connect", "server");
	r = runner_new(err, sizeof(err));
	if (r == NULL)
		goto fail;
	p = tcpconn_probe_start(runner_base(r), cfg, out, err, sizeof(err));
	if (p == NULL) {
		runner_free(r);
		goto fail;
	}
	if (runner_add(r, p, &tcpconn_probe_ops) < 0) {
		tcpconn_probe_ops.destroy(p);
		runner_free(r);
		goto fail;
	}
	if (runner_start(r, err, sizeof(err)) < 0) {
		runner_free(r); /* destroys p */
		goto fail;
	}
	sleep_ms(run_ms);
	runner_stop(r, cfg->timeout_ns);
	series_close(out);
	runner_free(r);
	return 0;
fail:
	fprintf(stderr, "tcpconn_check: %s\n", err);
	return -1;
}

struct tally {
	size_t n, ok, error, lost;
	int64_t rtt_min, rtt_med, rtt_max, aux_med_us;
	int aux_within_rtt; /* every OK sample: 0 <= handshake <= rtt */
};

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static struct tally tally(const struct probe_series *s)
{
	struct tally t = { .n = s->n, .aux_within_rtt = 1 };
	int64_t *rtt = calloc(s->n + 1, sizeof(*rtt)), *aux = calloc(s->n + 1, sizeof(*aux));

	if (rtt == NULL || aux == NULL)
		abort();
	for (size_t i = 0; i < s->n; i++) {
		const struct rtt_sample *x = &s->s[i];

		t.error += x->status == SAMPLE_ERROR;
		t.lost += x->status == SAMPLE_LOST;
		if (x->status != SAMPLE_OK)
			continue;
		if (x->aux < 0 || (int64_t)x->aux * 1000 > x->rtt_ns)
			t.aux_within_rtt = 0;
		rtt[t.ok] = x->rtt_ns;
		aux[t.ok] = x->aux;
		t.ok++;
	}
	qsort(rtt, t.ok, sizeof(*rtt), cmp_i64);
	qsort(aux, t.ok, sizeof(*aux), cmp_i64);
	if (t.ok > 0) {
		t.rtt_min = rtt[0];
		t.rtt_med = rtt[t.ok / 2];
		t.rtt_max = rtt[t.ok - 1];
		t.aux_med_us = aux[t.ok / 2];
	}
	free(rtt);
	free(aux);
	return t;
}

static void print_tally(const char *what, const struct probe_series *s, const struct tally *t)
{
	printf("     %s: %zu probes, %zu ok, %zu error, %zu lost, %llu bad replies; rtt min/median/max "
	       "%.3f/%.3f/%.3f ms, handshake median %lld us; method %s, target %s\n",
	       what, t->n, t->ok, t->error, t->lost, (unsigned long long)s->bad_replies,
	       ns_to_ms(t->rtt_min), ns_to_ms(t->rtt_med), ns_to_ms(t->rtt_max),
	       (long long)t->aux_med_us, s->method, s->target);
}

/* The legitimate probe: nearly every connection answered, with sane times. */
static void legit_run(struct check *ck, const char *label, int run_ms, int dscp)
{
	struct tcpconn_probe_config cfg = probe_config(ck, ck->token, 50 * NS_PER_MS);
	struct probe_series s;
	struct tally t;
	char what[160];

	cfg.dscp = dscp;
	if (run_probe(&cfg, run_ms, &s) < 0) {
		expect(ck, 0, "the probe starts");
		return;
	}
	t = tally(&s);
	print_tally(label, &s, &t);
	snprintf(what, sizeof(what), "%s: >= 90 %% of %zu connect probes answered", label, t.n);
	expect(ck, t.n >= (size_t)run_ms / 50 / 2 && t.ok * 10 >= t.n * 9, what);
	expect(ck, t.ok > 0 && t.rtt_min > 0 && t.rtt_max < NS_PER_SEC,
	       "rtt is positive and below the 1 s timeout");
	expect(ck, t.aux_within_rtt, "handshake time (aux) is within the rtt of every sample");
	expect(ck, s.bad_replies == 0 && s.available && strcmp(s.method, "tcp") == 0 &&
		       strcmp(s.name, "tcp_connect") == 0,
	       "no bad replies; series named tcp_connect, method tcp");
	series_free(&s);
}

static void forged_run(struct check *ck)
{
	uint8_t forged[WIRE_TOKEN_LEN];
	struct tcpconn_probe_config cfg;
	struct probe_series s;
	struct tally t;

	if (util_random(forged, sizeof(forged)) < 0)
		abort();
	cfg = probe_config(ck, forged, 50 * NS_PER_MS);
	if (run_probe(&cfg, 500, &s) < 0) {
		expect(ck, 0, "the forged probe starts");
		return;
	}
	t = tally(&s);
	print_tally("forged token", &s, &t);
	expect(ck, t.n > 0 && t.ok == 0 && t.error + t.lost == t.n,
	       "a forged token gets no answer (every sample ERROR or LOST)");
	series_free(&s);
}

/* A listener that never accepts: handshakes complete in its backlog, answers never come. So
 * every probe is LOST at its timeout, and at most max_outstanding are ever open. */
static void silent_run(struct check *ck)
{
	struct tcpconn_probe_config cfg = probe_config(ck, ck->token, 20 * NS_PER_MS);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct probe_series s;
	struct tally t;
	char what[200];

	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(lfd, 64) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &al) < 0)
		abort();
	memcpy(&cfg.server, &a, sizeof(a));
	cfg.server_len = sizeof(a);
	cfg.timeout_ns = 300 * NS_PER_MS;
	cfg.max_outstanding = 4;
	if (run_probe(&cfg, 1000, &s) < 0) {
		expect(ck, 0, "the probe starts against a silent listener");
		close(lfd);
		return;
	}
	t = tally(&s);
	print_tally("silent listener", &s, &t);
	printf("     note: %s\n", s.note);
	/* 1 s of 300 ms timeouts, 4 at a time: about 4 per 300 ms instead of 50 slots */
	snprintf(what, sizeof(what), "no answer: all %zu samples LOST; at most 4 open, so the "
		 "other slots were skipped and noted", t.n);
	expect(ck, t.n >= 4 && t.lost == t.n && t.n <= 4 * (1000 / 300 + 1) && s.note[0] != '\0',
	       what);
	series_free(&s);
	close(lfd);
}

/* A closed port: every connection is refused, so every sample is an ERROR. */
static void refused_run(struct check *ck)
{
	struct tcpconn_probe_config cfg = probe_config(ck, ck->token, 50 * NS_PER_MS);
	struct sockaddr_in *a = (struct sockaddr_in *)&cfg.server;
	struct probe_series s;
	struct tally t;

	a->sin_port = htons(free_port());
	if (run_probe(&cfg, 300, &s) < 0) {
		expect(ck, 0, "the probe starts against a closed port");
		return;
	}
	t = tally(&s);
	print_tally("closed port", &s, &t);
	expect(ck, t.n > 0 && t.error == t.n, "a refused connection is an ERROR sample");
	series_free(&s);
}

/* A blocking connection from src (NULL: any) that resets on close, like the real probe. */
static int raw_connect(struct check *ck, const char *src)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET };

	if (fd < 0 || sock_set_abortive_close(fd) < 0)
		abort();
	if (src && (inet_pton(AF_INET, src, &a.sin_addr) != 1 ||
		    bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0))
		abort();
	if (connect(fd, (struct sockaddr *)&ck->srv, ck->srvlen) < 0)
		abort();
	return fd;
}

static void send_req(int fd, const uint8_t *token, uint32_t seq)
{
	struct wire_connprobe_req req = { .version = WIRE_VERSION, .seq = seq };
	uint8_t buf[WIRE_CONNPROBE_REQ_LEN];

	memcpy(req.token, token, WIRE_TOKEN_LEN);
	wire_connprobe_req_encode(&req, buf);
	if (send(fd, buf, sizeof(buf), MSG_NOSIGNAL) != (ssize_t)sizeof(buf))
		abort();
}

/* 1 if the whole answer for seq arrived within timeout_ms, 0 if closed/reset/silent. */
static int answered(int fd, uint32_t seq, int timeout_ms)
{
	uint8_t buf[WIRE_CONNPROBE_RESP_LEN];
	size_t got = 0;
	uint32_t rseq;

	while (got < sizeof(buf)) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, timeout_ms) <= 0)
			return 0;
		n = recv(fd, buf + got, sizeof(buf) - got, 0);
		if (n <= 0)
			return 0;
		got += (size_t)n;
	}
	return wire_connprobe_resp_decode(buf, got, &rseq) == 0 && rseq == seq;
}

/* 1 if the server closed (or reset) without sending a byte. */
static int closed_silently(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint8_t b;

	if (poll(&pfd, 1, timeout_ms) <= 0)
		return 0;
	return recv(fd, &b, 1, 0) <= 0;
}

static void hostile_cases(struct check *ck)
{
	uint8_t junk[100] = { 'B', 'M', 'C', '1' };
	int fd;

	fd = raw_connect(ck, "127.0.0.2");
	send_req(fd, ck->token, 1);
	expect(ck, closed_silently(fd, 2000), "the live token from another client IP is refused");
	close(fd);

	if (util_random(junk + 4, sizeof(junk) - 4) < 0)
		abort();
	fd = raw_connect(ck, NULL);
	if (send(fd, junk, sizeof(junk), MSG_NOSIGNAL) != (ssize_t)sizeof(junk))
		abort();
	expect(ck, closed_silently(fd, 2000), "garbage after the magic is refused");
	close(fd);

	fd = raw_connect(ck, NULL);
	if (send(fd, junk, 4, MSG_NOSIGNAL) != 4)
		abort();
	expect(ck, closed_silently(fd, CONNPROBE_TIMEOUT_S * 1000 + 2000),
	       "the magic alone is dropped after the exchange timeout");
	close(fd);
}

/* Open connections beyond CONNPROBE_OPEN_MAX are refused while the first ones stay open. */
static void open_limit_case(struct check *ck)
{
	enum { N = CONNPROBE_OPEN_MAX + 4 };
	int fd[N], n = 0;
	char what[128];

	for (int i = 0; i < N; i++) {
		fd[i] = raw_connect(ck, NULL);
		send_req(fd[i], ck->token, (uint32_t)i);
		sleep_ms(5); /* in order, so the first ones are the answered ones */
	}
	for (int i = 0; i < N; i++)
		n += answered(fd[i], (uint32_t)i, 1000);
	for (int i = 0; i < N; i++)
		close(fd[i]);
	snprintf(what, sizeof(what), "open limit: %d of %d simultaneous probes answered (limit %d)",
		 n, N, CONNPROBE_OPEN_MAX);
	expect(ck, n == CONNPROBE_OPEN_MAX, what);
}

/* Sequential probes faster than CONNPROBE_RATE_MAX per second: the excess is refused. */
static void rate_limit_case(struct check *ck)
{
	enum { N = CONNPROBE_RATE_MAX + 10 };
	int64_t t0 = clock_mono_ns(), el;
	int n = 0;
	char what[160];

	for (int i = 0; i < N; i++) {
		int fd = raw_connect(ck, NULL);

		send_req(fd, ck->token, (uint32_t)i);
		n += answered(fd, (uint32_t)i, 1000);
		close(fd);
	}
	el = clock_mono_ns() - t0;
	snprintf(what, sizeof(what), "rate limit: %d of %d probes in %.0f ms answered (limit %d/s)", n,
		 N, ns_to_ms(el), CONNPROBE_RATE_MAX);
	if (el < 900 * NS_PER_MS)
		expect(ck, n == CONNPROBE_RATE_MAX, what);
	else
		printf("skip %s: too slow to fit one window\n", what);
}

/* TIME_WAIT entries on the daemon's port in /proc/net/tcp (state 06): there should be none,
 * since probes end with resets. */
static int time_wait_count(uint16_t port)
{
	FILE *f = fopen("/proc/net/tcp", "r");
	char line[256];
	int n = 0;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned lport, rport, st;

		if (sscanf(line, " %*d: %*x:%x %*x:%x %x", &lport, &rport, &st) == 3 && st == 6 &&
		    (lport == port || rport == port))
			n++;
	}
	fclose(f);
	return n;
}

/* Counts log lines naming a refusal reason. */
static int log_count(const char *log, const char *needle)
{
	FILE *f = fopen(log, "r");
	char line[512];
	int n = 0;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "connect probe from") && strstr(line, needle);
	fclose(f);
	return n;
}

static void stop_daemon(struct check *ck, const char *log)
{
	int status = 0;
	char what[160];
	static const char *const reasons[] = { "unknown session", "bad request",
					       "no complete request in time", "too many open",
					       "rate limit" };

	expect(ck, kill(ck->daemon, 0) == 0, "the daemon is still running");
	close(ck->ctrl_fd);
	sleep_ms(200);
	if (kill(ck->daemon, SIGTERM) < 0 || waitpid(ck->daemon, &status, 0) != ck->daemon)
		status = -1;
	expect(ck, WIFEXITED(status) && WEXITSTATUS(status) == 0, "the daemon stops cleanly");
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		int n = log_count(log, reasons[i]);

		snprintf(what, sizeof(what), "the daemon counted and logged refusals \"%s\": %d",
			 reasons[i], n);
		expect(ck, n > 0, what);
	}
}

int main(int argc, char **argv)
{
	struct check ck = { .ctrl_fd = -1 };
	int tw;
	char what[128];

	if (argc != 3) {
		fprintf(stderr, "usage: tcpconn_check BLOATMETERD LOGFILE\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if (evthread_use_pthreads() < 0 || start_daemon(&ck, argv[1], argv[2]) < 0) {
		fprintf(stderr, "tcpconn_check: cannot start %s\n", argv[1]);
		return 2;
	}
	printf("     daemon pid %d on 127.0.0.1 port %u\n", (int)ck.daemon, ck.port);
	if (open_session(&ck) < 0) {
		kill(ck.daemon, SIGKILL);
		return 2;
	}
	legit_run(&ck, "first run", 2000, -1);
	forged_run(&ck);
	silent_run(&ck);
	refused_run(&ck);
	hostile_cases(&ck);
	sleep_ms(1100); /* a fresh rate window for each limit case */
	open_limit_case(&ck);
	sleep_ms(1100);
	rate_limit_case(&ck);
	sleep_ms(1100);
	legit_run(&ck, "second run (DSCP 46)", 1000, 46);
	tw = time_wait_count(ck.port);
	snprintf(what, sizeof(what), "no TIME_WAIT left on the daemon's port (%d)", tw);
	expect(&ck, tw == 0, what);
	stop_daemon(&ck, argv[2]);
	printf("%d failures\n", ck.failures);
	return ck.failures ? 1 : 0;
}

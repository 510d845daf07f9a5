/* pcap_check: the lab test's driver for the live capture.
 * IFNAME "auto" lets the capture find the interface the kernel routes SERVER by.
 *   pcap_check capture IFNAME SERVER PORT SAVEFILE -- COMMAND [ARGS...]
 *     captures the test's traffic with probes/pcap.c (saved to SAVEFILE) while COMMAND runs,
 *     then prints what the live analyzer saw: packets, drops, per-direction counts and the
 *     passive RTT series; exits with COMMAND's status, or 1 when the capture failed.
 *   pcap_check wire IFNAME SERVER PORT COUNT
 *     sends COUNT bloatmeter probe requests 10 ms apart to an echo (below) while capturing,
 *     timed like the UDP probe (send time before send(), kernel receive timestamp), and
 *     prints how far the wire times are from the socket times (pa_probe_wire);
 *   pcap_check echo PORT
 *     answers probe requests as replies of the same size (exits after 10 s without one);
 *   pcap_check analyze [-J] FILE
 *     the `bloatmeter analyze` command itself, for builds whose CLI does not dispatch it. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client/analyze_cmd.h"
#include "client/model/result.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/sock.h"
#include "common/stats.h"
#include "common/wire.h"
#include "probes/pcap.h"
#include "probes/pcapanalyze.h"

static int check_server(const char *s, struct sockaddr_storage *ss)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, s, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		return 0;
	}
	return -1;
}

static void check_series(const struct pa *pa, enum pa_class cls)
{
	struct probe_series ps;
	double *v;
	struct stats_summary s = { 0 };

	if (pa_rtt_series(pa, cls, &ps) != 0) {
		fprintf(stderr, "pcap_check: out of memory\n");
		exit(1);
	}
	v = malloc((ps.n ? ps.n : 1) * sizeof(*v));
	if (v == NULL)
		exit(1);
	for (size_t i = 0; i < ps.n; i++)
		v[i] = (double)ps.s[i].rtt_ns / 1e6;
	stats_summarize(v, ps.n, &s);
	printf("series %s: %zu samples, min %.2f p50 %.2f p95 %.2f ms\n", ps.name, ps.n, s.min,
	       s.p50, s.p95);
	free(v);
	series_free(&ps);
}

static int check_capture(int argc, char **argv)
{
	struct pcap_capture_config cfg;
	struct pcap_capture *c;
	struct pa_summary s;
	char err[512];
	int status;
	pid_t pid;

	if (argc < 8 || strcmp(argv[6], "--") != 0) {
		fprintf(stderr, "usage: pcap_check capture IFNAME SERVER PORT SAVEFILE -- CMD...\n");
		return 2;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.ifname = strcmp(argv[2], "auto") == 0 ? NULL : argv[2]; /* auto: the route's */
	if (check_server(argv[3], &cfg.server) != 0) {
		fprintf(stderr, "pcap_check: bad server address %s\n", argv[3]);
		return 2;
	}
	cfg.tcp_port = cfg.udp_port = (uint16_t)atoi(argv[4]);
	cfg.save_file = argv[5];
	c = pcap_capture_start(&cfg, err, sizeof(err));
	if (c == NULL) {
		fprintf(stderr, "pcap_check: %s\n", err);
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		execvp(argv[7], argv + 7);
		perror(argv[7]);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0) {
		perror("waitpid");
		return 1;
	}
	pcap_capture_stop(c);
	if (pcap_capture_error(c) != NULL) {
		fprintf(stderr, "pcap_check: %s\n", pcap_capture_error(c));
		pcap_capture_free(c);
		return 1;
	}
	pa_summary(pcap_capture_analyzer(c), &s);
	printf("capture on %s: %" PRIu64 " packets, %" PRIu64 " dropped, %s timestamps\n",
	       pcap_capture_ifname(c), pcap_capture_packets(c), pcap_capture_drops(c),
	       pcap_capture_nano(c) ? "ns" : "µs");
	printf("live: %" PRIu64 " TCP flows (%" PRIu64 " up, %" PRIu64 " down); up %" PRIu64
	       " packets %" PRIu64 " retrans; down %" PRIu64 " packets %" PRIu64 " retrans; "
	       "probes %" PRIu64 "/%" PRIu64 "\n", s.tcp_flows, s.up.flows, s.down.flows,
	       s.up.packets, s.up.retrans, s.down.packets, s.down.retrans, s.probe_requests,
	       s.probe_replies);
	check_series(pcap_capture_analyzer(c), PA_CLASS_DOWN);
	check_series(pcap_capture_analyzer(c), PA_CLASS_UP);
	pcap_capture_free(c);
	if (!WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}

static int wire_connect(const char *host, uint16_t port, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd;

	if (sock_resolve(host, port, SOCK_DGRAM, &ss, &len, err, errlen) != 0)
		return -1;
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&ss, len) != 0) {
		snprintf(err, errlen, "udp socket: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* One request and its reply (200 ms at most), timed as probes/udp.c times them. */
static void wire_one(int fd, uint32_t seq, struct probe_rec *r)
{
	uint8_t buf[WIRE_PROBE_MAX];
	struct wire_probe w = { .kind = WIRE_PROBE_REQ, .seq = seq };
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int64_t deadline;

	memset(r, 0, sizeof(*r));
	r->seq = seq;
	w.client_send_ns = clock_mono_ns();
	wire_probe_encode(&w, buf, 100);
	r->send_ns = w.client_send_ns;
	if (send(fd, buf, 100, 0) != 100)
		return;
	deadline = r->send_ns + 200 * NS_PER_MS;
	while (clock_mono_ns() < deadline && poll(&pfd, 1, 50) >= 0) {
		struct sockaddr_storage peer;
		socklen_t plen = sizeof(peer);
		enum ts_source src;
		int64_t rx;
		ssize_t n = sock_recv_ts(fd, buf, sizeof(buf), &peer, &plen, &rx, &src);
		struct wire_probe rep;

		if (n > 0 && wire_probe_decode(buf, (size_t)n, &rep) == 0 &&
		    rep.kind == WIRE_PROBE_REPLY && rep.seq == seq) {
			r->received = 1;
			r->ts_kernel = src == TS_SRC_KERNEL;
			r->rtt_ns = rx - r->send_ns;
			return;
		}
	}
}

static int check_wire(int argc, char **argv)
{
	struct pcap_capture_config cfg;
	struct pcap_capture *c;
	struct probe_rec *recs;
	struct pa_wire w;
	char err[512];
	long count;
	size_t kernel = 0;
	int fd;

	if (argc != 6 || (count = atol(argv[5])) < 1 || count > 100000) {
		fprintf(stderr, "usage: pcap_check wire IFNAME SERVER PORT COUNT\n");
		return 2;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.ifname = strcmp(argv[2], "auto") == 0 ? NULL : argv[2]; /* auto: the route's */
	if (check_server(argv[3], &cfg.server) != 0)
		return 2;
	cfg.tcp_port = cfg.udp_port = (uint16_t)atoi(argv[4]);
	recs = calloc((size_t)count, sizeof(*recs));
	fd = wire_connect(argv[3], cfg.udp_port, err, sizeof(err));
	if (recs == NULL || fd < 0) {
		fprintf(stderr, "pcap_check: %s\n", fd < 0 ? err : "out of memory");
		return 1;
	}
	sock_enable_rx_timestamps(fd);
	c = pcap_capture_start(&cfg, err, sizeof(err));
	if (c == NULL) {
		fprintf(stderr, "pcap_check: %s\n", err);
		return 1;
	}
	for (long i = 0; i < count; i++) {
		wire_one(fd, (uint32_t)i, &recs[i]);
		kernel += recs[i].ts_kernel;
		usleep(10000);
	}
	pcap_capture_stop(c);
	if (pa_probe_wire(pcap_capture_analyzer(c), recs, (size_t)count, &w) != 0)
		return 1;
	printf("wire vs socket: %zu requests, send()->wire p50 %.1f p99 %.1f us; %zu replies "
	       "(%zu kernel-stamped), wire->socket p50 %.1f p99 %.1f us; %s capture stamps\n",
	       w.n_tx, w.tx_p50_us, w.tx_p99_us, w.n_rx, kernel, w.rx_p50_us, w.rx_p99_us,
	       pcap_capture_nano(c) ? "ns" : "us");
	pcap_capture_free(c);
	close(fd);
	free(recs);
	return w.n_tx == (size_t)count && w.n_rx > 0 ? 0 : 1;
}

/* A minimal reflector without sessions: flips requests into replies. */
static int check_echo(int argc, char **argv)
{
	char err[256];
	uint8_t buf[WIRE_PROBE_MAX];
	int fd = argc == 3 ? sock_bind_udp(NULL, (uint16_t)atoi(argv[2]), err, sizeof(err)) : -1;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	if (fd < 0) {
		fprintf(stderr, "pcap_check echo: %s\n", argc == 3 ? err : "usage: echo PORT");
		return 1;
	}
	while (poll(&pfd, 1, 10000) > 0) {
		struct sockaddr_storage peer;
		socklen_t plen = sizeof(peer);
		ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&peer, &plen);
		struct wire_probe w;

		if (n <= 0 || wire_probe_decode(buf, (size_t)n, &w) != 0 || w.kind != WIRE_PROBE_REQ)
			continue;
		w.kind = WIRE_PROBE_REPLY;
		w.server_rx_ns = w.server_tx_ns = clock_mono_ns();
		wire_probe_encode(&w, buf, (size_t)n);
		if (sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&peer, plen) < 0)
			perror("sendto");
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	log_init("pcap_check", LOG_LVL_INFO);
	if (argc >= 2 && strcmp(argv[1], "capture") == 0)
		return check_capture(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "wire") == 0)
		return check_wire(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "echo") == 0)
		return check_echo(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "analyze") == 0)
		return analyze_main(argc - 1, argv + 1);
	fprintf(stderr, "usage: pcap_check capture|analyze ...\n");
	return 2;
}

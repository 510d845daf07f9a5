/* lab: builds and tears down the namespace bottleneck and runs bloatmeterd behind it. */
#include "client/lab/lab.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client/lab/labtopo.h"
#include "client/lab/tunfwd.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/util.h"

#define LAB_FRAME_BYTES 1514            /* a full frame as tbf counts it on a 1500-MTU veth */
#define LAB_MIN_RATE 64000ULL
#define LAB_MAX_RATE 10000000000ULL
#define LAB_MAX_BUFFER_MS 10000.0
#define LAB_BURST_MS 4.0                /* METHODS.md: 1 ms of burst lost throughput to timer slack */
#define LAB_READY_NS (5 * NS_PER_SEC)
#define LAB_RETRY_NS (50 * NS_PER_MS)
#define LAB_STOP_NS (2 * NS_PER_SEC)
#define LAB_NETNS_DIR "/run/netns"
#define LAB_MAX_ARGS 24
#define LAB_MAX_DELAY_MS 1000.0
/* The userspace bottleneck's ceiling (docs/lab.md "Userspace bottleneck"): it was measured
 * accurate at 20 Mbit/s and below and still holds its rate here; above, the loop is the limit. */
#define LAB_TUN_MAX_RATE 100000000ULL
#define LAB_TUN_TABLE_UP "101"          /* policy-routing tables that lead into the devices */
#define LAB_TUN_TABLE_DOWN "102"

static const char *const lab_qdisc_names[LAB_QDISCS] = {
	[LAB_QDISC_TBF] = "tbf", [LAB_QDISC_FIFO] = "fifo", [LAB_QDISC_CODEL] = "codel",
	[LAB_QDISC_FQCODEL] = "fqcodel", [LAB_QDISC_PIE] = "pie",
};

/* The nodes the lab's steps address by role; the routers between them are plain forwarders. */
enum lab_role { LAB_CLIENT, LAB_ROUTER, LAB_SERVER, LAB_ROLES };

struct lab {
	struct lab_config cfg;
	struct lab_truth truth;
	struct labtopo topo;           /* the chain: client, routers, server (labtopo.h) */
	char ns[LABTOPO_MAX_NODES][32]; /* namespace names per node, bm<pid>-<suffix> */
	int created[LABTOPO_MAX_NODES]; /* which namespaces exist and must be deleted */
	int role_node[LAB_ROLES];      /* the node of each role */
	int origin_fd;                 /* namespace of the creating thread */
	int client_fd;
	int in_client;                 /* the calling thread sits in the client namespace */
	pid_t daemon_pid;              /* 0 once reaped */
	pid_t fwd_pid;                 /* the userspace bottleneck (tunfwd); 0 = none */
	struct tunfwd_stats *fwd_stats; /* what it reports (shared memory); NULL = none */
	int daemon_reported;           /* its early exit is already in the error sentence */
	char ip[PATH_MAX], tc[PATH_MAX], nft[PATH_MAX], daemon[PATH_MAX];
	char server_host[INET6_ADDRSTRLEN];
	struct labweb web;             /* --http / --https: the public listener (labweb.c) */
};

static const char *lab_ns(const struct lab *lab, enum lab_role r)
{
	return lab->ns[lab->role_node[r]];
}

/* Namespace names carry our pid, so one process can hold only one lab at a time. */
static int lab_live;

static void lab_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void lab_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static void lab_sleep_ns(int64_t ns)
{
	struct timespec ts = { .tv_sec = ns / NS_PER_SEC, .tv_nsec = ns % NS_PER_SEC };

	/* An interrupt cuts the sleep short, which is fine: callers re-check util_interrupted(). */
	(void)nanosleep(&ts, NULL);
}

/* ---- configuration and ground truth ---- */

static int lab_check_direction(const char *dir, uint64_t rate, double buffer_ms,
			       uint64_t *limit, uint64_t *burst, char *err, size_t errlen)
{
	double bytes_per_ms = (double)rate / 8.0 / 1000.0;
	double min_burst = 4.0 * LAB_FRAME_BYTES;

	if (rate < LAB_MIN_RATE || rate > LAB_MAX_RATE) {
		lab_err(err, errlen, "the %s rate must be between 64 kbit/s and 10 Gbit/s.", dir);
		return -1;
	}
	if (!(buffer_ms > 0.0 && buffer_ms <= LAB_MAX_BUFFER_MS)) {
		lab_err(err, errlen, "the %s buffer must be more than 0 ms and at most 10000 ms.", dir);
		return -1;
	}
	*limit = (uint64_t)llround(bytes_per_ms * buffer_ms);
	if (*limit < 2 * LAB_FRAME_BYTES) {
		lab_err(err, errlen, "a %g ms %s buffer at %llu bit/s holds only %llu bytes but tbf "
			"needs at least %d (two full frames); use a longer buffer or a higher rate.",
			buffer_ms, dir, (unsigned long long)rate, (unsigned long long)*limit,
			2 * LAB_FRAME_BYTES);
		return -1;
	}
	if (*limit > UINT32_MAX) {
		lab_err(err, errlen, "the %s buffer of %llu bytes exceeds tbf's 4 GB limit.", dir,
			(unsigned long long)*limit);
		return -1;
	}
	*burst = (uint64_t)llround(fmax(bytes_per_ms * LAB_BURST_MS, min_burst));
	return 0;
}

int lab_qdisc_parse(const char *s)
{
	for (int i = 0; i < LAB_QDISCS; i++)
		if (strcmp(s, lab_qdisc_names[i]) == 0)
			return i;
	return -1;
}

static void lab_param(struct lab_truth *t, const char *name, double value)
{
	if (t->nparams < LAB_QDISC_PARAMS)
		t->params[t->nparams++] = (struct lab_qdisc_param){ name, value };
}

/* The truth about the queue: which, where, and the parameters it really runs with. */
static void lab_truth_qdisc(const struct lab_config *cfg, struct lab_truth *t)
{
	char where[32] = "router";

	if (t->hops > 1)
		snprintf(where, sizeof(where), "router at hop %d of %d", t->bottleneck_hop, t->hops);
	snprintf(t->qdisc, sizeof(t->qdisc), "%s", lab_qdisc_names[cfg->qdisc]);
	snprintf(t->hop, sizeof(t->hop), "%s: %s", where, cfg->qdisc == LAB_QDISC_TBF ?
		 "tbf on veth-c (down) and veth-s (up)" :
		 "userspace on " TUNFWD_DEV_DOWN " (down) and " TUNFWD_DEV_UP " (up)");
	t->ecn_mark = cfg->ecn_mark;
	t->delay_ms = cfg->delay_ms;
	switch (cfg->qdisc) {
	case LAB_QDISC_FQCODEL:
		lab_param(t, "flows", BNECK_FQ_FLOWS);
		lab_param(t, "quantum_bytes", FQ_QUANTUM);
		/* CoDel runs on each flow */
		__attribute__((fallthrough));
	case LAB_QDISC_CODEL:
		lab_param(t, "target_ms", (double)CODEL_TARGET_NS / NS_PER_MS);
		lab_param(t, "interval_ms", (double)CODEL_INTERVAL_NS / NS_PER_MS);
		break;
	case LAB_QDISC_PIE:
		lab_param(t, "qdelay_ref_ms", (double)PIE_QDELAY_REF_NS / NS_PER_MS);
		lab_param(t, "t_update_ms", (double)PIE_T_UPDATE_NS / NS_PER_MS);
		lab_param(t, "max_burst_ms", (double)PIE_MAX_BURST_NS / NS_PER_MS);
		lab_param(t, "alpha", 0.125);
		lab_param(t, "beta", 1.25);
		break;
	default:
		break;
	}
}

static int lab_check_qdisc(const struct lab_config *cfg, char *err, size_t errlen)
{
	int user = cfg->qdisc != LAB_QDISC_TBF;

	if ((unsigned)cfg->qdisc >= LAB_QDISCS) {
		lab_err(err, errlen, "unknown lab qdisc.");
		return -1;
	}
	if (!(cfg->delay_ms >= 0 && cfg->delay_ms <= LAB_MAX_DELAY_MS)) {
		lab_err(err, errlen, "the path delay must be between 0 and 1000 ms.");
		return -1;
	}
	if (!user && cfg->delay_ms > 0) {
		lab_err(err, errlen, "a path delay needs the userspace bottleneck (--qdisc fifo, codel, "
			"fqcodel or pie); the tbf bottleneck has no delay stage.");
		return -1;
	}
	if (cfg->ecn_mark && (cfg->qdisc == LAB_QDISC_TBF || cfg->qdisc == LAB_QDISC_FIFO)) {
		lab_err(err, errlen, "ECN marking needs an AQM (--qdisc codel, fqcodel or pie); %s "
			"only drops.", lab_qdisc_names[cfg->qdisc]);
		return -1;
	}
	if (user && (cfg->down_rate_bps > LAB_TUN_MAX_RATE || cfg->up_rate_bps > LAB_TUN_MAX_RATE)) {
		lab_err(err, errlen, "the userspace bottleneck runs at most 100 Mbit/s each way; use "
			"--qdisc tbf above that.");
		return -1;
	}
	return 0;
}

/* The chain: 0 in either means the classic one router, the bottleneck. */
static int lab_check_hops(const struct lab_config *cfg, struct lab_truth *t, char *err,
			  size_t errlen)
{
	t->hops = cfg->hops > 0 ? cfg->hops : 1;
	t->bottleneck_hop = cfg->bottleneck_hop > 0 ? cfg->bottleneck_hop : 1;
	if (!labtopo_valid(t->hops, t->bottleneck_hop)) {
		lab_err(err, errlen, "the lab has 1 to %d routers (--hops) and the bottleneck at one "
			"of them (--bottleneck-hop 1 to --hops).", LABTOPO_MAX_HOPS);
		return -1;
	}
	return 0;
}

static int lab_check_config(const struct lab_config *cfg, struct lab_truth *t, char *err,
			    size_t errlen)
{
	memset(t, 0, sizeof(*t));
	if (lab_check_direction("download", cfg->down_rate_bps, cfg->down_buffer_ms,
				&t->down_limit_bytes, &t->down_burst_bytes, err, errlen) == -1 ||
	    lab_check_direction("upload", cfg->up_rate_bps, cfg->up_buffer_ms,
				&t->up_limit_bytes, &t->up_burst_bytes, err, errlen) == -1)
		return -1;
	if (!(cfg->down_loss_pct >= 0 && cfg->down_loss_pct < 100 && cfg->up_loss_pct >= 0 &&
	      cfg->up_loss_pct < 100)) {
		lab_err(err, errlen, "random loss must be at least 0 %% and below 100 %%.");
		return -1;
	}
	/* nftables draws from 0..9999, so the loss really configured is a multiple of 0.01 %. */
	t->down_loss_pct = round(cfg->down_loss_pct * 100) / 100;
	t->up_loss_pct = round(cfg->up_loss_pct * 100) / 100;
	if (cfg->port == 0) {
		lab_err(err, errlen, "the lab needs a fixed daemon port, not 0.");
		return -1;
	}
	if (lab_check_qdisc(cfg, err, errlen) == -1 || lab_check_hops(cfg, t, err, errlen) == -1)
		return -1;
	lab_truth_qdisc(cfg, t);
	t->down_rate_bps = cfg->down_rate_bps;
	t->up_rate_bps = cfg->up_rate_bps;
	/* The truth is what the rounded limit really holds, not what was asked for. */
	t->down_buffer_ms = (double)t->down_limit_bytes * 8000.0 / (double)t->down_rate_bps;
	t->up_buffer_ms = (double)t->up_limit_bytes * 8000.0 / (double)t->up_rate_bps;
	return 0;
}

/* ---- finding programs ---- */

static int lab_find_tool(const char *name, char *out, size_t outlen)
{
	static const char *const dirs[] = { "/usr/sbin", "/sbin", "/usr/bin", "/bin" };

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		int n = snprintf(out, outlen, "%s/%s", dirs[i], name);

		if (n > 0 && (size_t)n < outlen && access(out, X_OK) == 0)
			return 0;
	}
	return -1;
}

static int lab_try_path(char *out, size_t outlen, const char *dir, const char *rel)
{
	int n = snprintf(out, outlen, "%s/%s", dir, rel);

	return n > 0 && (size_t)n < outlen && access(out, X_OK) == 0 ? 0 : -1;
}

/* The configured path, else next to this program, else ../sbin (the installed layout). */
static int lab_find_daemon(const struct lab_config *cfg, char *out, size_t outlen, char *err,
			   size_t errlen)
{
	char dir[PATH_MAX];
	ssize_t n;
	char *slash;

	if (cfg->daemon_path != NULL) {
		if (access(cfg->daemon_path, X_OK) == -1) {
			lab_err(err, errlen, "cannot run bloatmeterd at %s: %s.", cfg->daemon_path,
				strerror(errno));
			return -1;
		}
		snprintf(out, outlen, "%s", cfg->daemon_path);
		return 0;
	}
	n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (n == -1) {
		lab_err(err, errlen, "cannot find bloatmeterd: reading /proc/self/exe failed: %s.",
			strerror(errno));
		return -1;
	}
	dir[n] = '\0';
	slash = strrchr(dir, '/');
	if (slash != NULL)
		*slash = '\0';
	if (lab_try_path(out, outlen, dir, "bloatmeterd") == 0 ||
	    lab_try_path(out, outlen, dir, "../sbin/bloatmeterd") == 0)
		return 0;
	lab_err(err, errlen, "cannot find bloatmeterd in %s or %s/../sbin; give its path explicitly.",
		dir, dir);
	return -1;
}

/* ---- running ip and tc ---- */

static void lab_log_argv(char *const argv[])
{
	char line[1024];
	size_t o = 0;

	if (log_get_level() < LOG_LVL_DEBUG)
		return;
	line[0] = '\0';
	for (size_t i = 0; argv[i] != NULL && o < sizeof(line); i++) {
		int n = snprintf(line + o, sizeof(line) - o, "%s%s", i ? " " : "", argv[i]);

		if (n < 0)
			break;
		o += (size_t)n;
	}
	log_debug("lab: running %s", line);
}

/* The child side of lab_run: only async-signal-safe calls between fork and exec. */
static _Noreturn void lab_exec_tool(char *const argv[], int errfd)
{
	static const char msg[] = "cannot execute the program\n";
	sigset_t none;
	int devnull;

	/* Its own process group: a Ctrl-C at the terminal must not kill it half-way. */
	if (setpgid(0, 0) == -1)
		_exit(126);
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) == -1)
		_exit(126);
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull == -1 || dup2(devnull, STDIN_FILENO) == -1 ||
	    dup2(devnull, STDOUT_FILENO) == -1 || dup2(errfd, STDERR_FILENO) == -1)
		_exit(126);
	execv(argv[0], argv);
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(127);
	_exit(127);
}

static int lab_reap(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) == -1) {
		if (errno != EINTR)
			return -1;
	}
	return 0;
}

/* Reads what the child wrote to stderr, keeping the start and draining the rest. */
static void lab_read_stderr(int fd, char *buf, size_t len)
{
	size_t o = 0;
	char scratch[256];

	for (;;) {
		ssize_t n = o + 1 < len ? read(fd, buf + o, len - 1 - o) :
					  read(fd, scratch, sizeof(scratch));

		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (o + 1 < len)
			o += (size_t)n;
	}
	buf[o] = '\0';
}

static void lab_describe_status(int status, const char *out, char *msg, size_t msglen)
{
	size_t n = strcspn(out, "\n");

	if (n > 0)
		snprintf(msg, msglen, "%.*s", (int)n, out);
	else if (WIFEXITED(status))
		snprintf(msg, msglen, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(msg, msglen, "killed by signal %d", WTERMSIG(status));
	else
		snprintf(msg, msglen, "failed");
}

/* Runs argv (argv[0] an absolute path) without a shell. Returns 0 if it exited with status 0,
 * else -1 with the first line of its stderr (or how it died) in msg. */
static int lab_run(char *const argv[], char *msg, size_t msglen)
{
	char out[512];
	int pipefd[2], status;
	pid_t pid;

	lab_log_argv(argv);
	if (pipe2(pipefd, O_CLOEXEC) == -1) {
		snprintf(msg, msglen, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid == -1) {
		snprintf(msg, msglen, "fork: %s", strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	if (pid == 0)
		lab_exec_tool(argv, pipefd[1]);
	close(pipefd[1]);
	lab_read_stderr(pipefd[0], out, sizeof(out));
	close(pipefd[0]);
	if (lab_reap(pid, &status) == -1) {
		snprintf(msg, msglen, "waitpid: %s", strerror(errno));
		return -1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	lab_describe_status(status, out, msg, msglen);
	return -1;
}

/* A set-up step: runs tool with the NULL-terminated arguments; on failure err names the step. */
static int lab_step(const char *tool, char *err, size_t errlen, const char *step, ...)
	__attribute__((sentinel));

static int lab_step(const char *tool, char *err, size_t errlen, const char *step, ...)
{
	char *argv[LAB_MAX_ARGS + 1];
	char msg[512];
	size_t argc = 0;
	const char *a;
	va_list ap;

	if (util_interrupted()) {
		lab_err(err, errlen, "interrupted");
		return -1;
	}
	argv[argc++] = (char *)tool;
	va_start(ap, step);
	while ((a = va_arg(ap, const char *)) != NULL && argc < LAB_MAX_ARGS)
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	if (lab_run(argv, msg, sizeof(msg)) == 0)
		return 0;
	lab_err(err, errlen, "lab set-up failed while %s: %s", step, msg);
	return -1;
}

static void lab_netns_del(const char *ip, const char *name)
{
	char *argv[] = { (char *)ip, "netns", "del", (char *)name, NULL };
	char msg[512];

	if (lab_run(argv, msg, sizeof(msg)) == -1)
		log_warnx("could not delete network namespace %s: %s", name, msg);
}

/* ---- namespaces ---- */

/* Parses bm<pid>-<suffix> (labtopo.h); returns 0 and the pid if name is one of ours. */
static int lab_parse_name(const char *name, pid_t *pid)
{
	char *end;
	long v;

	if (strncmp(name, "bm", 2) != 0 || name[2] < '1' || name[2] > '9')
		return -1;
	errno = 0;
	v = strtol(name + 2, &end, 10);
	if (errno != 0 || v <= 0 || v > INT_MAX || end[0] != '-' || !labtopo_suffix_valid(end + 1))
		return -1;
	*pid = (pid_t)v;
	return 0;
}

/* A process is gone if it no longer exists or is a zombie nobody has reaped yet. */
static int lab_pid_gone(pid_t pid)
{
	char path[64], buf[256], *paren;
	ssize_t n;
	int fd;

	if (kill(pid, 0) == -1)
		return errno == ESRCH;
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return errno == ENOENT;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "pid (comm) S ...": comm may hold spaces and parentheses, so look after the last ')'. */
	paren = strrchr(buf, ')');
	return paren != NULL && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

/* Deletes namespaces left by lab runs that were SIGKILLed (their pid no longer exists). With no
 * lab alive in this process, names carrying our own pid are leftovers of a reused pid. */
static void lab_remove_stale(const char *ip)
{
	DIR *d = opendir(LAB_NETNS_DIR);
	struct dirent *de;

	if (d == NULL) {
		if (errno != ENOENT)
			log_warn("cannot list %s", LAB_NETNS_DIR);
		return;
	}
	while ((errno = 0, de = readdir(d)) != NULL) {
		pid_t pid;

		if (lab_parse_name(de->d_name, &pid) == -1)
			continue;
		if (pid != getpid() && !lab_pid_gone(pid))
			continue;
		log_info("removing network namespace %s left by an earlier lab run", de->d_name);
		lab_netns_del(ip, de->d_name);
	}
	if (errno != 0)
		log_warn("cannot list %s", LAB_NETNS_DIR);
	closedir(d);
}

static int lab_open_ns(const char *name, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", LAB_NETNS_DIR, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		lab_err(err, errlen, "cannot open network namespace %s: %s.", path, strerror(errno));
	return fd;
}

static int lab_make_namespaces(struct lab *lab, char *err, size_t errlen)
{
	char msg[512];

	for (int i = 0; i < lab->topo.nnodes; i++) {
		char *argv[] = { lab->ip, "netns", "add", lab->ns[i], NULL };

		if (util_interrupted()) {
			lab_err(err, errlen, "interrupted");
			return -1;
		}
		if (lab_run(argv, msg, sizeof(msg)) == -1) {
			lab_err(err, errlen, "network namespaces are unavailable: ip netns add %s "
				"failed: %s", lab->ns[i], msg);
			return -1;
		}
		lab->created[i] = 1;
	}
	lab->client_fd = lab_open_ns(lab_ns(lab, LAB_CLIENT), err, errlen);
	return lab->client_fd == -1 ? -1 : 0;
}

/* Moves the calling thread into the namespace fd; what is done there stays there. */
static int lab_setns(int fd, const char *what, char *err, size_t errlen)
{
	if (setns(fd, CLONE_NEWNET) == -1) {
		lab_err(err, errlen, "cannot enter the %s network namespace: %s.", what,
			strerror(errno));
		return -1;
	}
	return 0;
}

static int lab_return(struct lab *lab)
{
	if (setns(lab->origin_fd, CLONE_NEWNET) == -1) {
		log_warn("cannot return to the original network namespace");
		return -1;
	}
	return 0;
}

/* ---- links, addresses, routes, forwarding ---- */

/* Each veth pair is created inside a router's namespace with its peer moved to the neighbour's
 * (never in ours): link 1 from router 1 (its neighbour is the client), the others from the
 * router on the client's side. */
static int lab_make_links(struct lab *lab, char *err, size_t errlen)
{
	const char *ip = lab->ip;

	for (int i = 0; i < lab->topo.nlinks; i++) {
		const struct labtopo_link *l = &lab->topo.links[i];
		const struct labtopo_end *mk = i == 0 ? &l->b : &l->a, *peer = i == 0 ? &l->a : &l->b;

		if (lab_step(ip, err, errlen, "creating a veth link", "-n", lab->ns[mk->node], "link",
			     "add", mk->dev, "type", "veth", "peer", "name", peer->dev, "netns",
			     lab->ns[peer->node], NULL) == -1)
			return -1;
	}
	/* Links come up before addresses so the nodad IPv6 addresses and their routes are live. */
	for (int i = 0; i < lab->topo.nnodes; i++) {
		if (lab_step(ip, err, errlen, "bringing up loopback", "-n", lab->ns[i], "link", "set",
			     "lo", "up", NULL) == -1)
			return -1;
	}
	for (int i = 0; i < lab->topo.nlinks; i++) {
		const struct labtopo_link *l = &lab->topo.links[i];

		if (lab_step(ip, err, errlen, "bringing up links", "-n", lab->ns[l->a.node], "link",
			     "set", l->a.dev, "up", NULL) == -1 ||
		    lab_step(ip, err, errlen, "bringing up links", "-n", lab->ns[l->b.node], "link",
			     "set", l->b.dev, "up", NULL) == -1)
			return -1;
	}
	return 0;
}

static int lab_addr(struct lab *lab, const struct labtopo_end *e, char *err, size_t errlen)
{
	const char *ns = lab->ns[e->node];

	if (lab_step(lab->ip, err, errlen, "adding an IPv4 address", "-n", ns, "addr", "add", e->v4,
		     "dev", e->dev, NULL) == -1 ||
	    lab_step(lab->ip, err, errlen, "adding an IPv6 address", "-n", ns, "addr", "add", e->v6,
		     "dev", e->dev, "nodad", NULL) == -1)
		return -1;
	return 0;
}

static int lab_addresses(struct lab *lab, char *err, size_t errlen)
{
	for (int i = 0; i < lab->topo.nlinks; i++) {
		if (lab_addr(lab, &lab->topo.links[i].a, err, errlen) == -1 ||
		    lab_addr(lab, &lab->topo.links[i].b, err, errlen) == -1)
			return -1;
	}
	return 0;
}

static int lab_routes(struct lab *lab, char *err, size_t errlen)
{
	for (int i = 0; i < lab->topo.nnodes; i++) {
		const struct labtopo_node *n = &lab->topo.nodes[i];

		for (int k = 0; k < n->nroutes; k++) {
			const struct labtopo_route *r = &n->routes[k];

			if (lab_step(lab->ip, err, errlen, "adding an IPv4 route", "-n", lab->ns[i],
				     "-4", "route", "add", r->v4_dst, "via", r->v4_via, NULL) == -1 ||
			    lab_step(lab->ip, err, errlen, "adding an IPv6 route", "-n", lab->ns[i],
				     "-6", "route", "add", r->v6_dst, "via", r->v6_via, NULL) == -1)
				return -1;
		}
	}
	return 0;
}

/* Writes a sysctl; the calling thread must already be in the target namespace, because
 * /proc/sys/net shows the namespace of whoever opens it. */
static int lab_write_sysctl(const char *path, const char *value, char *err, size_t errlen)
{
	size_t len = strlen(value);
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd == -1 || write(fd, value, len) != (ssize_t)len) {
		lab_err(err, errlen, "cannot write %s in a lab namespace: %s.", path,
			strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	if (close(fd) == -1) {
		lab_err(err, errlen, "cannot write %s in a lab namespace: %s.", path,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* Forwarding on (routers), and no ICMP rate limit: the lab's routers and server answer every
 * TTL-limited probe (--per-hop), so what a hop reports is its queue, not its error budget (real
 * routers' limits are the per-hop analysis' business, tests/lab/lab_per_hop.sh ratelimit). */
static int lab_node_sysctls(struct lab *lab, int node, char *err, size_t errlen)
{
	static const struct {
		const char *path, *value;
		int router_only;
	} sysctls[] = {
		{ "/proc/sys/net/ipv4/ip_forward", "1", 1 },
		{ "/proc/sys/net/ipv6/conf/all/forwarding", "1", 1 },
		{ "/proc/sys/net/ipv4/icmp_ratelimit", "0", 0 },
		{ "/proc/sys/net/ipv6/icmp/ratelimit", "0", 0 },
	};
	int router = lab->topo.nodes[node].router, fd, rc = 0;

	if (util_interrupted()) {
		lab_err(err, errlen, "interrupted");
		return -1;
	}
	fd = lab_open_ns(lab->ns[node], err, errlen);
	if (fd == -1)
		return -1;
	rc = lab_setns(fd, router ? "router" : "server", err, errlen);
	close(fd);
	if (rc == -1)
		return -1;
	log_debug("lab: sysctls in %s", lab->ns[node]);
	for (size_t i = 0; i < sizeof(sysctls) / sizeof(sysctls[0]) && rc == 0; i++)
		if (router || !sysctls[i].router_only)
			rc = lab_write_sysctl(sysctls[i].path, sysctls[i].value, err, errlen);
	if (lab_return(lab) == -1) {
		lab_err(err, errlen, "cannot return to the original network namespace: %s.",
			strerror(errno));
		return -1;
	}
	return rc;
}

static int lab_forwarding(struct lab *lab, char *err, size_t errlen)
{
	for (int i = 1; i < lab->topo.nnodes; i++)
		if (lab_node_sysctls(lab, i, err, errlen) == -1)
			return -1;
	return 0;
}

/* ---- shaping ---- */

static int lab_tbf(struct lab *lab, const char *dev, const char *dir, uint64_t rate,
		   uint64_t burst, uint64_t limit, char *err, size_t errlen)
{
	char rate_s[32], burst_s[32], limit_s[32], step[64];

	snprintf(rate_s, sizeof(rate_s), "%llubit", (unsigned long long)rate);
	snprintf(burst_s, sizeof(burst_s), "%llu", (unsigned long long)burst);
	snprintf(limit_s, sizeof(limit_s), "%llu", (unsigned long long)limit);
	snprintf(step, sizeof(step), "adding the %s tbf", dir);
	return lab_step(lab->tc, err, errlen, step, "-n", lab_ns(lab, LAB_ROUTER), "qdisc", "add",
			"dev", dev, "root", "tbf", "rate", rate_s, "burst", burst_s, "limit",
			limit_s, NULL);
}

/* Every packet that arrives on from goes to dev, the userspace bottleneck's device: a
 * policy rule selects a table whose default route leads into it. What the bottleneck writes back
 * arrives on dev, so the main table forwards it on. The local table still comes first. */
static int lab_tun_route(struct lab *lab, const char *dev, const char *from, const char *table,
			 char *err, size_t errlen)
{
	const char *r = lab_ns(lab, LAB_ROUTER), *ip = lab->ip;

	if (lab_step(ip, err, errlen, "bringing up a TUN device", "-n", r, "link", "set", dev, "up",
		     NULL) == -1 ||
	    lab_step(ip, err, errlen, "adding a route into a TUN device", "-n", r, "-4", "route",
		     "add", "default", "dev", dev, "table", table, NULL) == -1 ||
	    lab_step(ip, err, errlen, "adding a route into a TUN device", "-n", r, "-6", "route",
		     "add", "default", "dev", dev, "table", table, NULL) == -1 ||
	    lab_step(ip, err, errlen, "adding a policy rule", "-n", r, "-4", "rule", "add", "iif",
		     from, "lookup", table, NULL) == -1 ||
	    lab_step(ip, err, errlen, "adding a policy rule", "-n", r, "-6", "rule", "add", "iif",
		     from, "lookup", table, NULL) == -1)
		return -1;
	return 0;
}

static struct bneck_params lab_bneck_params(const struct lab_config *cfg, uint64_t rate,
					    uint64_t burst, uint64_t limit, uint64_t seed)
{
	static const enum bneck_qdisc map[LAB_QDISCS] = {
		[LAB_QDISC_FIFO] = BNECK_FIFO, [LAB_QDISC_CODEL] = BNECK_CODEL,
		[LAB_QDISC_FQCODEL] = BNECK_FQCODEL, [LAB_QDISC_PIE] = BNECK_PIE,
	};

	return (struct bneck_params){
		.qdisc = map[cfg->qdisc], .rate_bps = rate, .burst = burst, .limit = limit,
		.ecn = cfg->ecn_mark, .delay_ns = (uint64_t)llround(cfg->delay_ms * NS_PER_MS),
		.seed = seed,
	};
}

/* The userspace bottleneck: its process first (it creates the devices), then the routes. */
static int lab_tun(struct lab *lab, char *err, size_t errlen)
{
	const struct lab_truth *t = &lab->truth;
	struct tunfwd_config fc = {
		.down = lab_bneck_params(&lab->cfg, t->down_rate_bps, t->down_burst_bytes,
					 t->down_limit_bytes, 0x9e3779b97f4a7c15ull),
		.up = lab_bneck_params(&lab->cfg, t->up_rate_bps, t->up_burst_bytes,
				       t->up_limit_bytes, 0xbf58476d1ce4e5b9ull),
	};
	char nspath[PATH_MAX];
	pid_t pid;

	if (util_interrupted()) {
		lab_err(err, errlen, "interrupted");
		return -1;
	}
	snprintf(nspath, sizeof(nspath), "%s/%s", LAB_NETNS_DIR, lab_ns(lab, LAB_ROUTER));
	log_debug("lab: starting the userspace bottleneck (%s) in %s", t->qdisc,
		  lab_ns(lab, LAB_ROUTER));
	lab->fwd_stats = tunfwd_stats_map();
	if (lab->fwd_stats == NULL) {
		lab_err(err, errlen, "cannot map the userspace bottleneck's statistics: %s.",
			strerror(errno));
		return -1;
	}
	pid = tunfwd_start(nspath, &fc, lab->fwd_stats, err, errlen);
	if (pid == -1)
		return -1;
	lab->fwd_pid = pid;
	if (lab_tun_route(lab, TUNFWD_DEV_DOWN, "veth-s", LAB_TUN_TABLE_DOWN, err, errlen) == -1 ||
	    lab_tun_route(lab, TUNFWD_DEV_UP, "veth-c", LAB_TUN_TABLE_UP, err, errlen) == -1)
		return -1;
	return 0;
}

/* One tbf per direction on the router's egress: forwarded packets no longer belong to a
 * socket, so TCP Small Queues cannot hide the queue (METHODS.md). Or the userspace one. */
static int lab_shape(struct lab *lab, char *err, size_t errlen)
{
	const struct lab_truth *t = &lab->truth;

	if (lab->cfg.qdisc != LAB_QDISC_TBF)
		return lab_tun(lab, err, errlen);
	if (lab_tbf(lab, "veth-c", "download", t->down_rate_bps, t->down_burst_bytes,
		    t->down_limit_bytes, err, errlen) == -1 ||
	    lab_tbf(lab, "veth-s", "upload", t->up_rate_bps, t->up_burst_bytes, t->up_limit_bytes,
		    err, errlen) == -1)
		return -1;
	return 0;
}

/* Random loss per direction: an nftables rule in the router's forward chain drops forwarded
 * packets leaving towards that side with the configured probability (numgen random). */
static int lab_loss_rule(struct lab *lab, const char *dev, double pct, char *err, size_t errlen)
{
	char below[16];

	if (pct <= 0)
		return 0;
	snprintf(below, sizeof(below), "%ld", lround(pct * 100));
	return lab_step(lab->ip, err, errlen, "adding a random-loss rule", "netns", "exec",
			lab_ns(lab, LAB_ROUTER), lab->nft, "add", "rule", "inet", "bmlab", "loss", "oifname",
			dev, "numgen", "random", "mod", "10000", "<", below, "drop", NULL);
}

static int lab_loss(struct lab *lab, char *err, size_t errlen)
{
	const struct lab_truth *t = &lab->truth;
	const char *r = lab_ns(lab, LAB_ROUTER);

	if (t->down_loss_pct <= 0 && t->up_loss_pct <= 0)
		return 0;
	if (lab->nft[0] == '\0') {
		lab_err(err, errlen, "random loss needs nft (package nftables), which is not installed.");
		return -1;
	}
	if (lab_step(lab->ip, err, errlen, "adding the nftables table", "netns", "exec", r, lab->nft,
		     "add", "table", "inet", "bmlab", NULL) == -1 ||
	    lab_step(lab->ip, err, errlen, "adding the nftables forward chain", "netns", "exec", r,
		     lab->nft, "add", "chain", "inet", "bmlab", "loss",
		     "{ type filter hook forward priority 0; policy accept; }", NULL) == -1)
		return -1;
	return lab_loss_rule(lab, "veth-c", t->down_loss_pct, err, errlen) == -1 ||
			       lab_loss_rule(lab, "veth-s", t->up_loss_pct, err, errlen) == -1
		       ? -1 : 0;
}

/* ---- the daemon ---- */

/* What the daemon child reports through its close-on-exec pipe when a step fails. */
enum lab_child_step { LAB_CHILD_NETNS = 1, LAB_CHILD_SETNS, LAB_CHILD_STDIO, LAB_CHILD_PRCTL,
		      LAB_CHILD_EXEC };

static _Noreturn void lab_child_fail(int fd, int step)
{
	int report[2] = { step, errno };

	if (write(fd, report, sizeof(report)) < 0)
		_exit(127);
	_exit(127);
}

/* The daemon child: only async-signal-safe calls between fork and exec. */
static _Noreturn void lab_daemon_child(const char *nspath, const char *daemon, char *const argv[],
				       int statusfd, pid_t parent)
{
	sigset_t none;
	int fd;

	fd = open(nspath, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		lab_child_fail(statusfd, LAB_CHILD_NETNS);
	if (setns(fd, CLONE_NEWNET) == -1)
		lab_child_fail(statusfd, LAB_CHILD_SETNS);
	/* Own process group: Ctrl-C reaches only bloatmeter, which then stops the daemon in order. */
	if (setpgid(0, 0) == -1)
		lab_child_fail(statusfd, LAB_CHILD_STDIO);
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL) == -1)
		lab_child_fail(statusfd, LAB_CHILD_STDIO);
	/* stdout is quiet; stderr stays so the daemon's warnings show. */
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd == -1 || dup2(fd, STDIN_FILENO) == -1 || dup2(fd, STDOUT_FILENO) == -1)
		lab_child_fail(statusfd, LAB_CHILD_STDIO);
	/* If bloatmeter dies, even by SIGKILL, the daemon goes with it. */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) == -1)
		lab_child_fail(statusfd, LAB_CHILD_PRCTL);
	if (getppid() != parent)
		_exit(127);
	/* Our other descriptors (sockets, logs) are none of the daemon's business. */
	(void)close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
	execv(daemon, argv);
	lab_child_fail(statusfd, LAB_CHILD_EXEC);
}

static const char *lab_child_step_name(int step)
{
	switch (step) {
	case LAB_CHILD_NETNS: return "opening the server namespace";
	case LAB_CHILD_SETNS: return "entering the server namespace";
	case LAB_CHILD_STDIO: return "preparing its process";
	case LAB_CHILD_PRCTL: return "setting its parent-death signal";
	default: return "executing it";
	}
}

/* Reads the child's report: EOF means execv succeeded. */
static int lab_read_child_report(int fd, const char *daemon, char *err, size_t errlen)
{
	int report[2];
	ssize_t n;

	do
		n = read(fd, report, sizeof(report));
	while (n == -1 && errno == EINTR);
	if (n == 0)
		return 0;
	if (n != (ssize_t)sizeof(report)) {
		lab_err(err, errlen, "cannot start %s: its start-up report was unreadable.", daemon);
		return -1;
	}
	lab_err(err, errlen, "cannot start %s: %s failed: %s.", daemon,
		lab_child_step_name(report[0]), strerror(report[1]));
	return -1;
}

static int lab_start_daemon(struct lab *lab, char *err, size_t errlen)
{
	char port[8], nspath[PATH_MAX];
	/* Root in its own namespace, and root keeps cubic on the load flows. -q: the daemon's
	 * root warning and session lines are not the lab user's to act on; errors still show. */
	char *argv[8 + LABWEB_MAX_ARGS] = { "bloatmeterd", "--allow-root", "yes", "-p", port };
	int pipefd[2], rc, n = 5;
	pid_t parent = getpid(), pid;

	if (util_interrupted()) {
		lab_err(err, errlen, "interrupted");
		return -1;
	}
	snprintf(port, sizeof(port), "%u", (unsigned)lab->cfg.port);
	n += labweb_daemon_args(&lab->web, argv + n);
	argv[n] = lab->cfg.daemon_verbose ? "-v" : "-q";
	snprintf(nspath, sizeof(nspath), "%s/%s", LAB_NETNS_DIR, lab_ns(lab, LAB_SERVER));
	log_debug("lab: starting %s -p %s %s in %s", lab->daemon, port,
		  lab->cfg.daemon_verbose ? "-v" : "-q", lab_ns(lab, LAB_SERVER));
	if (pipe2(pipefd, O_CLOEXEC) == -1) {
		lab_err(err, errlen, "cannot start bloatmeterd: pipe: %s.", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid == -1) {
		lab_err(err, errlen, "cannot start bloatmeterd: fork: %s.", strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	if (pid == 0)
		lab_daemon_child(nspath, lab->daemon, argv, pipefd[1], parent);
	close(pipefd[1]);
	rc = lab_read_child_report(pipefd[0], lab->daemon, err, errlen);
	close(pipefd[0]);
	if (rc == -1) {
		int status;

		/* It reported its own failure and exits; nothing more to say about it. */
		(void)lab_reap(pid, &status);
		return -1;
	}
	lab->daemon_pid = pid;
	return 0;
}

/* Returns 1 if the daemon has exited, without reaping it: while it is an unreaped zombie its pid,
 * and so its process group id, cannot be reused, so the group can still be signalled safely. */
static int lab_daemon_exited(const struct lab *lab, int *status)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)lab->daemon_pid, &si, WEXITED | WNOHANG | WNOWAIT) == -1)
		return errno == ECHILD;
	if (si.si_pid != lab->daemon_pid)
		return 0;
	*status = si.si_code == CLD_EXITED ? si.si_status << 8 : si.si_status;
	return 1;
}

static void lab_server_sockaddr(const struct lab *lab, struct sockaddr_storage *ss,
				socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	if (lab->cfg.ipv6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(lab->cfg.port);
		inet_pton(AF_INET6, lab->server_host, &s6->sin6_addr);
		*len = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(lab->cfg.port);
		inet_pton(AF_INET, lab->server_host, &s4->sin_addr);
		*len = sizeof(*s4);
	}
}

/* One connection attempt with a short timeout; 0 if the daemon accepted it. */
static int lab_try_connect(const struct sockaddr_storage *ss, socklen_t len)
{
	struct pollfd pfd;
	int fd, soerr = 0, rc = -1;
	socklen_t elen = sizeof(soerr);

	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1)
		return -1;
	if (connect(fd, (const struct sockaddr *)ss, len) == 0) {
		rc = 0;
	} else if (errno == EINPROGRESS) {
		pfd.fd = fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, 200) == 1 &&
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &elen) == 0 && soerr == 0)
			rc = 0;
	}
	close(fd);
	return rc;
}

/* Polls from the client namespace, so success also proves the routed path works. */
static int lab_probe_loop(struct lab *lab, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int64_t deadline = clock_mono_ns() + LAB_READY_NS;
	int status = 0;

	lab_server_sockaddr(lab, &ss, &len);
	for (;;) {
		if (util_interrupted()) {
			lab_err(err, errlen, "interrupted");
			return -1;
		}
		if (lab_daemon_exited(lab, &status)) {
			lab->daemon_reported = 1;
			lab_err(err, errlen, "bloatmeterd exited (%s %d) before accepting connections; "
				"see its messages above.", WIFSIGNALED(status) ? "signal" : "status",
				WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
			return -1;
		}
		if (lab_try_connect(&ss, len) == 0)
			return 0;
		if (clock_mono_ns() >= deadline) {
			lab_err(err, errlen, "bloatmeterd did not accept connections on %s port %u "
				"within 5 s.", lab->server_host, (unsigned)lab->cfg.port);
			return -1;
		}
		lab_sleep_ns(LAB_RETRY_NS);
	}
}

static int lab_wait_ready(struct lab *lab, char *err, size_t errlen)
{
	int rc;

	if (lab_setns(lab->client_fd, "client", err, errlen) == -1)
		return -1;
	rc = lab_probe_loop(lab, err, errlen);
	if (lab_return(lab) == -1) {
		lab_err(err, errlen, "cannot return to the original network namespace: %s.",
			strerror(errno));
		return -1;
	}
	return rc;
}

/* SIGTERM to the daemon's process group, up to 2 s of grace, then SIGKILL to whatever of the
 * group is left (a stand-in daemon may have children); always reaps. */
static void lab_stop_daemon(struct lab *lab)
{
	int64_t deadline = clock_mono_ns() + LAB_STOP_NS;
	pid_t pid = lab->daemon_pid;
	int status = 0, exited;

	if (pid <= 0)
		return;
	if (kill(-pid, SIGTERM) == -1 && errno != ESRCH)
		log_warn("cannot stop bloatmeterd (pid %ld)", (long)pid);
	while (!(exited = lab_daemon_exited(lab, &status)) && clock_mono_ns() < deadline)
		lab_sleep_ns(20 * NS_PER_MS);
	if (!exited)
		log_warnx("bloatmeterd did not stop within 2 s of SIGTERM; killing it");
	if (kill(-pid, SIGKILL) == -1 && errno != ESRCH)
		log_warn("cannot kill bloatmeterd (pid %ld)", (long)pid);
	if (lab_reap(pid, &status) == -1)
		log_warn("cannot reap bloatmeterd (pid %ld)", (long)pid);
	else if (exited && !lab->daemon_reported && WIFEXITED(status) && WEXITSTATUS(status) != 0)
		log_warnx("bloatmeterd exited with status %d", WEXITSTATUS(status));
	lab->daemon_pid = 0;
}

/* ---- the public lifecycle ---- */

static struct lab *lab_alloc(const struct lab_config *cfg, const struct lab_truth *truth)
{
	struct lab *lab = calloc(1, sizeof(*lab));

	if (lab == NULL)
		return NULL;
	lab->cfg = *cfg;
	lab->cfg.daemon_path = NULL; /* not ours to keep; lab->daemon holds the resolved path */
	lab->truth = *truth;
	lab->origin_fd = -1;
	lab->client_fd = -1;
	(void)labtopo_plan(truth->hops, truth->bottleneck_hop, &lab->topo); /* labtopo_valid before */
	for (int i = 0; i < lab->topo.nnodes; i++)
		snprintf(lab->ns[i], sizeof(lab->ns[i]), "bm%ld-%s", (long)getpid(),
			 lab->topo.nodes[i].suffix);
	lab->role_node[LAB_CLIENT] = 0;
	lab->role_node[LAB_ROUTER] = lab->topo.bneck_hop;
	lab->role_node[LAB_SERVER] = lab->topo.nnodes - 1;
	snprintf(lab->server_host, sizeof(lab->server_host), "%s",
		 cfg->ipv6 ? lab->topo.server_v6 : lab->topo.server_v4);
	return lab;
}

static int lab_prepare(struct lab *lab, const struct lab_config *cfg, char *err, size_t errlen)
{
	if (lab_find_tool("ip", lab->ip, sizeof(lab->ip)) == -1 ||
	    lab_find_tool("tc", lab->tc, sizeof(lab->tc)) == -1) {
		lab_err(err, errlen, "the lab needs ip and tc from iproute2, but they are not in "
			"/usr/sbin, /sbin, /usr/bin or /bin.");
		return -1;
	}
	if (lab_find_tool("nft", lab->nft, sizeof(lab->nft)) == -1)
		lab->nft[0] = '\0'; /* only needed for random loss */
	if (lab_find_daemon(cfg, lab->daemon, sizeof(lab->daemon), err, errlen) == -1)
		return -1;
	/* thread-self: setns moves only this thread, so remember this thread's namespace. */
	lab->origin_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (lab->origin_fd == -1) {
		lab_err(err, errlen, "cannot open this thread's network namespace: %s.",
			strerror(errno));
		return -1;
	}
	return 0;
}

struct lab *lab_create(const struct lab_config *cfg, char *err, size_t errlen)
{
	struct lab_truth truth;
	struct lab *lab;

	if (geteuid() != 0) {
		lab_err(err, errlen, "bloatmeter lab needs root (it creates network namespaces and "
			"tc qdiscs); run it with sudo.");
		return NULL;
	}
	if (lab_live > 0) {
		lab_err(err, errlen, "only one lab can exist per process.");
		return NULL;
	}
	if (lab_check_config(cfg, &truth, err, errlen) == -1)
		return NULL;
	lab = lab_alloc(cfg, &truth);
	if (lab == NULL) {
		lab_err(err, errlen, "out of memory.");
		return NULL;
	}
	lab_live++;
	if (lab_prepare(lab, cfg, err, errlen) == -1)
		goto fail;
	lab_remove_stale(lab->ip);
	if (labweb_setup(&lab->web, cfg->http, lab->server_host, err, errlen) == -1)
		goto fail;
	if (lab_make_namespaces(lab, err, errlen) == -1 || lab_make_links(lab, err, errlen) == -1 ||
	    lab_addresses(lab, err, errlen) == -1 || lab_routes(lab, err, errlen) == -1 ||
	    lab_forwarding(lab, err, errlen) == -1 || lab_shape(lab, err, errlen) == -1 ||
	    lab_loss(lab, err, errlen) == -1 ||
	    lab_start_daemon(lab, err, errlen) == -1 || lab_wait_ready(lab, err, errlen) == -1)
		goto fail;
	log_debug("lab: ready, server %s port %u", lab->server_host, (unsigned)lab->cfg.port);
	return lab;
fail:
	lab_destroy(lab);
	return NULL;
}

const char *lab_http_url(const struct lab *lab)
{
	return labweb_url(&lab->web);
}

const char *lab_http_ca(const struct lab *lab)
{
	return labweb_ca(&lab->web);
}

const char *lab_server_host(const struct lab *lab)
{
	return lab->server_host;
}

int lab_enter_client(struct lab *lab, char *err, size_t errlen)
{
	if (lab_setns(lab->client_fd, "client", err, errlen) == -1)
		return -1;
	lab->in_client = 1;
	return 0;
}

int lab_leave_client(struct lab *lab)
{
	if (lab_return(lab) == -1)
		return -1;
	lab->in_client = 0;
	return 0;
}

void lab_get_truth(const struct lab *lab, struct lab_truth *truth)
{
	*truth = lab->truth;
}

static void lab_bneck_counts(const struct tunfwd_dir_stats *d, struct lab_bneck_counts *out)
{
	struct bneck_counts c;

	tunfwd_stats_counts(d, &c);
	*out = (struct lab_bneck_counts){ c.in, c.out, c.tail_drops, c.aqm_drops, c.marks,
					  c.line_drops };
}

/* Floors over CoDel's interval, like the probes' floor (analysis.c), for every qdisc. */
static void lab_sojourn_dir(const struct sojlog *l, int64_t from, int64_t to,
			    struct lab_sojourn_dir *out)
{
	struct sojlog_summary s;

	if (sojlog_summarize(l, (uint64_t)from, (uint64_t)to, CODEL_INTERVAL_NS, &s) == -1)
		log_warnx("lab: out of memory summarising the bottleneck's sojourn times");
	*out = (struct lab_sojourn_dir){ s.samples, s.p50_ms, s.p95_ms, s.p99_ms, s.max_ms,
					 s.floor_ms };
}

void lab_get_bneck(const struct lab *lab, struct test_result *res)
{
	struct lab_truth *t = &res->truth;

	if (lab->fwd_stats == NULL)
		return;
	t->has_bneck = 1;
	lab_bneck_counts(&lab->fwd_stats->down, &t->down_bneck);
	lab_bneck_counts(&lab->fwd_stats->up, &t->up_bneck);
	t->nsojourn = 0;
	for (int i = 0; i < res->nphases && t->nsojourn < PHASE_KINDS; i++) {
		const struct phase_result *ph = &res->phases[i];
		struct lab_sojourn *s = &t->sojourn[t->nsojourn];
		int64_t from = result_window_start(ph);

		if (ph->kind == PHASE_IDLE || from < 0 || ph->end_ns <= from)
			continue;
		s->phase = ph->kind;
		lab_sojourn_dir(&lab->fwd_stats->down.sojourns, from, ph->end_ns, &s->down);
		lab_sojourn_dir(&lab->fwd_stats->up.sojourns, from, ph->end_ns, &s->up);
		t->nsojourn++;
	}
}

void lab_destroy(struct lab *lab)
{
	if (lab == NULL)
		return;
	/* A namespace this thread still sits in would outlive its deletion. */
	if (lab->in_client)
		(void)lab_leave_client(lab);
	lab_stop_daemon(lab);
	/* Before the namespaces go: its devices die with it. */
	tunfwd_stop(lab->fwd_pid);
	lab->fwd_pid = 0;
	tunfwd_stats_unmap(lab->fwd_stats);
	lab->fwd_stats = NULL;
	labweb_cleanup(&lab->web);
	/* Deleting a namespace removes its veths and their qdiscs with it. */
	for (int i = lab->topo.nnodes - 1; i >= 0; i--) {
		if (lab->created[i]) {
			lab_netns_del(lab->ip, lab->ns[i]);
			lab->created[i] = 0;
		}
	}
	if (lab->client_fd != -1)
		close(lab->client_fd);
	if (lab->origin_fd != -1)
		close(lab->origin_fd);
	lab->client_fd = lab->origin_fd = -1;
	lab_live--;
	free(lab);
}

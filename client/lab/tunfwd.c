/* tunfwd: the userspace bottleneck process (see tunfwd.h). */
#include "client/lab/tunfwd.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client/lab/pkt.h"
#include "common/clock.h"
#include "common/log.h"

#define TUNFWD_BATCH 64              /* packets read per device per wake-up: both stay served */
#define TUNFWD_RT_PRIO 10            /* above the load and the probes, below the kernel's own */
#define TUNFWD_STOP_NS (2 * NS_PER_SEC)

enum tunfwd_dir { TUNFWD_DOWN, TUNFWD_UP, TUNFWD_DIRS };

/* What the child reports through its close-on-exec pipe: the failed step and errno, or 0. */
enum tunfwd_step { TUNFWD_OK, TUNFWD_NETNS, TUNFWD_SETNS, TUNFWD_PROC, TUNFWD_TUN,
		   TUNFWD_NOMEM };

struct tunfwd_link {
	int fd;
	struct bneck b;
	struct tunfwd_dir_stats *st;
};

static _Noreturn void tunfwd_fail(int statusfd, enum tunfwd_step step)
{
	int report[2] = { (int)step, errno };

	if (write(statusfd, report, sizeof(report)) < 0)
		_exit(127);
	_exit(127);
}

static int tunfwd_open(const char *name)
{
	struct ifreq ifr;
	int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);

	if (fd == -1)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	/* IFF_NO_PI: bare IP packets, the version nibble says which. */
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, TUNSETIFF, &ifr) == -1) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* Reads up to a batch of packets from one device into its bottleneck. */
static void tunfwd_read(struct tunfwd_link *l, uint64_t now_ns)
{
	static uint8_t scratch[LAB_PKT_MAX];
	struct pkt_info pi;

	for (int i = 0; i < TUNFWD_BATCH; i++) {
		struct lab_pkt *p = malloc(sizeof(*p));
		ssize_t n;

		/* Without memory the packet is still read, so the device does not stay readable. */
		n = read(l->fd, p != NULL ? p->data : scratch, LAB_PKT_MAX);
		if (n <= 0 || p == NULL || pkt_parse(p->data, (size_t)n, &pi) == -1) {
			free(p);
			if (n == -1 && errno != EAGAIN && errno != EINTR)
				log_warn("lab bottleneck: reading a TUN device failed");
			if (n <= 0)
				return;
			continue;
		}
		p->len = (uint32_t)n;
		bneck_enqueue(&l->b, p, now_ns);
	}
}

/* Writes back what the delay line releases by now; the kernel forwards it on. */
static void tunfwd_write(struct tunfwd_link *l, uint64_t now_ns)
{
	struct lab_pkt *p;

	while ((p = bneck_release(&l->b, now_ns)) != NULL) {
		/* A refused write is a loss on the link, as a full NIC ring would be. */
		if (write(l->fd, p->data, p->len) != (ssize_t)p->len)
			log_debug("lab bottleneck: writing a packet back failed: %s", strerror(errno));
		free(p);
	}
}

static uint64_t tunfwd_min(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static void tunfwd_publish(const struct tunfwd_link *l)
{
	struct bneck_counts c;

	bneck_counts(&l->b, &c);
	atomic_store_explicit(&l->st->in, c.in, memory_order_relaxed);
	atomic_store_explicit(&l->st->out, c.out, memory_order_relaxed);
	atomic_store_explicit(&l->st->tail_drops, c.tail_drops, memory_order_relaxed);
	atomic_store_explicit(&l->st->aqm_drops, c.aqm_drops, memory_order_relaxed);
	atomic_store_explicit(&l->st->marks, c.marks, memory_order_relaxed);
	atomic_store_explicit(&l->st->line_drops, c.line_drops, memory_order_relaxed);
}

static _Noreturn void tunfwd_loop(struct tunfwd_link l[TUNFWD_DIRS])
{
	struct pollfd pfd[TUNFWD_DIRS];
	uint64_t published = 0;

	for (int d = 0; d < TUNFWD_DIRS; d++)
		pfd[d] = (struct pollfd){ .fd = l[d].fd, .events = POLLIN };
	for (;;) {
		uint64_t now = (uint64_t)clock_mono_ns(), next = UINT64_MAX;
		struct timespec ts;

		for (int d = 0; d < TUNFWD_DIRS; d++)
			tunfwd_read(&l[d], now);
		now = (uint64_t)clock_mono_ns();
		for (int d = 0; d < TUNFWD_DIRS; d++) {
			next = tunfwd_min(next, bneck_drain(&l[d].b, now));
			tunfwd_write(&l[d], now);
			next = tunfwd_min(next, bneck_next_release(&l[d].b));
		}
		now = (uint64_t)clock_mono_ns();
		/* Not every pass: FQ-CoDel sums its counters over all its flows. */
		if (now - published >= TUNFWD_PUBLISH_NS) {
			for (int d = 0; d < TUNFWD_DIRS; d++)
				tunfwd_publish(&l[d]);
			published = now;
		}
		if (next != UINT64_MAX) {
			uint64_t wait = next > now ? next - now : 0;

			ts.tv_sec = (time_t)(wait / NS_PER_SEC);
			ts.tv_nsec = (long)(wait % NS_PER_SEC);
		}
		if (ppoll(pfd, TUNFWD_DIRS, next == UINT64_MAX ? NULL : &ts, NULL) == -1 &&
		    errno != EINTR)
			fatal("lab bottleneck: ppoll");
	}
}

/* Timing: 1 ns timer slack (the default 50 µs would be a tenth of a frame at 20 Mbit/s) and a
 * real-time priority, so the host's other work delays the link less. Neither is essential. */
static void tunfwd_tune(void)
{
	struct sched_param sp = { .sched_priority = TUNFWD_RT_PRIO };

	if (prctl(PR_SET_TIMERSLACK, 1UL) == -1)
		log_warn("lab bottleneck: cannot set the timer slack");
	if (sched_setscheduler(0, SCHED_FIFO, &sp) == -1)
		log_warn("lab bottleneck: cannot run at real-time priority; its timing may suffer");
}

/* The child: joins the router namespace, creates the devices, reports, then forwards. */
static _Noreturn void tunfwd_child(const char *nspath, const struct tunfwd_config *cfg,
				   struct tunfwd_stats *st, int statusfd, pid_t parent)
{
	static const char *const names[TUNFWD_DIRS] = { TUNFWD_DEV_DOWN, TUNFWD_DEV_UP };
	struct tunfwd_link l[TUNFWD_DIRS];
	uint64_t now = (uint64_t)clock_mono_ns();
	sigset_t none;
	int fd = open(nspath, O_RDONLY | O_CLOEXEC);

	if (fd == -1)
		tunfwd_fail(statusfd, TUNFWD_NETNS);
	if (setns(fd, CLONE_NEWNET) == -1)
		tunfwd_fail(statusfd, TUNFWD_SETNS);
	close(fd);
	/* Own process group and default signals: a Ctrl-C reaches only bloatmeter, which then
	 * stops the forwarder in order; SIGTERM ends it (the kernel frees what it holds). */
	sigemptyset(&none);
	if (setpgid(0, 0) == -1 || signal(SIGTERM, SIG_DFL) == SIG_ERR ||
	    signal(SIGINT, SIG_IGN) == SIG_ERR || sigprocmask(SIG_SETMASK, &none, NULL) == -1 ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL) == -1)
		tunfwd_fail(statusfd, TUNFWD_PROC);
	if (getppid() != parent)
		_exit(127);
	for (int d = 0; d < TUNFWD_DIRS; d++) {
		l[d].fd = tunfwd_open(names[d]);
		if (l[d].fd == -1)
			tunfwd_fail(statusfd, TUNFWD_TUN);
	}
	if (bneck_init(&l[TUNFWD_DOWN].b, &cfg->down, now) == -1 ||
	    bneck_init(&l[TUNFWD_UP].b, &cfg->up, now) == -1) {
		errno = ENOMEM;
		tunfwd_fail(statusfd, TUNFWD_NOMEM);
	}
	l[TUNFWD_DOWN].st = &st->down;
	l[TUNFWD_UP].st = &st->up;
	for (int d = 0; d < TUNFWD_DIRS; d++)
		l[d].b.sojourns = &l[d].st->sojourns;
	tunfwd_tune();
	close(statusfd);
	tunfwd_loop(l);
}

static const char *tunfwd_step_name(int step)
{
	switch (step) {
	case TUNFWD_NETNS: return "opening the router namespace";
	case TUNFWD_SETNS: return "entering the router namespace";
	case TUNFWD_PROC: return "preparing its process";
	case TUNFWD_TUN: return "creating a TUN device (/dev/net/tun, module tun)";
	default: return "allocating its queues";
	}
}

/* Reads the child's report: EOF means it is forwarding. */
static int tunfwd_read_report(int fd, char *err, size_t errlen)
{
	int report[2];
	ssize_t n;

	do
		n = read(fd, report, sizeof(report));
	while (n == -1 && errno == EINTR);
	if (n == 0)
		return 0;
	if (n != (ssize_t)sizeof(report))
		snprintf(err, errlen, "cannot start the lab's userspace bottleneck: its start-up "
			 "report was unreadable.");
	else
		snprintf(err, errlen, "cannot start the lab's userspace bottleneck: %s failed: %s.",
			 tunfwd_step_name(report[0]), strerror(report[1]));
	return -1;
}

static void tunfwd_reap(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) == -1) {
		if (errno != EINTR) {
			log_warn("cannot reap the lab's userspace bottleneck (pid %ld)", (long)pid);
			return;
		}
	}
}

struct tunfwd_stats *tunfwd_stats_map(void)
{
	uint64_t now = (uint64_t)clock_mono_ns();
	struct tunfwd_stats *st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (st == MAP_FAILED)
		return NULL;
	/* Anonymous pages come zeroed: only the logs' time 0 is set. */
	sojlog_init(&st->down.sojourns, now);
	sojlog_init(&st->up.sojourns, now);
	return st;
}

void tunfwd_stats_unmap(struct tunfwd_stats *st)
{
	if (st != NULL && munmap(st, sizeof(*st)) == -1)
		log_warn("cannot unmap the lab bottleneck's statistics");
}

void tunfwd_stats_counts(const struct tunfwd_dir_stats *d, struct bneck_counts *out)
{
	*out = (struct bneck_counts){
		.in = atomic_load_explicit(&d->in, memory_order_relaxed),
		.out = atomic_load_explicit(&d->out, memory_order_relaxed),
		.tail_drops = atomic_load_explicit(&d->tail_drops, memory_order_relaxed),
		.aqm_drops = atomic_load_explicit(&d->aqm_drops, memory_order_relaxed),
		.marks = atomic_load_explicit(&d->marks, memory_order_relaxed),
		.line_drops = atomic_load_explicit(&d->line_drops, memory_order_relaxed),
	};
}

pid_t tunfwd_start(const char *nspath, const struct tunfwd_config *cfg, struct tunfwd_stats *st,
		   char *err, size_t errlen)
{
	pid_t parent = getpid(), pid;
	int pipefd[2], rc;

	if (pipe2(pipefd, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "cannot start the lab's userspace bottleneck: pipe: %s.",
			 strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid == -1) {
		snprintf(err, errlen, "cannot start the lab's userspace bottleneck: fork: %s.",
			 strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	if (pid == 0) {
		close(pipefd[0]);
		tunfwd_child(nspath, cfg, st, pipefd[1], parent);
	}
	close(pipefd[1]);
	rc = tunfwd_read_report(pipefd[0], err, errlen);
	close(pipefd[0]);
	if (rc == -1) {
		tunfwd_reap(pid);
		return -1;
	}
	return pid;
}

void tunfwd_stop(pid_t pid)
{
	int64_t deadline = clock_mono_ns() + TUNFWD_STOP_NS;
	struct timespec pause = { 0, 10 * NS_PER_MS };
	int status;

	if (pid <= 0)
		return;
	if (kill(pid, SIGTERM) == -1 && errno != ESRCH)
		log_warn("cannot stop the lab's userspace bottleneck (pid %ld)", (long)pid);
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid || (r == -1 && errno != EINTR))
			return;
		if (clock_mono_ns() >= deadline)
			break;
		(void)nanosleep(&pause, NULL);
	}
	log_warnx("the lab's userspace bottleneck did not stop within 2 s of SIGTERM; killing it");
	if (kill(pid, SIGKILL) == -1 && errno != ESRCH)
		log_warn("cannot kill the lab's userspace bottleneck (pid %ld)", (long)pid);
	tunfwd_reap(pid);
}

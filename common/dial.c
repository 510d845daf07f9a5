/* dial: RFC 8305 connection racing (see dial.h). */
#include "common/dial.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/sock.h"

/* The first unused address of family fam (0: any), or -1. */
static int dial_next_of(const struct sockaddr_storage *sa, const int *used, int n, int fam)
{
	for (int i = 0; i < n; i++)
		if (!used[i] && (fam == 0 || sa[i].ss_family == fam))
			return i;
	return -1;
}

void dial_interleave(struct sockaddr_storage *sa, socklen_t *len, int n)
{
	struct sockaddr_storage out[DIAL_MAX];
	socklen_t outlen[DIAL_MAX];
	int used[DIAL_MAX] = { 0 }, fam = n > 0 ? sa[0].ss_family : 0;

	if (n > DIAL_MAX)
		n = DIAL_MAX;
	for (int k = 0; k < n; k++) {
		int i = dial_next_of(sa, used, n, fam);

		if (i < 0) /* that family is exhausted: the rest keep their order */
			i = dial_next_of(sa, used, n, 0);
		used[i] = 1;
		out[k] = sa[i];
		outlen[k] = len[i];
		fam = sa[i].ss_family == AF_INET6 ? AF_INET : AF_INET6;
	}
	memcpy(sa, out, sizeof(out[0]) * (size_t)n);
	memcpy(len, outlen, sizeof(outlen[0]) * (size_t)n);
}

struct attempt {
	int fd;
	int idx;
	int64_t deadline;
};

/* Records one failed attempt: the earlier failure goes to the log, the latest stays in err. */
static void dial_failed(const struct sockaddr_storage *sa, int e, const char *why, char *err,
			size_t errlen)
{
	char addr[SOCK_ADDRSTRLEN];

	if (err[0] != '\0')
		log_info("%s; trying the next address", err);
	sock_addr_str((const struct sockaddr *)sa, addr, sizeof(addr));
	snprintf(err, errlen, "cannot connect to %s: %s", addr, why ? why : strerror(e));
}

/* Starts attempt idx: adds it to the pending set, or records its immediate failure. */
static void dial_start(const struct sockaddr_storage *sa, const socklen_t *len, int idx,
		       const struct sockaddr_storage *local, int timeout_ms, struct attempt *p,
		       int *np, char *err, size_t errlen)
{
	int fd = sock_connect_start_from(&sa[idx], len[idx], local);

	if (fd < 0) {
		dial_failed(&sa[idx], errno, NULL, err, errlen);
		return;
	}
	p[*np].fd = fd;
	p[*np].idx = idx;
	p[*np].deadline = clock_mono_ns() + (int64_t)timeout_ms * NS_PER_MS;
	(*np)++;
}

static void dial_drop(struct attempt *p, int *np, int i)
{
	close(p[i].fd);
	p[i] = p[--*np];
}

/* The poll timeout in ms until the next event: the next start or the earliest deadline. */
static int dial_wait_ms(const struct attempt *p, int np, int64_t next_start, int more)
{
	int64_t now = clock_mono_ns(), until = more ? next_start : INT64_MAX;

	for (int i = 0; i < np; i++)
		if (p[i].deadline < until)
			until = p[i].deadline;
	if (until <= now)
		return 0;
	return (int)((until - now + NS_PER_MS - 1) / NS_PER_MS);
}

/* Checks the pending attempts after poll: returns the index in p of a connected one, or -1;
 * failed and expired ones are closed and removed. */
static int dial_reap(const struct sockaddr_storage *sa, struct attempt *p, int *np,
		     const struct pollfd *pfd, int timeout_ms, char *err, size_t errlen)
{
	int64_t now = clock_mono_ns();
	char why[48];

	for (int i = *np - 1; i >= 0; i--) {
		if (pfd[i].revents != 0) {
			if (sock_connect_result(p[i].fd) == 0)
				return i;
			dial_failed(&sa[p[i].idx], errno, NULL, err, errlen);
			dial_drop(p, np, i);
		} else if (now >= p[i].deadline) {
			snprintf(why, sizeof(why), "timed out after %d ms", timeout_ms);
			dial_failed(&sa[p[i].idx], 0, why, err, errlen);
			dial_drop(p, np, i);
		}
	}
	return -1;
}

int dial_race(const struct sockaddr_storage *sa, const socklen_t *len, int n,
	      const struct sockaddr_storage *local, int stagger_ms, int timeout_ms, int *won,
	      char *err, size_t errlen)
{
	struct attempt p[DIAL_MAX];
	struct pollfd pfd[DIAL_MAX];
	int np = 0, next = 0;
	int64_t next_start = clock_mono_ns();

	err[0] = '\0';
	if (n > DIAL_MAX)
		n = DIAL_MAX;
	while (next < n || np > 0) {
		int i, rc;

		/* The next attempt: when its turn has come, or at once when nothing is pending. */
		if (next < n && (np == 0 || clock_mono_ns() >= next_start)) {
			dial_start(sa, len, next++, local, timeout_ms, p, &np, err, errlen);
			next_start = clock_mono_ns() + (int64_t)stagger_ms * NS_PER_MS;
			continue;
		}
		for (i = 0; i < np; i++)
			pfd[i] = (struct pollfd){ .fd = p[i].fd, .events = POLLOUT };
		rc = poll(pfd, (nfds_t)np, dial_wait_ms(p, np, next_start, next < n));
		if (rc < 0 && errno != EINTR) {
			snprintf(err, errlen, "poll: %s", strerror(errno));
			break;
		}
		if (rc < 0)
			continue;
		i = dial_reap(sa, p, &np, pfd, timeout_ms, err, errlen);
		if (i >= 0) {
			int fd = p[i].fd;

			*won = p[i].idx;
			p[i] = p[--np];
			while (np > 0)
				dial_drop(p, &np, np - 1);
			return fd;
		}
	}
	while (np > 0)
		dial_drop(p, &np, np - 1);
	return -1;
}

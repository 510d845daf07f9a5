/* dropuser: -Z's checks and switch on top of common/setuser.c. */
#include "client/run/dropuser.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/log.h"
#include "common/setuser.h"

#define DROPUSER_ALLOWED_CC "/proc/sys/net/ipv4/tcp_allowed_congestion_control"
#define DROPUSER_SWITCH_FAILED 255 /* the check child's exit code when it could not switch */

/* 1: the switch applies (root, and user is someone else than uid 0), with *uid and *gid;
 * 0: nothing to do; -1 with err (no such user, or the lookup failed). */
static int dropuser_target(const char *user, uid_t *uid, gid_t *gid, char *err, size_t errlen)
{
	int found;

	if (user == NULL || geteuid() != 0)
		return 0;
	found = setuser_lookup(user, uid, gid);
	if (found <= 0) {
		snprintf(err, errlen, "cannot run as user \"%s\" (-Z): %s", user,
			 found < 0 ? strerror(errno) : "no such user");
		return -1;
	}
	return *uid != 0;
}

/* Whether the current credentials can write out: a new file in its directory, or (append) the
 * existing file itself. */
static int dropuser_can_write(const struct dropuser_out *out)
{
	char dir[4096];
	const char *slash = strrchr(out->path, '/');

	if (out->append && access(out->path, F_OK) == 0)
		return access(out->path, W_OK) == 0;
	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == out->path ? 1 : (int)(slash - out->path),
			 out->path);
	return access(dir, W_OK | X_OK) == 0;
}

int dropuser_check(const char *user, const struct dropuser_out *outs, size_t n, char *err,
		   size_t errlen)
{
	uid_t uid;
	gid_t gid;
	int status, rc = dropuser_target(user, &uid, &gid, err, errlen);
	pid_t pid;

	if (rc <= 0)
		return rc;
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "cannot start a process: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		char why[256];

		if (setuser_switch(user, uid, gid, 0, why, sizeof(why)) < 0)
			_exit(DROPUSER_SWITCH_FAILED);
		for (size_t i = 0; i < n && i < DROPUSER_SWITCH_FAILED - 1; i++)
			if (!dropuser_can_write(&outs[i]))
				_exit((int)i + 1);
		_exit(0);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			snprintf(err, errlen, "cannot wait for a process: %s", strerror(errno));
			return -1;
		}
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) != DROPUSER_SWITCH_FAILED &&
	    (size_t)WEXITSTATUS(status) <= n)
		snprintf(err, errlen,
			 "user %s (-Z) cannot write %s: give a path it can write, or -Z with "
			 "another user (-Z root keeps root)", user, outs[WEXITSTATUS(status) - 1].path);
	else
		snprintf(err, errlen, "cannot switch to user \"%s\" (-Z)", user);
	return -1;
}

/* Whether setting cc on a socket needs CAP_NET_ADMIN: it is not in the kernel's list for
 * everyone (which holds the default). Unreadable list: assume it does. */
static int dropuser_cc_needs_admin(const char *cc)
{
	char buf[512];
	int fd = open(DROPUSER_ALLOWED_CC, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (cc == NULL || cc[0] == '\0')
		return 0;
	if (fd < 0)
		return 1;
	n = fileio_read_bounded(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return 1;
	buf[n] = '\0';
	for (char *save = NULL, *w = strtok_r(buf, " \t\n", &save); w;
	     w = strtok_r(NULL, " \t\n", &save))
		if (strcmp(w, cc) == 0)
			return 0;
	return 1;
}

int dropuser_apply(const char *user, const char *cc, char *err, size_t errlen)
{
	uid_t uid;
	gid_t gid;
	int rc = dropuser_target(user, &uid, &gid, err, errlen);
	uint64_t keep;

	if (rc < 0)
		return -1;
	if (rc == 0) {
		if (user && geteuid() == 0)
			log_info("-Z %s: keeps running as root", user);
		return 0;
	}
	keep = dropuser_cc_needs_admin(cc) ? SETUSER_CAP(CAP_NET_ADMIN) : 0;
	if (setuser_switch(user, uid, gid, keep, err, errlen) < 0 ||
	    setuser_no_new_privs(err, errlen) < 0)
		return -1;
	if (keep)
		log_info("running as user %s (uid %u, gid %u); the load thread keeps CAP_NET_ADMIN "
			 "to set %s, which %s does not list", user, (unsigned)uid, (unsigned)gid, cc,
			 DROPUSER_ALLOWED_CC);
	else
		log_info("running as user %s (uid %u, gid %u) without capabilities", user,
			 (unsigned)uid, (unsigned)gid);
	return 0;
}

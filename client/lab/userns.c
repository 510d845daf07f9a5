/* userns: an unprivileged lab inside a user, network and mount namespace of its own. */
#include "client/lab/userns.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/log.h"

#define USERNS_NETNS_DIR "/run/netns" /* iproute2's, fixed at its build */

/* Writes text to /proc/self/FILE: the uid and gid maps, setgroups. 0 or -1 with errno. */
static int userns_write(const char *file, const char *text)
{
	char path[64];
	int fd, rc, e;

	snprintf(path, sizeof(path), "/proc/self/%s", file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = fileio_write_all(fd, text, strlen(text));
	e = errno;
	if (close(fd) < 0 && rc == 0)
		return -1;
	errno = e;
	return rc;
}

/* Root here is our own uid and gid outside (one id each, no other groups: an unprivileged
 * process may map only itself, and only after giving up setgroups). */
static int userns_map(uid_t uid, gid_t gid, char *err, size_t errlen)
{
	char line[64];

	snprintf(line, sizeof(line), "0 %lu 1\n", (unsigned long)uid);
	if (userns_write("uid_map", line) < 0)
		goto fail;
	if (userns_write("setgroups", "deny\n") < 0)
		goto fail;
	snprintf(line, sizeof(line), "0 %lu 1\n", (unsigned long)gid);
	if (userns_write("gid_map", line) < 0)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "bloatmeter lab without root: cannot map this user into its user "
		 "namespace (%s); run it with sudo.", strerror(errno));
	return -1;
}

/* A private, empty /run/netns for `ip netns add` (it bind-mounts each namespace there). When
 * the host has no /run/netns, a tmpfs on /run itself, which only the lab's processes see. */
static int userns_netns_dir(char *err, size_t errlen)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		goto fail;
	if (mount("bm-netns", USERNS_NETNS_DIR, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "mode=0755") == 0)
		return 0;
	if (errno != ENOENT ||
	    mount("bm-run", "/run", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755") < 0 ||
	    mkdir(USERNS_NETNS_DIR, 0755) < 0)
		goto fail;
	return 0;
fail:
	snprintf(err, errlen, "bloatmeter lab without root: cannot mount a private %s (%s); run it "
		 "with sudo.", USERNS_NETNS_DIR, strerror(errno));
	return -1;
}

int lab_userns_enter(char *err, size_t errlen)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();

	if (uid == 0)
		return 0;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS) < 0) {
		/* EPERM: kernel.unprivileged_userns_clone = 0 or an LSM's restriction; ENOSPC:
		 * user.max_user_namespaces = 0; EINVAL: threads already run (a bug of ours). */
		snprintf(err, errlen, "bloatmeter lab needs root here: this system does not let an "
			 "unprivileged user create a user namespace (%s), in which the lab would own "
			 "its network namespaces; run it with sudo.", strerror(errno));
		return -1;
	}
	if (userns_map(uid, gid, err, errlen) < 0 || userns_netns_dir(err, errlen) < 0)
		return -1;
	log_info("lab: running unprivileged, as root of a user namespace of its own (uid %lu)",
		 (unsigned long)uid);
	return 0;
}

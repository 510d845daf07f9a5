/* privdrop: the switch from root to an unprivileged user after binding (groups, gid, uid),
 * the proof that root cannot come back, clearing the capability sets and no_new_privs.
 *
 * Threads: at the syscall level uids, gids, capabilities and no_new_privs belong to one
 * thread. glibc's setuid/setgid/setgroups wrappers apply a change to every thread (nptl's
 * __nptl_setxid signals each one with SIGSETXID so it repeats the syscall on itself), but the
 * raw capset and prctl calls used here do not, so privdrop_apply runs before the reflector and
 * DNS threads exist; they inherit the reduced state. */
#include "server/privdrop.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/log.h"

enum privdrop_action privdrop_decide(int is_root, const char *user, int default_exists,
				     int allow_root, const char **name)
{
	*name = NULL;
	if (!is_root)
		return PRIVDROP_KEEP;
	if (user[0] != '\0') {
		*name = user;
		return PRIVDROP_SWITCH;
	}
	if (default_exists) {
		*name = PRIVDROP_DEFAULT_USER;
		return PRIVDROP_SWITCH;
	}
	return allow_root ? PRIVDROP_ROOT : PRIVDROP_REFUSE;
}

/* Looks name up: 1 found (uid, gid set), 0 no such user, -1 the lookup failed (errno). */
static int privdrop_lookup(const char *name, uid_t *uid, gid_t *gid)
{
	struct passwd pw, *res = NULL;
	char buf[16384];
	int rc = getpwnam_r(name, &pw, buf, sizeof(buf), &res);

	if (rc != 0) {
		errno = rc;
		return -1;
	}
	if (res == NULL)
		return 0;
	*uid = pw.pw_uid;
	*gid = pw.pw_gid;
	return 1;
}

int privdrop_prepare(const char *user, int allow_root, struct privdrop *pd, char *err,
		     size_t errlen)
{
	uid_t uid = 0;
	gid_t gid = 0;
	const char *name;
	int found = 0, is_root = geteuid() == 0;

	memset(pd, 0, sizeof(*pd));
	if (is_root && user[0] == '\0') {
		found = privdrop_lookup(PRIVDROP_DEFAULT_USER, &uid, &gid);
		if (found < 0) {
			snprintf(err, errlen, "cannot look up user \"%s\": %s",
				 PRIVDROP_DEFAULT_USER, strerror(errno));
			return -1;
		}
	}
	pd->action = privdrop_decide(is_root, user, found, allow_root, &name);
	if (!is_root && user[0] != '\0')
		log_info("user \"%s\" not applied: not started as root", user);
	if (pd->action == PRIVDROP_REFUSE) {
		snprintf(err, errlen,
			 "started as root with no user to switch to: set \"user = NAME\" "
			 "(or create the system user \"%s\"), or \"allow-root = yes\" to run as root",
			 PRIVDROP_DEFAULT_USER);
		return -1;
	}
	if (pd->action != PRIVDROP_SWITCH)
		return 0;
	snprintf(pd->user, sizeof(pd->user), "%s", name);
	found = privdrop_lookup(pd->user, &pd->uid, &pd->gid);
	if (found <= 0) {
		snprintf(err, errlen, "cannot run as user \"%s\": %s", pd->user,
			 found < 0 ? strerror(errno) : "no such user");
		return -1;
	}
	if (pd->uid == 0) {
		if (!allow_root) {
			snprintf(err, errlen,
				 "user \"%s\" is uid 0: choose an unprivileged user, or set "
				 "\"allow-root = yes\" to run as root", pd->user);
			return -1;
		}
		pd->action = PRIVDROP_ROOT;
	}
	return 0;
}

/* Supplementary groups, then gid, then uid: the order in which each step still has the
 * privilege the next needs. */
static int privdrop_switch(const struct privdrop *pd, char *err, size_t errlen)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	if (initgroups(pd->user, pd->gid) < 0) {
		snprintf(err, errlen, "cannot set the groups of user \"%s\": %s", pd->user,
			 strerror(errno));
		return -1;
	}
	if (setgid(pd->gid) < 0 || setuid(pd->uid) < 0) {
		snprintf(err, errlen, "cannot switch to user \"%s\" (uid %u, gid %u): %s",
			 pd->user, (unsigned)pd->uid, (unsigned)pd->gid, strerror(errno));
		return -1;
	}
	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0 || ru != pd->uid ||
	    eu != pd->uid || su != pd->uid || rg != pd->gid || eg != pd->gid || sg != pd->gid) {
		snprintf(err, errlen, "switching to user \"%s\" left another uid or gid in place",
			 pd->user);
		return -1;
	}
	/* The proof: with every uid changed and the capabilities gone, root stays out of reach. */
	if (setuid(0) == 0 || seteuid(0) == 0 || setgid(0) == 0) {
		snprintf(err, errlen, "root could be regained after switching to user \"%s\"",
			 pd->user);
		return -1;
	}
	return 0;
}

/* Empties the permitted, effective and inheritable sets (a uid change from root already
 * empties the first two unless SECBIT_KEEP_CAPS; a non-root start may carry ambient or
 * inherited ones) and reads them back. The raw syscalls: libcap is not a dependency. */
static int privdrop_clear_caps(char *err, size_t errlen)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capset, &hdr, data) < 0 || syscall(SYS_capget, &hdr, data) < 0) {
		snprintf(err, errlen, "cannot clear the capabilities: %s", strerror(errno));
		return -1;
	}
	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++) {
		if (data[i].permitted || data[i].effective || data[i].inheritable) {
			snprintf(err, errlen, "capabilities are still held after clearing them");
			return -1;
		}
	}
	return 0;
}

int privdrop_apply(const struct privdrop *pd, char *err, size_t errlen)
{
	if (pd->action == PRIVDROP_SWITCH && privdrop_switch(pd, err, errlen) < 0)
		return -1;
	if (pd->action != PRIVDROP_ROOT && privdrop_clear_caps(err, errlen) < 0)
		return -1;
	/* Nothing executed from here on (there is nothing) could gain a privilege either. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
		snprintf(err, errlen, "cannot set no_new_privs: %s", strerror(errno));
		return -1;
	}
	switch (pd->action) {
	case PRIVDROP_SWITCH:
		log_info("running as user %s (uid %u, gid %u) without capabilities", pd->user,
			 (unsigned)pd->uid, (unsigned)pd->gid);
		break;
	case PRIVDROP_ROOT:
		log_warnx("running as root (allow-root = yes): a flaw in the daemon would be a flaw "
			  "with root's rights; set \"user\" to drop them after binding");
		break;
	default:
		log_info("running as uid %u without capabilities", (unsigned)getuid());
		break;
	}
	return 0;
}

/* setuser: the user switch, the capability sets and no_new_privs, by raw syscalls for the
 * capabilities (libcap is not a dependency). */
#include "common/setuser.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int setuser_lookup(const char *name, uid_t *uid, gid_t *gid)
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

int setuser_caps(uint64_t keep, char *err, size_t errlen)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	memset(data, 0, sizeof(data));
	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		data[i].permitted = data[i].effective = (uint32_t)(keep >> (32 * i));
	if (syscall(SYS_capset, &hdr, data) < 0 || syscall(SYS_capget, &hdr, data) < 0) {
		snprintf(err, errlen, "cannot set the capabilities: %s", strerror(errno));
		return -1;
	}
	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++) {
		uint32_t want = (uint32_t)(keep >> (32 * i));

		if (data[i].permitted != want || data[i].effective != want || data[i].inheritable) {
			snprintf(err, errlen, "the capabilities are not the ones set");
			return -1;
		}
	}
	return 0;
}

/* Every uid and gid is the user's, and with the capability to change them gone root is out
 * of reach: setuid(0) must fail. */
static int setuser_verify(const char *user, uid_t uid, gid_t gid, char *err, size_t errlen)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0 || ru != uid ||
	    eu != uid || su != uid || rg != gid || eg != gid || sg != gid) {
		snprintf(err, errlen, "switching to user \"%s\" left another uid or gid in place",
			 user);
		return -1;
	}
	if (setuid(0) == 0 || seteuid(0) == 0 || setgid(0) == 0) {
		snprintf(err, errlen, "root could be regained after switching to user \"%s\"", user);
		return -1;
	}
	return 0;
}

/* Supplementary groups, then gid, then uid: the order in which each step still has the
 * privilege the next needs. With keep, PR_SET_KEEPCAPS lets this thread carry its permitted
 * set across the uid change; it is then cut down to keep. */
int setuser_switch(const char *user, uid_t uid, gid_t gid, uint64_t keep, char *err,
		   size_t errlen)
{
	if (initgroups(user, gid) < 0) {
		snprintf(err, errlen, "cannot set the groups of user \"%s\": %s", user,
			 strerror(errno));
		return -1;
	}
	if (keep && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0) {
		snprintf(err, errlen, "cannot keep capabilities: %s", strerror(errno));
		return -1;
	}
	if (setgid(gid) < 0 || setuid(uid) < 0) {
		snprintf(err, errlen, "cannot switch to user \"%s\" (uid %u, gid %u): %s", user,
			 (unsigned)uid, (unsigned)gid, strerror(errno));
		return -1;
	}
	if (keep && prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0) {
		snprintf(err, errlen, "cannot stop keeping capabilities: %s", strerror(errno));
		return -1;
	}
	if (keep && setuser_caps(keep, err, errlen) < 0)
		return -1;
	return setuser_verify(user, uid, gid, err, errlen);
}

int setuser_no_new_privs(char *err, size_t errlen)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
		snprintf(err, errlen, "cannot set no_new_privs: %s", strerror(errno));
		return -1;
	}
	return 0;
}

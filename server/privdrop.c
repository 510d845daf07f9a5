/* privdrop: the daemon's decision whom to run as after binding; the switch itself (groups,
 * gid, uid, the proof that root cannot come back, the capability sets, no_new_privs) is
 * common/setuser.c, shared with the client.
 *
 * Threads: at the syscall level uids, gids, capabilities and no_new_privs belong to one
 * thread. glibc's setuid/setgid/setgroups wrappers apply a change to every thread (nptl's
 * __nptl_setxid signals each one with SIGSETXID so it repeats the syscall on itself), but the
 * raw capset and prctl calls used here do not, so privdrop_apply runs before the reflector and
 * DNS threads exist; they inherit the reduced state. */
#include "server/privdrop.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/setuser.h"

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

int privdrop_prepare(const char *user, int allow_root, struct privdrop *pd, char *err,
		     size_t errlen)
{
	uid_t uid = 0;
	gid_t gid = 0;
	const char *name;
	int found = 0, is_root = geteuid() == 0;

	memset(pd, 0, sizeof(*pd));
	if (is_root && user[0] == '\0') {
		found = setuser_lookup(PRIVDROP_DEFAULT_USER, &uid, &gid);
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
	found = setuser_lookup(pd->user, &pd->uid, &pd->gid);
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

int privdrop_apply(const struct privdrop *pd, char *err, size_t errlen)
{
	if (pd->action == PRIVDROP_SWITCH &&
	    setuser_switch(pd->user, pd->uid, pd->gid, 0, err, errlen) < 0)
		return -1;
	/* A uid change from root empties the permitted and effective sets; a non-root start may
	 * carry ambient or inherited ones: clear them all. */
	if (pd->action != PRIVDROP_ROOT && setuser_caps(0, err, errlen) < 0)
		return -1;
	/* Nothing executed from here on (there is nothing) could gain a privilege either. */
	if (setuser_no_new_privs(err, errlen) < 0)
		return -1;
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

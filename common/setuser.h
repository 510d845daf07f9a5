/* setuser: the irreversible switch from root to an unprivileged user, shared by the daemon
 * (server/privdrop.c, after binding) and the client (client/run/dropuser.c, once its sockets
 * and capture are open): looking the user up, switching groups, gid and uid, trimming the
 * capability sets to a chosen few, proving root cannot come back, no_new_privs.
 *
 * Threads: glibc's setgroups/setgid/setuid apply to every thread of the process (nptl's
 * setxid signals each one to repeat the syscall), so a switch made while threads run moves all
 * of them, and each loses every capability with its last root uid. The raw capset and prctl
 * calls here act on the calling thread only: a capability kept (keep mask) stays with that
 * thread alone. Layer: common; callers: server/, client/run/. */
#ifndef BM_SETUSER_H
#define BM_SETUSER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A capability number (linux/capability.h CAP_*) as a bit of a keep mask. */
#define SETUSER_CAP(n) ((uint64_t)1 << (n))

/* Looks name up: 1 found (uid, gid: its primary group), 0 no such user, -1 the lookup failed
 * (errno). */
int setuser_lookup(const char *name, uid_t *uid, gid_t *gid);

/* Switches to user (uid, gid, and the user's supplementary groups): every thread. The calling
 * thread keeps the capabilities in keep (permitted and effective; 0: none), the others keep
 * none. Then checks every uid and gid changed and that root cannot be regained. 0, or -1 with
 * one sentence in err: the caller must exit, the process may be half-switched. */
int setuser_switch(const char *user, uid_t uid, gid_t gid, uint64_t keep, char *err,
		   size_t errlen);

/* Sets the calling thread's permitted and effective sets to keep (of what it holds) and
 * empties its inheritable set, then reads them back. 0, or -1 with one sentence in err. */
int setuser_caps(uint64_t keep, char *err, size_t errlen);

/* The calling thread (and threads it starts later) can gain no privilege by exec. 0, or -1
 * with one sentence in err. */
int setuser_no_new_privs(char *err, size_t errlen);

#endif

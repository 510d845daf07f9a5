/* privdrop: who bloatmeterd runs as once its sockets are bound. Started as root it switches
 * to an unprivileged user (the configured one, else PRIVDROP_DEFAULT_USER if that account
 * exists) or stays root only with allow-root; in every case it then holds no capability and
 * can gain none (no_new_privs). Nothing the daemon does after binding needs a privilege. */
#ifndef BM_PRIVDROP_H
#define BM_PRIVDROP_H

#include <stddef.h>
#include <sys/types.h>

#define PRIVDROP_DEFAULT_USER "bloatmeter"

enum privdrop_action {
	PRIVDROP_KEEP,   /* not started as root: keep the identity, shed any capability */
	PRIVDROP_SWITCH, /* root: switch to the user */
	PRIVDROP_ROOT,   /* root and allow-root = yes without a user: stay root */
	PRIVDROP_REFUSE, /* root with no user to switch to: do not start */
};

/* The decision alone (pure): is_root, the configured user ("" = none), whether the account
 * PRIVDROP_DEFAULT_USER exists, allow-root. *name is the user to switch to (SWITCH only). */
enum privdrop_action privdrop_decide(int is_root, const char *user, int default_exists,
				     int allow_root, const char **name);

/* A decided and looked-up plan; filled by privdrop_prepare. */
struct privdrop {
	enum privdrop_action action;
	char user[64];
	uid_t uid;
	gid_t gid;
};

/* Before any socket is bound: decides for the running process and looks the user up (the
 * account database may be unreadable later). 0, or -1 with one sentence in err (refusal,
 * unknown user, a user that is uid 0 without allow-root). */
int privdrop_prepare(const char *user, int allow_root, struct privdrop *pd, char *err,
		     size_t errlen);

/* After every socket is bound and BEFORE any thread is started: no_new_privs and the
 * capability sets are per thread (threads started later inherit them). Switches groups,
 * gid and uid (SWITCH), proves root cannot be regained, clears every capability (not for
 * ROOT) and sets no_new_privs. 0, or -1 with one sentence in err: the caller must then
 * exit, the process may be half-switched. */
int privdrop_apply(const struct privdrop *pd, char *err, size_t errlen);

#endif

/* dropuser: the client's -Z. A client started as root (for raw ICMP, the capture, a congestion
 * control the kernel does not allow everyone) runs as an unprivileged user once its probe
 * sockets and capture are open, as tcpdump -Z does; the uid-0 user (-Z root) keeps root. The
 * load thread keeps CAP_NET_ADMIN alone, and only when --cc names an algorithm outside
 * tcp_allowed_congestion_control (each phase opens new load flows and sets it on them); every
 * other thread holds no capability. Output files are written after the run, as that user:
 * dropuser_check finds out before anything is measured whether it can. Not in `bloatmeter
 * lab`, whose namespaces need root to the end. Layer: client/run; called by client/cli.c
 * (dropuser_check) and client/run/measure.c (dropuser_apply). */
#ifndef BM_DROPUSER_H
#define BM_DROPUSER_H

#include <stddef.h>

/* A file the run will write as the user: replaced (written beside it, then renamed: the
 * directory must take new files) or appended to (--log: the file itself must be writable,
 * or the directory when it does not exist yet). */
struct dropuser_out {
	const char *path;
	int append;
};

/* Before the run, with no thread started: when root and user (NULL: no drop) is not uid 0,
 * whether user exists and can write each of the n files, tried in a child process that
 * switches to user first. 0, or -1 with one sentence in err. */
int dropuser_check(const char *user, const struct dropuser_out *outs, size_t n, char *err,
		   size_t errlen);

/* Once the probe sockets and the capture are open, on the thread that runs the load: when
 * root and user (NULL: no drop) is not uid 0, switches every thread to user (its groups
 * too), keeps CAP_NET_ADMIN on this thread if cc needs it (see above), and sets
 * no_new_privs. 0 (also when nothing was to be done), or -1 with one sentence in err: the
 * run must end, the process may be half-switched. */
int dropuser_apply(const char *user, const char *cc, char *err, size_t errlen);

#endif

/* resultslog: results-log, the file that gets one JSON line per finished test (a CLI
 * session's or a browser's posted result; the same object as an /api/v1/tests element, see
 * docs/http.md), for log shippers (docs/fleet.md). It owns the file descriptor: opened with
 * O_APPEND (and O_NONBLOCK, so a FIFO reader that stalls costs a dropped line, never a
 * blocked event loop), one write(2) per line, reopened on SIGHUP for logrotate. A failing
 * write is logged once until one succeeds again. Called only on the main thread (server.c
 * opens, reopens and closes it; server/testrecord.c writes). */
#ifndef BM_RESULTSLOG_H
#define BM_RESULTSLOG_H

#include <stddef.h>
#include <sys/types.h>

#include "server/testring.h"

/* A line is at most this long (PIPE_BUF on Linux: a write of it to a pipe is atomic). */
#define RESULTSLOG_LINE_MAX 4096

struct resultslog {
	int fd;          /* -1: not open */
	int failing;     /* the last write failed and was logged: stay quiet until one works */
	char path[256];
};

/* Opens path for appending (created 0640 if missing). 0, or -1 with one sentence in err and
 * *l closed. */
int resultslog_open(struct resultslog *l, const char *path, char *err, size_t errlen);
/* Gives a regular file to uid:gid (the user a root start switches to), so that the daemon
 * can reopen it after the switch and logrotate's "create" makes the next one alike. 0, or
 * -1 with one sentence in err. */
int resultslog_chown(struct resultslog *l, uid_t uid, gid_t gid, char *err, size_t errlen);
/* Opens path again (the same one or a new one, after logrotate moved the file away): on
 * success the old descriptor is closed; on failure it is kept and an error logged. */
void resultslog_reopen(struct resultslog *l, const char *path);
/* Formats s as one line into buf (with its newline): its length, or -1 if it does not fit
 * or memory ran out. Pure; the unit test calls it. */
int resultslog_format(const struct test_summary *s, char *buf, size_t len);
/* Appends s's line; nothing if the log is not open. */
void resultslog_write(struct resultslog *l, const struct test_summary *s);
void resultslog_close(struct resultslog *l);

#endif

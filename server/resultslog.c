/* resultslog: the results-log file — open, reopen, one line per finished test, close. */
#include "server/resultslog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "common/log.h"

/* Opens path: -1 with errno on failure. Not a terminal (O_NOCTTY), not inherited. */
static int resultslog_open_fd(const char *path)
{
	return open(path, O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0640);
}

int resultslog_open(struct resultslog *l, const char *path, char *err, size_t errlen)
{
	l->fd = -1;
	l->failing = 0;
	snprintf(l->path, sizeof(l->path), "%s", path);
	l->fd = resultslog_open_fd(path);
	if (l->fd < 0) {
		snprintf(err, errlen, "results-log %s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int resultslog_chown(struct resultslog *l, uid_t uid, gid_t gid, char *err, size_t errlen)
{
	struct stat st;

	if (fstat(l->fd, &st) < 0 || (S_ISREG(st.st_mode) && fchown(l->fd, uid, gid) < 0)) {
		snprintf(err, errlen, "results-log %s: cannot give it to the daemon's user: %s",
			 l->path, strerror(errno));
		return -1;
	}
	return 0;
}

void resultslog_reopen(struct resultslog *l, const char *path)
{
	int fd = resultslog_open_fd(path);

	if (fd < 0) {
		log_error("results-log %s: cannot reopen: %s; still writing to the old file", path,
			  strerror(errno));
		return;
	}
	if (l->fd >= 0)
		close(l->fd);
	l->fd = fd;
	l->failing = 0;
	snprintf(l->path, sizeof(l->path), "%s", path);
	log_info("results-log %s opened", path);
}

int resultslog_format(const struct test_summary *s, char *buf, size_t len)
{
	json_object *o = testring_summary_json(s);
	const char *txt;
	int n;

	if (o == NULL)
		return -1;
	txt = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						       JSON_C_TO_STRING_NOSLASHESCAPE);
	n = txt ? snprintf(buf, len, "%s\n", txt) : -1;
	json_object_put(o);
	return n < 0 || (size_t)n >= len ? -1 : n;
}

/* Logs a failed line once; the next success says so. */
static void resultslog_failed(struct resultslog *l, const char *why)
{
	if (!l->failing)
		log_error("results-log %s: %s; test results are not logged until it works again",
			  l->path, why);
	l->failing = 1;
}

void resultslog_write(struct resultslog *l, const struct test_summary *s)
{
	char line[RESULTSLOG_LINE_MAX];
	int n;
	ssize_t w;

	if (l->fd < 0)
		return;
	n = resultslog_format(s, line, sizeof(line));
	if (n < 0) {
		resultslog_failed(l, "a result did not fit in a line");
		return;
	}
	/* One write: with O_APPEND the line lands whole at the end, even with other writers;
	 * to a pipe, a line under PIPE_BUF is all or nothing. */
	w = write(l->fd, line, (size_t)n);
	if (w == n) {
		if (l->failing)
			log_notice("results-log %s: writing again", l->path);
		l->failing = 0;
		return;
	}
	resultslog_failed(l, w < 0 ? strerror(errno) : "short write (disk full?)");
}

void resultslog_close(struct resultslog *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}

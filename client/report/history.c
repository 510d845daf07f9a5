/* history: --log FILE for scheduled runs. One run = one line, appended with a single write
 * under an exclusive lock and fsynced, so concurrent runs interleave whole lines and a run
 * killed mid-write can only tear its own line, never an earlier one. */
#include "client/report/history.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/report/json.h"
#include "common/fileio.h"
#include "common/log.h"

/* A history line: buf = "\n" + compact JSON + "\n". Writing from buf also ends a torn line
 * left by a killed run; writing from buf + 1 is the line alone. */
struct history_line {
	char *buf;
	size_t len; /* including both newlines */
};

/* o (consumed) without its per-probe samples, compact. 0, or -1 when out of memory. */
static int history_line_build(json_object *o, struct history_line *l)
{
	const char *s;
	size_t n = 0;

	l->buf = NULL;
	if (o == NULL)
		return -1;
	json_object_object_del(o, "samples");
	/* PLAIN escapes control characters inside strings, so the line holds no newline. */
	s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN |
						 JSON_C_TO_STRING_NOSLASHESCAPE, &n);
	if (s != NULL && (l->buf = malloc(n + 2)) != NULL) {
		l->buf[0] = '\n';
		memcpy(l->buf + 1, s, n);
		l->buf[n + 1] = '\n';
		l->len = n + 2;
	}
	json_object_put(o);
	return l->buf ? 0 : -1;
}

/* Opens path for appending; read access too when possible, for the torn-line check.
 * Sets *readable. fd or -1 with errno. */
static int history_open(const char *path, int *readable)
{
	int fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0666);

	*readable = fd >= 0;
	if (fd < 0 && errno == EACCES) /* a write-only file: append without the check */
		fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
	return fd;
}

/* Takes the exclusive lock, waiting for other runs; 0 or -1 with errno. */
static int history_lock(int fd)
{
	int rc;

	while ((rc = flock(fd, LOCK_EX)) < 0 && errno == EINTR)
		;
	return rc;
}

/* Sets *torn if the file is non-empty and its last byte is not a newline (a run was killed
 * mid-write). Call under the lock. 0 or -1 with errno. */
static int history_torn(int fd, off_t size, int *torn)
{
	ssize_t n;
	char c;

	*torn = 0;
	if (size <= 0)
		return 0;
	while ((n = pread(fd, &c, 1, size - 1)) < 0 && errno == EINTR)
		;
	if (n < 0)
		return -1;
	*torn = n == 1 && c != '\n';
	return 0;
}

static int history_append_json(json_object *o, const char *path);

int history_append(const struct test_result *r, const char *path)
{
	return history_append_json(report_json(r), path);
}

int history_append_failed(const struct test_result *r, const char *path)
{
	return history_append_json(report_json_failed(r), path);
}

/* Appends o (consumed) as one line. */
static int history_append_json(json_object *o, const char *path)
{
	struct history_line l;
	struct stat st;
	const char *what;
	int fd, readable, regular, torn = 0;

	if (history_line_build(o, &l) < 0) {
		log_error("cannot build the history line for %s: out of memory", path);
		return -1;
	}
	if ((fd = history_open(path, &readable)) < 0) {
		log_error("cannot open the history file %s: %s", path, strerror(errno));
		free(l.buf);
		return -1;
	}
	/* Regular files get the lock, the torn-line check and fsync; a pipe or a terminal
	 * (--log /dev/stdout) just gets the line. */
	what = "inspect";
	if (fstat(fd, &st) < 0)
		goto fail;
	regular = S_ISREG(st.st_mode);
	what = "lock";
	if (regular && history_lock(fd) < 0)
		goto fail;
	what = "read the end of";
	if (regular && readable) {
		/* the size again under the lock: another run may have appended meanwhile */
		if (fstat(fd, &st) < 0 || history_torn(fd, st.st_size, &torn) < 0)
			goto fail;
	}
	what = "append to";
	/* One write() for the whole line (fileio_write_all only loops on a short write). */
	if (fileio_write_all(fd, torn ? l.buf : l.buf + 1, torn ? l.len : l.len - 1) < 0)
		goto fail;
	what = "sync";
	if (regular && fsync(fd) < 0)
		goto fail;
	free(l.buf);
	if (close(fd) < 0) { /* also releases the lock */
		log_error("cannot close the history file %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
fail:
	log_error("cannot %s the history file %s: %s", what, path, strerror(errno));
	(void)close(fd);
	free(l.buf);
	return -1;
}

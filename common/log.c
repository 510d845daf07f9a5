/* log: prefixes lines with the program name, escapes non-printable bytes, keeps errno. */
#include "common/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *log_prog = "bloatmeter";
static enum log_level log_level = LOG_LVL_WARN;
static int log_journal; /* stderr is the journal's stream: priorities, no program name */

/* systemd sets JOURNAL_STREAM=DEV:INODE for the stream it connects to stderr; stderr counts as
 * the journal only while it is still that very file (not redirected by a shell). */
static int log_stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (js == NULL || sscanf(js, "%llu:%llu", &dev, &ino) != 2 ||
	    fstat(STDERR_FILENO, &st) < 0)
		return 0;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void log_init(const char *progname, enum log_level level)
{
	log_prog = progname;
	log_level = level;
	log_journal = log_stderr_is_journal();
}

enum log_level log_get_level(void)
{
	return log_level;
}

/* Formats, escapes control bytes (remote input may reach a log line) and writes one line. */
__attribute__((format(printf, 4, 0))) static void log_vemit(enum log_level lvl, const char *tag,
							   int errnum, const char *fmt, va_list ap)
{
	char msg[1024], out[2048];
	size_t o = 0;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	for (const unsigned char *p = (const unsigned char *)msg; *p && o + 5 < sizeof(out); p++) {
		if (*p >= 0x20 && *p != 0x7f)
			out[o++] = (char)*p;
		else
			o += (size_t)snprintf(out + o, sizeof(out) - o, "\\x%02x", *p);
	}
	out[o] = '\0';
	if (log_journal) /* sd-daemon(3): <3> err, <4> warning, <5> notice, <6> info, <7> debug */
		fprintf(stderr, "<%d>%s%s%s%s\n", 3 + (int)lvl, tag, out, errnum ? ": " : "",
			errnum ? strerror(errnum) : "");
	else
		fprintf(stderr, "%s: %s%s%s%s\n", log_prog, tag, out, errnum ? ": " : "",
			errnum ? strerror(errnum) : "");
}

#define LOG_BODY(lvl, tag, errnum)                                                                 \
	do {                                                                                       \
		int saved = errno;                                                                 \
		if (log_level >= (lvl)) {                                                          \
			va_list ap;                                                                \
			va_start(ap, fmt);                                                         \
			log_vemit(lvl, tag, errnum, fmt, ap);                                      \
			va_end(ap);                                                                \
		}                                                                                  \
		errno = saved;                                                                     \
	} while (0)

void log_warn(const char *fmt, ...)
{
	LOG_BODY(LOG_LVL_WARN, "warning: ", saved);
}

void log_warnx(const char *fmt, ...)
{
	LOG_BODY(LOG_LVL_WARN, "warning: ", 0);
}

void log_notice(const char *fmt, ...)
{
	LOG_BODY(LOG_LVL_NOTICE, "", 0);
}

void log_info(const char *fmt, ...)
{
	LOG_BODY(LOG_LVL_INFO, "", 0);
}

void log_debug(const char *fmt, ...)
{
	LOG_BODY(LOG_LVL_DEBUG, "debug: ", 0);
}

void log_error(const char *fmt, ...)
{
	LOG_BODY(LOG_LVL_ERROR, "error: ", 0);
}

void fatal(const char *fmt, ...)
{
	LOG_BODY(LOG_LVL_ERROR, "fatal: ", saved);
	exit(1);
}

void fatalx(const char *fmt, ...)
{
	LOG_BODY(LOG_LVL_ERROR, "fatal: ", 0);
	exit(1);
}

/* log: prefixes lines with the program name, escapes non-printable bytes, keeps errno. */
#include "common/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *log_prog = "bloatmeter";
static enum log_level log_level = LOG_LVL_WARN;

void log_init(const char *progname, enum log_level level)
{
	log_prog = progname;
	log_level = level;
}

enum log_level log_get_level(void)
{
	return log_level;
}

/* Formats, escapes control bytes (remote input may reach a log line) and writes one line. */
__attribute__((format(printf, 3, 0))) static void log_vemit(const char *tag, int errnum, const char *fmt, va_list ap)
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
	if (errnum)
		fprintf(stderr, "%s: %s%s: %s\n", log_prog, tag, out, strerror(errnum));
	else
		fprintf(stderr, "%s: %s%s\n", log_prog, tag, out);
}

#define LOG_BODY(lvl, tag, errnum)                                                                 \
	do {                                                                                       \
		int saved = errno;                                                                 \
		if (log_level >= (lvl)) {                                                          \
			va_list ap;                                                                \
			va_start(ap, fmt);                                                         \
			log_vemit(tag, errnum, fmt, ap);                                           \
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

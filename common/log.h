/* log: the one logging module; everything user- or operator-facing goes through it. Lines go
 * to stderr as "PROG: text"; when stderr is the systemd journal's stream (JOURNAL_STREAM), each
 * line carries its priority instead ("<N>text", sd-daemon(3)) and the journal names the
 * program. Any module may call it; log_init belongs to the mains. */
#ifndef BM_LOG_H
#define BM_LOG_H

/* From most to least important; a level shows the ones before it. NOTICE is what a daemon
 * says by default (its start and each test), INFO the details behind -v. */
enum log_level { LOG_LVL_ERROR = 0, LOG_LVL_WARN, LOG_LVL_NOTICE, LOG_LVL_INFO, LOG_LVL_DEBUG };

/* Sets the program name printed before each line and the most verbose level shown. */
void log_init(const char *progname, enum log_level level);
enum log_level log_get_level(void);

/* log_warn and fatal append strerror(errno); the *x variants do not. All keep errno. */
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A one-sentence error the user must see even with -q; does not exit. */
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

/* clientconf: bloatmeter's own configuration file — where it is looked for and the bounded
 * parser of its "key = value" lines (the one key so far: default-target, the test target
 * when the command line names none). Layer: client/model; caller: the command line. */
#ifndef BM_CLIENTCONF_H
#define BM_CLIENTCONF_H

#include <stddef.h>

#define CLIENTCONF_MAX_FILE (64 * 1024)
#define CLIENTCONF_PATH_MAX 4096
#define CLIENTCONF_VALUE_MAX 1024
#define CLIENTCONF_ERR_MAX 320

struct clientconf {
	char path[CLIENTCONF_PATH_MAX];            /* the file read ("" when none exists) */
	char default_target[CLIENTCONF_VALUE_MAX]; /* "" when the file does not set it */
	char source[CLIENTCONF_PATH_MAX + 32];     /* the caller's wording of where a target
						    * came from (it outlives the run) */
};

/* Parses the text of a file (not NUL-terminated). 0, or -1 with "LINE: why" in err: an
 * unknown key, a line without "=", an empty or over-long value, a key given twice. */
int clientconf_parse(struct clientconf *c, const char *text, size_t len, char *err,
		     size_t errlen);
/* The file to read: $BLOATMETER_CONFIG when set (it must exist), else the first that exists
 * of $XDG_CONFIG_HOME/bloatmeter/bloatmeter.conf (XDG_CONFIG_HOME defaulting to
 * ~/.config) and /etc/bloatmeter/bloatmeter.conf. Then reads and parses it. 0 (c->path ""
 * when there is none), or -1 with one sentence in err naming the file. */
int clientconf_load(struct clientconf *c, char *err, size_t errlen);

#endif

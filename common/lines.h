/* lines: walking a text (a configuration file or server list, not NUL-terminated) line by
 * line with 1-based line numbers for error messages. Pure: it only reads the text. What a
 * line means (comments, blanks) stays with each parser, whose rules differ. */
#ifndef BM_LINES_H
#define BM_LINES_H

#include <stddef.h>

struct lines {
	const char *text;
	size_t len, pos;
	int line;       /* the number of the line lines_next returned last; 0 before it */
};

void lines_init(struct lines *it, const char *text, size_t len);
/* The next line: 1 with *s and *n (its bytes, without the '\n') and it->line, or 0 at the
 * end of the text. A final '\n' ends the last line and starts none. */
int lines_next(struct lines *it, const char **s, size_t *n);

#endif

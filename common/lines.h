/* lines: walking a text (a configuration file, key file or server list, not NUL-terminated)
 * line by line with 1-based line numbers for error messages, and the comment and blank rules
 * that bloatmeterd.conf (server/srvconfig.c) and key files (common/auth.c) share. Pure: it
 * only reads the text. What a line means beyond that stays with each parser. */
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

/* A blank inside a line: space, tab, CR, VT or FF. */
int lines_blank(char c);
/* The length of the n bytes of a line at s without their comment, which starts at a '#' that
 * begins the line or follows a blank (so a '#' inside a value stays in it). */
size_t lines_uncomment(const char *s, size_t n);
/* How many blanks begin the n bytes at s. */
size_t lines_blanks(const char *s, size_t n);
/* How many non-blanks (a word) begin the n bytes at s. */
size_t lines_word(const char *s, size_t n);
/* The length of the n bytes at s without their trailing blanks. */
size_t lines_rtrim(const char *s, size_t n);

#endif

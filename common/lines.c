/* lines: splits a text at '\n' and numbers its lines; blanks and comments within one. */
#include "common/lines.h"

#include <string.h>

void lines_init(struct lines *it, const char *text, size_t len)
{
	it->text = text;
	it->len = len;
	it->pos = 0;
	it->line = 0;
}

int lines_next(struct lines *it, const char **s, size_t *n)
{
	const char *nl;

	if (it->pos >= it->len)
		return 0;
	*s = it->text + it->pos;
	nl = memchr(*s, '\n', it->len - it->pos);
	*n = nl ? (size_t)(nl - *s) : it->len - it->pos;
	it->pos += *n + (nl != NULL);
	it->line++;
	return 1;
}

int lines_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

size_t lines_uncomment(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '#' && (i == 0 || lines_blank(s[i - 1])))
			return i;
	return n;
}

size_t lines_blanks(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && lines_blank(s[i]))
		i++;
	return i;
}

size_t lines_word(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && !lines_blank(s[i]))
		i++;
	return i;
}

size_t lines_rtrim(const char *s, size_t n)
{
	while (n > 0 && lines_blank(s[n - 1]))
		n--;
	return n;
}

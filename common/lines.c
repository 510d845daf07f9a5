/* lines: splits a text at '\n' and numbers its lines. */
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

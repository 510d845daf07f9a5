/* httphdr: see client/model/httphdr.h. */
#include "client/model/httphdr.h"

#include <string.h>
#include <strings.h>

static int httphdr_ws(char c)
{
	return c == ' ' || c == '\t';
}

static int httphdr_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

int httphdr_cc(const char *line, size_t len, char *out, size_t outlen)
{
	const size_t nl = sizeof(HTTPHDR_CC_NAME) - 1;
	size_t i, start, end;

	if (line == NULL || out == NULL || outlen < HTTPHDR_CC_MAX || len <= nl ||
	    strncasecmp(line, HTTPHDR_CC_NAME, nl) != 0 || line[nl] != ':')
		return 0;
	end = len;
	if (end > 0 && line[end - 1] == '\n')
		end--;
	if (end > 0 && line[end - 1] == '\r')
		end--;
	for (start = nl + 1; start < end && httphdr_ws(line[start]); start++)
		;
	while (end > start && httphdr_ws(line[end - 1]))
		end--;
	if (end == start || end - start >= HTTPHDR_CC_MAX)
		return 0;
	for (i = start; i < end; i++)
		if (!httphdr_name_char(line[i]))
			return 0;
	memcpy(out, line + start, end - start);
	out[end - start] = '\0';
	return 1;
}

/* format: the text formatting every human-readable writer shares (numbers with their real
 * precision, percentages, terminal-safe copies of server text). */
#include "client/report/format.h"

#include <math.h>
#include <stdio.h>

/* Copies s into out with control bytes replaced: server-supplied text (cc errors, warnings
 * that quote it) must not drive the terminal. */
const char *report_clean(const char *s, char *out, size_t len)
{
	size_t i = 0;

	for (; s && *s && i + 1 < len; s++)
		out[i++] = ((unsigned char)*s < 0x20 || *s == 0x7f) ? '?' : *s;
	out[i] = '\0';
	return out;
}

/* "%.*f" of v, or "-" when v is NAN or infinite. */
const char *report_num(double v, int dec, char *buf, size_t len)
{
	if (!isfinite(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.*f", dec, v);
	return buf;
}

/* "1.2%", or "-" when v is NAN. */
const char *report_pct(double v, char *buf, size_t len)
{
	if (!isfinite(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f%%", v);
	return buf;
}

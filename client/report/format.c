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

/* Bytes with an SI unit and about three significant digits. */
const char *report_bytes(double b, char *buf, size_t len)
{
	if (!isfinite(b))
		snprintf(buf, len, "? bytes");
	else if (b < 1e3)
		snprintf(buf, len, "%.0f B", b);
	else if (b < 1e6)
		snprintf(buf, len, b < 1e4 ? "%.1f kB" : "%.0f kB", b / 1e3);
	else
		snprintf(buf, len, b < 1e7 ? "%.2f MB" : "%.1f MB", b / 1e6);
	return buf;
}

int report_width(const char *s)
{
	int n = 0;

	for (const char *p = s; *p; p++)
		n += ((unsigned char)*p & 0xc0) != 0x80;
	return n;
}

/* The length in bytes of the word at s (up to a blank or the end). */
static size_t word_len(const char *s)
{
	size_t n = 0;

	while (s[n] && s[n] != ' ')
		n++;
	return n;
}

void report_wrap(FILE *out, const char *prefix, const char *text, int indent, int width)
{
	char word[256];
	int col = report_width(prefix), line_start = 1;

	fputs(prefix, out);
	if (col + report_width(text) <= width) {
		fprintf(out, "%s\n", text); /* fits: as written, its alignment kept */
		return;
	}
	for (const char *p = text; *p;) {
		size_t n = word_len(p);
		int w;

		if (n == 0) {
			p++;
			continue;
		}
		snprintf(word, sizeof(word), "%.*s", (int)n, p);
		w = report_width(word);
		if (!line_start && col + 1 + w > width) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
			line_start = 1;
		}
		if (!line_start) {
			fputc(' ', out);
			col++;
		}
		fputs(word, out);
		col += w;
		line_start = 0;
		p += n;
	}
	fputc('\n', out);
}

double report_nz(double v, int dec)
{
	return fabs(v) < 0.5 * pow(10, -dec) ? 0.0 : v;
}

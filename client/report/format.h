/* format: text formatting shared by the human-readable writers (text summary, HTML). A leaf:
 * it calls nothing in the client. Layer: client/report. */
#ifndef BM_REPORT_FORMAT_H
#define BM_REPORT_FORMAT_H

#include <stddef.h>
#include <stdio.h>

/* A number with dec decimals or "-" for NAN, a percentage or "-", and s with control bytes
 * replaced (server-supplied text must not drive the terminal). Each returns buf / out. */
const char *report_num(double v, int dec, char *buf, size_t len);
const char *report_pct(double v, char *buf, size_t len);
const char *report_clean(const char *s, char *out, size_t len);
/* v, or 0 where it would print as a negative zero with dec decimals ("-0.0" reads as a sign). */
double report_nz(double v, int dec);
/* Bytes with an SI unit and about three significant digits ("244 kB"); "? bytes" for NAN. */
const char *report_bytes(double b, char *buf, size_t len);
/* Columns s takes on a terminal: UTF-8 characters, not bytes ("≥" is one). */
int report_width(const char *s);
/* Prints prefix, then text and a newline; when they do not fit in width columns, text's words
 * wrapped there, each further line indented by indent columns (a word longer than a line gets
 * a line of its own). */
void report_wrap(FILE *out, const char *prefix, const char *text, int indent, int width);

#endif

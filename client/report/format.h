/* format: text formatting shared by the human-readable writers (text summary, HTML). A leaf:
 * it calls nothing in the client. Layer: client/report. */
#ifndef BM_REPORT_FORMAT_H
#define BM_REPORT_FORMAT_H

#include <stddef.h>

/* A number with dec decimals or "-" for NAN, a percentage or "-", and s with control bytes
 * replaced (server-supplied text must not drive the terminal). Each returns buf / out. */
const char *report_num(double v, int dec, char *buf, size_t len);
const char *report_pct(double v, char *buf, size_t len);
const char *report_clean(const char *s, char *out, size_t len);

#endif

/* html: one self-contained HTML page of a run — summary table and inline SVG time-series charts, no external scripts or fonts. */
#ifndef BM_HTML_H
#define BM_HTML_H

#include "client/model/result.h"

/* Writes r to path; 0, or -1 after logging one clear sentence. Reads r only. */
int html_write(const struct test_result *r, const char *path);

#endif

/* report: views of a test_result — JSON (canonical, documented in docs/report.md) and a short
 * human summary. Writers only read the result. */
#ifndef BM_REPORT_H
#define BM_REPORT_H

#include <stdio.h>

#include <json-c/json.h>

#include "client/result.h"

#define REPORT_SCHEMA_VERSION 1

/* Builds the whole report as a new JSON object; the caller puts it. NULL if out of memory. */
json_object *report_json(const struct test_result *r);

/* Writes the JSON report to path ("-" = stdout). A file is written to a temporary name in the
 * same directory and renamed into place, so readers never see half a report.
 * Returns 0, or -1 after logging one error. */
int report_json_write(const struct test_result *r, const char *path);

/* Prints the human summary (header, per-phase table, buffers, warnings, lab truth) to out. */
void report_text(const struct test_result *r, FILE *out);

#endif

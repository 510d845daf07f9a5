/* json: the canonical JSON view of a test_result, documented in docs/report.md and
 * docs/report.schema.json. Only reads the result. Layer: client/report; called by the command
 * line and the history log. */
#ifndef BM_REPORT_JSON_H
#define BM_REPORT_JSON_H

#include <json-c/json.h>

#include "client/model/result.h"

#define REPORT_SCHEMA_VERSION 1

/* Builds the whole report as a new JSON object; the caller puts it. NULL if out of memory. */
json_object *report_json(const struct test_result *r);

/* Writes the JSON report to path ("-" = stdout). A file is written to a temporary name in the
 * same directory and renamed into place, so readers never see half a report.
 * Returns 0, or -1 after logging one error. */
int report_json_write(const struct test_result *r, const char *path);

/* A run that measured nothing (unreachable, refused, busy): version, status "failed", error
 * (r->error), server and config, so a script reading -J or a history sees why. */
json_object *report_json_failed(const struct test_result *r);
int report_json_failed_write(const struct test_result *r, const char *path);

#endif

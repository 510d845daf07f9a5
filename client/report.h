/* report: views of a test_result — JSON (canonical, documented in docs/report.md) and a short
 * human summary. Writers only read the result. */
#ifndef BM_REPORT_H
#define BM_REPORT_H

#include <stdio.h>

#include <json-c/json.h>

#include "client/result.h"

#define REPORT_SCHEMA_VERSION 1

/* Decimals kept per unit, so numbers carry their real precision instead of 17-digit noise.
 * 0 decimals means the value is written as a JSON integer. */
#define DEC_S 6     /* seconds: µs, finer than any timestamp we trust */
#define DEC_MS 3    /* milliseconds: µs */
#define DEC_MBPS 2
#define DEC_PCT 3
#define DEC_RATIO 4
#define DEC_INT 0

struct jb;

/* Builds the whole report as a new JSON object; the caller puts it. NULL if out of memory. */
json_object *report_json(const struct test_result *r);

/* Writes the JSON report to path ("-" = stdout). A file is written to a temporary name in the
 * same directory and renamed into place, so readers never see half a report.
 * Returns 0, or -1 after logging one error. */
int report_json_write(const struct test_result *r, const char *path);

/* Parts shared by the JSON writers (client/report_probes.c): RTT order statistics (nulls
 * without samples), one phase's RPM (null when not computed), the auxiliary probe kinds with
 * their per-phase figures, and the ICMP cross-checks. */
json_object *report_json_rtt(struct jb *b, const struct stats_summary *s);
json_object *report_json_rpm(struct jb *b, const struct rpm_result *rpm);
json_object *report_json_probe_kinds(struct jb *b, const struct test_result *r);
json_object *report_json_icmp_checks(struct jb *b, const struct test_result *r);
/* The passive capture's figures; null when capture was not selected. */
json_object *report_json_capture(struct jb *b, const struct test_result *r);
/* The per-probe-kind table, RPM and ICMP lines of the text summary (nothing without them). */
void report_text_probes(const struct test_result *r, FILE *out);

/* Text formatting shared by the text writers: a number with dec decimals or "-" for NAN,
 * a percentage or "-", and s with control bytes replaced (server-supplied text must not
 * drive the terminal). Each returns buf / out. */
const char *report_num(double v, int dec, char *buf, size_t len);
const char *report_pct(double v, char *buf, size_t len);
const char *report_clean(const char *s, char *out, size_t len);

/* Prints the human summary (header, per-phase table, buffers, warnings, lab truth) to out. */
void report_text(const struct test_result *r, FILE *out);

#endif

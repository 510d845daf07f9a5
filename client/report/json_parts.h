/* json_parts: building blocks of the JSON report (client/report/json.c) that also serve
 * `bloatmeter analyze` (the passive analyzer's direction summary), and the decimals every JSON
 * number keeps. Builds into a json builder (common/jsonb.h); reads only. Layer: client/report. */
#ifndef BM_REPORT_JSON_PARTS_H
#define BM_REPORT_JSON_PARTS_H

#include <json-c/json.h>

#include "client/model/result.h"
#include "probes/pcapanalyze.h"

/* Decimals kept per unit, so numbers carry their real precision instead of 17-digit noise.
 * 0 decimals means the value is written as a JSON integer. */
#define DEC_S 6     /* seconds: µs, finer than any timestamp we trust */
#define DEC_MS 3    /* milliseconds: µs */
#define DEC_MBPS 3
#define DEC_PCT 3
#define DEC_RATIO 4
#define DEC_INT 0

struct jb;

/* RTT order statistics (nulls without samples). */
json_object *report_json_rtt(struct jb *b, const struct stats_summary *s);
/* One phase's RPM (null when not computed). */
json_object *report_json_rpm(struct jb *b, const struct rpm_result *rpm);
/* The auxiliary probe kinds with their per-phase figures, and the ICMP cross-checks. */
json_object *report_json_probe_kinds(struct jb *b, const struct test_result *r);
json_object *report_json_icmp_checks(struct jb *b, const struct test_result *r);
/* The passive capture's figures; null when capture was not selected. */
json_object *report_json_capture(struct jb *b, const struct test_result *r);
/* One direction of the passive analyzer's summary (the report's "capture" section and
 * `bloatmeter analyze -J`). */
json_object *report_json_pa_dir(struct jb *b, const struct pa_dir *d);

#endif

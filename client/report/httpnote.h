/* httpnote: what the reports say about an HTTP-mode run (a test against an HTTP speed-test
 * server instead of a bloatmeterd) — which target was used and where it came from, how
 * latency was measured, and the one sentence on the figures only a bloatmeterd can give.
 * Layer: client/report; callers: text.c and json.c. */
#ifndef BM_REPORT_HTTPNOTE_H
#define BM_REPORT_HTTPNOTE_H

#include <stdio.h>

#include <json-c/json.h>

#include "client/model/result.h"

struct jb;

/* Why the bloatmeterd-only fields are null (one sentence). */
const char *report_http_unmeasured(void);
/* Where the target came from: "command line", "configuration file PATH", "built-in default". */
const char *report_http_source(const struct test_result *r);
/* The JSON "http" object: url, address, target source, latency method, the sentence. */
json_object *report_json_http(struct jb *b, const struct test_result *r);
/* Text: the target line and the sentence, once. */
void report_text_http(const struct test_result *r, FILE *out);

#endif

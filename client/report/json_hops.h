/* json_hops: the per-hop part of the JSON report (--per-hop): the "hops" array and the
 * "queue_location" object. Reads the result only. Layer: client/report; called by json.c. */
#ifndef BM_REPORT_JSON_HOPS_H
#define BM_REPORT_JSON_HOPS_H

#include <json-c/json.h>

#include "client/model/result.h"

struct jb;

/* One object per hop, TTL 1 first; null when --per-hop was not given or could not run. */
json_object *report_json_hops(struct jb *b, const struct test_result *r);
/* The verdict with its evidence, the hop and the probing method; null as above. */
json_object *report_json_queue_location(struct jb *b, const struct test_result *r);

#endif

/* json_queue: the "queue" and "ecn" objects of the JSON report — what manages each loaded
 * direction's queue (client/analysis/queueverdict) and how it signals congestion with --ecn. Reads the result only. Layer: client/report; called by
 * json.c. */
#ifndef BM_REPORT_JSON_QUEUE_H
#define BM_REPORT_JSON_QUEUE_H

#include <json-c/json.h>

#include "client/model/result.h"

struct jb;

/* {download, upload}: each a verdict object, or null when that direction was not loaded. */
json_object *report_json_queue(struct jb *b, const struct test_result *r);
/* --ecn: how it was asked for, what the flows negotiated, the CE marks and the verdict; null
 * without --ecn. */
json_object *report_json_ecn(struct jb *b, const struct test_result *r);

#endif

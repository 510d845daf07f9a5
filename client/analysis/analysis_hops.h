/* analysis_hops: turns the run's TTL-limited samples (--per-hop) into per-hop figures and the
 * queue location (client/analysis/hops). Layer: client/analysis; called by analysis_run. */
#ifndef BM_ANALYSIS_HOPS_H
#define BM_ANALYSIS_HOPS_H

#include "client/model/result.h"

/* Fills r->hops from r->hop_trace over r's phases; does nothing unless the probe ran. */
void analysis_hops(struct test_result *r);

#endif

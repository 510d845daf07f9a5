/* analysis_probes: per-phase figures of the auxiliary probe kinds (ICMP, DNS, new TCP
 * connections, in-flow, capture), RPM of the loaded phases and the ICMP cross-checks. Pure.
 * Layer: client/analysis; called by analysis_run (client/analysis/analysis.c). */
#ifndef BM_ANALYSIS_PROBES_H
#define BM_ANALYSIS_PROBES_H

#include "client/model/result.h"

/* Per-phase statistics of every auxiliary probe series, RPM of the loaded phases and the ICMP
 * cross-checks. Needs the phases' windows and UDP figures. */
void analysis_probes(struct test_result *r);

#endif

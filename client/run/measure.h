/* measure: runs one measurement — handshake, phase schedule, load and probes — and fills the raw
 * parts of a test_result. Analysis and output are separate. Layer: client/run; called by the
 * command line. */
#ifndef BM_MEASURE_H
#define BM_MEASURE_H

#include <stddef.h>

#include "client/model/config.h"
#include "client/model/result.h"

/* Runs the whole test against cfg->server. res must be result_init'ed. Returns 0 when it
 * completed; 1 when it failed after the schedule started (lost connection, interrupted, no
 * load flow): res holds what was measured, marked partial (result_abort), err says why; -1
 * when nothing was measured (unreachable, refused, busy), with one sentence in err. */
int measure_run(const struct client_config *cfg, struct test_result *res, char *err, size_t errlen);

#endif

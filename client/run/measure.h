/* measure: runs one measurement — handshake, phase schedule, load and probes — and fills the raw
 * parts of a test_result. Analysis and output are separate. Layer: client/run; called by the
 * command line. */
#ifndef BM_MEASURE_H
#define BM_MEASURE_H

#include <stddef.h>

#include "client/model/config.h"
#include "client/model/result.h"

/* Runs the whole test against cfg->server. res must be result_init'ed. Returns 0, or -1
 * with one sentence in err (unreachable, refused, lost connection, interrupted). */
int measure_run(const struct client_config *cfg, struct test_result *res, char *err, size_t errlen);

#endif

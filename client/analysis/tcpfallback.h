/* tcpfallback: the phases' RTT figures on a path that dropped every UDP probe (udp_blocked,
 * found by client/run/measure.c in the idle phase): taken from the TCP-based series instead —
 * a loaded phase's in-flow probes in its direction (bidirectional: the download's, else the
 * upload's), and new TCP connections (tcp_connect) where no in-flow sample exists, as in the
 * idle phase. Pure. Layer: client/analysis; called by analysis_run. */
#ifndef BM_TCPFALLBACK_H
#define BM_TCPFALLBACK_H

#include "client/model/result.h"

/* With r->udp_blocked: fills the rtt_ms of every phase that has no UDP figure from the first
 * TCP-based series with samples in its window. Without it: nothing. */
void tcpfallback_rtt(struct test_result *r);

#endif

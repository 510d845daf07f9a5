/* probeshare: what the probes cost each loaded phase — their IP traffic each way from what
 * they really sent in the phase's window, the load's ACKs, the link's IP-level rate with
 * both, the probes' share of it — and the warning when that share passed the budget (the
 * floor bound, or the phase could not adapt). Called by analysis_run after each phase's
 * window and goodput and before the buffers, whose bytes drain at the link's whole IP rate.
 * In the HTTP mode the latency requests' own connections are measured (r->probe_wire), and
 * nothing there adapts yet. */
#ifndef BM_PROBESHARE_H
#define BM_PROBESHARE_H

#include "client/model/result.h"

void probeshare_phases(struct test_result *r);

#endif

/* probeshare: what the probes cost each loaded phase — their IP traffic each way from what
 * they really sent in the phase's window, the load's ACKs, the link's IP-level rate with
 * both, the probes' share of it — and the warning when that share passed the budget (the
 * floor bound, or the phase could not adapt). Called by analysis_probes after the per-phase
 * probe counts; not in the HTTP mode. */
#ifndef BM_PROBESHARE_H
#define BM_PROBESHARE_H

#include "client/model/result.h"

void probeshare_phases(struct test_result *r);

#endif

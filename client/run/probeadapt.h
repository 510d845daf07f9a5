/* probeadapt: the probe budget at run time. Once the first second of a loaded phase shows
 * each loaded direction's rate, it scales the intervals of every probe kind together so that
 * their traffic stays within BUDGET_SHARE of each direction's measured capacity, never past
 * the floor (client/model/probebudget.h). measure.c owns it and applies what it chooses to
 * the UDP probe, the probe set and the in-flow probes; the intervals stay in force for the
 * rest of the test (later phases start from them and may lengthen them further). */
#ifndef BM_PROBEADAPT_H
#define BM_PROBEADAPT_H

#include <stdint.h>

#include "client/model/config.h"
#include "client/model/probebudget.h"

/* The rate is read from a loaded phase's first bytes at each whole second: the first fit
 * comes after the first second; later seconds fit again while the rate moves by more than
 * PROBEADAPT_CHANGE (the flows' start-up losses hold the first second low), for the first
 * PROBEADAPT_SECONDS. */
#define PROBEADAPT_WINDOW_NS 1000000000LL
#define PROBEADAPT_SECONDS 3
#define PROBEADAPT_CHANGE 0.05
/* IP bytes per goodput byte before the load's MSS is known: 1448-byte segments with
 * timestamps over IPv4. */
#define PROBEADAPT_IP_OVERHEAD (1500.0 / 1448.0)

struct probe_adapt {
	struct budget_mix mix;       /* what runs, at the configured intervals */
	double cap_bps[2];           /* each direction's latest IP-level rate (≤ 0: unknown) */
	double ms[BUDGET_KINDS];     /* intervals in force */
	double scale;                /* their common factor over the configured ones */
	int floor;                   /* the floor bound the last fit */
	int64_t settle_ns;           /* after a change: until every kind left its last slot at the
				      * earlier interval (the longest of them) */
	/* The running phase: loaded directions, their first sample once data flowed, done. */
	double phase_s;
	int loaded[2];
	int64_t t0[2];               /* the current second's start (upload: server clock) */
	uint64_t b0[2];              /* and the bytes then */
	int started[2];
	int seconds[2];              /* whole seconds of data seen */
	double rate_bps[2];          /* this phase's IP-level rate at the last fit */
	int fitted, done;
};

/* The configured intervals and sizes; the caller adds the probe set's streams to a->mix
 * (probeset_mix). ipv6: the probes' IP header is 40 bytes. */
void probeadapt_init(struct probe_adapt *a, const struct client_config *cfg, int ipv6);
/* A phase of phase_s seconds starts with load on the directions loaded[] ([0] down). */
void probeadapt_phase(struct probe_adapt *a, const int loaded[2], double phase_s);
/* Each tick of a loaded phase, per loaded direction: its clock (upload: the server's) and
 * goodput bytes so far; ip_overhead converts goodput to IP bytes (0: unknown yet). Returns
 * 1 when new intervals are in a->ms to apply (a->settle_ns: the longest interval they
 * replace), else 0. */
int probeadapt_tick(struct probe_adapt *a, const int64_t at[2], const uint64_t bytes[2],
		    double ip_overhead);

#endif

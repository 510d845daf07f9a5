/* httpadapt: the HTTP mode's probe budget at run time. At each of the first three whole
 * seconds of a loaded phase, the goodput since the phase began (as IP bytes) plus the latency
 * requests' own traffic gives each loaded direction's capacity, and httpbudget chooses the
 * requests' interval from it. Within a phase it follows the latest fit (the first second's
 * rate is low: slow start); across phases it never drops below the interval the phase began
 * with, so a slower direction of an earlier phase keeps its due. Pure state; owner:
 * httpmode.c, which applies the interval to its httpprobe. */
#ifndef BM_HTTPADAPT_H
#define BM_HTTPADAPT_H

#include <stddef.h>
#include <stdint.h>

#define HTTPADAPT_SECONDS 3
#define HTTPADAPT_IP_OVERHEAD (1500.0 / 1448.0) /* before the load's MSS is known */

struct http_adapt {
	double base_ms;      /* configured */
	double phase_ms;     /* in force when the phase began */
	double ms;           /* in force */
	int floor;           /* the floor bound the last fit */
	int loaded[2];       /* [0] down, [1] up */
	int64_t t0;          /* the phase's start */
	uint64_t b0[2];      /* goodput bytes then */
	int seconds;         /* fits done in this phase */
};

void httpadapt_init(struct http_adapt *a, double base_ms);
/* A phase starts at now with load on loaded[], goodput bytes so far bytes[]. */
void httpadapt_phase(struct http_adapt *a, const int loaded[2], int64_t now,
		     const uint64_t bytes[2]);
/* Each tick: goodput bytes so far, the IP bytes per goodput byte (0: unknown yet) and the
 * requests' mean IP bytes each way (nreq of them measured). 1 when a->ms changed. */
int httpadapt_tick(struct http_adapt *a, int64_t now, const uint64_t bytes[2],
		   double ip_overhead, const double req_bytes[2], size_t nreq);

#endif

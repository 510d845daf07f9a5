/* sawtooth: the top of a tail-drop queue read at its senders' back-offs. A few loss-based flows
 * (cubic, reno) fill such a queue in a slow sawtooth: it reaches its top only at the moments the
 * queue overflows, and then falls for seconds while the senders back off. The 1 s maxima of
 * the seconds in between lie below the top (−8 to −18 % with one flow, docs/methods.md); the
 * level just before each fall does not. Pure functions; client/analysis calls them. */
#ifndef BM_SAWTOOTH_H
#define BM_SAWTOOTH_H

#include <stddef.h>
#include <stdint.h>

/* The back-offs found in a series of queueing delays. */
struct sawtooth_peaks {
	size_t n;      /* how many */
	double median; /* median of the queue levels just before them (ms); NAN when none */
	double low;    /* the lowest and highest of those levels */
	double high;
};

/* Finds the back-offs in a time-ordered series of queueing delays q (ms) at times t (ns,
 * monotonic, non-decreasing). A back-off is a moment where the queue had stood near a level P
 * for the window before it (median ≥ 0.9 P; P is the second-highest sample around the moment,
 * so one delayed probe is not a level) and then stands at least 10 % below that median a
 * quarter to two thirds of a second later. Such moments less than 0.5 s apart are one back-off;
 * moments whose window the series' start cuts off are none. */
void sawtooth_peaks(const int64_t *t, const double *q, size_t n, struct sawtooth_peaks *out);

#endif

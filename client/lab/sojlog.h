/* sojlog: the lab bottleneck's record of what each packet waited — one record per packet that
 * left the queue (when it left, and its sojourn: arrival at the bottleneck to departure onto
 * the link), in a fixed ring that the forwarder process writes and the lab reads, both through
 * memory they share (relaxed atomics: a record is one 64-bit word, so a reader never sees half
 * of one). Summaries give the sojourn percentiles over a window of monotonic time, to compare
 * with what the probes measured in the same window. Written by bneck (in tunfwd), read by lab. */
#ifndef BM_LAB_SOJLOG_H
#define BM_LAB_SOJLOG_H

#include <stdatomic.h>
#include <stdint.h>

/* 2^19 packets: 5 minutes of full-size packets at 20 Mbit/s; older ones are overwritten. */
#define SOJLOG_CAP (1u << 19)

struct sojlog {
	uint64_t base_ns;                /* monotonic ns of time 0 of the records */
	_Atomic uint64_t next;           /* records written so far (the ring index is next % cap) */
	_Atomic uint64_t rec[SOJLOG_CAP]; /* departure µs since base << 32 | sojourn µs */
};

struct sojlog_summary {
	uint64_t samples;                /* packets that left within the window */
	double p50_ms, p95_ms, p99_ms, max_ms; /* NAN without samples */
	/* The median over the window's blocks of block_ns of each block's smallest sojourn: with
	 * 100 ms blocks, what CoDel controls (RFC 8289: the minimum over an interval). */
	double floor_ms;
};

/* An empty log whose time 0 is base_ns (records before it are not kept). */
void sojlog_init(struct sojlog *l, uint64_t base_ns);

/* One packet left at t_ns after sojourn_ns. Times past 2^32 µs (71 min) after base_ns, or
 * before it, are not recorded; sojourns are capped at 2^32-1 µs. */
void sojlog_add(struct sojlog *l, uint64_t t_ns, uint64_t sojourn_ns);

/* Percentiles of the sojourns of the packets that left in [from_ns, to_ns), among those still
 * in the ring, and their floor over blocks of block_ns (> 0) from from_ns; a block that no
 * packet left in does not count. Returns 0, or -1 without memory (then out says no samples). */
int sojlog_summarize(const struct sojlog *l, uint64_t from_ns, uint64_t to_ns, uint64_t block_ns,
		     struct sojlog_summary *out);

#endif

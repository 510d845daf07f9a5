/* analysis: derives per-phase figures and per-direction buffer estimates from the raw series
 * of a test_result. Pure functions: no I/O, no clocks; unit-tested on synthetic traces. */
#ifndef BM_ANALYSIS_H
#define BM_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "client/model/result.h"

#define ANALYSIS_STEADY_INTERVAL_NS (250 * 1000000LL) /* goodput interval for saturation */
#define ANALYSIS_STEADY_TOLERANCE 0.05                /* the draft's 5 % */
#define ANALYSIS_STEADY_INTERVALS 4
/* The buffer is this percentile of the 1 s maxima of queueing delay: the level the queue
 * itself reaches in half the seconds, which host stalls in a minority of seconds cannot raise
 * and a CUBIC sawtooth of several seconds does not pull far down (the lower quartile read
 * 4-9 % low with -P auto; docs/methods.md, "Choosing the buffer estimator"). */
#define ANALYSIS_BLOCK_MAX_QUANTILE 50.0
/* IP packet size assumed when the load flows' MSS is unknown (Ethernet MTU). */
#define ANALYSIS_DEFAULT_PACKET_BYTES 1500.0
/* A load loop busy this share of one core during a phase may itself be the bottleneck. */
#define ANALYSIS_CPU_BOUND 0.9

/* DSLReports grade of a latency increase (static string), NULL for NAN. */
const char *analysis_grade(double increase_ms);

/* Fills phases[], rtt0_ms, buffer_down/up and warnings from the raw series. */
void analysis_run(struct test_result *r);

/* Goodput in bit/s over [from, to] from a cumulative byte series (linear interpolation
 * between samples). NAN if the series does not cover the interval. */
double analysis_rate_bps(const struct tput_rec *s, size_t n, int64_t from, int64_t to);

/* Saturation (the responsiveness draft's rule, with the largest deviation in place of the
 * standard deviation): goodput over consecutive intervals of length iv from `from`, its moving
 * average over the last 4 intervals, and saturation at the end of the first interval where
 * the last 4 moving averages are all within tol of their mean (so at the earliest after 7
 * intervals). The averaging matters: at long RTTs loss recovery makes in-order delivery to the
 * receiver bursty at 100 ms scales even when the bottleneck is full. -1 if never before `to`. */
int64_t analysis_steady_start(const struct tput_rec *s, size_t n, int64_t from, int64_t to,
			      int64_t iv, double tol);

/* Counts probes sent in [from, to) and splits their loss into upstream and downstream using
 * the server's received-count carried in each reply; final_count is the server's total
 * (0 = unknown). Fills probes_sent/received, lost_up/down and loss_up/down_pct. */
void analysis_loss(const struct probe_rec *p, size_t n, uint64_t final_count, int64_t from,
		   int64_t to, struct phase_result *ph);

/* RTT summary (ms) of the received probes sent in [from, to). */
void analysis_rtt(const struct probe_rec *p, size_t n, int64_t from, int64_t to,
		  struct stats_summary *out);

/* UDP jitter (ms): mean |RTT difference| of consecutive replies to probes sent in [from, to). */
double analysis_jitter(const struct probe_rec *p, size_t n, int64_t from, int64_t to);

/* Which delay queueing delay is measured on: the round trip, or one way (clock sync needed). */
enum delay_kind { DELAY_RTT = 0, DELAY_UP, DELAY_DOWN };

struct delay_ref {
	enum delay_kind kind;
	double base_ms;                /* the delay's idle minimum */
	const struct clock_fit *sync;  /* for DELAY_UP / DELAY_DOWN */
};

/* Queueing delays q = delay − base (ms) of replies to probes sent in [from, to), written to
 * q (room for n values). Returns how many. */
size_t analysis_queue_samples(const struct probe_rec *p, size_t n, int64_t from, int64_t to,
			      const struct delay_ref *ref, double *q);

/* Maxima (rank 1) or second-highest values (rank 2) of consecutive blocks of `block` samples
 * of a time-ordered series into out (room for m / block + 1); a last block shorter than half a
 * block is left out, and a series shorter than that is one block. Returns how many (0 only
 * when m is 0). */
size_t analysis_block_maxima(const double *q, size_t m, size_t block, size_t rank, double *out);

/* Buffer estimate from the queueing delay q of probes sent in [from, to): the top of the
 * standing queue, ms = median over 1 s blocks of each block's maximum q (each second
 * sees the queue near its top at least once while it is full; the quartile rejects seconds
 * with a host stall); bytes = ms × ip_rate. Returns 0, or -1 (out->valid = 0) without samples or baseline. */
int analysis_buffer(const struct probe_rec *p, size_t n, int64_t from, int64_t to,
		    const struct delay_ref *ref, double ip_rate_bps, struct buffer_estimate *out);

#endif

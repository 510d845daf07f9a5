/* clock: monotonic and wall-clock time in nanoseconds, and where a timestamp came from. */
#ifndef BM_CLOCK_H
#define BM_CLOCK_H

#include <stdint.h>

#define NS_PER_SEC 1000000000LL
#define NS_PER_MS 1000000LL

/* Where a timestamp was taken: user space after the syscall, or by the kernel at receive. */
enum ts_source { TS_SRC_USER = 0, TS_SRC_KERNEL = 1 };

/* CLOCK_MONOTONIC in ns: for every interval and every sample. */
int64_t clock_mono_ns(void);
/* CLOCK_REALTIME in ns: only for wall-clock labels (report start time). */
int64_t clock_real_ns(void);
/* Converts a kernel CLOCK_REALTIME timestamp taken moments ago to CLOCK_MONOTONIC. */
int64_t clock_real_to_mono(int64_t real_ns);
/* CPU time the calling thread has used, in ns: tells a CPU-bound event loop from a slow path. */
int64_t clock_thread_cpu_ns(void);
/* Milliseconds as a double, for the edges (reports). */
double ns_to_ms(int64_t ns);
const char *ts_source_name(enum ts_source src);

#endif

/* procstat: what /proc says about a running process — CPU time (in total and per thread),
 * resident memory and open descriptors — for the benchmarks' figures (tests/bench/loadgen). */
#ifndef BM_BENCH_PROCSTAT_H
#define BM_BENCH_PROCSTAT_H

#define PROCSTAT_MAX_THREADS 64

struct procstat_thread {
	int tid;
	char comm[16];
	long long ticks;          /* utime + stime, clock ticks */
};

struct procstat_sample {
	long long ticks;          /* the whole process: utime + stime, clock ticks */
	long rss_kib;             /* VmRSS */
	long anon_kib;            /* RssAnon: the private part (the rest is mostly shared
				   * library pages, RssFile) */
	long hwm_kib;             /* VmHWM: the peak */
	int fds;                  /* entries of /proc/PID/fd */
	int nthreads;
	struct procstat_thread th[PROCSTAT_MAX_THREADS];
};

/* Reads pid's figures into s; 0, or -1 when the process is gone or /proc is unreadable. */
int procstat_read(int pid, struct procstat_sample *s);
/* CPU of the process between two samples wall_s apart, in % of one core. */
double procstat_cpu_pct(const struct procstat_sample *a, const struct procstat_sample *b,
			double wall_s);
/* Prints " NAME P%" for each thread present in both samples (no newline). */
void procstat_print_threads(const struct procstat_sample *a, const struct procstat_sample *b,
			    double wall_s);
/* CPU seconds the calling process has used so far. */
double procstat_self_cpu_s(void);

#endif

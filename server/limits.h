/* limits: what keeps one client or a busy host from taking the daemon over — a token bucket
 * (UDP probe rate per session, upload read rate), the pacing share of a session's flows, the
 * "busy, retry after N s" estimate, and the admission sampler that watches the host's egress
 * rate. The arithmetic is pure and unit-tested; only the sampler touches files and events. */
#ifndef BM_LIMITS_H
#define BM_LIMITS_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

/* Defaults of the configurable limits (docs/bloatmeterd.conf.md). The probe rate is twice
 * the fastest client schedule (udp=1 ms, 1000/s), so only a misbehaving client hits it. */
#define LIMITS_DEFAULT_PROBE_RATE 2000     /* UDP probe requests per second and session */
#define LIMITS_DEFAULT_IDLE_S 30           /* data connection / session without traffic */
#define LIMITS_DEFAULT_HANDSHAKE_S 5       /* to classify a connection and say hello */
#define LIMITS_UPLOAD_FACTOR 1.25          /* sink reads run at most this × max-rate */
#define LIMITS_ADMISSION_RETRY_MIN_S 5     /* busy for admission: retry_after_s bounds */
#define LIMITS_ADMISSION_RETRY_MAX_S 30

/* A token bucket: holds at most burst units and gains rate units per second. rate 0 means
 * unlimited. Time comes from the caller (now_ns, CLOCK_MONOTONIC), so it is a pure function
 * of its inputs; a clock that steps back refills nothing and takes nothing away. */
struct limits_bucket {
	double rate;    /* units per second; 0 = unlimited */
	double burst;   /* most units it holds */
	double tokens;  /* may go below 0 after limits_bucket_charge (a debt) */
	int64_t last_ns;
};

/* Starts a full bucket at now_ns. */
void limits_bucket_init(struct limits_bucket *b, double rate, double burst, int64_t now_ns);
/* Changes rate and burst (a reload), keeping the tokens it has, at most the new burst. */
void limits_bucket_set(struct limits_bucket *b, double rate, double burst);
/* Units available at now_ns (refills first); a large number when unlimited. */
double limits_bucket_avail(struct limits_bucket *b, int64_t now_ns);
/* Takes n units if that many are available at now_ns: 1, else 0 (nothing taken). */
int limits_bucket_take(struct limits_bucket *b, int64_t now_ns, double n);
/* Takes n units even if fewer are available (what a read already consumed). */
void limits_bucket_charge(struct limits_bucket *b, int64_t now_ns, double n);
/* The probe bucket's burst for a rate: a quarter second of it, at least 10 probes. */
double limits_probe_burst(int per_s);

/* A rate value of the configuration: "0" (none) or what util_parse_rate takes ("20M",
 * "20mbit", "1.5G", "800k", bits per second). 0 or -1 if malformed. */
int limits_parse_rate(const char *s, uint64_t *bps);
/* bps as "20 Mbit/s" (or "none" for 0), for logs. */
void limits_format_rate(uint64_t bps, char *buf, size_t len);

/* Seconds a refused client should wait: until earliest_end_ns (the earliest end among the
 * sessions in its way; 0 = none known), rounded up, within lo_s..hi_s. */
int limits_retry_after_s(int64_t earliest_end_ns, int64_t now_ns, int lo_s, int hi_s);

/* Is name a plausible network interface name (1-15 bytes, no '/', blank or control byte,
 * not "." or "..")? 1 or 0. It need not exist. */
int limits_ifname_ok(const char *name);
/* Parses the text of a sysfs counter (decimal digits, an optional newline; len bytes, need
 * not be NUL-terminated, at most 24 looked at). 0, or -1 if malformed. */
int limits_parse_counter(const char *buf, size_t len, uint64_t *v);

/* The egress rate from successive byte counter readings. */
struct limits_meter {
	int have;        /* one reading is known */
	uint64_t bytes;  /* the last reading */
	int64_t t_ns;
	double bps;      /* rate over the last interval; 0 until two readings */
};
/* Adds a reading of counter bytes at now_ns and updates m->bps. A counter that went back
 * (interface reset, wrap) or no time passing starts over from this reading. */
void limits_meter_update(struct limits_meter *m, uint64_t bytes, int64_t now_ns);

/* The admission sampler: once a second on base, reads IFNAME's tx_bytes from sysfs. */
struct limits_admission;
/* Starts sampling ifname against max_bps (bits/s); NULL with one sentence in err if the
 * interface's counter cannot be read now (no such interface) or the timer cannot start. */
struct limits_admission *limits_admission_start(struct event_base *base, const char *ifname,
						uint64_t max_bps, char *err, size_t errlen);
/* Applies a reloaded admission-max-rate. */
void limits_admission_set_max(struct limits_admission *a, uint64_t max_bps);
/* 1 while the egress over the last second exceeds the maximum; 0 otherwise, also when a
 * reading failed (admit rather than refuse on a broken sampler). a may be NULL (off). */
int limits_admission_busy(const struct limits_admission *a);
/* The last measured egress rate in bit/s (0 = unknown). */
double limits_admission_rate(const struct limits_admission *a);
void limits_admission_stop(struct limits_admission *a);

#endif

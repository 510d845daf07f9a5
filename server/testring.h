/* testring: the daemon's memory of its recent tests — a fixed ring of server-side summaries
 * (with what each client reported about itself) for /api/v1/tests, the latency-increase
 * histograms for /metrics, and the per-session figures gathered while a test runs. Everything
 * here is touched only by the main thread (the event loop), so nothing is locked. */
#ifndef BM_TESTRING_H
#define BM_TESTRING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <json-c/json.h>

struct session;

#define TESTRING_CAP 256      /* tests remembered (about 64 KiB) */
#define TESTRING_BUCKETS 10   /* histogram buckets, see testring_bucket_s */
#define TESTLIVE_SAMPLES 512  /* RTT samples kept per running test (decimated beyond) */

enum { TESTRING_DOWN = 0, TESTRING_UP = 1 };

/* What the client said about its own test in its `summary` message (docs/protocol.md); NAN
 * = not reported (e.g. no upload phase). Stored apart from the server's own figures and
 * labelled as client-reported everywhere: the server cannot verify it. */
struct test_client_summary {
	int valid;
	double idle_ms;          /* idle latency, median RTT */
	double increase_ms[2];   /* latency increase under load, [down] and [up] */
	double buffer_ms[2];     /* buffer estimates */
	double throughput_bps[2];
	char grade[3];           /* "A+".."F", "" = none */
};

/* One finished test as the server saw it. */
struct test_summary {
	uint64_t id;
	int64_t start_real_ns;   /* wall clock at hello */
	double duration_s;
	char client[48];         /* the client's network: IPv4 /24 or IPv6 /32, "a.b.c.0/24" */
	char cc[16];
	int flows[2];            /* most load flows open at once, per direction */
	uint64_t bytes[2];       /* [down] sent by the server, [up] received by it */
	double rate_bps[2];      /* bytes × 8 over the time that direction had flows; NAN none */
	uint64_t udp_probes;     /* probe requests the reflector counted */
	/* The download flows' TCP_INFO at every 100 ms tick: median over ticks of the flows'
	 * mean (smoothed RTT − minimum RTT), and the smallest minimum RTT; NAN without
	 * samples. */
	double srv_rtt_increase_ms;
	double srv_min_rtt_ms;
	struct test_client_summary reported;
	/* Who ran it: "cli" (a bloatmeter session) or "browser" (a result posted to the public
	 * listener, server/webresult.h: only reported figures, nothing server-measured); and
	 * for a browser, its engine ("" = none). */
	char source[8];
	char engine[65];
};

/* Prometheus histogram of latency increases, one per (direction, source). */
enum testring_series { TESTRING_SRV_DOWN, TESTRING_CLI_DOWN, TESTRING_CLI_UP,
		       TESTRING_BROWSER_DOWN, TESTRING_BROWSER_UP, TESTRING_NSERIES };

struct testring_hist {
	uint64_t bucket[TESTRING_BUCKETS]; /* observations ≤ that bound and > the one before */
	uint64_t count;                    /* all, including those above the last bound */
	double sum_s;
};

struct testring {
	struct test_summary e[TESTRING_CAP];
	size_t next;  /* slot of the next push */
	size_t n;     /* filled slots, ≤ TESTRING_CAP */
	struct testring_hist hist[TESTRING_NSERIES];
};

/* A running test's figures that the session does not keep itself. */
struct test_live {
	int64_t start_real_ns;
	int64_t last_tick_ns;
	int64_t active_ns[2];     /* time with at least one flow open, per direction */
	int flows_max[2];
	float rtt_inc_ms[TESTLIVE_SAMPLES];
	size_t nrtt;
	unsigned stride, skip;    /* keep one tick in stride (doubles when the array fills) */
	double min_rtt_ms;
	struct test_client_summary reported;
};

/* Upper bound (seconds) of histogram bucket i, 0 ≤ i < TESTRING_BUCKETS. */
double testring_bucket_s(int i);
/* The label values of a series: direction "download"/"upload", source "server"/"client"
 * (a bloatmeter session, measured by either end) or "browser". */
const char *testring_series_direction(enum testring_series s);
const char *testring_series_source(enum testring_series s);

void testring_init(struct testring *r);
/* Remembers s (overwriting the oldest when full) and adds its latency increases to the
 * histograms (negative increases count as 0: below the idle level is measurement noise). */
void testring_push(struct testring *r, const struct test_summary *s);
/* The i-th most recent test (0 = newest), or NULL. */
const struct test_summary *testring_get(const struct testring *r, size_t i);
/* The newest min(limit, n) tests as a JSON array, newest first; NULL if out of memory. */
json_object *testring_json(const struct testring *r, size_t limit);
/* One test as a JSON object (the API's element); NULL if out of memory. */
json_object *testring_summary_json(const struct test_summary *s);

/* Formats the client's network: IPv4 (or IPv4-mapped) /24, IPv6 /32 (a /48 is often one
 * household's). */
void testring_mask_addr(const struct sockaddr *sa, char *buf, size_t len);

/* Validates a client `summary` message strictly: only known keys (besides v and type),
 * finite numbers in sane ranges, a known grade. 0 and *out filled (valid = 1), or -1 with
 * *out untouched. */
int testring_parse_summary(json_object *msg, struct test_client_summary *out);

/* Starts tracking a session (calloc'ed by the caller); now_real_ns: the wall clock at hello. */
void testlive_init(struct test_live *l, int64_t now_ns, int64_t now_real_ns);
/* At every stats tick: flow counts, active time and the download flows' RTT sample. */
void testlive_tick(struct test_live *l, const struct session *s, int64_t now_ns);
/* The session's summary at its end (call before its flows and table entry go). */
void testlive_finish(const struct test_live *l, const struct session *s, uint64_t udp_probes,
		     int64_t now_ns, struct test_summary *out);

#endif

/* fleet: the candidate servers of --servers / --server-list — the bounded parsers of the list,
 * and the pure figures and choice once client/run/fleetrace.c has raced them. Layer:
 * client/model; the run fills it, the reports read it. */
#ifndef BM_FLEET_H
#define BM_FLEET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/sock.h"

#define FLEET_MAX 64                 /* candidates at most */
#define FLEET_HOST_MAX 254           /* a DNS name (253) or an address with its scope, + NUL */
#define FLEET_MAX_LINE 300           /* bytes of one --server-list line */
#define FLEET_MAX_FILE (64 * 1024)   /* bytes of a --server-list file */
#define FLEET_ERR_MAX 200
#define FLEET_SAMPLES_MAX 8          /* per candidate: 64 × 8 sockets stay under 1024 fds */

/* How the race runs; fleet_timing_default() gives 5 handshakes 100 ms apart, 2 s timeout. */
struct fleet_timing {
	int samples;                 /* handshakes per candidate, 1..FLEET_SAMPLES_MAX */
	int spacing_ms;              /* between one candidate's handshakes */
	int timeout_ms;              /* a handshake not established by then failed */
};

struct fleet_candidate {
	char host[FLEET_HOST_MAX];   /* as listed, without IPv6 brackets */
	uint16_t port;
	/* Filled by the race. */
	struct sockaddr_storage sa;  /* the resolved address (ss_family 0: not resolved) */
	socklen_t salen;
	char numeric[INET6_ADDRSTRLEN + 20]; /* the address alone (with an IPv6 scope) */
	char address[SOCK_ADDRSTRLEN];       /* address:port as used */
	double sample_ms[FLEET_SAMPLES_MAX]; /* handshake times; INFINITY: failed */
	int attempts;
	int samples, failed;         /* completed and failed handshakes */
	double median_ms, min_ms;    /* NAN when nothing completed; median counts failures as
				      * slower than any answer, so NAN also when most failed */
	char error[128];             /* why it is unreachable ("" when reachable) */
};

struct fleet {
	struct fleet_candidate cand[FLEET_MAX];
	int n;
	int chosen;                  /* index into cand, -1: none (yet) */
	struct fleet_timing timing;  /* what the race used */
};

void fleet_init(struct fleet *f);
struct fleet_timing fleet_timing_default(void);

/* Parses one entry — HOST, HOST:PORT, [V6], [V6]:PORT or a bare IPv6 address — from the n bytes
 * at s (blanks around it are ignored; no terminator needed) and appends it. default_port when
 * none is given. -1 with one sentence in err on a bad entry, a repeated one, or a full list. */
int fleet_add_entry(struct fleet *f, const char *s, size_t n, uint16_t default_port, char *err,
		    size_t errlen);
/* Parses a comma list of entries ("a,b:4751,[2001:db8::1]:4752"). 0, or -1 with err. */
int fleet_parse_list(struct fleet *f, const char *list, uint16_t default_port, char *err,
		     size_t errlen);
/* Parses the text of a server list: one entry per line, '#' starts a comment, blank lines are
 * skipped; never reads past len. At least one entry. 0, or -1 with err starting "LINE: "
 * (line 0 for a file without entries). */
int fleet_parse_text(struct fleet *f, const char *text, size_t len, uint16_t default_port,
		     char *err, size_t errlen);
/* Reads path (at most FLEET_MAX_FILE bytes) and parses it; errors start with "path:". */
int fleet_load_file(struct fleet *f, const char *path, uint16_t default_port, char *err,
		    size_t errlen);
/* "host:port" with brackets around an IPv6 host, for messages and the text report. */
void fleet_entry_str(const struct fleet_candidate *c, char *buf, size_t len);

/* Median of n values (sorted in place); INFINITY counts as slower than any value, so the result
 * is INFINITY when more than half are. NAN for n == 0. */
double fleet_median(double *v, int n);
/* Derives samples, failed, median_ms and min_ms from sample_ms[0..attempts); clears error when
 * the candidate counts as reachable (a finite median). */
void fleet_summarise(struct fleet_candidate *c);
/* The reachable candidate with the lowest median (compared to the reported microsecond; a tie
 * goes to the first listed), or -1 when none is reachable. Pure. */
int fleet_choose(const struct fleet *f);
/* Sets why candidate c is unreachable (long reasons are cut). */
void fleet_note(struct fleet_candidate *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One sentence naming every candidate and why it failed, for when none is reachable. */
void fleet_unreachable_sentence(const struct fleet *f, char *buf, size_t len);

#endif

/* shaper: the token bucket that sets the lab bottleneck's rate — bytes earn credit at the
 * configured rate up to a burst. Pure (time is passed in, monotonic ns); called by the lab
 * shaper loop and its tests. */
#ifndef BM_LAB_SHAPER_H
#define BM_LAB_SHAPER_H

#include <stdint.h>

struct shaper {
	uint64_t rate_bps;   /* bits per second, > 0 */
	uint64_t burst;      /* bytes of credit the bucket holds at most */
	double tokens;       /* bytes of credit now */
	uint64_t last_ns;    /* when tokens was last brought up to date */
};

/* A full bucket at now_ns. burst below one packet is raised to 1514 bytes. */
void shaper_init(struct shaper *s, uint64_t rate_bps, uint64_t burst, uint64_t now_ns);

/* Whether a len-byte packet may leave at now_ns: returns 0 and spends its credit, or the ns to
 * wait until it may. */
uint64_t shaper_take(struct shaper *s, uint64_t now_ns, uint32_t len);

#endif

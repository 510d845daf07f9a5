/* tunfwd: the lab's userspace bottleneck process. In the router namespace it creates two TUN
 * devices — tun-down (server → client) and tun-up (client → server) — into which the router's
 * policy routes send every forwarded packet; it passes each through that direction's bneck
 * (queue discipline, rate, delay) and writes it back to the same device, from where the kernel
 * forwards it on by its main table. One forked process on a ppoll loop, CLOCK_MONOTONIC ns.
 * Called only by lab.c, from the thread that creates the lab and before any other thread. */
#ifndef BM_LAB_TUNFWD_H
#define BM_LAB_TUNFWD_H

#include <stddef.h>
#include <sys/types.h>

#include "client/lab/bneck.h"

#define TUNFWD_DEV_DOWN "tun-down"
#define TUNFWD_DEV_UP "tun-up"

struct tunfwd_config {
	struct bneck_params down, up;
};

/* What the forwarder reports while it runs, through memory it shares with its parent: per
 * direction (down, up) its counters, republished every TUNFWD_PUBLISH_NS, and every packet's
 * sojourn (sojlog.h). Written only by the forwarder; read by lab.c. */
#define TUNFWD_PUBLISH_NS (20 * 1000000ull)

struct tunfwd_dir_stats {
	_Atomic uint64_t in, out, tail_drops, aqm_drops, marks, line_drops;
	struct sojlog sojourns;
};

struct tunfwd_stats {
	struct tunfwd_dir_stats down, up;
};

/* A zeroed shared mapping for the forwarder's stats (its logs start at now), or NULL with
 * errno; release it with tunfwd_stats_unmap once the forwarder has stopped. */
struct tunfwd_stats *tunfwd_stats_map(void);
void tunfwd_stats_unmap(struct tunfwd_stats *st);

/* Reads one direction's counters (the last published ones). */
void tunfwd_stats_counts(const struct tunfwd_dir_stats *d, struct bneck_counts *out);

/* Forks the forwarder into the network namespace at nspath (a /run/netns path) and returns its
 * pid once both devices exist (still down: the caller brings them up and routes into them), or
 * -1 with one sentence in err. It reports into st (from tunfwd_stats_map). The forwarder dies with its parent (parent-death signal). */
pid_t tunfwd_start(const char *nspath, const struct tunfwd_config *cfg, struct tunfwd_stats *st,
		   char *err, size_t errlen);

/* SIGTERM, up to 2 s of grace, then SIGKILL; always reaps. Its devices go with it. */
void tunfwd_stop(pid_t pid);

#endif

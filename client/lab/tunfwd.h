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

/* Forks the forwarder into the network namespace at nspath (a /run/netns path) and returns its
 * pid once both devices exist (still down: the caller brings them up and routes into them), or
 * -1 with one sentence in err. The forwarder dies with its parent (parent-death signal). */
pid_t tunfwd_start(const char *nspath, const struct tunfwd_config *cfg, char *err,
		   size_t errlen);

/* SIGTERM, up to 2 s of grace, then SIGKILL; always reaps. Its devices go with it. */
void tunfwd_stop(pid_t pid);

#endif

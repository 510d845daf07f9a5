/* fdloop: a thread that sleeps in poll() until one socket is readable and then calls its
 * drain function, until fdloop_stop wakes it through an eventfd. The UDP reflector
 * (server/reflector.c) and the DNS responder (server/dns.c) each run on one, so bulk traffic
 * on the workers never delays their answers. A drain handles a bounded batch; when it stopped
 * at its bound (a flood), the thread sleeps FDLOOP_PAUSE_US before it polls again, so even at
 * a real-time priority (reflector-priority) it leaves the CPU to other threads between
 * batches. Only their owners call it. */
#ifndef BM_FDLOOP_H
#define BM_FDLOOP_H

#include <pthread.h>

#define FDLOOP_PAUSE_US 1000 /* after a full batch: a flood cannot hold the CPU */

/* Filled in by the owner before fdloop_start (fd, name, begin, drain, arg); the rest is the
 * loop's. */
struct fdloop {
	int fd;                   /* the socket watched (its owner closes it) */
	const char *name;         /* for the log: "cannot start the <name> thread" */
	void (*begin)(void *arg); /* on the new thread before it first waits; may be NULL */
	/* fd is readable: read what is queued, at most a batch of its own choosing; 1 to pause
	 * (it stopped at that bound and judges the input a flood), 0 to poll again at once (the
	 * socket is empty, or the batch was legitimate work) */
	int (*drain)(void *arg);
	void *arg;
	int stop_fd;              /* eventfd: written once to stop the thread */
	pthread_t thread;
};

/* Starts the thread: 0, or -1 after logging (nothing to stop then). */
int fdloop_start(struct fdloop *l);
/* Wakes the thread and joins it; closes the eventfd, not fd. */
void fdloop_stop(struct fdloop *l);

#endif

/* fdloop: poll() on the socket and the stop eventfd; a stop request wins over queued input. */
#include "server/fdloop.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"

static void *fdloop_main(void *arg)
{
	struct fdloop *l = arg;
	struct pollfd pfd[2] = { { .fd = l->fd, .events = POLLIN },
				 { .fd = l->stop_fd, .events = POLLIN } };

	if (l->begin != NULL)
		l->begin(l->arg);
	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			log_warn("%s poll", l->name);
			return NULL;
		}
		if (pfd[1].revents)
			return NULL;
		if (pfd[0].revents && l->drain(l->arg)) {
			/* A full batch: sleep, so that a flood cannot keep this thread (perhaps
			 * real-time) on the CPU; poll at once would return at once. */
			struct timespec pause = { 0, FDLOOP_PAUSE_US * 1000L };

			while (nanosleep(&pause, &pause) < 0 && errno == EINTR)
				;
		}
	}
}

int fdloop_start(struct fdloop *l)
{
	int rc;

	l->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (l->stop_fd < 0) {
		log_warn("eventfd");
		return -1;
	}
	rc = pthread_create(&l->thread, NULL, fdloop_main, l);
	if (rc != 0) {
		errno = rc;
		log_warn("cannot start the %s thread", l->name);
		close(l->stop_fd);
		return -1;
	}
	return 0;
}

void fdloop_stop(struct fdloop *l)
{
	uint64_t one = 1;

	if (write(l->stop_fd, &one, sizeof(one)) != sizeof(one))
		log_warn("cannot wake the %s thread", l->name);
	pthread_join(l->thread, NULL);
	close(l->stop_fd);
}

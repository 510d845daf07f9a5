/* fileio: short-write-safe and atomic file writes for reports and exports; bounded reads of
 * input files. */
#include "common/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"

ssize_t fileio_read_bounded(int fd, char *buf, size_t max)
{
	size_t len = 0;

	for (;;) {
		ssize_t n = read(fd, buf + len, max + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return (ssize_t)len;
		len += (size_t)n;
		if (len > max) {
			errno = EFBIG;
			return -1;
		}
	}
}

int fileio_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Creates "<path>.tmp<random>" exclusively. Not mkstemp: that forces mode 0600, while a
 * report should get the usual 0666 & ~umask. */
static int fileio_open_temp(const char *path, char *tmp, size_t len)
{
	for (int tries = 0; tries < 8; tries++) {
		uint32_t rnd;
		int fd;

		if (util_random(&rnd, sizeof(rnd)) < 0) {
			errno = EIO;
			return -1;
		}
		if ((size_t)snprintf(tmp, len, "%s.tmp%08" PRIx32, path, rnd) >= len) {
			errno = ENAMETOOLONG;
			return -1;
		}
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

int fileio_write_atomic(const char *path, const void *data, size_t len)
{
	size_t tlen = strlen(path) + 16;
	char *tmp = malloc(tlen);
	int fd, err;

	if (tmp == NULL) {
		errno = ENOMEM;
		return -1;
	}
	fd = fileio_open_temp(path, tmp, tlen);
	if (fd < 0) {
		free(tmp);
		return -1;
	}
	if (fileio_write_all(fd, data, len) < 0 || fsync(fd) < 0)
		goto fail;
	err = close(fd);
	fd = -1;
	if (err < 0 || rename(tmp, path) < 0)
		goto fail;
	free(tmp);
	return 0;
fail:
	err = errno;
	if (fd >= 0)
		(void)close(fd);
	(void)unlink(tmp);
	free(tmp);
	errno = err;
	return -1;
}

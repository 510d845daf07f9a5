/* fileio: writing result files safely — every byte or an error, and atomic replacement — and
 * reading small input files (configuration, keys, server lists) with a size bound. */
#ifndef BM_FILEIO_H
#define BM_FILEIO_H

#include <stddef.h>
#include <sys/types.h>

/* Writes all len bytes to fd (retrying short writes and EINTR); 0 or -1 with errno. */
int fileio_write_all(int fd, const void *data, size_t len);
/* Replaces path with data: writes "<path>.tmp<8 hex digits>" beside it, fsyncs, renames, so
 * readers see the old file or the whole new one. New files get 0666 & ~umask. 0 or -1 with
 * errno (the temporary file is removed). */
int fileio_write_atomic(const char *path, const void *data, size_t len);

/* Reads fd to its end into buf, which holds max + 1 bytes (one more, to notice a larger
 * file). The length, or -1 with errno (EFBIG: the file is larger than max). */
ssize_t fileio_read_bounded(int fd, char *buf, size_t max);

#endif

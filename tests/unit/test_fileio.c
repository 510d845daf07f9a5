/* Unit tests for common/fileio.c: bounded reads of input files (a file of exactly the bound,
 * one byte more, empty, and one arriving in pieces) and the atomic replacement of a file. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/fileio.h"

#define MAX 100

/* A pipe holding n bytes of 'a' with the write end closed: read() sees them, then EOF. */
static int pipe_with(size_t n)
{
	int p[2];
	char buf[MAX + 10];

	assert_true(n <= sizeof(buf));
	assert_int_equal(pipe(p), 0);
	memset(buf, 'a', n);
	assert_int_equal(fileio_write_all(p[1], buf, n), 0);
	close(p[1]);
	return p[0];
}

static void test_read_bounded(void **state)
{
	char buf[MAX + 1];
	int fd;

	fd = pipe_with(MAX); /* exactly the bound: accepted */
	assert_int_equal(fileio_read_bounded(fd, buf, MAX), MAX);
	close(fd);

	fd = pipe_with(MAX + 1); /* one byte more: refused with EFBIG */
	errno = 0;
	assert_int_equal(fileio_read_bounded(fd, buf, MAX), -1);
	assert_int_equal(errno, EFBIG);
	close(fd);

	fd = pipe_with(0);
	assert_int_equal(fileio_read_bounded(fd, buf, MAX), 0);
	close(fd);

	assert_int_equal(fileio_read_bounded(-1, buf, MAX), -1); /* read error: errno kept */
	assert_int_equal(errno, EBADF);
}

/* A file written in pieces by another process is read to its end. */
static void test_read_pieces(void **state)
{
	char buf[MAX + 1];
	int p[2];
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		for (int i = 0; i < 5; i++) {
			if (fileio_write_all(p[1], "0123456789", 10) < 0)
				_exit(1);
			usleep(2000);
		}
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(fileio_read_bounded(p[0], buf, MAX), 50);
	assert_memory_equal(buf + 40, "0123456789", 10);
	close(p[0]);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

static void test_write_atomic(void **state)
{
	char dir[] = "/tmp/bm-fileio-XXXXXX", path[64], buf[16];
	int fd;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	assert_int_equal(fileio_write_atomic(path, "old", 3), 0);
	assert_int_equal(fileio_write_atomic(path, "new!", 4), 0);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fileio_read_bounded(fd, buf, sizeof(buf) - 1), 4);
	assert_memory_equal(buf, "new!", 4);
	close(fd);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0); /* no temporary file was left beside it */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_bounded),
		cmocka_unit_test(test_read_pieces),
		cmocka_unit_test(test_write_atomic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* log: plain "PROG: text" lines on a terminal or file, "<N>text" priorities (sd-daemon(3)) when
 * stderr is the journal's stream, and the level filter with NOTICE between WARN and INFO. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"

/* Runs fn with stderr pointing at a temporary file, then returns what was written. With
 * journal set, JOURNAL_STREAM names that file, as systemd would name its stream. */
static void capture(int journal, enum log_level level, void (*fn)(void), char *out, size_t n)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDERR_FILENO);
	struct stat st;
	char js[64];
	size_t got;

	assert_non_null(tmp);
	assert_true(saved >= 0);
	fflush(stderr);
	assert_true(dup2(fileno(tmp), STDERR_FILENO) >= 0);
	assert_int_equal(fstat(STDERR_FILENO, &st), 0);
	snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	if (journal)
		setenv("JOURNAL_STREAM", js, 1);
	else
		unsetenv("JOURNAL_STREAM");
	log_init("prog", level);
	fn();
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	unsetenv("JOURNAL_STREAM");
	rewind(tmp);
	got = fread(out, 1, n - 1, tmp);
	out[got] = '\0';
	fclose(tmp);
}

static void emit_all(void)
{
	log_error("e%d", 1);
	log_warnx("w");
	log_notice("listening on %s", "::");
	log_info("i");
	log_debug("d");
}

static void test_plain_lines_carry_the_program_name(void **state)
{
	char out[512];

	(void)state;
	capture(0, LOG_LVL_NOTICE, emit_all, out, sizeof(out));
	assert_string_equal(out, "prog: error: e1\nprog: warning: w\nprog: listening on ::\n");
}

static void test_journal_lines_carry_priorities(void **state)
{
	char out[512];

	(void)state;
	capture(1, LOG_LVL_DEBUG, emit_all, out, sizeof(out));
	assert_string_equal(out, "<3>error: e1\n<4>warning: w\n<5>listening on ::\n<6>i\n"
				 "<7>debug: d\n");
}

static void test_default_daemon_level_hides_info(void **state)
{
	char out[512];

	(void)state;
	capture(1, LOG_LVL_ERROR, emit_all, out, sizeof(out));
	assert_string_equal(out, "<3>error: e1\n");
}

static void emit_control(void)
{
	log_notice("a\nb");
}

static void test_control_bytes_are_escaped(void **state)
{
	char out[128];

	(void)state;
	capture(0, LOG_LVL_NOTICE, emit_control, out, sizeof(out));
	assert_string_equal(out, "prog: a\\x0ab\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_lines_carry_the_program_name),
		cmocka_unit_test(test_journal_lines_carry_priorities),
		cmocka_unit_test(test_default_daemon_level_hides_info),
		cmocka_unit_test(test_control_bytes_are_escaped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

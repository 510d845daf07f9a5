/* Unit tests for common/lines.c: the lines of a text and their numbers (empty text, blank
 * lines, a final newline or none, a NUL byte inside a line). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/lines.h"

/* Splits text (len bytes) and checks the lines against want[0..count-1]. */
static void expect_lines(const char *text, size_t len, const char *const *want, int count)
{
	struct lines it;
	const char *s;
	size_t n;
	int i = 0;

	lines_init(&it, text, len);
	while (lines_next(&it, &s, &n)) {
		assert_true(i < count);
		assert_int_equal(it.line, i + 1);
		assert_int_equal(n, strlen(want[i]));
		assert_memory_equal(s, want[i], n);
		assert_true(s >= text && s + n <= text + len);
		i++;
	}
	assert_int_equal(i, count);
	assert_int_equal(lines_next(&it, &s, &n), 0); /* stays at the end */
}

static void test_empty(void **state)
{
	expect_lines("", 0, NULL, 0);
}

static void test_final_newline(void **state)
{
	static const char *const one[] = { "a = 1" };

	expect_lines("a = 1\n", 6, one, 1);
	expect_lines("a = 1", 5, one, 1);
}

static void test_blank_lines_counted(void **state)
{
	static const char *const want[] = { "", "x", "", "# y", "" };

	expect_lines("\nx\n\n# y\n\n", 9, want, 5);
}

static void test_len_bounds_text(void **state)
{
	static const char *const want[] = { "ab" };

	/* Bytes past len are not looked at, and a NUL byte is only a byte. */
	expect_lines("ab\ncd", 2, want, 1);

	struct lines it;
	const char *s;
	size_t n;

	lines_init(&it, "a\0b\nc", 5);
	assert_int_equal(lines_next(&it, &s, &n), 1);
	assert_int_equal(n, 3);
	assert_int_equal(lines_next(&it, &s, &n), 1);
	assert_int_equal(it.line, 2);
	assert_int_equal(n, 1);
	assert_int_equal(s[0], 'c');
	assert_int_equal(lines_next(&it, &s, &n), 0);
}

/* The comment and blank rules bloatmeterd.conf and key files share. */
static void test_comments_and_blanks(void **state)
{
	const char *s = "\t key = a#b  # note";
	size_t n = strlen(s), i;

	assert_int_equal(lines_uncomment("# all", 5), 0);
	assert_int_equal(lines_uncomment("x #y", 4), 2);
	assert_int_equal(lines_uncomment("x#y", 3), 3); /* inside a word: no comment */
	n = lines_uncomment(s, n);
	assert_int_equal(n, 13);
	i = lines_blanks(s, n);
	assert_int_equal(i, 2);
	assert_int_equal(lines_word(s + i, n - i), 3);
	assert_int_equal(lines_rtrim(s, n), 11);
	assert_int_equal(lines_blanks(" \r\v\f", 4), 4);
	assert_int_equal(lines_rtrim(" \t", 2), 0);
	assert_false(lines_blank('\n'));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_final_newline),
		cmocka_unit_test(test_blank_lines_counted),
		cmocka_unit_test(test_len_bounds_text),
		cmocka_unit_test(test_comments_and_blanks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

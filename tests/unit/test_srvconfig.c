/* test_srvconfig: the daemon's configuration file — the shipped example, every error with
 * its line number, and the merge of defaults, file and command line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "server/srvconfig.h"

#ifndef BM_SRVCONFIG_EXAMPLE
#error "BM_SRVCONFIG_EXAMPLE (path of packaging/bloatmeterd.conf) is set by tests/unit/CMakeLists.txt"
#endif

/* Parses text onto the defaults; returns the parser's result, err filled on failure. */
static int parse(const char *text, struct server_config *cfg, char *err, size_t errlen)
{
	srvconfig_defaults(cfg);
	err[0] = '\0';
	return srvconfig_parse(text, strlen(text), cfg, err, errlen);
}

/* text must fail with exactly want. */
static void expect_error(const char *text, size_t len, const char *want)
{
	struct server_config cfg;
	char err[SRVCONFIG_ERR_MAX] = "";

	srvconfig_defaults(&cfg);
	assert_int_equal(srvconfig_parse(text, len, &cfg, err, sizeof(err)), -1);
	assert_string_equal(err, want);
}

#define EXPECT(text, want) expect_error(text, sizeof(text) - 1, want)

static char *read_example(size_t *len)
{
	FILE *f = fopen(BM_SRVCONFIG_EXAMPLE, "r");
	char *buf = malloc(SRVCONFIG_MAX_FILE + 1);

	assert_non_null(f);
	assert_non_null(buf);
	*len = fread(buf, 1, SRVCONFIG_MAX_FILE, f);
	assert_true(*len > 0);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

/* The shipped file as shipped: every key commented out, so the built-in defaults. */
static void test_example_as_shipped(void **state)
{
	struct server_config cfg, def;
	char err[SRVCONFIG_ERR_MAX] = "";

	srvconfig_defaults(&def);
	srvconfig_defaults(&cfg);
	assert_int_equal(srvconfig_load(BM_SRVCONFIG_EXAMPLE, &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.port, def.port);
	assert_null(cfg.bind_addr);
	assert_int_equal(cfg.max_sessions, 16);
	assert_int_equal(cfg.max_flows, 32);
	assert_int_equal(cfg.max_duration_s, 300);
	assert_int_equal(cfg.dns_port, 4751);
	assert_null(cfg.dns_zone);
	assert_int_equal(cfg.verbose, 0);
}

/* Uncommented, every "#key = value" line must be valid, name every key once and show the
 * real default (bind has none to show: an example address). */
static void test_example_uncommented(void **state)
{
	size_t len, n = 0, keys = 0;
	char *text = read_example(&len), *out = malloc(len + 1), err[SRVCONFIG_ERR_MAX] = "";
	struct server_config cfg;

	assert_non_null(out);
	for (size_t i = 0; i < len; i++) {
		int bol = i == 0 || text[i - 1] == '\n';

		if (bol && text[i] == '#' && i + 1 < len && text[i + 1] >= 'a' && text[i + 1] <= 'z') {
			keys++;
			continue;
		}
		out[n++] = text[i];
	}
	assert_int_equal(keys, SRVOPT_COUNT);
	srvconfig_defaults(&cfg);
	assert_int_equal(srvconfig_parse(out, n, &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.port, 4750);
	assert_string_equal(cfg.bind_addr, "192.0.2.10");
	assert_int_equal(cfg.max_sessions, 16);
	assert_int_equal(cfg.max_flows, 32);
	assert_int_equal(cfg.max_duration_s, 300);
	assert_int_equal(cfg.dns_port, 4751);
	assert_int_equal(cfg.dns_port_set, 1);
	assert_string_equal(cfg.dns_zone, "probe.bloatmeter.test");
	assert_int_equal(cfg.verbose, 0);
	free(out);
	free(text);
}

static void test_syntax(void **state)
{
	struct server_config cfg;
	char err[SRVCONFIG_ERR_MAX];

	assert_int_equal(parse("", &cfg, err, sizeof(err)), 0);
	assert_int_equal(parse("\n\n   \n# only a comment\n\t# another\n", &cfg, err, sizeof(err)), 0);
	assert_int_equal(parse("  port   =   5000   # trailing comment\r\n"
			       "max-sessions=3\n"
			       "\tmax-flows\t=\t7\t\n"
			       "max-duration = 60\n"
			       "bind = 127.0.0.1\n"
			       "dns-zone = t.example\n"
			       "verbose = 2", /* no final newline */
			       &cfg, err, sizeof(err)),
			 0);
	assert_int_equal(cfg.port, 5000);
	assert_int_equal(cfg.dns_port, 5001); /* follows port when not given */
	assert_int_equal(cfg.max_sessions, 3);
	assert_int_equal(cfg.max_flows, 7);
	assert_int_equal(cfg.max_duration_s, 60);
	assert_string_equal(cfg.bind_addr, "127.0.0.1");
	assert_string_equal(cfg.dns_zone, "t.example");
	assert_int_equal(cfg.verbose, 2);
	assert_int_equal(parse("dns-port = 0\nport = 65535\n", &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.dns_port, 0);
	assert_int_equal(parse("port = 65535\n", &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.dns_port, 0); /* no port after the last one: off */
}

static void test_errors(void **state)
{
	char longline[SRVCONFIG_MAX_LINE + 40];
	const char nul[] = "port = 1\nbind = a\0b\n";

	EXPECT("port = 1\n\nfoo = 2\n", "3: unknown key \"foo\"");
	EXPECT("Port = 1\n", "1: unknown key \"Port\"");
	EXPECT("port = 1\nport = 2\n", "2: repeated key \"port\"");
	EXPECT("# c\nport 4750\n", "2: missing \"=\" in \"port 4750\" (lines are key = value)");
	EXPECT("= 5\n", "1: missing key before \"=\"");
	EXPECT("port =\n", "1: empty value for \"port\"");
	EXPECT("port = # just a comment\n", "1: empty value for \"port\"");
	EXPECT("port = 70000\n", "1: invalid port \"70000\" (1-65535)");
	expect_error("a\nb = c\nmax-sessions = 0", 2, "1: missing \"=\" in \"a\" (lines are key = value)");
	expect_error("x\n\nmax-sessions = 0", 2, "1: missing \"=\" in \"x\" (lines are key = value)");
	EXPECT("\n\nmax-sessions = 0", "3: invalid max-sessions \"0\" (1-100000)");
	EXPECT("max-flows = 1025", "1: invalid max-flows \"1025\" (1-1024)");
	EXPECT("max-duration = 4", "1: invalid max-duration \"4\" (5-86400 s)");
	EXPECT("dns-port = -1", "1: invalid dns-port \"-1\" (0-65535, 0 = off)");
	EXPECT("verbose = 3", "1: invalid verbose \"3\" (0-2: warnings, information, debug)");
	EXPECT("port = 12abc", "1: invalid port \"12abc\" (1-65535)");
	EXPECT("port = 1 2", "1: invalid port \"1 2\" (1-65535)");
	EXPECT("bind = a b", "1: invalid bind \"a b\" (an IPv4 or IPv6 address or a host name)");
	/* '#' right after a value character is part of the value, not a comment */
	EXPECT("port = 5#x", "1: invalid port \"5#x\" (1-65535)");
	expect_error("dns-zone = a..b", 15,
		     "1: invalid dns-zone \"a..b\" (a DNS name: labels of 1-63 letters, digits, '-' "
		     "or '_', at most 253 characters)");
	EXPECT("config = /x", "1: unknown key \"config\"");
	EXPECT("\x01\x7f = 1", "1: unknown key \"??\"");
	expect_error(nul, sizeof(nul) - 1, "2: NUL byte in the line");
	/* an over-long line: exactly the limit is fine, one byte more is not */
	memset(longline, ' ', sizeof(longline));
	memcpy(longline, "\nport = 1", 9);
	{
		struct server_config cfg;
		char err[SRVCONFIG_ERR_MAX];

		srvconfig_defaults(&cfg);
		assert_int_equal(srvconfig_parse(longline, SRVCONFIG_MAX_LINE + 1, &cfg, err,
						 sizeof(err)),
				 0);
	}
	expect_error(longline, SRVCONFIG_MAX_LINE + 2, "2: line longer than 1024 bytes");
}

/* Writes text to a fresh temporary file; returns its path (static buffer). */
static const char *temp_file(const char *text, size_t len)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/bm-srvconfig-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
	return path;
}

static void test_load_and_build(void **state)
{
	const char *over[SRVOPT_COUNT] = { NULL };
	struct server_config cfg, copy;
	char err[SRVCONFIG_ERR_MAX], want[SRVCONFIG_ERR_MAX];
	const char *path;
	char *big;

	/* the default file may be missing; a named one may not */
	assert_int_equal(srvconfig_build("/nonexistent/bloatmeterd.conf", 1, over, &cfg, err,
					 sizeof(err)),
			 0);
	assert_int_equal(cfg.config_loaded, 0);
	assert_int_equal(cfg.port, SERVER_DEFAULT_PORT);
	assert_int_equal(srvconfig_build("/nonexistent/bloatmeterd.conf", 0, over, &cfg, err,
					 sizeof(err)),
			 -1);
	assert_string_equal(err, "/nonexistent/bloatmeterd.conf: cannot open: No such file or directory");

	/* the file's error names path and line */
	path = temp_file("port = 6000\n# x\nfoo = 1\n", 24);
	assert_int_equal(srvconfig_build(path, 0, over, &cfg, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s:3: unknown key \"foo\"", path);
	assert_string_equal(err, want);
	unlink(path);

	/* flags override the file; dns-port follows the final port; strings survive a copy */
	path = temp_file("port = 6000\nmax-sessions = 2\nbind = 127.0.0.1\n", 46);
	over[SRVOPT_PORT] = "7000";
	over[SRVOPT_DNS_ZONE] = "z.example";
	assert_int_equal(srvconfig_build(path, 0, over, &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.config_loaded, 1);
	assert_string_equal(cfg.config_path, path);
	assert_int_equal(cfg.port, 7000);
	assert_int_equal(cfg.dns_port, 7001);
	assert_int_equal(cfg.max_sessions, 2);
	srvconfig_copy(&copy, &cfg);
	memset(&cfg, 0, sizeof(cfg));
	assert_string_equal(copy.bind_addr, "127.0.0.1");
	assert_string_equal(copy.dns_zone, "z.example");
	/* a bad override is reported like a bad flag */
	over[SRVOPT_MAX_FLOWS] = "0";
	assert_int_equal(srvconfig_build(path, 0, over, &cfg, err, sizeof(err)), -1);
	assert_string_equal(err, "invalid max-flows \"0\" (1-1024)");
	unlink(path);

	/* bounded: a file over 64 KiB is refused whole */
	big = malloc(SRVCONFIG_MAX_FILE + 1);
	assert_non_null(big);
	memset(big, '\n', SRVCONFIG_MAX_FILE + 1);
	path = temp_file(big, SRVCONFIG_MAX_FILE + 1);
	assert_int_equal(srvconfig_load(path, &cfg, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s: larger than 64 KiB", path);
	assert_string_equal(err, want);
	unlink(path);
	path = temp_file(big, SRVCONFIG_MAX_FILE);
	assert_int_equal(srvconfig_load(path, &cfg, err, sizeof(err)), 0);
	unlink(path);
	free(big);
}

/* The table drives the command line too: names and short flags. */
static void test_table(void **state)
{
	struct server_config cfg;
	char err[SRVCONFIG_ERR_MAX];

	assert_string_equal(srvconfig_option_name(SRVOPT_MAX_SESSIONS), "max-sessions");
	assert_int_equal(srvconfig_find_short('p'), SRVOPT_PORT);
	assert_int_equal(srvconfig_find_short('b'), SRVOPT_BIND);
	assert_int_equal(srvconfig_find_short('v'), SRVOPT_VERBOSE);
	assert_int_equal(srvconfig_find_short('x'), -1);
	assert_int_equal(srvconfig_find_short(0), -1);
	srvconfig_defaults(&cfg);
	assert_int_equal(srvconfig_set(&cfg, SRVOPT_MAX_DURATION, "86400", err, sizeof(err)), 0);
	assert_int_equal(cfg.max_duration_s, 86400);
	assert_int_equal(srvconfig_set(&cfg, SRVOPT_PORT, "", err, sizeof(err)), -1);
	/* untrusted text in an error is bounded and printable */
	assert_int_equal(srvconfig_set(&cfg, SRVOPT_PORT,
				       "\x1b[31mAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
				       err, sizeof(err)),
			 -1);
	assert_string_equal(err, "invalid port \"?[31mAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA...\" (1-65535)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_example_as_shipped),
		cmocka_unit_test(test_example_uncommented),
		cmocka_unit_test(test_syntax),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_load_and_build),
		cmocka_unit_test(test_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_httptarget: the HTTP target URL parser (schemes, default and explicit ports, IPv6
 * literals, path prefixes) with its refusals, and the endpoint URLs built from a target. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "client/model/httptarget.h"

/* url must parse into exactly these parts. */
static void expect_ok(const char *url, int tls, const char *host, int v6, unsigned port,
		      const char *path)
{
	struct httptarget t;
	char err[HTTPTARGET_ERR_MAX] = "";

	assert_int_equal(httptarget_parse(&t, url, err, sizeof(err)), 0);
	assert_int_equal(t.tls, tls);
	assert_string_equal(t.host, host);
	assert_int_equal(t.host_v6, v6);
	assert_int_equal(t.port, port);
	assert_string_equal(t.path, path);
}

/* url must be refused with exactly want. */
static void expect_bad(const char *url, const char *want)
{
	struct httptarget t;
	char err[HTTPTARGET_ERR_MAX] = "";

	assert_int_equal(httptarget_parse(&t, url, err, sizeof(err)), -1);
	assert_string_equal(err, want);
}

static void test_accepts(void **state)
{
	(void)state;
	expect_ok("https://speed.cloudflare.com", 1, "speed.cloudflare.com", 0, 443, "");
	expect_ok("http://192.0.2.1", 0, "192.0.2.1", 0, 80, "");
	expect_ok("HTTP://Example.net:8080/", 0, "Example.net", 0, 8080, "");
	expect_ok("https://[2001:db8::1]:8443/speed/test//", 1, "2001:db8::1", 1, 8443,
		  "/speed/test");
	expect_ok("http://[::1]", 0, "::1", 1, 80, "");
	expect_ok("http://h:65535/x", 0, "h", 0, 65535, "/x");
}

static void test_refuses(void **state)
{
	(void)state;
	expect_bad("ftp://h", "the URL does not start with http:// or https://");
	expect_bad("h:80", "the URL does not start with http:// or https://");
	expect_bad("http://", "the URL has no host");
	expect_bad("http:///x", "the URL has no host");
	expect_bad("http://:80", "the URL has no host");
	expect_bad("http://u:p@h", "the URL carries user information, which is not supported");
	expect_bad("http://h:0", "the URL's port is not a number from 1 to 65535");
	expect_bad("http://h:65536", "the URL's port is not a number from 1 to 65535");
	expect_bad("http://h:-1", "the URL's port is not a number from 1 to 65535");
	expect_bad("http://h:", "the URL's port is not a number from 1 to 65535");
	expect_bad("http://h:080800", "the URL's port is not a number from 1 to 65535");
	expect_bad("http://h?bytes=1", "the URL has a query or fragment; give only the base URL");
	expect_bad("http://h/p#f", "the URL has a query or fragment; give only the base URL");
	expect_bad("http://h/a b", "the URL has a byte outside printable ASCII");
	expect_bad("http://h\x01/", "the URL's host has a character a host cannot have");
	expect_bad("http://[::1", "the URL's IPv6 host lacks its closing bracket");
	expect_bad("http://[::1]x", "the URL has bytes after its IPv6 host");
	expect_bad("http://[host]", "the URL's host has a character a host cannot have");
	expect_bad("http://[1.2.3.4]", "the URL's bracketed host is not an IPv6 address");
	expect_bad("http://a:b:c", "the URL's port is not a number from 1 to 65535");
}

static void test_lengths(void **state)
{
	char url[HTTPTARGET_URL_MAX + 16], host[HTTPTARGET_HOST_MAX + 2];

	(void)state;
	memset(host, 'a', sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	snprintf(url, sizeof(url), "http://%s", host);
	expect_bad(url, "the URL's host is too long");
	host[HTTPTARGET_HOST_MAX - 1] = '\0'; /* 253 bytes: the longest a name can be */
	snprintf(url, sizeof(url), "http://%s", host);
	expect_ok(url, 0, host, 0, 80, "");
	memset(url, 'a', sizeof(url) - 1);
	url[sizeof(url) - 1] = '\0';
	memcpy(url, "http://h/", 9);
	expect_bad(url, "the URL is too long");
	url[HTTPTARGET_PATH_MAX + 9] = '\0';
	expect_bad(url, "the URL's path is too long");
}

static void test_urls(void **state)
{
	struct httptarget t;
	char err[HTTPTARGET_ERR_MAX], out[HTTPTARGET_URL_MAX + 64], small[24];

	(void)state;
	assert_int_equal(httptarget_parse(&t, "https://[2001:db8::1]/s/", err, sizeof(err)), 0);
	assert_int_equal(httptarget_down_url(&t, 0, out, sizeof(out)), 0);
	assert_string_equal(out, "https://[2001:db8::1]:443/s/__down?bytes=0");
	assert_int_equal(httptarget_down_url(&t, UINT64_C(25000000), out, sizeof(out)), 0);
	assert_string_equal(out, "https://[2001:db8::1]:443/s/__down?bytes=25000000");
	assert_int_equal(httptarget_up_url(&t, out, sizeof(out)), 0);
	assert_string_equal(out, "https://[2001:db8::1]:443/s/__up");
	assert_int_equal(httptarget_format(&t, out, sizeof(out)), 0);
	assert_string_equal(out, "https://[2001:db8::1]:443/s");
	assert_int_equal(httptarget_up_url(&t, small, sizeof(small)), -1);
	assert_int_equal(httptarget_parse(&t, HTTPTARGET_DEFAULT, err, sizeof(err)), 0);
	assert_int_equal(httptarget_up_url(&t, out, sizeof(out)), 0);
	assert_string_equal(out, "https://speed.cloudflare.com:443/__up");
}

static void test_is_url(void **state)
{
	(void)state;
	assert_true(httptarget_is_url("http://h"));
	assert_true(httptarget_is_url("HTTPS://h"));
	assert_false(httptarget_is_url("h"));
	assert_false(httptarget_is_url("http:/h"));
	assert_false(httptarget_is_url("httpsx://h"));
	assert_false(httptarget_is_url(""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepts), cmocka_unit_test(test_refuses),
		cmocka_unit_test(test_lengths), cmocka_unit_test(test_urls),
		cmocka_unit_test(test_is_url),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

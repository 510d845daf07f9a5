/* test_webhttp: the public listener's request head parser (server/webhttp.c) and its bytes=
 * reader: what it accepts, what it refuses and with which status, and its bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "server/webhttp.h"

static enum webhttp_status parse(const char *text, struct webhttp_req *req)
{
	const char *why;

	return webhttp_parse(text, strlen(text), req, &why);
}

static void test_down_request(void **state)
{
	struct webhttp_req req;
	const char *head = "GET /__down?measId=7&bytes=25000&during=download HTTP/1.1\r\n"
			   "Host: x\r\nConnection: keep-alive\r\n\r\nGET /next";
	uint64_t bytes = 99;

	assert_int_equal(parse(head, &req), WEBHTTP_DONE);
	assert_int_equal(req.method, WEBHTTP_GET);
	assert_string_equal(req.path, "/__down");
	assert_int_equal(req.head_len, strstr(head, "GET /next") - head);
	assert_true(req.keep_alive);
	assert_int_equal(webhttp_query_bytes(req.query, &bytes), 0);
	assert_int_equal(bytes, 25000);
}

static void test_up_lengths(void **state)
{
	struct webhttp_req req;

	assert_int_equal(parse("POST /__up HTTP/1.1\r\ncontent-length: 1073741824\r\n\r\n", &req),
			 WEBHTTP_DONE);
	assert_true(req.has_length);
	assert_int_equal(req.content_length, 1073741824ULL);
	assert_int_equal(parse("POST /__up HTTP/1.1\r\nContent-Length: 1073741825\r\n\r\n", &req),
			 WEBHTTP_BAD);
	assert_int_equal(parse("POST /__up HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
			       &req), WEBHTTP_BAD);
	assert_int_equal(parse("POST /__up HTTP/1.1\r\nContent-Length: -1\r\n\r\n", &req), WEBHTTP_BAD);
	assert_int_equal(parse("POST /__up HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", &req),
			 WEBHTTP_DONE);
	assert_true(req.chunked);
	assert_int_equal(parse("POST /__up HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
			       "Content-Length: 5\r\n\r\n", &req), WEBHTTP_BAD);
	assert_int_equal(parse("POST /__up HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", &req),
			 WEBHTTP_NOT_IMPL);
	assert_int_equal(parse("POST /api/v1/results HTTP/1.1\r\n"
			       "Content-Type: application/json; charset=utf-8\r\n\r\n", &req),
			 WEBHTTP_DONE);
	assert_true(req.json);
}

static void test_refusals(void **state)
{
	struct webhttp_req req;
	char big[WEBHTTP_MAX_HEAD + 16];
	const char *why;

	assert_int_equal(parse("GET /__down HTTP/1.1\r\nHost: x\r\n", &req), WEBHTTP_MORE);
	assert_int_equal(parse("GET /__down HTTP/2.0\r\n\r\n", &req), WEBHTTP_BAD);
	assert_int_equal(parse("GET /__down HTTP/1.2\r\n\r\n", &req), WEBHTTP_VERSION);
	assert_int_equal(parse("GET /__down HTTP/1.1\nHost: x\r\n\r\n", &req), WEBHTTP_BAD);
	assert_int_equal(parse("GET /a\rb HTTP/1.1\r\n\r\n", &req), WEBHTTP_BAD);
	assert_int_equal(parse("GET __down HTTP/1.1\r\n\r\n", &req), WEBHTTP_BAD);
	assert_int_equal(parse("GET /__down HTTP/1.1\r\n folded: x\r\n\r\n", &req), WEBHTTP_BAD);
	assert_int_equal(parse("GET /__down HTTP/1.1\r\nNoColon\r\n\r\n", &req), WEBHTTP_BAD);
	assert_int_equal(parse("\r\n\r\n", &req), WEBHTTP_BAD);
	/* No blank line within the bound: refused, not waited for. */
	memset(big, 'a', sizeof(big));
	memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
	assert_int_equal(webhttp_parse(big, sizeof(big), &req, &why), WEBHTTP_TOO_BIG);
	assert_int_equal(webhttp_parse(big, WEBHTTP_MAX_HEAD - 1, &req, &why), WEBHTTP_MORE);
}

static void test_connection(void **state)
{
	struct webhttp_req req;

	assert_int_equal(parse("GET / HTTP/1.1\r\nConnection: Keep-Alive, Close\r\n\r\n", &req),
			 WEBHTTP_DONE);
	assert_false(req.keep_alive);
	assert_int_equal(parse("GET / HTTP/1.0\r\n\r\n", &req), WEBHTTP_DONE);
	assert_false(req.keep_alive);
	assert_int_equal(parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", &req),
			 WEBHTTP_DONE);
	assert_true(req.keep_alive);
}

static void test_query_bytes(void **state)
{
	uint64_t b = 0;

	assert_int_equal(webhttp_query_bytes("bytes=0", &b), 0);
	assert_int_equal(b, 0);
	assert_int_equal(webhttp_query_bytes("bytes=1073741824", &b), 0);
	assert_int_equal(webhttp_query_bytes("bytes=1073741825", &b), -1);
	assert_int_equal(webhttp_query_bytes("bytes=-5", &b), -1);
	assert_int_equal(webhttp_query_bytes("bytes=1e6", &b), -1);
	assert_int_equal(webhttp_query_bytes("bytes=", &b), -1);
	assert_int_equal(webhttp_query_bytes("measId=1", &b), -1);
	assert_int_equal(webhttp_query_bytes("", &b), -1);
	assert_int_equal(webhttp_query_bytes("xbytes=5&bytes=6", &b), 0);
	assert_int_equal(b, 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_down_request), cmocka_unit_test(test_up_lengths),
		cmocka_unit_test(test_refusals),     cmocka_unit_test(test_connection),
		cmocka_unit_test(test_query_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

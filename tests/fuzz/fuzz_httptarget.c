/* fuzz_httptarget: hostile bytes as an HTTP target URL (a command-line argument or the
 * configuration's default-target). Whatever the text, the parser stays inside it, refuses with a
 * reason, and keeps only targets whose endpoint URLs can be built: a bounded host of host
 * characters, a port of 1-65535, and a printable path without query or fragment. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client/model/httptarget.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_httptarget_check(const struct httptarget *t)
{
	char url[HTTPTARGET_URL_MAX + 64];
	size_t hl = strnlen(t->host, sizeof(t->host)), pl = strnlen(t->path, sizeof(t->path));

	if (hl == 0 || hl >= sizeof(t->host) || pl >= sizeof(t->path) || t->port == 0 ||
	    strpbrk(t->host, "/?#@[] \t\r\n") != NULL || strpbrk(t->path, "?# \t\r\n") != NULL ||
	    (pl > 0 && (t->path[0] != '/' || t->path[pl - 1] == '/')))
		abort();
	if (httptarget_down_url(t, UINT64_MAX, url, sizeof(url)) != 0 ||
	    httptarget_up_url(t, url, sizeof(url)) != 0 || httptarget_format(t, url, sizeof(url)) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size heap copy with its terminator: ASan sees any read past the string. */
	char *str = malloc(size + 1);
	struct httptarget t;
	char err[HTTPTARGET_ERR_MAX];
	int rc;

	if (str == NULL)
		abort();
	memcpy(str, data, size);
	str[size] = '\0';
	err[0] = '\0';
	rc = httptarget_parse(&t, str, err, sizeof(err));
	if (rc == 0)
		fuzz_httptarget_check(&t);
	else if (rc != -1 || strncmp(err, "the URL", 7) != 0)
		abort(); /* every refusal says why */
	free(str);
	return 0;
}

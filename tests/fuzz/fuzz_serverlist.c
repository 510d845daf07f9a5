/* fuzz_serverlist: hostile bytes as a --server-list file and as a --servers list. Whatever the
 * text, the parsers stay inside it, name the line of any refusal, and keep only entries a
 * connect could use: a host of bounded length and a port of 1-65535. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client/model/fleet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every stored entry is usable and unique; n is within the limit. */
static void fuzz_serverlist_check(const struct fleet *f)
{
	if (f->n < 1 || f->n > FLEET_MAX || f->chosen != -1)
		abort();
	for (int i = 0; i < f->n; i++) {
		const struct fleet_candidate *c = &f->cand[i];
		size_t len = strnlen(c->host, sizeof(c->host));

		if (len == 0 || len >= sizeof(c->host) || c->port == 0 ||
		    strpbrk(c->host, " \t\r\n#,[]") != NULL)
			abort();
		for (int k = 0; k < i; k++)
			if (f->cand[k].port == c->port && strcasecmp(f->cand[k].host, c->host) == 0)
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size heap copy without a terminator: ASan sees any read past the text. */
	char *buf = malloc(size ? size : 1), *str = malloc(size + 1);
	struct fleet *f = malloc(sizeof(*f));
	char err[FLEET_ERR_MAX];
	int rc;

	if (buf == NULL || str == NULL || f == NULL)
		abort();
	memcpy(buf, data, size);
	fleet_init(f);
	err[0] = '\0';
	rc = fleet_parse_text(f, buf, size, 4750, err, sizeof(err));
	if (rc != 0 && rc != -1)
		abort();
	if (rc == 0)
		fuzz_serverlist_check(f);
	else if ((err[0] < '1' || err[0] > '9' || strstr(err, ": ") == NULL) &&
		 strcmp(err, "no servers listed") != 0)
		abort(); /* every refusal names its line */
	/* The same bytes as one --servers argument (up to the first NUL). */
	memcpy(str, data, size);
	str[size] = '\0';
	fleet_init(f);
	err[0] = '\0';
	rc = fleet_parse_list(f, str, 4750, err, sizeof(err));
	if (rc == 0)
		fuzz_serverlist_check(f);
	else if (rc != -1 || err[0] == '\0')
		abort();
	free(f);
	free(str);
	free(buf);
	return 0;
}

/* fuzz_summary: hostile bytes as a client's `summary` control message — the frame body
 * parser, then the strict validator (server/testring.c), whose accepted values must be within
 * their documented ranges, and the API's JSON of a test carrying them. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "common/wire.h"
#include "server/testring.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* v is NAN (absent) or finite within lo..hi. */
static void in_range(double v, double lo, double hi)
{
	if (!isnan(v) && !(isfinite(v) && v >= lo && v <= hi))
		abort();
}

static void fuzz_summary_check(const struct test_client_summary *c)
{
	struct test_summary s;
	json_object *o;

	if (!c->valid)
		abort();
	in_range(c->idle_ms, 0, 60000);
	for (int d = 0; d < 2; d++) {
		in_range(c->increase_ms[d], -1000, 60000);
		in_range(c->buffer_ms[d], 0, 60000);
		in_range(c->throughput_bps[d], 0, 1e12);
	}
	if (memchr(c->grade, '\0', sizeof(c->grade)) == NULL)
		abort();
	memset(&s, 0, sizeof(s));
	s.reported = *c;
	o = testring_summary_json(&s);
	if (o != NULL)
		(void)json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	json_object_put(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct test_client_summary c;
	char err[160];
	json_object *msg = wire_ctrl_parse(data, size, err, sizeof(err));

	if (msg == NULL)
		return 0;
	memset(&c, 0, sizeof(c));
	if (testring_parse_summary(msg, &c) == 0)
		fuzz_summary_check(&c);
	json_object_put(msg);
	return 0;
}

/* webresult: browser results. A result is only what the browser says about itself: it is
 * validated strictly (so /api/v1/tests and /metrics stay well-formed whatever is posted),
 * bounded in rate, and labelled "browser" wherever it is shown. */
#include "server/webresult.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "common/sock.h"

/* A figure: a finite number 0..max, or null (NAN). 0 or -1. */
static int webresult_number(json_object *v, double max, double *out)
{
	double d;

	if (v == NULL || json_object_is_type(v, json_type_null)) {
		*out = NAN;
		return 0;
	}
	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		return -1;
	d = json_object_get_double(v);
	if (!isfinite(d) || d < 0 || d > max)
		return -1;
	*out = d;
	return 0;
}

/* {"mbps":N,"loaded_ms":N,"increase_ms":N} of one direction (d). 0 or -1. */
static int webresult_direction(json_object *o, struct webresult *out, int d)
{
	double mbps = NAN;

	out->sum.throughput_bps[d] = NAN;
	out->sum.increase_ms[d] = NAN;
	out->loaded_ms[d] = NAN;
	if (o == NULL || json_object_is_type(o, json_type_null))
		return 0;
	if (!json_object_is_type(o, json_type_object))
		return -1;
	json_object_object_foreach(o, key, v) {
		int rc;

		if (strcmp(key, "mbps") == 0)
			rc = webresult_number(v, WEBRESULT_MAX_MBPS, &mbps);
		else if (strcmp(key, "loaded_ms") == 0)
			rc = webresult_number(v, WEBRESULT_MAX_MS, &out->loaded_ms[d]);
		else if (strcmp(key, "increase_ms") == 0)
			rc = webresult_number(v, WEBRESULT_MAX_MS, &out->sum.increase_ms[d]);
		else
			rc = -1;
		if (rc < 0)
			return -1;
	}
	out->sum.throughput_bps[d] = mbps * 1e6;
	return 0;
}

static int webresult_grade(json_object *v, char *grade, size_t len)
{
	static const char *const grades[] = { "A+", "A", "B", "C", "D", "F" };
	const char *g;

	if (v == NULL || !json_object_is_type(v, json_type_string))
		return -1;
	g = json_object_get_string(v);
	for (size_t i = 0; i < sizeof(grades) / sizeof(grades[0]); i++)
		if (strcmp(g, grades[i]) == 0) {
			snprintf(grade, len, "%s", g);
			return 0;
		}
	return -1;
}

/* Printable ASCII only, so the name is safe in JSON, HTML and logs alike. */
static int webresult_engine(json_object *v, char *engine, size_t len)
{
	const char *s;
	size_t n;

	if (v == NULL || json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return -1;
	s = json_object_get_string(v);
	n = (size_t)json_object_get_string_len(v);
	if (n > WEBRESULT_ENGINE_MAX || n >= len || strlen(s) != n)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return -1;
	memcpy(engine, s, n + 1);
	return 0;
}

static int webresult_fields(json_object *msg, struct webresult *out, const char **why)
{
	json_object *version = NULL, *grade = NULL, *idle = NULL, *down = NULL, *up = NULL,
		    *engine = NULL;

	json_object_object_foreach(msg, key, v) {
		json_object **slot = strcmp(key, "version") == 0   ? &version
				     : strcmp(key, "grade") == 0   ? &grade
				     : strcmp(key, "idle_ms") == 0 ? &idle
				     : strcmp(key, "down") == 0	   ? &down
				     : strcmp(key, "up") == 0	   ? &up
				     : strcmp(key, "engine") == 0  ? &engine
								   : NULL;

		if (slot == NULL) {
			*why = "unknown key in the result";
			return -1;
		}
		*slot = v;
	}
	*why = "version must be 1";
	if (version == NULL || !json_object_is_type(version, json_type_int) ||
	    json_object_get_int64(version) != 1)
		return -1;
	*why = "grade must be one of A+, A, B, C, D, F";
	if (webresult_grade(grade, out->sum.grade, sizeof(out->sum.grade)) < 0)
		return -1;
	*why = "idle_ms must be a number from 0 to 1000000 or null";
	if (webresult_number(idle, WEBRESULT_MAX_MS, &out->sum.idle_ms) < 0)
		return -1;
	*why = "down and up must be objects of mbps, loaded_ms and increase_ms (numbers >= 0 or null)";
	if (webresult_direction(down, out, TESTRING_DOWN) < 0 ||
	    webresult_direction(up, out, TESTRING_UP) < 0)
		return -1;
	*why = "engine must be printable text of at most 64 characters";
	return webresult_engine(engine, out->engine, sizeof(out->engine));
}

int webresult_parse(const char *buf, size_t len, struct webresult *out, const char **why)
{
	json_tokener *tok;
	json_object *msg;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	out->sum.buffer_ms[0] = out->sum.buffer_ms[1] = NAN;
	*why = "a result is at most 4096 bytes of JSON";
	if (len == 0 || len > WEBRESULT_MAX_BYTES)
		return -1;
	*why = "the result is not one JSON object";
	if (memchr(buf, '\0', len) != NULL || (tok = json_tokener_new_ex(4)) == NULL)
		return -1;
	msg = json_tokener_parse_ex(tok, buf, (int)len);
	if (msg != NULL && json_tokener_get_error(tok) == json_tokener_success &&
	    json_tokener_get_parse_end(tok) == len && json_object_is_type(msg, json_type_object))
		rc = webresult_fields(msg, out, why);
	json_object_put(msg);
	json_tokener_free(tok);
	if (rc == 0)
		out->sum.valid = 1;
	return rc;
}

void webresult_limiter_init(struct webresult_limiter *l, int64_t now_ns)
{
	memset(l, 0, sizeof(*l));
	limits_bucket_init(&l->all, WEBRESULT_ALL_PER_MIN / 60.0, WEBRESULT_ALL_PER_MIN / 6.0,
			   now_ns);
}

/* The slot of peer: its own, else a free one, else the fullest bucket's (forgetting a
 * client whose bucket is full again loses nothing). */
static int webresult_slot(struct webresult_limiter *l, const struct sockaddr *peer,
			  int64_t now_ns)
{
	int free_slot = -1, fullest = 0;
	double most = -1;

	for (int i = 0; i < WEBRESULT_CLIENTS; i++) {
		double avail;

		if (!l->client[i].used) {
			if (free_slot < 0)
				free_slot = i;
			continue;
		}
		if (sock_same_client((const struct sockaddr *)&l->client[i].peer, peer))
			return i;
		avail = limits_bucket_avail(&l->client[i].bucket, now_ns);
		if (avail > most) {
			most = avail;
			fullest = i;
		}
	}
	return free_slot >= 0 ? free_slot : fullest;
}

int webresult_limiter_take(struct webresult_limiter *l, const struct sockaddr *peer,
			   int64_t now_ns)
{
	int i = webresult_slot(l, peer, now_ns);

	if (!l->client[i].used ||
	    !sock_same_client((const struct sockaddr *)&l->client[i].peer, peer)) {
		socklen_t len = peer->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
							    : sizeof(struct sockaddr_in);

		memset(&l->client[i].peer, 0, sizeof(l->client[i].peer));
		memcpy(&l->client[i].peer, peer, len);
		l->client[i].used = 1;
		limits_bucket_init(&l->client[i].bucket, WEBRESULT_PER_CLIENT_PER_MIN / 60.0,
				   WEBRESULT_PER_CLIENT_PER_MIN, now_ns);
	}
	if (limits_bucket_avail(&l->client[i].bucket, now_ns) < 1 ||
	    !limits_bucket_take(&l->all, now_ns, 1))
		return 0;
	return limits_bucket_take(&l->client[i].bucket, now_ns, 1);
}

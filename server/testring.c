/* testring: the ring of recent tests' summaries, their JSON form for the API, the
 * latency-increase histograms, the strict validator of the client's `summary` message, and
 * the per-tick sampling of a running test's download flows. */
#include "server/testring.h"

#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/clock.h"
#include "common/jsonb.h"
#include "common/sock.h"
#include "common/util.h"
#include "server/bulk.h"
#include "server/session.h"

/* Latency increase: 5 ms is excellent, a second is a broken network. */
static const double testring_bounds_s[TESTRING_BUCKETS] = { 0.005, 0.01, 0.02, 0.05, 0.1,
							    0.2,   0.5,  1,    2,    5 };

double testring_bucket_s(int i)
{
	return testring_bounds_s[i];
}

const char *testring_series_direction(enum testring_series s)
{
	return s == TESTRING_CLI_UP || s == TESTRING_BROWSER_UP ? "upload" : "download";
}

const char *testring_series_source(enum testring_series s)
{
	return s == TESTRING_SRV_DOWN			       ? "server"
	       : s == TESTRING_BROWSER_DOWN || s == TESTRING_BROWSER_UP ? "browser"
								      : "client";
}

void testring_init(struct testring *r)
{
	memset(r, 0, sizeof(*r));
}

static void testring_observe(struct testring_hist *h, double ms)
{
	double s = ms > 0 ? ms / 1e3 : 0;

	if (!isfinite(ms))
		return;
	for (int i = 0; i < TESTRING_BUCKETS; i++) {
		if (s <= testring_bounds_s[i]) {
			h->bucket[i]++;
			break;
		}
	}
	h->count++;
	h->sum_s += s;
}

void testring_push(struct testring *r, const struct test_summary *s)
{
	r->e[r->next] = *s;
	r->next = (r->next + 1) % TESTRING_CAP;
	if (r->n < TESTRING_CAP)
		r->n++;
	testring_observe(&r->hist[TESTRING_SRV_DOWN], s->srv_rtt_increase_ms);
	if (s->reported.valid) {
		const double *inc = s->reported.increase_ms;
		int browser = strcmp(s->source, "browser") == 0;

		testring_observe(&r->hist[browser ? TESTRING_BROWSER_DOWN : TESTRING_CLI_DOWN],
				 inc[TESTRING_DOWN]);
		testring_observe(&r->hist[browser ? TESTRING_BROWSER_UP : TESTRING_CLI_UP],
				 inc[TESTRING_UP]);
	}
}

const struct test_summary *testring_get(const struct testring *r, size_t i)
{
	if (i >= r->n)
		return NULL;
	return &r->e[(r->next + TESTRING_CAP - 1 - i) % TESTRING_CAP];
}

/* {"download": down, "upload": up} */
static json_object *testring_pair(struct jb *b, json_object *down, json_object *up)
{
	return jb_pair(b, "download", down, "upload", up);
}

static json_object *testring_reported_json(struct jb *b, const struct test_client_summary *c)
{
	json_object *o;

	if (!c->valid)
		return NULL;
	o = jb_obj(b);
	jb_add(b, o, "idle_latency_ms", jb_num(b, c->idle_ms, 2));
	jb_add(b, o, "latency_increase_ms",
	       testring_pair(b, jb_num(b, c->increase_ms[0], 2), jb_num(b, c->increase_ms[1], 2)));
	jb_add(b, o, "buffer_ms",
	       testring_pair(b, jb_num(b, c->buffer_ms[0], 2), jb_num(b, c->buffer_ms[1], 2)));
	jb_add(b, o, "throughput_bps", testring_pair(b, jb_num(b, c->throughput_bps[0], 0),
						     jb_num(b, c->throughput_bps[1], 0)));
	jb_add(b, o, "grade", jb_str(b, c->grade));
	return o;
}

static json_object *testring_summary_build(struct jb *b, const struct test_summary *s)
{
	json_object *o = jb_obj(b), *srv = jb_obj(b);
	char start[40];

	util_iso8601(s->start_real_ns, start, sizeof(start));
	jb_add(b, o, "id", jb_int(b, (int64_t)s->id));
	jb_add(b, o, "source", jb_str(b, s->source[0] ? s->source : "cli"));
	if (s->engine[0])
		jb_add(b, o, "engine", jb_str(b, s->engine));
	jb_add(b, o, "start", jb_str(b, start));
	jb_add(b, o, "duration_s", jb_num(b, s->duration_s, 3));
	jb_add(b, o, "client", jb_str(b, s->client));
	jb_add(b, o, "cc", jb_str(b, s->cc));
	jb_add(b, o, "flows", testring_pair(b, jb_int(b, s->flows[0]), jb_int(b, s->flows[1])));
	jb_add(b, o, "bytes", testring_pair(b, jb_int(b, (int64_t)s->bytes[0]),
					    jb_int(b, (int64_t)s->bytes[1])));
	jb_add(b, o, "rate_bps", testring_pair(b, jb_num(b, s->rate_bps[0], 0),
					       jb_num(b, s->rate_bps[1], 0)));
	jb_add(b, o, "udp_probes", jb_int(b, (int64_t)s->udp_probes));
	jb_add(b, srv, "download_rtt_increase_ms", jb_num(b, s->srv_rtt_increase_ms, 2));
	jb_add(b, srv, "download_min_rtt_ms", jb_num(b, s->srv_min_rtt_ms, 3));
	jb_add(b, o, "server", srv);
	jb_add(b, o, "client_reported", testring_reported_json(b, &s->reported));
	return o;
}

json_object *testring_summary_json(const struct test_summary *s)
{
	struct jb b = { 0 };
	json_object *o = testring_summary_build(&b, s);

	if (b.failed) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

json_object *testring_json(const struct testring *r, size_t limit)
{
	struct jb b = { 0 };
	json_object *a = jb_arr(&b);

	for (size_t i = 0; i < limit && i < r->n; i++)
		jb_push(&b, a, testring_summary_build(&b, testring_get(r, i)));
	if (b.failed) {
		json_object_put(a);
		return NULL;
	}
	return a;
}

void testring_mask_addr(const struct sockaddr *sa, char *buf, size_t len)
{
	char txt[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
		struct in6_addr a = s6->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(&a)) {
			snprintf(buf, len, "%u.%u.%u.0/24", a.s6_addr[12], a.s6_addr[13],
				 a.s6_addr[14]);
			return;
		}
		/* A /48 (or /56) is often one household's: the /32 is an ISP's allocation. */
		memset(a.s6_addr + 4, 0, sizeof(a.s6_addr) - 4);
		if (inet_ntop(AF_INET6, &a, txt, sizeof(txt)) == NULL)
			snprintf(txt, sizeof(txt), "?");
		snprintf(buf, len, "%s/32", txt);
		return;
	}
	if (sa->sa_family == AF_INET) {
		const uint8_t *b = (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;

		snprintf(buf, len, "%u.%u.%u.0/24", b[0], b[1], b[2]);
		return;
	}
	snprintf(buf, len, "unknown");
}

/* The keys of a summary message: where a number goes and its sane range. */
struct summary_key {
	const char *name;
	size_t off; /* of the double in struct test_client_summary */
	double lo, hi;
};

#define SUM_OFF(field) offsetof(struct test_client_summary, field)

static const struct summary_key summary_keys[] = {
	{ "idle_latency_ms", SUM_OFF(idle_ms), 0, 60000 },
	/* A loaded median a little below the idle one is noise, not an error. */
	{ "download_increase_ms", SUM_OFF(increase_ms[0]), -1000, 60000 },
	{ "upload_increase_ms", SUM_OFF(increase_ms[1]), -1000, 60000 },
	{ "download_buffer_ms", SUM_OFF(buffer_ms[0]), 0, 60000 },
	{ "upload_buffer_ms", SUM_OFF(buffer_ms[1]), 0, 60000 },
	{ "download_bps", SUM_OFF(throughput_bps[0]), 0, 1e12 },
	{ "upload_bps", SUM_OFF(throughput_bps[1]), 0, 1e12 },
};

static int summary_grade_ok(const char *g)
{
	static const char *const grades[] = { "A+", "A", "B", "C", "D", "F" };

	for (size_t i = 0; i < sizeof(grades) / sizeof(grades[0]); i++)
		if (strcmp(g, grades[i]) == 0)
			return 1;
	return 0;
}

/* One key of the message into c; -1 if unknown or invalid. */
static int summary_key_set(const char *key, json_object *v, struct test_client_summary *c)
{
	if (strcmp(key, "v") == 0 || strcmp(key, "type") == 0)
		return 0; /* checked by the frame parser */
	if (strcmp(key, "grade") == 0) {
		const char *g = json_object_is_type(v, json_type_string) ? json_object_get_string(v)
									 : NULL;

		if (g == NULL || !summary_grade_ok(g))
			return -1;
		snprintf(c->grade, sizeof(c->grade), "%s", g);
		return 0;
	}
	for (size_t i = 0; i < sizeof(summary_keys) / sizeof(summary_keys[0]); i++) {
		const struct summary_key *k = &summary_keys[i];
		double x;

		if (strcmp(key, k->name) != 0)
			continue;
		if (!json_object_is_type(v, json_type_double) &&
		    !json_object_is_type(v, json_type_int))
			return -1;
		x = json_object_get_double(v);
		if (!isfinite(x) || x < k->lo || x > k->hi)
			return -1;
		*(double *)((char *)c + k->off) = x;
		return 0;
	}
	return -1;
}

int testring_parse_summary(json_object *msg, struct test_client_summary *out)
{
	struct test_client_summary c;

	if (!json_object_is_type(msg, json_type_object))
		return -1;
	memset(&c, 0, sizeof(c));
	c.idle_ms = NAN;
	for (int d = 0; d < 2; d++)
		c.increase_ms[d] = c.buffer_ms[d] = c.throughput_bps[d] = NAN;
	json_object_object_foreach(msg, key, v)
	{
		if (summary_key_set(key, v, &c) < 0)
			return -1;
	}
	c.valid = 1;
	*out = c;
	return 0;
}

void testlive_init(struct test_live *l, int64_t now_ns, int64_t now_real_ns)
{
	memset(l, 0, sizeof(*l));
	l->start_real_ns = now_real_ns;
	l->last_tick_ns = now_ns;
	l->stride = 1;
	l->min_rtt_ms = NAN;
	l->reported.valid = 0;
}

/* Keeps one sample in stride; a full array keeps every second one and doubles the stride,
 * so a long test is sampled evenly over its whole length in bounded memory. */
static void testlive_add_rtt(struct test_live *l, float ms)
{
	if (++l->skip < l->stride)
		return;
	l->skip = 0;
	if (l->nrtt == TESTLIVE_SAMPLES) {
		for (size_t i = 0; i < TESTLIVE_SAMPLES / 2; i++)
			l->rtt_inc_ms[i] = l->rtt_inc_ms[2 * i + 1];
		l->nrtt = TESTLIVE_SAMPLES / 2;
		l->stride *= 2;
	}
	l->rtt_inc_ms[l->nrtt++] = ms;
}

void testlive_tick(struct test_live *l, const struct session *s, int64_t now_ns)
{
	double sum = 0;
	int n = 0;

	for (int d = 0; d < 2; d++) {
		if (s->nflows[d] > 0)
			l->active_ns[d] += now_ns - l->last_tick_ns;
		if (s->nflows[d] > l->flows_max[d])
			l->flows_max[d] = s->nflows[d];
	}
	l->last_tick_ns = now_ns;
	for (const struct bulk_flow *f = s->flows; f; f = f->next) {
		struct sock_tcp_stats ti;

		if (f->dir != WIRE_DIR_DOWN || sock_tcp_info(f->fd, &ti) < 0 || ti.min_rtt_us == 0 ||
		    ti.rtt_us == 0)
			continue;
		/* srtt can dip under the windowed minimum only by rounding. */
		sum += ti.rtt_us > ti.min_rtt_us ? ti.rtt_us - ti.min_rtt_us : 0;
		n++;
		if (isnan(l->min_rtt_ms) || ti.min_rtt_us / 1e3 < l->min_rtt_ms)
			l->min_rtt_ms = ti.min_rtt_us / 1e3;
	}
	if (n > 0)
		testlive_add_rtt(l, (float)(sum / n / 1e3));
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return (x > y) - (x < y);
}

static double testlive_median(const struct test_live *l)
{
	float v[TESTLIVE_SAMPLES];
	size_t n = l->nrtt;

	if (n == 0)
		return NAN;
	memcpy(v, l->rtt_inc_ms, n * sizeof(v[0]));
	qsort(v, n, sizeof(v[0]), cmp_float);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

void testlive_finish(const struct test_live *l, const struct session *s, uint64_t udp_probes,
		     int64_t now_ns, struct test_summary *out)
{
	memset(out, 0, sizeof(*out));
	out->id = s->id;
	out->start_real_ns = l->start_real_ns;
	out->duration_s = (double)(now_ns - s->start_ns) / NS_PER_SEC;
	testring_mask_addr((const struct sockaddr *)&s->peer, out->client, sizeof(out->client));
	snprintf(out->cc, sizeof(out->cc), "%s", s->cc);
	out->bytes[TESTRING_DOWN] = s->down_tx_bytes;
	out->bytes[TESTRING_UP] = s->up_rx_bytes;
	for (int d = 0; d < 2; d++) {
		out->flows[d] = l->flows_max[d];
		out->rate_bps[d] = l->active_ns[d] > 0 ? (double)out->bytes[d] * 8 * NS_PER_SEC /
								 (double)l->active_ns[d]
						       : NAN;
	}
	out->udp_probes = udp_probes;
	out->srv_rtt_increase_ms = testlive_median(l);
	out->srv_min_rtt_ms = l->min_rtt_ms;
	out->reported = l->reported;
	snprintf(out->source, sizeof(out->source), "cli");
}

/* flent: writes a run as a gzip'd flent data file (format version 4, rrul series names) that
 * flent 2.1.1 can plot; the mapping is documented in docs/report.md ("flent data file"). */
#include "client/report/flent.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <zlib.h>

#include "client/analysis/analysis.h"
#include "common/fileio.h"
#include "common/jsonb.h"
#include "common/log.h"
#include "common/util.h"

#define FLENT_VERSION 4          /* flent's FILEFORMAT_VERSION */
#define FLENT_STEP_S 0.2         /* rrul's STEP_SIZE */
#define FLENT_MAX_BINS 1000000   /* flent itself refuses more steps */

/* Series names as flent's rrul test defines them. Our load flows are all unmarked, i.e. the
 * best-effort class, so their aggregate is the BE series; BK, CS5, EF and the UDP BK and
 * UDP EF pings were not measured and are left out (flent draws nothing for a missing series,
 * and its "sum" and "avg" series are then exactly our aggregate). The ICMP ping is written
 * when the ICMP probe ran. */
#define S_DOWN "TCP download BE"
#define S_UP "TCP upload BE"
#define S_PING "Ping (ms) UDP BE"
#define S_ICMP "Ping (ms) ICMP"
#define S_HOP "Ping (ms) hop %d"

/* Wall clock (epoch seconds) of client monotonic time t_ns. */
static double flent_epoch(const struct test_result *r, int64_t t_ns)
{
	return (double)(r->start_real_ns + (t_ns - r->t0_ns)) / 1e9;
}

/* Seconds from t0 to the last sample of any series (at least one step). */
static double flent_span_s(const struct test_result *r)
{
	int64_t end = r->t0_ns;

	if (r->ndown > 0 && r->down[r->ndown - 1].t_ns > end)
		end = r->down[r->ndown - 1].t_ns;
	if (r->nup > 0 && r->up[r->nup - 1].t_ns > end)
		end = r->up[r->nup - 1].t_ns;
	for (size_t i = 0; i < r->nprobes; i++) {
		const struct probe_rec *p = &r->probes[i];
		int64_t t = p->received ? p->send_ns + p->rtt_ns : p->send_ns;

		if (t > end)
			end = t;
	}
	return fmax((double)(end - r->t0_ns) / 1e9, FLENT_STEP_S);
}

/* Goodput (Mbit/s) in each bin (x[i-1], x[i]] of the cumulative series s; out[0] and bins
 * not fully covered by samples are NAN. */
static void flent_goodput(const struct test_result *r, const struct tput_rec *s, size_t n,
			  double *out, size_t nbins)
{
	int64_t prev = r->t0_ns;

	out[0] = NAN;
	for (size_t i = 1; i < nbins; i++) {
		int64_t t = r->t0_ns + (int64_t)llround((double)i * FLENT_STEP_S * 1e9);

		out[i] = analysis_rate_bps(s, n, prev, t) / 1e6;
		prev = t;
	}
}

/* Adds one answer received at client time t_ns to its bin (x[i-1], x[i]]. */
static void flent_bin_add(const struct test_result *r, int64_t t_ns, int64_t rtt_ns, double *sum,
			  size_t *cnt, size_t nbins)
{
	double at = (double)(t_ns - r->t0_ns) / 1e9;
	size_t k = at <= 0 ? 0 : (size_t)ceil(at / FLENT_STEP_S - 1e-9);

	if (k >= nbins)
		k = nbins - 1;
	sum[k] += (double)rtt_ns / 1e6;
	cnt[k]++;
}

/* Turns per-bin sums into means (NAN for empty bins) and clears the counts for reuse. */
static void flent_bin_means(double *sum, size_t *cnt, size_t nbins)
{
	for (size_t k = 0; k < nbins; k++) {
		sum[k] = cnt[k] ? sum[k] / (double)cnt[k] : NAN;
		cnt[k] = 0;
	}
}

/* Mean RTT (ms) of the replies received in each bin (x[i-1], x[i]]; NAN for none. Binned by
 * receive time, as flent's irtt runner stamps its samples. sum and cnt have nbins zeros. */
static void flent_ping(const struct test_result *r, double *sum, size_t *cnt, size_t nbins)
{
	for (size_t i = 0; i < r->nprobes; i++) {
		const struct probe_rec *p = &r->probes[i];

		if (p->received)
			flent_bin_add(r, p->send_ns + p->rtt_ns, p->rtt_ns, sum, cnt, nbins);
	}
	flent_bin_means(sum, cnt, nbins);
}

/* The same for an auxiliary probe series (ICMP echo, a hop's TTL-limited probes); 0 when it
 * has no answer. sum and cnt have nbins zeros. */
static int flent_probe_series(const struct test_result *r, const struct probe_series *ps,
			      double *sum, size_t *cnt, size_t nbins)
{
	size_t ok = 0;

	for (size_t i = 0; i < ps->n; i++) {
		if (ps->s[i].status != SAMPLE_OK)
			continue;
		flent_bin_add(r, ps->s[i].send_ns + ps->s[i].rtt_ns, ps->s[i].rtt_ns, sum, cnt,
			      nbins);
		ok++;
	}
	flent_bin_means(sum, cnt, nbins);
	return ok > 0;
}

/* The ICMP echo series to the server; 0 when there is none. */
static int flent_icmp(const struct test_result *r, double *sum, size_t *cnt, size_t nbins)
{
	const struct probe_series *ps = result_find_series(r, "icmp", NULL);

	if (ps == NULL || !ps->available)
		return 0;
	(void)flent_probe_series(r, ps, sum, cnt, nbins);
	return 1;
}

/* The results array (one value or null per x) of v. */
static json_object *flent_series(struct jb *b, const double *v, size_t nbins, int dec)
{
	json_object *a = jb_check(b, json_object_new_array_ext((int)nbins));

	for (size_t i = 0; i < nbins; i++)
		jb_push(b, a, jb_num(b, v[i], dec));
	return a;
}

/* Raw values of a binned series: {t, val} at each bin with a value. We keep cumulative byte
 * counts, not per-interval rates, so the 0.2 s bins are our "raw" goodput (as netperf's demo
 * mode reports one rate per STEP_SIZE in a real rrul run). */
static json_object *flent_raw_bins(struct jb *b, const struct test_result *r, const double *v,
				   size_t nbins, int dec)
{
	json_object *a = jb_check(b, json_object_new_array());

	for (size_t i = 0; i < nbins; i++) {
		json_object *e;

		if (!isfinite(v[i]))
			continue;
		e = jb_check(b, json_object_new_object());
		jb_add(b, e, "t", jb_num(b, (double)r->start_real_ns / 1e9 + (double)i * FLENT_STEP_S, 6));
		jb_add(b, e, "val", jb_num(b, v[i], dec));
		jb_push(b, a, e);
	}
	return a;
}

/* Raw probes in the form of flent's irtt runner: a reply is {seq, t (receive time), val (RTT
 * ms)}; a lost probe is {seq, t (send time), lost: true} without val, which flent skips. */
static json_object *flent_raw_ping(struct jb *b, const struct test_result *r)
{
	json_object *a = jb_check(b, json_object_new_array_ext((int)r->nprobes));

	for (size_t i = 0; i < r->nprobes; i++) {
		const struct probe_rec *p = &r->probes[i];
		json_object *e = jb_check(b, json_object_new_object());

		jb_add(b, e, "seq", jb_check(b, json_object_new_int64(p->seq)));
		if (p->received) {
			jb_add(b, e, "t", jb_num(b, flent_epoch(r, p->send_ns + p->rtt_ns), 6));
			jb_add(b, e, "val", jb_num(b, (double)p->rtt_ns / 1e6, 3));
		} else {
			jb_add(b, e, "t", jb_num(b, flent_epoch(r, p->send_ns), 6));
			jb_add(b, e, "lost", jb_check(b, json_object_new_boolean(1)));
		}
		jb_push(b, a, e);
	}
	return a;
}

/* --per-hop: one ping series per hop, S_HOP with the hop's number (the address is in the
 * NOTE, so the names stay the same across paths and runs can be compared). */
static void flent_hops(struct jb *b, const struct test_result *r, json_object *res,
		       json_object *raw, double *sum, size_t *cnt, size_t nbins)
{
	char name[32];

	if (!r->hops.ran)
		return;
	for (int h = 0; h < r->hops.n && h < HOPPROBE_MAX_TTL; h++) {
		memset(sum, 0, nbins * sizeof(*sum));
		if (!flent_probe_series(r, &r->hop_trace.ttl[h], sum, cnt, nbins))
			continue;
		snprintf(name, sizeof(name), S_HOP, h + 1);
		jb_add(b, res, name, flent_series(b, sum, nbins, 3));
		jb_add(b, raw, name, flent_raw_bins(b, r, sum, nbins, 3));
	}
}

/* The metadata NOTE: what our series are, and which address each hop series probed. */
static void flent_note(const struct test_result *r, char *buf, size_t len)
{
	size_t o;

	snprintf(buf, len, "Written by bloatmeter " BM_VERSION ". TCP * BE is the aggregate goodput "
		 "of all load flows (all unmarked); BK, CS5, EF and UDP BK/EF were not measured. "
		 "Ping (ms) UDP BE is bloatmeter's UDP probe RTT, Ping (ms) ICMP its echo to the "
		 "server (when it ran)");
	o = strlen(buf);
	if (r->hops.ran && o < len)
		o += (size_t)snprintf(buf + o, len - o, "; Ping (ms) hop N is the RTT of the %s "
				      "probes with TTL N (--per-hop):", r->hop_trace.mode ==
				      HOP_MODE_ICMP ? "ICMP" : "UDP");
	for (int h = 0; r->hops.ran && h < r->hops.n && o < len; h++)
		o += (size_t)snprintf(buf + o, len - o, " hop %d %s%s", h + 1,
				      r->hops.row[h].addr[0] ? r->hops.row[h].addr : "*",
				      h + 1 < r->hops.n ? "," : "");
	if (o + 1 < len)
		snprintf(buf + o, len - o, ".");
}

/* Seconds of load, like rrul's LENGTH (which excludes the idle time before and after). */
static double flent_load_s(const struct test_result *r)
{
	double s = 0;

	for (int i = 0; i < r->cfg.nphases; i++)
		if (r->cfg.phases[i] != PHASE_IDLE)
			s += r->cfg.duration_s;
	return s;
}

/* Only keys flent records itself: it copies every metadata key into its settings, so e.g.
 * DELAY would move the ping CDF's cut-off and FORMAT would change its output. */
static json_object *flent_metadata(struct jb *b, const struct test_result *r, double total_s)
{
	json_object *m = jb_check(b, json_object_new_object()), *hosts;
	const char *host = r->cfg.server && *r->cfg.server ? r->cfg.server : r->server_addr;
	char local[256], iso[64], title[160], note[1024 + HOPPROBE_MAX_TTL * (HOP_ADDR_LEN + 12)];

	if (gethostname(local, sizeof(local)) < 0)
		snprintf(local, sizeof(local), "localhost");
	local[sizeof(local) - 1] = '\0';
	util_iso8601(r->start_real_ns, iso, sizeof(iso));
	snprintf(title, sizeof(title), "bloatmeter %s to %s, %d flows per direction", BM_VERSION,
		 r->server_addr, r->cfg.flows);

	jb_add(b, m, "NAME", jb_str(b, "rrul"));
	jb_add(b, m, "TITLE", jb_str(b, title));
	flent_note(r, note, sizeof(note));
	jb_add(b, m, "NOTE", jb_str(b, note));
	jb_add(b, m, "LOCAL_HOST", jb_str(b, local));
	jb_add(b, m, "HOST", jb_str(b, host));
	hosts = jb_check(b, json_object_new_array());
	jb_push(b, hosts, jb_str(b, host));
	jb_add(b, m, "HOSTS", hosts);
	jb_add(b, m, "IP_VERSION", jb_check(b, json_object_new_int(r->server_addr[0] == '[' ? 6 : 4)));
	jb_add(b, m, "LENGTH", jb_num(b, flent_load_s(r), 3));
	jb_add(b, m, "TOTAL_LENGTH", jb_num(b, total_s, 3));
	jb_add(b, m, "STEP_SIZE", jb_num(b, FLENT_STEP_S, 1));
	jb_add(b, m, "TIME", jb_str(b, iso));
	jb_add(b, m, "T0", jb_str(b, iso));
	return m;
}

/* The whole data file as a JSON object; NULL when out of memory. */
static json_object *flent_json(const struct test_result *r)
{
	struct jb b = { 0 };
	double total = flent_span_s(r);
	size_t nbins = (size_t)ceil(total / FLENT_STEP_S - 1e-9) + 1;
	double *down, *up, *ping, *icmp;
	int has_icmp;
	size_t *cnt;
	json_object *o = NULL, *xs, *res, *raw;

	if (nbins > FLENT_MAX_BINS)
		nbins = FLENT_MAX_BINS;
	down = calloc(nbins, sizeof(*down));
	up = calloc(nbins, sizeof(*up));
	ping = calloc(nbins, sizeof(*ping));
	icmp = calloc(nbins, sizeof(*icmp));
	cnt = calloc(nbins, sizeof(*cnt));
	if (down == NULL || up == NULL || ping == NULL || icmp == NULL || cnt == NULL)
		goto out;
	flent_goodput(r, r->down, r->ndown, down, nbins);
	flent_goodput(r, r->up, r->nup, up, nbins);
	flent_ping(r, ping, cnt, nbins);
	has_icmp = flent_icmp(r, icmp, cnt, nbins);

	o = jb_check(&b, json_object_new_object());
	xs = jb_check(&b, json_object_new_array_ext((int)nbins));
	for (size_t i = 0; i < nbins; i++)
		jb_push(&b, xs, jb_num(&b, (double)i * FLENT_STEP_S, 1));
	res = jb_check(&b, json_object_new_object());
	jb_add(&b, res, S_DOWN, flent_series(&b, down, nbins, 3));
	jb_add(&b, res, S_UP, flent_series(&b, up, nbins, 3));
	jb_add(&b, res, S_PING, flent_series(&b, ping, nbins, 3));
	if (has_icmp)
		jb_add(&b, res, S_ICMP, flent_series(&b, icmp, nbins, 3));
	raw = jb_check(&b, json_object_new_object());
	jb_add(&b, raw, S_DOWN, flent_raw_bins(&b, r, down, nbins, 3));
	jb_add(&b, raw, S_UP, flent_raw_bins(&b, r, up, nbins, 3));
	jb_add(&b, raw, S_PING, flent_raw_ping(&b, r));
	if (has_icmp)
		jb_add(&b, raw, S_ICMP, flent_raw_bins(&b, r, icmp, nbins, 3));
	flent_hops(&b, r, res, raw, icmp, cnt, nbins); /* reuses the ICMP series' room */

	jb_add(&b, o, "version", jb_check(&b, json_object_new_int(FLENT_VERSION)));
	jb_add(&b, o, "metadata", flent_metadata(&b, r, (double)(nbins - 1) * FLENT_STEP_S));
	jb_add(&b, o, "x_values", xs);
	jb_add(&b, o, "results", res);
	jb_add(&b, o, "raw_values", raw);
	if (b.failed) {
		json_object_put(o);
		o = NULL;
	}
out:
	free(down);
	free(up);
	free(ping);
	free(icmp);
	free(cnt);
	return o;
}

/* Compresses len bytes into a malloc'd gzip member (*out, *outlen); 0, or -1 with a reason. */
static int flent_gzip(const char *in, size_t len, unsigned char **out, size_t *outlen,
		      const char **why)
{
	z_stream zs;
	uLong cap;
	unsigned char *buf;
	int rc;

	if (len > UINT_MAX) {
		*why = "too large";
		return -1;
	}
	memset(&zs, 0, sizeof(zs));
	/* windowBits 15 + 16: a gzip header and trailer instead of zlib's */
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		*why = "cannot initialise zlib";
		return -1;
	}
	cap = deflateBound(&zs, (uLong)len);
	if (cap > UINT_MAX || (buf = malloc(cap)) == NULL) {
		deflateEnd(&zs);
		*why = "out of memory";
		return -1;
	}
	zs.next_in = (Bytef *)(uintptr_t)in;
	zs.avail_in = (uInt)len;
	zs.next_out = buf;
	zs.avail_out = (uInt)cap;
	rc = deflate(&zs, Z_FINISH);
	*outlen = zs.total_out;
	deflateEnd(&zs);
	if (rc != Z_STREAM_END) { /* deflateBound makes one call enough */
		free(buf);
		*why = "compression failed";
		return -1;
	}
	*out = buf;
	return 0;
}

int flent_write(const struct test_result *r, const char *path)
{
	json_object *o = flent_json(r);
	const char *s, *why = "out of memory";
	unsigned char *gz = NULL;
	size_t len, gzlen = 0;
	int rc = -1;

	if (o == NULL)
		goto fail;
	s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &len);
	if (s == NULL || flent_gzip(s, len, &gz, &gzlen, &why) < 0)
		goto fail;
	if (fileio_write_atomic(path, gz, gzlen) < 0) {
		log_error("cannot write the flent data file %s: %s", path, strerror(errno));
		goto out;
	}
	rc = 0;
	goto out;
fail:
	log_error("cannot write the flent data file %s: %s", path, why);
out:
	free(gz);
	json_object_put(o);
	return rc;
}

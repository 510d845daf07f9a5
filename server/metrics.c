/* metrics: renders the Prometheus text exposition. Names follow the Prometheus conventions:
 * a bloatmeterd_ prefix, base units (seconds, bytes) in the name, _total on counters, one
 * metric with a label where the same quantity splits by reason or direction. */
#include "server/metrics.h"

#include <math.h>
#include <stdatomic.h>

#include "common/clock.h"
#include "common/util.h"
#include "server/ctx.h"
#include "server/testring.h"
#include "server/worker.h"

/* A counter family: one HELP/TYPE header, then one line per label value. */
struct metrics_label {
	const char *value;
	uint64_t n;
};

static int metrics_header(struct evbuffer *out, const char *name, const char *type,
			  const char *help)
{
	return evbuffer_add_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type) < 0
		       ? -1 : 0;
}

static int metrics_single(struct evbuffer *out, const char *name, const char *type,
			  const char *help, uint64_t v)
{
	if (metrics_header(out, name, type, help) < 0 ||
	    evbuffer_add_printf(out, "%s %llu\n", name, (unsigned long long)v) < 0)
		return -1;
	return 0;
}

static int metrics_family(struct evbuffer *out, const char *name, const char *help,
			  const char *label, const struct metrics_label *v, size_t n)
{
	if (metrics_header(out, name, "counter", help) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (evbuffer_add_printf(out, "%s{%s=\"%s\"} %llu\n", name, label, v[i].value,
					(unsigned long long)v[i].n) < 0)
			return -1;
	return 0;
}

#define LOAD(field) ((uint64_t)atomic_load(&srv->counters.field))
#define HIST "bloatmeterd_test_latency_increase_seconds"

/* Sessions started per worker thread (server/worker.h), one line per worker. */
static int metrics_workers(const struct server_ctx *srv, struct evbuffer *out)
{
	const char *name = "bloatmeterd_worker_sessions_total";

	if (srv->workers == NULL)
		return 0;
	if (metrics_header(out, name, "counter", "Test sessions started, by worker thread.") < 0)
		return -1;
	for (int i = 0; i < worker_pool_size(srv->workers); i++)
		if (evbuffer_add_printf(out, "%s{worker=\"%d\"} %llu\n", name, i,
					(unsigned long long)worker_sessions_total(srv->workers, i)) < 0)
			return -1;
	return 0;
}

/* The session list and count are shared with the workers (server/ctx.h): read under the
 * lock, which rendering (a const operation) must still take. */
static struct server_ctx *metrics_locked(const struct server_ctx *srv)
{
	struct server_ctx *w = (struct server_ctx *)srv;

	pthread_mutex_lock(&w->lock);
	return w;
}

static int metrics_sessions(const struct server_ctx *srv, struct evbuffer *out)
{
	const struct metrics_label refused[] = {
		{ "busy", LOAD(sessions_refused_busy) },
		{ "per_client", LOAD(sessions_refused_per_client) },
		{ "duration", LOAD(sessions_refused_duration) },
		{ "shutdown", LOAD(sessions_refused_shutdown) },
		{ "admission", LOAD(sessions_refused_admission) },
	};
	struct server_ctx *w = metrics_locked(srv);
	int active = w->nsessions, lingering = w->nlingering;

	pthread_mutex_unlock(&w->lock);
	if (metrics_single(out, "bloatmeterd_sessions_total", "counter",
			   "Test sessions started (valid hello).", LOAD(sessions_total)) < 0 ||
	    metrics_family(out, "bloatmeterd_refused_total",
			   "Test sessions refused, by reason: busy (max-sessions), per_client "
			   "(max-sessions-per-client), duration (over max-duration), shutdown, "
			   "admission (host egress over admission-max-rate).",
			   "reason", refused, sizeof(refused) / sizeof(refused[0])) < 0 ||
	    metrics_single(out, "bloatmeterd_sessions_active", "gauge",
			   "Test sessions running now.", (uint64_t)active) < 0 ||
	    metrics_single(out, "bloatmeterd_lingering_connections", "gauge",
			   "Connections closing after a last error or busy reply.",
			   (uint64_t)lingering) < 0 ||
	    metrics_workers(srv, out) < 0)
		return -1;
	return 0;
}

static int metrics_traffic(const struct server_ctx *srv, struct evbuffer *out)
{
	uint64_t down = LOAD(bytes_down_done), up = LOAD(bytes_up_done);
	struct metrics_label bytes[2];
	struct server_ctx *w = metrics_locked(srv);

	for (const struct session *s = w->sessions; s; s = s->next) {
		down += s->down_tx_bytes;
		up += s->up_rx_bytes;
	}
	pthread_mutex_unlock(&w->lock);
	bytes[0] = (struct metrics_label){ "download", down };
	bytes[1] = (struct metrics_label){ "upload", up };
	if (metrics_family(out, "bloatmeterd_bytes_total",
			   "Load bytes: download sent by the server, upload received by it.",
			   "direction", bytes, 2) < 0 ||
	    metrics_single(out, "bloatmeterd_probes_reflected_total", "counter",
			   "UDP latency probes answered.", LOAD(udp_reflected)) < 0 ||
	    metrics_single(out, "bloatmeterd_connect_probes_total", "counter",
			   "New-connection latency probes answered.", LOAD(conn_probes)) < 0 ||
	    metrics_single(out, "bloatmeterd_dns_queries_total", "counter",
			   "Datagrams received on the DNS port.", LOAD(dns_queries)) < 0 ||
	    metrics_single(out, "bloatmeterd_dns_answers_total", "counter",
			   "DNS answers sent (any rcode).", LOAD(dns_answered)) < 0 ||
	    metrics_single(out, "bloatmeterd_dns_refused_total", "counter",
			   "DNS queries answered REFUSED (outside the zone, ANY, not class IN).",
			   LOAD(dns_refused)) < 0)
		return -1;
	return 0;
}

static int metrics_bad(const struct server_ctx *srv, struct evbuffer *out)
{
	const struct metrics_label bad[] = {
		{ "udp_bad", LOAD(udp_bad) },
		{ "udp_unknown", LOAD(udp_unknown) },
		{ "ctrl_bad", LOAD(ctrl_bad) },
		{ "ctrl_timeout", LOAD(ctrl_timeout) },
		{ "data_bad", LOAD(data_bad) },
		{ "conn_probe_bad", LOAD(conn_probe_bad) },
		{ "conn_probe_limited", LOAD(conn_probe_limited) },
		{ "dns_bad", LOAD(dns_bad) },
		{ "dns_ratelimited", LOAD(dns_ratelimited) },
		{ "udp_ratelimited", LOAD(udp_ratelimited) },
		{ "conn_pending_refused", LOAD(conn_pending_refused) },
		{ "auth_failed", LOAD(auth_failed) },
		{ "tls_failed", LOAD(tls_failed) },
		{ "flow_idle", LOAD(flows_idle) },
		{ "session_idle", LOAD(sessions_idle) },
		{ "linger_dropped", LOAD(linger_dropped) },
	};

	return metrics_family(out, "bloatmeterd_bad_packets_total",
			      "Input dropped or refused, by reason (see docs/http.md).", "reason",
			      bad, sizeof(bad) / sizeof(bad[0]));
}

/* TLS load flows, and how many of them the kernel encrypts and decrypts (kernel TLS). */
static int metrics_tls(const struct server_ctx *srv, struct evbuffer *out)
{
	const struct metrics_label ktls[] = {
		{ "send", LOAD(tls_flows_ktls_send) },
		{ "receive", LOAD(tls_flows_ktls_recv) },
	};

	if (metrics_single(out, "bloatmeterd_tls_load_flows_total", "counter",
			   "Data connections of TLS loads attached to their session.",
			   LOAD(tls_flows)) < 0 ||
	    metrics_family(out, "bloatmeterd_tls_load_flows_ktls_total",
			   "TLS load flows whose records the kernel encrypts (send) or decrypts "
			   "(receive).", "direction", ktls, 2) < 0)
		return -1;
	return 0;
}

static int metrics_hist_line(struct evbuffer *out, enum testring_series s, const char *le,
			     uint64_t n)
{
	return evbuffer_add_printf(out,
				   HIST "_bucket{direction=\"%s\",source=\"%s\",le=\"%s\"} %llu\n",
				   testring_series_direction(s), testring_series_source(s), le,
				   (unsigned long long)n) < 0 ? -1 : 0;
}

static int metrics_hist(const struct testring *tr, struct evbuffer *out)
{
	if (metrics_header(out, HIST, "histogram",
			   "Latency increase under load per finished test: source server is the "
			   "download flows' TCP RTT over their minimum, source client is what the "
			   "client reported (not verified).") < 0)
		return -1;
	for (int s = 0; s < TESTRING_NSERIES; s++) {
		const struct testring_hist *h = &tr->hist[s];
		uint64_t cum = 0;
		char le[32], sum[48];

		for (int i = 0; i < TESTRING_BUCKETS; i++) {
			cum += h->bucket[i];
			(void)util_format_decimal(testring_bucket_s(i), 3, le, sizeof(le));
			if (metrics_hist_line(out, s, le, cum) < 0)
				return -1;
		}
		(void)util_format_decimal(h->sum_s, 6, sum, sizeof(sum));
		if (metrics_hist_line(out, s, "+Inf", h->count) < 0 ||
		    evbuffer_add_printf(out,
					HIST "_sum{direction=\"%s\",source=\"%s\"} %s\n"
					HIST "_count{direction=\"%s\",source=\"%s\"} %llu\n",
					testring_series_direction(s), testring_series_source(s), sum,
					testring_series_direction(s), testring_series_source(s),
					(unsigned long long)h->count) < 0)
			return -1;
	}
	return 0;
}

int metrics_render(const struct server_ctx *srv, int64_t now_ns, struct evbuffer *out)
{
	char up[48];

	(void)util_format_decimal((double)(now_ns - srv->start_ns) / NS_PER_SEC, 3, up, sizeof(up));
	if (metrics_sessions(srv, out) < 0 || metrics_traffic(srv, out) < 0 ||
	    metrics_bad(srv, out) < 0 || metrics_tls(srv, out) < 0 ||
	    metrics_single(out, "bloatmeterd_http_connections", "gauge",
			   "HTTP connections open now.", LOAD(http_open)) < 0 ||
	    metrics_single(out, "bloatmeterd_http_listener_paused_total", "counter",
			   "Times the HTTP listener paused at http-max-connections.",
			   LOAD(http_full)) < 0 ||
	    metrics_header(out, "bloatmeterd_uptime_seconds", "gauge",
			   "Seconds since the daemon started.") < 0 ||
	    evbuffer_add_printf(out, "bloatmeterd_uptime_seconds %s\n", up) < 0 ||
	    metrics_header(out, "bloatmeterd_build_info", "gauge",
			   "Always 1; the version is the label.") < 0 ||
	    evbuffer_add_printf(out, "bloatmeterd_build_info{version=\"%s\"} 1\n", BM_VERSION) < 0)
		return -1;
	if (srv->tests != NULL && metrics_hist(srv->tests, out) < 0)
		return -1;
	return 0;
}

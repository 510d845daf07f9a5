/* httpload: N downloads and N uploads kept running for a phase; each direction on its own
 * multi handle, so a finished download's connection is never reused by an upload (the byte
 * count of a connection belongs to one direction). */
#include "client/run/httpload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/model/httphdr.h"
#include "client/run/curlloop.h"
#include "client/run/httpacct.h"
#include "common/log.h"

#define HTTPLOAD_MAX 64                      /* transfers per direction (-P) */
#define HTTPLOAD_DOWN_BYTES (1000ULL << 20)  /* first size asked of /__down */
#define HTTPLOAD_UP_BYTES (256ULL << 20)     /* first body size sent to /__up */
#define HTTPLOAD_MIN_BYTES (1ULL << 20)      /* a refused size halves down to this */
#define HTTPLOAD_ZERO_LEN (256 * 1024)       /* the shared upload buffer */
#define HTTPLOAD_MAX_FAILS 20                /* failures in a row before a transfer gives up */

struct httpload;

struct httpload_xfer {
	struct httpload *l;
	CURL *easy;
	int up;
	int running;
	int fails;          /* in a row */
	uint64_t size;      /* bytes asked (download) or sent (upload) per request */
	uint64_t sent;      /* upload: body bytes handed to libcurl for this request */
};

struct httpload {
	struct event_base *base;
	struct httpload_opts o;
	struct curlloop *cl[2];          /* [0] downloads, [1] uploads */
	struct curl_slist *resolve, *headers;
	struct httpload_xfer x[2 * HTTPLOAD_MAX];
	int nx;
	uint8_t *zero;                   /* the body of every upload, read, never copied whole */
	struct httpacct acct;
	struct tcp_totals up_closed;     /* upload connections already closed */
	int cc_fail;
	int mss, timestamps;             /* of the first connection sampled */
	char cc_used[16];
	char server_cc[HTTPHDR_CC_MAX]; /* the download's sender, if the server names it */
	int stopping;
	char err[256];
};

static size_t httpload_write(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct httpload_xfer *x = arg;

	httpacct_add_down(&x->l->acct, size * nmemb);
	return size * nmemb; /* discarded: only the count matters */
}

/* CURLOPT_HEADERFUNCTION of the downloads: the server may name its sending algorithm. */
static size_t httpload_header(char *line, size_t size, size_t nmemb, void *arg)
{
	struct httpload_xfer *x = arg;
	char cc[HTTPHDR_CC_MAX];

	if (httphdr_cc(line, size * nmemb, cc, sizeof(cc)))
		memcpy(x->l->server_cc, cc, sizeof(cc));
	return size * nmemb;
}

static size_t httpload_read(char *buf, size_t size, size_t nmemb, void *arg)
{
	struct httpload_xfer *x = arg;
	size_t n = size * nmemb;

	if (n > x->size - x->sent)
		n = (size_t)(x->size - x->sent);
	if (n > HTTPLOAD_ZERO_LEN)
		n = HTTPLOAD_ZERO_LEN;
	memcpy(buf, x->l->zero, n);
	x->sent += n;
	return n;
}

/* CURLOPT_SOCKOPTFUNCTION: a new load socket; set its congestion control, start counting. */
static int httpload_sockopt(void *arg, curl_socket_t fd, curlsocktype purpose)
{
	struct httpload_xfer *x = arg;
	struct httpload *l = x->l;

	if (purpose != CURLSOCKTYPE_IPCXN)
		return CURL_SOCKOPT_OK;
	if (l->o.cc && sock_set_cc(fd, l->o.cc) < 0)
		l->cc_fail = 1;
	if (l->cc_used[0] == '\0')
		(void)sock_get_cc(fd, l->cc_used, sizeof(l->cc_used));
	if (httpacct_open(&l->acct, fd, x->up) < 0)
		log_warnx("more than %d load connections: one is not counted", HTTPACCT_MAX_CONNS);
	return CURL_SOCKOPT_OK;
}

/* CURLOPT_CLOSESOCKETFUNCTION: its final counts before the socket goes. */
static int httpload_closesocket(void *arg, curl_socket_t fd)
{
	struct httpload_xfer *x = arg;
	struct httpload *l = x->l;
	struct sock_tcp_stats st;

	if (sock_tcp_info(fd, &st) == 0)
		httpacct_close(&l->acct, fd, st.bytes_acked);
	else
		httpacct_close(&l->acct, fd, 0);
	if (x->up)
		sock_tcp_totals_add(fd, &l->up_closed);
	return close(fd);
}

static int httpload_issue(struct httpload_xfer *x);

/* A transfer ended: a refused size (4xx) halves it; anything else starts the next request
 * at once, up to HTTPLOAD_MAX_FAILS failures in a row. */
static void httpload_done(CURL *easy, CURLcode result, void *arg)
{
	struct httpload_xfer *x = arg;
	struct httpload *l = x->l;
	long code = 0;

	x->running = 0;
	if (l->stopping)
		return;
	(void)curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
	if (result == CURLE_OK && code == 200) {
		x->fails = 0;
	} else {
		x->fails++;
		if (result != CURLE_OK)
			snprintf(l->err, sizeof(l->err), "%s %s: %s", x->up ? "POST" : "GET",
				 x->up ? "/__up" : "/__down", curl_easy_strerror(result));
		else
			snprintf(l->err, sizeof(l->err), "%s %s: the server answered %ld",
				 x->up ? "POST" : "GET", x->up ? "/__up" : "/__down", code);
		if (code >= 400 && code < 500 && x->size / 2 >= HTTPLOAD_MIN_BYTES)
			x->size /= 2;
		if (x->fails >= HTTPLOAD_MAX_FAILS) {
			log_warnx("a load transfer gives up: %s", l->err);
			return;
		}
	}
	if (httpload_issue(x) < 0)
		log_warnx("a load transfer cannot restart: %s", l->err);
}

static int httpload_setup_tls(const struct httpload *l, CURL *e)
{
	if (!l->o.target->tls)
		return 0;
	if (l->o.insecure)
		return curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L) != CURLE_OK ||
		       curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L) != CURLE_OK ? -1 : 0;
	if (l->o.ca_file)
		return curl_easy_setopt(e, CURLOPT_CAINFO, l->o.ca_file) != CURLE_OK ? -1 : 0;
	return 0;
}

/* The options every request of x shares. */
static int httpload_setup(struct httpload *l, struct httpload_xfer *x)
{
	CURL *e = curl_easy_init();
	long ipr = l->o.family == AF_INET ? CURL_IPRESOLVE_V4
		 : l->o.family == AF_INET6 ? CURL_IPRESOLVE_V6 : CURL_IPRESOLVE_WHATEVER;

	x->easy = e;
	if (e == NULL)
		return -1;
	if (curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_IPRESOLVE, ipr) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_SOCKOPTFUNCTION, httpload_sockopt) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_SOCKOPTDATA, x) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, httpload_closesocket) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, x) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 10000L) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_HTTPHEADER, l->headers) != CURLE_OK ||
	    (l->resolve && curl_easy_setopt(e, CURLOPT_RESOLVE, l->resolve) != CURLE_OK) ||
	    (l->o.interface && curl_easy_setopt(e, CURLOPT_INTERFACE, l->o.interface) != CURLE_OK) ||
	    httpload_setup_tls(l, e) < 0)
		return -1;
	if (x->up)
		return curl_easy_setopt(e, CURLOPT_POST, 1L) != CURLE_OK ||
		       curl_easy_setopt(e, CURLOPT_READFUNCTION, httpload_read) != CURLE_OK ||
		       curl_easy_setopt(e, CURLOPT_READDATA, x) != CURLE_OK ||
		       curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, httpload_write) != CURLE_OK ||
		       curl_easy_setopt(e, CURLOPT_WRITEDATA, x) != CURLE_OK ? -1 : 0;
	return curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, httpload_write) != CURLE_OK ||
	       curl_easy_setopt(e, CURLOPT_WRITEDATA, x) != CURLE_OK ||
	       curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, httpload_header) != CURLE_OK ||
	       curl_easy_setopt(e, CURLOPT_HEADERDATA, x) != CURLE_OK ? -1 : 0;
}

/* The next request of x, at its current size. */
static int httpload_issue(struct httpload_xfer *x)
{
	struct httpload *l = x->l;
	char url[HTTPTARGET_URL_MAX + 64];

	if (x->up) {
		if (httptarget_up_url(l->o.target, url, sizeof(url)) < 0)
			return -1;
		x->sent = 0;
		if (curl_easy_setopt(x->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)x->size) != CURLE_OK)
			return -1;
	} else if (httptarget_down_url(l->o.target, x->size, url, sizeof(url)) < 0) {
		return -1;
	}
	if (curl_easy_setopt(x->easy, CURLOPT_URL, url) != CURLE_OK ||
	    curlloop_add(l->cl[x->up], x->easy, httpload_done, x, l->err, sizeof(l->err)) < 0)
		return -1;
	x->running = 1;
	return 0;
}

static int httpload_init(struct httpload *l, struct event_base *base,
			 const struct httpload_opts *o, char *err, size_t errlen)
{
	l->base = base;
	l->o = *o;
	httpacct_init(&l->acct);
	l->zero = calloc(1, HTTPLOAD_ZERO_LEN);
	/* No "Expect: 100-continue": it would hold every upload a round trip (or a second). */
	l->headers = curl_slist_append(NULL, "Expect:");
	if (l->headers)
		l->headers = curl_slist_append(l->headers, "Content-Type: application/octet-stream");
	if (o->resolve)
		l->resolve = curl_slist_append(NULL, o->resolve);
	if (l->zero == NULL || l->headers == NULL || (o->resolve && l->resolve == NULL)) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int d = 0; d < 2; d++)
		if ((l->cl[d] = curlloop_new(base, err, errlen)) == NULL)
			return -1;
	return 0;
}

struct httpload *httpload_start(struct event_base *base, const struct httpload_opts *o,
				int ndown, int nup, char *err, size_t errlen)
{
	struct httpload *l = calloc(1, sizeof(*l));

	if (l == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (ndown > HTTPLOAD_MAX || nup > HTTPLOAD_MAX || httpload_init(l, base, o, err, errlen) < 0)
		goto fail;
	for (int i = 0; i < ndown + nup; i++) {
		struct httpload_xfer *x = &l->x[l->nx++];

		x->l = l;
		x->up = i >= ndown;
		x->size = x->up ? HTTPLOAD_UP_BYTES : HTTPLOAD_DOWN_BYTES;
		if (httpload_setup(l, x) < 0 || httpload_issue(x) < 0) {
			snprintf(err, errlen, "cannot start the HTTP load: %s",
				 l->err[0] ? l->err : "libcurl refused an option");
			goto fail;
		}
	}
	return l;
fail:
	httpload_stop(l);
	return NULL;
}

uint64_t httpload_down_bytes(const struct httpload *l)
{
	return l->acct.down_bytes;
}

uint64_t httpload_up_bytes(const struct httpload *l)
{
	return httpacct_up_bytes(&l->acct);
}

void httpload_sample(struct httpload *l, int64_t now, struct flow_sample **arr, size_t *n,
		     size_t *cap, struct probe_series *down, struct probe_series *up)
{
	for (int i = 0; i < HTTPACCT_MAX_CONNS; i++) {
		const struct httpacct_conn *c = &l->acct.conn[i];
		struct sock_tcp_stats st;
		uint32_t rtt_us;
		int is_up = c->up;

		if (c->fd < 0 || sock_tcp_info(c->fd, &st) < 0)
			continue;
		httpacct_update(&l->acct, c->fd, st.bytes_acked);
		if (l->mss == 0) {
			l->mss = (int)st.snd_mss;
			l->timestamps = st.timestamps;
		}
		rtt_us = is_up ? st.rtt_us : st.rcv_rtt_us;
		if (rtt_us > 0 && (is_up ? up : down) != NULL) {
			struct probe_series *ps = is_up ? up : down;
			long k = series_push(ps, now);

			series_complete(ps, k, (int64_t)rtt_us * 1000, SAMPLE_OK);
		}
		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 1024;
			struct flow_sample *a = realloc(*arr, nc * sizeof(*a));

			if (a == NULL)
				continue;
			*arr = a;
			*cap = nc;
		}
		(*arr)[(*n)++] = (struct flow_sample){
			.t_ns = now, .flow_id = (uint16_t)i, .up = (uint8_t)is_up,
			.rtt_us = st.rtt_us, .min_rtt_us = st.min_rtt_us, .rcv_rtt_us = st.rcv_rtt_us,
			.total_retrans = st.total_retrans, .snd_cwnd = st.snd_cwnd,
			.delivery_rate = st.delivery_rate, .busy_us = st.busy_us,
			.rwnd_limited_us = st.rwnd_limited_us, .sndbuf_limited_us = st.sndbuf_limited_us,
			.ecn = (uint8_t)st.ecn,
			.delivered_ce = st.delivered_ce_known ? (int64_t)st.delivered_ce : -1,
			.delivered_bytes = st.delivered_bytes,
		};
	}
}

void httpload_up_totals(struct httpload *l, struct tcp_totals *t)
{
	*t = l->up_closed;
	for (int i = 0; i < HTTPACCT_MAX_CONNS; i++)
		if (l->acct.conn[i].fd >= 0 && l->acct.conn[i].up)
			sock_tcp_totals_add(l->acct.conn[i].fd, t);
}

int httpload_flows(const struct httpload *l, int up)
{
	int n = 0;

	for (int i = 0; i < l->nx; i++)
		n += l->x[i].up == up && l->x[i].running;
	return n;
}

int httpload_cc(const struct httpload *l, char *used, size_t len)
{
	snprintf(used, len, "%s", l->cc_used);
	return !l->cc_fail;
}

const char *httpload_server_cc(const struct httpload *l)
{
	return l->server_cc;
}

int httpload_mss(const struct httpload *l, int *timestamps)
{
	*timestamps = l->timestamps;
	return l->mss;
}

const char *httpload_error(const struct httpload *l)
{
	return l->err;
}

int httpload_dead(const struct httpload *l)
{
	return l->nx > 0 && httpload_flows(l, 0) + httpload_flows(l, 1) == 0;
}

void httpload_stop(struct httpload *l)
{
	if (l == NULL)
		return;
	l->stopping = 1;
	for (int i = 0; i < l->nx; i++)
		if (l->x[i].easy && l->x[i].running)
			curlloop_remove(l->cl[l->x[i].up], l->x[i].easy);
	/* The multi handles close their cached connections (through our closesocket callback,
	 * which needs the transfers alive): free them before the easy handles. */
	for (int d = 0; d < 2; d++)
		curlloop_free(l->cl[d]);
	for (int i = 0; i < l->nx; i++)
		if (l->x[i].easy)
			curl_easy_cleanup(l->x[i].easy);
	curl_slist_free_all(l->headers);
	curl_slist_free_all(l->resolve);
	free(l->zero);
	free(l);
}

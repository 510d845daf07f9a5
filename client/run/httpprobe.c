/* httpprobe: fresh-connection latency requests on libcurl's multi interface. */
#include "client/run/httpprobe.h"

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client/run/curlloop.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/sock.h"

#define HTTPPROBE_MAX_INFLIGHT 32

struct httpprobe;

struct httpprobe_req {
	struct httpprobe *p;
	CURL *easy;
	size_t rec;          /* index of its probe record */
	long conn_sample;    /* index of its tcp_connect sample */
	int fd;              /* its socket (CURLOPT_SOCKOPTFUNCTION) */
	int syn_retrans;     /* TCP_INFO at the request: the handshake was retransmitted */
	int in_use;
};

struct httpprobe {
	struct event_base *base;
	struct httpload_opts o;
	struct curlloop *cl;
	struct curl_slist *resolve;
	struct event *timer;
	int64_t interval_ns, timeout_ns, next_ns;
	struct probe_series *conn;
	struct httpprobe_req req[HTTPPROBE_MAX_INFLIGHT];
	struct probe_rec *recs;
	struct probe_wire *wire; /* per record: its connection's IP bytes each way */
	size_t n, cap;
	int64_t last_rtt;
	int sending;
	char url[HTTPTARGET_URL_MAX + 64];
};

static int httpprobe_sockopt(void *arg, curl_socket_t fd, curlsocktype purpose)
{
	struct httpprobe_req *q = arg;

	if (purpose == CURLSOCKTYPE_IPCXN)
		q->fd = fd;
	return CURL_SOCKOPT_OK;
}

/* CURLOPT_PREREQFUNCTION: connected (and TLS done), the request not sent yet — whether the
 * handshake needed a retransmission is still the connection's whole history. */
static int httpprobe_prereq(void *arg, char *ip, char *local_ip, int port, int local_port)
{
	struct httpprobe_req *q = arg;
	struct sock_tcp_stats st;

	if (q->fd >= 0 && sock_tcp_info(q->fd, &st) == 0)
		q->syn_retrans = st.total_retrans > 0;
	return CURL_PREREQFUNC_OK;
}

/* IP bytes each way of a connection about to close, from its TCP_INFO: payload plus one
 * IP and TCP header per segment, and the FIN exchange still to come (one segment up and one
 * down, then our ACK). A kernel before 4.19 has no byte counts: nothing is known (0). */
static struct probe_wire httpprobe_wire_of(int fd)
{
	struct sock_tcp_stats st;
	socklen_t dl = sizeof(int);
	int domain = AF_INET;
	uint64_t hdr;

	if (sock_tcp_info(fd, &st) < 0 || !st.bytes_known)
		return (struct probe_wire){ 0 };
	(void)getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &dl);
	hdr = (domain == AF_INET6 ? 40 : 20) + 20 + (st.timestamps ? 12 : 0);
	return (struct probe_wire){
		.up = (uint32_t)(st.bytes_sent + (st.segs_out + 2) * hdr),
		.down = (uint32_t)(st.bytes_received + (st.segs_in + 1) * hdr),
	};
}

/* CURLOPT_CLOSESOCKETFUNCTION: what the probe's connection carried, then the close. */
static int httpprobe_closesocket(void *arg, curl_socket_t fd)
{
	struct httpprobe_req *q = arg;

	if (q->fd == fd && q->rec < q->p->n)
		q->p->wire[q->rec] = httpprobe_wire_of(fd);
	return close(fd);
}

static size_t httpprobe_write(char *ptr, size_t size, size_t nmemb, void *arg)
{
	return size * nmemb;
}

static int httpprobe_tls(const struct httpload_opts *o, CURL *e)
{
	if (!o->target->tls)
		return 0;
	if (o->insecure)
		return curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L) != CURLE_OK ||
		       curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L) != CURLE_OK ? -1 : 0;
	if (o->ca_file)
		return curl_easy_setopt(e, CURLOPT_CAINFO, o->ca_file) != CURLE_OK ? -1 : 0;
	return 0;
}

/* A fresh-connection request of the latency URL. */
static CURL *httpprobe_easy(const struct httpload_opts *o, const char *url,
			    struct curl_slist *resolve, int64_t timeout_ns, void *arg)
{
	CURL *e = curl_easy_init();
	long ipr = o->family == AF_INET ? CURL_IPRESOLVE_V4
		 : o->family == AF_INET6 ? CURL_IPRESOLVE_V6 : CURL_IPRESOLVE_WHATEVER;

	if (e == NULL)
		return NULL;
	if (curl_easy_setopt(e, CURLOPT_URL, url) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_IPRESOLVE, ipr) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L) != CURLE_OK ||
	    (o->interface && curl_easy_setopt(e, CURLOPT_INTERFACE, o->interface) != CURLE_OK) ||
	    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(timeout_ns / NS_PER_MS)) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, httpprobe_write) != CURLE_OK ||
	    (resolve && curl_easy_setopt(e, CURLOPT_RESOLVE, resolve) != CURLE_OK) ||
	    (arg && (curl_easy_setopt(e, CURLOPT_SOCKOPTFUNCTION, httpprobe_sockopt) != CURLE_OK ||
		     curl_easy_setopt(e, CURLOPT_SOCKOPTDATA, arg) != CURLE_OK ||
		     curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, httpprobe_prereq) != CURLE_OK ||
		     curl_easy_setopt(e, CURLOPT_PREREQDATA, arg) != CURLE_OK ||
		     curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, httpprobe_closesocket) != CURLE_OK ||
		     curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, arg) != CURLE_OK)) ||
	    httpprobe_tls(o, e) < 0) {
		curl_easy_cleanup(e);
		return NULL;
	}
	return e;
}

/* A new record, lost until its answer says otherwise; -1 when out of memory. */
static long httpprobe_record(struct httpprobe *p, int64_t now)
{
	if (p->n == p->cap) {
		size_t nc = p->cap ? p->cap * 2 : 1024;
		struct probe_rec *a = realloc(p->recs, nc * sizeof(*a));
		struct probe_wire *w;

		if (a == NULL)
			return -1;
		p->recs = a;
		if ((w = realloc(p->wire, nc * sizeof(*w))) == NULL)
			return -1;
		p->wire = w;
		p->cap = nc;
	}
	p->recs[p->n] = (struct probe_rec){ .seq = (uint32_t)p->n, .send_ns = now };
	p->wire[p->n] = (struct probe_wire){ 0 };
	return (long)p->n++;
}

/* The timings of a finished request, µs: handshake (connect less name lookup) and the whole
 * exchange less TLS (handshake + request/response, as the responsiveness draft's parts). */
static int httpprobe_times(CURL *e, curl_off_t *hs_us, curl_off_t *total_us)
{
	curl_off_t lookup, connect, app, pre, start;

	if (curl_easy_getinfo(e, CURLINFO_NAMELOOKUP_TIME_T, &lookup) != CURLE_OK ||
	    curl_easy_getinfo(e, CURLINFO_CONNECT_TIME_T, &connect) != CURLE_OK ||
	    curl_easy_getinfo(e, CURLINFO_APPCONNECT_TIME_T, &app) != CURLE_OK ||
	    curl_easy_getinfo(e, CURLINFO_PRETRANSFER_TIME_T, &pre) != CURLE_OK ||
	    curl_easy_getinfo(e, CURLINFO_STARTTRANSFER_TIME_T, &start) != CURLE_OK ||
	    connect <= lookup || start < pre)
		return -1;
	*hs_us = connect - lookup;
	*total_us = *hs_us + (start - pre);
	return 0;
}

static void httpprobe_done(CURL *easy, CURLcode result, void *arg)
{
	struct httpprobe_req *q = arg;
	struct httpprobe *p = q->p;
	curl_off_t hs, total;
	long code = 0;

	(void)curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
	if (result == CURLE_OK && code == 200 && !q->syn_retrans &&
	    httpprobe_times(easy, &hs, &total) == 0) {
		struct probe_rec *r = &p->recs[q->rec];

		r->received = 1;
		r->rtt_ns = (int64_t)hs * 1000;
		p->last_rtt = r->rtt_ns;
		if (p->conn && q->conn_sample >= 0) {
			series_complete(p->conn, q->conn_sample, (int64_t)total * 1000, SAMPLE_OK);
			p->conn->s[q->conn_sample].aux = (int32_t)(hs > INT32_MAX ? INT32_MAX : hs);
		}
	} else if (p->conn && q->conn_sample >= 0) {
		series_complete(p->conn, q->conn_sample, 0,
				result == CURLE_OK && !q->syn_retrans ? SAMPLE_ERROR : SAMPLE_LOST);
	}
	curl_easy_cleanup(easy);
	q->easy = NULL;
	q->in_use = 0;
}

static struct httpprobe_req *httpprobe_slot(struct httpprobe *p)
{
	for (int i = 0; i < HTTPPROBE_MAX_INFLIGHT; i++)
		if (!p->req[i].in_use)
			return &p->req[i];
	return NULL;
}

static void httpprobe_send(struct httpprobe *p, int64_t now)
{
	struct httpprobe_req *q = httpprobe_slot(p);
	long rec = httpprobe_record(p, now);
	char err[160];

	if (rec < 0 || q == NULL) {
		if (p->conn)
			series_complete(p->conn, series_push(p->conn, now), 0, SAMPLE_LOST);
		return; /* the record stays lost */
	}
	*q = (struct httpprobe_req){ .p = p, .rec = (size_t)rec, .fd = -1, .conn_sample = -1 };
	q->easy = httpprobe_easy(&p->o, p->url, p->resolve, p->timeout_ns, q);
	if (p->conn)
		q->conn_sample = series_push(p->conn, now);
	if (q->easy == NULL || curlloop_add(p->cl, q->easy, httpprobe_done, q, err, sizeof(err)) < 0) {
		if (q->easy)
			curl_easy_cleanup(q->easy);
		q->easy = NULL;
		if (p->conn && q->conn_sample >= 0)
			series_complete(p->conn, q->conn_sample, 0, SAMPLE_LOST);
		return;
	}
	q->in_use = 1;
}

/* Every interval on the schedule (late ticks do not bunch up sends: the next slot is the
 * first one still ahead). */
static void httpprobe_timer_callback(evutil_socket_t fd, short what, void *arg)
{
	struct httpprobe *p = arg;
	int64_t now = clock_mono_ns(), wait;
	struct timeval tv;

	if (!p->sending)
		return;
	httpprobe_send(p, now);
	p->next_ns += p->interval_ns;
	if (p->next_ns <= now)
		p->next_ns = now + p->interval_ns;
	wait = p->next_ns - now;
	tv.tv_sec = (time_t)(wait / NS_PER_SEC);
	tv.tv_usec = (suseconds_t)(wait % NS_PER_SEC / 1000);
	if (evtimer_add(p->timer, &tv) < 0)
		log_warnx("cannot re-arm the latency request timer");
}

struct httpprobe *httpprobe_start(struct event_base *base, const struct httpload_opts *o,
				  int64_t interval_ns, int64_t timeout_ns,
				  struct probe_series *conn, char *err, size_t errlen)
{
	struct httpprobe *p = calloc(1, sizeof(*p));
	struct timeval now_tv = { 0, 0 };

	if (p == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->base = base;
	p->o = *o;
	p->interval_ns = interval_ns;
	p->timeout_ns = timeout_ns;
	p->conn = conn;
	p->sending = 1;
	if (httptarget_down_url(o->target, 0, p->url, sizeof(p->url)) < 0 ||
	    (o->resolve && (p->resolve = curl_slist_append(NULL, o->resolve)) == NULL)) {
		snprintf(err, errlen, "cannot build the latency request");
		goto fail;
	}
	p->cl = curlloop_new(base, err, errlen);
	if (p->cl == NULL)
		goto fail;
	p->timer = evtimer_new(base, httpprobe_timer_callback, p);
	p->next_ns = clock_mono_ns();
	if (p->timer == NULL || evtimer_add(p->timer, &now_tv) < 0) {
		snprintf(err, errlen, "cannot arm the latency request timer");
		goto fail;
	}
	return p;
fail:
	free(httpprobe_free(p, &(size_t){ 0 }, NULL));
	return NULL;
}

void httpprobe_stop_sending(struct httpprobe *p)
{
	p->sending = 0;
	if (p->timer)
		(void)evtimer_del(p->timer);
}

int httpprobe_inflight(const struct httpprobe *p)
{
	int n = 0;

	for (int i = 0; i < HTTPPROBE_MAX_INFLIGHT; i++)
		n += p->req[i].in_use;
	return n;
}

void httpprobe_set_interval(struct httpprobe *p, int64_t interval_ns)
{
	p->interval_ns = interval_ns;
}

size_t httpprobe_wire_mean(const struct httpprobe *p, double out[2])
{
	double sum[2] = { 0, 0 };
	size_t n = 0;

	for (size_t i = 0; i < p->n; i++) {
		if (p->wire[i].up == 0)
			continue;
		sum[0] += p->wire[i].down;
		sum[1] += p->wire[i].up;
		n++;
	}
	if (n > 0) {
		out[0] = sum[0] / (double)n;
		out[1] = sum[1] / (double)n;
	}
	return n;
}

int64_t httpprobe_last_rtt(const struct httpprobe *p)
{
	return p->last_rtt;
}

struct probe_rec *httpprobe_free(struct httpprobe *p, size_t *n, struct probe_wire **wire)
{
	struct probe_rec *recs;

	for (int i = 0; i < HTTPPROBE_MAX_INFLIGHT; i++) {
		struct httpprobe_req *q = &p->req[i];

		if (!q->in_use)
			continue;
		curlloop_remove(p->cl, q->easy);
		curl_easy_cleanup(q->easy);
		if (p->conn && q->conn_sample >= 0)
			series_complete(p->conn, q->conn_sample, 0, SAMPLE_LOST);
	}
	curlloop_free(p->cl);
	if (p->timer)
		event_free(p->timer);
	curl_slist_free_all(p->resolve);
	recs = p->recs;
	*n = p->n;
	if (wire)
		*wire = p->wire;
	else
		free(p->wire);
	free(p);
	return recs;
}

/* httpprobe_check's loop ends with its one transfer. */
struct httpprobe_check {
	struct event_base *base;
	CURLcode result;
	long code;
	int done;
};

static void httpprobe_check_done(CURL *easy, CURLcode result, void *arg)
{
	struct httpprobe_check *c = arg;

	c->result = result;
	(void)curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &c->code);
	c->done = 1;
	event_base_loopbreak(c->base);
}

int httpprobe_check(const struct httpload_opts *o, int64_t timeout_ns, char *err, size_t errlen)
{
	struct httpprobe_check c = { 0 };
	char url[HTTPTARGET_URL_MAX + 64];
	struct curl_slist *resolve = o->resolve ? curl_slist_append(NULL, o->resolve) : NULL;
	struct curlloop *cl = NULL;
	CURL *e = NULL;
	int rc = -1;

	c.base = event_base_new();
	if (c.base == NULL || (o->resolve && resolve == NULL) ||
	    httptarget_down_url(o->target, 0, url, sizeof(url)) < 0 ||
	    (e = httpprobe_easy(o, url, resolve, timeout_ns, NULL)) == NULL ||
	    (cl = curlloop_new(c.base, err, errlen)) == NULL) {
		if (cl == NULL && err[0] == '\0')
			snprintf(err, errlen, "cannot set up the HTTP client");
		goto out;
	}
	if (curlloop_add(cl, e, httpprobe_check_done, &c, err, errlen) < 0)
		goto out;
	(void)event_base_dispatch(c.base);
	if (!c.done) {
		curlloop_remove(cl, e);
		snprintf(err, errlen, "the HTTP client stopped before the first request ended");
	} else if (c.result != CURLE_OK) {
		snprintf(err, errlen, "cannot reach %s: %s", url, curl_easy_strerror(c.result));
	} else if (c.code != 200) {
		snprintf(err, errlen, "%s answered HTTP %ld, not 200: not a speed-test server", url,
			 c.code);
	} else {
		rc = 0;
	}
out:
	curlloop_free(cl);
	if (e)
		curl_easy_cleanup(e);
	curl_slist_free_all(resolve);
	if (c.base)
		event_base_free(c.base);
	return rc;
}

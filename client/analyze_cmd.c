/* analyze_cmd: opens a capture file, feeds every record to the passive analyzer and prints
 * its summary. Errors are one sentence each; a capture cut short after some packets is still
 * summarised, with a warning. */
#include "client/analyze_cmd.h"

#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include <json-c/json.h>

#include "client/report/json_parts.h"
#include "common/clock.h"
#include "common/jsonb.h"
#include "common/log.h"
#include "probes/pcapanalyze.h"

static void analyze_usage(FILE *f)
{
	fprintf(f,
		"usage: bloatmeter analyze [-J] FILE\n"
		"Summarises a packet capture (pcap or pcapng) of a load test: per direction packets,\n"
		"bytes, throughput, TCP retransmissions, ECN marks, and the passive RTT of the bulk\n"
		"TCP flows from timestamp echoes (end to end, and the halves on either side of the\n"
		"capture point) with the latency the load added (p95 - min).\n"
		"A TCP flow's client is the side that sent the SYN; without one, the lower port is\n"
		"the server's.\n"
		"  -J, --json-stdout  print JSON instead of text\n"
		"  -h, --help         this help\n");
}

/* Capture time in ns; a pcapng timestamp too far out for int64 ns is clamped. */
static int64_t analyze_ts_ns(const struct pcap_pkthdr *h, int nano)
{
	int64_t sec = (int64_t)h->ts.tv_sec, frac = (int64_t)h->ts.tv_usec, ns;

	if (!nano)
		frac *= 1000;
	if (__builtin_mul_overflow(sec, NS_PER_SEC, &ns) || __builtin_add_overflow(ns, frac, &ns))
		return sec < 0 ? INT64_MIN : INT64_MAX;
	return ns;
}

static const char *analyze_link_name(int dlt)
{
	const char *name = pcap_datalink_val_to_name(dlt);

	return name ? name : "unknown";
}

/* ---- text ---- */

static void analyze_cell_rtt(char *buf, size_t len, const struct pa_rtt *r)
{
	if (r->n == 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f / %.1f / %.1f / %.1f", r->min_ms, r->p50_ms, r->p95_ms,
			 r->p99_ms);
}

static void analyze_cell_increase(char *buf, size_t len, const struct pa_rtt *r)
{
	if (r->n == 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "+%.1f ms (%zu samples)", r->increase_ms, r->n);
}

static void analyze_cell_mbps(char *buf, size_t len, double mbps)
{
	if (isnan(mbps))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.2f Mbit/s", mbps);
}

static void analyze_cell_retrans(char *buf, size_t len, const struct pa_dir *d)
{
	if (d->data_segments == 0)
		snprintf(buf, len, "%" PRIu64, d->retrans);
	else
		snprintf(buf, len, "%" PRIu64 " (%.2f %%)", d->retrans, d->retrans_pct);
}

static void analyze_row(FILE *out, const char *label, const char *up, const char *down)
{
	fprintf(out, "  %-22s %-30s %s\n", label, up, down);
}

static void analyze_row_u64(FILE *out, const char *label, uint64_t up, uint64_t down)
{
	char a[32], b[32];

	snprintf(a, sizeof(a), "%" PRIu64, up);
	snprintf(b, sizeof(b), "%" PRIu64, down);
	analyze_row(out, label, a, b);
}

static void analyze_text_rtt(FILE *out, const char *label, const struct pa_rtt *up,
			     const struct pa_rtt *down, int increase)
{
	char a[64], b[64];

	analyze_cell_rtt(a, sizeof(a), up);
	analyze_cell_rtt(b, sizeof(b), down);
	analyze_row(out, label, a, b);
	if (!increase)
		return;
	analyze_cell_increase(a, sizeof(a), up);
	analyze_cell_increase(b, sizeof(b), down);
	analyze_row(out, "  latency under load", a, b);
}

static void analyze_text(FILE *out, const char *name, int dlt, const struct pa_summary *s)
{
	const struct pa_dir *u = &s->up, *d = &s->down;
	char a[64], b[64];

	fprintf(out, "%s: %.3f s, %" PRIu64 " packets (%s), %" PRIu64 " TCP flows (%" PRIu64
		" upload, %" PRIu64 " download)\n", name, s->duration_s, s->packets,
		analyze_link_name(dlt), s->tcp_flows, u->flows, d->flows);
	if (s->other || s->malformed || s->untracked)
		fprintf(out, "  not counted: %" PRIu64 " other packets, %" PRIu64
			" malformed; %" PRIu64 " packets of untracked flows\n", s->other,
			s->malformed, s->untracked);
	analyze_row(out, "", "up (client->server)", "down (server->client)");
	analyze_row_u64(out, "packets", u->packets, d->packets);
	snprintf(a, sizeof(a), "%.3f MB", (double)u->bytes / 1e6);
	snprintf(b, sizeof(b), "%.3f MB", (double)d->bytes / 1e6);
	analyze_row(out, "bytes", a, b);
	analyze_cell_mbps(a, sizeof(a), u->mbps);
	analyze_cell_mbps(b, sizeof(b), d->mbps);
	analyze_row(out, "throughput", a, b);
	analyze_row_u64(out, "TCP data segments", u->data_segments, d->data_segments);
	analyze_cell_retrans(a, sizeof(a), u);
	analyze_cell_retrans(b, sizeof(b), d);
	analyze_row(out, "retransmissions", a, b);
	snprintf(a, sizeof(a), "%" PRIu64 " (ECT %" PRIu64 ")", u->ce, u->ect0 + u->ect1);
	snprintf(b, sizeof(b), "%" PRIu64 " (ECT %" PRIu64 ")", d->ce, d->ect0 + d->ect1);
	analyze_row(out, "CE marks", a, b);
	fprintf(out, "  passive RTT, ms (min / p50 / p95 / p99) of upload and download flows:\n");
	analyze_text_rtt(out, "end to end", &u->rtt, &d->rtt, 1);
	analyze_text_rtt(out, "  half via the server", &u->rtt_server, &d->rtt_server, 0);
	analyze_text_rtt(out, "  half via the client", &u->rtt_client, &d->rtt_client, 0);
	if (s->probe_requests || s->probe_replies)
		fprintf(out, "  bloatmeter UDP probes: %" PRIu64 " requests, %" PRIu64 " replies\n",
			s->probe_requests, s->probe_replies);
}

/* ---- JSON ---- */

static json_object *analyze_json(const char *name, int dlt, const struct pa_summary *s,
				  const char *warning, struct jb *b)
{
	json_object *o = jb_obj(b);

	jb_add(b, o, "file", jb_str(b, name));
	jb_add(b, o, "link_type", jb_str(b, analyze_link_name(dlt)));
	jb_add(b, o, "duration_s", jb_num(b, s->duration_s, 6));
	jb_add(b, o, "packets", jb_int(b, (int64_t)s->packets));
	jb_add(b, o, "other_packets", jb_int(b, (int64_t)s->other));
	jb_add(b, o, "malformed_packets", jb_int(b, (int64_t)s->malformed));
	jb_add(b, o, "tcp_flows", jb_int(b, (int64_t)s->tcp_flows));
	jb_add(b, o, "untracked_packets", jb_int(b, (int64_t)s->untracked));
	jb_add(b, o, "probe_requests", jb_int(b, (int64_t)s->probe_requests));
	jb_add(b, o, "probe_replies", jb_int(b, (int64_t)s->probe_replies));
	jb_add(b, o, "up", report_json_pa_dir(b, &s->up));
	jb_add(b, o, "down", report_json_pa_dir(b, &s->down));
	jb_add(b, o, "truncated", jb_bool(b, warning != NULL));
	jb_add(b, o, "warning", jb_str(b, warning));
	return o;
}

static int analyze_write_json(FILE *out, const char *name, int dlt, const struct pa_summary *s,
			      const char *warning)
{
	struct jb b = { 0 };
	json_object *o = analyze_json(name, dlt, s, warning, &b);
	int rc = -1;

	if (!b.failed && o != NULL) {
		const char *txt = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
								 JSON_C_TO_STRING_NOSLASHESCAPE);

		rc = txt != NULL && fputs(txt, out) != EOF && fputc('\n', out) != EOF ? 0 : -1;
	}
	json_object_put(o);
	return rc;
}

/* ---- reading ---- */

/* Feeds every record to pa. Returns the packets read, with *cut set and err filled when a
 * read error ended the file early. */
static uint64_t analyze_read(pcap_t *p, struct pa *pa, int dlt, int *cut, char *err,
			     size_t errlen)
{
	int nano = pcap_get_tstamp_precision(p) == PCAP_TSTAMP_PRECISION_NANO;
	struct pcap_pkthdr *h;
	const u_char *data;
	uint64_t n = 0;
	int rc;

	*cut = 0;
	while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
		pa_packet(pa, dlt, analyze_ts_ns(h, nano), data, h->caplen, h->len);
		n++;
	}
	if (rc == PCAP_ERROR) {
		*cut = 1;
		snprintf(err, errlen, "%s", pcap_geterr(p));
	}
	return n;
}

int analyze_capture(pcap_t *p, const char *name, int json, FILE *out, char *err, size_t errlen)
{
	int dlt = pcap_datalink(p), cut, rc;
	char why[PCAP_ERRBUF_SIZE + 8] = "";
	char warning[PCAP_ERRBUF_SIZE + 256] = "";
	struct pa_summary s;
	struct pa *pa;
	uint64_t n;

	if (!pa_linktype_supported(dlt)) {
		snprintf(err, errlen, "%s has link type %s (%d), which analyze does not read "
			 "(it reads Ethernet, Linux cooked v1/v2, raw IP and BSD loopback).", name,
			 analyze_link_name(dlt), dlt);
		return -1;
	}
	pa = pa_new(NULL);
	if (pa == NULL) {
		snprintf(err, errlen, "out of memory analysing %s.", name);
		return -1;
	}
	n = analyze_read(p, pa, dlt, &cut, why, sizeof(why));
	if (cut && n == 0) {
		snprintf(err, errlen, "%s holds no readable packet (libpcap: %s).", name, why);
		pa_free(pa);
		return -1;
	}
	if (cut)
		snprintf(warning, sizeof(warning), "%s is cut short after %" PRIu64 " packets "
			 "(libpcap: %s); the summary covers those.", name, n, why);
	pa_summary(pa, &s);
	pa_free(pa);
	if (json) {
		rc = analyze_write_json(out, name, dlt, &s, cut ? warning : NULL);
	} else {
		analyze_text(out, name, dlt, &s);
		rc = ferror(out) ? -1 : 0;
	}
	if (rc < 0) {
		snprintf(err, errlen, "cannot write the summary of %s.", name);
		return -1;
	}
	if (cut) {
		snprintf(err, errlen, "%s", warning);
		return 1;
	}
	return 0;
}

/* One sentence for a file libpcap would not open. */
static void analyze_open_error(const char *file, const char *why, char *err, size_t errlen)
{
	size_t flen = strlen(file); /* libpcap prefixes some messages with the file name */

	if (strstr(why, "unknown file format") != NULL)
		snprintf(err, errlen, "%s is not a pcap or pcapng capture file.", file);
	else if (strstr(why, "only got 0") != NULL)
		snprintf(err, errlen, "%s is empty, not a capture file.", file);
	else if (strstr(why, "truncated") != NULL)
		snprintf(err, errlen, "%s is truncated: it ends inside the capture file's header.",
			 file);
	else if (strncmp(why, file, flen) == 0 && strncmp(why + flen, ": ", 2) == 0)
		snprintf(err, errlen, "cannot read %s: %s.", file, why + flen + 2);
	else
		snprintf(err, errlen, "cannot read %s: %s.", file, why);
}

static const struct option analyze_opts[] = {
	{ "json-stdout", no_argument, NULL, 'J' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int analyze_main(int argc, char **argv)
{
	char errbuf[PCAP_ERRBUF_SIZE], err[PCAP_ERRBUF_SIZE + 512];
	int json = 0, c, rc;
	const char *file;
	pcap_t *p;

	optind = 0; /* glibc: start over, whatever parsed argv before */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "Jh", analyze_opts, NULL)) != -1) {
		if (c == 'J') {
			json = 1;
		} else if (c == 'h') {
			analyze_usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "bloatmeter: unknown option: %s\n", argv[optind - 1]);
			analyze_usage(stderr);
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "bloatmeter: analyze needs exactly one capture FILE\n");
		analyze_usage(stderr);
		return 2;
	}
	file = argv[optind];
	p = pcap_open_offline_with_tstamp_precision(file, PCAP_TSTAMP_PRECISION_NANO, errbuf);
	if (p == NULL) {
		analyze_open_error(file, errbuf, err, sizeof(err));
		log_error("%s", err);
		return 1;
	}
	rc = analyze_capture(p, file, json, stdout, err, sizeof(err));
	pcap_close(p);
	if (rc < 0) {
		log_error("%s", err);
		return 1;
	}
	if (fflush(stdout) == EOF) {
		log_error("cannot write the summary of %s.", file);
		return 1;
	}
	if (rc > 0)
		log_warnx("%s", err);
	return 0;
}

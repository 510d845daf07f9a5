/* httpnote: the HTTP mode's lines in the text and JSON reports. */
#include "client/report/httpnote.h"

#include "client/report/format.h"
#include "common/jsonb.h"

#define HTTPNOTE_WIDTH 80

const char *report_http_unmeasured(void)
{
	return "An HTTP speed-test server stamps no probes and keeps no counts, so one-way delays, "
	       "the upstream/downstream loss split and the server's own TCP figures need a "
	       "bloatmeterd and are not reported.";
}

const char *report_http_source(const struct test_result *r)
{
	return r->cfg.target_source ? r->cfg.target_source : "command line";
}

static const char *latency_method(void)
{
	return "TCP handshakes of fresh HTTP connections (GET /__down?bytes=0), the load "
	       "connections' TCP_INFO RTT, and ICMP where permitted";
}

json_object *report_json_http(struct jb *b, const struct test_result *r)
{
	json_object *o = jb_obj(b);

	jb_add(b, o, "url", jb_str(b, r->cfg.http_url ? r->cfg.http_url : ""));
	jb_add(b, o, "address", r->server_addr[0] ? jb_str(b, r->server_addr) : NULL);
	jb_add(b, o, "target_source", jb_str(b, report_http_source(r)));
	jb_add(b, o, "latency_method", jb_str(b, latency_method()));
	jb_add(b, o, "not_measured", jb_str(b, report_http_unmeasured()));
	return o;
}

void report_text_http(const struct test_result *r, FILE *out)
{
	char url[256], addr[sizeof(r->server_addr)], src[300], line[900];

	snprintf(line, sizeof(line), "HTTP test against %s (%s; target from the %s). Latency: %s.",
		 report_clean(r->cfg.http_url ? r->cfg.http_url : "", url, sizeof(url)),
		 report_clean(r->server_addr[0] ? r->server_addr : "unresolved", addr, sizeof(addr)),
		 report_clean(report_http_source(r), src, sizeof(src)), latency_method());
	report_wrap(out, "", line, 0, HTTPNOTE_WIDTH);
	report_wrap(out, "", report_http_unmeasured(), 0, HTTPNOTE_WIDTH);
}

/* wording: shared sentences of the human-readable writers. */
#include "client/report/wording.h"

#include <stdio.h>
#include <string.h>

#include "client/report/format.h"

const char *wording_cc_requested(const struct test_result *r)
{
	return r->cc.requested[0] ? r->cc.requested : r->cfg.cc;
}

/* Whether an end ran what was asked, or was not asked at all: nothing to say about it. */
static int cc_end_ok(const struct test_result *r, int server_end)
{
	int ok = server_end ? r->cc.server_ok : r->cc.client_ok;

	return ok || !result_cc_asked(r, server_end);
}

/* What an end ran, for people: the system default when the request failed unnamed. */
static const char *cc_ran(const struct test_result *r, int server_end)
{
	const char *used = result_cc_used(r, server_end);

	return used ? used : "default";
}

void wording_cc_end(const struct test_result *r, int server, int why, char *buf, size_t len)
{
	const struct cc_report *cc = &r->cc;
	const char *req = wording_cc_requested(r);
	int ok = cc_end_ok(r, server);
	const char *err = server ? cc->server_error : cc->client_error;
	char used[sizeof(cc->server_used)], reason[sizeof(cc->server_error)];

	report_clean(cc_ran(r, server), used, sizeof(used));
	report_clean(err, reason, sizeof(reason));
	if (ok)
		snprintf(buf, len, "%s", used);
	else
		snprintf(buf, len, "%s (%s refused%s%s)", used, req, why && reason[0] ? ": " : "",
			 why ? reason : "");
}

void wording_cc(const struct test_result *r, char *buf, size_t len)
{
	char client[160], server[160];

	wording_cc_end(r, 0, 0, client, sizeof(client));
	wording_cc_end(r, 1, 0, server, sizeof(server));
	if (cc_end_ok(r, 0) && cc_end_ok(r, 1) && strcmp(client, server) == 0)
		snprintf(buf, len, "cc %s (both ends)", client);
	else
		snprintf(buf, len, "cc client %s, server %s", client, server);
}

const char *wording_cc_client(const struct test_result *r)
{
	return cc_ran(r, 0);
}

/* The qdisc's own parameters as "name value, ..." (empty for tbf and fifo). */
static void lab_params(const struct lab_truth *t, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (int i = 0; i < t->nparams && i < LAB_QDISC_PARAMS && o < len; i++) {
		int n = snprintf(buf + o, len - o, "%s%s %g", i ? ", " : "", t->params[i].name,
				 t->params[i].value);

		if (n < 0)
			break;
		o += (size_t)n;
	}
}

void wording_lab_queue(const struct lab_truth *t, char *buf, size_t len)
{
	const char *q = t->qdisc[0] ? t->qdisc : "tbf";
	/* only an AQM can mark; tail-drop queues (tbf, fifo) always drop */
	int aqm = strcmp(q, "tbf") != 0 && strcmp(q, "fifo") != 0;
	char params[160], ecn[32] = "", delay[64] = "";

	lab_params(t, params, sizeof(params));
	if (aqm || t->ecn_mark)
		snprintf(ecn, sizeof(ecn), ", ECN marking %s", t->ecn_mark ? "on" : "off");
	if (t->delay_ms > 0)
		snprintf(delay, sizeof(delay), ", +%g ms one-way delay each way", t->delay_ms);
	snprintf(buf, len, "%s%s%s%s per direction%s%s; %s", q, params[0] ? " (" : "", params,
		 params[0] ? ")" : "", ecn, delay, t->hop[0] ? t->hop : "router");
}

/* queuewords: the queue verdict's phrase and advice. */
#include "client/report/queuewords.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "client/report/format.h"

static int is(const struct queue_verdict *v, const char *name)
{
	return v->verdict != NULL && strcmp(v->verdict, name) == 0;
}

void queuewords_phrase(const struct queue_verdict *v, const struct buffer_estimate *b, char *buf,
		       size_t len)
{
	char ms[16];
	int bound = b != NULL && b->valid && b->lower_bound;

	if (is(v, "fifo"))
		snprintf(buf, len, "tail-drop FIFO, %s%s ms", bound ? "≥ " : "",
			 report_num(bound ? b->ms : v->top_ms, 0, ms, sizeof(ms)));
	else if (is(v, "aqm"))
		snprintf(buf, len, "AQM near %s ms, %s", report_num(v->standing_ms, 0, ms, sizeof(ms)),
			 v->signal);
	else if (is(v, "fq"))
		snprintf(buf, len, "flow queuing");
	else if (is(v, "policer"))
		snprintf(buf, len, "policer");
	else
		snprintf(buf, len, "unknown");
}

void queuewords_advice(const struct queue_verdict *v, double shaper_mbps, char *buf, size_t len)
{
	char rate[16];

	report_num(shaper_mbps, 1, rate, sizeof(rate));
	if (is(v, "fifo"))
		snprintf(buf, len, "shape to %s Mbit/s with SQM (cake or fq_codel) so the queue forms "
			 "where it is managed", rate);
	else if (is(v, "aqm"))
		snprintf(buf, len, "already managed by an AQM; to isolate flows too, shape to %s Mbit/s "
			 "with cake or fq_codel", rate);
	else if (is(v, "fq"))
		snprintf(buf, len, "already managed with flow queuing: nothing to change");
	else if (is(v, "policer"))
		snprintf(buf, len, "shape to %s Mbit/s, below the policer's rate, so TCP meets a "
			 "queue instead of losses", rate);
	else
		buf[0] = '\0';
}

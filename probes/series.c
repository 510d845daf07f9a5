/* series: growable sample arrays shared by every auxiliary probe kind. */
#include "probes/series.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void series_init(struct probe_series *ps, const char *name, const char *target)
{
	memset(ps, 0, sizeof(*ps));
	snprintf(ps->name, sizeof(ps->name), "%s", name ? name : "");
	snprintf(ps->target, sizeof(ps->target), "%s", target ? target : "");
}

long series_push(struct probe_series *ps, int64_t send_ns)
{
	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? ps->cap * 2 : 256;
		struct rtt_sample *s = realloc(ps->s, cap * sizeof(*s));

		if (s == NULL)
			return -1;
		ps->s = s;
		ps->cap = cap;
	}
	ps->s[ps->n] = (struct rtt_sample){ .send_ns = send_ns, .status = SAMPLE_PENDING };
	return (long)ps->n++;
}

void series_complete(struct probe_series *ps, long i, int64_t rtt_ns, enum sample_status st)
{
	if (i < 0 || (size_t)i >= ps->n || ps->s[i].status != SAMPLE_PENDING)
		return;
	ps->s[i].status = st;
	ps->s[i].rtt_ns = st == SAMPLE_OK ? rtt_ns : 0;
}

void series_close(struct probe_series *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		if (ps->s[i].status == SAMPLE_PENDING)
			ps->s[i].status = SAMPLE_LOST;
}

void series_note(struct probe_series *ps, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ps->note, sizeof(ps->note), fmt, ap);
	va_end(ap);
}

void series_free(struct probe_series *ps)
{
	free(ps->s);
	ps->s = NULL;
	ps->n = ps->cap = 0;
}

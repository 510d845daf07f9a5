/* delivered: the senders' delivered-byte series of one direction. */
#include "client/analysis/delivered.h"

#include <stdlib.h>

#define DELIVERED_MAX_FLOWS 256 /* upload flows tracked in one phase */

struct dlv_flow {
	uint16_t id;
	uint64_t last;
};

/* Adds sample f's growth since its flow's previous sample to *total. A count that fell is a
 * new connection in the flow's slot (the HTTP mode reconnects): all of it is growth. */
static void dlv_add(struct dlv_flow *fl, size_t *nfl, const struct flow_sample *f,
		    uint64_t *total)
{
	size_t k = 0;

	while (k < *nfl && fl[k].id != f->flow_id)
		k++;
	if (k == *nfl) {
		if (*nfl == DELIVERED_MAX_FLOWS)
			return;
		fl[k] = (struct dlv_flow){ .id = f->flow_id, .last = 0 };
		(*nfl)++;
	}
	if (f->delivered_bytes < fl[k].last)
		fl[k].last = 0;
	*total += f->delivered_bytes - fl[k].last;
	fl[k].last = f->delivered_bytes;
}

/* Upload: the client's flow samples; one point per sampling tick (its flows share a time). */
static size_t dlv_upload(const struct test_result *r, int64_t from, int64_t to,
			 struct tput_rec *out)
{
	struct dlv_flow *fl = calloc(DELIVERED_MAX_FLOWS, sizeof(*fl));
	size_t nfl = 0, n = 0;
	uint64_t total = 0;
	int known = 0;

	if (fl == NULL)
		return 0;
	for (size_t i = 0; i < r->nflows; i++) {
		const struct flow_sample *f = &r->flows[i];

		if (!f->up || f->t_ns < from || f->t_ns > to)
			continue;
		known |= f->delivered_bytes > 0;
		dlv_add(fl, &nfl, f, &total);
		if (n > 0 && out[n - 1].t_ns == f->t_ns)
			out[n - 1].bytes = total;
		else
			out[n++] = (struct tput_rec){ .t_ns = f->t_ns, .bytes = total };
	}
	free(fl);
	return known ? n : 0;
}

/* Download: the server's running total from its stats (zero when it did not send one). */
static size_t dlv_download(const struct test_result *r, int64_t from, int64_t to,
			   struct tput_rec *out)
{
	size_t n = 0;

	for (size_t i = 0; r->srv_dlv_bytes != NULL && i < r->nup; i++)
		if (r->up[i].t_ns >= from && r->up[i].t_ns <= to && r->srv_dlv_bytes[i] > 0)
			out[n++] = (struct tput_rec){ .t_ns = r->up[i].t_ns,
						      .bytes = r->srv_dlv_bytes[i] };
	return n;
}

size_t delivered_series(const struct test_result *r, int up, int64_t from, int64_t to,
			struct tput_rec **out)
{
	size_t cap = up ? r->nflows : r->nup, n;

	*out = NULL;
	if (cap == 0 || (*out = malloc(cap * sizeof(**out))) == NULL)
		return 0;
	n = up ? dlv_upload(r, from, to, *out) : dlv_download(r, from, to, *out);
	if (n < 2) {
		free(*out);
		*out = NULL;
		n = 0;
	}
	return n;
}

/* httpacct: per-connection upload counts folded into totals at close; download byte sum. */
#include "client/run/httpacct.h"

#include <string.h>

void httpacct_init(struct httpacct *a)
{
	memset(a, 0, sizeof(*a));
	for (int i = 0; i < HTTPACCT_MAX_CONNS; i++)
		a->conn[i].fd = -1;
}

static struct httpacct_conn *find(struct httpacct *a, int fd)
{
	for (int i = 0; fd >= 0 && i < HTTPACCT_MAX_CONNS; i++)
		if (a->conn[i].fd == fd)
			return &a->conn[i];
	return NULL;
}

int httpacct_open(struct httpacct *a, int fd, int up)
{
	struct httpacct_conn *c = find(a, fd);

	if (fd < 0)
		return -1;
	for (int i = 0; c == NULL && i < HTTPACCT_MAX_CONNS; i++)
		if (a->conn[i].fd < 0)
			c = &a->conn[i];
	if (c == NULL)
		return -1;
	c->fd = fd;
	c->up = up;
	c->acked = c->base = 0;
	return 0;
}

void httpacct_set_dir(struct httpacct *a, int fd, int up)
{
	struct httpacct_conn *c = find(a, fd);

	if (c == NULL || c->up == up)
		return;
	/* What it sent as an upload connection stays counted; from now on its acks are not. */
	if (c->up)
		a->up_closed += c->acked - c->base;
	c->base = c->acked;
	c->up = up;
}

void httpacct_update(struct httpacct *a, int fd, uint64_t bytes_acked)
{
	struct httpacct_conn *c = find(a, fd);

	if (c != NULL && bytes_acked > c->acked)
		c->acked = bytes_acked;
}

void httpacct_close(struct httpacct *a, int fd, uint64_t bytes_acked)
{
	struct httpacct_conn *c = find(a, fd);

	if (c == NULL)
		return;
	if (bytes_acked > c->acked)
		c->acked = bytes_acked;
	/* The request headers of an upload connection count too: a few hundred bytes against
	 * megabytes of body, below the estimator's resolution. */
	if (c->up)
		a->up_closed += c->acked - c->base;
	c->fd = -1;
	c->acked = c->base = 0;
}

void httpacct_add_down(struct httpacct *a, size_t bytes)
{
	a->down_bytes += bytes;
}

uint64_t httpacct_up_bytes(const struct httpacct *a)
{
	uint64_t sum = a->up_closed;

	for (int i = 0; i < HTTPACCT_MAX_CONNS; i++)
		if (a->conn[i].fd >= 0 && a->conn[i].up)
			sum += a->conn[i].acked - a->conn[i].base;
	return sum;
}

int httpacct_open_conns(const struct httpacct *a, int up)
{
	int n = 0;

	for (int i = 0; i < HTTPACCT_MAX_CONNS; i++)
		n += a->conn[i].fd >= 0 && a->conn[i].up == up;
	return n;
}

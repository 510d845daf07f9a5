/* session: the token table shared between the sessions' workers and the UDP reflector. */
#include "server/session.h"

#include <stdlib.h>
#include <string.h>

#include "common/sock.h"

int session_table_init(struct session_table *t, int cap)
{
	memset(t, 0, sizeof(*t));
	t->e = calloc((size_t)cap, sizeof(*t->e));
	if (t->e == NULL)
		return -1;
	t->cap = cap;
	return pthread_mutex_init(&t->lock, NULL) == 0 ? 0 : -1;
}

void session_table_free(struct session_table *t)
{
	free(t->e);
	pthread_mutex_destroy(&t->lock);
}

/* Linear scan: capacity is the concurrent-session limit, small enough that a scan of
 * 16-byte tokens is cheaper than hashing them. Caller holds the lock. */
static struct reflect_entry *table_find(struct session_table *t, const uint8_t *token)
{
	for (int i = 0; i < t->cap; i++)
		if (t->e[i].used && memcmp(t->e[i].token, token, WIRE_TOKEN_LEN) == 0)
			return &t->e[i];
	return NULL;
}

int session_table_add(struct session_table *t, const uint8_t *token, const struct sockaddr *client)
{
	int rc = -1;

	pthread_mutex_lock(&t->lock);
	for (int i = 0; i < t->cap; i++) {
		if (!t->e[i].used) {
			memset(&t->e[i], 0, sizeof(t->e[i]));
			t->e[i].used = 1;
			memcpy(t->e[i].token, token, WIRE_TOKEN_LEN);
			/* Full from time 0: the reflector's clock is the probes' receive time. */
			limits_bucket_init(&t->e[i].probes, t->probe_rate,
					   limits_probe_burst(t->probe_rate), 0);
			memcpy(&t->e[i].client, client,
			       client->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
							     : sizeof(struct sockaddr_in));
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

void session_table_remove(struct session_table *t, const uint8_t *token)
{
	struct reflect_entry *e;

	pthread_mutex_lock(&t->lock);
	e = table_find(t, token);
	if (e)
		memset(e, 0, sizeof(*e));
	pthread_mutex_unlock(&t->lock);
}

void session_table_set_probe_rate(struct session_table *t, int per_s)
{
	pthread_mutex_lock(&t->lock);
	t->probe_rate = per_s > 0 ? per_s : 0;
	for (int i = 0; i < t->cap; i++)
		if (t->e[i].used)
			limits_bucket_set(&t->e[i].probes, t->probe_rate,
					  limits_probe_burst(t->probe_rate));
	pthread_mutex_unlock(&t->lock);
}

int session_table_count_probe(struct session_table *t, const uint8_t *token,
			      const struct sockaddr *src, int64_t now_ns, uint64_t *count)
{
	struct reflect_entry *e;
	int ok = 0;

	pthread_mutex_lock(&t->lock);
	e = table_find(t, token);
	if (e && sock_same_ip((const struct sockaddr *)&e->client, src)) {
		/* Over the rate: dropped and not counted, so the client sees it as loss and the
		 * server's count stays what it answered. */
		ok = limits_bucket_take(&e->probes, now_ns, 1) ? 1 : -1;
		if (ok == 1)
			*count = ++e->rx_count;
	}
	pthread_mutex_unlock(&t->lock);
	return ok;
}

uint64_t session_table_probe_count(struct session_table *t, const uint8_t *token)
{
	struct reflect_entry *e;
	uint64_t n = 0;

	pthread_mutex_lock(&t->lock);
	e = table_find(t, token);
	if (e)
		n = e->rx_count;
	pthread_mutex_unlock(&t->lock);
	return n;
}

/* Raises the reflector table's capacity to cap; it never shrinks, so live entries keep their
 * slots (only a SIGHUP reload grows it). The swap happens under the
 * table's lock, so the reflector thread sees the old array or the new one, never a mix. */
int session_table_grow(struct session_table *t, int cap)
{
	struct reflect_entry *e = calloc((size_t)cap, sizeof(*e)), *old;

	if (e == NULL)
		return -1;
	pthread_mutex_lock(&t->lock);
	memcpy(e, t->e, (size_t)t->cap * sizeof(*e));
	old = t->e;
	t->e = e;
	t->cap = cap;
	pthread_mutex_unlock(&t->lock);
	free(old);
	return 0;
}

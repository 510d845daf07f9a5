/* session: the token table shared between the sessions' workers and the UDP reflector. */
#include "server/session.h"

#include <stdlib.h>
#include <string.h>

#include "common/sock.h"

/* The buckets for cap entries: a power of two at least cap, all empty. NULL if no memory. */
static int *table_buckets(int cap, uint32_t *mask)
{
	uint32_t n = 1;
	int *b;

	while (n < (uint32_t)cap)
		n <<= 1;
	b = malloc(n * sizeof(*b));
	if (b == NULL)
		return NULL;
	memset(b, 0xff, n * sizeof(*b)); /* all −1 */
	*mask = n - 1;
	return b;
}

/* Tokens are 128 random bits from the server (util_random), so any 4 of their bytes spread
 * evenly; a sender cannot place an entry, only look up the chain its token falls in. */
static uint32_t table_hash(const struct session_table *t, const uint8_t *token)
{
	uint32_t h;

	memcpy(&h, token, sizeof(h));
	return h & t->bucket_mask;
}

static void table_link(struct session_table *t, int i)
{
	uint32_t h = table_hash(t, t->e[i].token);

	t->e[i].next = t->bucket[h];
	t->bucket[h] = i;
}

int session_table_init(struct session_table *t, int cap)
{
	memset(t, 0, sizeof(*t));
	t->e = calloc((size_t)cap, sizeof(*t->e));
	t->bucket = table_buckets(cap, &t->bucket_mask);
	if (t->e == NULL || t->bucket == NULL) {
		free(t->e);
		free(t->bucket);
		return -1;
	}
	t->cap = cap;
	return pthread_mutex_init(&t->lock, NULL) == 0 ? 0 : -1;
}

void session_table_free(struct session_table *t)
{
	free(t->e);
	free(t->bucket);
	pthread_mutex_destroy(&t->lock);
}

/* The entry of token through its bucket's chain, or NULL. Caller holds the lock. */
static struct reflect_entry *table_find(struct session_table *t, const uint8_t *token)
{
	for (int i = t->bucket[table_hash(t, token)]; i >= 0; i = t->e[i].next)
		if (memcmp(t->e[i].token, token, WIRE_TOKEN_LEN) == 0)
			return &t->e[i];
	return NULL;
}

int session_table_add(struct session_table *t, const uint8_t *token, const struct sockaddr *client)
{
	int rc = -1;

	pthread_mutex_lock(&t->lock);
	/* A scan for a free slot, once per session start: lookups are the frequent path. */
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
			table_link(t, i);
			rc = 0;
			break;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

void session_table_remove(struct session_table *t, const uint8_t *token)
{
	int *link;

	pthread_mutex_lock(&t->lock);
	for (link = &t->bucket[table_hash(t, token)]; *link >= 0; link = &t->e[*link].next) {
		struct reflect_entry *e = &t->e[*link];

		if (memcmp(e->token, token, WIRE_TOKEN_LEN) == 0) {
			*link = e->next;
			memset(e, 0, sizeof(*e));
			break;
		}
	}
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
 * slots (only a SIGHUP reload grows it), and the buckets are rebuilt for the new size. The
 * swap happens under the table's lock, so the reflector thread sees the old arrays or the new
 * ones, never a mix. */
int session_table_grow(struct session_table *t, int cap)
{
	struct reflect_entry *e = calloc((size_t)cap, sizeof(*e)), *old;
	uint32_t mask;
	int *b = table_buckets(cap, &mask), *oldb;

	if (e == NULL || b == NULL) {
		free(e);
		free(b);
		return -1;
	}
	pthread_mutex_lock(&t->lock);
	memcpy(e, t->e, (size_t)t->cap * sizeof(*e));
	old = t->e;
	oldb = t->bucket;
	t->e = e;
	t->bucket = b;
	t->bucket_mask = mask;
	for (int i = 0; i < t->cap; i++)
		if (e[i].used)
			table_link(t, i);
	t->cap = cap;
	pthread_mutex_unlock(&t->lock);
	free(old);
	free(oldb);
	return 0;
}

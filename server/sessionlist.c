/* sessionlist: a linked list scanned under the lock; sessions are few (max-sessions). */
#include "server/sessionlist.h"

#include <pthread.h>
#include <string.h>

#include "common/sock.h"

/* Caller holds srv->lock. */
static struct session *sessionlist_find_locked(struct server_ctx *srv, const uint8_t *token)
{
	for (struct session *s = srv->sessions; s; s = s->next)
		if (memcmp(s->token, token, WIRE_TOKEN_LEN) == 0)
			return s;
	return NULL;
}

struct session *sessionlist_find(struct server_ctx *srv, const uint8_t *token)
{
	struct session *s;

	pthread_mutex_lock(&srv->lock);
	s = sessionlist_find_locked(srv, token);
	pthread_mutex_unlock(&srv->lock);
	return s;
}

int sessionlist_worker(struct server_ctx *srv, const uint8_t *token, const struct sockaddr *peer)
{
	const struct session *s;
	int w = -1;

	pthread_mutex_lock(&srv->lock);
	s = sessionlist_find_locked(srv, token);
	if (s != NULL && (peer == NULL || sock_same_ip((const struct sockaddr *)&s->peer, peer)))
		w = s->worker;
	pthread_mutex_unlock(&srv->lock);
	return w;
}

int sessionlist_count(struct server_ctx *srv)
{
	int n;

	pthread_mutex_lock(&srv->lock);
	n = srv->nsessions;
	pthread_mutex_unlock(&srv->lock);
	return n;
}

int sessionlist_client_sessions_locked(const struct server_ctx *srv, const struct sockaddr *peer)
{
	int n = 0;

	for (const struct session *s = srv->sessions; s; s = s->next)
		n += sock_same_client((const struct sockaddr *)&s->peer, peer);
	return n;
}

int64_t sessionlist_earliest_end_locked(const struct server_ctx *srv, const struct sockaddr *peer)
{
	int64_t first = 0;

	for (const struct session *s = srv->sessions; s; s = s->next)
		if ((peer == NULL || sock_same_client((const struct sockaddr *)&s->peer, peer)) &&
		    (first == 0 || s->end_ns < first))
			first = s->end_ns;
	return first;
}

void sessionlist_link_locked(struct server_ctx *srv, struct session *s)
{
	s->id = ++srv->next_session_id;
	s->next = srv->sessions;
	srv->sessions = s;
}

void sessionlist_unlink(struct server_ctx *srv, struct session *s)
{
	struct session **pp = &srv->sessions;

	pthread_mutex_lock(&srv->lock);
	while (*pp && *pp != s)
		pp = &(*pp)->next;
	if (*pp)
		*pp = s->next;
	srv->nsessions--;
	pthread_mutex_unlock(&srv->lock);
}

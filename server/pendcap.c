/* pendcap: a list of slots under the lock; the per-client count walks it, bounded by the
 * global cap, which is checked first. */
#include "server/pendcap.h"

#include <pthread.h>
#include <stdlib.h>

#include "common/sock.h"

struct pendcap_slot {
	struct sockaddr_storage peer;
	LIST_ENTRY(pendcap_slot) link; /* srv->pendcap, under srv->lock */
};

int pendcap_client_max(const struct server_ctx *srv)
{
	return 2 * srv->cfg->max_flows + 16;
}

int pendcap_max(const struct server_ctx *srv)
{
	int all = 4 * srv->cfg->max_sessions + 64, two = 2 * pendcap_client_max(srv);

	return all > two ? all : two;
}

/* Is there room for one more connection from peer? Caller holds srv->lock. */
static int pendcap_room_locked(const struct server_ctx *srv, const struct sockaddr *peer)
{
	int n = 0, max = pendcap_client_max(srv);

	if (srv->npending >= pendcap_max(srv))
		return 0;
	for (const struct pendcap_slot *s = LIST_FIRST(&srv->pendcap); s && n < max;
	     s = LIST_NEXT(s, link))
		n += sock_same_client((const struct sockaddr *)&s->peer, peer);
	return n < max;
}

struct pendcap_slot *pendcap_take(struct server_ctx *srv, const struct sockaddr_storage *peer,
				  int *over_cap)
{
	struct pendcap_slot *s = malloc(sizeof(*s));

	*over_cap = 0;
	if (s == NULL)
		return NULL;
	s->peer = *peer;
	pthread_mutex_lock(&srv->lock);
	if (!pendcap_room_locked(srv, (const struct sockaddr *)peer)) {
		pthread_mutex_unlock(&srv->lock);
		free(s);
		*over_cap = 1;
		return NULL;
	}
	LIST_INSERT_HEAD(&srv->pendcap, s, link);
	srv->npending++;
	pthread_mutex_unlock(&srv->lock);
	return s;
}

void pendcap_release(struct server_ctx *srv, struct pendcap_slot *s)
{
	if (s == NULL)
		return;
	pthread_mutex_lock(&srv->lock);
	LIST_REMOVE(s, link);
	srv->npending--;
	pthread_mutex_unlock(&srv->lock);
	free(s);
}

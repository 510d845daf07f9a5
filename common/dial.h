/* dial: connecting to a host with several addresses the way RFC 8305 ("Happy Eyeballs
 * Version 2") asks: families interleaved, a new attempt every stagger while earlier ones are
 * still pending, the first connection to complete wins. Owns only the race; resolving is
 * sock_resolve_all's. Called by the client's control-connection set-up (client/run). */
#ifndef BM_COMMON_DIAL_H
#define BM_COMMON_DIAL_H

#include <sys/socket.h>

#define DIAL_STAGGER_MS 250 /* RFC 8305 §8: the recommended Connection Attempt Delay */
#define DIAL_MAX 16

/* Reorders n addresses (RFC 8305 §4): the first address's family first, then alternating
 * with the other family while both have addresses left, each family in its given order. */
void dial_interleave(struct sockaddr_storage *sa, socklen_t *len, int n);

/* Races connects to sa[0..n) (n ≤ DIAL_MAX) from local (sock_connect_start_from; NULL: any
 * local address), in order: the next attempt starts stagger_ms
 * after the previous one, or at once when that one fails; each attempt may take timeout_ms.
 * Returns the first connected non-blocking fd and its index in *won; every other attempt is
 * closed. -1 when all failed, with the last failure in err (one sentence, naming its
 * address); each earlier failure is logged at info level. */
int dial_race(const struct sockaddr_storage *sa, const socklen_t *len, int n,
	      const struct sockaddr_storage *local, int stagger_ms, int timeout_ms, int *won,
	      char *err, size_t errlen);

#endif

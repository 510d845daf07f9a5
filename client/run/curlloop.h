/* curlloop: libcurl's multi interface driven by a libevent loop (CURLMOPT_SOCKETFUNCTION and
 * CURLMOPT_TIMERFUNCTION), so HTTP transfers run on the client's own event loop next to its
 * timers. It owns the multi handle and one event per socket curl watches; each transfer
 * carries a completion callback. Layer: client/run; callers: httpload.c, httpprobe.c and
 * httpmode.c (the HTTP mode's transfers). */
#ifndef BM_CURLLOOP_H
#define BM_CURLLOOP_H

#include <stddef.h>

#include <curl/curl.h>
#include <event2/event.h>

struct curlloop;

/* Called once when a transfer ends (any result); the easy handle is already out of the multi
 * handle and belongs to the callee again. */
typedef void (*curlloop_done_fn)(CURL *easy, CURLcode result, void *arg);

/* Multiplexing over HTTP/2 is off: every transfer gets its own connection, so N load
 * transfers are N TCP flows. NULL with err. */
struct curlloop *curlloop_new(struct event_base *base, char *err, size_t errlen);
/* Starts easy on the loop; done runs when it ends. -1 with err (easy stays the caller's). */
int curlloop_add(struct curlloop *cl, CURL *easy, curlloop_done_fn done, void *arg, char *err,
		 size_t errlen);
/* Ends a running transfer without calling its done callback (the caller frees easy). */
void curlloop_remove(struct curlloop *cl, CURL *easy);
/* Transfers running. */
int curlloop_running(const struct curlloop *cl);
/* Frees the loop; every transfer must have been removed or completed. */
void curlloop_free(struct curlloop *cl);

#endif

/* accept: takes new TCP connections on the daemon's port through their first whole message
 * (bounded in number and time) and hands each to control, bulk or connprobe. */
#ifndef BM_ACCEPT_H
#define BM_ACCEPT_H

#include <event2/event.h>

#include "server/ctx.h"

/* The listener's read callback; arg is the server_ctx. Accepts up to 64 connections a call. */
void accept_callback(evutil_socket_t lfd, short what, void *arg);

#endif

/* testrecord: where a finished test goes — the ring of recent tests (server/testring.h) and
 * the results-log (server/resultslog.h) — so a CLI session's end and a browser's result post
 * record it the same way. Main thread only (both of those are the main thread's). */
#ifndef BM_TESTRECORD_H
#define BM_TESTRECORD_H

#include "server/ctx.h"
#include "server/testring.h"

void testrecord_done(struct server_ctx *srv, const struct test_summary *s);

#endif

/* testrecord: a finished test into the ring and the results-log. */
#include "server/testrecord.h"

#include "server/resultslog.h"

void testrecord_done(struct server_ctx *srv, const struct test_summary *s)
{
	if (srv->tests != NULL)
		testring_push(srv->tests, s);
	if (srv->results_log != NULL)
		resultslog_write(srv->results_log, s);
}

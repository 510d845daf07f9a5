/* probeset: the auxiliary probes of one test — which kinds run against which targets (ICMP to
 * the server and the first hop, DNS to the daemon's responder and optionally a resolver, new
 * TCP connections, passive capture), their shared runner thread, and the notes the report
 * shows when a kind cannot run. The in-flow probes live on the load connections (load.c). */
#ifndef BM_PROBESET_H
#define BM_PROBESET_H

#include <stdint.h>
#include <sys/socket.h>

#include "client/model/config.h"
#include "client/model/probebudget.h"
#include "client/model/result.h"
#include "client/run/ctrl.h"

struct probeset;

/* Starts every selected kind against the server at sa (its control port). Kinds that cannot
 * run get a series with available = 0 and a note; only a failure of the runner itself is an
 * error (NULL + err). Series live in r->series and are written by the runner thread until
 * probeset_stop. */
struct probeset *probeset_start(const struct client_config *cfg, const struct sockaddr_storage *sa,
				socklen_t salen, const struct ctrl_welcome *w, struct test_result *r,
				char *err, size_t errlen);
/* Adds the running probes to m->streams (ICMP: one per target, and DNS, TCP, per-hop). */
void probeset_mix(const struct probeset *p, struct budget_mix *m);
/* From the load loop while the runner runs: every probe's interval from its next slot on
 * (ms by budget kind; 0 leaves a kind alone). */
void probeset_set_intervals(struct probeset *p, const double ms[BUDGET_KINDS]);
/* Stops sending, waits grace_ns for late answers, joins the threads. Idempotent. */
void probeset_stop(struct probeset *p, int64_t grace_ns);
/* After the test's UDP records are in r: closes the series (pending → lost), stores the
 * capture's figures, frees p. */
void probeset_finish(struct probeset *p, struct test_result *r);

#endif

/* wording: the sentences about a run that every human-readable writer (text summary, HTML)
 * shares, worded once: the congestion control each end really ran, and what a managed queue
 * means for the buffer estimate, and the lab's bottleneck as configured. Reads the result only. Layer: client/report. */
#ifndef BM_REPORT_WORDING_H
#define BM_REPORT_WORDING_H

#include <stddef.h>

#include "client/model/result.h"

/* Shown beside a buffer estimate whose queue stayed short while drops occurred at full load. */
#define WORDING_MANAGED_QUEUE \
	"short queue with drops at full load: a managed queue (AQM), a policer or a host limit " \
	"— the physical buffer is not observable"

/* The congestion control the user asked for (the report's, else the configuration's). */
const char *wording_cc_requested(const struct test_result *r);
/* What one end really ran: "cubic", or "reno (bbr refused)" and with why when why is not
 * NULL ("reno (bbr refused: EPERM)"). Server-supplied text is cleaned of control bytes. */
void wording_cc_end(const struct test_result *r, int server, int why, char *buf, size_t len);
/* Both ends in one phrase: "cc cubic (both ends)", or "cc client bbr, server cubic (bbr
 * refused)". */
void wording_cc(const struct test_result *r, char *buf, size_t len);
/* The algorithm the client's load flows ran, for titles. */
const char *wording_cc_client(const struct test_result *r);
/* The lab's bottleneck queue as configured, in one phrase: the qdisc with its parameters, ECN
 * marking (AQMs only), the added delay, and where it sits ("codel (target_ms 5, interval_ms
 * 100), ECN marking on, +10 ms one-way delay each way; router: userspace on ..."). */
void wording_lab_queue(const struct lab_truth *t, char *buf, size_t len);

#endif

/* analysis_ecn: with --ecn, what the load flows negotiated (TCP_INFO's ECN option), the CE
 * marks per direction (downstream the capture's CE codepoints; upstream the upload flows'
 * tcpi_delivered_ce, else the capture's) and whether the path marks or drops. Layer: client/analysis; called by
 * analysis_run. */
#ifndef BM_ANALYSIS_ECN_H
#define BM_ANALYSIS_ECN_H

#include "client/model/result.h"

/* Fills r->ecn's flows, marks and verdict; does nothing without --ecn. */
void analysis_ecn(struct test_result *r);

/* The verdict from the counts in e (flows, flows_ecn, ce_down, ce_up, retrans): pure. */
void analysis_ecn_judge(struct ecn_report *e);

#endif

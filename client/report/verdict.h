/* verdict: what a person needs in five seconds — the grade, per direction the latency the load
 * added, the buffer (≥ where it is a bound) and the throughput, and one line of advice — as
 * label/value lines that fit 80 columns. The text summary prints it first; the HTML report
 * opens with it as a card. Reads the result only. Layer: client/report. */
#ifndef BM_REPORT_VERDICT_H
#define BM_REPORT_VERDICT_H

#include "client/model/result.h"

#define VERDICT_LINES 10
#define VERDICT_LABEL 12  /* label column, padded */
#define VERDICT_VALUE 160 /* room for a value; the text writer wraps it at 80 columns */

struct verdict {
	const char *grade;        /* overall DSLReports grade, NULL if nothing was loaded */
	int bloated;              /* the grade is below A: the advice is to shape */
	int n;
	struct {
		const char *label;    /* static: "Stopped", "Last reply", "Bufferbloat", "Download", ... */
		char value[VERDICT_VALUE];
	} line[VERDICT_LINES];
};

void verdict_build(const struct test_result *r, struct verdict *v);

#endif

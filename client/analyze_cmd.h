/* analyze_cmd: `bloatmeter analyze [-J] FILE.pcap` — the passive analyzer over a capture file
 * (pcap or pcapng), printed as a short text summary or as JSON. */
#ifndef BM_ANALYZE_CMD_H
#define BM_ANALYZE_CMD_H

#include <stdio.h>

#include <json-c/json.h>
#include <pcap/pcap.h>

#include "probes/pcapanalyze.h"

struct jb;

/* argv[0] is "analyze". Returns the exit code: 0 done (also after a truncated last record,
 * with a warning), 1 not a capture / truncated header / unsupported link type / I/O error,
 * 2 bad usage. Messages go to stderr as one sentence. */
int analyze_main(int argc, char **argv);

/* Reads every packet of an open capture into a fresh analyzer and writes the summary to out
 * (JSON when json). Returns 0, 1 when a read error cut the capture short after some packets
 * (err says so; the summary covers what was read), or -1 with one sentence in err and nothing
 * written. name labels the summary. */
int analyze_capture(pcap_t *p, const char *name, int json, FILE *out, char *err, size_t errlen);

#endif

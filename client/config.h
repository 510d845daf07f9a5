/* config: everything the user chose for one client run, after parsing and validation. */
#ifndef BM_CLIENT_CONFIG_H
#define BM_CLIENT_CONFIG_H

#include <stdint.h>

enum phase_kind { PHASE_IDLE = 0, PHASE_DOWNLOAD, PHASE_UPLOAD, PHASE_BIDIR, PHASE_KINDS };

#define CLIENT_DEFAULT_PORT 4750

struct client_config {
	const char *server;       /* host name or address */
	uint16_t port;
	enum phase_kind phases[PHASE_KINDS]; /* in run order */
	int nphases;
	int flows;                /* TCP flows per loaded direction */
	double duration_s;        /* each loaded phase */
	double idle_s;            /* the idle phase */
	double gap_s;             /* drain gap after each loaded phase */
	double interval_ms;       /* UDP probe interval */
	int probe_size;           /* UDP probe bytes (payload) */
	char cc[16];              /* congestion control for load flows */
	int json_stdout;          /* -J */
	const char *json_file;    /* --json FILE */
	const char *log_file;     /* --log FILE: JSONL history */
	const char *prom_file;    /* --prometheus FILE */
	const char *html_file;    /* --html FILE */
	const char *flent_file;   /* --flent FILE */
	int quiet;                /* -q */
	int verbose;
};

const char *phase_name(enum phase_kind k);
/* Parses "idle,download,..." into cfg->phases; -1 on an unknown or repeated name. */
int config_parse_phases(struct client_config *cfg, const char *list);
void config_defaults(struct client_config *cfg);

#endif

/* config: client defaults and the phase list parser. */
#include "client/config.h"

#include <stdio.h>
#include <string.h>

static const char *const phase_names[PHASE_KINDS] = { "idle", "download", "upload", "bidirectional" };

const char *phase_name(enum phase_kind k)
{
	return (unsigned)k < PHASE_KINDS ? phase_names[k] : "?";
}

void config_defaults(struct client_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->port = CLIENT_DEFAULT_PORT;
	for (int i = 0; i < PHASE_KINDS; i++)
		cfg->phases[i] = (enum phase_kind)i;
	cfg->nphases = PHASE_KINDS;
	cfg->flows = 8;
	cfg->duration_s = 10;
	cfg->idle_s = 5;
	cfg->gap_s = 2;
	cfg->interval_ms = 10;
	cfg->probe_size = 100;
	snprintf(cfg->cc, sizeof(cfg->cc), "cubic");
}

int config_parse_phases(struct client_config *cfg, const char *list)
{
	char buf[128], *save = NULL;
	int seen[PHASE_KINDS] = { 0 }, n = 0;

	if (strlen(list) >= sizeof(buf))
		return -1;
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int k = -1;

		for (int i = 0; i < PHASE_KINDS; i++)
			if (strcmp(tok, phase_names[i]) == 0 || (i == PHASE_BIDIR && strcmp(tok, "bidir") == 0))
				k = i;
		if (k < 0 || seen[k])
			return -1;
		seen[k] = 1;
		cfg->phases[n++] = (enum phase_kind)k;
	}
	if (n == 0)
		return -1;
	cfg->nphases = n;
	return 0;
}

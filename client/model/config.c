/* config: client defaults and the phase list parser. */
#include "client/model/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const probe_names[PROBE_KINDS] = { "udp", "icmp", "dns", "tcp", "inflow",
							"pcap" };
static const char *const phase_names[PHASE_KINDS] = { "idle", "download", "upload", "bidirectional" };

const char *phase_name(enum phase_kind k)
{
	return (unsigned)k < PHASE_KINDS ? phase_names[k] : "?";
}

const char *probe_kind_name(enum probe_kind k)
{
	return (unsigned)k < PROBE_KINDS ? probe_names[k] : "?";
}

static int probe_kind_of(const char *name)
{
	for (int i = 0; i < PROBE_KINDS; i++)
		if (strcmp(name, probe_names[i]) == 0)
			return i;
	return -1;
}

int config_parse_probes(struct client_config *cfg, const char *list)
{
	char buf[128], *save = NULL;
	unsigned set = PROBE_BIT(PROBE_UDP);

	if (strlen(list) >= sizeof(buf) || list[0] == '\0')
		return -1;
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int k = probe_kind_of(tok);

		if (k < 0)
			return -1;
		set |= PROBE_BIT(k);
	}
	cfg->probes = set;
	cfg->probes_set = 1;
	return 0;
}

int config_parse_interval(struct client_config *cfg, const char *spec)
{
	char kind[16], *end;
	const char *eq = strchr(spec, '=');
	double ms;
	int k;

	if (eq == NULL || (size_t)(eq - spec) >= sizeof(kind))
		return -1;
	memcpy(kind, spec, (size_t)(eq - spec));
	kind[eq - spec] = '\0';
	k = probe_kind_of(kind);
	ms = strtod(eq + 1, &end);
	if (k < 0 || k == PROBE_PCAP || end == eq + 1 || *end != '\0' || !(ms >= 1) ||
	    ms > (k == PROBE_UDP ? 1000 : 10000))
		return -1;
	cfg->probe_interval_ms[k] = ms;
	if (k == PROBE_UDP)
		cfg->interval_ms = ms;
	return 0;
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
	cfg->probes = PROBES_DEFAULT;
	/* A few per second per kind, as RRUL and the responsiveness draft use; together with the
	 * 100/s UDP stream well under 5 % of a 1 Mbit/s link (docs/methods.md). */
	cfg->probe_interval_ms[PROBE_UDP] = cfg->interval_ms;
	cfg->probe_interval_ms[PROBE_ICMP] = 100;
	cfg->probe_interval_ms[PROBE_DNS] = 200;
	cfg->probe_interval_ms[PROBE_TCP] = 200;
	cfg->probe_interval_ms[PROBE_INFLOW] = 100;
	cfg->dscp = -1;
	snprintf(cfg->cc, sizeof(cfg->cc), "cubic");
	cfg->run_as = CONFIG_DEFAULT_USER;
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

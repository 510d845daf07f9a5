/* fuzz_srvconfig: hostile bytes as bloatmeterd's configuration file. Whatever the text, the
 * parser stays inside it, names the line of any refusal, and leaves only valid values. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/dns.h"
#include "server/srvconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every value the parser stored is one the option table allows. */
static void fuzz_srvconfig_check(const struct server_config *cfg)
{
	struct dns_zone z;

	if (cfg->port < 1 || cfg->max_sessions < 1 || cfg->max_sessions > 100000 ||
	    cfg->max_flows < 1 || cfg->max_flows > 1024 || cfg->max_duration_s < 5 ||
	    cfg->max_duration_s > 86400 || cfg->verbose < 0 || cfg->verbose > 2)
		abort();
	if (!cfg->dns_port_set && cfg->dns_port != (cfg->port < 65535 ? cfg->port + 1 : 0))
		abort();
	if (cfg->bind_addr != NULL &&
	    (cfg->bind_addr != cfg->bind_buf || strlen(cfg->bind_addr) >= sizeof(cfg->bind_buf) ||
	     cfg->bind_addr[0] == '\0'))
		abort();
	if (cfg->dns_zone != NULL &&
	    (cfg->dns_zone != cfg->zone_buf || dns_zone_init(&z, cfg->dns_zone) < 0))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size heap copy without a terminator: ASan sees any read past the text. */
	char *buf = malloc(size ? size : 1);
	struct server_config cfg;
	char err[SRVCONFIG_ERR_MAX];
	int rc;

	if (buf == NULL)
		abort();
	memcpy(buf, data, size);
	srvconfig_defaults(&cfg);
	err[0] = '\0';
	rc = srvconfig_parse(buf, size, &cfg, err, sizeof(err));
	if (rc != 0 && rc != -1)
		abort();
	if (rc == -1 && (err[0] < '1' || err[0] > '9' || strstr(err, ": ") == NULL))
		abort(); /* every refusal starts with its line number */
	if (rc == 0)
		fuzz_srvconfig_check(&cfg);
	free(buf);
	return 0;
}

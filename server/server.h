/* server: bloatmeterd's top level — listeners, the accept path, and the threads it runs. */
#ifndef BM_SERVER_H
#define BM_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "server/config.h"

#define SERVER_DRAIN_S 2 /* on SIGTERM, how long running sessions get to end */

/* Runs the daemon until SIGINT/SIGTERM, which end the running sessions within
 * SERVER_DRAIN_S seconds; SIGHUP reloads the run-time limits from cfg->config_path. Returns 0
 * on a clean stop, 1 if start-up failed. */
int server_run(const struct server_config *cfg);
/* Opens what psk-file and tls-cert/tls-key name and checks it (what start-up and -n do):
 * 0, or -1 with one sentence in err. */
int server_check_security(const struct server_config *cfg, char *err, size_t errlen);

#endif

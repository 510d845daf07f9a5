/* labweb: the lab's HTTP speed-test set-up (`bloatmeter lab --http` / `--https`) — the lab
 * daemon's public listener flags (--web-port, and for HTTPS --web-tls with a lab certificate
 * from labcert.c as --tls-cert/--tls-key) and the URL and trust anchor the client's HTTP mode
 * then uses. Layer: client/lab; caller: lab.c. */
#ifndef BM_LABWEB_H
#define BM_LABWEB_H

#include <stddef.h>
#include <stdint.h>

#include "client/lab/labcert.h"

#define LABWEB_MAX_ARGS 8      /* daemon flags labweb_daemon_args may add */
#define LABWEB_PORT 8080       /* the public listener's port in the server namespace */

/* What `bloatmeter lab` tests: bloatmeterd's own protocol, or its HTTP endpoints. */
enum { LAB_HTTP_OFF = 0, LAB_HTTP_PLAIN, LAB_HTTP_TLS };

struct labweb {
	int mode;              /* LAB_HTTP_OFF, LAB_HTTP_PLAIN, LAB_HTTP_TLS */
	struct labcert cert;
	char port[8];
	char url[96];
};

/* Prepares mode for the server at host (numeric; IPv6 without brackets), making the
 * certificate for HTTPS. 0, or -1 with one sentence in err. */
int labweb_setup(struct labweb *w, int mode, const char *host, char *err, size_t errlen);
/* Writes the daemon's flags into argv (room for LABWEB_MAX_ARGS); returns how many. */
int labweb_daemon_args(struct labweb *w, char **argv);
/* The URL the client tests, NULL when the lab runs no HTTP test. */
const char *labweb_url(const struct labweb *w);
/* The certificate the client must trust (--ca), NULL without HTTPS. */
const char *labweb_ca(const struct labweb *w);
/* Removes the certificate files; safe whatever was set up. */
void labweb_cleanup(struct labweb *w);

#endif

/* labweb: flags and URL of the lab's HTTP test. */
#include "client/lab/labweb.h"

#include <stdio.h>
#include <string.h>

int labweb_setup(struct labweb *w, int mode, const char *host, char *err, size_t errlen)
{
	int v6 = strchr(host, ':') != NULL;

	memset(w, 0, sizeof(*w));
	w->mode = mode;
	if (mode == LAB_HTTP_OFF)
		return 0;
	snprintf(w->port, sizeof(w->port), "%u", (unsigned)LABWEB_PORT);
	snprintf(w->url, sizeof(w->url), "%s://%s%s%s:%u", mode == LAB_HTTP_TLS ? "https" : "http",
		 v6 ? "[" : "", host, v6 ? "]" : "", (unsigned)LABWEB_PORT);
	if (mode == LAB_HTTP_TLS && labcert_make(&w->cert, host, err, errlen) < 0)
		return -1;
	return 0;
}

int labweb_daemon_args(struct labweb *w, char **argv)
{
	int n = 0;

	if (w->mode == LAB_HTTP_OFF)
		return 0;
	argv[n++] = "--web-port";
	argv[n++] = w->port;
	if (w->mode == LAB_HTTP_TLS) {
		argv[n++] = "--web-tls";
		argv[n++] = "yes";
		argv[n++] = "--tls-cert";
		argv[n++] = w->cert.cert;
		argv[n++] = "--tls-key";
		argv[n++] = w->cert.key;
	}
	return n;
}

const char *labweb_url(const struct labweb *w)
{
	return w->mode == LAB_HTTP_OFF ? NULL : w->url;
}

const char *labweb_ca(const struct labweb *w)
{
	return w->mode == LAB_HTTP_TLS ? w->cert.cert : NULL;
}

void labweb_cleanup(struct labweb *w)
{
	labcert_remove(&w->cert);
}

/* labcert: the lab's TLS certificate for `bloatmeter lab --https` — a self-signed P-256
 * certificate for the lab server's address (subjectAltName IP), valid for a day, and its key,
 * written as PEM into a private temporary directory the lab removes again. The client trusts
 * exactly this certificate (--ca), so the HTTPS test checks the server as a real one would.
 * Layer: client/lab; caller: labweb.c. */
#ifndef BM_LABCERT_H
#define BM_LABCERT_H

#include <limits.h>
#include <stddef.h>

struct labcert {
	char dir[64];          /* "" when nothing was made */
	char cert[PATH_MAX];   /* dir/server.pem */
	char key[PATH_MAX];    /* dir/server.key (mode 0600) */
};

/* Makes the directory, key and certificate for the numeric address ip. 0, or -1 with one
 * sentence in err (whatever was made is removed). */
int labcert_make(struct labcert *c, const char *ip, char *err, size_t errlen);
/* Removes the files and the directory; safe when nothing was made. */
void labcert_remove(struct labcert *c);

#endif

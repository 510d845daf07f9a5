/* leakshim: an LD_PRELOAD library that gives bloatmeterd a leak, so the soak's flatness check
 * can be seen to fail (ctest soak_leak_detected): every connection the daemon accepts
 * (accept4) leaks LEAKSHIM_BYTES of touched heap and a duplicate of its descriptor. Test-only;
 * never installed. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define LEAKSHIM_BYTES (16 * 1024)

/* The chain of leaked blocks: kept reachable so the compiler cannot drop them as dead. */
static void *leakshim_chain;

int accept4(int fd, struct sockaddr *sa, socklen_t *len, int flags)
{
	int (*real)(int, struct sockaddr *, socklen_t *, int);
	int c, lost;
	char *p;

	*(void **)&real = dlsym(RTLD_NEXT, "accept4");
	if (real == NULL)
		abort();
	c = real(fd, sa, len, flags);
	if (c < 0)
		return c;
	p = malloc(LEAKSHIM_BYTES);
	if (p != NULL) {
		memset(p, 0x5a, LEAKSHIM_BYTES); /* touched: resident, not just reserved */
		memcpy(p, &leakshim_chain, sizeof(leakshim_chain));
		leakshim_chain = p;
	}
	lost = dup(c); /* never closed: the leak */
	(void)lost;
	return c;
}

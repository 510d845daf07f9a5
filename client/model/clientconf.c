/* clientconf: locating and parsing bloatmeter.conf. */
#include "client/model/clientconf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/lines.h"

static int clientconf_line(struct clientconf *c, const char *s, size_t n, int line, char *err,
			   size_t errlen)
{
	size_t k, v, vn;
	const char *eq;

	n = lines_rtrim(s, lines_uncomment(s, n));
	k = lines_blanks(s, n);
	if (k == n)
		return 0; /* blank or comment */
	eq = memchr(s + k, '=', n - k);
	if (eq == NULL) {
		snprintf(err, errlen, "%d: expected \"key = value\"", line);
		return -1;
	}
	vn = lines_rtrim(s + k, (size_t)(eq - (s + k)));
	v = (size_t)(eq - s) + 1;
	v += lines_blanks(s + v, n - v);
	if (vn != strlen("default-target") || memcmp(s + k, "default-target", vn) != 0) {
		snprintf(err, errlen, "%d: unknown key \"%.*s\" (known: default-target)", line,
			 (int)(vn > 40 ? 40 : vn), s + k);
		return -1;
	}
	if (c->default_target[0] != '\0') {
		snprintf(err, errlen, "%d: default-target is given twice", line);
		return -1;
	}
	if (v >= n || n - v >= sizeof(c->default_target) || memchr(s + v, '\0', n - v) != NULL) {
		snprintf(err, errlen, "%d: default-target needs a value of 1-%zu bytes", line,
			 sizeof(c->default_target) - 1);
		return -1;
	}
	memcpy(c->default_target, s + v, n - v);
	c->default_target[n - v] = '\0';
	return 0;
}

int clientconf_parse(struct clientconf *c, const char *text, size_t len, char *err,
		     size_t errlen)
{
	struct lines it;
	const char *s;
	size_t n;

	c->default_target[0] = '\0';
	lines_init(&it, text, len);
	while (lines_next(&it, &s, &n))
		if (clientconf_line(c, s, n, it.line, err, errlen) < 0)
			return -1;
	return 0;
}

/* The path to read into c->path: 1 found, 0 none, -1 (err) when BLOATMETER_CONFIG is unusable. */
static int clientconf_find(struct clientconf *c, char *err, size_t errlen)
{
	const char *env = getenv("BLOATMETER_CONFIG"), *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	char user[CLIENTCONF_PATH_MAX];
	int n;

	if (env != NULL && env[0] != '\0') {
		if (strlen(env) >= sizeof(c->path)) {
			snprintf(err, errlen, "BLOATMETER_CONFIG is too long");
			return -1;
		}
		snprintf(c->path, sizeof(c->path), "%s", env);
		return 1;
	}
	if (xdg != NULL && xdg[0] == '/')
		n = snprintf(user, sizeof(user), "%s/bloatmeter/bloatmeter.conf", xdg);
	else if (home != NULL && home[0] == '/')
		n = snprintf(user, sizeof(user), "%s/.config/bloatmeter/bloatmeter.conf", home);
	else
		n = -1;
	if (n > 0 && (size_t)n < sizeof(user) && access(user, F_OK) == 0) {
		snprintf(c->path, sizeof(c->path), "%s", user);
		return 1;
	}
	if (access("/etc/bloatmeter/bloatmeter.conf", F_OK) == 0) {
		snprintf(c->path, sizeof(c->path), "/etc/bloatmeter/bloatmeter.conf");
		return 1;
	}
	return 0;
}

int clientconf_load(struct clientconf *c, char *err, size_t errlen)
{
	char *buf, why[CLIENTCONF_ERR_MAX];
	ssize_t len;
	int fd, rc;

	memset(c, 0, sizeof(*c));
	rc = clientconf_find(c, err, errlen);
	if (rc <= 0)
		return rc;
	fd = open(c->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot read %s: %s", c->path, strerror(errno));
		return -1;
	}
	buf = malloc(CLIENTCONF_MAX_FILE + 1);
	len = buf ? fileio_read_bounded(fd, buf, CLIENTCONF_MAX_FILE) : -1;
	if (len < 0) {
		snprintf(err, errlen, "cannot read %s: %s", c->path,
			 buf == NULL ? "out of memory" : errno == EFBIG ? "larger than 64 KiB"
			 : strerror(errno));
		rc = -1;
	} else if (clientconf_parse(c, buf, (size_t)len, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "%s:%s", c->path, why);
		rc = -1;
	}
	free(buf);
	close(fd);
	return rc;
}

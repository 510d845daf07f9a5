/* limits: the token bucket, pacing shares, the busy estimate, rate values, and the admission
 * sampler (a libevent timer reading /sys/class/net/IFNAME/statistics/tx_bytes once a second). */
#include "server/limits.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/util.h"

#define LIMITS_UNLIMITED 1e18 /* "available" units of an unlimited bucket */
#define LIMITS_COUNTER_MAX 24 /* bytes of a sysfs counter: 20 digits, a newline, slack */

static void limits_bucket_refill(struct limits_bucket *b, int64_t now_ns)
{
	if (now_ns <= b->last_ns)
		return;
	b->tokens += (double)(now_ns - b->last_ns) * b->rate / (double)NS_PER_SEC;
	if (b->tokens > b->burst)
		b->tokens = b->burst;
	b->last_ns = now_ns;
}

void limits_bucket_init(struct limits_bucket *b, double rate, double burst, int64_t now_ns)
{
	b->rate = rate > 0 ? rate : 0;
	b->burst = burst > 0 ? burst : 0;
	b->tokens = b->burst;
	b->last_ns = now_ns;
}

void limits_bucket_set(struct limits_bucket *b, double rate, double burst)
{
	b->rate = rate > 0 ? rate : 0;
	b->burst = burst > 0 ? burst : 0;
	if (b->tokens > b->burst)
		b->tokens = b->burst;
}

double limits_bucket_avail(struct limits_bucket *b, int64_t now_ns)
{
	if (b->rate == 0)
		return LIMITS_UNLIMITED;
	limits_bucket_refill(b, now_ns);
	return b->tokens;
}

int limits_bucket_take(struct limits_bucket *b, int64_t now_ns, double n)
{
	if (limits_bucket_avail(b, now_ns) < n)
		return 0;
	if (b->rate > 0)
		b->tokens -= n;
	return 1;
}

void limits_bucket_charge(struct limits_bucket *b, int64_t now_ns, double n)
{
	if (b->rate == 0)
		return;
	limits_bucket_refill(b, now_ns);
	b->tokens -= n;
}

double limits_probe_burst(int per_s)
{
	double burst = per_s / 4.0;

	return burst < 10 ? 10 : burst;
}

int limits_parse_rate(const char *s, uint64_t *bps)
{
	if (s != NULL && strcmp(s, "0") == 0) {
		*bps = 0;
		return 0;
	}
	return util_parse_rate(s, bps);
}

void limits_format_rate(uint64_t bps, char *buf, size_t len)
{
	if (bps == 0)
		snprintf(buf, len, "none");
	else if (bps >= 1000000000 && bps % 1000000 == 0)
		snprintf(buf, len, "%g Gbit/s", (double)bps / 1e9);
	else if (bps >= 1000000)
		snprintf(buf, len, "%g Mbit/s", (double)bps / 1e6);
	else if (bps >= 1000)
		snprintf(buf, len, "%g kbit/s", (double)bps / 1e3);
	else
		snprintf(buf, len, "%llu bit/s", (unsigned long long)bps);
}

int limits_retry_after_s(int64_t earliest_end_ns, int64_t now_ns, int lo_s, int hi_s)
{
	int64_t left;

	if (earliest_end_ns <= 0)
		return lo_s;
	left = earliest_end_ns - now_ns;
	if (left <= (int64_t)lo_s * NS_PER_SEC)
		return lo_s;
	if (left >= (int64_t)hi_s * NS_PER_SEC)
		return hi_s;
	return (int)((left + NS_PER_SEC - 1) / NS_PER_SEC);
}

int limits_ifname_ok(const char *name)
{
	size_t n = strnlen(name, 16);

	if (n == 0 || n > 15 || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c <= ' ' || c >= 0x7f || c == '/' || c == ':')
			return 0;
	}
	return 1;
}

int limits_parse_counter(const char *buf, size_t len, uint64_t *v)
{
	uint64_t x = 0;
	size_t i = 0;

	if (len > LIMITS_COUNTER_MAX)
		return -1;
	for (; i < len && buf[i] >= '0' && buf[i] <= '9'; i++) {
		unsigned d = (unsigned)(buf[i] - '0');

		if (x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	if (i == 0)
		return -1;
	if (i < len && buf[i] == '\n')
		i++;
	if (i != len)
		return -1;
	*v = x;
	return 0;
}

void limits_meter_update(struct limits_meter *m, uint64_t bytes, int64_t now_ns)
{
	if (m->have && bytes >= m->bytes && now_ns > m->t_ns)
		m->bps = (double)(bytes - m->bytes) * 8.0 * (double)NS_PER_SEC /
			 (double)(now_ns - m->t_ns);
	else
		m->bps = 0;
	m->have = 1;
	m->bytes = bytes;
	m->t_ns = now_ns;
}

struct limits_admission {
	struct event *timer;
	char path[64];       /* /sys/class/net/IFNAME/statistics/tx_bytes */
	char ifname[16];
	uint64_t max_bps;
	struct limits_meter meter;
	int failing;         /* the last reading failed (warned once per failure spell) */
	atomic_int busy;     /* set on the main thread, read by the workers at every hello */
};

/* One reading of the counter file; 0 or -1 with errno (EINVAL: not a counter). */
static int limits_read_counter(const char *path, uint64_t *v)
{
	char buf[LIMITS_COUNTER_MAX + 1];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), saved;

	if (fd < 0)
		return -1;
	do
		n = read(fd, buf, sizeof(buf));
	while (n < 0 && errno == EINTR);
	saved = errno;
	close(fd);
	if (n < 0) {
		errno = saved;
		return -1;
	}
	if (limits_parse_counter(buf, (size_t)n, v) < 0) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

static void limits_admission_sample(struct limits_admission *a)
{
	uint64_t bytes;

	if (limits_read_counter(a->path, &bytes) < 0) {
		/* Admit while blind: a vanished interface must not lock every client out. */
		if (!a->failing)
			log_warn("admission control: cannot read %s; admitting every session until "
				 "it can be read again", a->path);
		a->failing = 1;
		a->busy = 0;
		a->meter.have = 0;
		a->meter.bps = 0;
		return;
	}
	if (a->failing)
		log_info("admission control: %s readable again", a->path);
	a->failing = 0;
	limits_meter_update(&a->meter, bytes, clock_mono_ns());
	a->busy = a->max_bps > 0 && a->meter.bps > (double)a->max_bps;
}

static void limits_admission_callback(evutil_socket_t fd, short what, void *arg)
{
	limits_admission_sample(arg);
}

struct limits_admission *limits_admission_start(struct event_base *base, const char *ifname,
						uint64_t max_bps, char *err, size_t errlen)
{
	struct limits_admission *a;
	struct timeval tv = { 1, 0 };
	uint64_t bytes;

	if (!limits_ifname_ok(ifname)) {
		snprintf(err, errlen, "admission-interface \"%s\" is not an interface name", ifname);
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (a == NULL) {
		snprintf(err, errlen, "admission control: out of memory");
		return NULL;
	}
	snprintf(a->ifname, sizeof(a->ifname), "%s", ifname);
	snprintf(a->path, sizeof(a->path), "/sys/class/net/%s/statistics/tx_bytes", ifname);
	a->max_bps = max_bps;
	if (limits_read_counter(a->path, &bytes) < 0) {
		snprintf(err, errlen, "admission-interface %s: cannot read %s: %s", ifname, a->path,
			 errno == ENOENT ? "no such interface" : strerror(errno));
		free(a);
		return NULL;
	}
	limits_meter_update(&a->meter, bytes, clock_mono_ns());
	a->timer = event_new(base, -1, EV_PERSIST, limits_admission_callback, a);
	if (a->timer == NULL || event_add(a->timer, &tv) < 0) {
		snprintf(err, errlen, "admission control: cannot start its timer");
		limits_admission_stop(a);
		return NULL;
	}
	return a;
}

void limits_admission_set_max(struct limits_admission *a, uint64_t max_bps)
{
	if (a == NULL)
		return;
	a->max_bps = max_bps;
	a->busy = max_bps > 0 && a->meter.bps > (double)max_bps;
}

int limits_admission_busy(const struct limits_admission *a)
{
	return a != NULL && a->busy;
}

double limits_admission_rate(const struct limits_admission *a)
{
	return a != NULL ? a->meter.bps : 0;
}

void limits_admission_stop(struct limits_admission *a)
{
	if (a == NULL)
		return;
	if (a->timer)
		event_free(a->timer);
	free(a);
}

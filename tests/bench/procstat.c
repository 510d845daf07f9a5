/* procstat: /proc/PID/stat, status, task/ and fd/ of a process, for the benchmarks. */
#include "tests/bench/procstat.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* utime + stime of a stat line; the command name may hold blanks and parentheses, so the
 * fields are counted from the last ')'. comm gets the name when not NULL. */
static int procstat_stat_file(const char *path, long long *ticks, char *comm, size_t commlen)
{
	char line[1024], *open, *close;
	unsigned long long ut, st;
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL)
		return -1;
	n = fread(line, 1, sizeof(line) - 1, f);
	fclose(f);
	line[n] = '\0';
	open = strchr(line, '(');
	close = strrchr(line, ')');
	if (open == NULL || close == NULL || close < open)
		return -1;
	if (comm)
		snprintf(comm, commlen, "%.*s", (int)(close - open - 1), open + 1);
	/* After ") ": state(3) ... utime is field 14, stime 15; field 3 is the first here. */
	if (sscanf(close + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	*ticks = (long long)(ut + st);
	return 0;
}

static long procstat_status_kib(const char *path, const char *key)
{
	char line[256];
	size_t klen = strlen(key);
	long v = -1;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			v = strtol(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

static int procstat_count_fds(int pid)
{
	char path[64];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static void procstat_threads(int pid, struct procstat_sample *s)
{
	char path[96];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	if ((d = opendir(path)) == NULL)
		return;
	while ((de = readdir(d)) != NULL && s->nthreads < PROCSTAT_MAX_THREADS) {
		struct procstat_thread *t = &s->th[s->nthreads];

		if (de->d_name[0] == '.')
			continue;
		t->tid = atoi(de->d_name);
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, t->tid);
		if (procstat_stat_file(path, &t->ticks, t->comm, sizeof(t->comm)) == 0)
			s->nthreads++;
	}
	closedir(d);
}

int procstat_read(int pid, struct procstat_sample *s)
{
	char path[64];

	memset(s, 0, sizeof(*s));
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (procstat_stat_file(path, &s->ticks, NULL, 0) < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	s->rss_kib = procstat_status_kib(path, "VmRSS");
	s->hwm_kib = procstat_status_kib(path, "VmHWM");
	s->anon_kib = procstat_status_kib(path, "RssAnon");
	s->fds = procstat_count_fds(pid);
	procstat_threads(pid, s);
	return s->rss_kib < 0 ? -1 : 0;
}

double procstat_cpu_pct(const struct procstat_sample *a, const struct procstat_sample *b,
			double wall_s)
{
	long hz = sysconf(_SC_CLK_TCK);

	if (wall_s <= 0 || hz <= 0)
		return 0;
	return 100.0 * (double)(b->ticks - a->ticks) / (double)hz / wall_s;
}

void procstat_print_threads(const struct procstat_sample *a, const struct procstat_sample *b,
			    double wall_s)
{
	long hz = sysconf(_SC_CLK_TCK);

	for (int i = 0; i < b->nthreads; i++)
		for (int j = 0; j < a->nthreads; j++)
			if (a->th[j].tid == b->th[i].tid && hz > 0 && wall_s > 0)
				printf(" %s %.1f%%", b->th[i].comm,
				       100.0 * (double)(b->th[i].ticks - a->th[j].ticks) /
					       (double)hz / wall_s);
}

double procstat_self_cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

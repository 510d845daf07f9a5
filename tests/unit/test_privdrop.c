/* test_privdrop: who the daemon runs as (the decision table), the user and allow-root keys,
 * and, when run as root, a real drop in a child process read back from /proc: every thread
 * (one started after the drop, too) has the user's ids, no capability and no_new_privs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "server/privdrop.h"
#include "server/srvconfig.h"

static void test_decide(void **state)
{
	const char *name;

	assert_int_equal(privdrop_decide(0, "", 0, 0, &name), PRIVDROP_KEEP);
	assert_int_equal(privdrop_decide(0, "nobody", 1, 1, &name), PRIVDROP_KEEP);
	assert_null(name);
	assert_int_equal(privdrop_decide(1, "nobody", 0, 0, &name), PRIVDROP_SWITCH);
	assert_string_equal(name, "nobody");
	/* A configured user wins over the default account and over allow-root. */
	assert_int_equal(privdrop_decide(1, "nobody", 1, 1, &name), PRIVDROP_SWITCH);
	assert_string_equal(name, "nobody");
	assert_int_equal(privdrop_decide(1, "", 1, 0, &name), PRIVDROP_SWITCH);
	assert_string_equal(name, PRIVDROP_DEFAULT_USER);
	assert_int_equal(privdrop_decide(1, "", 1, 1, &name), PRIVDROP_SWITCH);
	assert_int_equal(privdrop_decide(1, "", 0, 1, &name), PRIVDROP_ROOT);
	assert_int_equal(privdrop_decide(1, "", 0, 0, &name), PRIVDROP_REFUSE);
}

static void test_keys(void **state)
{
	struct server_config cfg;
	char err[SRVCONFIG_ERR_MAX];
	const char *good = "user = nobody\nallow-root = yes\n";

	srvconfig_defaults(&cfg);
	assert_string_equal(cfg.user, "");
	assert_int_equal(cfg.allow_root, 0);
	assert_int_equal(srvconfig_parse(good, strlen(good), &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg.user, "nobody");
	assert_int_equal(cfg.allow_root, 1);
	assert_int_equal(srvconfig_set(&cfg, SRVOPT_ALLOW_ROOT, "no", err, sizeof(err)), 0);
	assert_int_equal(cfg.allow_root, 0);
	assert_int_equal(srvconfig_set(&cfg, SRVOPT_USER, "_svc-1.x", err, sizeof(err)), 0);
	assert_int_equal(srvconfig_set(&cfg, SRVOPT_ALLOW_ROOT, "true", err, sizeof(err)), -1);
	assert_string_equal(err, "invalid allow-root \"true\" (yes or no)");
	assert_int_equal(srvconfig_set(&cfg, SRVOPT_USER, "-x", err, sizeof(err)), -1);
	assert_int_equal(srvconfig_set(&cfg, SRVOPT_USER, "a b", err, sizeof(err)), -1);
	assert_int_equal(srvconfig_set(&cfg, SRVOPT_USER, "a/b", err, sizeof(err)), -1);
	assert_int_equal(srvconfig_set(&cfg, SRVOPT_USER, "abcdefghijklmnopqrstuvwxyz0123456", err,
				       sizeof(err)),
			 -1);
	assert_string_equal(cfg.user, "_svc-1.x");
}

/* Whether the /proc status file at path shows uid/gid (all four of each), CapPrm, CapEff,
 * CapInh and CapAmb zero and NoNewPrivs 1. */
static int status_dropped(const char *path, unsigned uid, unsigned gid)
{
	char line[256], want_uid[64], want_gid[64];
	int ok = 0;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		return 0;
	snprintf(want_uid, sizeof(want_uid), "Uid:\t%u\t%u\t%u\t%u\n", uid, uid, uid, uid);
	snprintf(want_gid, sizeof(want_gid), "Gid:\t%u\t%u\t%u\t%u\n", gid, gid, gid, gid);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strcmp(line, want_uid) == 0 || strcmp(line, want_gid) == 0 ||
		    strcmp(line, "CapInh:\t0000000000000000\n") == 0 ||
		    strcmp(line, "CapPrm:\t0000000000000000\n") == 0 ||
		    strcmp(line, "CapEff:\t0000000000000000\n") == 0 ||
		    strcmp(line, "CapAmb:\t0000000000000000\n") == 0 ||
		    strcmp(line, "NoNewPrivs:\t1\n") == 0)
			ok++;
	}
	fclose(f);
	return ok == 7;
}

struct thread_check {
	unsigned uid, gid;
	int ok;
};

static void *thread_main(void *arg)
{
	struct thread_check *tc = arg;

	tc->ok = status_dropped("/proc/thread-self/status", tc->uid, tc->gid);
	return NULL;
}

/* The child: drops to nobody, then checks itself and a new thread; its exit code says which
 * step failed. */
static int child_drop(void)
{
	struct privdrop pd;
	struct thread_check tc;
	pthread_t t;
	char err[SRVCONFIG_ERR_MAX];

	if (privdrop_prepare("nobody", 0, &pd, err, sizeof(err)) < 0 ||
	    pd.action != PRIVDROP_SWITCH)
		return 10;
	if (privdrop_apply(&pd, err, sizeof(err)) < 0)
		return 11;
	if (!status_dropped("/proc/self/status", (unsigned)pd.uid, (unsigned)pd.gid))
		return 12;
	if (setuid(0) == 0)
		return 13;
	tc = (struct thread_check){ (unsigned)pd.uid, (unsigned)pd.gid, 0 };
	if (pthread_create(&t, NULL, thread_main, &tc) != 0 || pthread_join(t, NULL) != 0)
		return 14;
	return tc.ok ? 0 : 15;
}

static void test_drop_as_root(void **state)
{
	int status;
	pid_t pid;

	if (geteuid() != 0) {
		skip();
		return;
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(child_drop());
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* A root start refuses only without a user and without the default account. */
static void test_prepare_refuses(void **state)
{
	struct privdrop pd;
	char err[SRVCONFIG_ERR_MAX] = "";
	int rc;

	if (geteuid() != 0) {
		assert_int_equal(privdrop_prepare("", 0, &pd, err, sizeof(err)), 0);
		assert_int_equal(pd.action, PRIVDROP_KEEP);
		return;
	}
	rc = privdrop_prepare("", 0, &pd, err, sizeof(err));
	if (rc < 0) {
		assert_non_null(strstr(err, "started as root with no user to switch to"));
	} else {
		assert_int_equal(pd.action, PRIVDROP_SWITCH);
		assert_string_equal(pd.user, PRIVDROP_DEFAULT_USER);
	}
	assert_int_equal(privdrop_prepare("root", 0, &pd, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is uid 0"));
	assert_int_equal(privdrop_prepare("root", 1, &pd, err, sizeof(err)), 0);
	assert_int_equal(pd.action, PRIVDROP_ROOT);
	assert_int_equal(privdrop_prepare("no-such-user-bmt", 1, &pd, err, sizeof(err)), -1);
	assert_string_equal(err, "cannot run as user \"no-such-user-bmt\": no such user");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decide),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_drop_as_root),
		cmocka_unit_test(test_prepare_refuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_shard.c - --shard K/N, Kubernetes Indexed Jobs, Bazel sharding.
 */
#include <criterion/criterion.h>
#include "scn/scenario.h"
#include "shard.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int select_ok(const char *flag, int count, const char *const *envp, int *n)
{
    char err[256] = "";
    int k = -1;

    *n = -1;
    cr_assert_eq(scn__shard_select(flag, count, envp, &k, n, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(err, "");
    return k;
}

static void select_err(const char *flag, int count, const char *const *envp, const char *want)
{
    char err[256] = "";
    int k = 77, n = 77;

    cr_assert_eq(scn__shard_select(flag, count, envp, &k, &n, err, sizeof err), SCN_ERR_INPUT,
                 "expected an error for %s", flag ? flag : "(env)");
    cr_assert_eq(k, 77);
    cr_assert_eq(n, 77);
    cr_assert(strstr(err, want), "\"%s\" lacks \"%s\"", err, want);
}

static const char *const empty_env[] = {NULL};

Test(shard, default_is_everything)
{
    int n;

    cr_assert_eq(select_ok(NULL, 0, empty_env, &n), 0);
    cr_assert_eq(n, 1);
    /* --shard-count alone does nothing */
    cr_assert_eq(select_ok(NULL, 4, empty_env, &n), 0);
    cr_assert_eq(n, 1);
}

Test(shard, flag)
{
    const char *const env[] = {"TEST_SHARD_INDEX=1", "TEST_TOTAL_SHARDS=2",
                               "JOB_COMPLETION_INDEX=1", "SCN_SHARD_COUNT=2", NULL};
    int n;

    cr_assert_eq(select_ok("0/3", 0, empty_env, &n), 0);
    cr_assert_eq(n, 3);
    cr_assert_eq(select_ok("2/3", 0, env, &n), 2); /* the flag wins */
    cr_assert_eq(n, 3);
    cr_assert_eq(select_ok("0/1", 0, empty_env, &n), 0);
    select_err("3/3", 0, empty_env,
               "shard index 3 is out of range: shards are numbered from 0 to 2");
    select_err("0/0", 0, empty_env, "at least 1");
    select_err("1", 0, empty_env, "expected K/N");
    select_err("/3", 0, empty_env, "expected K/N");
    select_err("1/", 0, empty_env, "expected K/N");
    select_err("-1/3", 0, empty_env, "expected K/N");
    select_err("1/3x", 0, empty_env, "expected K/N");
    select_err(" 1/3", 0, empty_env, "expected K/N");
    select_err("1/99999999999", 0, empty_env, "expected K/N");
}

Test(shard, indexed_job)
{
    const char *const with_env_count[] = {"JOB_COMPLETION_INDEX=3", "SCN_SHARD_COUNT=5",
                                          "TEST_SHARD_INDEX=0", "TEST_TOTAL_SHARDS=1", NULL};
    const char *const without_count[] = {"JOB_COMPLETION_INDEX=3", NULL};
    const char *const too_big[] = {"JOB_COMPLETION_INDEX=5", "SCN_SHARD_COUNT=5", NULL};
    const char *const bad_count[] = {"JOB_COMPLETION_INDEX=0", "SCN_SHARD_COUNT=x", NULL};
    const char *const bad_index[] = {"JOB_COMPLETION_INDEX=a", "SCN_SHARD_COUNT=2", NULL};
    int n;

    cr_assert_eq(select_ok(NULL, 0, with_env_count, &n), 3); /* before Bazel's */
    cr_assert_eq(n, 5);
    cr_assert_eq(select_ok(NULL, 8, with_env_count, &n), 3); /* --shard-count wins */
    cr_assert_eq(n, 8);
    cr_assert_eq(select_ok(NULL, 4, without_count, &n), 3);
    cr_assert_eq(n, 4);
    select_err(NULL, 0, without_count, "JOB_COMPLETION_INDEX is set but the number of shards");
    select_err(NULL, 0, too_big, "JOB_COMPLETION_INDEX with SCN_SHARD_COUNT: shard index 5");
    select_err(NULL, 0, bad_count, "SCN_SHARD_COUNT=x");
    select_err(NULL, 0, bad_index, "JOB_COMPLETION_INDEX=a");
    select_err(NULL, -1, empty_env, "--shard-count");
}

Test(shard, bazel)
{
    char dir[] = "/tmp/scn-shard-XXXXXX", status[96], var[128];
    const char *const plain[] = {"TEST_SHARD_INDEX=1", "TEST_TOTAL_SHARDS=4", NULL};
    const char *const no_total[] = {"TEST_SHARD_INDEX=1", NULL};
    const char *const bad[] = {"TEST_SHARD_INDEX=4", "TEST_TOTAL_SHARDS=4", NULL};
    const char *with_status[4] = {"TEST_SHARD_INDEX=0", "TEST_TOTAL_SHARDS=2", var, NULL};
    struct stat st;
    char err[256];
    int n, k;

    cr_assert_eq(select_ok(NULL, 0, plain, &n), 1);
    cr_assert_eq(n, 4);
    select_err(NULL, 0, no_total, "TEST_TOTAL_SHARDS is not");
    select_err(NULL, 0, bad, "shard index 4 is out of range");

    cr_assert_not_null(mkdtemp(dir));
    snprintf(status, sizeof status, "%s/status", dir);
    snprintf(var, sizeof var, "TEST_SHARD_STATUS_FILE=%s", status);
    cr_assert_eq(select_ok(NULL, 0, with_status, &n), 0);
    cr_assert_eq(n, 2);
    cr_assert_eq(stat(status, &st), 0, "the status file was not created");
    cr_assert_eq(unlink(status), 0);
    cr_assert_eq(rmdir(dir), 0);
    snprintf(var, sizeof var, "TEST_SHARD_STATUS_FILE=%s/no/such/dir", dir);
    cr_assert_eq(scn__shard_select(NULL, 0, with_status, &k, &n, err, sizeof err), SCN_ERR_IO);
    cr_assert(strstr(err, "TEST_SHARD_STATUS_FILE"), "%s", err);
}

Test(shard, gitlab_parallel)
{
    const char *const first[] = {"CI_NODE_INDEX=1", "CI_NODE_TOTAL=4", NULL};
    const char *const last[] = {"CI_NODE_INDEX=4", "CI_NODE_TOTAL=4", NULL};
    const char *const beyond[] = {"CI_NODE_INDEX=5", "CI_NODE_TOTAL=4", NULL};
    const char *const zero[] = {"CI_NODE_INDEX=0", "CI_NODE_TOTAL=4", NULL};
    const char *const no_total[] = {"CI_NODE_INDEX=2", NULL};
    const char *const bad_total[] = {"CI_NODE_INDEX=2", "CI_NODE_TOTAL=four", NULL};
    /* Not parallel: GitLab sets CI_NODE_TOTAL=1 and no index. */
    const char *const single[] = {"CI_NODE_TOTAL=1", NULL};
    /* Bazel's variables, and the flag, come first. */
    const char *const both[] = {"CI_NODE_INDEX=1", "CI_NODE_TOTAL=2", "TEST_SHARD_INDEX=2",
                                "TEST_TOTAL_SHARDS=3", NULL};
    int n;

    cr_assert_eq(select_ok(NULL, 0, first, &n), 0, "GitLab's first job is shard 0");
    cr_assert_eq(n, 4);
    cr_assert_eq(select_ok(NULL, 0, last, &n), 3);
    cr_assert_eq(n, 4);
    select_err(NULL, 0, beyond, "beyond CI_NODE_TOTAL=4");
    select_err(NULL, 0, zero, "counts them from 1");
    select_err(NULL, 0, no_total, "CI_NODE_TOTAL is not");
    select_err(NULL, 0, bad_total, "CI_NODE_TOTAL=four");
    cr_assert_eq(select_ok(NULL, 0, single, &n), 0);
    cr_assert_eq(n, 1);
    cr_assert_eq(select_ok(NULL, 0, both, &n), 2);
    cr_assert_eq(n, 3);
    cr_assert_eq(select_ok("1/2", 0, first, &n), 1);
    cr_assert_eq(n, 2);
}

Test(shard, process_environment)
{
    int n;

    cr_assert_eq(setenv("TEST_SHARD_INDEX", "2", 1), 0);
    cr_assert_eq(setenv("TEST_TOTAL_SHARDS", "3", 1), 0);
    unsetenv("JOB_COMPLETION_INDEX");
    unsetenv("TEST_SHARD_STATUS_FILE");
    cr_assert_eq(select_ok(NULL, 0, NULL, &n), 2);
    cr_assert_eq(n, 3);
}

Test(shard, owns)
{
    size_t owned[3] = {0};

    for (size_t i = 0; i < 30; i++) {
        int owners = 0;
        for (int k = 0; k < 3; k++) {
            if (scn__shard_owns(k, 3, i)) {
                owners++;
                owned[k]++;
                cr_assert_eq(i % 3, (size_t)k);
            }
        }
        cr_assert_eq(owners, 1, "item %zu has %d owners", i, owners);
        cr_assert(scn__shard_owns(0, 1, i));
    }
    cr_assert(owned[0] == 10 && owned[1] == 10 && owned[2] == 10);
    cr_assert_not(scn__shard_owns(3, 3, 0));
}

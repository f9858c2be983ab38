/*
 * shard.c - --shard K/N, Kubernetes Indexed Jobs and Bazel's test sharding
 * (conventions in shard.h).
 */
#include "shard.h"

#include "scn/scenario.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

__attribute__((format(printf, 4, 5))) static int fail(int code, char *err, size_t errlen,
                                                      const char *fmt, ...)
{
    va_list ap;

    if (err && errlen) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

static const char *env(const char *const *envp, const char *name)
{
    size_t n = strlen(name);

    if (!envp)
        return getenv(name);
    for (; *envp; envp++) {
        if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
            return *envp + n + 1;
    }
    return NULL;
}

/* Digits only (no sign, no spaces), at most SCN_SHARD_MAX; -1 otherwise. */
static long number(const char *s, size_t len)
{
    long v = 0;

    if (len == 0)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
        if (v > SCN_SHARD_MAX)
            return -1;
    }
    return v;
}

static long env_number(const char *s)
{
    return number(s, strlen(s));
}

static int check_range(long k, long n, const char *what, char *err, size_t errlen)
{
    if (n < 1)
        return fail(SCN_ERR_INPUT, err, errlen, "%s: the number of shards must be at least 1",
                    what);
    if (k >= n)
        return fail(SCN_ERR_INPUT, err, errlen,
                    "%s: shard index %ld is out of range: shards are numbered from 0 to %ld", what,
                    k, n - 1);
    return 0;
}

/* Bazel checks that this file exists to know the runner shards. */
static int touch(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

    if (fd < 0 || futimens(fd, NULL) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return fail(SCN_ERR_IO, err, errlen, "TEST_SHARD_STATUS_FILE: %s: %s", path, strerror(e));
    }
    close(fd);
    return 0;
}

static int from_flag(const char *flag, long *k, long *n, char *err, size_t errlen)
{
    const char *slash = strchr(flag, '/');

    if (!slash || (*k = number(flag, (size_t)(slash - flag))) < 0 ||
        (*n = env_number(slash + 1)) < 0)
        return fail(SCN_ERR_INPUT, err, errlen,
                    "--shard %s: expected K/N, shard K (from 0) of N, such as 0/4", flag);
    return check_range(*k, *n, "--shard", err, errlen);
}

static int from_indexed_job(const char *index, int count, const char *const *envp, long *k, long *n,
                            char *err, size_t errlen)
{
    const char *env_count = env(envp, "SCN_SHARD_COUNT");

    *k = env_number(index);
    if (*k < 0)
        return fail(SCN_ERR_INPUT, err, errlen, "JOB_COMPLETION_INDEX=%s: not a shard index",
                    index);
    if (count > 0) {
        *n = count;
    } else if (env_count && env_count[0]) {
        *n = env_number(env_count);
        if (*n < 1)
            return fail(SCN_ERR_INPUT, err, errlen, "SCN_SHARD_COUNT=%s: not a number of shards",
                        env_count);
    } else {
        return fail(SCN_ERR_INPUT, err, errlen,
                    "JOB_COMPLETION_INDEX is set but the number of shards is not: pass "
                    "--shard-count or set SCN_SHARD_COUNT to the Job's completions");
    }
    return check_range(*k, *n,
                       count > 0 ? "JOB_COMPLETION_INDEX with --shard-count"
                                 : "JOB_COMPLETION_INDEX with SCN_SHARD_COUNT",
                       err, errlen);
}

static int from_bazel(const char *index, const char *total, const char *const *envp, long *k,
                      long *n, char *err, size_t errlen)
{
    const char *status = env(envp, "TEST_SHARD_STATUS_FILE");
    int rc;

    if (!total || !total[0])
        return fail(SCN_ERR_INPUT, err, errlen,
                    "TEST_SHARD_INDEX is set but TEST_TOTAL_SHARDS is not");
    *k = env_number(index);
    *n = env_number(total);
    if (*k < 0)
        return fail(SCN_ERR_INPUT, err, errlen, "TEST_SHARD_INDEX=%s: not a shard index", index);
    if (*n < 0)
        return fail(SCN_ERR_INPUT, err, errlen, "TEST_TOTAL_SHARDS=%s: not a number of shards",
                    total);
    if ((rc = check_range(*k, *n, "TEST_SHARD_INDEX/TEST_TOTAL_SHARDS", err, errlen)) != 0)
        return rc;
    return status && status[0] ? touch(status, err, errlen) : 0;
}

/* GitLab's `parallel: N`: CI_NODE_INDEX counts from 1 (1..CI_NODE_TOTAL). */
static int from_gitlab(const char *index, const char *total, long *k, long *n, char *err,
                       size_t errlen)
{
    long i = env_number(index);

    if (!total || !total[0])
        return fail(SCN_ERR_INPUT, err, errlen, "CI_NODE_INDEX is set but CI_NODE_TOTAL is not");
    *n = env_number(total);
    if (i < 1)
        return fail(SCN_ERR_INPUT, err, errlen,
                    "CI_NODE_INDEX=%s: not a job index (GitLab counts them from 1)", index);
    if (*n < 0)
        return fail(SCN_ERR_INPUT, err, errlen, "CI_NODE_TOTAL=%s: not a number of jobs", total);
    *k = i - 1;
    if (*k >= *n)
        return fail(SCN_ERR_INPUT, err, errlen,
                    "CI_NODE_INDEX=%s is beyond CI_NODE_TOTAL=%s: GitLab numbers the jobs from 1 "
                    "to CI_NODE_TOTAL",
                    index, total);
    return check_range(*k, *n, "CI_NODE_INDEX/CI_NODE_TOTAL", err, errlen);
}

int scn__shard_select(const char *flag, int count, const char *const *envp, int *k, int *n,
                      char *err, size_t errlen)
{
    const char *job = env(envp, "JOB_COMPLETION_INDEX");
    const char *bazel = env(envp, "TEST_SHARD_INDEX");
    const char *gitlab = env(envp, "CI_NODE_INDEX");
    long kk = 0, nn = 1;
    int rc = 0;

    if (err && errlen)
        err[0] = '\0';
    if (!k || !n)
        return fail(SCN_ERR_INPUT, err, errlen, "no output for the shard");
    if (count < 0 || count > SCN_SHARD_MAX)
        return fail(SCN_ERR_INPUT, err, errlen, "--shard-count %d: out of range [1, %d]", count,
                    SCN_SHARD_MAX);
    if (flag)
        rc = from_flag(flag, &kk, &nn, err, errlen);
    else if (job && job[0])
        rc = from_indexed_job(job, count, envp, &kk, &nn, err, errlen);
    else if (bazel && bazel[0])
        rc = from_bazel(bazel, env(envp, "TEST_TOTAL_SHARDS"), envp, &kk, &nn, err, errlen);
    else if (gitlab && gitlab[0])
        rc = from_gitlab(gitlab, env(envp, "CI_NODE_TOTAL"), &kk, &nn, err, errlen);
    if (rc != 0)
        return rc;
    *k = (int)kk;
    *n = (int)nn;
    return 0;
}

bool scn__shard_owns(int k, int n, size_t index)
{
    if (n <= 1)
        return true;
    if (k < 0 || k >= n)
        return false;
    return index % (size_t)n == (size_t)k;
}

/*
 * shard.h - which share of the work this process runs, by the conventions
 * CI systems already have.
 *
 * The first of these that is present decides:
 *   1. --shard K/N: shard K of N, K counted from 0 (as Bazel's
 *      TEST_SHARD_INDEX), so 0 <= K < N: "0/3", "1/3", "2/3". "3/3" is an
 *      error, which catches 1-based numbering instead of silently skipping
 *      a third of the work.
 *   2. JOB_COMPLETION_INDEX (a Kubernetes Indexed Job; 0-based), with the
 *      count from --shard-count, else from SCN_SHARD_COUNT (set it to the
 *      Job's .spec.completions). The index without a count is an error.
 *   3. TEST_SHARD_INDEX and TEST_TOTAL_SHARDS (Bazel). If
 *      TEST_SHARD_STATUS_FILE is set too, that file is created (or its time
 *      updated), which tells Bazel the runner honours sharding.
 *   4. CI_NODE_INDEX and CI_NODE_TOTAL (GitLab's `parallel: N`). GitLab
 *      counts jobs from 1: CI_NODE_INDEX=1 is shard 0.
 *   5. Otherwise shard 0 of 1: everything.
 * --shard-count without JOB_COMPLETION_INDEX is ignored.
 *
 * The work (scenario files in the order given, and within `explore` the
 * seeds in order) is numbered from 0, and item i belongs to shard i % N:
 * run files by their index for `run`, and seeds by their offset from the
 * first seed for `explore`, so shards stay balanced either way.
 *
 * Threads: reentrant when envp is given; with envp NULL it reads the
 * process environment (getenv), which must not change meanwhile.
 */
#ifndef SCN_SHARD_H
#define SCN_SHARD_H

#include <stdbool.h>
#include <stddef.h>

#define SCN_SHARD_MAX 1000000 /* the most shards anyone means */

/*
 * Decide this process's shard. flag is the --shard argument ("K/N") or
 * NULL; count is --shard-count or 0; envp is a NULL-terminated array of
 * "NAME=value" strings (borrowed), or NULL for the process environment.
 * Returns 0 with *k and *n set; or SCN_ERR_INPUT for a malformed or
 * inconsistent setting, SCN_ERR_IO if the Bazel status file cannot be
 * written, with *k and *n untouched and a message in err (errlen bytes,
 * NUL-terminated; err may be NULL) that names the flag or variable.
 */
int scn__shard_select(const char *flag, int count, const char *const *envp, int *k, int *n,
                      char *err, size_t errlen);

/* Whether work item index belongs to shard k of n. */
bool scn__shard_owns(int k, int n, size_t index);

#endif

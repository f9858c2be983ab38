/*
 * bench_failover.c - scenarios/examples/leader-failover.yaml over many
 * seeds, as `scenario explore` runs them (one child process a seed, J at a
 * time), with the failovers counted from each run's trace; one JSON object:
 *
 *   leader_failover  seeds, passed, failed, the failovers (changes of the
 *                    Lease's holder in the trace, as the singleLeader
 *                    checker sees them; the scenario forces two a seed),
 *                    the fewest in one seed, the wall time and seeds per
 *                    second, and the first failing seeds.
 *
 * Usage: bench_failover [--seeds N..M] [--jobs J] [FILE]
 *        (default 1..1000, 2 jobs, the example file)
 * Unlike the other benchmarks it is also a check: the exit status is 1 if
 * a seed failed or did not fail over, 2 if it could not run.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "leadership.h"
#include "replicaset.h"
#include "scn/run.h"

#ifndef KH_SCENARIOS
#define KH_SCENARIOS "scenarios/examples"
#endif
#define EPOCH_NS 1767225600000000000LL
#define MAX_JOBS 16
#define MAX_LISTED 20

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int replicaset_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)user;
    return example_replicaset_setup(mgr, config);
}

/* Any client "scenario/<controller>-<k>[.rN][/component]" is a replica. */
static int who(void *ud, const char *client, char *identity, size_t len)
{
    (void)ud;
    if (strncmp(client, "scenario/", 9) != 0)
        return -1;
    const char *slash = strchr(client + 9, '/');
    size_t n = slash ? (size_t)(slash - client) : strlen(client);
    snprintf(identity, len, "%.*s", (int)n, client);
    return 0;
}

/* One seed, in a child: "passed failovers message" on fd. */
static void child(const scn_scenario *sc, const scn_cond *leader, uint64_t seed, int fd)
{
    char trace[64];
    snprintf(trace, sizeof trace, "/tmp/bench-failover-XXXXXX");
    int tfd = mkstemp(trace);
    FILE *out = fdopen(fd, "w");
    if (tfd < 0 || !out)
        _exit(2);
    close(tfd);
    scn_run_options o = {.seed = seed, .seed_given = true, .trace_path = trace};
    scn_run_result r;
    unsigned long changes = 0;
    char msg[1024] = "";
    if (scn_run(sc, &o, &r) != 0) {
        r.passed = false;
        snprintf(r.message, sizeof r.message, "could not run");
    }
    scn__leadership *lt = NULL;
    if (leader && scn__leadership_new(leader, trace, EPOCH_NS, &lt) == 0) {
        scn__leadership_check(lt, who, NULL, msg, sizeof msg);
        changes = scn__leadership_changes(lt);
        scn__leadership_free(lt);
    }
    unlink(trace);
    fprintf(out, "%d %lu %.200s\n", r.passed ? 1 : 0, changes, r.message);
    fclose(out);
    _exit(0);
}

int main(int argc, char **argv)
{
    uint64_t lo = 1, hi = 1000;
    int jobs = 2;
    const char *file = KH_SCENARIOS "/leader-failover.yaml";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seeds") && i + 1 < argc) {
            if (sscanf(argv[++i], "%" SCNu64 "..%" SCNu64, &lo, &hi) != 2 || lo > hi)
                return fprintf(stderr, "bench_failover: --seeds N..M\n"), 2;
        } else if (!strcmp(argv[i], "--jobs") && i + 1 < argc) {
            jobs = atoi(argv[++i]);
            if (jobs < 1 || jobs > MAX_JOBS)
                return fprintf(stderr, "bench_failover: --jobs 1..%d\n", MAX_JOBS), 2;
        } else if (argv[i][0] != '-') {
            file = argv[i];
        } else {
            return fprintf(stderr, "usage: bench_failover [--seeds N..M] [--jobs J] [FILE]\n"), 2;
        }
    }
    scn_register_controller("replicaset", replicaset_setup, NULL);
    scn_scenario *sc = NULL;
    scn_error err = {0};
    if (scn_scenario_load(file, &sc, &err) < 0) {
        char buf[1024];
        scn_error_format(&err, buf, sizeof buf);
        fprintf(stderr, "bench_failover: %s\n", buf);
        return 2;
    }
    const scn_cond *leader = NULL;
    for (size_t i = 0; i < sc->n_invariants && !leader; i++)
        if (sc->invariants[i]->kind == SCN_COND_SINGLE_LEADER)
            leader = sc->invariants[i];

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct {
        pid_t pid;
        uint64_t seed;
        FILE *out;
    } kids[MAX_JOBS] = {{0}};
    unsigned long passed = 0, failed = 0, failovers = 0, min_failovers = (unsigned long)-1;
    uint64_t listed[MAX_LISTED];
    size_t nlisted = 0;
    char first_failure[256] = "";
    int running = 0;
    uint64_t next = lo;
    for (;;) {
        while (running < jobs && next <= hi) {
            int fds[2];
            if (pipe(fds) < 0)
                break;
            fflush(NULL);
            pid_t pid = fork();
            if (pid == 0) {
                close(fds[0]);
                child(sc, leader, next, fds[1]);
            }
            close(fds[1]);
            int slot = 0;
            while (kids[slot].pid)
                slot++;
            kids[slot].pid = pid;
            kids[slot].seed = next++;
            kids[slot].out = fdopen(fds[0], "r");
            running++;
        }
        if (running == 0)
            break;
        int status;
        pid_t done = wait(&status);
        for (int i = 0; i < MAX_JOBS; i++) {
            if (!done || kids[i].pid != done)
                continue;
            char line[512] = "";
            int ok = 0;
            unsigned long changes = 0;
            int used = 0;
            if (!kids[i].out || !fgets(line, sizeof line, kids[i].out) ||
                sscanf(line, "%d %lu %n", &ok, &changes, &used) < 2)
                snprintf(line, sizeof line, "0 0 the run crashed"), used = 4, ok = 0;
            line[strcspn(line, "\n")] = '\0';
            if (ok && changes > 0) {
                passed++;
            } else {
                failed++;
                if (nlisted < MAX_LISTED)
                    listed[nlisted++] = kids[i].seed;
                if (!first_failure[0])
                    snprintf(first_failure, sizeof first_failure, "seed %" PRIu64 ": %s%s",
                             kids[i].seed, ok ? "passed without a failover" : "",
                             ok ? "" : line + used);
            }
            failovers += changes;
            if (changes < min_failovers)
                min_failovers = changes;
            if (kids[i].out)
                fclose(kids[i].out);
            kids[i].pid = 0;
            running--;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    unsigned long seeds = (unsigned long)(hi - lo + 1);
    qsort(listed, nlisted, sizeof *listed, cmp_u64);
    printf("{\"bench\":\"leader_failover\",\"seeds\":%lu,\"jobs\":%d,\"passed\":%lu,\"failed\":%lu,"
           "\"failovers\":%lu,\"min_failovers_per_seed\":%lu,\"seconds\":%.1f,"
           "\"seeds_per_s\":%.2f,\"failing_seeds\":[",
           seeds, jobs, passed, failed, failovers, min_failovers, secs, (double)seeds / secs);
    for (size_t i = 0; i < nlisted; i++)
        printf("%s%" PRIu64, i ? "," : "", listed[i]);
    printf("]}\n");
    if (first_failure[0])
        fprintf(stderr, "bench_failover: %s\n", first_failure);
    scn_scenario_free(sc);
    return failed ? 1 : 0;
}

/*
 * test_leader.c - the singleLeader invariant as an oracle, on whole runs.
 *
 * leader-unelected.yaml runs the PodSet controller without waiting for
 * leadership in two replicas: the invariant must catch the follower's
 * writes, name it and replay the same way. leader-failover.yaml runs it
 * leader-elected in three replicas and fails over twice (a crash, then a
 * partition, of whichever replica leads): every seed passes, and its trace,
 * read again by the checker, shows the Lease changing hands twice. A step
 * for the leader when the Lease names a crashed replica fails the run.
 *
 * About 0.2 s a run; 30 seeds of each here.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "leadership.h"
#include "replicaset.h"
#include "scn/run.h"

#ifndef KH_SCENARIOS
#define KH_SCENARIOS "scenarios/examples"
#endif

#define SEEDS 30
#define EPOCH 1767225600000000000LL

static int replicaset_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)user;
    return example_replicaset_setup(mgr, config);
}

static void setup(void)
{
    static bool done;
    if (!done)
        cr_assert_eq(scn_register_controller("replicaset", replicaset_setup, NULL), 0);
    done = true;
}

TestSuite(leader, .init = setup);

static scn_scenario *load(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", KH_SCENARIOS, name);
    scn_scenario *sc = NULL;
    scn_error err = {0};
    cr_assert_eq(scn_scenario_load(path, &sc, &err), 0, "%s:%d: %s: %s", err.file, err.line,
                 err.field, err.message);
    return sc;
}

static scn_run_result run_seed(const scn_scenario *sc, uint64_t seed, const char *trace)
{
    scn_run_options o = {.seed = seed, .seed_given = true, .trace_path = trace};
    scn_run_result r;
    cr_assert_eq(scn_run(sc, &o, &r), 0, "seed %llu could not run", (unsigned long long)seed);
    return r;
}

Test(leader, a_controller_that_does_not_wait_for_leadership_breaks_it)
{
    scn_scenario *sc = load("leader-unelected.yaml");
    int failed = 0;
    scn_run_result first = {0};
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        scn_run_result r = run_seed(sc, seed, NULL);
        if (r.passed)
            continue;
        if (!failed++)
            first = r;
        /* the invariant, not a wait or an expect, and what it says */
        cr_assert(strstr(r.message, "invariant 0 (line ") == r.message, "seed %llu: %s",
                  (unsigned long long)seed, r.message);
        cr_assert(strstr(r.message, ") wrote without holding Lease kube-system/replicaset: ") !=
                      NULL,
                  "seed %llu: %s", (unsigned long long)seed, r.message);
        cr_assert(strstr(r.message, "(client scenario/replicaset-"), "seed %llu: %s",
                  (unsigned long long)seed, r.message);
        cr_assert(strstr(r.message, "the Lease was held by replica ") ||
                      strstr(r.message, "no replica had written the Lease yet"),
                  "seed %llu: %s", (unsigned long long)seed, r.message);
    }
    cr_log_info("%d of %d seeds broke singleLeader; seed %llu: %s", failed, SEEDS,
                (unsigned long long)first.seed, first.message);
    cr_assert_geq(failed, SEEDS - 2, "only %d of %d seeds caught the follower's writes", failed,
                  SEEDS);
    /* the same seed, the same failure */
    scn_run_result again = run_seed(sc, first.seed, NULL);
    cr_assert_not(again.passed);
    cr_assert_str_eq(again.message, first.message);
    cr_assert_eq(again.trace_hash, first.trace_hash);
    scn_scenario_free(sc);
}

/* The trace's client -> replica: "scenario/replicaset-K[.rN][/component]". */
static int who(void *ud, const char *client, char *identity, size_t len)
{
    (void)ud;
    const char *base = "scenario/replicaset-";
    if (strncmp(client, base, strlen(base)) != 0)
        return -1;
    const char *slash = strchr(client + strlen(base), '/');
    size_t n = slash ? (size_t)(slash - client) : strlen(client);
    snprintf(identity, len, "%.*s", (int)n, client);
    return client[strlen(base)] - '0';
}

Test(leader, every_seed_of_the_failover_passes_and_fails_over_twice)
{
    scn_scenario *sc = load("leader-failover.yaml");
    cr_assert_eq(sc->invariants[0]->kind, SCN_COND_SINGLE_LEADER);
    char trace[64];
    snprintf(trace, sizeof trace, "/tmp/scn-leader-XXXXXX");
    int fd = mkstemp(trace);
    cr_assert_geq(fd, 0);
    close(fd);
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        scn_run_result r = run_seed(sc, seed, trace);
        cr_assert(r.passed,
                  "seed %llu: %s (replay: scenario replay %s/leader-failover.yaml --seed %llu "
                  "--trace trace.jsonl)",
                  (unsigned long long)seed, r.message, KH_SCENARIOS, (unsigned long long)seed);
        /* Count the failovers from the trace itself, not the Lease's own
         * leaseTransitions that the scenario expects. */
        scn__leadership *lt = NULL;
        char msg[1024];
        cr_assert_eq(scn__leadership_new(sc->invariants[0], trace, EPOCH, &lt), 0);
        cr_assert(scn__leadership_check(lt, who, NULL, msg, sizeof msg), "seed %llu: %s",
                  (unsigned long long)seed, msg);
        cr_assert_eq(scn__leadership_changes(lt), 2, "seed %llu: the Lease changed hands %lu times",
                     (unsigned long long)seed, scn__leadership_changes(lt));
        scn__leadership_free(lt);
    }
    unlink(trace);
    scn_scenario_free(sc);
}

Test(leader, a_step_for_the_leader_fails_when_no_running_replica_leads)
{
    /* Right after the crash, the Lease still names the crashed replica. */
    static const char text[] =
        "name: no-leader\n"
        "controllers: [{name: replicaset, replicas: 2}]\n"
        "fixtures: [../../fixtures/replicaset/crd.yaml, ../../fixtures/replicaset/basic.yaml]\n"
        "steps:\n"
        "  - crash: {replica: leader, as: old}\n"
        "  - partition: {replica: leader}\n";
    char file[512];
    snprintf(file, sizeof file, "%s/no-leader.yaml", KH_SCENARIOS);
    scn_scenario *sc = NULL;
    scn_error err = {0};
    cr_assert_eq(scn_scenario_parse(file, text, sizeof text - 1, &sc, &err), 0, "%s", err.message);
    scn_run_result r = run_seed(sc, 1, NULL);
    cr_assert_not(r.passed);
    cr_assert_eq(r.failed_step, 1, "step %d: %s", r.failed_step, r.message);
    cr_assert(strstr(r.message, "replica: leader: Lease kube-system/replicaset is held by "
                                "scenario/replicaset-") &&
                  strstr(r.message, ", no running replica"),
              "%s", r.message);
    scn_scenario_free(sc);
}

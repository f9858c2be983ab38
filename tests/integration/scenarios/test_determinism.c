/*
 * test_determinism.c - the bar of the scenario runner: the same scenario
 * with the same seed gives a byte-identical trace, and different seeds
 * explore different interleavings.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctrl/controller.h"

#include "replicaset.h"
#include "scn/run.h"

#ifndef KH_SCENARIOS
#define KH_SCENARIOS "scenarios/examples"
#endif

static int replicaset_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)user;
    return example_replicaset_setup(mgr, config);
}

/* A controller that breaks the rules: it names what it creates after the
 * wall clock, so no two runs are alike. */
static ctrl_result wallclock_reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    (void)user;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char name[64];
    snprintf(name, sizeof name, "wall-%ld", (long)ts.tv_nsec);
    json_t *cm = json_pack("{s:s,s:s,s:{s:s,s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                           "metadata", "name", name, "namespace", req->ns);
    int rc = strncmp(req->name, "wall-", 5)
                 ? ctrl_client_create(ctrl_ctx_client(ctx), cm, NULL, NULL, NULL)
                 : 0;
    json_decref(cm);
    return rc < 0 ? ctrl_err(rc) : ctrl_done();
}

static int wallclock_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)config, (void)user;
    return ctrl_builder_complete(ctrl_builder_for(mgr, "v1", "ConfigMap"), wallclock_reconcile,
                                 NULL);
}

static void setup(void)
{
    static bool done;
    if (!done) {
        scn_register_controller("replicaset", replicaset_setup, NULL);
        scn_register_controller("wallclock", wallclock_setup, NULL);
    }
    done = true;
}

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

static scn_run_result run_once(const scn_scenario *sc, uint64_t seed)
{
    scn_run_options o = {.seed = seed, .seed_given = true};
    scn_run_result r;
    cr_assert_eq(scn_run(sc, &o, &r), 0);
    cr_assert(r.passed, "seed %llu: %s", (unsigned long long)seed, r.message);
    cr_assert_gt(r.trace_lines, 10, "the trace recorded the run");
    return r;
}

TestSuite(determinism, .init = setup);

Test(determinism, same_seed_same_trace_twenty_times)
{
    scn_scenario *sc = load("replicaset-basic.yaml");
    scn_run_result first = run_once(sc, 7);
    for (int i = 1; i < 20; i++) {
        scn_run_result r = run_once(sc, 7);
        cr_assert_eq(r.trace_hash, first.trace_hash, "run %d diverged (%lu vs %lu lines)", i,
                     r.trace_lines, first.trace_lines);
        cr_assert_eq(r.steps, first.steps);
        cr_assert_eq(r.virtual_ns, first.virtual_ns);
    }
    scn_scenario_free(sc);
}

Test(determinism, different_seeds_explore_different_interleavings)
{
    scn_scenario *sc = load("replicaset-basic.yaml");
    uint64_t hashes[20];
    size_t distinct = 0;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        scn_run_result r = run_once(sc, seed);
        bool seen = false;
        for (size_t i = 0; i < distinct; i++)
            seen |= hashes[i] == r.trace_hash;
        if (!seen)
            hashes[distinct++] = r.trace_hash;
    }
    cr_assert_gt(distinct, 1, "twenty seeds gave one interleaving");
    scn_scenario_free(sc);
}

Test(determinism, ten_virtual_minutes_cost_little_real_time)
{
    scn_scenario *sc = load("replicaset-basic.yaml");
    scn_run_result r = run_once(sc, 3);
    cr_assert_geq(r.virtual_ns, (int64_t)600 * 1000000000, "the scenario advances 10 minutes");
    cr_assert_lt(r.real_seconds, 60.0, "10 virtual minutes took %.2f s", r.real_seconds);
    scn_scenario_free(sc);
}

/* Crashes, restarts, conflicts, dropped watches and compaction (the faults
 * example), and three leader-elected replicas with partitions: each passes,
 * and the same seed gives the same trace again. */
Test(determinism, faults_and_failover_repeat)
{
    static const char *const files[] = {"replicaset-faults.yaml", "leader-failover.yaml"};
    for (size_t f = 0; f < 2; f++) {
        scn_scenario *sc = load(files[f]);
        for (uint64_t seed = 1; seed <= 3; seed++) {
            scn_run_result a = run_once(sc, seed), b = run_once(sc, seed);
            cr_assert_eq(a.trace_hash, b.trace_hash, "%s seed %llu diverged", files[f],
                         (unsigned long long)seed);
        }
        scn_scenario_free(sc);
    }
}

/* scn_check_determinism: agrees for a deterministic scenario, and for one
 * whose controller reads the wall clock names the first differing line. */
Test(determinism, check_finds_the_first_difference)
{
    scn_scenario *sc = load("replicaset-basic.yaml");
    scn_run_options o = {.seed = 5, .seed_given = true};
    scn_determinism d;
    cr_assert_eq(scn_check_determinism(sc, &o, 3, NULL, &d), 0);
    cr_assert_eq(d.runs, 3);
    cr_assert_eq(d.differing, 0, "run %u differs at line %lu: %s / %s", d.first_diff, d.line,
                 d.expected, d.got);
    cr_assert(d.reference.passed, "%s", d.reference.message);
    cr_assert_eq(d.last.trace_hash, d.reference.trace_hash);
    scn_scenario_free(sc);

    static const char text[] = "name: wallclock\n"
                               "controllers: [wallclock]\n"
                               "fixtures:\n"
                               "  - {apiVersion: v1, kind: ConfigMap, metadata: {name: seed, "
                               "namespace: default}}\n"
                               "steps:\n"
                               "  - advance: 10s\n";
    cr_assert_eq(scn_scenario_parse(NULL, text, sizeof text - 1, &sc, NULL), 0);
    cr_assert_eq(scn_check_determinism(sc, &o, 2, NULL, &d), 0);
    cr_assert_eq(d.runs, 2);
    cr_assert_eq(d.differing, 2, "a wall-clock controller repeated itself");
    cr_assert_eq(d.first_diff, 1);
    cr_assert_gt(d.line, 1);
    cr_assert_str_neq(d.expected, d.got);
    cr_assert(strstr(d.expected, "wall-") || strstr(d.got, "wall-"), "%s / %s", d.expected, d.got);
    scn_scenario_free(sc);
}

/* A replica is one client, not a prefix: with twelve replicas, cutting off
 * replicas 0 to 9 leaves 10 and 11 (whose User-Agents begin with those of
 * replicas 1 and 0's... "scenario/replicaset-1" is a prefix of
 * "scenario/replicaset-10") free to take the lead. */
Test(determinism, partition_cuts_off_only_the_replica_named)
{
    char text[4096];
    int off = snprintf(text, sizeof text,
                       "name: replica-identity\n"
                       "controllers: [{name: replicaset, replicas: 12}]\n"
                       "fixtures: [%s/../../fixtures/replicaset/crd.yaml]\n"
                       "steps:\n"
                       "  - wait: {for: {field: {apiVersion: coordination.k8s.io/v1, kind: Lease, "
                       "namespace: kube-system, name: replicaset, path: .spec.holderIdentity, "
                       "matches: \"^scenario/replicaset-[0-9]$\"}}, timeout: 1m}\n",
                       KH_SCENARIOS);
    for (int i = 0; i < 10; i++)
        off += snprintf(text + off, sizeof text - (size_t)off, "  - partition: {replica: %d}\n", i);
    snprintf(text + off, sizeof text - (size_t)off,
             "  - wait: {for: {field: {apiVersion: coordination.k8s.io/v1, kind: Lease, "
             "namespace: kube-system, name: replicaset, path: .spec.holderIdentity, "
             "matches: \"^scenario/replicaset-1[01]$\"}}, timeout: 1m}\n");
    scn_scenario *sc = NULL;
    scn_error err = {0};
    cr_assert_eq(scn_scenario_parse(NULL, text, strlen(text), &sc, &err), 0, "%d: %s: %s", err.line,
                 err.field, err.message);
    scn_run_result r = run_once(sc, 1);
    cr_assert(r.passed);
    scn_scenario_free(sc);
}

/* A request a delay fault holds back is answered on the virtual clock: its
 * client waits off the turn, time moves to the delay's end, and answering
 * it is one of the driver's choices (before, the client held the turn and
 * the run stalled on the watchdog). */
Test(determinism, delayed_requests_end_on_the_virtual_clock)
{
    char text[2048];
    snprintf(text, sizeof text,
             "name: delays\n"
             "controllers: [replicaset]\n"
             "fixtures: [%s/../../fixtures/replicaset/crd.yaml, "
             "%s/../../fixtures/replicaset/basic.yaml]\n"
             "steps:\n"
             "  - wait: {for: {count: {apiVersion: v1, kind: Pod, namespace: default, "
             "selector: podset=web, equals: 3}}, timeout: 1m}\n"
             "  - fault: {name: slow, rule: {match: {verb: create, resource: pods}, "
             "when: {first: 1}, action: {delay: 10s}}}\n"
             "  - scale: {apiVersion: example.com/v1, kind: PodSet, namespace: default, "
             "name: web, replicas: 5}\n"
             "  - wait: {for: {count: {apiVersion: v1, kind: Pod, namespace: default, "
             "selector: podset=web, equals: 5}}, timeout: 1m}\n",
             KH_SCENARIOS, KH_SCENARIOS);
    scn_scenario *sc = NULL;
    scn_error err = {0};
    cr_assert_eq(scn_scenario_parse(NULL, text, strlen(text), &sc, &err), 0, "%d: %s: %s", err.line,
                 err.field, err.message);
    for (uint64_t seed = 1; seed <= 3; seed++) {
        scn_run_result a = run_once(sc, seed), b = run_once(sc, seed);
        cr_assert_geq(a.virtual_ns, (int64_t)10 * 1000000000, "the delay took %lld ns",
                      (long long)a.virtual_ns);
        cr_assert_eq(a.trace_hash, b.trace_hash, "seed %llu diverged", (unsigned long long)seed);
    }
    scn_scenario_free(sc);
}

/*
 * test_shrink.c - scn/shrink.h and scn/diff.h through their C API: every
 * example scenario survives scn_scenario_to_yaml and parsing again; the
 * noisy 200-step fixture shrinks to its one relevant step, with the
 * fixtures and controller it needs; a scenario that passes is refused;
 * a caller's predicate decides; diff finds the Singleton pair's divergence
 * and no divergence of a controller with itself.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "buggy.h"
#include "replicaset.h"
#include "scn/diff.h"
#include "scn/run.h"
#include "scn/shrink.h"

#ifndef KH_SCENARIOS
#define KH_SCENARIOS "scenarios/examples"
#endif
#define NOISY KH_SCENARIOS "/../../tests/fixtures/shrink/noisy-200.yaml"

static int buggy_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)user;
    return example_buggy_setup(mgr, config);
}

static int fixed_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)user;
    return example_fixed_setup(mgr, config);
}

static int dedup_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)user;
    return example_dedup_setup(mgr, config);
}

static int replicaset_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)user;
    return example_replicaset_setup(mgr, config);
}

static void setup(void)
{
    static bool done;
    if (!done) {
        scn_register_controller("singleton-buggy", buggy_setup, NULL);
        scn_register_controller("singleton-fixed", fixed_setup, NULL);
        scn_register_controller("singleton-dedup", dedup_setup, NULL);
        scn_register_controller("replicaset", replicaset_setup, NULL);
    }
    done = true;
}

static scn_scenario *load(const char *path)
{
    scn_scenario *sc = NULL;
    scn_error err = {0};
    cr_assert_eq(scn_scenario_load(path, &sc, &err), 0, "%s:%d: %s: %s", err.file, err.line,
                 err.field, err.message);
    return sc;
}

TestSuite(shrink, .init = setup);

Test(shrink, examples_round_trip)
{
    static const char *const names[] = {
        "cronjob-count.yaml",    "cronjob-day.yaml",      "leader-failover.yaml",
        "leader-unelected.yaml", "replicaset-basic.yaml", "replicaset-faults.yaml",
        "singleton-buggy.yaml",  "singleton-fixed.yaml",  NULL};
    for (size_t i = 0; names[i]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", KH_SCENARIOS, names[i]);
        scn_scenario *sc = load(path), *back = NULL;
        char *yaml = scn_scenario_to_yaml(sc);
        cr_assert(yaml);
        scn_error err = {0};
        /* parsed from elsewhere: nothing in it may name a relative file */
        cr_assert_eq(scn_scenario_parse("/nonexistent/dir/x.yaml", yaml, strlen(yaml), &back, &err),
                     0, "%s: %s: %s\n%s", names[i], err.field, err.message, yaml);
        cr_assert_str_eq(back->name, sc->name);
        cr_assert_eq(back->n_steps, sc->n_steps, "%s", names[i]);
        cr_assert_eq(back->n_controllers, sc->n_controllers);
        cr_assert_eq(back->n_invariants, sc->n_invariants);
        cr_assert_eq(back->max_virtual_ns, sc->max_virtual_ns);
        cr_assert(json_equal(back->fixtures, sc->fixtures), "%s: fixtures differ", names[i]);
        for (size_t k = 0; k < sc->n_steps; k++) {
            cr_assert_eq(back->steps[k].kind, sc->steps[k].kind);
            if (sc->steps[k].manifest)
                cr_assert(json_equal(back->steps[k].manifest, sc->steps[k].manifest),
                          "%s: step %zu", names[i], k);
        }
        for (size_t k = 0; k < sc->n_controllers; k++) {
            cr_assert_str_eq(back->controllers[k].name, sc->controllers[k].name);
            cr_assert_eq(back->controllers[k].replicas, sc->controllers[k].replicas);
        }
        /* and a second trip gives the same text */
        char *again = scn_scenario_to_yaml(back);
        cr_assert_str_eq(again, yaml);
        free(again);
        free(yaml);
        scn_scenario_free(back);
        scn_scenario_free(sc);
    }
}

Test(shrink, noisy_200_to_its_one_step, .timeout = 120)
{
    scn_scenario *sc = load(NOISY);
    cr_assert_eq(sc->n_steps, 200);
    scn_shrink_options o = {.seed = 1, .same_failure = true};
    scn_shrink_result r;
    scn_error err = {0};
    cr_assert_eq(scn_shrink(sc, &o, &r, &err), 0, "%s", err.message);
    cr_assert_eq(r.steps_before, 200);
    cr_assert_eq(r.steps_after, 1);
    cr_assert_eq(r.fixtures_after, 2, "the CRD and the web PodSet, not the other PodSet");
    cr_assert_eq(r.controllers_after, 1);
    cr_assert_not(r.budget_exhausted);
    cr_assert_gt(r.candidates, 10);
    json_t *step = json_array_get(json_object_get(r.doc, "steps"), 0);
    json_t *scale = json_object_get(step, "scale");
    cr_assert_str_eq(json_string_value(json_object_get(scale, "name")), "web");
    cr_assert_eq(json_integer_value(json_object_get(scale, "replicas")), 5);
    cr_assert(strstr(r.failure.message, "invariant 0"), "%s", r.failure.message);
    cr_assert(strstr(r.yaml, "seed: 1"), "%s", r.yaml);
    cr_assert_eq(r.scenario->n_steps, 1);
    cr_assert(r.scenario->has_seed && r.scenario->seed == r.seed);

    /* the YAML, parsed and run on its own, fails with the same signature */
    scn_scenario *min = NULL;
    cr_assert_eq(scn_scenario_parse("min.yaml", r.yaml, strlen(r.yaml), &min, &err), 0, "%s",
                 err.message);
    scn_run_options ro = {.seed = r.seed, .seed_given = true};
    scn_run_result rr;
    cr_assert_eq(scn_run(min, &ro, &rr), 0);
    cr_assert_not(rr.passed);
    char a[1024], b[1024];
    scn_shrink_signature(sc, &r.failure, a, sizeof a);
    scn_shrink_signature(min, &rr, b, sizeof b);
    cr_assert_str_eq(a, b);
    cr_assert_str_eq(a, "invariant 0");
    scn_scenario_free(min);
    scn_shrink_result_deinit(&r);
    scn_scenario_free(sc);
}

Test(shrink, refuses_a_passing_scenario)
{
    scn_scenario *sc = load(KH_SCENARIOS "/singleton-fixed.yaml");
    scn_shrink_options o = {.seed = 2};
    scn_shrink_result r;
    scn_error err = {0};
    cr_assert_eq(scn_shrink(sc, &o, &r, &err), SCN_ERR_INPUT);
    cr_assert(strstr(err.message, "passes with seed 2"), "%s", err.message);
    cr_assert_null(r.yaml);
    cr_assert_null(r.doc);
    scn_scenario_free(sc);
}

/* The caller's predicate: the run must fail at a quiescent point after a
 * step (not at setup), whatever the message. */
static bool after_setup(const scn_scenario *c, uint64_t seed, const scn_run_result *r, void *ud)
{
    (void)c, (void)seed;
    (*(int *)ud)++;
    return !r->passed && r->failed_step >= 0;
}

Test(shrink, caller_predicate, .timeout = 60)
{
    scn_scenario *sc = load(NOISY);
    int calls = 0;
    scn_shrink_options o = {.seed = 1, .still_fails = after_setup, .ud = &calls};
    scn_shrink_result r;
    scn_error err = {0};
    cr_assert_eq(scn_shrink(sc, &o, &r, &err), 0, "%s", err.message);
    cr_assert_gt(calls, 5);
    cr_assert_geq(r.steps_after, 1);
    cr_assert_leq(r.steps_after, 3);
    cr_assert_geq(r.failure.failed_step, 0);
    scn_shrink_result_deinit(&r);
    scn_scenario_free(sc);
}

Test(shrink, diff_api)
{
    scn_scenario *sc = load(KH_SCENARIOS "/singleton-buggy.yaml");
    scn_error err = {0};
    scn_diff_options o = {.seed = 2};
    scn_diff_result r;
    /* nothing replaced yet: refused */
    cr_assert_eq(scn_diff(sc, &o, &r, &err), SCN_ERR_INPUT);
    cr_assert(strstr(err.message, "nothing replaces"), "%s", err.message);
    cr_assert_eq(scn_diff_replace_with("singleton-buggy", "nope"), SCN_ERR_INPUT);
    cr_assert_eq(scn_diff_replace_with("singleton-buggy", "singleton-fixed"), 0);
    cr_assert(scn_diff_replaced("singleton-buggy"));
    cr_assert_eq(scn_diff(sc, &o, &r, &err), 0, "%s", err.message);
    cr_assert(r.differ);
    cr_assert_eq(r.step, -1, "the child's name differs from the first ConfigMap on");
    cr_assert(strstr(r.report, "ConfigMap default/demo-data (v1): only in B"), "%s", r.report);
    cr_assert(strstr(r.report, "ConfigMap default/demo-<generated-1> (v1): only in A"), "%s",
              r.report);
    cr_assert_not(r.a.passed);
    cr_assert(r.b.passed);
    scn_diff_result_deinit(&r);

    /* the dedup variant: equal states (generated names masked) until step 4,
     * where the buggy one keeps a second ConfigMap */
    cr_assert_eq(scn_diff_replace_with("singleton-buggy", "singleton-dedup"), 0);
    cr_assert_eq(scn_diff(sc, &o, &r, &err), 0, "%s", err.message);
    cr_assert(r.differ);
    cr_assert_eq(r.step, 4, "%s", r.report);
    cr_assert_eq(r.points, 6);
    cr_assert(strstr(r.report, "ConfigMap default/demo-<generated-3> (v1): only in A"), "%s",
              r.report);
    cr_assert_not(strstr(r.report, "only in B"), "%s", r.report);
    scn_diff_result_deinit(&r);
    scn_scenario_free(sc);

    /* the fixed controller against itself (as replacement): equal at every point */
    sc = load(KH_SCENARIOS "/singleton-fixed.yaml");
    cr_assert_eq(scn_diff_replace_with("singleton-fixed", "singleton-fixed"), 0);
    cr_assert_eq(scn_diff(sc, &o, &r, &err), 0, "%s", err.message);
    cr_assert_not(r.differ, "%s", r.report ? r.report : "");
    cr_assert_eq(r.points, sc->n_steps + 2);
    cr_assert_null(r.report);
    scn_diff_result_deinit(&r);
    scn_scenario_free(sc);
}

static void count_points(void *ud, int step, int64_t virtual_ns, const json_t *objects)
{
    (void)step, (void)virtual_ns;
    size_t *n = ud;
    cr_assert(json_is_array(objects));
    cr_assert_gt(json_array_size(objects), 0, "the namespaces, at least");
    (*n)++;
}

/* Watching the states must not change the run: the same trace, byte for byte. */
Test(shrink, state_hook_leaves_the_run_alone)
{
    scn_scenario *sc = load(KH_SCENARIOS "/singleton-buggy.yaml");
    for (uint64_t seed = 1; seed <= 3; seed++) {
        size_t points = 0;
        scn_run_options plain = {.seed = seed, .seed_given = true};
        scn_run_options hooked = {
            .seed = seed, .seed_given = true, .on_state = count_points, .state_ud = &points};
        scn_run_result a, b;
        cr_assert_eq(scn_run(sc, &plain, &a), 0);
        cr_assert_eq(scn_run(sc, &hooked, &b), 0);
        cr_assert_eq(a.trace_hash, b.trace_hash, "seed %llu", (unsigned long long)seed);
        cr_assert_eq(a.passed, b.passed);
        cr_assert_gt(points, 2);
    }
    scn_scenario_free(sc);
}

/* A shrink is a function of its input: twice, the same scenario and seed.
 * singleton-buggy fails with seed 2 after a few steps; without them its
 * failure hides under seed 2 and shows at setup under a nearby seed. */
Test(shrink, deterministic_with_nearby_seeds, .timeout = 60)
{
    scn_scenario *sc = load(KH_SCENARIOS "/singleton-buggy.yaml");
    scn_shrink_options o = {.seed = 2};
    scn_shrink_result r1, r2;
    scn_error err = {0};
    cr_assert_eq(scn_shrink(sc, &o, &r1, &err), 0, "%s", err.message);
    cr_assert_eq(scn_shrink(sc, &o, &r2, &err), 0, "%s", err.message);
    cr_assert_str_eq(r1.yaml, r2.yaml);
    cr_assert_eq(r1.seed, r2.seed);
    cr_assert_eq(r1.candidates, r2.candidates);
    cr_assert_eq(r1.steps_after, 0, "%s", r1.yaml);
    cr_assert_neq(r1.seed, 2, "a nearby seed");
    cr_assert_leq(r1.seed, 2 + 4);
    cr_assert(strstr(r1.failure.message, "invariant 0"), "%s", r1.failure.message);
    /* --no-seeds keeps seed 2, and so some steps */
    scn_shrink_result r3;
    o.no_seeds = true;
    cr_assert_eq(scn_shrink(sc, &o, &r3, &err), 0, "%s", err.message);
    cr_assert_eq(r3.seed, 2);
    cr_assert_gt(r3.steps_after, 0);
    cr_assert_lt(r3.steps_after, sc->n_steps);
    scn_shrink_result_deinit(&r1);
    scn_shrink_result_deinit(&r2);
    scn_shrink_result_deinit(&r3);
    scn_scenario_free(sc);
}

/* An apply of many objects keeps only the one that matters. */
Test(shrink, objects_of_an_apply)
{
    static const char yaml[] =
        "name: many-objects\n"
        "steps:\n"
        "  - advance: 1s\n"
        "  - apply:\n"
        "      manifest:\n"
        "        - {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: default}}\n"
        "        - {apiVersion: v1, kind: ConfigMap, metadata: {name: b, namespace: default}}\n"
        "        - {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: default}}\n"
        "        - {apiVersion: v1, kind: ConfigMap, metadata: {name: bad, namespace: default,\n"
        "                                                      labels: {bad: \"yes\"}}}\n"
        "        - {apiVersion: v1, kind: ConfigMap, metadata: {name: d, namespace: default}}\n"
        "        - {apiVersion: v1, kind: ConfigMap, metadata: {name: e, namespace: default}}\n"
        "  - apply: [{apiVersion: v1, kind: ConfigMap, metadata: {name: f, namespace: default}},\n"
        "            {apiVersion: v1, kind: ConfigMap, metadata: {name: g, namespace: default}}]\n"
        "invariants:\n"
        "  - {count: {apiVersion: v1, kind: ConfigMap, selector: bad=yes, atMost: 0}}\n";
    scn_scenario *sc = NULL;
    scn_error err = {0};
    cr_assert_eq(scn_scenario_parse("many.yaml", yaml, sizeof yaml - 1, &sc, &err), 0, "%s",
                 err.message);
    scn_shrink_options o = {.seed = 1, .same_failure = true};
    scn_shrink_result r;
    cr_assert_eq(scn_shrink(sc, &o, &r, &err), 0, "%s", err.message);
    cr_assert_eq(r.scenario->n_steps, 1, "%s", r.yaml);
    cr_assert_eq(r.scenario->steps[0].kind, SCN_STEP_APPLY);
    json_t *objs = r.scenario->steps[0].manifest;
    cr_assert_eq(json_array_size(objs), 1, "%s", r.yaml);
    cr_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(json_array_get(objs, 0), "metadata"), "name")),
                     "bad");
    scn_shrink_result_deinit(&r);
    scn_scenario_free(sc);
}

/*
 * test_exploration.c - the demonstration of docs/scenarios.md ("Finding a
 * bug by exploration") as a test: exploring seeds 1..200 of
 * singleton-buggy.yaml finds a failing seed, which fails again, with the
 * same trace, when replayed; the same 200 seeds of singleton-fixed.yaml
 * (the same steps, the fixed controller) all pass.
 *
 * A run costs about 13 ms here (200 seeds of the fixed scenario: 2.6 s),
 * so the whole range is run, not a sample.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "buggy.h"
#include "scn/run.h"

#ifndef KH_SCENARIOS
#define KH_SCENARIOS "scenarios/examples"
#endif

#define FIRST_SEED 1
#define LAST_SEED 200

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

static void setup(void)
{
    static bool done;
    if (!done) {
        scn_register_controller("singleton-buggy", buggy_setup, NULL);
        scn_register_controller("singleton-fixed", fixed_setup, NULL);
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

static scn_run_result run_seed(const scn_scenario *sc, uint64_t seed)
{
    scn_run_options o = {.seed = seed, .seed_given = true};
    scn_run_result r;
    cr_assert_eq(scn_run(sc, &o, &r), 0, "seed %llu could not run", (unsigned long long)seed);
    cr_assert_eq(r.seed, seed);
    return r;
}

TestSuite(exploration, .init = setup);

Test(exploration, finds_the_buggy_controllers_duplicate_and_replays_it)
{
    scn_scenario *sc = load("singleton-buggy.yaml");
    scn_run_result found = {0};
    bool failed = false;
    for (uint64_t seed = FIRST_SEED; seed <= LAST_SEED && !failed; seed++) {
        found = run_seed(sc, seed);
        failed = !found.passed;
    }
    cr_assert(failed, "seeds %d..%d never showed the duplicate ConfigMap", FIRST_SEED, LAST_SEED);
    cr_log_info("first failing seed %llu: %s", (unsigned long long)found.seed, found.message);
    /* The failure is the bug, not a timeout: two ConfigMaps for one Singleton. */
    cr_assert(strstr(found.message, "count of ConfigMap") != NULL, "seed %llu: %s",
              (unsigned long long)found.seed, found.message);
    cr_assert(strstr(found.message, "at most 1") || strstr(found.message, "to equal 1"),
              "seed %llu: %s", (unsigned long long)found.seed, found.message);

    /* Replay: the same seed fails the same way, byte for byte. */
    for (int i = 0; i < 3; i++) {
        scn_run_result again = run_seed(sc, found.seed);
        cr_assert_not(again.passed, "replay %d of seed %llu passed", i,
                      (unsigned long long)found.seed);
        cr_assert_eq(again.trace_hash, found.trace_hash,
                     "replay %d of seed %llu diverged (%lu vs %lu trace lines)", i,
                     (unsigned long long)found.seed, again.trace_lines, found.trace_lines);
        cr_assert_eq(again.failed_step, found.failed_step);
        cr_assert_str_eq(again.message, found.message);
    }
    scn_scenario_free(sc);
}

Test(exploration, the_fixed_controller_passes_every_seed)
{
    scn_scenario *sc = load("singleton-fixed.yaml");
    for (uint64_t seed = FIRST_SEED; seed <= LAST_SEED; seed++) {
        scn_run_result r = run_seed(sc, seed);
        cr_assert(r.passed,
                  "seed %llu: %s (replay: scenario replay %s/singleton-fixed.yaml --seed %llu "
                  "--trace trace.jsonl)",
                  (unsigned long long)seed, r.message, KH_SCENARIOS, (unsigned long long)seed);
    }
    scn_scenario_free(sc);
}

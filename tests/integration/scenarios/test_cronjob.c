/*
 * test_cronjob.c - the CronTask controller (examples/cronjob) over a
 * virtual day under the scenario runner: cronjob-day.yaml (hourly, history
 * limit 3: three Jobs remain, lastScheduleTime 2026-01-02T00:00:00Z) and
 * cronjob-count.yaml (every 30 minutes, limit 100: exactly 48 Jobs) pass
 * with three seeds each, and the same seed twice gives the same trace.
 *
 * No assertion on real time (a sanitizer build is many times slower); the
 * figure is logged (criterion --verbose).
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <string.h>

#include "cronjob.h"
#include "scn/run.h"

#ifndef KH_SCENARIOS
#define KH_SCENARIOS "scenarios/examples"
#endif

#define DAY_NS ((int64_t)24 * 3600 * 1000000000)

static int cronjob_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)user;
    return example_cronjob_setup(mgr, config);
}

static void setup(void)
{
    static bool done;
    if (!done)
        cr_assert_eq(scn_register_controller("cronjob", cronjob_setup, NULL), 0);
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

static scn_run_result run_once(const scn_scenario *sc, const char *name, uint64_t seed)
{
    scn_run_options o = {.seed = seed, .seed_given = true};
    scn_run_result r;
    cr_assert_eq(scn_run(sc, &o, &r), 0, "%s: the run could not start", name);
    cr_assert(r.passed, "%s seed %llu: step %d: %s", name, (unsigned long long)seed, r.failed_step,
              r.message);
    cr_assert_eq(r.virtual_ns, DAY_NS, "%s: the scenario covers exactly one virtual day", name);
    cr_assert_gt(r.trace_lines, 100, "the trace recorded the run");
    cr_log_info("%s seed %llu: 24 virtual hours in %.3f s real, %lu steps", name,
                (unsigned long long)seed, r.real_seconds, r.steps);
    return r;
}

static scn_run_result three_seeds_and_a_repeat(const char *name)
{
    scn_scenario *sc = load(name);
    scn_run_result first = run_once(sc, name, 1);
    run_once(sc, name, 2);
    run_once(sc, name, 3);
    scn_run_result again = run_once(sc, name, 1);
    cr_assert_eq(again.trace_hash, first.trace_hash, "%s: seed 1 diverged (%lu vs %lu lines)", name,
                 again.trace_lines, first.trace_lines);
    cr_assert_eq(again.steps, first.steps);
    scn_scenario_free(sc);
    return first;
}

TestSuite(cronjob, .init = setup);

Test(cronjob, day_keeps_the_history_limit)
{
    scn_run_result r = three_seeds_and_a_repeat("cronjob-day.yaml");
    cr_assert(r.passed, "%s", r.message);
    cr_assert_eq(r.virtual_ns, DAY_NS);
}

Test(cronjob, day_makes_exactly_48_half_hourly_jobs)
{
    scn_run_result r = three_seeds_and_a_repeat("cronjob-count.yaml");
    cr_assert(r.passed, "%s", r.message);
    cr_assert_eq(r.virtual_ns, DAY_NS);
}

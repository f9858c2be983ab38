/*
 * test_cpu_pin.c - a run stays on the CPU it started on, and gives the
 * caller its CPU mask back (scenarios/cpu_pin.h).
 */
#include <criterion/criterion.h>
#include "cpu_pin.h"
#include "scn/run.h"
#include "scn/scenario.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static cpu_set_t mask_of_self(void)
{
    cpu_set_t m;
    cr_assert_eq(sched_getaffinity(0, sizeof m, &m), 0);
    return m;
}

static void *report_mask(void *out)
{
    *(cpu_set_t *)out = mask_of_self();
    return NULL;
}

static void *report_policy(void *out)
{
    *(int *)out = sched_getscheduler(0);
    return NULL;
}

/* Every test needs two CPUs to say anything; CI's machines have them. */
static void need_two_cpus(void)
{
    cpu_set_t m = mask_of_self();
    cr_assert_geq(CPU_COUNT(&m), 2, "these tests need a process allowed on two CPUs");
}

Test(cpu_pin, pins_here_and_new_threads_inherit_then_gives_the_mask_back)
{
    need_two_cpus();
    unsetenv("SCENARIO_PIN");
    cpu_set_t before = mask_of_self();
    scn__cpu_pin p;
    scn__cpu_pin_here(&p);
    cr_assert(p.pinned);
    cpu_set_t now = mask_of_self();
    cr_assert_eq(CPU_COUNT(&now), 1);
    cpu_set_t both;
    CPU_AND(&both, &now, &before);
    cr_assert_eq(CPU_COUNT(&both), 1, "pinned to a CPU it was not allowed on");

    pthread_t t;
    cpu_set_t child;
    cr_assert_eq(pthread_create(&t, NULL, report_mask, &child), 0);
    pthread_join(t, NULL);
    cr_assert(CPU_EQUAL(&child, &now), "a thread started after the pin is not on the same CPU");

    cr_assert(p.batch);
    cr_assert_eq(sched_getscheduler(0), SCHED_BATCH);
    int policy = -1;
    cr_assert_eq(pthread_create(&t, NULL, report_policy, &policy), 0);
    pthread_join(t, NULL);
    cr_assert_eq(policy, SCHED_BATCH, "a thread started after the pin has policy %d", policy);

    scn__cpu_unpin(&p);
    cr_assert_eq(sched_getscheduler(0), SCHED_OTHER, "the policy was not given back");
    cpu_set_t after = mask_of_self();
    cr_assert(CPU_EQUAL(&after, &before), "the mask was not given back");
    cr_assert(!p.pinned);
    scn__cpu_unpin(&p); /* twice: nothing */
    after = mask_of_self();
    cr_assert(CPU_EQUAL(&after, &before));
}

Test(cpu_pin, scenario_pin_0_turns_it_off)
{
    need_two_cpus();
    setenv("SCENARIO_PIN", "0", 1);
    cpu_set_t before = mask_of_self();
    scn__cpu_pin p;
    scn__cpu_pin_here(&p);
    cr_assert(!p.pinned);
    cr_assert(!p.batch);
    cr_assert_eq(sched_getscheduler(0), SCHED_OTHER);
    cpu_set_t now = mask_of_self();
    cr_assert(CPU_EQUAL(&now, &before));
    scn__cpu_unpin(&p);
    unsetenv("SCENARIO_PIN");
}

Test(cpu_pin, one_allowed_cpu_is_left_alone)
{
    need_two_cpus();
    unsetenv("SCENARIO_PIN");
    cpu_set_t before = mask_of_self(), one;
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (CPU_ISSET(c, &before)) {
            CPU_SET(c, &one);
            break;
        }
    }
    cr_assert_eq(sched_setaffinity(0, sizeof one, &one), 0);
    scn__cpu_pin p;
    scn__cpu_pin_here(&p);
    cr_assert(!p.pinned);
    cr_assert(p.batch, "one CPU or not, hand-offs still should not preempt");
    scn__cpu_unpin(&p);
    cr_assert_eq(sched_getscheduler(0), SCHED_OTHER);
    cr_assert_eq(sched_setaffinity(0, sizeof before, &before), 0);
}

static int driver_cpus[8];
static int ncalls;

static int driver_policies[8];

static void on_state(void *ud, int step, int64_t virtual_ns, const json_t *objects)
{
    (void)ud, (void)step, (void)virtual_ns, (void)objects;
    cpu_set_t m = mask_of_self();
    if (ncalls < 8) {
        driver_policies[ncalls] = sched_getscheduler(0);
        driver_cpus[ncalls++] = CPU_COUNT(&m);
    }
}

Test(cpu_pin, a_run_is_pinned_while_it_runs_and_not_after)
{
    need_two_cpus();
    unsetenv("SCENARIO_PIN");
    static const char text[] = "name: pin\n"
                               "steps:\n"
                               "  - apply:\n"
                               "      manifest: {apiVersion: v1, kind: ConfigMap,\n"
                               "                 metadata: {name: c, namespace: default}}\n";
    scn_scenario *sc = NULL;
    scn_error err = {0};
    cr_assert_eq(scn_scenario_parse("pin.yaml", text, strlen(text), &sc, &err), 0, "%s",
                 err.message);
    cpu_set_t before = mask_of_self();
    scn_run_options o = {.seed = 1, .seed_given = true, .on_state = on_state};
    scn_run_result r;
    ncalls = 0;
    cr_assert_eq(scn_run(sc, &o, &r), 0, "%s", r.message);
    cr_assert(r.passed, "%s", r.message);
    cr_assert_geq(ncalls, 2);
    for (int i = 0; i < ncalls; i++) {
        cr_assert_eq(driver_cpus[i], 1, "call %d: the driver ran on %d CPUs", i, driver_cpus[i]);
        cr_assert_eq(driver_policies[i], SCHED_BATCH, "call %d: policy %d", i, driver_policies[i]);
    }
    cr_assert_eq(sched_getscheduler(0), SCHED_OTHER, "scn_run did not give the policy back");
    cpu_set_t after = mask_of_self();
    cr_assert(CPU_EQUAL(&after, &before), "scn_run did not give the mask back");
    scn_scenario_free(sc);
}

Test(cpu_pin, workers_take_one_cpu_each)
{
    need_two_cpus();
    unsetenv("SCENARIO_PIN");
    cpu_set_t before = mask_of_self();
    int first = scn__cpu_pin_slot(0, 2);
    cr_assert_geq(first, 0);
    cpu_set_t m = mask_of_self();
    cr_assert_eq(CPU_COUNT(&m), 1);
    cr_assert(CPU_ISSET(first, &m) && CPU_ISSET(first, &before));
    cr_assert_eq(sched_setaffinity(0, sizeof before, &before), 0);
    int second = scn__cpu_pin_slot(1, 2);
    cr_assert_geq(second, 0);
    cr_assert_neq(first, second, "two workers on CPU %d", first);
    cr_assert_eq(sched_setaffinity(0, sizeof before, &before), 0);
    /* One worker, more workers than CPUs, or turned off: left alone. */
    cr_assert_eq(scn__cpu_pin_slot(0, 1), -1);
    cr_assert_eq(scn__cpu_pin_slot(0, CPU_COUNT(&before) + 1), -1);
    setenv("SCENARIO_PIN", "0", 1);
    cr_assert_eq(scn__cpu_pin_slot(0, 2), -1);
    unsetenv("SCENARIO_PIN");
    m = mask_of_self();
    cr_assert(CPU_EQUAL(&m, &before));
}

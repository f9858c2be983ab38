/*
 * test_long_names.c - a controller whose registered name, with its kind,
 * makes long informer thread names ("informer scenario/<name>-0
 * <apiVersion>/<Kind>") still gets its watch events in a scenario: the
 * scheduler matches a watch to the informer thread reading it by that
 * whole name, which libctrl once cut to 64 bytes (the controller's cache
 * then never synced and it never reconciled). A name too long for the
 * rest of the way (SCN_CONTROLLER_NAME_MAX) is refused when registered.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "hunt.h"
#include "scn/run.h"

#ifndef KH_SCENARIOS
#define KH_SCENARIOS "scenarios/examples"
#endif

/* SCN_CONTROLLER_NAME_MAX (100) characters, as a controller name may be. */
#define LONG_NAME                                                                                  \
    "a-pool-controller-whose-name-says-all-about-it-because-names-here-are-descriptive-and-long-"  \
    "indeed-xy"

static int pool_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)user;
    return example_hunt_pool_fixed_setup(mgr, config);
}

Test(long_names, a_controller_with_a_long_name_reconciles)
{
    cr_assert_eq(strlen(LONG_NAME), SCN_CONTROLLER_NAME_MAX);
    cr_assert_eq(scn_register_controller(LONG_NAME, pool_setup, NULL), 0);
    const char *text = "name: long-names\n"
                       "controllers: [" LONG_NAME "]\n"
                       "fixtures:\n"
                       "  - ../../fixtures/hunt/pool-crd.yaml\n"
                       "  - ../../fixtures/hunt/pool.yaml\n"
                       "steps:\n"
                       "  - wait:\n"
                       "      for: {field: {apiVersion: hunt.example.com/v1, kind: Pool,\n"
                       "                    namespace: default, name: workers,\n"
                       "                    path: .status.replicas, equals: 2}}\n"
                       "      timeout: 1m\n"
                       "  - restart: {replica: 0}\n"
                       "  - patch: {apiVersion: hunt.example.com/v1, kind: Pool, namespace: "
                       "default,\n"
                       "            name: workers, patch: {spec: {replicas: 3}}}\n"
                       "  - wait:\n"
                       "      for: {count: {apiVersion: v1, kind: Pod, namespace: default,\n"
                       "                    selector: hunt.example.com/owner=workers, equals: "
                       "3}}\n"
                       "      timeout: 1m\n";
    scn_scenario *sc = NULL;
    scn_error err = {0};
    int rc = scn_scenario_parse(KH_SCENARIOS "/long-names.yaml", text, strlen(text), &sc, &err);
    cr_assert_eq(rc, 0, "%s:%d: %s: %s", err.file, err.line, err.field, err.message);
    for (uint64_t seed = 1; seed <= 3; seed++) {
        scn_run_options o = {.seed = seed, .seed_given = true};
        scn_run_result r;
        cr_assert_eq(scn_run(sc, &o, &r), 0, "seed %llu could not run", (unsigned long long)seed);
        cr_expect(r.passed, "seed %llu: %s", (unsigned long long)seed, r.message);
    }
    scn_scenario_free(sc);
}

Test(long_names, a_name_too_long_is_refused)
{
    cr_assert_eq(scn_register_controller(LONG_NAME "z", pool_setup, NULL), SCN_ERR_INPUT);
    cr_assert_eq(scn_register_controller("", pool_setup, NULL), SCN_ERR_INPUT);
}

/*
 * test_steps.c - scenario steps run whole: a patch of the status
 * subresource, which the object's own endpoint ignores.
 *
 * Each scenario is parsed from text as if it were a file in
 * scenarios/examples (its fixtures are named relative to it).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scn/run.h"

#ifndef KH_SCENARIOS
#define KH_SCENARIOS "scenarios/examples"
#endif

static scn_scenario *parse(const char *text)
{
    scn_scenario *sc = NULL;
    scn_error err = {0};
    int rc = scn_scenario_parse(KH_SCENARIOS "/steps.yaml", text, strlen(text), &sc, &err);
    cr_assert_eq(rc, 0, "%s:%d: %s: %s", err.file, err.line, err.field, err.message);
    return sc;
}

static scn_run_result run_seed(const scn_scenario *sc, uint64_t seed)
{
    scn_run_options o = {.seed = seed, .seed_given = true};
    scn_run_result r;
    cr_assert_eq(scn_run(sc, &o, &r), 0, "seed %llu could not run", (unsigned long long)seed);
    return r;
}

#define PODSET "apiVersion: example.com/v1, kind: PodSet, namespace: default, name: web"

/* No controller runs: only the steps write. A merge patch and a JSON patch
 * of the status subresource change .status; the same field in a patch of
 * the object is dropped (the CRD has a status subresource), while its spec
 * changes. */
Test(steps, patch_writes_the_status_subresource)
{
    scn_scenario *sc = parse(
        "name: patch-status\n"
        "fixtures: [../../fixtures/replicaset/crd.yaml, ../../fixtures/replicaset/basic.yaml]\n"
        "steps:\n"
        "  - patch: {" PODSET ", subresource: status, patch: {status: {replicas: 7}}}\n"
        "  - expect: {field: {" PODSET ", path: .status.replicas, equals: 7}}\n"
        "  - patch: {" PODSET ", patch: {spec: {replicas: 4}, status: {replicas: 9}}}\n"
        "  - expect: {field: {" PODSET ", path: .status.replicas, equals: 7}}\n"
        "  - expect: {field: {" PODSET ", path: .spec.replicas, equals: 4}}\n"
        "  - patch: {" PODSET ", subresource: status, type: json,\n"
        "            patch: [{op: replace, path: /status/replicas, value: 8}]}\n"
        "  - expect: {field: {" PODSET ", path: .status.replicas, equals: 8}}\n"
        "  - expect: {field: {" PODSET ", path: .spec.replicas, equals: 4}}\n");
    scn_run_result r = run_seed(sc, 1);
    cr_assert(r.passed, "%s", r.message);
    scn_scenario_free(sc);

    /* a kind without that subresource: the step fails with the server's
     * answer and the path it patched */
    sc = parse("name: patch-status-none\n"
               "fixtures: [{apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: "
               "default}}]\n"
               "steps:\n"
               "  - patch: {apiVersion: v1, kind: ConfigMap, namespace: default, name: c,\n"
               "            subresource: status, patch: {data: {a: b}}}\n");
    r = run_seed(sc, 1);
    cr_assert_not(r.passed);
    cr_assert_eq(r.failed_step, 0);
    cr_assert(strstr(r.message, "patch /api/v1/namespaces/default/configmaps/c/status: 404") ==
                  r.message,
              "%s", r.message);
    scn_scenario_free(sc);
}

/*
 * test_apply_owners.c - two controllers built on ctrl_client_apply own
 * different fields of one ConfigMap (a label each) under the scenario
 * runner, and a scenario step applies a third field as its own manager:
 * nobody removes what another owns, and the writes converge (each
 * controller writes once; its later applies change nothing, so they make no
 * event and wake nobody). The trace is read to count the writes.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctrl/client.h"
#include "ctrl/controller.h"
#include "ctrl/error.h"
#include "ctrl/manager.h"
#include "scn/run.h"
#include "scn/scenario.h"

/* The controller's options: which manager it applies as, and its label. */
typedef struct owner {
    const char *manager;
    const char *label;
} owner;

static const owner owners[] = {{"labeler-a", "a"}, {"labeler-b", "b"}};

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    const owner *o = user;
    /* Only its own field: an apply configuration with one label. */
    json_t *cfg =
        json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}}", "apiVersion", "v1", "kind", "ConfigMap",
                  "metadata", "name", req->name, "namespace", req->ns, "labels", o->label, "on");
    ctrl_error err = {0};
    int rc = cfg ? ctrl_client_apply(ctrl_ctx_client(ctx), cfg, o->manager, 0, NULL, &err)
                 : CTRL_ERR_NOMEM;
    json_decref(cfg);
    ctrl_error_deinit(&err);
    return rc < 0 ? ctrl_err(rc) : ctrl_done();
}

static int setup_owner(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)config;
    const owner *o = user;
    ctrl_builder *b = ctrl_builder_for(mgr, "v1", "ConfigMap");
    ctrl_builder_named(b, o->manager);
    return ctrl_builder_complete(b, reconcile, user);
}

static const char scenario[] =
    "name: apply-owners\n"
    "controllers: [labeler-a, labeler-b]\n"
    "fixtures:\n"
    "  - {apiVersion: v1, kind: ConfigMap, metadata: {name: shared, namespace: default},\n"
    "     data: {x: '1'}}\n"
    "maxVirtualTime: 3h\n"
    "steps:\n"
    "  - wait: {for: {field: {apiVersion: v1, kind: ConfigMap, namespace: default, name: shared,\n"
    "                   path: .metadata.labels.a, equals: 'on'}}, timeout: 10m}\n"
    "  - wait: {for: {field: {apiVersion: v1, kind: ConfigMap, namespace: default, name: shared,\n"
    "                   path: .metadata.labels.b, equals: 'on'}}, timeout: 10m}\n"
    "  - advance: 1h\n"
    "  - apply:\n"
    "      fieldManager: human\n"
    "      manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: shared, namespace: "
    "default},\n"
    "                 data: {y: '2'}}\n"
    "  - advance: 1h\n"
    "  - expect: {field: {apiVersion: v1, kind: ConfigMap, namespace: default, name: shared,\n"
    "                     path: .metadata.labels.a, equals: 'on'}}\n"
    "  - expect: {field: {apiVersion: v1, kind: ConfigMap, namespace: default, name: shared,\n"
    "                     path: .metadata.labels.b, equals: 'on'}}\n"
    "  - expect: {field: {apiVersion: v1, kind: ConfigMap, namespace: default, name: shared,\n"
    "                     path: .data.x, equals: '1'}}\n"
    "  - expect: {field: {apiVersion: v1, kind: ConfigMap, namespace: default, name: shared,\n"
    "                     path: .data.y, equals: '2'}}\n";

/* Lines of the trace file that record a write of the shared ConfigMap. */
static int writes_in(const char *path, char *first, size_t len)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char line[4096];
    int n = 0;
    first[0] = 0;
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, "configmaps/shared") && strstr(line, "PATCH")) {
            if (!n)
                snprintf(first, len, "%s", line);
            n++;
        }
    }
    fclose(f);
    return n;
}

Test(apply_owners, two_controllers_own_different_fields_and_converge, .timeout = 120)
{
    cr_assert_eq(scn_register_controller("labeler-a", setup_owner, (void *)&owners[0]), 0);
    cr_assert_eq(scn_register_controller("labeler-b", setup_owner, (void *)&owners[1]), 0);
    scn_scenario *sc = NULL;
    scn_error err = {0};
    cr_assert_eq(scn_scenario_parse(NULL, scenario, strlen(scenario), &sc, &err), 0, "%d: %s: %s",
                 err.line, err.field, err.message);
    char trace[] = "/tmp/kh-apply-owners-XXXXXX";
    int fd = mkstemp(trace);
    cr_assert_geq(fd, 0);
    close(fd);
    scn_run_options o = {.seed = 11, .seed_given = true, .trace_path = trace};
    scn_run_result r;
    cr_assert_eq(scn_run(sc, &o, &r), 0);
    cr_assert(r.passed, "step %d: %s", r.failed_step, r.message);
    char first[4096];
    int writes = writes_in(trace, first, sizeof first);
    cr_log_info("%d PATCHes of the shared ConfigMap; the first: %s", writes, first);
    /* Each controller's apply of its label, the step's apply, and at most a
     * few no-op applies (answered without a write, so nothing wakes anyone):
     * fighting controllers would write until the run's step limit. */
    cr_assert_geq(writes, 3, "the trace records the applies (first: %s)", first);
    cr_assert_leq(writes, 12, "%d PATCHes of the shared ConfigMap: the writes did not converge",
                  writes);
    unlink(trace);
    scn_scenario_free(sc);
}

Test(apply_owners, force_needs_a_field_manager)
{
    static const char bad[] = "name: x\nsteps:\n  - apply:\n      force: true\n"
                              "      manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: "
                              "c, namespace: default}}\n";
    static const char bad_type[] = "name: x\nsteps:\n  - apply:\n      fieldManager: m\n"
                                   "      force: 'yes'\n      manifest: {apiVersion: v1, kind: "
                                   "ConfigMap, metadata: {name: c, namespace: default}}\n";
    scn_scenario *sc = NULL;
    scn_error err = {0};
    cr_assert_neq(scn_scenario_parse(NULL, bad, strlen(bad), &sc, &err), 0);
    cr_assert(strstr(err.message, "force needs fieldManager"), "%s", err.message);
    cr_assert_neq(scn_scenario_parse(NULL, bad_type, strlen(bad_type), &sc, &err), 0);
    cr_assert(strstr(err.message, "expected true or false"), "%s", err.message);
    cr_assert_null(sc);
}

/*
 * test_hunt.c - scn/hunt.h: each oracle on a controller made to break it
 * one way, deterministically; the Singleton pair (examples/buggy): the
 * buggy controller is found without the lost answers its scenario adds,
 * the fixed one gives nothing; a finding's scenario fails again when run;
 * the findings do not depend on the number of jobs; bad input is refused.
 *
 * The test controllers all reconcile the ConfigMap "in" (namespace
 * default) and keep what they know in memory, per incarnation:
 *   hunt-twostep  creates "in-a" then "in-b", and takes "in-a" as the
 *                 sign that both exist: a crash between the two writes
 *                 leaves "in-b" missing for ever (the differential);
 *   hunt-ticker   marks "in" once; an incarnation that finds it marked by
 *                 another believes it must recover and rewrites "in"
 *                 every 20 s for ever (quiescence);
 *   hunt-erring   the same, but fails its reconciles instead (reconcile
 *                 errors).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buggy.h"
#include "ctrl/object.h"
#include "scn/hunt.h"
#include "scn/run.h"

#ifndef KH_SCENARIOS
#define KH_SCENARIOS "scenarios/examples"
#endif

/* ---- the test controllers ---- */

typedef struct incarnation {
    int mode;        /* 0 twostep, 1 ticker, 2 erring */
    bool marked;     /* this incarnation marked "in" */
    int64_t last_ns; /* the ticker's last tick */
} incarnation;

#define TICK (20 * CTRL_SECOND)

static int create_cm(ctrl_client *c, const char *name)
{
    json_t *cm =
        json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                  "metadata", "name", name, "namespace", "default", "data", "made", "yes");
    int rc = ctrl_client_create(c, cm, NULL, NULL, NULL);
    json_decref(cm);
    return ctrl_err_is_already_exists(rc) ? 0 : rc;
}

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    incarnation *inc = user;
    if (strcmp(req->name, "in") != 0)
        return ctrl_done();
    ctrl_informer *inf = NULL;
    json_t *in = NULL, *a = NULL;
    int rc = ctrl_cache_informer(ctrl_ctx_cache(ctx), "v1", "ConfigMap", NULL, &inf, NULL);
    if (rc == 0)
        rc = ctrl_informer_get(inf, "default", "in", &in);
    if (rc < 0)
        return ctrl_err_is_not_found(rc) ? ctrl_done() : ctrl_err(rc);
    ctrl_client *c = ctrl_ctx_client(ctx);
    ctrl_result res = ctrl_done();
    if (inc->mode == 0) {
        if (ctrl_informer_get(inf, "default", "in-a", &a) == 0)
            goto out; /* "in-a" exists: done (not so after a crash) */
        if ((rc = create_cm(c, "in-a")) < 0 || (rc = create_cm(c, "in-b")) < 0)
            res = ctrl_err(rc);
        goto out;
    }
    json_t *data = json_object_get(in, "data");
    const char *phase = json_string_value(json_object_get(data, "phase"));
    if (phase && inc->marked)
        goto out;
    if (phase && inc->mode == 2) {
        res = ctrl_err(CTRL_ERR_ARG); /* "cannot recover" */
        goto out;
    }
    if (phase && inc->last_ns && ctrl_ctx_now(ctx) - inc->last_ns < TICK) {
        /* its own write's event: the timer brings the next tick */
        res = ctrl_requeue_after(TICK - (ctrl_ctx_now(ctx) - inc->last_ns));
        goto out;
    }
    json_t *copy = json_deep_copy(in);
    json_t *d = json_object_get(copy, "data");
    if (!json_is_object(d)) {
        d = json_object();
        json_object_set_new(copy, "data", d);
    }
    if (!phase) {
        json_object_set_new(d, "phase", json_string("1"));
    } else {
        const char *t = json_string_value(json_object_get(d, "tick"));
        char next[32];
        snprintf(next, sizeof next, "%d", t ? atoi(t) + 1 : 1);
        json_object_set_new(d, "tick", json_string(next));
        res = ctrl_requeue_after(TICK);
        inc->last_ns = ctrl_ctx_now(ctx);
    }
    rc = ctrl_client_update(c, copy, NULL, NULL, NULL);
    json_decref(copy);
    if (rc < 0)
        res = ctrl_err(rc);
    else if (!phase)
        inc->marked = true;
out:
    json_decref(in);
    json_decref(a);
    return res;
}

static int test_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)config;
    incarnation *inc = calloc(1, sizeof *inc);
    if (!inc)
        return CTRL_ERR_NOMEM;
    inc->mode = (int)(intptr_t)user;
    static const char *const names[] = {"hunt-twostep", "hunt-ticker", "hunt-erring"};
    ctrl_controller_options o = {.max_delay_ns = 10 * CTRL_SECOND};
    ctrl_builder *b = ctrl_builder_for(mgr, "v1", "ConfigMap");
    ctrl_builder_named(b, names[inc->mode]);
    ctrl_builder_with_options(b, &o);
    ctrl_builder_with_user_free(b, free);
    return ctrl_builder_complete(b, reconcile, inc);
}

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
    if (done)
        return;
    done = true;
    scn_register_controller("singleton-buggy", buggy_setup, NULL);
    scn_register_controller("singleton-fixed", fixed_setup, NULL);
    scn_register_controller("hunt-twostep", test_setup, (void *)(intptr_t)0);
    scn_register_controller("hunt-ticker", test_setup, (void *)(intptr_t)1);
    scn_register_controller("hunt-erring", test_setup, (void *)(intptr_t)2);
}

TestSuite(hunt, .init = setup, .timeout = 900);

/* ---- helpers ---- */

static scn_scenario *parse(const char *file, const char *text)
{
    scn_scenario *sc = NULL;
    scn_error err = {0};
    cr_assert_eq(scn_scenario_parse(file, text, strlen(text), &sc, &err), 0, "%s:%d: %s: %s",
                 err.file, err.line, err.field, err.message);
    return sc;
}

static scn_scenario *load(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", KH_SCENARIOS, name);
    scn_scenario *sc = NULL;
    scn_error err = {0};
    cr_assert_eq(scn_scenario_load(path, &sc, &err), 0, "%s: %s", path, err.message);
    return sc;
}

/* A base with one ConfigMap "in" for controller ctl, ten seconds long. */
static scn_scenario *config_base(const char *ctl)
{
    char text[600];
    snprintf(text, sizeof text,
             "name: %s-base\n"
             "controllers: [%s]\n"
             "fixtures:\n"
             "  - {apiVersion: v1, kind: ConfigMap, metadata: {name: in, namespace: default},\n"
             "     data: {x: \"1\"}}\n"
             "steps:\n"
             "  - advance: 10s\n",
             ctl, ctl);
    return parse(NULL, text);
}

static scn_hunt_report hunt_one(const scn_scenario *sc, scn_hunt_options o)
{
    scn_hunt_report r;
    scn_error err = {0};
    if (!o.budget_ns)
        o.budget_ns = 600 * INT64_C(1000000000); /* all of it, even under the sanitizers */
    cr_assert_eq(scn_hunt((const scn_scenario *const[]){sc}, 1, &o, &r, &err), 0, "%s",
                 err.message);
    return r;
}

static const scn_hunt_finding *find(const scn_hunt_report *r, scn_hunt_oracle o, scn_hunt_class c)
{
    for (size_t i = 0; i < r->n_findings; i++)
        if (r->findings[i].oracle == o && r->findings[i].cls == c)
            return &r->findings[i];
    return NULL;
}

static void dump(const scn_hunt_report *r)
{
    for (size_t i = 0; i < r->n_findings; i++)
        fprintf(stderr, "finding %zu: %s: %s\n", i, r->findings[i].signature,
                r->findings[i].message);
}

/* ---- the oracles ---- */

Test(hunt, differential_after_a_crash_between_two_writes)
{
    scn_scenario *sc = config_base("hunt-twostep");
    scn_hunt_report r = hunt_one(sc, (scn_hunt_options){.classes = 1u << SCN_HUNT_CRASH});
    dump(&r);
    cr_assert_eq(r.ran[SCN_HUNT_BASELINE], 1);
    cr_assert_eq(r.planned[SCN_HUNT_CRASH], 2, "two writes, two crash points");
    cr_assert_eq(r.ran[SCN_HUNT_CRASH], 2);
    const scn_hunt_finding *f = find(&r, SCN_HUNT_DIFFERENTIAL, SCN_HUNT_CRASH);
    cr_assert_not_null(f);
    cr_assert_eq(r.n_findings, 1, "only the crash at the second write breaks it");
    cr_assert_str_eq(f->signature, "differential crash ConfigMap only in the baseline");
    cr_assert_not_null(strstr(f->report, "ConfigMap default/in-b (v1): only in A"), "%s",
                       f->report);
    cr_assert_not_null(strstr(f->perturbation, "write 2 of 2"), "%s", f->perturbation);
    cr_assert_eq(f->shown_by, 1);
    /* the scenario it names runs the perturbation (in-b is never made) and
     * ends with the baseline's end as expectations, which it breaks */
    scn_scenario *rs = parse(NULL, f->yaml);
    cr_assert_eq(rs->n_start_steps, 1);
    cr_assert(rs->start_steps[0].crash_restart);
    cr_assert_eq(rs->start_steps[0].crash_at_write, 2);
    scn_run_options ro = {.seed = f->seed, .seed_given = true};
    scn_run_result rr;
    cr_assert_eq(scn_run(rs, &ro, &rr), 0);
    cr_assert_not(rr.passed);
    cr_assert_not_null(strstr(rr.message, "expected count of ConfigMap in default to be 3, "
                                          "found 2"),
                       "%s", rr.message);
    cr_assert_eq(rr.failed_step, (int)rs->n_steps - 1, "the last step: %s", rr.message);
    scn_scenario_free(rs);
    scn_hunt_report_deinit(&r);
    scn_scenario_free(sc);
}

Test(hunt, errors_on_each_write)
{
    scn_scenario *sc = config_base("hunt-twostep");
    scn_hunt_report r = hunt_one(sc, (scn_hunt_options){.classes = 1u << SCN_HUNT_ERROR});
    dump(&r);
    cr_assert_eq(r.planned[SCN_HUNT_ERROR], 6, "two writes, three answers each");
    /* a 409 or 500 on the second create: the retry finds in-a and stops;
     * and a lost answer on the first: in-a is made, the controller hears
     * an error, and its retry finds in-a */
    const scn_hunt_finding *f = find(&r, SCN_HUNT_DIFFERENTIAL, SCN_HUNT_ERROR);
    cr_assert_not_null(f);
    cr_assert_eq(r.n_findings, 1);
    cr_assert_not_null(strstr(f->perturbation, "write 2 of 2"), "%s", f->perturbation);
    cr_assert_not_null(strstr(f->perturbation, "409"), "the first shown: %s", f->perturbation);
    cr_assert_eq(f->shown_by, 3, "%lu", f->shown_by);
    scn_hunt_report_deinit(&r);
    scn_scenario_free(sc);
}

Test(hunt, quiescence_after_a_restart)
{
    scn_scenario *sc = config_base("hunt-ticker");
    scn_hunt_report r = hunt_one(sc, (scn_hunt_options){.classes = 1u << SCN_HUNT_UNOBSERVED});
    dump(&r);
    cr_assert_eq(r.planned[SCN_HUNT_UNOBSERVED], 2, "the advance and after the last step");
    const scn_hunt_finding *f = find(&r, SCN_HUNT_QUIESCENCE, SCN_HUNT_UNOBSERVED);
    cr_assert_not_null(f);
    cr_assert_not_null(strstr(f->message, "no quiescence: "), "%s", f->message);
    cr_assert_not_null(strstr(f->message, "/api/v1/namespaces/default/configmaps/in"), "%s",
                       f->message);
    cr_assert_null(find(&r, SCN_HUNT_QUIESCENCE, SCN_HUNT_BASELINE), "the baseline is quiet");
    /* the ticks differ from the baseline too */
    cr_assert_not_null(find(&r, SCN_HUNT_DIFFERENTIAL, SCN_HUNT_UNOBSERVED));
    scn_hunt_report_deinit(&r);
    scn_scenario_free(sc);
}

Test(hunt, reconcile_errors_after_a_restart)
{
    scn_scenario *sc = config_base("hunt-erring");
    scn_hunt_report r = hunt_one(sc, (scn_hunt_options){.classes = 1u << SCN_HUNT_STALE});
    dump(&r);
    const scn_hunt_finding *f = find(&r, SCN_HUNT_RECONCILE_ERRORS, SCN_HUNT_STALE);
    cr_assert_not_null(f);
    cr_assert_not_null(strstr(f->message, "reconcile errors"), "%s", f->message);
    cr_assert_eq(r.n_findings, 1, "no write, no state change: that oracle alone");
    cr_assert_eq(f->shown_by, r.ran[SCN_HUNT_STALE], "every restart shows it");
    scn_hunt_report_deinit(&r);
    scn_scenario_free(sc);
}

Test(hunt, a_baseline_that_fails_is_a_finding_and_not_perturbed)
{
    scn_scenario *sc = parse(NULL, "name: fails\n"
                                   "controllers: [hunt-twostep]\n"
                                   "steps:\n"
                                   "  - expect: {exists: {apiVersion: v1, kind: ConfigMap,\n"
                                   "             namespace: default, name: nothing}}\n");
    scn_hunt_report r = hunt_one(sc, (scn_hunt_options){0});
    cr_assert_eq(r.n_findings, 1);
    cr_assert_eq(r.findings[0].cls, SCN_HUNT_BASELINE);
    cr_assert_eq(r.findings[0].oracle, SCN_HUNT_CHECKS);
    cr_assert_eq(r.skipped, 1);
    cr_assert_eq(r.ran[SCN_HUNT_CRASH] + r.ran[SCN_HUNT_STALE] + r.ran[SCN_HUNT_ERROR], 0);
    scn_hunt_report_deinit(&r);
    scn_scenario_free(sc);
}

/* ---- the Singleton pair ---- */

static const char buggy_no_faults[] =
    "name: singleton-buggy-plain\n"
    "controllers: [singleton-buggy]\n"
    "fixtures: [../../fixtures/singleton/crd.yaml, ../../fixtures/singleton/basic.yaml]\n"
    "steps:\n"
    "  - wait: {for: {count: {apiVersion: v1, kind: ConfigMap, namespace: default,\n"
    "                         selector: singleton=demo, equals: 1}}, timeout: 1m}\n"
    "  - patch: {apiVersion: example.com/v1, kind: Singleton, namespace: default, name: demo,\n"
    "            patch: {spec: {data: {greeting: hi}}}}\n"
    "  - advance: 1m\n"
    "invariants:\n"
    "  - {count: {apiVersion: v1, kind: ConfigMap, namespace: default, selector: singleton=demo,\n"
    "             atMost: 1}}\n";

Test(hunt, buggy_singleton_found_and_replayed)
{
    char file[600];
    snprintf(file, sizeof file, "%s/buggy-plain.yaml", KH_SCENARIOS);
    scn_scenario *sc = parse(file, buggy_no_faults);
    /* unperturbed, it passes */
    scn_run_result rr;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        scn_run_options ro = {.seed = seed, .seed_given = true};
        cr_assert_eq(scn_run(sc, &ro, &rr), 0);
        cr_assert(rr.passed, "seed %d: %s", (int)seed, rr.message);
    }

    char dir[] = "/tmp/scn-hunt-test-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    /* seed 1 happens to hide it (scenario hunt --seeds 1..3 finds it
     * under 2 and 3) */
    scn_hunt_report r = hunt_one(
        sc, (scn_hunt_options){.out_dir = dir, .seeds_given = true, .seed_lo = 2, .seed_hi = 3});
    dump(&r);
    cr_assert_gt(r.n_findings, 0);
    cr_assert_eq(r.not_tried, 0);
    const scn_hunt_finding *f = NULL;
    for (size_t i = 0; i < r.n_findings && !f; i++)
        if (r.findings[i].oracle == SCN_HUNT_CHECKS)
            f = &r.findings[i];
    cr_assert_not_null(f, "the invariant breaks");
    cr_assert_not_null(strstr(f->message, "to be at most 1, found 2"), "%s", f->message);
    cr_assert_not_null(f->path);
    cr_assert_not_null(strstr(f->replay, "run"), "%s", f->replay);
    /* the file written replays the failure */
    scn_scenario *written = NULL;
    scn_error err = {0};
    cr_assert_eq(scn_scenario_load(f->path, &written, &err), 0, "%s", err.message);
    scn_run_options ro = {.seed = f->seed, .seed_given = true};
    cr_assert_eq(scn_run(written, &ro, &rr), 0);
    cr_assert_not(rr.passed);
    cr_assert_not_null(strstr(rr.message, "to be at most 1, found 2"), "%s", rr.message);
    scn_scenario_free(written);
    for (size_t i = 0; i < r.n_findings; i++)
        unlink(r.findings[i].path);
    rmdir(dir);

    /* two jobs: the same findings, in the same order */
    scn_hunt_report r2 = hunt_one(
        sc, (scn_hunt_options){.jobs = 2, .seeds_given = true, .seed_lo = 2, .seed_hi = 3});
    cr_assert_eq(r2.n_findings, r.n_findings);
    for (size_t i = 0; i < r.n_findings; i++) {
        cr_assert_str_eq(r2.findings[i].signature, r.findings[i].signature);
        cr_assert_str_eq(r2.findings[i].perturbation, r.findings[i].perturbation);
        cr_assert_eq(r2.findings[i].shown_by, r.findings[i].shown_by);
    }
    for (int c = 0; c < SCN_HUNT_N_CLASSES; c++)
        cr_assert_eq(r2.ran[c], r.ran[c]);
    scn_hunt_report_deinit(&r2);
    scn_hunt_report_deinit(&r);
    scn_scenario_free(sc);
}

Test(hunt, fixed_singleton_gives_nothing)
{
    scn_scenario *sc = load("singleton-fixed.yaml");
    scn_hunt_report r = hunt_one(sc, (scn_hunt_options){0});
    dump(&r);
    cr_assert_eq(r.n_findings, 0);
    cr_assert_eq(r.not_tried, 0);
    for (int c = SCN_HUNT_CRASH; c < SCN_HUNT_N_CLASSES; c++)
        cr_assert_gt(r.ran[c], 0, "class %s ran", scn_hunt_class_name(c));
    json_t *doc = scn_hunt_report_json(&r);
    cr_assert_not_null(doc);
    cr_assert_eq(json_array_size(json_object_get(doc, "findings")), 0);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(doc, "ran"), "baseline")), 1);
    json_decref(doc);
    scn_hunt_report_deinit(&r);
    scn_scenario_free(sc);
}

Test(hunt, bad_input)
{
    scn_hunt_report r;
    scn_error err = {0};
    scn_hunt_options o = {0};
    cr_assert_eq(scn_hunt(NULL, 0, &o, &r, &err), SCN_ERR_INPUT);
    scn_scenario *none = parse(NULL, "name: empty\nsteps: [{advance: 1s}]\n");
    cr_assert_eq(scn_hunt((const scn_scenario *const[]){none}, 1, &o, &r, &err), SCN_ERR_INPUT);
    cr_assert_not_null(strstr(err.message, "runs no controller"), "%s", err.message);
    scn_scenario_free(none);
    cr_assert_eq(scn_hunt_class_parse("crash"), SCN_HUNT_CRASH);
    cr_assert_eq(scn_hunt_class_parse("nope"), -1);
}

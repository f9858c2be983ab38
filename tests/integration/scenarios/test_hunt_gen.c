/*
 * test_hunt_gen.c - the CRD input generator (scenarios/hunt_gen.h) against
 * an in-process fakeapi: every change generated for the constructs of
 * fakeapi's CRD validation tests (tests/fixtures/hunt/constructs-crd.yaml)
 * is sent as a JSON patch; a valid one must answer 200 and store what the
 * generator predicts, an invalid one 422 Invalid with the object unchanged.
 * Then scn_hunt_crd_bases: its scenarios parse, and runs pass.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakeapi/fakeapi.h"
#include "hunt_gen.h"
#include "hunt_gen_int.h"
#include "kh/yaml.h"
#include "ctrl/controller.h"
#include "ctrl/manager.h"
#include "scn/run.h"
#include "scn/shrink.h"

#define CRD HUNT_FIXTURES "/constructs-crd.yaml"
#define COLL "/apis/hunt.example.com/v1/namespaces/default/constructs"

static fakeapi_server *srv;

static void setup(void)
{
    fakeapi_options o = {.no_http = true, .seed = 7};
    cr_assert_eq(fakeapi_start(&o, &srv), 0);
}

static void teardown(void)
{
    fakeapi_stop(srv);
    srv = NULL;
}

TestSuite(hunt_gen, .init = setup, .fini = teardown, .timeout = 240);

static json_t *load_first(const char *path)
{
    json_t *docs = NULL;
    kh_yaml_error ye;
    cr_assert_eq(kh_yaml_load_file(path, &docs, &ye), 0, "%s: %s", path, ye.message);
    json_t *d = json_incref(json_array_get(docs, 0));
    json_decref(docs);
    return d;
}

static const json_t *schema_of(const json_t *crd)
{
    const json_t *v = json_array_get(json_object_get(json_object_get(crd, "spec"), "versions"), 0);
    return json_object_get(json_object_get(v, "schema"), "openAPIV3Schema");
}

static json_t *request(const char *method, const char *path, const char *ctype, const json_t *body,
                       int *status)
{
    char *text = body ? json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    json_t *out = NULL;
    cr_assert_eq(fakeapi_request(srv, method, path, ctype, text, status, &out), 0);
    free(text);
    return out;
}

/* The object without the fields the server owns. */
static json_t *content(const json_t *obj)
{
    json_t *c = json_deep_copy(obj);
    json_object_del(c, "metadata");
    json_object_del(c, "apiVersion");
    json_object_del(c, "kind");
    json_object_del(c, "status");
    return c;
}

static char *dump(const json_t *v)
{
    return v ? json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) : strdup("(none)");
}

/* Create base as name; returns the stored object. */
static json_t *create(const json_t *base, const char *name)
{
    json_t *obj = json_deep_copy(base);
    json_object_set_new(obj, "metadata",
                        json_pack("{s:s, s:s}", "name", name, "namespace", "default"));
    int status = 0;
    json_t *got = request("POST", COLL, "application/json", obj, &status);
    char *g = dump(got);
    cr_assert_eq(status, 201, "create %s: %d %s", name, status, g);
    free(g);
    json_decref(obj);
    return got;
}

/* Send every change of base; count disagreements (printed). */
static size_t check_all(const json_t *schema, const json_t *base, const char *tag, size_t *nvalid,
                        size_t *ninvalid)
{
    scn_gen_change *c = NULL;
    size_t n = 0, bad = 0;
    scn_error err;
    json_t *model = json_deep_copy(base);
    scn__gen_store(schema, model);
    cr_assert_eq(scn_gen_changes(schema, base, NULL, &c, &n, &err), 0, "%s", err.message);
    cr_assert_gt(n, 0);
    for (size_t i = 0; i < n; i++) {
        char name[64], path[256];
        snprintf(name, sizeof name, "%s-%zu", tag, i);
        snprintf(path, sizeof path, COLL "/%s", name);
        json_t *before = create(base, name);
        json_t *op;
        if (!c[i].value)
            op = json_pack("[{s:s, s:s}]", "op", "remove", "path", c[i].path);
        else
            op = json_pack("[{s:s, s:s, s:O}]", "op",
                           scn__gen_pointer_get(before, c[i].path) ? "replace" : "add", "path",
                           c[i].path, "value", c[i].value);
        int status = 0;
        json_t *got = request("PATCH", path, "application/json-patch+json", op, &status);
        json_t *now = request("GET", path, NULL, NULL, &(int){0});
        json_t *want = NULL;
        bool valid = false;
        cr_assert_eq(scn_gen_apply(schema, model, &c[i], &want, &valid), 0);
        cr_assert_eq(valid, c[i].valid);
        json_t *now_c = content(now), *want_c = content(want), *before_c = content(before);
        const char *problem = NULL;
        if (c[i].valid && status != 200)
            problem = "valid change rejected";
        else if (!c[i].valid && status != 422)
            problem = "invalid change accepted";
        else if (!c[i].valid &&
                 strcmp(json_string_value(json_object_get(got, "reason")), "Invalid"))
            problem = "rejected, but not as Invalid";
        else if (c[i].valid && !json_equal(now_c, want_c))
            problem = "stored object differs from the prediction";
        else if (!c[i].valid && !json_equal(now_c, before_c))
            problem = "rejected change altered the object";
        if (problem) {
            char *v = dump(c[i].value), *g = dump(got), *w = dump(want_c), *h = dump(now_c);
            fprintf(stderr, "%s: %s %s=%s (%s, %s): got %d %s\n  predicted %s\n  stored    %s\n",
                    problem, c[i].field, c[i].path, v, c[i].why, c[i].valid ? "valid" : "invalid",
                    status, g, w, h);
            free(v);
            free(g);
            free(w);
            free(h);
            bad++;
        }
        *nvalid += c[i].valid;
        *ninvalid += !c[i].valid;
        json_decref(op);
        json_decref(got);
        json_decref(now);
        json_decref(want);
        json_decref(now_c);
        json_decref(want_c);
        json_decref(before_c);
        json_decref(before);
    }
    scn_gen_changes_free(c, n);
    json_decref(model);
    return bad;
}

Test(hunt_gen, every_change_agrees_with_fakeapi)
{
    fakeapi_error ferr;
    cr_assert_eq(fakeapi_apply_file(srv, CRD, &ferr), 0, "%s", ferr.message);
    json_t *crd = load_first(CRD);
    const json_t *schema = schema_of(crd);
    scn_error err;
    json_t *inst = NULL;
    cr_assert_eq(scn_gen_instance(schema, &inst, &err), 0, "%s", err.message);
    json_object_set_new(inst, "apiVersion", json_string("hunt.example.com/v1"));
    json_object_set_new(inst, "kind", json_string("Construct"));

    /* the minimal instance is accepted, and stored as predicted */
    json_t *stored = create(inst, "minimal");
    json_t *model = json_deep_copy(inst);
    scn__gen_store(schema, model);
    json_t *a = content(stored), *b = content(model);
    char *da = dump(a), *db = dump(b);
    cr_assert(json_equal(a, b), "stored %s, predicted %s", da, db);
    free(da);
    free(db);

    size_t nvalid = 0, ninvalid = 0, bad = 0;
    bad += check_all(schema, inst, "min", &nvalid, &ninvalid);
    json_t *full = load_first(HUNT_FIXTURES "/construct-full.yaml");
    json_object_del(full, "status");
    bad += check_all(schema, full, "full", &nvalid, &ninvalid);
    fprintf(stderr, "hunt_gen: %zu valid and %zu invalid changes sent\n", nvalid, ninvalid);
    cr_assert_eq(bad, 0, "%zu changes where fakeapi and the generator disagree", bad);
    cr_assert_gt(nvalid, 200);
    cr_assert_gt(ninvalid, 100);
    json_decref(full);
    json_decref(a);
    json_decref(b);
    json_decref(stored);
    json_decref(model);
    json_decref(inst);
    json_decref(crd);
}

/* ---- base scenarios ------------------------------------------------------ */

#define WIDGETS HUNT_FIXTURES "/widget-crd.yaml"

/* "widget-watch": reconciles every Widget and does nothing else. */
static ctrl_result watch_reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    (void)ctx, (void)req, (void)user;
    return ctrl_done();
}

static int watch_setup(ctrl_manager *mgr, const json_t *config, void *user)
{
    (void)config, (void)user;
    ctrl_builder *b = ctrl_builder_for(mgr, "hunt.example.com/v1", "Widget");
    return ctrl_builder_complete(b, watch_reconcile, NULL);
}

static void register_once(void)
{
    static bool done;
    if (!done)
        cr_assert_eq(scn_register_controller("widget-watch", watch_setup, NULL), 0);
    done = true;
}

TestSuite(hunt_bases, .init = register_once, .timeout = 240);

static void free_all(scn_scenario **sc, size_t n)
{
    for (size_t i = 0; i < n; i++)
        scn_scenario_free(sc[i]);
    free(sc);
}

static size_t count_steps(const scn_scenario *sc, scn_step_kind kind)
{
    size_t n = 0;
    for (size_t i = 0; i < sc->n_steps; i++)
        n += sc->steps[i].kind == kind;
    return n;
}

Test(hunt_bases, sequences_parse_and_run)
{
    scn_gen_options o = {.seed = 1, .seq_len = 3, .max_seqs = 6, .settle_ns = 5000000000LL};
    scn_scenario **sc = NULL;
    size_t n = 0;
    scn_error err = {0};
    int rc = scn_hunt_crd_bases(WIDGETS, "widget-watch", NULL, NULL, 0, &o, &sc, &n, &err);
    cr_assert_eq(rc, 0, "%s: %s", err.file, err.message);
    cr_assert_eq(n, 6);
    size_t invalid_requests = 0;
    for (size_t i = 0; i < n; i++) {
        cr_assert(!strncmp(sc[i]->name, "hunt Widget ", 12), "%s", sc[i]->name);
        cr_assert_eq(sc[i]->n_controllers, 1);
        cr_assert_str_eq(sc[i]->controllers[0].name, "widget-watch");
        cr_assert_eq(json_array_size(sc[i]->fixtures), 1, "the CRD");
        cr_assert_eq(sc[i]->steps[0].kind, SCN_STEP_APPLY);
        cr_assert_eq(sc[i]->steps[1].kind, SCN_STEP_ADVANCE);
        cr_assert_eq(sc[i]->steps[1].duration_ns, 5000000000LL);
        /* three changes: a patch and an advance, or a request and an expect, each */
        size_t changes = count_steps(sc[i], SCN_STEP_PATCH) + count_steps(sc[i], SCN_STEP_REQUEST);
        cr_assert_eq(changes, 3, "%s", sc[i]->name);
        cr_assert_eq(count_steps(sc[i], SCN_STEP_REQUEST), count_steps(sc[i], SCN_STEP_EXPECT));
        invalid_requests += count_steps(sc[i], SCN_STEP_REQUEST);
        scn_run_options ro = {.seed = 1};
        scn_run_result res;
        cr_assert_eq(scn_run(sc[i], &ro, &res), 0, "%s", sc[i]->name);
        cr_assert(res.passed, "%s: %s", sc[i]->name, res.message);
    }
    cr_assert_gt(invalid_requests, 0, "some changes are invalid");
    free_all(sc, n);
}

Test(hunt_bases, every_change_once_with_a_given_resource_and_fixtures)
{
    const char *fixtures[] = {HUNT_FIXTURES "/other.yaml"};
    scn_gen_options o = {.settle_ns = 1000000000LL};
    scn_scenario **sc = NULL;
    size_t n = 0;
    scn_error err = {0};
    int rc = scn_hunt_crd_bases(WIDGETS, NULL, HUNT_FIXTURES "/widget.yaml", fixtures, 1, &o, &sc,
                                &n, &err);
    cr_assert_eq(rc, 0, "%s: %s", err.file, err.message);
    cr_assert_gt(n, 20);
    size_t ran = 0, valid = 0, invalid = 0;
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(sc[i]->n_controllers, 0);
        cr_assert_eq(json_array_size(sc[i]->fixtures), 2);
        const json_t *cr = json_array_get(sc[i]->steps[0].manifest, 0);
        cr_assert_str_eq(
            json_string_value(json_object_get(json_object_get(cr, "metadata"), "name")), "shiny");
        bool is_valid = sc[i]->steps[2].kind == SCN_STEP_PATCH;
        /* one of each kind runs, and every tenth */
        if ((is_valid && !valid) || (!is_valid && !invalid) || i % 10 == 0) {
            scn_run_options ro = {.seed = 2};
            scn_run_result res;
            cr_assert_eq(scn_run(sc[i], &ro, &res), 0, "%s", sc[i]->name);
            cr_assert(res.passed, "%s: %s", sc[i]->name, res.message);
            ran++;
        }
        valid += is_valid;
        invalid += !is_valid;
    }
    cr_assert_gt(valid, 0);
    cr_assert_gt(invalid, 0);
    cr_assert_gt(ran, 2);

    /* written out and read back, a base is the same scenario */
    char *yaml = scn_scenario_to_yaml(sc[0]);
    cr_assert_not_null(yaml);
    scn_scenario *back = NULL;
    cr_assert_eq(scn_scenario_parse("back.yaml", yaml, strlen(yaml), &back, &err), 0, "%s",
                 err.message);
    cr_assert_eq(back->n_steps, sc[0]->n_steps);
    cr_assert_str_eq(back->name, sc[0]->name);
    scn_scenario_free(back);
    free(yaml);
    free_all(sc, n);
}

Test(hunt_bases, a_wrong_rejection_fails_the_run)
{
    /* a base whose invalid change the server accepts must fail: make one by
     * hand from a generated base, turning its expected 422 into 200 */
    scn_gen_options o = {.no_invalid = false};
    scn_scenario **sc = NULL;
    size_t n = 0;
    scn_error err = {0};
    cr_assert_eq(scn_hunt_crd_bases(WIDGETS, NULL, NULL, NULL, 0, &o, &sc, &n, &err), 0, "%s",
                 err.message);
    size_t k = 0;
    while (k < n && sc[k]->steps[2].kind != SCN_STEP_REQUEST)
        k++;
    cr_assert_lt(k, n);
    sc[k]->steps[2].status = 200;
    scn_run_options ro = {.seed = 1};
    scn_run_result res;
    cr_assert_eq(scn_run(sc[k], &ro, &res), 0);
    cr_assert(!res.passed, "%s", sc[k]->name);
    cr_assert_eq(res.failed_step, 2, "%s", res.message);
    free_all(sc, n);
}

Test(hunt_bases, bad_inputs)
{
    scn_scenario **sc = NULL;
    size_t n = 0;
    scn_error err = {0};
    cr_assert_eq(
        scn_hunt_crd_bases(HUNT_FIXTURES "/missing.yaml", NULL, NULL, NULL, 0, NULL, &sc, &n, &err),
        SCN_ERR_IO);
    cr_assert_eq(
        scn_hunt_crd_bases(HUNT_FIXTURES "/other.yaml", NULL, NULL, NULL, 0, NULL, &sc, &n, &err),
        SCN_ERR_INPUT);
    cr_assert(strstr(err.message, "CustomResourceDefinition"), "%s", err.message);
    cr_assert_eq(scn_hunt_crd_bases(WIDGETS, NULL, HUNT_FIXTURES "/other.yaml", NULL, 0, NULL, &sc,
                                    &n, &err),
                 SCN_ERR_INPUT);
    cr_assert(strstr(err.message, "group and kind"), "%s", err.message);
    const char *fx[] = {HUNT_FIXTURES "/nope.yaml"};
    cr_assert_eq(scn_hunt_crd_bases(WIDGETS, NULL, NULL, fx, 1, NULL, &sc, &n, &err), SCN_ERR_IO);
    cr_assert_null(sc);
    cr_assert_eq(n, 0);
}

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
#include "scn/run.h"

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
    json_object_set_new(obj, "metadata", json_pack("{s:s, s:s}", "name", name, "namespace", "default"));
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
        else if (!c[i].valid && strcmp(json_string_value(json_object_get(got, "reason")), "Invalid"))
            problem = "rejected, but not as Invalid";
        else if (c[i].valid && !json_equal(now_c, want_c))
            problem = "stored object differs from the prediction";
        else if (!c[i].valid && !json_equal(now_c, before_c))
            problem = "rejected change altered the object";
        if (problem) {
            char *v = dump(c[i].value), *g = dump(got), *w = dump(want_c), *h = dump(now_c);
            fprintf(stderr, "%s: %s %s=%s (%s, %s): got %d %s\n  predicted %s\n  stored    %s\n",
                    problem, c[i].field, c[i].path, v, c[i].why,
                    c[i].valid ? "valid" : "invalid", status, g, w, h);
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

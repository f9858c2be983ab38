/*
 * test_state_mask.c - masked canonical states (scn/state_mask.h): default
 * masks, generated names in creation order and their references, ignore
 * and keep specs, whole kinds left out, bad specs.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "scn/state_mask.h"

static json_t *parse(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    cr_assert(v, "bad test JSON: %s", e.text);
    return v;
}

static json_t *masked(scn_mask *m, const char *objects)
{
    json_t *in = parse(objects), *out = NULL;
    cr_assert_eq(scn_state_mask(m, in, &out), 0);
    json_decref(in);
    return out;
}

/* Two runs' states: different uids, times, versions and generated suffixes. */
#define RUN_A                                                                                      \
    "[{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"demo-abcde\","        \
    "\"generateName\":\"demo-\",\"namespace\":\"default\",\"uid\":\"u1\",\"resourceVersion\":"     \
    "\"12\",\"creationTimestamp\":\"2026-01-01T00:00:01Z\",\"ownerReferences\":[{\"kind\":"        \
    "\"Singleton\",\"name\":\"demo\",\"uid\":\"s1\",\"controller\":true}],\"managedFields\":[{"    \
    "\"manager\":\"x\",\"time\":\"2026-01-01T00:00:01Z\"}]},\"data\":{\"a\":\"1\"}},"              \
    "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Singleton\",\"metadata\":{\"name\":\"demo\","   \
    "\"namespace\":\"default\",\"uid\":\"s1\"},\"status\":{\"configMapName\":\"demo-abcde\","      \
    "\"at\":\"2026-01-01T00:00:03.5+01:00\"}}]"
#define RUN_B                                                                                      \
    "[{\"apiVersion\":\"example.com/v1\",\"kind\":\"Singleton\",\"metadata\":{\"name\":\"demo\","  \
    "\"namespace\":\"default\",\"uid\":\"s9\"},\"status\":{\"configMapName\":\"demo-zzzzz\","      \
    "\"at\":\"2026-01-01T00:09:00Z\"}},"                                                           \
    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"demo-zzzzz\","         \
    "\"generateName\":\"demo-\",\"namespace\":\"default\",\"uid\":\"u7\",\"resourceVersion\":"     \
    "\"40\",\"creationTimestamp\":\"2026-01-01T00:00:05Z\",\"ownerReferences\":[{\"kind\":"        \
    "\"Singleton\",\"name\":\"demo\",\"uid\":\"s9\",\"controller\":true}],\"managedFields\":[{"    \
    "\"manager\":\"x\",\"time\":\"2026-01-01T00:00:07Z\"}]},\"data\":{\"a\":\"1\"}}]"

Test(state_mask, equal_runs_equal_states)
{
    scn_mask *m;
    cr_assert_eq(scn_mask_new(&m), 0);
    json_t *a = masked(m, RUN_A), *b = masked(m, RUN_B);
    char *ta = scn_state_text(a), *tb = scn_state_text(b);
    cr_assert_str_eq(ta, tb);
    cr_assert_eq(scn_state_hash(a), scn_state_hash(b));
    /* sorted: ConfigMap (v1) after Singleton (example.com/v1) */
    json_t *cm = json_array_get(a, 1);
    cr_assert_str_eq(json_string_value(json_object_get(cm, "kind")), "ConfigMap");
    json_t *meta = json_object_get(cm, "metadata");
    cr_assert_str_eq(json_string_value(json_object_get(meta, "name")), "demo-<generated-1>");
    cr_assert_str_eq(json_string_value(json_object_get(meta, "uid")), "<masked>");
    cr_assert_str_eq(json_string_value(json_object_get(meta, "resourceVersion")), "<masked>");
    cr_assert_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(meta, "managedFields"), 0), "time")),
                     "<masked>");
    cr_assert_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(meta, "ownerReferences"), 0), "uid")),
                     "<masked>");
    json_t *st = json_object_get(json_array_get(a, 0), "status");
    cr_assert_str_eq(json_string_value(json_object_get(st, "configMapName")), "demo-<generated-1>");
    cr_assert_str_eq(json_string_value(json_object_get(st, "at")), "<time>");
    free(ta);
    free(tb);
    json_decref(a);
    json_decref(b);
    scn_mask_free(m);
}

Test(state_mask, real_differences_stay)
{
    scn_mask *m;
    cr_assert_eq(scn_mask_new(&m), 0);
    json_t *a = masked(m, RUN_A);
    json_t *bin = parse(RUN_B), *b = NULL;
    json_object_set_new(json_object_get(json_array_get(bin, 1), "data"), "a", json_string("2"));
    cr_assert_eq(scn_state_mask(m, bin, &b), 0);
    cr_assert_neq(scn_state_hash(a), scn_state_hash(b));
    json_decref(bin);
    json_decref(a);
    json_decref(b);
    scn_mask_free(m);
}

Test(state_mask, generated_names_in_creation_order)
{
    scn_mask *m;
    scn_masker *mk;
    cr_assert_eq(scn_mask_new(&m), 0);
    cr_assert_eq(scn_masker_new(m, &mk), 0);
    /* web-zzz created first, web-aaa second: creation order, not name order */
    json_t *in =
        parse("[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-aaa\","
              "\"generateName\":\"web-\",\"namespace\":\"d\",\"creationTimestamp\":\"2026-01-01T00:"
              "00:02Z\"}},"
              "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-zzz\","
              "\"generateName\":\"web-\",\"namespace\":\"d\",\"creationTimestamp\":\"2026-01-01T00:"
              "00:01Z\"}}]");
    json_t *out = NULL;
    cr_assert_eq(scn_masker_apply(mk, in, &out), 0);
    char *t = scn_state_text(out);
    cr_assert(strstr(t, "web-<generated-1>") && strstr(t, "web-<generated-2>"), "%s", t);
    json_decref(out);
    /* the next snapshot: web-zzz gone, a new one: it is the third, and
     * web-aaa keeps its placeholder */
    json_decref(in);
    in = parse("[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-aaa\","
               "\"generateName\":\"web-\",\"namespace\":\"d\"}},"
               "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-new\","
               "\"generateName\":\"web-\",\"namespace\":\"d\"}}]");
    cr_assert_eq(scn_masker_apply(mk, in, &out), 0);
    const char *n0 = json_string_value(
        json_object_get(json_object_get(json_array_get(out, 0), "metadata"), "name"));
    const char *n1 = json_string_value(
        json_object_get(json_object_get(json_array_get(out, 1), "metadata"), "name"));
    cr_assert_str_eq(n0, "web-<generated-2>");
    cr_assert_str_eq(n1, "web-<generated-3>");
    free(t);
    json_decref(in);
    json_decref(out);
    scn_masker_free(mk);
    scn_mask_free(m);
}

Test(state_mask, ignore_keep_and_whole_kinds)
{
    scn_mask *m;
    scn_error err = {0};
    cr_assert_eq(scn_mask_new(&m), 0);
    cr_assert_eq(scn_mask_ignore(m, "ConfigMap:.data['a']", &err), 0);
    cr_assert_eq(scn_mask_ignore(m, "example.com/v1/Singleton:.", &err), 0);
    cr_assert_eq(scn_mask_keep(m, "ConfigMap:.metadata.creationTimestamp", &err), 0);
    json_t *a = masked(m, RUN_A);
    cr_assert_eq(json_array_size(a), 1, "the Singleton is left out");
    json_t *cm = json_array_get(a, 0);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(cm, "data"), "a")),
                     "<masked>");
    cr_assert_str_eq(
        json_string_value(json_object_get(json_object_get(cm, "metadata"), "creationTimestamp")),
        "2026-01-01T00:00:01Z");
    json_decref(a);
    scn_mask_free(m);
}

Test(state_mask, bad_specs)
{
    scn_mask *m;
    scn_error err = {0};
    char msg[300];
    cr_assert_eq(scn_mask_new(&m), 0);
    cr_assert_eq(scn_mask_ignore(m, "metadata.name", &err), SCN_ERR_INPUT);
    cr_assert(strstr(err.message, "starts with"), "%s", err.message);
    cr_assert_str_eq(err.field, "ignore");
    cr_assert_eq(scn_mask_check_spec(".a['b", msg, sizeof msg), SCN_ERR_INPUT);
    cr_assert(strstr(msg, "unterminated"), "%s", msg);
    cr_assert_eq(scn_mask_check_spec(".a[x]", msg, sizeof msg), SCN_ERR_INPUT);
    cr_assert_eq(scn_mask_check_spec(".a..b", msg, sizeof msg), SCN_ERR_INPUT);
    cr_assert_eq(scn_mask_check_spec(":.a", msg, sizeof msg), SCN_ERR_INPUT);
    cr_assert_eq(scn_mask_check_spec(".spec.containers[*].image", msg, sizeof msg), 0);
    cr_assert_eq(scn_mask_check_spec(".metadata.labels.*", msg, sizeof msg), 0);
    json_t *notarr = json_object(), *out = NULL;
    cr_assert_eq(scn_state_mask(m, notarr, &out), SCN_ERR_INPUT);
    cr_assert_null(out);
    json_decref(notarr);
    scn_mask_free(m);
}

Test(state_mask, scenario_diff_section)
{
    static const char yaml[] = "name: t\n"
                               "diff:\n"
                               "  ignore: [\"ConfigMap:.data\"]\n"
                               "  keep: [\".status.at\"]\n";
    scn_scenario *sc = NULL;
    scn_error err = {0};
    cr_assert_eq(scn_scenario_parse("t.yaml", yaml, sizeof yaml - 1, &sc, &err), 0, "%s",
                 err.message);
    scn_mask *m;
    cr_assert_eq(scn_mask_new(&m), 0);
    cr_assert_eq(scn_mask_add_scenario(m, sc, &err), 0);
    json_t *a = masked(m, RUN_A);
    char *t = scn_state_text(a);
    cr_assert(strstr(t, "\"data\":\"<masked>\""), "%s", t);
    cr_assert(strstr(t, "2026-01-01T00:00:03.5+01:00"), "%s", t);
    free(t);
    json_decref(a);
    scn_mask_free(m);
    scn_scenario_free(sc);

    static const char bad_yaml[] = "name: t\n"
                                   "diff:\n"
                                   "  ignore:\n"
                                   "    - metadata.uid\n";
    cr_assert_eq(scn_scenario_parse("t.yaml", bad_yaml, sizeof bad_yaml - 1, &sc, &err),
                 SCN_ERR_INPUT);
    cr_assert_eq(err.line, 4);
    cr_assert_str_eq(err.field, "diff.ignore[0]");
}

/* Events are named <object>.<hex time> by client-go's recorder (and libctrl's). */
Test(state_mask, event_names)
{
    scn_mask *m;
    cr_assert_eq(scn_mask_new(&m), 0);
    json_t *a = masked(m, "[{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":"
                          "\"demo.188a3f00aa\",\"namespace\":\"default\"},\"involvedObject\":{"
                          "\"name\":\"demo\",\"uid\":\"u1\",\"resourceVersion\":\"7\"},"
                          "\"reason\":\"Created\"},"
                          "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                          "\"not.an.event1\",\"namespace\":\"default\"}}]");
    json_t *b = masked(m, "[{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":"
                          "\"demo.19ffff0001\",\"namespace\":\"default\"},\"involvedObject\":{"
                          "\"name\":\"demo\",\"uid\":\"u9\",\"resourceVersion\":\"70\"},"
                          "\"reason\":\"Created\"},"
                          "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
                          "\"not.an.event1\",\"namespace\":\"default\"}}]");
    cr_assert_eq(scn_state_hash(a), scn_state_hash(b));
    char *t = scn_state_text(a);
    cr_assert(strstr(t, "\"name\":\"demo.<generated-1>\""), "%s", t);
    cr_assert(strstr(t, "\"name\":\"not.an.event1\""), "only Events: %s", t);
    free(t);
    json_decref(a);
    json_decref(b);
    scn_mask_free(m);
}

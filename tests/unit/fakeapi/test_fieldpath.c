/*
 * test_fieldpath.c - field sets (fakeapi/fieldpath.h): the fieldsV1 codec
 * (round trips, upstream's key order), set algebra, and the field set of an
 * object under the built-in, CRD and deduced schemas, on cases from the
 * Server-Side Apply documentation.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "fieldpath.h"
#include "types.h"

static json_t *parse(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    cr_assert_not_null(v, "%s: %s", text, e.text);
    return v;
}

static fakeapi__fpset *set_of(const char *fields)
{
    json_t *j = parse(fields);
    fakeapi__fpset *s = NULL;
    char err[256];
    cr_assert_eq(fakeapi__fpset_from_json(j, &s, err, sizeof err), 0, "%s: %s", fields, err);
    json_decref(j);
    return s;
}

static void assert_text(const fakeapi__fpset *s, const char *want)
{
    char *got = fakeapi__fpset_to_text(s);
    cr_assert_str_eq(got, want);
    free(got);
}

/* The field set of obj (JSON text) under type t, as fieldsV1 text. */
static void assert_object_set(const fakeapi__fptype *t, const char *obj, unsigned flags,
                              const char *want)
{
    json_t *o = parse(obj);
    fakeapi__fpset *s = NULL;
    char err[512] = "";
    cr_assert_eq(fakeapi__fp_object_set(t, o, flags, &s, err, sizeof err), 0, "%s", err);
    assert_text(s, want);
    fakeapi__fpset_free(s);
    json_decref(o);
}

static fakeapi__fptype builtin(const char *msg)
{
    const fakeapi__tmsg *m = fakeapi__type_find(msg);
    cr_assert_not_null(m, "%s", msg);
    return fakeapi__fptype_builtin(m);
}

Test(fieldpath, fieldsv1_round_trips_byte_exact)
{
    static const char *const cases[] = {
        "{}",
        "{\"f:data\":{\"f:a\":{},\"f:b\":{}}}",
        "{\"f:metadata\":{\"f:labels\":{\".\":{},\"f:app\":{}}}}",
        "{\"f:spec\":{\"f:template\":{\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":"
        "\\\"nginx\\\"}\":"
        "{\".\":{},\"f:image\":{},\"f:name\":{}}}}}}}",
        "{\"f:ports\":{\"k:{\\\"containerPort\\\":80,\\\"protocol\\\":\\\"TCP\\\"}\":{\".\":{},"
        "\"f:containerPort\":{}}}}",
        "{\"f:finalizers\":{\".\":{},\"v:\\\"a\\\"\":{},\"v:\\\"b\\\"\":{}}}",
        "{\"f:x\":{\"i:0\":{},\"i:2\":{}}}",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fakeapi__fpset *s = set_of(cases[i]);
        assert_text(s, cases[i]);
        fakeapi__fpset_free(s);
    }
}

Test(fieldpath, keys_are_written_in_upstream_order)
{
    /* Field names, then keys, then values, then indices; numbers as numbers. */
    fakeapi__fpset *s = set_of("{\"i:1\":{},\"v:true\":{},\"v:false\":{},\"v:\\\"b\\\"\":{},"
                               "\"v:10\":{},\"v:9\":{},\"k:{\\\"port\\\":443}\":{},"
                               "\"k:{\\\"port\\\":80}\":{},\"f:z\":{},\"f:a\":{}}");
    assert_text(s, "{\"f:a\":{},\"f:z\":{},\"k:{\\\"port\\\":80}\":{},\"k:{\\\"port\\\":443}\":{},"
                   "\"v:9\":{},\"v:10\":{},\"v:\\\"b\\\"\":{},\"v:false\":{},\"v:true\":{},"
                   "\"i:1\":{}}");
    fakeapi__fpset_free(s);
    /* Keys of a key element are sorted by name whatever order they came in. */
    s = set_of("{\"k:{\\\"protocol\\\":\\\"TCP\\\",\\\"containerPort\\\":80}\":{}}");
    assert_text(s, "{\"k:{\\\"containerPort\\\":80,\\\"protocol\\\":\\\"TCP\\\"}\":{}}");
    fakeapi__fpset_free(s);
}

Test(fieldpath, bad_fieldsv1_is_refused)
{
    static const char *const bad[] = {
        "{\"x:a\":{}}", "{\"f:a\":1}", "{\"k:[1]\":{}}", "{\"i:-1\":{}}", "{\"v:\":{}}", "[]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *j = parse(bad[i]);
        fakeapi__fpset *s = NULL;
        char err[256] = "";
        cr_assert_eq(fakeapi__fpset_from_json(j, &s, err, sizeof err), -1, "%s", bad[i]);
        cr_assert_null(s);
        cr_assert_neq(err[0], 0);
        json_decref(j);
    }
}

Test(fieldpath, set_algebra)
{
    fakeapi__fpset *a = set_of("{\"f:data\":{\"f:a\":{},\"f:b\":{}},\"f:x\":{}}");
    fakeapi__fpset *b = set_of("{\"f:data\":{\"f:b\":{},\"f:c\":{}},\"f:y\":{}}");
    fakeapi__fpset *u = fakeapi__fpset_union(a, b);
    fakeapi__fpset *d = fakeapi__fpset_difference(a, b);
    fakeapi__fpset *i = fakeapi__fpset_intersection(a, b);
    assert_text(u, "{\"f:data\":{\"f:a\":{},\"f:b\":{},\"f:c\":{}},\"f:x\":{},\"f:y\":{}}");
    assert_text(d, "{\"f:data\":{\"f:a\":{}},\"f:x\":{}}");
    assert_text(i, "{\"f:data\":{\"f:b\":{}}}");
    cr_assert_eq(fakeapi__fpset_size(u), 5);
    fakeapi__fpset_free(u);
    fakeapi__fpset_free(d);
    fakeapi__fpset_free(i);

    /* A member of b takes a's whole subtree out of a recursive difference only. */
    fakeapi__fpset *c = set_of("{\"f:data\":{}}");
    d = fakeapi__fpset_difference(a, c);
    assert_text(d, "{\"f:data\":{\"f:a\":{},\"f:b\":{}},\"f:x\":{}}");
    fakeapi__fpset_free(d);
    d = fakeapi__fpset_recursive_difference(a, c);
    assert_text(d, "{\"f:x\":{}}");
    fakeapi__fpset_free(d);

    /* Membership of a parent and its children is kept apart. */
    fakeapi__fpset *p = set_of("{\"f:m\":{\".\":{},\"f:k\":{}}}");
    fakeapi__fpset *q = set_of("{\"f:m\":{}}");
    d = fakeapi__fpset_difference(p, q);
    assert_text(d, "{\"f:m\":{\"f:k\":{}}}");
    cr_assert(!fakeapi__fpset_equal(d, p));
    fakeapi__fpset *back = fakeapi__fpset_union(d, q);
    cr_assert(fakeapi__fpset_equal(back, p));
    fakeapi__fpset_free(back);
    fakeapi__fpset_free(d);
    d = fakeapi__fpset_difference(p, p);
    cr_assert(fakeapi__fpset_empty(d));
    assert_text(d, "{}");
    fakeapi__fpset_free(d);
    fakeapi__fpset_free(p);
    fakeapi__fpset_free(q);
    fakeapi__fpset_free(c);
    fakeapi__fpset_free(a);
    fakeapi__fpset_free(b);
}

/* The in-place operations give what the copying ones give, and say when s changed. */
Test(fieldpath, in_place_algebra_matches_copies)
{
    static const char *const sets[] = {
        "{}",
        "{\"f:data\":{\"f:a\":{},\"f:b\":{}},\"f:x\":{}}",
        "{\"f:data\":{\"f:b\":{},\"f:c\":{}},\"f:y\":{}}",
        "{\"f:data\":{}}",
        "{\"f:m\":{\".\":{},\"f:k\":{}}}",
        "{\"f:m\":{}}",
        "{\"f:m\":{\"f:k\":{},\"f:l\":{\"f:z\":{}}}}",
        "{\"f:spec\":{\"f:ports\":{\"k:{\\\"port\\\":80}\":{\".\":{},\"f:port\":{}},"
        "\"k:{\\\"port\\\":443}\":{}}},\"i:0\":{}}",
        "{\"f:spec\":{\"f:ports\":{\"k:{\\\"port\\\":80}\":{\"f:name\":{}}}},\"v:1\":{}}",
    };
    size_t n = sizeof sets / sizeof sets[0];
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            fakeapi__fpset *a = set_of(sets[i]), *b = set_of(sets[j]);
            fakeapi__fpset *d = fakeapi__fpset_difference(a, b);
            fakeapi__fpset *u = fakeapi__fpset_union(a, b);
            fakeapi__fpset *s = fakeapi__fpset_copy(a);
            bool changed = fakeapi__fpset_subtract(s, b);
            cr_assert(fakeapi__fpset_equal(s, d), "%s - %s", sets[i], sets[j]);
            cr_assert_eq(changed, !fakeapi__fpset_equal(a, d), "%s - %s", sets[i], sets[j]);
            char *want = fakeapi__fpset_to_text(d), *got = fakeapi__fpset_to_text(s);
            cr_assert_str_eq(got, want);
            free(want);
            free(got);
            fakeapi__fpset_free(s);
            s = fakeapi__fpset_copy(a);
            changed = false;
            cr_assert_eq(fakeapi__fpset_add(s, b, &changed), 0);
            cr_assert(fakeapi__fpset_equal(s, u), "%s + %s", sets[i], sets[j]);
            cr_assert_eq(changed, !fakeapi__fpset_equal(a, u), "%s + %s", sets[i], sets[j]);
            fakeapi__fpset_free(s);
            fakeapi__fpset_free(d);
            fakeapi__fpset_free(u);
            fakeapi__fpset_free(a);
            fakeapi__fpset_free(b);
        }
    }
}

Test(fieldpath, remove_takes_one_member_path_out)
{
    fakeapi__fpset *s = set_of("{\"f:metadata\":{\".\":{},\"f:labels\":{\"f:a\":{}},\"f:name\":{}},"
                               "\"f:spec\":{}}");
    fakeapi__pe p[2] = {{.kind = FAKEAPI__PE_FIELD, .name = (char *)"metadata"},
                        {.kind = FAKEAPI__PE_FIELD, .name = (char *)"name"}};
    cr_assert(fakeapi__fpset_remove(s, p, 2));
    cr_assert(!fakeapi__fpset_remove(s, p, 2)); /* gone already */
    cr_assert(fakeapi__fpset_remove(s, p, 1));  /* the member, not what is below it */
    assert_text(s, "{\"f:metadata\":{\"f:labels\":{\"f:a\":{}}},\"f:spec\":{}}");
    p[1].name = (char *)"labels"; /* a parent that is no member */
    cr_assert(!fakeapi__fpset_remove(s, p, 2));
    fakeapi__pe q[3] = {p[0], p[1], {.kind = FAKEAPI__PE_FIELD, .name = (char *)"a"}};
    cr_assert(fakeapi__fpset_remove(s, q, 3)); /* the empty parents go with it */
    assert_text(s, "{\"f:spec\":{}}");
    fakeapi__fpset_free(s);
}

/* Canonical: fieldsV1 exactly as the set would be written again. */
Test(fieldpath, canonical_fieldsv1_is_recognised)
{
    static const struct {
        const char *text;
        bool canonical;
    } cases[] = {
        {"{}", true},
        {"{\"f:data\":{\"f:a\":{},\"f:b\":{}}}", true},
        {"{\"f:m\":{\".\":{},\"f:k\":{}}}", true},
        {"{\"f:ports\":{\"k:{\\\"containerPort\\\":80,\\\"protocol\\\":\\\"TCP\\\"}\":{}}}", true},
        {"{\"f:x\":{\"i:0\":{},\"i:2\":{}},\"f:y\":{\"v:\\\"a\\\"\":{}}}", true},
        {"{\"f:x\":{\"i:2\":{},\"i:0\":{}}}", false},         /* order */
        {"{\"f:data\":{\"f:b\":{},\"f:a\":{}}}", false},      /* order */
        {"{\"f:m\":{\"f:k\":{},\".\":{}}}", false},           /* "." last */
        {"{\"f:m\":{\".\":{}}}", false},                      /* "." alone */
        {"{\"f:m\":{\".\":{\"f:z\":{}},\"f:k\":{}}}", false}, /* "." not {} */
        {"{\".\":{},\"f:a\":{}}", false},                     /* at the top */
        {"{\"k:{\\\"protocol\\\":\\\"TCP\\\",\\\"containerPort\\\":80}\":{}}", false},
        {"{\"k:{\\\"port\\\": 80}\":{}}", false}, /* spacing */
        {"{\"i:01\":{}}", false},
        {"{\"v:1e0\":{}}", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *j = parse(cases[i].text);
        fakeapi__fpset *s = NULL;
        bool canon = !cases[i].canonical;
        char err[256];
        cr_assert_eq(fakeapi__fpset_from_json_canon(j, &s, &canon, err, sizeof err), 0, "%s: %s",
                     cases[i].text, err);
        cr_assert_eq(canon, cases[i].canonical, "%s", cases[i].text);
        /* Whatever the spelling, the set is the one the plain decoder gives. */
        fakeapi__fpset *plain = NULL;
        cr_assert_eq(fakeapi__fpset_from_json(j, &plain, err, sizeof err), 0);
        cr_assert(fakeapi__fpset_equal(s, plain), "%s", cases[i].text);
        char *text = fakeapi__fpset_to_text(s);
        if (cases[i].canonical)
            cr_assert_str_eq(text, cases[i].text);
        else
            cr_assert_str_neq(text, cases[i].text);
        free(text);
        fakeapi__fpset_free(plain);
        fakeapi__fpset_free(s);
        json_decref(j);
    }
}

static int collect(const fakeapi__pe *path, size_t n, void *ud)
{
    fakeapi__strbuf *b = ud;
    if (b->len)
        fakeapi__strbuf_adds(b, " ");
    return fakeapi__fp_path_string(path, n, b);
}

Test(fieldpath, paths_print_as_upstream)
{
    fakeapi__fpset *s = set_of(
        "{\"f:data\":{\"f:a\":{}},\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"nginx\\\"}\":"
        "{"
        "\"f:image\":{}}},\"f:ports\":{\"k:{\\\"port\\\":80,\\\"protocol\\\":\\\"TCP\\\"}\":{}},"
        "\"f:finalizers\":{\"v:\\\"x\\\"\":{}},\"f:args\":{\"i:3\":{}}}}");
    fakeapi__strbuf b = {0};
    cr_assert_eq(fakeapi__fpset_iterate(s, collect, &b), 0);
    cr_assert_str_eq(b.data, ".data.a .spec.args[3] .spec.containers[name=\"nginx\"].image "
                             ".spec.finalizers[=\"x\"] .spec.ports[port=80,protocol=\"TCP\"]");
    fakeapi__strbuf_deinit(&b);
    fakeapi__fpset_free(s);
}

Test(fieldpath, configmap_from_the_documentation)
{
    /* The SSA page's ConfigMap: data keys and labels are map keys, members. */
    fakeapi__fptype t = builtin("k8s.io.api.core.v1.ConfigMap");
    assert_object_set(
        &t,
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"test-cm\","
        "\"namespace\":\"default\",\"labels\":{\"test-label\":\"test\"}},"
        "\"data\":{\"key\":\"some value\"}}",
        FAKEAPI__FP_STRICT,
        "{\"f:apiVersion\":{},\"f:data\":{\"f:key\":{}},\"f:kind\":{},\"f:metadata\":{"
        "\"f:labels\":{\"f:test-label\":{}},\"f:name\":{},\"f:namespace\":{}}}");
}

Test(fieldpath, deployment_lists_by_type)
{
    fakeapi__fptype t = builtin("k8s.io.api.apps.v1.Deployment");
    /* containers: a map list keyed by name; ports by containerPort and protocol
     * (protocol defaulted to TCP in the key); selector atomic; args atomic. */
    assert_object_set(
        &t,
        "{\"spec\":{\"replicas\":3,\"selector\":{\"matchLabels\":{\"app\":\"x\"}},\"template\":{"
        "\"spec\":{\"containers\":[{\"name\":\"nginx\",\"image\":\"nginx:1\",\"args\":[\"a\",\"b\"]"
        ","
        "\"ports\":[{\"containerPort\":80}]}]}}}}",
        FAKEAPI__FP_STRICT,
        "{\"f:spec\":{\"f:replicas\":{},\"f:selector\":{},\"f:template\":{\"f:spec\":{"
        "\"f:containers\":{\"k:{\\\"name\\\":\\\"nginx\\\"}\":{\".\":{},\"f:args\":{},\"f:image\":{"
        "},"
        "\"f:name\":{},\"f:ports\":{\"k:{\\\"containerPort\\\":80,\\\"protocol\\\":\\\"TCP\\\"}\":{"
        "\".\":{},\"f:containerPort\":{}}}}}}}}}");
}

Test(fieldpath, finalizers_are_a_set)
{
    fakeapi__fptype t = builtin("k8s.io.api.core.v1.ConfigMap");
    assert_object_set(
        &t, "{\"metadata\":{\"finalizers\":[\"b\",\"a\"]}}", FAKEAPI__FP_STRICT,
        "{\"f:metadata\":{\"f:finalizers\":{\"v:\\\"a\\\"\":{},\"v:\\\"b\\\"\":{}}}}");
    /* Empty and null values are members themselves. */
    assert_object_set(&t, "{\"data\":{},\"metadata\":{\"labels\":null}}", FAKEAPI__FP_STRICT,
                      "{\"f:data\":{},\"f:metadata\":{\"f:labels\":{}}}");
}

Test(fieldpath, strict_refuses_duplicates_and_missing_keys)
{
    fakeapi__fptype t = builtin("k8s.io.api.core.v1.Pod");
    const char *dup =
        "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"a\",\"image\":\"x\"}]}}";
    json_t *o = parse(dup);
    fakeapi__fpset *s = NULL;
    char err[512] = "";
    cr_assert_eq(fakeapi__fp_object_set(&t, o, FAKEAPI__FP_STRICT, &s, err, sizeof err), -1);
    cr_assert_str_eq(err, ".spec.containers: duplicate entries for key [name=\"a\"]");
    /* A live object may hold duplicates: the item is owned whole. */
    cr_assert_eq(fakeapi__fp_object_set(&t, o, 0, &s, err, sizeof err), 0, "%s", err);
    assert_text(s, "{\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"a\\\"}\":{}}}}");
    fakeapi__fpset_free(s);
    json_decref(o);

    o = parse("{\"spec\":{\"containers\":[{\"image\":\"x\"}]}}");
    s = NULL;
    cr_assert_eq(fakeapi__fp_object_set(&t, o, FAKEAPI__FP_STRICT, &s, err, sizeof err), -1);
    cr_assert_str_eq(err, ".spec.containers: element 0: associative list with keys has an element "
                          "that omits key field \"name\" (and doesn't have default value)");
    cr_assert_null(s);
    json_decref(o);
}

Test(fieldpath, deduced_maps_are_granular_lists_atomic)
{
    fakeapi__fptype t = fakeapi__fptype_deduced();
    assert_object_set(
        &t, "{\"spec\":{\"a\":1,\"b\":{\"c\":[1,2]}},\"l\":[{\"x\":1}]}", 0,
        "{\"f:l\":{},\"f:spec\":{\".\":{},\"f:a\":{},\"f:b\":{\".\":{},\"f:c\":{}}}}");
}

Test(fieldpath, crd_schema_list_and_map_types)
{
    json_t *schema = parse(
        "{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":{"
        "\"hosts\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"set\",\"items\":{\"type\":"
        "\"string\"}},"
        "\"ports\":{\"type\":\"array\",\"x-kubernetes-list-type\":\"map\","
        "\"x-kubernetes-list-map-keys\":[\"proto\",\"port\"],\"items\":{\"type\":\"object\","
        "\"properties\":{\"port\":{\"type\":\"integer\"},\"proto\":{\"type\":\"string\","
        "\"default\":\"TCP\"},\"name\":{\"type\":\"string\"}}}},"
        "\"args\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
        "\"sel\":{\"type\":\"object\",\"x-kubernetes-map-type\":\"atomic\",\"properties\":{\"a\":{"
        "\"type\":\"string\"}}},"
        "\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}},"
        "\"free\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}}}}");
    fakeapi__fptype t = fakeapi__fptype_crd(schema);
    assert_object_set(
        &t,
        "{\"apiVersion\":\"x/"
        "v1\",\"kind\":\"K\",\"metadata\":{\"name\":\"n\",\"labels\":{\"a\":\"b\"}},"
        "\"spec\":{\"hosts\":[\"h\"],\"ports\":[{\"port\":80,\"name\":\"web\"}],\"args\":[\"z\"],"
        "\"sel\":{\"a\":\"x\"},\"env\":{\"K\":\"V\"},\"free\":{\"q\":{\"r\":1}}}}",
        FAKEAPI__FP_STRICT,
        "{\"f:apiVersion\":{},\"f:kind\":{},\"f:metadata\":{\"f:labels\":{\"f:a\":{}},\"f:name\":{}"
        "},"
        "\"f:spec\":{\"f:args\":{},\"f:env\":{\"f:K\":{}},\"f:free\":{\"f:q\":{\".\":{},\"f:r\":{}}"
        "},"
        "\"f:hosts\":{\"v:\\\"h\\\"\":{}},\"f:ports\":{\"k:{\\\"port\\\":80,\\\"proto\\\":"
        "\\\"TCP\\\"}\":"
        "{\".\":{},\"f:name\":{},\"f:port\":{}}},\"f:sel\":{}}}");
    json_decref(schema);
}

Test(fieldpath, named_fields_become_members)
{
    fakeapi__fptype t = builtin("k8s.io.api.core.v1.ConfigMap");
    fakeapi__fpset *s =
        set_of("{\"f:data\":{\"f:a\":{}},\"f:metadata\":{\"f:labels\":{\"f:x\":{}}}}");
    fakeapi__fpset *n = fakeapi__fpset_named_members(s, &t);
    /* data, metadata and labels are declared fields; the map keys a and x are already members. */
    assert_text(n,
                "{\"f:data\":{\".\":{},\"f:a\":{}},\"f:metadata\":{\".\":{},\"f:labels\":{\".\":{},"
                "\"f:x\":{}}}}");
    fakeapi__fpset_free(n);
    fakeapi__fpset_free(s);
}

Test(fieldpath, atomic_maps_are_owned_whole)
{
    /* PodSpec.nodeSelector is +mapType=atomic; metadata.labels is granular. */
    fakeapi__fptype t = builtin("k8s.io.api.core.v1.Pod");
    assert_object_set(
        &t,
        "{\"metadata\":{\"labels\":{\"a\":\"1\"}},\"spec\":{\"nodeSelector\":{"
        "\"disk\":\"ssd\",\"zone\":\"a\"}}}",
        FAKEAPI__FP_STRICT,
        "{\"f:metadata\":{\"f:labels\":{\"f:a\":{}}},\"f:spec\":{\"f:nodeSelector\":{}}}");
}

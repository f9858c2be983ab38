/*
 * test_typed.c - values under a schema (fakeapi/typed.h): merge by list and
 * map type with upstream's list order, compare (added, modified, removed,
 * containers that appear or go), removal of a set's paths.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "typed.h"
#include "types.h"

static json_t *J(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    cr_assert_not_null(v, "%s: %s", text, e.text);
    return v;
}

static void assert_json(const json_t *v, const char *want)
{
    char *got = json_dumps(v, JSON_COMPACT);
    cr_assert_str_eq(got, want);
    free(got);
}

static void assert_set(const fakeapi__fpset *s, const char *want)
{
    char *got = fakeapi__fpset_to_text(s);
    cr_assert_str_eq(got, want);
    free(got);
}

static fakeapi__fptype pod(void)
{
    return fakeapi__fptype_builtin(fakeapi__type_find("k8s.io.api.core.v1.Pod"));
}

Test(typed, merge_by_type)
{
    fakeapi__fptype t = pod();
    struct {
        const char *lhs, *rhs, *want;
    } cases[] = {
        /* map list by name: items merged, the order upstream gives */
        {"{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"1\"},{\"name\":\"b\"}]}}",
         "{\"spec\":{\"containers\":[{\"name\":\"c\"},{\"name\":\"a\",\"image\":\"2\"}]}}",
         "{\"spec\":{\"containers\":[{\"name\":\"c\"},{\"name\":\"a\",\"image\":\"2\"},{\"name\":"
         "\"b\"}]}}"},
        /* atomic list replaced */
        {"{\"spec\":{\"containers\":[{\"name\":\"a\",\"args\":[\"x\",\"y\"]}]}}",
         "{\"spec\":{\"containers\":[{\"name\":\"a\",\"args\":[\"z\"]}]}}",
         "{\"spec\":{\"containers\":[{\"name\":\"a\",\"args\":[\"z\"]}]}}"},
        /* set merged by value */
        {"{\"metadata\":{\"finalizers\":[\"x\",\"y\"]}}",
         "{\"metadata\":{\"finalizers\":[\"z\",\"x\"]}}",
         "{\"metadata\":{\"finalizers\":[\"z\",\"x\",\"y\"]}}"},
        /* granular map merged, atomic map replaced, null clears */
        {"{\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"}},\"spec\":{\"nodeSelector\":{\"x\":"
         "\"1\"}}}",
         "{\"metadata\":{\"labels\":{\"b\":null,\"c\":\"3\"}},\"spec\":{\"nodeSelector\":{\"y\":"
         "\"2\"}}}",
         "{\"metadata\":{\"labels\":{\"a\":\"1\",\"c\":\"3\"}},\"spec\":{\"nodeSelector\":{\"y\":"
         "\"2\"}}}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *l = J(cases[i].lhs), *r = J(cases[i].rhs);
        json_t *m = fakeapi__typed_merge(&t, l, r);
        assert_json(m, cases[i].want);
        /* Inputs are untouched. */
        json_t *l2 = J(cases[i].lhs);
        cr_assert(json_equal(l, l2));
        json_decref(l2);
        json_decref(m);
        json_decref(l);
        json_decref(r);
    }
}

Test(typed, compare_records_leaves_and_containers)
{
    fakeapi__fptype t = pod();
    json_t *a =
        J("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":"
          "\"1\"},{\"name\":\"b\"}]}}");
    json_t *b =
        J("{\"metadata\":{\"name\":\"p\",\"labels\":{\"x\":\"1\"}},\"spec\":{\"containers\":[{"
          "\"name\":\"a\",\"image\":\"2\"}]}}");
    fakeapi__fpset *added = NULL, *modified = NULL, *removed = NULL;
    cr_assert_eq(fakeapi__typed_compare(&t, a, b, &added, &modified, &removed), 0);
    /* labels appeared (a map: its own path too); b's item went whole. */
    assert_set(added, "{\"f:metadata\":{\"f:labels\":{\".\":{},\"f:x\":{}}}}");
    assert_set(modified,
               "{\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"a\\\"}\":{\"f:image\":{}}}}}");
    assert_set(removed, "{\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"b\\\"}\":{\".\":{},"
                        "\"f:name\":{}}}}}");
    fakeapi__fpset_free(added);
    fakeapi__fpset_free(modified);
    fakeapi__fpset_free(removed);
    /* Equal objects: three empty sets. */
    cr_assert_eq(fakeapi__typed_compare(&t, a, a, &added, &modified, &removed), 0);
    cr_assert(fakeapi__fpset_empty(added) && fakeapi__fpset_empty(modified) &&
              fakeapi__fpset_empty(removed));
    fakeapi__fpset_free(added);
    fakeapi__fpset_free(modified);
    fakeapi__fpset_free(removed);
    json_decref(a);
    json_decref(b);
}

Test(typed, remove_takes_out_members_and_what_is_below)
{
    fakeapi__fptype t = pod();
    json_t *v =
        J("{\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"},\"finalizers\":[\"x\",\"y\"]},"
          "\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"1\"},{\"name\":\"b\"}]}}");
    json_t *fields =
        J("{\"f:metadata\":{\"f:labels\":{\"f:b\":{}},\"f:finalizers\":{\"v:\\\"x\\\"\":{}}},"
          "\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"a\\\"}\":{\"f:image\":{}},"
          "\"k:{\\\"name\\\":\\\"b\\\"}\":{}}}}");
    fakeapi__fpset *s = NULL;
    char err[128];
    cr_assert_eq(fakeapi__fpset_from_json(fields, &s, err, sizeof err), 0, "%s", err);
    fakeapi__typed_remove(&t, v, s);
    assert_json(v, "{\"metadata\":{\"labels\":{\"a\":\"1\"},\"finalizers\":[\"y\"]},\"spec\":{"
                   "\"containers\":[{\"name\":\"a\"}]}}");
    fakeapi__fpset_free(s);
    json_decref(fields);
    json_decref(v);
}

Test(typed, a_create_adds_no_implicit_containers)
{
    /* Created from nothing, as upstream compares against the empty Go object:
     * value structs (spec, template) and lists without omitempty (containers)
     * were "there"; maps with omitempty (labels) and list items appear. */
    fakeapi__fptype t =
        fakeapi__fptype_builtin(fakeapi__type_find("k8s.io.api.apps.v1.Deployment"));
    json_t *b =
        J("{\"metadata\":{\"labels\":{\"app\":\"x\"}},\"spec\":{\"replicas\":1,\"strategy\":{},"
          "\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\",\"ports\":[{"
          "\"containerPort\":80}]}]}}}}");
    fakeapi__fpset *added = NULL, *modified = NULL, *removed = NULL;
    cr_assert_eq(fakeapi__typed_compare(&t, NULL, b, &added, &modified, &removed), 0);
    assert_set(
        added,
        "{\"f:metadata\":{\"f:labels\":{\".\":{},\"f:app\":{}}},\"f:spec\":{\"f:replicas\":{},"
        "\"f:template\":{\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"c\\\"}\":{"
        "\".\":{},\"f:name\":{},\"f:ports\":{\".\":{},\"k:{\\\"containerPort\\\":80,"
        "\\\"protocol\\\":\\\"TCP\\\"}\":{\".\":{},\"f:containerPort\":{}}}}}}}}}");
    cr_assert(fakeapi__fpset_empty(modified) && fakeapi__fpset_empty(removed));
    fakeapi__fpset_free(added);
    fakeapi__fpset_free(modified);
    fakeapi__fpset_free(removed);
    json_decref(b);
}

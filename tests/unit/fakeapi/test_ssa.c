/*
 * test_ssa.c - server-side apply and field ownership (fakeapi/ssa.h) on
 * tables of cases after the Server-Side Apply documentation: lists of each
 * type, nested and atomic maps, conflicts (message and causes), removal,
 * force, shared ownership, before-first-apply, Update entries, resetting
 * managedFields, status scope, and kubectl's client-side-apply upgrade.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "ssa.h"
#include "types.h"

#define NOW "2026-12-03T08:00:00Z"
#define LATER "2026-12-03T09:00:00Z"

static json_t *J(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    cr_assert_not_null(v, "%s: %s", text, e.text);
    return v;
}

static fakeapi__ssa_opts opts_for(const char *msg, const char *apiv)
{
    fakeapi__ssa_opts o = {0};
    o.type = msg ? fakeapi__fptype_builtin(fakeapi__type_find(msg)) : fakeapi__fptype_deduced();
    o.api_version = apiv;
    o.now = NOW;
    return o;
}

static fakeapi__ssa_opts cm(void)
{
    return opts_for("k8s.io.api.core.v1.ConfigMap", "v1");
}

/* Apply cfg (text) over live (taken; may be NULL) as mgr; the result (asserted to succeed). */
static json_t *apply_ok(const fakeapi__ssa_opts *o, json_t *live, const char *cfg, const char *mgr,
                        bool force)
{
    json_t *c = J(cfg);
    json_t *out = NULL;
    bool changed = false;
    fakeapi__ssa_err err = {0};
    int rc = fakeapi__ssa_apply(o, live, c, mgr, force, &out, &changed, &err);
    cr_assert_eq(rc, 0, "apply %s as %s: %d %s", cfg, mgr, err.code, err.message);
    cr_assert_not_null(out);
    fakeapi__ssa_err_deinit(&err);
    json_decref(c);
    json_decref(live);
    return out;
}

/* Apply expected to fail; returns the error (caller deinits). live is borrowed. */
static fakeapi__ssa_err apply_fails(const fakeapi__ssa_opts *o, const json_t *live, const char *cfg,
                                    const char *mgr)
{
    json_t *c = J(cfg);
    json_t *out = NULL;
    bool changed = false;
    fakeapi__ssa_err err = {0};
    cr_assert_eq(fakeapi__ssa_apply(o, live, c, mgr, false, &out, &changed, &err), -1,
                 "apply %s as %s succeeded", cfg, mgr);
    cr_assert_null(out);
    json_decref(c);
    return err;
}

static const json_t *entry(const json_t *obj, const char *mgr, const char *op)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(json_object_get(obj, "metadata"), "managedFields"), i, e)
    {
        if (!strcmp(json_string_value(json_object_get(e, "manager")), mgr) &&
            !strcmp(json_string_value(json_object_get(e, "operation")), op))
            return e;
    }
    return NULL;
}

static void assert_fields(const json_t *obj, const char *mgr, const char *op, const char *want)
{
    const json_t *e = entry(obj, mgr, op);
    cr_assert_not_null(e, "no %s entry for %s in %s", op, mgr, json_dumps(obj, JSON_COMPACT));
    char *got = json_dumps(json_object_get(e, "fieldsV1"), JSON_COMPACT);
    cr_assert_str_eq(got, want, "%s %s", mgr, op);
    free(got);
}

static void assert_data(const json_t *obj, const char *want)
{
    char *got = json_dumps(json_object_get(obj, "data"), JSON_COMPACT | JSON_SORT_KEYS);
    cr_assert_str_eq(got, want);
    free(got);
}

static size_t entries(const json_t *obj)
{
    return json_array_size(json_object_get(json_object_get(obj, "metadata"), "managedFields"));
}

#define CM(data)                                                                                   \
    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"},\"data\":" data "}"

Test(ssa, apply_creates_and_records_the_entry)
{
    fakeapi__ssa_opts o = cm();
    json_t *obj = apply_ok(&o, NULL, CM("{\"a\":\"1\",\"b\":\"2\"}"), "alice", false);
    assert_data(obj, "{\"a\":\"1\",\"b\":\"2\"}");
    cr_assert_eq(entries(obj), 1);
    const json_t *e = entry(obj, "alice", "Apply");
    char *text = json_dumps(e, JSON_COMPACT);
    /* Upstream's field order; metadata.name and the type fields are not tracked. */
    cr_assert_str_eq(
        text, "{\"manager\":\"alice\",\"operation\":\"Apply\",\"apiVersion\":\"v1\",\"time\":"
              "\"" NOW "\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:data\":{\"f:a\":{},"
              "\"f:b\":{}}}}");
    free(text);
    json_decref(obj);
}

Test(ssa, a_dropped_field_is_removed)
{
    fakeapi__ssa_opts o = cm();
    json_t *obj = apply_ok(&o, NULL, CM("{\"a\":\"1\",\"b\":\"2\"}"), "alice", false);
    obj = apply_ok(&o, obj, CM("{\"a\":\"1\"}"), "alice", false);
    assert_data(obj, "{\"a\":\"1\"}");
    assert_fields(obj, "alice", "Apply", "{\"f:data\":{\"f:a\":{}}}");
    /* Dropping the whole map removes it. */
    obj = apply_ok(&o, obj,
                   "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"}}",
                   "alice", false);
    cr_assert_null(json_object_get(obj, "data"));
    cr_assert_eq(entries(obj), 0);
    json_decref(obj);
}

Test(ssa, equal_values_are_shared_and_survive_one_owner_leaving)
{
    fakeapi__ssa_opts o = cm();
    json_t *obj = apply_ok(&o, NULL, CM("{\"a\":\"x\"}"), "alice", false);
    obj = apply_ok(&o, obj, CM("{\"a\":\"x\"}"), "bob", false);
    assert_fields(obj, "alice", "Apply", "{\"f:data\":{\"f:a\":{}}}");
    assert_fields(obj, "bob", "Apply", "{\"f:data\":{\"f:a\":{}}}");
    /* Nothing changed: bob's new entry has no time. */
    cr_assert_null(json_object_get(entry(obj, "bob", "Apply"), "time"));
    /* alice stops sending it: bob still owns it, so it stays. */
    obj = apply_ok(&o, obj, CM("{\"z\":\"1\"}"), "alice", false);
    assert_data(obj, "{\"a\":\"x\",\"z\":\"1\"}");
    assert_fields(obj, "alice", "Apply", "{\"f:data\":{\"f:z\":{}}}");
    json_decref(obj);
}

Test(ssa, conflict_with_an_applier_then_force)
{
    fakeapi__ssa_opts o = cm();
    json_t *obj = apply_ok(&o, NULL, CM("{\"a\":\"x\",\"b\":\"x\"}"), "alice", false);
    fakeapi__ssa_err err = apply_fails(&o, obj, CM("{\"a\":\"y\"}"), "bob");
    cr_assert_eq(err.code, 409);
    cr_assert_str_eq(err.reason, "Conflict");
    cr_assert_str_eq(err.message, "Apply failed with 1 conflict: conflict with \"alice\": .data.a");
    char *causes = json_dumps(err.causes, JSON_COMPACT);
    cr_assert_str_eq(causes, "[{\"reason\":\"FieldManagerConflict\",\"message\":\"conflict with "
                             "\\\"alice\\\"\",\"field\":\".data.a\"}]");
    free(causes);
    fakeapi__ssa_err_deinit(&err);

    err = apply_fails(&o, obj, CM("{\"a\":\"y\",\"b\":\"y\"}"), "bob");
    cr_assert_str_eq(err.message,
                     "Apply failed with 2 conflicts: conflicts with \"alice\":\n- .data.a\n"
                     "- .data.b");
    cr_assert_eq(json_array_size(err.causes), 2);
    fakeapi__ssa_err_deinit(&err);

    obj = apply_ok(&o, obj, CM("{\"a\":\"y\"}"), "bob", true);
    assert_data(obj, "{\"a\":\"y\",\"b\":\"x\"}");
    assert_fields(obj, "alice", "Apply", "{\"f:data\":{\"f:b\":{}}}");
    assert_fields(obj, "bob", "Apply", "{\"f:data\":{\"f:a\":{}}}");
    json_decref(obj);
}

Test(ssa, conflict_with_an_updater_names_its_version)
{
    fakeapi__ssa_opts o = cm();
    json_t *obj = J(CM("{\"a\":\"x\"}"));
    cr_assert_eq(fakeapi__ssa_update(&o, NULL, obj, "alice"), 0);
    assert_fields(obj, "alice", "Update", "{\"f:data\":{\".\":{},\"f:a\":{}}}");
    fakeapi__ssa_err err = apply_fails(&o, obj, CM("{\"a\":\"y\"}"), "bob");
    cr_assert_str_eq(err.message,
                     "Apply failed with 1 conflict: conflict with \"alice\" using v1: .data.a");
    fakeapi__ssa_err_deinit(&err);
    json_decref(obj);
}

Test(ssa, update_moves_changed_fields_to_its_manager)
{
    fakeapi__ssa_opts o = cm();
    json_t *live = apply_ok(&o, NULL, CM("{\"a\":\"x\",\"b\":\"x\"}"), "alice", false);
    json_t *next = json_deep_copy(live);
    json_object_set_new(json_object_get(next, "data"), "a", json_string("edited"));
    o.now = LATER;
    cr_assert_eq(fakeapi__ssa_update(&o, live, next, "kubectl-edit"), 0);
    assert_fields(next, "alice", "Apply", "{\"f:data\":{\"f:b\":{}}}");
    assert_fields(next, "kubectl-edit", "Update", "{\"f:data\":{\"f:a\":{}}}");
    cr_assert_str_eq(
        json_string_value(json_object_get(entry(next, "kubectl-edit", "Update"), "time")), LATER);
    /* Apply entries sort before Update entries. */
    json_t *mf = json_object_get(json_object_get(next, "metadata"), "managedFields");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(mf, 0), "operation")),
                     "Apply");
    /* An update that changes nothing adds no entry. */
    json_t *again = json_deep_copy(next);
    cr_assert_eq(fakeapi__ssa_update(&o, next, again, "someone"), 0);
    cr_assert_null(entry(again, "someone", "Update"));
    cr_assert(json_equal(again, next));
    json_decref(again);
    json_decref(live);
    json_decref(next);
}

Test(ssa, managed_fields_reset_and_invalid)
{
    fakeapi__ssa_opts o = cm();
    json_t *live = apply_ok(&o, NULL, CM("{\"a\":\"x\"}"), "alice", false);
    /* [{}] clears them. */
    json_t *next = json_deep_copy(live);
    json_object_set_new(json_object_get(next, "metadata"), "managedFields", J("[{}]"));
    cr_assert_eq(fakeapi__ssa_update(&o, live, next, "tool"), 0);
    cr_assert_null(json_object_get(json_object_get(next, "metadata"), "managedFields"));
    json_decref(next);
    /* An invalid list is ignored: live's are kept. */
    next = json_deep_copy(live);
    json_object_set_new(json_object_get(next, "metadata"), "managedFields",
                        J("[{\"manager\":\"x\",\"operation\":\"Bogus\",\"apiVersion\":\"v1\"}]"));
    cr_assert_eq(fakeapi__ssa_update(&o, live, next, "tool"), 0);
    cr_assert(json_equal(next, live));
    json_decref(next);
    /* A valid list is taken as written. */
    next = json_deep_copy(live);
    json_object_set_new(
        json_object_get(next, "metadata"), "managedFields",
        J("[{\"manager\":\"carol\",\"operation\":\"Apply\",\"apiVersion\":\"v1\",\"fieldsType\":"
          "\"FieldsV1\",\"fieldsV1\":{\"f:data\":{\"f:a\":{}}}}]"));
    cr_assert_eq(fakeapi__ssa_update(&o, live, next, "tool"), 0);
    cr_assert_null(entry(next, "alice", "Apply"));
    assert_fields(next, "carol", "Apply", "{\"f:data\":{\"f:a\":{}}}");
    json_decref(next);
    json_decref(live);
}

/* The managedFields text of obj, compact. */
static char *mf_text(const json_t *obj)
{
    return json_dumps(json_object_get(json_object_get(obj, "metadata"), "managedFields"),
                      JSON_COMPACT);
}

/*
 * An update keeps the entries it does not change as they were written (the
 * same JSON, not just equal), takes its own entry's new time, and writes
 * anything stored in another spelling as it always writes it.
 */
Test(ssa, unchanged_entries_are_kept_and_others_written_again)
{
    fakeapi__ssa_opts o = opts_for("k8s.io.api.apps.v1.Deployment", "apps/v1");
    o.scope = FAKEAPI__SSA_STATUS_ONLY;
    o.subresource = "status";
    json_t *live =
        J("{\"metadata\":{\"name\":\"d\",\"managedFields\":["
          "{\"manager\":\"alice\",\"operation\":\"Update\",\"apiVersion\":\"apps/v1\",\"time\":"
          "\"2026-12-03T07:00:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:spec\":{\"f:"
          "replicas\":{}}}},"
          "{\"manager\":\"ctrl\",\"operation\":\"Update\",\"apiVersion\":\"apps/v1\",\"time\":"
          "\"2026-12-03T07:30:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:status\":{\"f:"
          "replicas\":{}}},\"subresource\":\"status\"}]},"
          "\"spec\":{\"replicas\":2},\"status\":{\"replicas\":1}}");
    json_t *next = json_deep_copy(live);
    json_object_set_new(json_object_get(next, "status"), "replicas", json_integer(2));
    cr_assert_eq(fakeapi__ssa_update(&o, live, next, "ctrl"), 0);
    const json_t *lmf = json_object_get(json_object_get(live, "metadata"), "managedFields");
    const json_t *nmf = json_object_get(json_object_get(next, "metadata"), "managedFields");
    /* alice's entry is the stored one; ctrl's keeps its fieldsV1 with the new time. */
    cr_assert_eq(json_array_get(nmf, 0), json_array_get(lmf, 0));
    cr_assert_eq(json_object_get(json_array_get(nmf, 1), "fieldsV1"),
                 json_object_get(json_array_get(lmf, 1), "fieldsV1"));
    char *text = mf_text(next);
    cr_assert_str_eq(
        text,
        "[{\"manager\":\"alice\",\"operation\":\"Update\",\"apiVersion\":\"apps/v1\",\"time\":"
        "\"2026-12-03T07:00:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:spec\":{\"f:"
        "replicas\":{}}}},"
        "{\"manager\":\"ctrl\",\"operation\":\"Update\",\"apiVersion\":\"apps/v1\",\"time\":"
        "\"" NOW "\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:status\":{\"f:"
        "replicas\":{}}},\"subresource\":\"status\"}]");
    free(text);
    json_decref(next);

    /* Stored in another order and spelling: written again as always. */
    json_t *odd =
        J("{\"metadata\":{\"name\":\"d\",\"managedFields\":["
          "{\"operation\":\"Update\",\"manager\":\"alice\",\"apiVersion\":\"apps/v1\",\"time\":"
          "\"2026-12-03T07:00:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:spec\":{\"f:"
          "replicas\":{}}}},"
          "{\"manager\":\"bob\",\"operation\":\"Update\",\"apiVersion\":\"apps/v1\",\"time\":"
          "\"2026-12-03T07:10:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:status\":{\"f:"
          "x\":{},\"f:b\":{\".\":{}}}},\"subresource\":\"status\"}]},"
          "\"spec\":{\"replicas\":2},\"status\":{\"replicas\":1,\"b\":{},\"x\":1}}");
    next = json_deep_copy(odd);
    json_object_set_new(json_object_get(next, "status"), "replicas", json_integer(3));
    cr_assert_eq(fakeapi__ssa_update(&o, odd, next, "ctrl"), 0);
    text = mf_text(next);
    cr_assert_str_eq(
        text,
        "[{\"manager\":\"alice\",\"operation\":\"Update\",\"apiVersion\":\"apps/v1\",\"time\":"
        "\"2026-12-03T07:00:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:spec\":{\"f:"
        "replicas\":{}}}},"
        "{\"manager\":\"bob\",\"operation\":\"Update\",\"apiVersion\":\"apps/v1\",\"time\":"
        "\"2026-12-03T07:10:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:status\":{\"f:"
        "b\":{},\"f:x\":{}}},\"subresource\":\"status\"},"
        "{\"manager\":\"ctrl\",\"operation\":\"Update\",\"apiVersion\":\"apps/v1\",\"time\":"
        "\"" NOW "\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:status\":{\"f:"
        "replicas\":{}}},\"subresource\":\"status\"}]");
    free(text);
    json_decref(next);
    json_decref(odd);

    /* Taking a field over and strip-meta change entries kept as written too. */
    json_t *other = J("{\"metadata\":{\"name\":\"d\",\"managedFields\":["
                      "{\"manager\":\"bob\",\"operation\":\"Update\",\"apiVersion\":\"apps/v1\","
                      "\"time\":\"2026-12-03T07:10:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{"
                      "\"f:metadata\":{\"f:name\":{}},\"f:spec\":{\"f:replicas\":{}}}},"
                      "{\"manager\":\"carol\",\"operation\":\"Update\",\"apiVersion\":\"apps/v1\","
                      "\"time\":\"2026-12-03T07:20:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{"
                      "\"f:status\":{\".\":{},\"f:replicas\":{}}},\"subresource\":\"status\"}]},"
                      "\"spec\":{\"replicas\":2},\"status\":{\"replicas\":1}}");
    next = json_deep_copy(other);
    json_object_set_new(json_object_get(next, "status"), "replicas", json_integer(4));
    cr_assert_eq(fakeapi__ssa_update(&o, other, next, "ctrl"), 0);
    text = mf_text(next);
    cr_assert_str_eq(text,
                     "[{\"manager\":\"bob\",\"operation\":\"Update\",\"apiVersion\":\"apps/v1\","
                     "\"time\":\"2026-12-03T07:10:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{"
                     "\"f:spec\":{\"f:replicas\":{}}}},"
                     "{\"manager\":\"carol\",\"operation\":\"Update\",\"apiVersion\":\"apps/v1\","
                     "\"time\":\"2026-12-03T07:20:00Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{"
                     "\"f:status\":{}},\"subresource\":\"status\"},"
                     "{\"manager\":\"ctrl\",\"operation\":\"Update\",\"apiVersion\":\"apps/v1\","
                     "\"time\":\"" NOW "\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:status\":{"
                     "\"f:replicas\":{}}},\"subresource\":\"status\"}]");
    free(text);
    json_decref(next);
    json_decref(other);
    json_decref(live);
}

Test(ssa, bad_configurations)
{
    fakeapi__ssa_opts o = cm();
    fakeapi__ssa_err err = apply_fails(
        &o, NULL, "{\"metadata\":{\"name\":\"c\",\"managedFields\":[{\"manager\":\"x\"}]}}", "a");
    cr_assert_eq(err.code, 400);
    cr_assert_str_eq(err.message, "metadata.managedFields must be nil");
    fakeapi__ssa_err_deinit(&err);

    fakeapi__ssa_opts p = opts_for("k8s.io.api.core.v1.Pod", "v1");
    err = apply_fails(&p, NULL, "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"a\"}]}}",
                      "a");
    cr_assert_eq(err.code, 400);
    cr_assert(err.typed);
    cr_assert_str_eq(err.message, ".spec.containers: duplicate entries for key [name=\"a\"]");
    fakeapi__ssa_err_deinit(&err);
}

Test(ssa, no_op_apply_changes_nothing)
{
    fakeapi__ssa_opts o = cm();
    json_t *obj = apply_ok(&o, NULL, CM("{\"a\":\"x\"}"), "alice", false);
    json_t *c = J(CM("{\"a\":\"x\"}"));
    json_t *out = NULL;
    bool changed = true;
    fakeapi__ssa_err err = {0};
    o.now = LATER;
    cr_assert_eq(fakeapi__ssa_apply(&o, obj, c, "alice", false, &out, &changed, &err), 0);
    cr_assert(!changed);
    cr_assert(json_equal(out, obj));
    json_decref(out);
    json_decref(c);
    json_decref(obj);
}

/* Lists by type, on a Pod. */
#define POD(spec)                                                                                  \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":" spec "}"

static void assert_json(const json_t *v, const char *want)
{
    char *got = json_dumps(v, JSON_COMPACT);
    cr_assert_str_eq(got, want);
    free(got);
}

Test(ssa, map_lists_merge_by_key)
{
    fakeapi__ssa_opts o = opts_for("k8s.io.api.core.v1.Pod", "v1");
    json_t *obj = apply_ok(&o, NULL, POD("{\"containers\":[{\"name\":\"a\",\"image\":\"1\"}]}"),
                           "alice", false);
    obj =
        apply_ok(&o, obj, POD("{\"containers\":[{\"name\":\"b\",\"image\":\"2\"}]}"), "bob", false);
    assert_json(json_object_get(json_object_get(obj, "spec"), "containers"),
                "[{\"name\":\"a\",\"image\":\"1\"},{\"name\":\"b\",\"image\":\"2\"}]");
    assert_fields(
        obj, "bob", "Apply",
        "{\"f:spec\":{\"f:containers\":{\"k:{\\\"name\\\":\\\"b\\\"}\":{\".\":{},\"f:image\":{},"
        "\"f:name\":{}}}}}");
    fakeapi__ssa_err err =
        apply_fails(&o, obj, POD("{\"containers\":[{\"name\":\"a\",\"image\":\"3\"}]}"), "bob");
    cr_assert_str_eq(err.message, "Apply failed with 1 conflict: conflict with \"alice\": "
                                  ".spec.containers[name=\"a\"].image");
    fakeapi__ssa_err_deinit(&err);
    /* bob drops his container: it goes; alice's stays. */
    obj = apply_ok(&o, obj, POD("{\"containers\":[]}"), "bob", false);
    assert_json(json_object_get(json_object_get(obj, "spec"), "containers"),
                "[{\"name\":\"a\",\"image\":\"1\"}]");
    cr_assert_null(entry(obj, "bob", "Apply"));
    json_decref(obj);
}

Test(ssa, map_list_order_follows_the_applier)
{
    fakeapi__ssa_opts o = opts_for("k8s.io.api.core.v1.Pod", "v1");
    json_t *obj = apply_ok(
        &o, NULL, POD("{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"}]}"),
        "alice", false);
    obj = apply_ok(&o, obj, POD("{\"containers\":[{\"name\":\"c\"},{\"name\":\"a\"}]}"), "bob",
                   false);
    assert_json(json_object_get(json_object_get(obj, "spec"), "containers"),
                "[{\"name\":\"b\"},{\"name\":\"c\"},{\"name\":\"a\"}]");
    json_decref(obj);
}

Test(ssa, atomic_lists_are_owned_whole)
{
    fakeapi__ssa_opts o = opts_for("k8s.io.api.core.v1.Pod", "v1");
    json_t *obj =
        apply_ok(&o, NULL, POD("{\"containers\":[{\"name\":\"a\",\"args\":[\"x\",\"y\"]}]}"),
                 "alice", false);
    fakeapi__ssa_err err =
        apply_fails(&o, obj, POD("{\"containers\":[{\"name\":\"a\",\"args\":[\"z\"]}]}"), "bob");
    cr_assert_str_eq(err.message, "Apply failed with 1 conflict: conflict with \"alice\": "
                                  ".spec.containers[name=\"a\"].args");
    fakeapi__ssa_err_deinit(&err);
    obj =
        apply_ok(&o, obj, POD("{\"containers\":[{\"name\":\"a\",\"args\":[\"z\"]}]}"), "bob", true);
    assert_json(
        json_object_get(
            json_array_get(json_object_get(json_object_get(obj, "spec"), "containers"), 0), "args"),
        "[\"z\"]");
    json_decref(obj);
}

Test(ssa, set_lists_merge_by_value)
{
    fakeapi__ssa_opts o = cm();
    json_t *obj = apply_ok(&o, NULL, "{\"metadata\":{\"name\":\"c\",\"finalizers\":[\"x\"]}}",
                           "alice", false);
    obj = apply_ok(&o, obj, "{\"metadata\":{\"name\":\"c\",\"finalizers\":[\"y\"]}}", "bob", false);
    assert_json(json_object_get(json_object_get(obj, "metadata"), "finalizers"), "[\"x\",\"y\"]");
    /* Pepr's way to remove its finalizer: apply an empty list. */
    obj = apply_ok(&o, obj, "{\"metadata\":{\"name\":\"c\",\"finalizers\":[]}}", "alice", true);
    assert_json(json_object_get(json_object_get(obj, "metadata"), "finalizers"), "[\"y\"]");
    json_decref(obj);
}

Test(ssa, nested_maps_granular_and_atomic)
{
    json_t *schema =
        J("{\"type\":\"object\",\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":{"
          "\"free\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true},"
          "\"sel\":{\"type\":\"object\",\"x-kubernetes-map-type\":\"atomic\","
          "\"additionalProperties\":{\"type\":\"string\"}}}}}}");
    fakeapi__ssa_opts o = {0};
    o.type = fakeapi__fptype_crd(schema);
    o.api_version = "x.io/v1";
    o.now = NOW;
    json_t *obj =
        apply_ok(&o, NULL,
                 "{\"apiVersion\":\"x.io/v1\",\"kind\":\"K\",\"metadata\":{\"name\":\"k\"},"
                 "\"spec\":{\"free\":{\"x\":{\"y\":1,\"z\":2}},\"sel\":{\"a\":\"1\"}}}",
                 "alice", false);
    obj = apply_ok(&o, obj, "{\"spec\":{\"free\":{\"x\":{\"w\":3}}}}", "bob", false);
    assert_json(json_object_get(json_object_get(json_object_get(obj, "spec"), "free"), "x"),
                "{\"y\":1,\"z\":2,\"w\":3}");
    fakeapi__ssa_err err = apply_fails(&o, obj, "{\"spec\":{\"sel\":{\"b\":\"2\"}}}", "bob");
    cr_assert_str_eq(err.message,
                     "Apply failed with 1 conflict: conflict with \"alice\": .spec.sel");
    fakeapi__ssa_err_deinit(&err);
    obj = apply_ok(&o, obj, "{\"spec\":{\"sel\":{\"b\":\"2\"}}}", "bob", true);
    assert_json(json_object_get(json_object_get(obj, "spec"), "sel"), "{\"b\":\"2\"}");
    json_decref(obj);
    json_decref(schema);
}

Test(ssa, before_first_apply_owns_the_existing_fields)
{
    fakeapi__ssa_opts o = cm();
    json_t *live = J(CM("{\"a\":\"x\"}"));
    fakeapi__ssa_err err = apply_fails(&o, live, CM("{\"a\":\"y\"}"), "alice");
    cr_assert_str_eq(err.message,
                     "Apply failed with 1 conflict: conflict with \"before-first-apply\" "
                     "using v1: .data.a");
    fakeapi__ssa_err_deinit(&err);
    json_t *obj = apply_ok(&o, live, CM("{\"a\":\"x\",\"b\":\"1\"}"), "alice", false);
    assert_fields(obj, "before-first-apply", "Update", "{\"f:data\":{\".\":{},\"f:a\":{}}}");
    assert_fields(obj, "alice", "Apply", "{\"f:data\":{\"f:a\":{},\"f:b\":{}}}");
    json_decref(obj);
}

Test(ssa, status_scope)
{
    fakeapi__ssa_opts o = opts_for("k8s.io.api.apps.v1.Deployment", "apps/v1");
    o.scope = FAKEAPI__SSA_STATUS_ONLY;
    o.subresource = "status";
    json_t *live = J("{\"metadata\":{\"name\":\"d\"},\"spec\":{\"replicas\":1}}");
    json_t *next =
        J("{\"metadata\":{\"name\":\"d\"},\"spec\":{\"replicas\":2},\"status\":{\"replicas\":1}}");
    cr_assert_eq(fakeapi__ssa_update(&o, live, next, "ctrl"), 0);
    const json_t *e = entry(next, "ctrl", "Update");
    cr_assert_str_eq(json_string_value(json_object_get(e, "subresource")), "status");
    assert_fields(next, "ctrl", "Update", "{\"f:status\":{\"f:replicas\":{}}}");
    json_decref(live);
    json_decref(next);

    o.scope = FAKEAPI__SSA_NO_STATUS;
    o.subresource = NULL;
    json_t *obj = apply_ok(&o, NULL,
                           "{\"metadata\":{\"name\":\"d\"},\"spec\":{\"replicas\":2},"
                           "\"status\":{\"replicas\":9}}",
                           "alice", false);
    assert_fields(obj, "alice", "Apply", "{\"f:spec\":{\"f:replicas\":{}}}");
    json_decref(obj);
}

Test(ssa, kubectl_upgrades_client_side_apply)
{
    fakeapi__ssa_opts o = cm();
    /* What client-side `kubectl apply` leaves: the annotation and an Update entry. */
    json_t *live = J(
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\","
        "\"annotations\":{\"kubectl.kubernetes.io/last-applied-configuration\":"
        "\"{\\\"apiVersion\\\":\\\"v1\\\",\\\"data\\\":{\\\"a\\\":\\\"x\\\"},\\\"kind\\\":"
        "\\\"ConfigMap\\\",\\\"metadata\\\":{\\\"name\\\":\\\"c\\\"}}\"}},\"data\":{\"a\":\"x\"}}");
    cr_assert_eq(fakeapi__ssa_update(&o, NULL, live, "kubectl-client-side-apply"), 0);
    /* Another manager is refused, kubectl is not. */
    fakeapi__ssa_err err = apply_fails(&o, live, CM("{\"a\":\"y\"}"), "other");
    cr_assert_eq(err.code, 409);
    fakeapi__ssa_err_deinit(&err);
    json_t *obj = apply_ok(&o, live, CM("{\"a\":\"y\"}"), "kubectl", false);
    assert_data(obj, "{\"a\":\"y\"}");
    assert_fields(obj, "kubectl", "Apply", "{\"f:data\":{\"f:a\":{}}}");
    /* The annotation now holds what was applied. */
    const char *la = json_string_value(
        json_object_get(json_object_get(json_object_get(obj, "metadata"), "annotations"),
                        "kubectl.kubernetes.io/last-applied-configuration"));
    cr_assert_str_eq(la, "{\"apiVersion\":\"v1\",\"data\":{\"a\":\"y\"},\"kind\":\"ConfigMap\","
                         "\"metadata\":{\"name\":\"c\"}}");
    json_decref(obj);
}

Test(ssa, manager_names)
{
    char b[200];
    fakeapi__ssa_manager_name("helm", "kubectl/v1.32", b, sizeof b);
    cr_assert_str_eq(b, "helm");
    fakeapi__ssa_manager_name(NULL, "kubectl-edit/v1.32.0 (linux/amd64) kubernetes/abc", b,
                              sizeof b);
    cr_assert_str_eq(b, "kubectl-edit");
    fakeapi__ssa_manager_name("", "Python-urllib", b, sizeof b);
    cr_assert_str_eq(b, "Python-urllib");
    char ua[300];
    memset(ua, 'x', sizeof ua - 1);
    ua[sizeof ua - 1] = 0;
    fakeapi__ssa_manager_name(NULL, ua, b, sizeof b);
    cr_assert_eq(strlen(b), 128);
}

Test(ssa, old_update_entries_are_merged_into_ancient_changes)
{
    fakeapi__ssa_opts o = cm();
    json_t *obj = J(CM("{}"));
    char mgr[32], when[32], key[16];
    cr_assert_eq(fakeapi__ssa_update(&o, NULL, obj, "creator"), 0);
    for (int i = 0; i < 12; i++) {
        json_t *next = json_deep_copy(obj);
        snprintf(key, sizeof key, "k%02d", i);
        json_object_set_new(json_object_get(next, "data"), key, json_string("v"));
        snprintf(mgr, sizeof mgr, "m%02d", i);
        snprintf(when, sizeof when, "2026-12-03T08:%02d:00Z", i + 1);
        o.now = when;
        cr_assert_eq(fakeapi__ssa_update(&o, obj, next, mgr), 0);
        json_decref(obj);
        obj = next;
    }
    /* creator and m00..m11 are 13 updaters: the oldest (creator) becomes the
     * bucket and the next three are merged into it. */
    cr_assert_eq(entries(obj), 10);
    const json_t *b = entry(obj, "ancient-changes", "Update");
    cr_assert_not_null(b);
    cr_assert_str_eq(json_string_value(json_object_get(b, "apiVersion")), "v1");
    cr_assert_str_eq(json_string_value(json_object_get(b, "time")), "2026-12-03T08:03:00Z");
    assert_fields(obj, "ancient-changes", "Update",
                  "{\"f:data\":{\".\":{},\"f:k00\":{},\"f:k01\":{},\"f:k02\":{}}}");
    cr_assert_null(entry(obj, "creator", "Update"));
    cr_assert_null(entry(obj, "m02", "Update"));
    cr_assert_not_null(entry(obj, "m03", "Update"));
    cr_assert_not_null(entry(obj, "m11", "Update"));
    json_decref(obj);
}

Test(ssa, nulls_in_a_configuration_clear_and_are_owned)
{
    fakeapi__ssa_opts o = cm();
    json_t *obj = apply_ok(&o, NULL, CM("{\"a\":null,\"b\":\"1\"}"), "alice", false);
    assert_data(obj, "{\"b\":\"1\"}");
    assert_fields(obj, "alice", "Apply", "{\"f:data\":{\"f:a\":{},\"f:b\":{}}}");
    /* Applying it again changes nothing. */
    json_t *c = J(CM("{\"a\":null,\"b\":\"1\"}"));
    json_t *out = NULL;
    bool changed = true;
    fakeapi__ssa_err err = {0};
    cr_assert_eq(fakeapi__ssa_apply(&o, obj, c, "alice", false, &out, &changed, &err), 0);
    cr_assert(!changed);
    json_decref(out);
    json_decref(c);
    json_decref(obj);
}

Test(ssa, conflicts_name_the_subresource)
{
    fakeapi__ssa_opts o = opts_for("k8s.io.api.apps.v1.Deployment", "apps/v1");
    o.scope = FAKEAPI__SSA_STATUS_ONLY;
    o.subresource = "status";
    json_t *live = J("{\"metadata\":{\"name\":\"d\"},\"spec\":{\"replicas\":1}}");
    json_t *next =
        J("{\"metadata\":{\"name\":\"d\"},\"spec\":{\"replicas\":1},\"status\":{\"replicas\":1}}");
    cr_assert_eq(fakeapi__ssa_update(&o, live, next, "ctrl"), 0);
    fakeapi__ssa_err err = apply_fails(&o, next, "{\"status\":{\"replicas\":2}}", "other");
    cr_assert_str_eq(err.message, "Apply failed with 1 conflict: conflict with \"ctrl\" with "
                                  "subresource \"status\" using apps/v1: .status.replicas");
    fakeapi__ssa_err_deinit(&err);
    /* The main resource's appliers do not touch status, so they never conflict there. */
    o.scope = FAKEAPI__SSA_NO_STATUS;
    o.subresource = NULL;
    json_t *obj = apply_ok(&o, json_incref(next),
                           "{\"metadata\":{\"name\":\"d\"},\"spec\":{\"replicas\":3},"
                           "\"status\":{\"replicas\":7}}",
                           "owner", false);
    assert_fields(obj, "owner", "Apply", "{\"f:spec\":{\"f:replicas\":{}}}");
    assert_fields(obj, "ctrl", "Update", "{\"f:status\":{\"f:replicas\":{}}}");
    json_decref(obj);
    json_decref(live);
    json_decref(next);
}

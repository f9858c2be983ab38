/*
 * test_controllerutil.c - owner and controller references (with
 * controller-runtime's errors), finalizers, merge-patch diffs and the
 * typed accessors of ctrl/object.h; no server.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "ctrl/controllerutil.h"
#include "ctrl/object.h"

static json_t *obj(const char *av, const char *kind, const char *ns, const char *name,
                   const char *uid)
{
    json_t *o = json_pack("{s:s,s:s,s:{s:s,s:s}}", "apiVersion", av, "kind", kind, "metadata",
                          "name", name, "uid", uid);
    if (ns)
        json_object_set_new(json_object_get(o, "metadata"), "namespace", json_string(ns));
    return o;
}

static json_t *refs(json_t *o)
{
    return json_object_get(json_object_get(o, "metadata"), "ownerReferences");
}

Test(owner, controller_reference_set_and_replaced)
{
    json_t *owner = obj("example.com/v1", "PodSet", "default", "web", "u-1");
    json_t *pod = obj("v1", "Pod", "default", "web-1", "p-1");
    ctrl_error err = {0};
    cr_assert_eq(ctrl_set_controller_reference(owner, pod, &err), 0, "%s", err.message);
    json_t *r = json_array_get(refs(pod), 0);
    cr_assert_str_eq(json_string_value(json_object_get(r, "apiVersion")), "example.com/v1");
    cr_assert_str_eq(json_string_value(json_object_get(r, "kind")), "PodSet");
    cr_assert_str_eq(json_string_value(json_object_get(r, "name")), "web");
    cr_assert_str_eq(json_string_value(json_object_get(r, "uid")), "u-1");
    cr_assert(json_is_true(json_object_get(r, "controller")));
    cr_assert(json_is_true(json_object_get(r, "blockOwnerDeletion")));
    cr_assert(ctrl_has_controller_reference(pod));
    cr_assert(ctrl_has_owner_reference(pod, owner));
    cr_assert_eq(ctrl_get_controller_of(pod), r);

    /* The same owner at another version and uid: one entry, replaced. */
    json_t *again = obj("example.com/v2", "PodSet", "default", "web", "u-2");
    cr_assert_eq(ctrl_set_controller_reference(again, pod, &err), 0, "%s", err.message);
    cr_assert_eq(json_array_size(refs(pod)), 1);
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(refs(pod), 0), "uid")), "u-2");
    json_decref(again);
    json_decref(owner);
    json_decref(pod);
    ctrl_error_deinit(&err);
}

Test(owner, already_owned_by_another_controller)
{
    json_t *a = obj("example.com/v1", "PodSet", "default", "web", "u-1");
    json_t *b = obj("example.com/v1", "PodSet", "default", "api", "u-2");
    json_t *pod = obj("v1", "Pod", "default", "web-1", "p-1");
    ctrl_error err = {0};
    cr_assert_eq(ctrl_set_controller_reference(a, pod, &err), 0);
    json_t *before = json_deep_copy(pod);
    cr_assert_eq(ctrl_set_controller_reference(b, pod, &err), CTRL_ERR_ALREADY_OWNED);
    cr_assert_str_eq(err.message,
                     "Object default/web-1 is already owned by another PodSet controller web");
    cr_assert(json_equal(before, pod), "the object is left as it was");
    /* A plain owner reference is still allowed beside the controller. */
    cr_assert_eq(ctrl_set_owner_reference(b, pod, &err), 0, "%s", err.message);
    cr_assert_eq(json_array_size(refs(pod)), 2);
    json_t *r = json_array_get(refs(pod), 1);
    cr_assert_null(json_object_get(r, "controller"));
    cr_assert_null(json_object_get(r, "blockOwnerDeletion"));
    cr_assert_str_eq(ctrl_strerror(CTRL_ERR_ALREADY_OWNED), "already owned by another controller");
    json_decref(before);
    json_decref(a);
    json_decref(b);
    json_decref(pod);
    ctrl_error_deinit(&err);
}

Test(owner, namespaces)
{
    json_t *owner = obj("example.com/v1", "PodSet", "team-a", "web", "u-1");
    json_t *pod = obj("v1", "Pod", "team-b", "web-1", "p-1");
    json_t *node = obj("v1", "Node", NULL, "n1", "n-1");
    json_t *cluster_owner = obj("example.com/v1", "Fleet", NULL, "all", "f-1");
    ctrl_error err = {0};
    cr_assert_eq(ctrl_set_controller_reference(owner, pod, &err), CTRL_ERR_ARG);
    cr_assert_str_eq(err.message, "cross-namespace owner references are disallowed, owner's "
                                  "namespace team-a, obj's namespace team-b");
    cr_assert_null(refs(pod));
    cr_assert_eq(ctrl_set_owner_reference(owner, node, &err), CTRL_ERR_ARG);
    cr_assert_str_eq(err.message, "cluster-scoped resource must not have a namespace-scoped "
                                  "owner, owner's namespace team-a");
    /* A cluster-scoped owner may own namespaced and cluster-scoped objects. */
    cr_assert_eq(ctrl_set_controller_reference(cluster_owner, pod, &err), 0, "%s", err.message);
    cr_assert_eq(ctrl_set_owner_reference(cluster_owner, node, &err), 0, "%s", err.message);
    /* An owner that is not from the server (no uid) is refused. */
    json_t *bare = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                             "metadata", "name", "x");
    cr_assert_eq(ctrl_set_owner_reference(bare, node, &err), CTRL_ERR_ARG);
    json_decref(bare);
    json_decref(owner);
    json_decref(pod);
    json_decref(node);
    json_decref(cluster_owner);
    ctrl_error_deinit(&err);
}

Test(owner, remove)
{
    json_t *owner = obj("apps/v1", "Deployment", "default", "web", "u-1");
    json_t *other = obj("apps/v1", "Deployment", "default", "api", "u-2");
    json_t *rs = obj("apps/v1", "ReplicaSet", "default", "web-1", "r-1");
    ctrl_error err = {0};
    cr_assert_eq(ctrl_remove_owner_reference(owner, rs, &err), CTRL_ERR_NOT_FOUND);
    cr_assert_eq(ctrl_set_owner_reference(owner, rs, NULL), 0);
    cr_assert_eq(ctrl_set_owner_reference(other, rs, NULL), 0);
    cr_assert_eq(ctrl_remove_owner_reference(owner, rs, &err), 0);
    cr_assert_not(ctrl_has_owner_reference(rs, owner));
    cr_assert(ctrl_has_owner_reference(rs, other));
    cr_assert_not(ctrl_has_controller_reference(rs));
    json_decref(owner);
    json_decref(other);
    json_decref(rs);
    ctrl_error_deinit(&err);
}

Test(finalizer, add_remove_contains)
{
    json_t *o = json_pack("{s:{s:s}}", "metadata", "name", "x");
    cr_assert_not(ctrl_contains_finalizer(o, "a/b"));
    cr_assert(ctrl_add_finalizer(o, "a/b"));
    cr_assert_not(ctrl_add_finalizer(o, "a/b"), "adding twice changes nothing");
    cr_assert(ctrl_add_finalizer(o, "c/d"));
    cr_assert(ctrl_contains_finalizer(o, "a/b"));
    json_t *list = json_object_get(json_object_get(o, "metadata"), "finalizers");
    cr_assert_eq(json_array_size(list), 2);
    cr_assert_str_eq(json_string_value(json_array_get(list, 1)), "c/d");
    /* Duplicates written by someone else all go. */
    json_array_append_new(list, json_string("a/b"));
    cr_assert(ctrl_remove_finalizer(o, "a/b"));
    cr_assert_not(ctrl_remove_finalizer(o, "a/b"));
    cr_assert_eq(json_array_size(list), 1);
    cr_assert_not(ctrl_contains_finalizer(o, "a/b"));
    cr_assert_not(ctrl_add_finalizer(NULL, "x"));
    json_decref(o);
}

Test(merge, diff)
{
    json_t *a = json_pack("{s:{s:i,s:s,s:[i,i]},s:s,s:{s:s}}", "spec", "replicas", 3, "image",
                          "x", "ports", 1, 2, "keep", "k", "gone", "a", "b");
    json_t *b = json_pack("{s:{s:i,s:s,s:[i]},s:s,s:i}", "spec", "replicas", 5, "image", "x",
                          "ports", 1, "keep", "k", "new", 1);
    json_t *d = ctrl_merge_patch_diff(a, b);
    json_t *want = json_pack("{s:{s:i,s:[i]},s:n,s:i}", "spec", "replicas", 5, "ports", 1, "gone",
                             "new", 1);
    cr_assert(json_equal(d, want), "%s", json_dumps(d, JSON_SORT_KEYS));
    json_decref(d);
    d = ctrl_merge_patch_diff(a, a);
    cr_assert_eq(json_object_size(d), 0);
    json_decref(d);
    json_decref(want);
    json_decref(a);
    json_decref(b);
}

Test(object, accessors)
{
    json_t *o = json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:s,s:i,s:{s:s}},s:{s:i,s:f,s:b}}",
                          "apiVersion", "apps/v1", "kind", "Deployment", "metadata", "name", "web",
                          "namespace", "default", "uid", "u", "resourceVersion", "7", "generation",
                          3, "labels", "app", "web", "spec", "replicas", 2, "ratio", 4.0, "paused",
                          1);
    cr_assert_str_eq(ctrl_obj_name(o), "web");
    cr_assert_str_eq(ctrl_obj_namespace(o), "default");
    cr_assert_str_eq(ctrl_obj_uid(o), "u");
    cr_assert_str_eq(ctrl_obj_resource_version(o), "7");
    cr_assert_eq(ctrl_obj_generation(o), 3);
    cr_assert_str_eq(ctrl_obj_api_version(o), "apps/v1");
    cr_assert_str_eq(ctrl_obj_kind(o), "Deployment");
    cr_assert_str_eq(ctrl_obj_label(o, "app"), "web");
    cr_assert_null(ctrl_obj_annotation(o, "app"));
    cr_assert_eq(ctrl_obj_get_int(o, "spec.replicas", -1), 2);
    cr_assert_eq(ctrl_obj_get_int(o, "spec.ratio", -1), 4);
    cr_assert_eq(ctrl_obj_get_int(o, "spec.missing", -1), -1);
    cr_assert_eq(ctrl_obj_get_int(o, "metadata.name", -1), -1, "a string is not an integer");
    cr_assert(ctrl_obj_get_bool(o, "spec.paused", false));
    cr_assert_null(ctrl_obj_get(o, "spec..replicas"));
    cr_assert_null(ctrl_obj_get(o, "spec.replicas.deeper"));

    cr_assert_eq(ctrl_obj_set(o, "spec.template.metadata.labels", json_pack("{s:s}", "a", "b")), 0);
    cr_assert_str_eq(ctrl_obj_get_string(o, "spec.template.metadata.labels.a"), "b");
    cr_assert_eq(ctrl_obj_set(o, "spec.replicas.x", json_integer(1)), CTRL_ERR_ARG,
                 "through an integer");
    cr_assert_eq(ctrl_obj_get_int(o, "spec.replicas", -1), 2);
    cr_assert_eq(ctrl_obj_set(o, "", json_integer(1)), CTRL_ERR_ARG);
    cr_assert(ctrl_obj_remove(o, "spec.paused"));
    cr_assert_not(ctrl_obj_remove(o, "spec.paused"));

    cr_assert_eq(ctrl_obj_set_annotation(o, "example.com/owner", "me"), 0);
    cr_assert_str_eq(ctrl_obj_annotation(o, "example.com/owner"), "me");
    cr_assert_eq(ctrl_obj_set_label(o, "app", NULL), 0);
    cr_assert_null(ctrl_obj_label(o, "app"));
    json_t *bare = json_object();
    cr_assert_eq(ctrl_obj_set_label(bare, "tier", "db"), 0);
    cr_assert_str_eq(ctrl_obj_label(bare, "tier"), "db");
    cr_assert_eq(ctrl_obj_generation(bare), 0);
    json_decref(bare);
    json_decref(o);
}

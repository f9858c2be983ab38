/*
 * Integration tests for ctrl/client.h against an in-process fakeapi on
 * port 0: every verb, pagination, selectors, status, discovery of a CRD
 * created at run time, Status errors kept whole, and watches.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctrl/client.h"
#include "fakeapi/fakeapi.h"

static fakeapi_server *api;
static ctrl_client *client;

static void start(void)
{
    cr_assert_eq(fakeapi_start(&(fakeapi_options){0}, &api), 0);
    ctrl_config *cfg = NULL;
    ctrl_error err = {0};
    cr_assert_eq(ctrl_config_from_url(fakeapi_url(api), &cfg, &err), 0, "%s", err.message);
    cr_assert_eq(
        ctrl_client_new(cfg, &(ctrl_client_options){.user_agent = "test-client"}, &client, &err), 0,
        "%s", err.message);
    ctrl_config_free(cfg);
}

static void stop(void)
{
    ctrl_client_free(client);
    client = NULL;
    fakeapi_stop(api);
    api = NULL;
}

TestSuite(client, .init = start, .fini = stop, .timeout = 60);

static json_t *configmap(const char *ns, const char *name, const char *value)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:s}}", "apiVersion", "v1", "kind",
                     "ConfigMap", "metadata", "namespace", ns, "name", name, "labels", "app",
                     "demo", "data", "key", value);
}

static const char *str_at(json_t *obj, const char *a, const char *b)
{
    json_t *v = json_object_get(obj, a);
    return json_string_value(b ? json_object_get(v, b) : v);
}

Test(client, create_get_update_delete)
{
    ctrl_error err = {0};
    json_t *cm = configmap("default", "one", "v1"), *created = NULL, *got = NULL;
    cr_assert_eq(ctrl_client_create(client, cm, NULL, &created, &err), 0, "%s", err.message);
    cr_assert_not_null(str_at(created, "metadata", "uid"));
    cr_assert_not_null(str_at(created, "metadata", "resourceVersion"));
    json_decref(cm);

    cr_assert_eq(ctrl_client_get(client, "v1", "ConfigMap", "default", "one", &got, &err), 0, "%s",
                 err.message);
    cr_assert_str_eq(str_at(got, "data", "key"), "v1");
    cr_assert_str_eq(str_at(got, "metadata", "uid"), str_at(created, "metadata", "uid"));

    json_object_set_new(json_object_get(got, "data"), "key", json_string("v2"));
    json_t *updated = NULL;
    cr_assert_eq(ctrl_client_update(client, got, NULL, &updated, &err), 0, "%s", err.message);
    cr_assert_str_eq(str_at(updated, "data", "key"), "v2");
    cr_assert_str_neq(str_at(updated, "metadata", "resourceVersion"),
                      str_at(got, "metadata", "resourceVersion"));

    /* The resource-name form reaches the same object. */
    json_t *again = NULL;
    cr_assert_eq(ctrl_client_get(client, "v1", "configmaps", "default", "one", &again, &err), 0);
    cr_assert_str_eq(str_at(again, "data", "key"), "v2");
    json_decref(again);

    cr_assert_eq(ctrl_client_delete(client, "v1", "ConfigMap", "default", "one", NULL, NULL, &err),
                 0, "%s", err.message);
    json_t *gone = NULL;
    int rc = ctrl_client_get(client, "v1", "ConfigMap", "default", "one", &gone, &err);
    cr_assert(ctrl_err_is_not_found(rc), "rc %d", rc);
    cr_assert_null(gone);
    json_decref(created);
    json_decref(got);
    json_decref(updated);
    ctrl_error_deinit(&err);
}

Test(client, not_found_status_kept_whole)
{
    ctrl_error err = {0};
    json_t *out = NULL;
    int rc = ctrl_client_get(client, "v1", "ConfigMap", "default", "missing", &out, &err);
    cr_assert_eq(rc, CTRL_ERR_NOT_FOUND);
    cr_assert_eq(err.code, CTRL_ERR_NOT_FOUND);
    cr_assert_eq(err.http_status, 404);
    cr_assert_str_eq(err.reason, "NotFound");
    cr_assert_str_eq(err.message, "configmaps \"missing\" not found");
    cr_assert_not_null(err.status);
    cr_assert_str_eq(str_at(err.status, "kind", NULL), "Status");
    cr_assert_str_eq(str_at(err.status, "status", NULL), "Failure");
    cr_assert_eq(json_integer_value(json_object_get(err.status, "code")), 404);
    cr_assert_not_null(err.details);
    cr_assert_str_eq(str_at(err.details, "name", NULL), "missing");
    cr_assert(ctrl_err_is_api(rc));
    cr_assert_not(ctrl_err_is_transport(rc));
    ctrl_error_deinit(&err);
}

Test(client, already_exists_and_conflict)
{
    ctrl_error err = {0};
    json_t *cm = configmap("default", "dup", "a"), *first = NULL;
    cr_assert_eq(ctrl_client_create(client, cm, NULL, &first, &err), 0, "%s", err.message);
    int rc = ctrl_client_create(client, cm, NULL, NULL, &err);
    cr_assert(ctrl_err_is_already_exists(rc), "rc %d", rc);
    cr_assert_eq(err.http_status, 409);
    cr_assert_str_eq(err.reason, "AlreadyExists");

    /* Two updates from the same stale copy: the second is a 409 Conflict. */
    json_t *a = json_deep_copy(first), *b = json_deep_copy(first);
    json_object_set_new(json_object_get(a, "data"), "key", json_string("from-a"));
    json_object_set_new(json_object_get(b, "data"), "key", json_string("from-b"));
    cr_assert_eq(ctrl_client_update(client, a, NULL, NULL, &err), 0, "%s", err.message);
    rc = ctrl_client_update(client, b, NULL, NULL, &err);
    cr_assert(ctrl_err_is_conflict(rc), "rc %d", rc);
    cr_assert_eq(err.http_status, 409);
    cr_assert_str_eq(err.reason, "Conflict");
    cr_assert(strstr(err.message, "the object has been modified"), "%s", err.message);
    cr_assert_eq(json_integer_value(json_object_get(err.status, "code")), 409);
    json_decref(a);
    json_decref(b);
    json_decref(cm);
    json_decref(first);
    ctrl_error_deinit(&err);
}

Test(client, invalid_with_causes)
{
    ctrl_error err = {0};
    json_t *cm = configmap("default", "Not_A_Valid_Name", "a");
    int rc = ctrl_client_create(client, cm, NULL, NULL, &err);
    cr_assert(ctrl_err_is_invalid(rc), "rc %d %s", rc, err.message);
    cr_assert_eq(err.http_status, 422);
    cr_assert_str_eq(err.reason, "Invalid");
    cr_assert_not_null(err.causes);
    cr_assert_geq(json_array_size(err.causes), 1);
    json_t *cause = json_array_get(err.causes, 0);
    cr_assert_str_eq(str_at(cause, "field", NULL), "metadata.name");
    cr_assert_not_null(str_at(cause, "reason", NULL));
    /* The causes are the Status's own. */
    cr_assert_eq(err.causes, json_object_get(json_object_get(err.status, "details"), "causes"));
    json_decref(cm);
    ctrl_error_deinit(&err);
}

Test(client, argument_errors)
{
    ctrl_error err = {0};
    json_t *out = NULL;
    cr_assert_eq(ctrl_client_get(client, "v1", "ConfigMap", NULL, "x", &out, &err), CTRL_ERR_ARG);
    cr_assert_eq(ctrl_client_get(client, "v1", "ConfigMap", "default", "a/b", &out, &err),
                 CTRL_ERR_ARG);
    cr_assert_eq(ctrl_client_get(client, "", "ConfigMap", "default", "x", &out, &err),
                 CTRL_ERR_ARG);
    int rc = ctrl_client_get(client, "v1", "NoSuchKind", "default", "x", &out, &err);
    cr_assert(ctrl_err_is_no_match(rc), "rc %d", rc);
    rc = ctrl_client_get(client, "nosuch.example.com/v1", "Thing", "default", "x", &out, &err);
    cr_assert(ctrl_err_is_no_match(rc), "rc %d", rc);
    cr_assert_null(out);
    ctrl_error_deinit(&err);
}

Test(client, cluster_scoped_namespace)
{
    ctrl_error err = {0};
    json_t *ns = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
                           "metadata", "name", "team-x");
    cr_assert_eq(ctrl_client_create(client, ns, NULL, NULL, &err), 0, "%s", err.message);
    json_t *got = NULL;
    cr_assert_eq(ctrl_client_get(client, "v1", "Namespace", NULL, "team-x", &got, &err), 0, "%s",
                 err.message);
    cr_assert_str_eq(str_at(got, "metadata", "name"), "team-x");
    ctrl_resource_info info;
    cr_assert_eq(ctrl_client_resource_for(client, "v1", "Namespace", &info, &err), 0);
    cr_assert_not(info.namespaced);
    cr_assert_str_eq(info.resource, "namespaces");
    json_decref(ns);
    json_decref(got);
    ctrl_error_deinit(&err);
}

Test(client, list_follows_pages_to_the_end)
{
    ctrl_error err = {0};
    for (int i = 0; i < 25; i++) {
        char name[32];
        snprintf(name, sizeof name, "cm-%02d", i);
        json_t *cm = configmap("default", name, "x");
        cr_assert_eq(ctrl_client_create(client, cm, NULL, NULL, &err), 0, "%s", err.message);
        json_decref(cm);
    }
    json_t *list = NULL;
    ctrl_list_options lo = {.limit = 10, .label_selector = "app=demo"};
    cr_assert_eq(ctrl_client_list(client, "v1", "ConfigMap", "default", &lo, &list, &err), 0, "%s",
                 err.message);
    json_t *items = json_object_get(list, "items");
    cr_assert_eq(json_array_size(items), 25);
    cr_assert_str_eq(str_at(list, "kind", NULL), "ConfigMapList");
    cr_assert_null(json_object_get(json_object_get(list, "metadata"), "continue"));
    cr_assert_not_null(str_at(list, "metadata", "resourceVersion"));
    for (size_t i = 0; i < 25; i++) {
        char name[32];
        snprintf(name, sizeof name, "cm-%02zu", i);
        json_t *it = json_array_get(items, i);
        cr_assert_str_eq(str_at(it, "metadata", "name"), name);
        cr_assert_str_eq(str_at(it, "kind", NULL), "ConfigMap");
        cr_assert_str_eq(str_at(it, "apiVersion", NULL), "v1");
    }
    json_decref(list);

    /* One page only: 10 items and the token for the next. */
    lo.single_page = true;
    cr_assert_eq(ctrl_client_list(client, "v1", "ConfigMap", "default", &lo, &list, &err), 0);
    cr_assert_eq(json_array_size(json_object_get(list, "items")), 10);
    const char *token = str_at(list, "metadata", "continue");
    cr_assert_not_null(token);
    ctrl_list_options next = {
        .limit = 10, .label_selector = "app=demo", .continue_token = token, .single_page = true};
    json_t *page2 = NULL;
    cr_assert_eq(ctrl_client_list(client, "v1", "ConfigMap", "default", &next, &page2, &err), 0,
                 "%s", err.message);
    cr_assert_str_eq(str_at(json_array_get(json_object_get(page2, "items"), 0), "metadata", "name"),
                     "cm-10");
    json_decref(page2);
    json_decref(list);

    /* Selectors: a label that matches nothing, a field selector on the name. */
    ctrl_list_options none = {.label_selector = "app=other"};
    cr_assert_eq(ctrl_client_list(client, "v1", "ConfigMap", "default", &none, &list, &err), 0);
    cr_assert_eq(json_array_size(json_object_get(list, "items")), 0);
    json_decref(list);
    ctrl_list_options byname = {.field_selector = "metadata.name=cm-07"};
    cr_assert_eq(ctrl_client_list(client, "v1", "ConfigMap", NULL, &byname, &list, &err), 0);
    cr_assert_eq(json_array_size(json_object_get(list, "items")), 1);
    json_decref(list);
    ctrl_list_options bad = {.label_selector = "a in (b"};
    int rc = ctrl_client_list(client, "v1", "ConfigMap", NULL, &bad, &list, &err);
    cr_assert(ctrl_err_is_bad_request(rc), "rc %d", rc);
    ctrl_error_deinit(&err);
}

Test(client, patches)
{
    ctrl_error err = {0};
    json_t *cm = configmap("default", "p", "a");
    cr_assert_eq(ctrl_client_create(client, cm, NULL, NULL, &err), 0, "%s", err.message);
    json_decref(cm);

    json_t *out = NULL;
    json_t *merge = json_pack("{s:{s:s, s:n}}", "data", "extra", "1", "key");
    cr_assert_eq(ctrl_client_patch(client, "v1", "ConfigMap", "default", "p", CTRL_PATCH_MERGE,
                                   merge, NULL, &out, &err),
                 0, "%s", err.message);
    cr_assert_str_eq(str_at(out, "data", "extra"), "1");
    cr_assert_null(str_at(out, "data", "key"));
    json_decref(out);
    json_decref(merge);

    json_t *jp = json_pack("[{s:s, s:s, s:s}]", "op", "add", "path", "/data/json", "value", "2");
    cr_assert_eq(ctrl_client_patch(client, "v1", "ConfigMap", "default", "p", CTRL_PATCH_JSON, jp,
                                   NULL, &out, &err),
                 0, "%s", err.message);
    cr_assert_str_eq(str_at(out, "data", "json"), "2");
    json_decref(out);
    json_decref(jp);

    json_t *sm = json_pack("{s:{s:{s:s}}}", "metadata", "labels", "tier", "web");
    cr_assert_eq(ctrl_client_patch(client, "v1", "ConfigMap", "default", "p", CTRL_PATCH_STRATEGIC,
                                   sm, NULL, &out, &err),
                 0, "%s", err.message);
    cr_assert_str_eq(str_at(json_object_get(out, "metadata"), "labels", "tier"), "web");
    cr_assert_str_eq(str_at(json_object_get(out, "metadata"), "labels", "app"), "demo");
    json_decref(out);
    json_decref(sm);

    /* A JSON patch whose test fails is the server's error, kept. */
    json_t *bad = json_pack("[{s:s, s:s, s:s}]", "op", "test", "path", "/data/json", "value", "9");
    int rc = ctrl_client_patch(client, "v1", "ConfigMap", "default", "p", CTRL_PATCH_JSON, bad,
                               NULL, &out, &err);
    cr_assert(ctrl_err_is_api(rc), "rc %d", rc);
    cr_assert_gt(err.http_status, 399);
    json_decref(bad);
    /* Wrong shapes are caught before sending. */
    json_t *arr = json_array();
    cr_assert_eq(ctrl_client_patch(client, "v1", "ConfigMap", "default", "p", CTRL_PATCH_MERGE, arr,
                                   NULL, &out, &err),
                 CTRL_ERR_ARG);
    json_decref(arr);
    ctrl_error_deinit(&err);
}

static json_t *deployment(const char *name)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:i, s:{s:{s:s}}, s:{s:{s:{s:s}}, "
                     "s:{s:[{s:s, s:s}]}}}}",
                     "apiVersion", "apps/v1", "kind", "Deployment", "metadata", "namespace",
                     "default", "name", name, "spec", "replicas", 1, "selector", "matchLabels",
                     "app", name, "template", "metadata", "labels", "app", name, "spec",
                     "containers", "name", "c", "image", "nginx");
}

Test(client, status_update_and_patch)
{
    ctrl_error err = {0};
    json_t *d = deployment("web"), *created = NULL;
    cr_assert_eq(ctrl_client_create(client, d, NULL, &created, &err), 0, "%s", err.message);
    json_decref(d);
    ctrl_resource_info info;
    cr_assert_eq(ctrl_client_resource_for(client, "apps/v1", "Deployment", &info, &err), 0);
    cr_assert(info.has_status);
    cr_assert(info.namespaced);

    json_object_set_new(created, "status", json_pack("{s:i}", "replicas", 3));
    json_t *out = NULL;
    cr_assert_eq(ctrl_client_update_status(client, created, NULL, &out, &err), 0, "%s",
                 err.message);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(out, "status"), "replicas")),
                 3);
    json_decref(out);

    json_t *sp = json_pack("{s:{s:i}}", "status", "readyReplicas", 2);
    cr_assert_eq(ctrl_client_patch_status(client, "apps/v1", "Deployment", "default", "web",
                                          CTRL_PATCH_MERGE, sp, NULL, &out, &err),
                 0, "%s", err.message);
    json_t *st = json_object_get(out, "status");
    cr_assert_eq(json_integer_value(json_object_get(st, "readyReplicas")), 2);
    cr_assert_eq(json_integer_value(json_object_get(st, "replicas")), 3);
    json_decref(out);
    json_decref(sp);

    /* A main-resource patch leaves status alone. */
    json_t *mp = json_pack("{s:{s:i}, s:{s:i}}", "spec", "replicas", 4, "status", "replicas", 9);
    cr_assert_eq(ctrl_client_patch(client, "apps/v1", "Deployment", "default", "web",
                                   CTRL_PATCH_MERGE, mp, NULL, &out, &err),
                 0, "%s", err.message);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(out, "spec"), "replicas")), 4);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(out, "status"), "replicas")),
                 3);
    json_decref(out);
    json_decref(mp);
    json_decref(created);
    ctrl_error_deinit(&err);
}

Test(client, delete_preconditions_propagation_and_all_of)
{
    ctrl_error err = {0};
    json_t *cm = configmap("default", "pre", "a"), *created = NULL;
    cr_assert_eq(ctrl_client_create(client, cm, NULL, &created, &err), 0, "%s", err.message);
    json_decref(cm);
    ctrl_delete_options wrong = {.precondition_uid = "not-the-uid"};
    int rc = ctrl_client_delete(client, "v1", "ConfigMap", "default", "pre", &wrong, NULL, &err);
    cr_assert(ctrl_err_is_conflict(rc), "rc %d", rc);
    cr_assert_eq(err.http_status, 409);
    ctrl_delete_options right = {.precondition_uid = str_at(created, "metadata", "uid"),
                                 .precondition_resource_version =
                                     str_at(created, "metadata", "resourceVersion"),
                                 .propagation = CTRL_PROPAGATION_BACKGROUND};
    json_t *answer = NULL;
    cr_assert_eq(
        ctrl_client_delete(client, "v1", "ConfigMap", "default", "pre", &right, &answer, &err), 0,
        "%s", err.message);
    cr_assert_not_null(answer);
    json_decref(answer);
    json_decref(created);
    json_t *got = NULL;
    cr_assert(ctrl_err_is_not_found(
        ctrl_client_get(client, "v1", "ConfigMap", "default", "pre", &got, &err)));

    /* Foreground on an object with a finalizer: it stays, with a deletionTimestamp. */
    json_t *held = configmap("default", "held", "a");
    json_object_set_new(json_object_get(held, "metadata"), "finalizers",
                        json_pack("[s]", "example.com/hold"));
    cr_assert_eq(ctrl_client_create(client, held, NULL, NULL, &err), 0, "%s", err.message);
    json_decref(held);
    ctrl_delete_options fg = {.propagation = CTRL_PROPAGATION_FOREGROUND};
    cr_assert_eq(ctrl_client_delete(client, "v1", "ConfigMap", "default", "held", &fg, NULL, &err),
                 0, "%s", err.message);
    cr_assert_eq(ctrl_client_get(client, "v1", "ConfigMap", "default", "held", &got, &err), 0);
    cr_assert_not_null(str_at(got, "metadata", "deletionTimestamp"));
    json_decref(got);

    /* delete_all_of with a selector. */
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "gone-%d", i);
        json_t *o = configmap("default", name, "x");
        json_object_set_new(json_object_get(json_object_get(o, "metadata"), "labels"), "batch",
                            json_string("b1"));
        cr_assert_eq(ctrl_client_create(client, o, NULL, NULL, &err), 0, "%s", err.message);
        json_decref(o);
    }
    ctrl_list_options sel = {.label_selector = "batch=b1"};
    cr_assert_eq(
        ctrl_client_delete_all_of(client, "v1", "ConfigMap", "default", &sel, NULL, NULL, &err), 0,
        "%s", err.message);
    json_t *list = NULL;
    cr_assert_eq(ctrl_client_list(client, "v1", "ConfigMap", "default", &sel, &list, &err), 0);
    cr_assert_eq(json_array_size(json_object_get(list, "items")), 0);
    json_decref(list);
    ctrl_list_options demo = {.label_selector = "app=demo"};
    cr_assert_eq(ctrl_client_list(client, "v1", "ConfigMap", "default", &demo, &list, &err), 0);
    cr_assert_eq(json_array_size(json_object_get(list, "items")), 1); /* "held" */
    json_decref(list);
    cr_assert_eq(ctrl_client_delete_all_of(client, "v1", "ConfigMap", NULL, &sel, NULL, NULL, &err),
                 CTRL_ERR_ARG);
    ctrl_error_deinit(&err);
}

static json_t *widget_crd(void)
{
    return json_loads(
        "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
        "\"metadata\":{\"name\":\"widgets.example.com\"},"
        "\"spec\":{\"group\":\"example.com\",\"scope\":\"Namespaced\","
        "\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\",\"kind\":\"Widget\","
        "\"listKind\":\"WidgetList\"},"
        "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,"
        "\"subresources\":{\"status\":{}},"
        "\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","
        "\"x-kubernetes-preserve-unknown-fields\":true}}}]}}",
        0, NULL);
}

Test(client, discovers_a_crd_created_at_run_time)
{
    ctrl_error err = {0};
    json_t *out = NULL;
    int rc = ctrl_client_get(client, "example.com/v1", "Widget", "default", "w", &out, &err);
    cr_assert(ctrl_err_is_no_match(rc), "rc %d", rc);

    json_t *crd = widget_crd();
    cr_assert_not_null(crd);
    cr_assert_eq(ctrl_client_create(client, crd, NULL, NULL, &err), 0, "%s", err.message);
    json_decref(crd);

    json_t *w =
        json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:i}}", "apiVersion", "example.com/v1", "kind",
                  "Widget", "metadata", "namespace", "default", "name", "w", "spec", "size", 3);
    /* The CRD may take a moment to be served; the miss re-reads discovery each time. */
    for (int i = 0; i < 100; i++) {
        rc = ctrl_client_create(client, w, NULL, NULL, &err);
        if (!ctrl_err_is_no_match(rc))
            break;
        usleep(20000);
    }
    cr_assert_eq(rc, 0, "rc %d %s", rc, err.message);
    json_decref(w);
    rc = ctrl_client_get(client, "example.com/v1", "Widget", "default", "w", &out, &err);
    cr_assert_eq(rc, 0, "rc %d %s", rc, err.message);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(out, "spec"), "size")), 3);
    json_decref(out);
    ctrl_resource_info info;
    cr_assert_eq(ctrl_client_resource_for(client, "example.com/v1", "Widget", &info, &err), 0);
    cr_assert_str_eq(info.resource, "widgets");
    cr_assert_str_eq(info.group, "example.com");
    cr_assert(info.has_status);
    cr_assert_eq(ctrl_client_resource_for(client, "example.com/v1", "widget", &info, &err), 0);
    cr_assert_str_eq(info.kind, "Widget");

    /* Invalidate: the next use reads discovery again and still works. */
    ctrl_client_discovery_invalidate(client);
    cr_assert_eq(ctrl_client_get(client, "example.com/v1", "Widget", "default", "w", &out, &err),
                 0);
    json_decref(out);
    ctrl_error_deinit(&err);
}

Test(client, raw_request_and_child_client)
{
    ctrl_error err = {0};
    json_t *v = NULL;
    cr_assert_eq(ctrl_client_request(client, "GET", "/version", NULL, NULL, &v, &err), 0, "%s",
                 err.message);
    cr_assert_not_null(str_at(v, "gitVersion", NULL));
    json_decref(v);
    ctrl_client *child = NULL;
    cr_assert_eq(ctrl_client_new_for(client, "my-controller", &child, &err), 0);
    cr_assert_str_eq(ctrl_client_user_agent(child), "my-controller");
    cr_assert_str_eq(ctrl_client_user_agent(client), "test-client");
    /* The child outlives its parent: shared parts are reference-counted. */
    ctrl_client_free(client);
    client = NULL;
    json_t *cm = configmap("default", "from-child", "a");
    cr_assert_eq(ctrl_client_create(child, cm, NULL, NULL, &err), 0, "%s", err.message);
    json_decref(cm);
    ctrl_client_free(child);
    ctrl_error_deinit(&err);
}

/* ---- watch ---- */

typedef struct recorder {
    pthread_mutex_t mu;
    char types[16][16];
    char names[16][64];
    int n;
    int stop_after_deleted;
} recorder;

static int record(const ctrl_watch_event *ev, void *user)
{
    recorder *r = user;
    pthread_mutex_lock(&r->mu);
    if (r->n < 16) {
        snprintf(r->types[r->n], sizeof r->types[0], "%s", ev->type_name);
        const char *name =
            json_string_value(json_object_get(json_object_get(ev->object, "metadata"), "name"));
        snprintf(r->names[r->n], sizeof r->names[0], "%s", name ? name : "");
        r->n++;
    }
    int stop = r->stop_after_deleted && ev->type == CTRL_WATCH_DELETED;
    pthread_mutex_unlock(&r->mu);
    return stop;
}

typedef struct watch_run {
    ctrl_watch *w;
    ctrl_watch_options opts;
    recorder rec;
    int rc;
    ctrl_error err;
    pthread_t th;
} watch_run;

static void *watch_thread(void *arg)
{
    watch_run *r = arg;
    r->rc = ctrl_client_watch(client, "v1", "ConfigMap", "default", &r->opts, r->w, record, &r->rec,
                              &r->err);
    return NULL;
}

static int count(recorder *r)
{
    pthread_mutex_lock(&r->mu);
    int n = r->n;
    pthread_mutex_unlock(&r->mu);
    return n;
}

static void wait_count(recorder *r, int n)
{
    for (int i = 0; i < 500 && count(r) < n; i++)
        usleep(10000);
}

Test(client, watch_added_modified_deleted)
{
    ctrl_error err = {0};
    json_t *list = NULL;
    cr_assert_eq(ctrl_client_list(client, "v1", "ConfigMap", "default", NULL, &list, &err), 0);
    watch_run r = {.opts = {.timeout_seconds = 30,
                            .resource_version = str_at(list, "metadata", "resourceVersion"),
                            .field_selector = "metadata.name=watched"},
                   .rec = {.mu = PTHREAD_MUTEX_INITIALIZER, .stop_after_deleted = 1}};
    cr_assert_eq(pthread_create(&r.th, NULL, watch_thread, &r), 0);
    usleep(200000); /* let the watch start */

    json_t *cm = configmap("default", "watched", "a"), *created = NULL;
    cr_assert_eq(ctrl_client_create(client, cm, NULL, &created, &err), 0, "%s", err.message);
    wait_count(&r.rec, 1);
    json_object_set_new(json_object_get(created, "data"), "key", json_string("b"));
    cr_assert_eq(ctrl_client_update(client, created, NULL, NULL, &err), 0, "%s", err.message);
    wait_count(&r.rec, 2);
    cr_assert_eq(
        ctrl_client_delete(client, "v1", "ConfigMap", "default", "watched", NULL, NULL, &err), 0);
    pthread_join(r.th, NULL);
    cr_assert_eq(r.rc, 0, "rc %d %s", r.rc, r.err.message);
    cr_assert_eq(r.rec.n, 3);
    cr_assert_str_eq(r.rec.types[0], "ADDED");
    cr_assert_str_eq(r.rec.types[1], "MODIFIED");
    cr_assert_str_eq(r.rec.types[2], "DELETED");
    for (int i = 0; i < 3; i++)
        cr_assert_str_eq(r.rec.names[i], "watched");
    json_decref(cm);
    json_decref(created);
    json_decref(list);
    ctrl_error_deinit(&r.err);
    ctrl_error_deinit(&err);
}

Test(client, watch_stopped_from_another_thread)
{
    watch_run r = {.opts = {.allow_bookmarks = true}, .rec = {.mu = PTHREAD_MUTEX_INITIALIZER}};
    cr_assert_eq(ctrl_watch_new(&r.w), 0);
    /* Existing objects come first as ADDED when no resourceVersion is given. */
    ctrl_error err = {0};
    json_t *cm = configmap("default", "pre-existing", "a");
    cr_assert_eq(ctrl_client_create(client, cm, NULL, NULL, &err), 0, "%s", err.message);
    json_decref(cm);
    cr_assert_eq(pthread_create(&r.th, NULL, watch_thread, &r), 0);
    wait_count(&r.rec, 1);
    cr_assert_str_eq(r.rec.types[0], "ADDED");
    cr_assert_str_eq(r.rec.names[0], "pre-existing");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ctrl_watch_stop(r.w);
    pthread_join(r.th, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    cr_assert_eq(r.rc, CTRL_ERR_CANCELLED, "rc %d", r.rc);
    /* Prompt, not at a timeout: generous for a loaded sanitizer run. */
    cr_assert_lt(secs, 5.0, "stop took %.3f s", secs);
    cr_assert(ctrl_watch_stopped(r.w));
    /* A stopped switch ends later watches at once. */
    cr_assert_eq(
        ctrl_client_watch(client, "v1", "ConfigMap", "default", NULL, r.w, record, &r.rec, NULL),
        CTRL_ERR_CANCELLED);
    ctrl_watch_free(r.w);
    ctrl_error_deinit(&r.err);
    ctrl_error_deinit(&err);
}

Test(client, watch_ends_with_timeout_seconds)
{
    recorder rec = {.mu = PTHREAD_MUTEX_INITIALIZER};
    ctrl_watch_options o = {.timeout_seconds = 1, .resource_version = "1"};
    ctrl_error err = {0};
    int rc = ctrl_client_watch(client, "v1", "ConfigMap", "default", &o, NULL, record, &rec, &err);
    cr_assert(rc == 0 || ctrl_err_is_gone(rc), "rc %d %s", rc, err.message);
    ctrl_error_deinit(&err);
}

/* A reader (a manager's cache) answers gets and lists for the kinds it
 * holds; "not mine" goes to the server. */
static int fake_get(void *ud, const char *av, const char *kind, const char *ns, const char *name,
                    json_t **out)
{
    (void)ud, (void)av, (void)ns;
    if (strcmp(kind, "ConfigMap"))
        return 1;
    if (strcmp(name, "cached"))
        return CTRL_ERR_NOT_FOUND;
    *out = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap", "metadata",
                     "name", "cached");
    return 0;
}

static int fake_list(void *ud, const char *av, const char *kind, const char *ns, const char *sel,
                     json_t **items)
{
    (void)ud, (void)av, (void)ns, (void)sel;
    if (strcmp(kind, "ConfigMap"))
        return 1;
    *items = json_pack("[{s:{s:s}}]", "metadata", "name", "cached");
    return 0;
}

Test(client, reader_answers_for_the_kinds_it_holds)
{
    ctrl_client_set_reader(client, &(ctrl_reader){.get = fake_get, .list = fake_list});
    json_t *obj = NULL;
    ctrl_error err = {0};
    cr_assert_eq(ctrl_client_get(client, "v1", "ConfigMap", "default", "cached", &obj, &err), 0);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(obj, "metadata"), "name")),
                     "cached");
    json_decref(obj);
    int rc = ctrl_client_get(client, "v1", "ConfigMap", "default", "other", &obj, &err);
    cr_assert(ctrl_err_is_not_found(rc), "a miss in the cache is NotFound");
    json_t *list = NULL;
    cr_assert_eq(ctrl_client_list(client, "v1", "ConfigMap", "default", NULL, &list, &err), 0);
    cr_assert_str_eq(json_string_value(json_object_get(list, "kind")), "ConfigMapList");
    cr_assert_eq(json_array_size(json_object_get(list, "items")), 1);
    json_decref(list);
    /* Kinds it does not hold go to the server: namespaces exist there. */
    cr_assert_eq(ctrl_client_get(client, "v1", "Namespace", NULL, "default", &obj, &err), 0);
    json_decref(obj);
    ctrl_client_set_reader(client, NULL);
    rc = ctrl_client_get(client, "v1", "ConfigMap", "default", "cached", &obj, &err);
    cr_assert(ctrl_err_is_not_found(rc), "without the reader the server answers (nothing there)");
    ctrl_error_deinit(&err);
}

/* One object shared by every read-only get of the fake reader. */
static json_t *shared_cm;

static int fake_get_shared(void *ud, const char *av, const char *kind, const char *ns,
                           const char *name, json_t **out)
{
    (void)ud, (void)av, (void)ns;
    if (strcmp(kind, "ConfigMap"))
        return 1;
    if (strcmp(name, "cached"))
        return CTRL_ERR_NOT_FOUND;
    *out = json_incref(shared_cm);
    return 0;
}

/* Read-only gets take the reader's shared object; a reader without
 * get_shared answers them with copies, and kinds it does not hold (or no
 * reader) go to the server. */
Test(client, shared_gets)
{
    shared_cm = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                          "metadata", "name", "cached");
    ctrl_client_set_reader(
        client, &(ctrl_reader){.get = fake_get, .list = fake_list, .get_shared = fake_get_shared});
    json_t *a = NULL, *b = NULL;
    ctrl_error err = {0};
    cr_assert_eq(ctrl_client_get_shared(client, "v1", "ConfigMap", "default", "cached", &a, &err),
                 0);
    cr_assert_eq(a, shared_cm);
    cr_assert_eq(ctrl_client_get(client, "v1", "ConfigMap", "default", "cached", &b, &err), 0);
    cr_assert_neq(b, shared_cm, "an ordinary get is a copy of the caller's own");
    cr_assert(json_equal(a, b));
    json_decref(a);
    json_decref(b);
    int rc = ctrl_client_get_shared(client, "v1", "ConfigMap", "default", "other", &a, &err);
    cr_assert(ctrl_err_is_not_found(rc));
    cr_assert_eq(ctrl_client_get_shared(client, "v1", "Namespace", NULL, "default", &a, &err), 0);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(a, "metadata"), "name")),
                     "default", "from the server");
    json_decref(a);
    ctrl_client_set_reader(client, &(ctrl_reader){.get = fake_get, .list = fake_list});
    cr_assert_eq(ctrl_client_get_shared(client, "v1", "ConfigMap", "default", "cached", &a, &err),
                 0);
    cr_assert_neq(a, shared_cm, "no get_shared: get answers");
    json_decref(a);
    ctrl_client_set_reader(client, NULL);
    rc = ctrl_client_get_shared(client, "v1", "ConfigMap", "default", "cached", &a, &err);
    cr_assert(ctrl_err_is_not_found(rc), "without the reader the server answers (nothing there)");
    cr_assert_eq(ctrl_client_get_shared(client, "v1", "Namespace", NULL, "default", NULL, &err),
                 CTRL_ERR_ARG);
    json_decref(shared_cm);
    ctrl_error_deinit(&err);
}

/* A client of its own to srv (the suite's client is left alone). */
static ctrl_client *client_for(fakeapi_server *srv)
{
    ctrl_config *cfg = NULL;
    ctrl_client *c = NULL;
    ctrl_error err = {0};
    cr_assert_eq(ctrl_config_from_url(fakeapi_url(srv), &cfg, &err), 0, "%s", err.message);
    cr_assert_eq(ctrl_client_new(cfg, NULL, &c, &err), 0, "%s", err.message);
    ctrl_config_free(cfg);
    return c;
}

/* Wait until c resolves example.com/v1 Widget (its CRD was just made). */
static ctrl_resource_info widget_info(ctrl_client *c)
{
    ctrl_resource_info info = {0};
    ctrl_error err = {0};
    int rc = -1;
    for (int i = 0; i < 100 && rc != 0; i++) {
        ctrl_error_deinit(&err);
        if ((rc = ctrl_client_resource_for(c, "example.com/v1", "Widget", &info, &err)) != 0)
            usleep(20000);
    }
    cr_assert_eq(rc, 0, "rc %d %s", rc, err.message);
    ctrl_error_deinit(&err);
    return info;
}

/* Parsed discovery documents are shared by the clients of a process only
 * when the documents are the same: two servers that serve one
 * group-version differently each get their own answer, every time. */
Test(client, discovery_of_two_servers_stays_apart)
{
    fakeapi_server *other = NULL;
    cr_assert_eq(fakeapi_start(&(fakeapi_options){0}, &other), 0);
    json_t *crd = widget_crd();
    ctrl_error err = {0};
    cr_assert_eq(ctrl_client_create(client, crd, NULL, NULL, &err), 0, "%s", err.message);
    /* The other server's Widget is cluster-scoped and has no status. */
    json_object_set_new(json_object_get(crd, "spec"), "scope", json_string("Cluster"));
    json_object_del(json_array_get(json_object_get(json_object_get(crd, "spec"), "versions"), 0),
                    "subresources");
    ctrl_client *oc = client_for(other);
    cr_assert_eq(ctrl_client_create(oc, crd, NULL, NULL, &err), 0, "%s", err.message);
    json_decref(crd);

    for (int round = 0; round < 2; round++) {
        ctrl_client *a = client_for(api), *b = client_for(other);
        ctrl_resource_info ia = widget_info(a), ib = widget_info(b);
        cr_assert(ia.namespaced && ia.has_status, "round %d", round);
        cr_assert(!ib.namespaced && !ib.has_status, "round %d", round);
        cr_assert_str_eq(ib.resource, "widgets");
        /* The core group is the same on both: each resolves it whole. */
        cr_assert_eq(ctrl_client_resource_for(a, "v1", "ConfigMap", &ia, &err), 0);
        cr_assert_eq(ctrl_client_resource_for(b, "v1", "ConfigMap", &ib, &err), 0);
        cr_assert_str_eq(ia.resource, "configmaps");
        cr_assert_str_eq(ib.resource, "configmaps");
        cr_assert(ia.namespaced && ib.namespaced);
        ctrl_client_free(a);
        ctrl_client_free(b);
    }
    ctrl_client_free(oc);
    fakeapi_stop(other);
}

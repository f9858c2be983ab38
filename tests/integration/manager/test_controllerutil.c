/*
 * test_controllerutil.c - create-or-update and create-or-patch against an
 * in-process fakeapi: what each call did (created, unchanged, updated,
 * updatedStatus, updatedStatusOnly), what reached the server, a mutate
 * that renames the object or fails, a conflict surfacing as is; and a
 * controller reference honoured by the server's garbage collector.
 */
#include <criterion/criterion.h>
#include <string.h>
#include <time.h>

#include "ctrl/client.h"
#include "ctrl/conditions.h"
#include "ctrl/controllerutil.h"
#include "ctrl/object.h"
#include "fakeapi/fakeapi.h"

static fakeapi_server *api;
static ctrl_client *client;

static const char crd[] = "apiVersion: apiextensions.k8s.io/v1\n"
                          "kind: CustomResourceDefinition\n"
                          "metadata: {name: widgets.example.com}\n"
                          "spec:\n"
                          "  group: example.com\n"
                          "  scope: Namespaced\n"
                          "  names: {plural: widgets, singular: widget, kind: Widget}\n"
                          "  versions:\n"
                          "  - name: v1\n"
                          "    served: true\n"
                          "    storage: true\n"
                          "    subresources: {status: {}}\n"
                          "    schema:\n"
                          "      openAPIV3Schema:\n"
                          "        type: object\n"
                          "        x-kubernetes-preserve-unknown-fields: true\n";

static void start(void)
{
    cr_assert_eq(fakeapi_start(&(fakeapi_options){0}, &api), 0);
    fakeapi_error ferr = {0};
    cr_assert_eq(fakeapi_apply(api, crd, strlen(crd), &ferr), 0, "%s", ferr.message);
    ctrl_config *cfg = NULL;
    ctrl_error err = {0};
    cr_assert_eq(ctrl_config_from_url(fakeapi_url(api), &cfg, &err), 0, "%s", err.message);
    cr_assert_eq(ctrl_client_new(cfg, NULL, &client, &err), 0, "%s", err.message);
    ctrl_config_free(cfg);
}

static void stop(void)
{
    ctrl_client_free(client);
    client = NULL;
    fakeapi_stop(api);
    api = NULL;
}

TestSuite(createorupdate, .init = start, .fini = stop, .timeout = 60);

typedef struct want {
    const char *value;
    int calls;
} want;

/* data.key = value. */
static int set_data(json_t *obj, void *user)
{
    want *w = user;
    w->calls++;
    return ctrl_obj_set(obj, "data.key", json_string(w->value));
}

static json_t *cm_key(const char *name)
{
    return json_pack("{s:s,s:s,s:{s:s,s:s}}", "apiVersion", "v1", "kind", "ConfigMap", "metadata",
                     "namespace", "default", "name", name);
}

static json_t *server_copy(const char *av, const char *kind, const char *name)
{
    json_t *o = NULL;
    cr_assert_eq(fakeapi_get(api, av, kind, "default", name, &o, NULL), 0);
    return o;
}

Test(createorupdate, created_unchanged_updated)
{
    ctrl_error err = {0};
    ctrl_op_result r;
    want w = {"one", 0};
    json_t *cm = cm_key("c");
    cr_assert_eq(ctrl_create_or_update(client, cm, set_data, &w, &r, &err), 0, "%s", err.message);
    cr_assert_eq(r, CTRL_OP_CREATED);
    cr_assert_str_eq(ctrl_op_result_string(r), "created");
    cr_assert_not_null(ctrl_obj_uid(cm), "obj holds the created object");
    json_t *s = server_copy("v1", "ConfigMap", "c");
    cr_assert_str_eq(ctrl_obj_get_string(s, "data.key"), "one");
    const char *rv = ctrl_obj_resource_version(s);
    char rv1[32];
    snprintf(rv1, sizeof rv1, "%s", rv);
    json_decref(s);
    json_decref(cm);

    cm = cm_key("c");
    cr_assert_eq(ctrl_create_or_update(client, cm, set_data, &w, &r, &err), 0, "%s", err.message);
    cr_assert_eq(r, CTRL_OP_UNCHANGED);
    cr_assert_str_eq(ctrl_op_result_string(r), "unchanged");
    s = server_copy("v1", "ConfigMap", "c");
    cr_assert_str_eq(ctrl_obj_resource_version(s), rv1, "nothing was written");
    json_decref(s);
    json_decref(cm);

    w.value = "two";
    cm = cm_key("c");
    cr_assert_eq(ctrl_create_or_update(client, cm, set_data, &w, &r, &err), 0, "%s", err.message);
    cr_assert_eq(r, CTRL_OP_UPDATED);
    s = server_copy("v1", "ConfigMap", "c");
    cr_assert_str_eq(ctrl_obj_get_string(s, "data.key"), "two");
    cr_assert_str_eq(ctrl_obj_resource_version(cm), ctrl_obj_resource_version(s));
    cr_assert_eq(w.calls, 3);
    json_decref(s);
    json_decref(cm);
    ctrl_error_deinit(&err);
}

static int rename_it(json_t *obj, void *user)
{
    (void)user;
    return ctrl_obj_set(obj, "metadata.name", json_string("other"));
}

static int fail_it(json_t *obj, void *user)
{
    (void)obj, (void)user;
    return CTRL_ERR_INVALID;
}

/* Changes the object on the server behind the caller's back, then mutates. */
static int race(json_t *obj, void *user)
{
    (void)user;
    const char *p = "{\"data\":{\"other\":\"x\"}}";
    char path[256];
    cr_assert_eq(fakeapi_path(api, "v1", "ConfigMap", "default", "r", path, sizeof path, NULL), 0);
    int status = 0;
    cr_assert_eq(fakeapi_request(api, "PATCH", path, "application/merge-patch+json", p, &status,
                                 NULL),
                 0);
    cr_assert_eq(status, 200);
    return ctrl_obj_set(obj, "data.key", json_string("mine"));
}

Test(createorupdate, mutate_errors_and_conflicts)
{
    ctrl_error err = {0};
    ctrl_op_result r = CTRL_OP_CREATED;
    json_t *cm = cm_key("m");
    cr_assert_eq(ctrl_create_or_update(client, cm, rename_it, NULL, &r, &err), CTRL_ERR_ARG);
    cr_assert_str_eq(err.message, "MutateFn cannot mutate object name and/or object namespace");
    cr_assert_eq(r, CTRL_OP_UNCHANGED);
    json_t *none = NULL;
    cr_assert_eq(fakeapi_get(api, "v1", "ConfigMap", "default", "m", &none, NULL),
                 FAKEAPI_ERR_NOT_FOUND, "nothing was created");
    json_decref(cm);

    cm = cm_key("m");
    cr_assert_eq(ctrl_create_or_patch(client, cm, fail_it, NULL, &r, &err), CTRL_ERR_INVALID);
    json_decref(cm);

    json_t *no_name = json_pack("{s:s,s:s,s:{}}", "apiVersion", "v1", "kind", "ConfigMap",
                                "metadata");
    cr_assert_eq(ctrl_create_or_update(client, no_name, NULL, NULL, &r, &err), CTRL_ERR_ARG);
    json_decref(no_name);

    want w = {"v", 0};
    cm = cm_key("r");
    cr_assert_eq(ctrl_create_or_update(client, cm, set_data, &w, &r, &err), 0, "%s", err.message);
    json_decref(cm);
    cm = cm_key("r");
    cr_assert_eq(ctrl_create_or_update(client, cm, race, NULL, &r, &err), CTRL_ERR_CONFLICT);
    cr_assert_eq(err.http_status, 409);
    json_decref(cm);
    ctrl_error_deinit(&err);
}

static int widget_spec_and_status(json_t *obj, void *user)
{
    const int *what = user; /* 1: spec, 2: status, 3: both */
    if (*what & 1)
        ctrl_obj_set(obj, "spec.size", json_integer(5));
    if (*what & 2)
        ctrl_condition_set(ctrl_obj_conditions(obj),
                           &(ctrl_condition){.type = "Ready", .status = "True", .reason = "Done"},
                           0);
    return 0;
}

Test(createorupdate, create_or_patch_results)
{
    ctrl_error err = {0};
    ctrl_op_result r;
    const char *w = "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\","
                    "\"metadata\":{\"name\":\"w\",\"namespace\":\"default\"},\"spec\":{\"size\":1}}";
    int what = 0;
    json_t *obj = json_loads(w, 0, NULL);
    cr_assert_eq(ctrl_create_or_patch(client, obj, widget_spec_and_status, &what, &r, &err), 0,
                 "%s", err.message);
    cr_assert_eq(r, CTRL_OP_CREATED);
    json_decref(obj);

    what = 0;
    obj = json_loads(w, 0, NULL);
    cr_assert_eq(ctrl_create_or_patch(client, obj, widget_spec_and_status, &what, &r, &err), 0);
    cr_assert_eq(r, CTRL_OP_UNCHANGED);
    json_decref(obj);

    what = 2;
    obj = json_loads(w, 0, NULL);
    cr_assert_eq(ctrl_create_or_patch(client, obj, widget_spec_and_status, &what, &r, &err), 0,
                 "%s", err.message);
    cr_assert_eq(r, CTRL_OP_UPDATED_STATUS_ONLY);
    cr_assert_str_eq(ctrl_op_result_string(r), "updatedStatusOnly");
    json_t *s = server_copy("example.com/v1", "Widget", "w");
    cr_assert(ctrl_condition_is_true(json_object_get(json_object_get(s, "status"), "conditions"),
                                     "Ready"));
    cr_assert_eq(ctrl_obj_get_int(s, "spec.size", 0), 1);
    cr_assert_eq(ctrl_obj_generation(s), 1, "a status write keeps the generation");
    json_decref(s);
    json_decref(obj);

    what = 1;
    obj = json_loads(w, 0, NULL);
    cr_assert_eq(ctrl_create_or_patch(client, obj, widget_spec_and_status, &what, &r, &err), 0,
                 "%s", err.message);
    cr_assert_eq(r, CTRL_OP_UPDATED);
    s = server_copy("example.com/v1", "Widget", "w");
    cr_assert_eq(ctrl_obj_get_int(s, "spec.size", 0), 5);
    cr_assert_not_null(ctrl_condition_find(json_object_get(json_object_get(s, "status"),
                                                           "conditions"),
                                           "Ready"),
                       "the status stays");
    json_decref(s);
    json_decref(obj);

    /* Both: spec back to 1 by hand first, then spec and a changed condition. */
    obj = json_loads(w, 0, NULL);
    what = 0;
    cr_assert_eq(ctrl_create_or_patch(client, obj, NULL, NULL, &r, &err), 0);
    cr_assert_eq(r, CTRL_OP_UNCHANGED);
    ctrl_obj_set(obj, "spec.size", json_integer(2));
    cr_assert_eq(ctrl_client_update(client, obj, NULL, NULL, &err), 0, "%s", err.message);
    json_t *st = json_pack("{s:{s:[{s:s,s:s,s:s,s:s,s:s}]}}", "status", "conditions", "type",
                           "Ready", "status", "False", "reason", "Resize", "message", "",
                           "lastTransitionTime", "2026-01-01T00:00:00Z");
    cr_assert_eq(ctrl_client_patch_status(client, "example.com/v1", "Widget", "default", "w",
                                          CTRL_PATCH_MERGE, st, NULL, NULL, &err),
                 0, "%s", err.message);
    json_decref(st);
    json_decref(obj);
    what = 3;
    obj = json_loads(w, 0, NULL);
    cr_assert_eq(ctrl_create_or_patch(client, obj, widget_spec_and_status, &what, &r, &err), 0,
                 "%s", err.message);
    cr_assert_eq(r, CTRL_OP_UPDATED_STATUS);
    s = server_copy("example.com/v1", "Widget", "w");
    cr_assert_eq(ctrl_obj_get_int(s, "spec.size", 0), 5);
    cr_assert(ctrl_condition_is_true(json_object_get(json_object_get(s, "status"), "conditions"),
                                     "Ready"));
    cr_assert(json_equal(json_object_get(s, "status"), json_object_get(obj, "status")),
              "obj holds the server's answer");
    json_decref(s);
    json_decref(obj);
    ctrl_error_deinit(&err);
}

Test(createorupdate, controller_reference_collected_with_owner)
{
    ctrl_error err = {0};
    const char *w = "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\","
                    "\"metadata\":{\"name\":\"owner\",\"namespace\":\"default\"}}";
    json_t *owner = json_loads(w, 0, NULL);
    cr_assert_eq(ctrl_create_or_update(client, owner, NULL, NULL, NULL, &err), 0, "%s",
                 err.message);
    json_t *cm = cm_key("owned");
    cr_assert_eq(ctrl_set_controller_reference(owner, cm, &err), 0, "%s", err.message);
    cr_assert_eq(ctrl_client_create(client, cm, NULL, NULL, &err), 0, "%s", err.message);
    cr_assert_eq(ctrl_client_delete(client, "example.com/v1", "Widget", "default", "owner", NULL,
                                    NULL, &err),
                 0, "%s", err.message);
    int rc = 0;
    for (int i = 0; i < 200; i++) {
        json_t *o = NULL;
        rc = fakeapi_get(api, "v1", "ConfigMap", "default", "owned", &o, NULL);
        json_decref(o);
        if (rc == FAKEAPI_ERR_NOT_FOUND)
            break;
        nanosleep(&(struct timespec){0, 25000000}, NULL);
    }
    cr_assert_eq(rc, FAKEAPI_ERR_NOT_FOUND, "the garbage collector removed the dependent");
    json_decref(cm);
    json_decref(owner);
    ctrl_error_deinit(&err);
}

/*
 * test_client_apply.c - ctrl_client_apply (ctrl/client.h) against an
 * in-process fakeapi: creation, ownership, conflicts surfaced as
 * CTRL_ERR_CONFLICT with the fields in the message and causes, force,
 * dry run and the /status subresource.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "ctrl/client.h"
#include "ctrl/error.h"
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
        ctrl_client_new(cfg, &(ctrl_client_options){.user_agent = "apply-test"}, &client, &err), 0,
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

TestSuite(client_apply, .init = start, .fini = stop, .timeout = 60);

static json_t *cm(const char *key, const char *value)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                     "metadata", "namespace", "default", "name", "x", "data", key, value);
}

/* The manager names of obj's managedFields, space-separated, as "name:Operation". */
static const char *managers(const json_t *obj)
{
    static char out[512];
    size_t off = 0, i;
    json_t *e;
    out[0] = 0;
    json_array_foreach(json_object_get(json_object_get(obj, "metadata"), "managedFields"), i, e)
    {
        off += (size_t)snprintf(out + off, sizeof out - off, "%s%s:%s", i ? " " : "",
                                json_string_value(json_object_get(e, "manager")),
                                json_string_value(json_object_get(e, "operation")));
    }
    return out;
}

Test(client_apply, creates_conflicts_and_forces)
{
    ctrl_error err = {0};
    json_t *a = cm("a", "x"), *out = NULL;
    cr_assert_eq(ctrl_client_apply(client, a, "alice", 0, &out, &err), 0, "%s", err.message);
    cr_assert_str_eq(managers(out), "alice:Apply");
    json_decref(out);
    json_decref(a);

    json_t *b = cm("a", "y");
    cr_assert_lt(ctrl_client_apply(client, b, "bob", 0, &out, &err), 0);
    cr_assert(ctrl_err_is_conflict(err.code), "%d %s", err.code, err.message);
    cr_assert_eq(err.http_status, 409);
    cr_assert_str_eq(err.message, "Apply failed with 1 conflict: conflict with \"alice\": .data.a");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(err.causes, 0), "field")),
                     ".data.a");

    cr_assert_eq(ctrl_client_apply(client, b, "bob", CTRL_APPLY_FORCE, &out, &err), 0, "%s",
                 err.message);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(out, "data"), "a")), "y");
    cr_assert_str_eq(managers(out), "bob:Apply");
    json_decref(out);
    json_decref(b);
    ctrl_error_deinit(&err);
}

Test(client_apply, dry_run_and_arguments)
{
    ctrl_error err = {0};
    json_t *a = cm("a", "x"), *out = NULL;
    cr_assert_eq(ctrl_client_apply(client, a, "alice", CTRL_APPLY_DRY_RUN, &out, &err), 0, "%s",
                 err.message);
    json_decref(out);
    cr_assert_lt(ctrl_client_get(client, "v1", "ConfigMap", "default", "x", &out, &err), 0);
    cr_assert_eq(err.http_status, 404);
    cr_assert_lt(ctrl_client_apply(client, a, NULL, 0, NULL, &err), 0);
    cr_assert_eq(err.code, CTRL_ERR_ARG);
    json_t *nameless = json_pack("{s:s, s:s}", "apiVersion", "v1", "kind", "ConfigMap");
    cr_assert_lt(ctrl_client_apply(client, nameless, "alice", 0, NULL, &err), 0);
    cr_assert_eq(err.code, CTRL_ERR_ARG);
    json_decref(nameless);
    json_decref(a);
    ctrl_error_deinit(&err);
}

Test(client_apply, status_subresource)
{
    ctrl_error err = {0};
    json_t *d = json_loads(
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"namespace\":"
        "\"default\",\"name\":\"web\"},\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"web\"}},"
        "\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}},\"spec\":{\"containers\":[{"
        "\"name\":\"a\",\"image\":\"nginx\"}]}}}}",
        0, NULL);
    json_t *out = NULL;
    cr_assert_eq(ctrl_client_apply(client, d, "owner", 0, &out, &err), 0, "%s", err.message);
    json_decref(out);
    json_t *st = json_loads("{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{"
                            "\"namespace\":\"default\",\"name\":\"web\"},\"status\":{"
                            "\"observedGeneration\":1}}",
                            0, NULL);
    cr_assert_eq(ctrl_client_apply(client, st, "ctrl", CTRL_APPLY_STATUS, &out, &err), 0, "%s",
                 err.message);
    cr_assert_eq(
        json_integer_value(json_object_get(json_object_get(out, "status"), "observedGeneration")),
        1);
    cr_assert(strstr(managers(out), "ctrl:Apply"), "%s", managers(out));
    cr_assert(strstr(managers(out), "owner:Apply"), "%s", managers(out));
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(json_object_get(out, "metadata"), "managedFields"), i, e)
    {
        if (!strcmp(json_string_value(json_object_get(e, "manager")), "ctrl"))
            cr_assert_str_eq(json_string_value(json_object_get(e, "subresource")), "status");
    }
    json_decref(out);
    json_decref(st);
    json_decref(d);
    ctrl_error_deinit(&err);
}

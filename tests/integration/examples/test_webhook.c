/*
 * test_webhook.c - the webhook example's handlers (examples/webhook) served
 * by a webhook server, installed into an in-process fakeapi, and exercised
 * through libctrl's client: one table of writes and what each must get.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctrl/client.h"
#include "ctrl/webhook.h"
#include "fakeapi/fakeapi.h"
#include "tlscert.h"
#include "widget_webhook.h"

static fakeapi_server *api;
static fakeapi__tls_material tls;
static char dir[128];
static ctrl_webhook_server *ws;
static ctrl_client *client;

static void put_file(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

static void setup(void)
{
    cr_assert_eq(fakeapi_start(&(fakeapi_options){.seed = 7}, &api), 0);
    fakeapi_error ferr = {0};
    cr_assert_eq(fakeapi_apply_file(api, KH_FIXTURES "/webhook/crd.yaml", &ferr), 0);
    cr_assert_eq(fakeapi__tls_generate((int64_t)time(NULL) * 1000000000, &tls, NULL, 0), 0);
    snprintf(dir, sizeof dir, "/tmp/kh-widget-XXXXXX");
    cr_assert(mkdtemp(dir));
    put_file("tls.crt", tls.server_cert_pem);
    put_file("tls.key", tls.server_key_pem);
    ctrl_error err = {0};
    cr_assert_eq(
        ctrl_webhook_server_new(
            &(ctrl_webhook_server_options){.addr = "127.0.0.1:0", .cert_dir = dir}, &ws, &err),
        0);
    cr_assert_eq(example_widget_webhook_setup(ws), 0);
    cr_assert_eq(ctrl_webhook_server_start(ws, &err), 0, "%s", err.message);
    ctrl_config *cfg;
    cr_assert_eq(ctrl_config_from_url(fakeapi_url(api), &cfg, &err), 0);
    cr_assert_eq(ctrl_client_new(cfg, NULL, &client, &err), 0, "%s", err.message);
    ctrl_config_free(cfg);
    cr_assert_eq(
        ctrl_webhook_install_server(client, ws, "widget-webhook", "127.0.0.1", tls.ca_pem, &err), 0,
        "%s", err.message);
    ctrl_error_deinit(&err);
}

static void teardown(void)
{
    ctrl_client_free(client);
    ctrl_webhook_server_free(ws);
    fakeapi_stop(api);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    fakeapi__tls_free(&tls);
}

TestSuite(widget_webhook, .init = setup, .fini = teardown, .timeout = 60);

static json_t *widget(const char *name, const char *spec_json, const char *labels_json)
{
    json_t *o = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "example.com/v1", "kind",
                          "Widget", "metadata", "name", name, "namespace", "default");
    if (spec_json)
        json_object_set_new(o, "spec", json_loads(spec_json, 0, NULL));
    if (labels_json)
        json_object_set_new(json_object_get(o, "metadata"), "labels",
                            json_loads(labels_json, 0, NULL));
    return o;
}

/* Creates: what each gets (0 and the stored spec, or the error and message). */
static const struct {
    const char *name, *spec;
    int rc;
    const char *message; /* the server's, or the stored spec (JSON) when rc is 0 */
} creates[] = {
    {"plain", NULL, 0, "{\"color\":\"blue\",\"size\":1}"},
    {"green", "{\"color\":\"green\",\"size\":3}", 0, "{\"color\":\"green\",\"size\":3}"},
    {"red", "{\"color\":\"red\"}", CTRL_ERR_FORBIDDEN,
     "admission webhook \"vwidget.example.com.widget-webhook\" denied the request: spec.color "
     "must be blue or green, not red"},
    {"huge", "{\"size\":50}", CTRL_ERR_INVALID,
     "admission webhook \"vwidget.example.com.widget-webhook\" denied the request: spec.size "
     "must be 1 to 10"},
};

Test(widget_webhook, creates_are_defaulted_or_refused)
{
    for (size_t i = 0; i < sizeof creates / sizeof creates[0]; i++) {
        json_t *o = widget(creates[i].name, creates[i].spec, NULL), *out = NULL;
        ctrl_error err = {0};
        int rc = ctrl_client_create(client, o, NULL, &out, &err);
        cr_assert_eq(rc, creates[i].rc, "%s: %d %s", creates[i].name, rc, err.message);
        if (rc == 0) {
            json_t *want = json_loads(creates[i].message, 0, NULL);
            cr_assert(json_equal(json_object_get(out, "spec"), want), "%s", creates[i].name);
            cr_assert_str_eq(json_string_value(json_object_get(
                                 json_object_get(json_object_get(out, "metadata"), "labels"),
                                 "widgets.example.com/defaulted")),
                             "true");
            json_decref(want);
        } else {
            cr_assert_str_eq(err.message, creates[i].message);
        }
        json_decref(out);
        json_decref(o);
        ctrl_error_deinit(&err);
    }
}

Test(widget_webhook, color_is_immutable_and_protected_widgets_stay)
{
    json_t *o = widget("w", "{\"color\":\"blue\"}", "{\"widgets.example.com/protected\":\"yes\"}");
    ctrl_error err = {0};
    cr_assert_eq(ctrl_client_create(client, o, NULL, NULL, &err), 0, "%s", err.message);
    json_decref(o);
    json_t *patch = json_pack("{s:{s:s}}", "spec", "color", "green");
    int rc = ctrl_client_patch(client, "example.com/v1", "Widget", "default", "w", CTRL_PATCH_MERGE,
                               patch, NULL, NULL, &err);
    json_decref(patch);
    cr_assert_eq(rc, CTRL_ERR_FORBIDDEN);
    cr_assert(strstr(err.message, "spec.color is immutable (was blue)"), "%s", err.message);
    rc = ctrl_client_delete(client, "example.com/v1", "Widget", "default", "w", NULL, NULL, &err);
    cr_assert_eq(rc, CTRL_ERR_FORBIDDEN);
    cr_assert(strstr(err.message, "widget w is protected"), "%s", err.message);
    json_t *got = NULL;
    cr_assert_eq(ctrl_client_get(client, "example.com/v1", "Widget", "default", "w", &got, &err),
                 0);
    json_decref(got);
    ctrl_error_deinit(&err);
}

/*
 * test_webhook.c - the manager's webhook server (ctrl/webhook.h): the JSON
 * patch a defaulter answers with (checked by applying it with fakeapi's
 * RFC 6902 implementation), controller-runtime's paths, AdmissionReview in
 * and out over TLS, the readiness check and the manager's runnable, and the
 * whole loop: configurations installed into an in-process fakeapi, which
 * then calls the server on writes.
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctrl/manager.h"
#include "ctrl/webhook.h"
#include "fakeapi/fakeapi.h"
#include "patch.h"
#include "tlscert.h"

/* ---- JSON patch ---------------------------------------------------------- */

static void roundtrip(const char *from_text, const char *to_text)
{
    json_t *from = json_loads(from_text, JSON_DECODE_ANY, NULL);
    json_t *to = json_loads(to_text, JSON_DECODE_ANY, NULL);
    cr_assert(from && to, "case parses: %s -> %s", from_text, to_text);
    json_t *patch = NULL, *out = NULL;
    cr_assert_eq(ctrl_json_patch_diff(from, to, &patch), 0);
    char err[256] = "";
    cr_assert_eq(fakeapi__json_patch(from, patch, &out, err, sizeof err), 0, "%s", err);
    char *p = json_dumps(patch, JSON_COMPACT);
    cr_assert(json_equal(out, to), "%s -> %s: patch %s", from_text, to_text, p);
    free(p);
    json_decref(from);
    json_decref(to);
    json_decref(patch);
    json_decref(out);
}

Test(json_patch, applying_the_diff_gives_the_target)
{
    roundtrip("{}", "{}");
    roundtrip("{\"a\":1}", "{\"a\":2}");
    roundtrip("{\"a\":1,\"b\":2}", "{\"b\":2,\"c\":{\"d\":[1,2]}}");
    roundtrip("{\"m\":{\"labels\":{\"x\":\"1\"}}}",
              "{\"m\":{\"labels\":{\"x\":\"1\",\"y\":\"2\"}}}");
    roundtrip("{\"a/b\":1,\"c~d\":2}", "{\"a/b\":3,\"c~d\":4,\"e/~f\":5}");
    roundtrip("{\"l\":[1,2,3,4]}", "{\"l\":[1,9]}");
    roundtrip("{\"l\":[1]}", "{\"l\":[1,2,{\"x\":[3]}]}");
    roundtrip("{\"l\":[{\"a\":1},{\"b\":2}]}", "{\"l\":[{\"a\":1,\"c\":3},{\"b\":null}]}");
    roundtrip("{\"t\":\"s\"}", "{\"t\":{\"now\":\"an object\"}}");
    roundtrip("{\"t\":[1]}", "{\"t\":{\"0\":1}}");
    roundtrip("[1,2]", "{\"a\":1}");
    roundtrip("\"x\"", "5");
}

Test(json_patch, minimal_operations)
{
    json_t *from = json_pack("{s:{s:s}, s:i}", "metadata", "name", "x", "gone", 1);
    json_t *to = json_pack("{s:{s:s, s:{s:s}}}", "metadata", "name", "x", "labels", "a/b", "c");
    json_t *patch = NULL;
    cr_assert_eq(ctrl_json_patch_diff(from, to, &patch), 0);
    json_t *want = json_loads("[{\"op\":\"remove\",\"path\":\"/gone\"},"
                              "{\"op\":\"add\",\"path\":\"/metadata/labels\","
                              "\"value\":{\"a/b\":\"c\"}}]",
                              0, NULL);
    char *got = json_dumps(patch, JSON_COMPACT);
    cr_assert(json_equal(patch, want), "%s", got);
    free(got);
    json_decref(patch);
    cr_assert_eq(ctrl_json_patch_diff(from, from, &patch), 0);
    cr_assert_eq(json_array_size(patch), 0);
    json_decref(patch);
    cr_assert_eq(ctrl_json_patch_diff(NULL, to, &patch), CTRL_ERR_ARG);
    json_decref(want);
    json_decref(from);
    json_decref(to);
}

Test(webhook_paths, as_controller_runtime)
{
    char p[128];
    cr_assert_eq(ctrl_webhook_validate_path("example.com/v1", "Widget", p, sizeof p), 0);
    cr_assert_str_eq(p, "/validate-example-com-v1-widget");
    cr_assert_eq(ctrl_webhook_mutate_path("v1", "Pod", p, sizeof p), 0);
    cr_assert_str_eq(p, "/mutate--v1-pod");
    cr_assert_eq(ctrl_webhook_mutate_path("apps/v1", "Deployment", p, 8), CTRL_ERR_ARG);
}

/* ---- the server ---------------------------------------------------------- */

static fakeapi__tls_material tls;
static char dir[256];
static ctrl_webhook_server *ws;

static void write_file(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

/* Widgets must be blue; a warning for big ones. */
static int validate_widget(const ctrl_admission_request *req, ctrl_admission_response *resp,
                           void *user)
{
    (void)user;
    const json_t *o = req->object ? req->object : req->old_object;
    const char *color = json_string_value(json_object_get(json_object_get(o, "spec"), "color"));
    if (!strcmp(req->operation, "DELETE") &&
        json_object_get(json_object_get(o, "metadata"), "labels") &&
        json_object_get(json_object_get(json_object_get(o, "metadata"), "labels"), "keep")) {
        ctrl_admission_deny(resp, "widget %s is kept", req->name);
        return 0;
    }
    if (color && strcmp(color, "blue"))
        ctrl_admission_deny(resp, "only blue widgets, not %s", color);
    if (json_integer_value(json_object_get(json_object_get(o, "spec"), "size")) > 10)
        ctrl_admission_warn(resp, "a big widget");
    return 0;
}

/* Tags default to ["default"]; a label says it was defaulted. */
static int default_widget(const ctrl_admission_request *req, json_t *obj,
                          ctrl_admission_response *resp, void *user)
{
    (void)req, (void)resp, (void)user;
    json_t *spec = json_object_get(obj, "spec");
    if (!json_object_get(spec, "tags"))
        json_object_set_new(spec, "tags", json_pack("[s]", "default"));
    json_t *meta = json_object_get(obj, "metadata");
    json_t *labels = json_object_get(meta, "labels");
    if (!labels)
        json_object_set_new(meta, "labels", labels = json_object());
    json_object_set_new(labels, "defaulted", json_string("yes"));
    return 0;
}

static int failing(const ctrl_admission_request *req, ctrl_admission_response *resp, void *user)
{
    (void)req, (void)resp, (void)user;
    return CTRL_ERR_INTERNAL;
}

/* example.com/v1 spec.size <-> example.com/v2 spec.dimensions.size. */
static int convert_widget(const json_t *obj, const char *want, json_t **out, char *msg, size_t len,
                          void *user)
{
    (void)user;
    json_t *o = json_deep_copy(obj);
    json_t *spec = json_object_get(o, "spec");
    if (!strcmp(want, "example.com/v2")) {
        json_t *size = json_object_get(spec, "size");
        if (size) {
            json_object_set_new(spec, "dimensions", json_pack("{s:O}", "size", size));
            json_object_del(spec, "size");
        }
    } else if (!strcmp(want, "example.com/v1")) {
        json_t *d = json_object_get(spec, "dimensions");
        if (json_object_get(d, "size"))
            json_object_set(spec, "size", json_object_get(d, "size"));
        json_object_del(spec, "dimensions");
    } else {
        snprintf(msg, len, "no such version %s", want);
        json_decref(o);
        return CTRL_ERR_ARG;
    }
    json_object_set_new(o, "apiVersion", json_string(want));
    *out = o;
    return 0;
}

static atomic_bool slow_entered;

/* Allows, slowly: for the graceful stop. */
static int slow(const ctrl_admission_request *req, ctrl_admission_response *resp, void *user)
{
    (void)req, (void)resp, (void)user;
    atomic_store(&slow_entered, true);
    usleep(300 * 1000);
    return 0;
}

static void server_setup(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    cr_assert_eq(fakeapi__tls_generate((int64_t)time(NULL) * 1000000000, &tls, NULL, 0), 0);
    snprintf(dir, sizeof dir, "/tmp/kh-webhook-XXXXXX");
    cr_assert(mkdtemp(dir));
    write_file("tls.crt", tls.server_cert_pem);
    write_file("tls.key", tls.server_key_pem);
    ctrl_error err = {0};
    cr_assert_eq(
        ctrl_webhook_server_new(
            &(ctrl_webhook_server_options){.addr = "127.0.0.1:0", .cert_dir = dir}, &ws, &err),
        0);
    cr_assert_eq(ctrl_webhook_server_register_validator(ws, "example.com/v1", "Widget",
                                                        validate_widget, NULL),
                 0);
    cr_assert_eq(ctrl_webhook_server_register_defaulter(ws, "example.com/v1", "Widget",
                                                        default_widget, NULL),
                 0);
    cr_assert_eq(ctrl_webhook_server_register(ws, "/fail", failing, NULL, NULL), 0);
    cr_assert_eq(ctrl_webhook_server_register_converter(ws, NULL, convert_widget, NULL), 0);
    cr_assert_eq(ctrl_webhook_server_register(ws, "/slow", slow, NULL, NULL), 0);
    /* One path, one handler. */
    cr_assert_eq(ctrl_webhook_server_register(ws, "/fail", failing, NULL, NULL), CTRL_ERR_ARG);
    ctrl_error_deinit(&err);
}

static void server_teardown(void)
{
    ctrl_webhook_server_free(ws);
    ws = NULL;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    fakeapi__tls_free(&tls);
}

TestSuite(webhook_server, .init = server_setup, .fini = server_teardown, .timeout = 60);

typedef struct buf {
    char *p;
    size_t n;
} buf;

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    buf *b = ud;
    b->p = realloc(b->p, b->n + size * n + 1);
    memcpy(b->p + b->n, p, size * n);
    b->n += size * n;
    b->p[b->n] = 0;
    return size * n;
}

/* POST body to path on the server over TLS (verified with the test CA). */
static json_t *post(const char *path, const char *ctype, const char *body, long *status)
{
    char url[300];
    snprintf(url, sizeof url, "https://127.0.0.1:%d%s", ctrl_webhook_server_port(ws), path);
    CURL *h = curl_easy_init();
    struct curl_slist *hdrs = NULL;
    char ct[128];
    snprintf(ct, sizeof ct, "Content-Type: %s", ctype);
    hdrs = curl_slist_append(hdrs, ct);
    buf b = {0};
    struct curl_blob ca = {.data = tls.ca_pem, .len = strlen(tls.ca_pem), .flags = CURL_BLOB_COPY};
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &ca);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(h, CURLOPT_PROXY, "");
    CURLcode rc = curl_easy_perform(h);
    cr_assert_eq(rc, CURLE_OK, "%s", curl_easy_strerror(rc));
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    json_t *out = b.p ? json_loads(b.p, 0, NULL) : NULL;
    free(b.p);
    return out;
}

static char *review_text(const char *op, const json_t *obj, const json_t *old)
{
    json_t *r = json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s}, s:{s:s, s:s, s:s}, s:s, s:s, "
                          "s:s, s:O?, s:O?}}",
                          "apiVersion", "admission.k8s.io/v1", "kind", "AdmissionReview", "request",
                          "uid", "1234", "kind", "group", "example.com", "version", "v1", "kind",
                          "Widget", "resource", "group", "example.com", "version", "v1", "resource",
                          "widgets", "operation", op, "name", "w", "namespace", "default", "object",
                          obj, "oldObject", old);
    char *t = json_dumps(r, JSON_COMPACT);
    json_decref(r);
    return t;
}

static const char *rstr(const json_t *answer, const char *key)
{
    return json_string_value(json_object_get(json_object_get(answer, "response"), key));
}

Test(webhook_server, validates_and_defaults_over_tls)
{
    ctrl_error err = {0};
    char why[200];
    cr_assert_eq(ctrl_webhook_server_check(ws, why, sizeof why), 1);
    cr_assert_eq(ctrl_webhook_server_start(ws, &err), 0, "%s", err.message);
    cr_assert_neq(ctrl_webhook_server_port(ws), 0);
    cr_assert_eq(ctrl_webhook_server_check(ws, why, sizeof why), 0, "%s", why);

    json_t *red = json_pack("{s:{s:s}, s:{s:s, s:i}}", "metadata", "name", "w", "spec", "color",
                            "red", "size", 20);
    char *t = review_text("CREATE", red, NULL);
    long status = 0;
    json_t *a = post("/validate-example-com-v1-widget", "application/json", t, &status);
    free(t);
    cr_assert_eq(status, 200);
    cr_assert_str_eq(json_string_value(json_object_get(a, "apiVersion")), "admission.k8s.io/v1");
    cr_assert_str_eq(rstr(a, "uid"), "1234");
    json_t *resp = json_object_get(a, "response");
    cr_assert(json_is_false(json_object_get(resp, "allowed")));
    json_t *st = json_object_get(resp, "status");
    cr_assert_eq(json_integer_value(json_object_get(st, "code")), 403);
    cr_assert_str_eq(json_string_value(json_object_get(st, "reason")), "Forbidden");
    cr_assert_str_eq(json_string_value(json_object_get(st, "message")),
                     "only blue widgets, not red");
    cr_assert_str_eq(json_string_value(json_array_get(json_object_get(resp, "warnings"), 0)),
                     "a big widget");
    json_decref(a);

    /* The defaulter's answer is a patch from the object as sent. */
    json_t *blue =
        json_pack("{s:{s:s}, s:{s:s}}", "metadata", "name", "w", "spec", "color", "blue");
    t = review_text("CREATE", blue, NULL);
    a = post("/mutate-example-com-v1-widget", "application/json; charset=utf-8", t, &status);
    free(t);
    cr_assert(json_is_true(json_object_get(json_object_get(a, "response"), "allowed")));
    cr_assert_str_eq(rstr(a, "patchType"), "JSONPatch");
    const char *p64 = rstr(a, "patch");
    cr_assert(p64);
    /* Decode it as fakeapi would, and apply it. */
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "printf %%s '%s' | base64 -d", p64);
    FILE *pf = popen(cmd, "r");
    char ptext[1024] = "";
    size_t pn = fread(ptext, 1, sizeof ptext - 1, pf);
    ptext[pn] = 0;
    pclose(pf);
    json_t *patch = json_loads(ptext, 0, NULL), *out = NULL;
    cr_assert(json_is_array(patch), "%s", ptext);
    cr_assert_eq(fakeapi__json_patch(blue, patch, &out, NULL, 0), 0);
    json_t *want =
        json_pack("{s:{s:s, s:{s:s}}, s:{s:s, s:[s]}}", "metadata", "name", "w", "labels",
                  "defaulted", "yes", "spec", "color", "blue", "tags", "default");
    cr_assert(json_equal(out, want));
    json_decref(want);
    json_decref(out);
    json_decref(patch);
    json_decref(a);

    /* A DELETE is allowed by the defaulter without a patch; the validator sees oldObject. */
    t = review_text("DELETE", NULL, blue);
    a = post("/mutate-example-com-v1-widget", "application/json", t, &status);
    cr_assert(json_is_true(json_object_get(json_object_get(a, "response"), "allowed")));
    cr_assert_null(rstr(a, "patch"));
    json_decref(a);
    free(t);

    /* A handler's own failure: denied with 500. */
    t = review_text("CREATE", blue, NULL);
    a = post("/fail", "application/json", t, &status);
    free(t);
    st = json_object_get(json_object_get(a, "response"), "status");
    cr_assert_eq(json_integer_value(json_object_get(st, "code")), 500);
    json_decref(a);

    /* Not a review of v1: answered as a review with 400. */
    a = post("/fail", "application/json",
             "{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\","
             "\"request\":{\"uid\":\"9\"}}",
             &status);
    cr_assert_eq(status, 200);
    st = json_object_get(json_object_get(a, "response"), "status");
    cr_assert_eq(json_integer_value(json_object_get(st, "code")), 400);
    json_decref(a);
    /* Unknown path, wrong media type. */
    json_decref(post("/nothing-here", "application/json", "{}", &status));
    cr_assert_eq(status, 404);
    json_decref(post("/fail", "text/plain", "{}", &status));
    cr_assert_eq(status, 400);
    json_decref(red);
    json_decref(blue);

    ctrl_webhook_server_stop(ws);
    cr_assert_eq(ctrl_webhook_server_port(ws), 0);
    cr_assert_eq(ctrl_webhook_server_check(ws, why, sizeof why), 1);
    ctrl_error_deinit(&err);
}

Test(webhook_server, converts_objects_between_versions)
{
    ctrl_error err = {0};
    cr_assert_eq(ctrl_webhook_server_start(ws, &err), 0, "%s", err.message);
    long status = 0;
    json_t *a = post("/convert", "application/json",
                     "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"ConversionReview\","
                     "\"request\":{\"uid\":\"c1\",\"desiredAPIVersion\":\"example.com/v2\","
                     "\"objects\":[{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\","
                     "\"metadata\":{\"name\":\"a\"},\"spec\":{\"size\":3}},"
                     "{\"apiVersion\":\"example.com/v2\",\"kind\":\"Widget\","
                     "\"metadata\":{\"name\":\"b\"},\"spec\":{}}]}}",
                     &status);
    cr_assert_eq(status, 200);
    json_t *resp = json_object_get(a, "response");
    cr_assert_str_eq(json_string_value(json_object_get(resp, "uid")), "c1");
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(resp, "result"), "status")),
                     "Success");
    json_t *objs = json_object_get(resp, "convertedObjects");
    cr_assert_eq(json_array_size(objs), 2);
    json_t *first = json_array_get(objs, 0);
    cr_assert_str_eq(json_string_value(json_object_get(first, "apiVersion")), "example.com/v2");
    cr_assert_eq(json_integer_value(json_object_get(
                     json_object_get(json_object_get(first, "spec"), "dimensions"), "size")),
                 3);
    json_decref(a);
    /* A version the converter does not know: the whole review fails. */
    a = post("/convert", "application/json",
             "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"ConversionReview\","
             "\"request\":{\"uid\":\"c2\",\"desiredAPIVersion\":\"example.com/v9\","
             "\"objects\":[{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\","
             "\"metadata\":{\"name\":\"a\"}}]}}",
             &status);
    resp = json_object_get(a, "response");
    json_t *result = json_object_get(resp, "result");
    cr_assert_str_eq(json_string_value(json_object_get(result, "status")), "Failure");
    cr_assert_str_eq(json_string_value(json_object_get(result, "message")),
                     "cannot convert example.com/v1 a to example.com/v9: no such version "
                     "example.com/v9");
    cr_assert_eq(json_array_size(json_object_get(resp, "convertedObjects")), 0);
    json_decref(a);
    ctrl_error_deinit(&err);
}

typedef struct slow_call {
    pthread_t th;
    int port;
    char *body;
    long status;
    CURLcode rc;
    buf answer;
} slow_call;

static void *call_slow(void *ud)
{
    slow_call *sc = ud;
    char url[100];
    snprintf(url, sizeof url, "https://127.0.0.1:%d/slow", sc->port);
    CURL *h = curl_easy_init();
    struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    struct curl_blob ca = {.data = tls.ca_pem, .len = strlen(tls.ca_pem), .flags = CURL_BLOB_COPY};
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &ca);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, sc->body);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &sc->answer);
    curl_easy_setopt(h, CURLOPT_PROXY, "");
    sc->rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &sc->status);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    return NULL;
}

Test(webhook_server, stop_lets_the_request_being_served_finish)
{
    ctrl_error err = {0};
    cr_assert_eq(ctrl_webhook_server_start(ws, &err), 0, "%s", err.message);
    json_t *obj = json_pack("{s:{s:s}}", "metadata", "name", "w");
    slow_call sc = {.port = ctrl_webhook_server_port(ws), .body = review_text("CREATE", obj, NULL)};
    json_decref(obj);
    atomic_store(&slow_entered, false);
    pthread_create(&sc.th, NULL, call_slow, &sc);
    while (!atomic_load(&slow_entered))
        usleep(1000);
    ctrl_webhook_server_stop(ws); /* while the handler runs */
    pthread_join(sc.th, NULL);
    cr_assert_eq(sc.rc, CURLE_OK, "%s", curl_easy_strerror(sc.rc));
    cr_assert_eq(sc.status, 200);
    json_t *a = json_loads(sc.answer.p, 0, NULL);
    cr_assert(json_is_true(json_object_get(json_object_get(a, "response"), "allowed")));
    json_decref(a);
    free(sc.answer.p);
    free(sc.body);
    cr_assert_eq(ctrl_webhook_server_port(ws), 0);
    ctrl_error_deinit(&err);
}

Test(webhook_server, missing_certificate_names_the_file)
{
    ctrl_webhook_server *other = NULL;
    ctrl_error err = {0};
    cr_assert_eq(ctrl_webhook_server_new(&(ctrl_webhook_server_options){.addr = "127.0.0.1:0",
                                                                        .cert_dir = dir,
                                                                        .cert_name = "nope.crt"},
                                         &other, &err),
                 0);
    cr_assert_eq(ctrl_webhook_server_start(other, &err), CTRL_ERR_IO);
    cr_assert(strstr(err.message, "nope.crt"), "%s", err.message);
    ctrl_webhook_server_free(other);
    cr_assert_eq(
        ctrl_webhook_server_new(&(ctrl_webhook_server_options){.addr = "nonsense", .cert_dir = dir},
                                &other, &err),
        0);
    ctrl_webhook_server *bad = other;
    cr_assert_eq(ctrl_webhook_server_start(bad, &err), CTRL_ERR_ARG);
    ctrl_webhook_server_free(bad);
    ctrl_error_deinit(&err);
}

/* ---- with fakeapi: installed, called on writes, run by the manager ------- */

static void quiet(const char *line, void *user)
{
    (void)line, (void)user;
}

typedef struct runner {
    pthread_t th;
    ctrl_manager *mgr;
    int rc;
} runner;

static void *run_mgr(void *ud)
{
    runner *r = ud;
    r->rc = ctrl_manager_start(r->mgr, NULL);
    return NULL;
}

static const char widget_crd[] =
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
    "\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{\"group\":\"example.com\","
    "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\","
    "\"kind\":\"Widget\",\"listKind\":\"WidgetList\"},\"versions\":[{\"name\":\"v1\","
    "\"served\":true,\"storage\":true,\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","
    "\"properties\":{\"spec\":{\"type\":\"object\",\"properties\":{\"color\":{\"type\":"
    "\"string\"},\"size\":{\"type\":\"integer\"},\"tags\":{\"type\":\"array\",\"items\":"
    "{\"type\":\"string\"}}}}}}}}]}}";

Test(webhook_server, installed_into_fakeapi_and_run_by_the_manager)
{
    fakeapi_server *api;
    cr_assert_eq(fakeapi_start(&(fakeapi_options){0}, &api), 0);
    ctrl_config *cfg;
    ctrl_error err = {0};
    cr_assert_eq(ctrl_config_from_url(fakeapi_url(api), &cfg, &err), 0);
    ctrl_manager *mgr;
    cr_assert_eq(
        ctrl_manager_new_for_config(cfg,
                                    &(ctrl_manager_options){.metrics_addr = "0",
                                                            .health_probe_addr = "127.0.0.1:0",
                                                            .log_sink = quiet},
                                    &mgr, &err),
        0, "%s", err.message);
    cr_assert_eq(ctrl_manager_add_webhook_server(mgr, ws), 0);
    ctrl_client *c = ctrl_manager_client(mgr);
    json_t *crd = json_loads(widget_crd, 0, NULL);
    cr_assert_eq(ctrl_client_create(c, crd, NULL, NULL, &err), 0, "%s", err.message);
    json_decref(crd);

    runner r = {.mgr = mgr};
    pthread_create(&r.th, NULL, run_mgr, &r);
    for (int i = 0; i < 500 && !ctrl_webhook_server_port(ws); i++)
        usleep(10000);
    cr_assert_neq(ctrl_webhook_server_port(ws), 0, "the manager started the server");
    /* Its readiness check is on the manager's /readyz. */
    char rurl[200];
    snprintf(rurl, sizeof rurl, "http://127.0.0.1:%d/readyz/webhook",
             ctrl_manager_health_port(mgr));
    long rcode = 0;
    for (int i = 0; i < 200 && rcode != 200; i++) {
        CURL *h = curl_easy_init();
        buf b = {0};
        curl_easy_setopt(h, CURLOPT_URL, rurl);
        curl_easy_setopt(h, CURLOPT_PROXY, "");
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
        if (curl_easy_perform(h) == CURLE_OK)
            curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &rcode);
        curl_easy_cleanup(h);
        free(b.p);
        if (rcode != 200)
            usleep(10000);
    }
    cr_assert_eq(rcode, 200, "GET %s", rurl);
    cr_assert_eq(ctrl_webhook_install_server(c, ws, "test-webhooks", "127.0.0.1", tls.ca_pem, &err),
                 0, "%s", err.message);
    /* Installing again replaces the configurations. */
    cr_assert_eq(ctrl_webhook_install_server(c, ws, "test-webhooks", "127.0.0.1", tls.ca_pem, &err),
                 0, "%s", err.message);

    /* kubebuilder's manifests, with service references, rewritten to the
     * local server: the same webhooks as the ones built from the server. */
    char manifest[600];
    snprintf(manifest, sizeof manifest, "%s/manifests.yaml", dir);
    FILE *mf = fopen(manifest, "w");
    cr_assert(mf);
    fputs("apiVersion: v1\nkind: Namespace\nmetadata: {name: ignored}\n---\n"
          "apiVersion: admissionregistration.k8s.io/v1\n"
          "kind: ValidatingWebhookConfiguration\n"
          "metadata: {name: from-manifest}\n"
          "webhooks:\n"
          "- name: vwidget.kb.io\n"
          "  admissionReviewVersions: [v1]\n"
          "  sideEffects: None\n"
          "  clientConfig:\n"
          "    service: {name: webhook-service, namespace: system,\n"
          "              path: /validate-example-com-v1-widget}\n"
          "  rules:\n"
          "  - {operations: [UPDATE], apiGroups: [example.com], apiVersions: [v1],\n"
          "     resources: [widgets]}\n",
          mf);
    fclose(mf);
    char base[100];
    snprintf(base, sizeof base, "https://127.0.0.1:%d", ctrl_webhook_server_port(ws));
    cr_assert_eq(ctrl_webhook_install_files(c, (const char *const[]){manifest, NULL}, base,
                                            tls.ca_pem, &err),
                 0, "%s", err.message);
    json_t *installed = NULL;
    cr_assert_eq(ctrl_client_get(c, "admissionregistration.k8s.io/v1",
                                 "ValidatingWebhookConfiguration", NULL, "from-manifest",
                                 &installed, &err),
                 0, "%s", err.message);
    json_t *cc =
        json_object_get(json_array_get(json_object_get(installed, "webhooks"), 0), "clientConfig");
    char want_url[200];
    snprintf(want_url, sizeof want_url, "%s/validate-example-com-v1-widget", base);
    cr_assert_str_eq(json_string_value(json_object_get(cc, "url")), want_url);
    cr_assert_null(json_object_get(cc, "service"));
    cr_assert(json_string_length(json_object_get(cc, "caBundle")) > 100);
    json_decref(installed);
    cr_assert(ctrl_client_get(c, "v1", "Namespace", NULL, "ignored", &installed, &err) ==
                  CTRL_ERR_NOT_FOUND,
              "documents of other kinds are not written");
    const char *missing[] = {"/nonexistent/manifests.yaml", NULL};
    cr_assert_eq(ctrl_webhook_install_files(c, missing, base, tls.ca_pem, &err), CTRL_ERR_IO);
    cr_assert(strstr(err.message, "/nonexistent/manifests.yaml"), "%s", err.message);

    json_t *red = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion", "example.com/v1",
                            "kind", "Widget", "metadata", "name", "red", "namespace", "default",
                            "spec", "color", "red");
    int rc = ctrl_client_create(c, red, NULL, NULL, &err);
    cr_assert_eq(rc, CTRL_ERR_FORBIDDEN, "%d %s", rc, err.message);
    cr_assert_str_eq(err.message,
                     "admission webhook \"vwidget.example.com.test-webhooks\" denied the "
                     "request: only blue widgets, not red");
    json_decref(red);

    json_t *blue =
        json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:s}}", "apiVersion", "example.com/v1",
                  "kind", "Widget", "metadata", "name", "blue", "namespace", "default", "labels",
                  "keep", "1", "spec", "color", "blue");
    json_t *out = NULL;
    cr_assert_eq(ctrl_client_create(c, blue, NULL, &out, &err), 0, "%s", err.message);
    json_t *spec = json_object_get(out, "spec");
    cr_assert_str_eq(json_string_value(json_array_get(json_object_get(spec, "tags"), 0)),
                     "default");
    cr_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(json_object_get(out, "metadata"), "labels"), "defaulted")),
                     "yes");
    json_decref(out);
    json_decref(blue);
    /* The validator also sees deletes. */
    rc = ctrl_client_delete(c, "example.com/v1", "Widget", "default", "blue", NULL, NULL, &err);
    cr_assert_eq(rc, CTRL_ERR_FORBIDDEN, "%s", err.message);
    cr_assert(strstr(err.message, "widget blue is kept"), "%s", err.message);

    ctrl_manager_stop(mgr);
    pthread_join(r.th, NULL);
    cr_assert_eq(r.rc, 0);
    cr_assert_eq(ctrl_webhook_server_port(ws), 0, "stopped with the manager");
    ctrl_manager_free(mgr);
    ctrl_config_free(cfg);
    ctrl_error_deinit(&err);
    fakeapi_stop(api);
}

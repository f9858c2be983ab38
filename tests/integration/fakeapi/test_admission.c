/*
 * test_admission.c - fakeapi calling admission webhooks: which webhooks a
 * request calls (rules, scope, namespace and object selectors), the
 * AdmissionReview they get, and what their answers do (denial Status,
 * JSONPatch, warnings, failurePolicy on unreachable, hanging and broken
 * webhooks, dry runs). The webhooks are a stub served here over TLS with a
 * throw-away CA (tlscert.h), on libmicrohttpd with a thread per connection.
 */
#include <criterion/criterion.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "apitest.h"
#include "decode.h"
#include "tlscert.h"

/* ---- the webhook stub ---------------------------------------------------- */

static struct MHD_Daemon *hook_mhd;
static fakeapi__tls_material tls;
static char ca_b64[8192];
static int hook_port;
static pthread_mutex_t hook_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hook_cv = PTHREAD_COND_INITIALIZER;
static json_t *reviews;   /* every request received: [{"path", "review"}] */
static bool hang_release; /* under hook_mu: a /hang call may answer */
static int hanging;       /* under hook_mu: /hang calls waiting */

typedef struct body {
    char *p;
    size_t n;
} body;

static json_t *answer_for(const char *path, const json_t *review)
{
    const char *uid = json_string_value(json_object_get(json_object_get(review, "request"), "uid"));
    json_t *r = json_pack("{s:s, s:b}", "uid", uid ? uid : "", "allowed", 1);
    if (!strcmp(path, "/deny")) {
        json_object_set_new(r, "allowed", json_false());
        json_object_set_new(r, "status",
                            json_pack("{s:i, s:s, s:s}", "code", 403, "reason", "Forbidden",
                                      "message", "widgets must be blue"));
    } else if (!strcmp(path, "/deny-bare")) {
        json_object_set_new(r, "allowed", json_false());
    } else if (!strcmp(path, "/annotate")) {
        const char *patch = "[{\"op\":\"add\",\"path\":\"/metadata/annotations\","
                            "\"value\":{\"hooked\":\"yes\"}}]";
        size_t len;
        char *b64 = fakeapi__base64_encode(patch, strlen(patch), &len);
        json_object_set_new(r, "patch", json_string(b64));
        json_object_set_new(r, "patchType", json_string("JSONPatch"));
        free(b64);
    } else if (!strcmp(path, "/warn")) {
        json_object_set_new(r, "warnings", json_pack("[s, s]", "careful: one", "two"));
    } else if (!strcmp(path, "/baduid")) {
        json_object_set_new(r, "uid", json_string("not-the-uid"));
    }
    return json_pack("{s:s, s:s, s:o}", "apiVersion", "admission.k8s.io/v1", "kind",
                     "AdmissionReview", "response", r);
}

static enum MHD_Result on_hook(void *cls, struct MHD_Connection *conn, const char *url,
                               const char *method, const char *version, const char *data,
                               size_t *size, void **ctx)
{
    (void)cls, (void)method, (void)version;
    body *b = *ctx;
    if (!b) {
        *ctx = calloc(1, sizeof(body));
        return MHD_YES;
    }
    if (*size) {
        b->p = realloc(b->p, b->n + *size + 1);
        memcpy(b->p + b->n, data, *size);
        b->n += *size;
        b->p[b->n] = 0;
        *size = 0;
        return MHD_YES;
    }
    json_t *review = b->p ? json_loads(b->p, 0, NULL) : NULL;
    pthread_mutex_lock(&hook_mu);
    json_array_append_new(reviews, json_pack("{s:s, s:O?}", "path", url, "review", review));
    if (!strcmp(url, "/hang")) {
        hanging++;
        pthread_cond_broadcast(&hook_cv);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 8;
        while (!hang_release && pthread_cond_timedwait(&hook_cv, &hook_mu, &until) == 0)
            ;
        hanging--;
    }
    pthread_mutex_unlock(&hook_mu);
    char *text;
    unsigned status = 200;
    if (!strcmp(url, "/garbage"))
        text = strdup("this is not json");
    else if (!strcmp(url, "/status500")) {
        text = strdup("");
        status = 500;
    } else {
        json_t *a = answer_for(url, review);
        text = json_dumps(a, JSON_COMPACT);
        json_decref(a);
    }
    json_decref(review);
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ret;
}

static void on_hook_done(void *cls, struct MHD_Connection *conn, void **ctx,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls, (void)conn, (void)toe;
    body *b = *ctx;
    if (b) {
        free(b->p);
        free(b);
    }
    *ctx = NULL;
}

static void hook_setup(void)
{
    setup();
    cr_assert_eq(fakeapi__tls_generate((int64_t)time(NULL) * 1000000000, &tls, NULL, 0), 0);
    size_t len;
    char *b64 = fakeapi__base64_encode(tls.ca_pem, strlen(tls.ca_pem), &len);
    cr_assert(b64 && len < sizeof ca_b64);
    memcpy(ca_b64, b64, len + 1);
    free(b64);
    reviews = json_array();
    hang_release = false;
    hook_mhd = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                                    MHD_USE_TLS | MHD_USE_ITC,
                                0, NULL, NULL, on_hook, NULL, MHD_OPTION_HTTPS_MEM_KEY,
                                tls.server_key_pem, MHD_OPTION_HTTPS_MEM_CERT, tls.server_cert_pem,
                                MHD_OPTION_NOTIFY_COMPLETED, on_hook_done, NULL, MHD_OPTION_END);
    cr_assert(hook_mhd);
    hook_port = MHD_get_daemon_info(hook_mhd, MHD_DAEMON_INFO_BIND_PORT)->port;
}

static void hook_teardown(void)
{
    pthread_mutex_lock(&hook_mu);
    hang_release = true;
    pthread_cond_broadcast(&hook_cv);
    pthread_mutex_unlock(&hook_mu);
    teardown();
    MHD_stop_daemon(hook_mhd);
    fakeapi__tls_free(&tls);
    json_decref(reviews);
}

TestSuite(admission, .init = hook_setup, .fini = hook_teardown, .timeout = 60);

/* ---- helpers ------------------------------------------------------------- */

#define VWC "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
#define MWC "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"

/* A configuration with one webhook named name calling path on the stub
 * (or url when it starts with "https://"), on rules (a JSON array, NULL:
 * every operation on configmaps); extra fields (a JSON object) merged in. */
static void hook_cfg(bool mutating, const char *name, const char *path, const char *rules,
                     const char *extra)
{
    char url[300];
    if (!strncmp(path, "https://", 8))
        snprintf(url, sizeof url, "%s", path);
    else
        snprintf(url, sizeof url, "https://127.0.0.1:%d%s", hook_port, path);
    json_t *r = json_loads(rules ? rules
                                 : "[{\"operations\":[\"*\"],\"apiGroups\":[\"\"],"
                                   "\"apiVersions\":[\"v1\"],\"resources\":[\"configmaps\"]}]",
                           0, NULL);
    cr_assert(r, "rules parse");
    json_t *w = json_pack("{s:s, s:{s:s, s:s}, s:o, s:s, s:[s]}", "name", name, "clientConfig",
                          "url", url, "caBundle", ca_b64, "rules", r, "sideEffects", "None",
                          "admissionReviewVersions", "v1");
    if (extra) {
        json_t *e = json_loads(extra, 0, NULL);
        cr_assert(e, "extra parse");
        json_object_update(w, e);
        json_decref(e);
    }
    json_t *cfg = json_pack(
        "{s:s, s:s, s:{s:s}, s:[o]}", "apiVersion", "admissionregistration.k8s.io/v1", "kind",
        mutating ? "MutatingWebhookConfiguration" : "ValidatingWebhookConfiguration", "metadata",
        "name", name, "webhooks", w);
    char *text = json_dumps(cfg, JSON_COMPACT);
    json_decref(req(201, "POST", mutating ? MWC : VWC, text));
    free(text);
    json_decref(cfg);
}

static size_t calls_to(const char *path)
{
    size_t n = 0, i;
    json_t *e;
    pthread_mutex_lock(&hook_mu);
    json_array_foreach(reviews, i, e)
    {
        n += !strcmp(json_string_value(json_object_get(e, "path")), path);
    }
    pthread_mutex_unlock(&hook_mu);
    return n;
}

/* The last review sent to path (a new reference). */
static json_t *last_review(const char *path)
{
    json_t *found = NULL;
    size_t i;
    json_t *e;
    pthread_mutex_lock(&hook_mu);
    json_array_foreach(reviews, i, e)
    {
        if (!strcmp(json_string_value(json_object_get(e, "path")), path))
            found = json_object_get(e, "review");
    }
    json_incref(found);
    pthread_mutex_unlock(&hook_mu);
    return found;
}

#define CM_BODY(n) S("{'metadata':{'name':'%s'},'data':{'a':'1'}}", n)

/* ---- tests ------------------------------------------------------------------- */

Test(admission, denial_is_the_webhooks_status_and_nothing_is_stored)
{
    hook_cfg(false, "deny.example.com", "/deny", NULL, NULL);
    json_t *st = req_fail(403, "Forbidden", "POST", CM("default"), CM_BODY("x"));
    cr_assert_str_eq(jstr(st, "message"),
                     "admission webhook \"deny.example.com\" denied the request: widgets must "
                     "be blue");
    cr_assert_eq(jint(st, "code"), 403);
    json_decref(st);
    cr_assert(gone("/api/v1/namespaces/default/configmaps/x"));
    cr_assert_eq(calls_to("/deny"), 1);
}

Test(admission, denial_without_status_is_400_without_explanation)
{
    hook_cfg(false, "bare.example.com", "/deny-bare", NULL, NULL);
    /* As kube-apiserver: code at least 400, the webhook's (empty) reason kept. */
    long code = 0;
    json_t *st = req_full(400, "POST", CM("default"), NULL, CM_BODY("x"), &code);
    cr_assert_str_eq(jstr(st, "status"), "Failure");
    cr_assert_eq(jint(st, "code"), 400);
    cr_assert_null(jget(st, "reason"));
    cr_assert_str_eq(jstr(st, "message"),
                     "admission webhook \"bare.example.com\" denied the request without "
                     "explanation");
    json_decref(st);
}

Test(admission, review_carries_the_request)
{
    hook_cfg(false, "allow.example.com", "/allow", NULL, NULL);
    json_decref(req(201, "POST", S("%s?fieldManager=me", CM("default")), CM_BODY("x")));
    json_t *rv = last_review("/allow");
    cr_assert(rv);
    cr_assert_str_eq(jstr(rv, "apiVersion"), "admission.k8s.io/v1");
    cr_assert_str_eq(jstr(rv, "kind"), "AdmissionReview");
    cr_assert_eq(strlen(jstr(rv, "request.uid")), 36);
    cr_assert_str_eq(jstr(rv, "request.kind.version"), "v1");
    cr_assert_str_eq(jstr(rv, "request.kind.kind"), "ConfigMap");
    cr_assert_str_eq(jstr(rv, "request.kind.group"), "");
    cr_assert_str_eq(jstr(rv, "request.resource.resource"), "configmaps");
    cr_assert_str_eq(jstr(rv, "request.requestKind.kind"), "ConfigMap");
    cr_assert_str_eq(jstr(rv, "request.requestResource.resource"), "configmaps");
    cr_assert_str_eq(jstr(rv, "request.operation"), "CREATE");
    cr_assert_str_eq(jstr(rv, "request.name"), "x");
    cr_assert_str_eq(jstr(rv, "request.namespace"), "default");
    cr_assert_str_eq(jstr(rv, "request.object.data.a"), "1");
    cr_assert(json_is_null(jget(rv, "request.oldObject")));
    cr_assert(json_is_false(jget(rv, "request.dryRun")));
    cr_assert_str_eq(jstr(rv, "request.options.kind"), "CreateOptions");
    cr_assert_str_eq(jstr(rv, "request.options.fieldManager"), "me");
    cr_assert_str_eq(jstr(rv, "request.userInfo.username"), "fakeapi-admin");
    json_decref(rv);

    /* An update sends the stored object as oldObject; a patch's options are PatchOptions. */
    json_decref(req_ct(200, "PATCH", "/api/v1/namespaces/default/configmaps/x",
                       "application/merge-patch+json", "{'data':{'a':'2'}}"));
    rv = last_review("/allow");
    cr_assert_str_eq(jstr(rv, "request.operation"), "UPDATE");
    cr_assert_str_eq(jstr(rv, "request.object.data.a"), "2");
    cr_assert_str_eq(jstr(rv, "request.oldObject.data.a"), "1");
    cr_assert_str_eq(jstr(rv, "request.options.kind"), "PatchOptions");
    json_decref(rv);
    /* A PUT without the server's fields: validating webhooks see them kept. */
    json_decref(req(200, "PUT", "/api/v1/namespaces/default/configmaps/x",
                    "{'metadata':{'name':'x'},'data':{'a':'3'}}"));
    rv = last_review("/allow");
    cr_assert_str_eq(jstr(rv, "request.object.data.a"), "3");
    cr_assert_str_eq(jstr(rv, "request.object.metadata.uid"),
                     jstr(rv, "request.oldObject.metadata.uid"));
    cr_assert_not_null(jstr(rv, "request.object.metadata.creationTimestamp"));
    json_decref(rv);

    json_decref(req(200, "DELETE", "/api/v1/namespaces/default/configmaps/x", NULL));
    rv = last_review("/allow");
    cr_assert_str_eq(jstr(rv, "request.operation"), "DELETE");
    cr_assert(json_is_null(jget(rv, "request.object")));
    cr_assert_str_eq(jstr(rv, "request.oldObject.data.a"), "3");
    cr_assert_str_eq(jstr(rv, "request.options.kind"), "DeleteOptions");
    json_decref(rv);
}

Test(admission, rules_pick_operations_resources_and_scope)
{
    hook_cfg(false, "updates.example.com", "/deny",
             "[{\"operations\":[\"UPDATE\"],\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],"
             "\"resources\":[\"configmaps\"]}]",
             NULL);
    hook_cfg(false, "cluster.example.com", "/deny-bare",
             "[{\"operations\":[\"*\"],\"apiGroups\":[\"*\"],\"apiVersions\":[\"*\"],"
             "\"resources\":[\"*\"],\"scope\":\"Cluster\"}]",
             NULL);
    hook_cfg(false, "status.example.com", "/allow",
             "[{\"operations\":[\"*\"],\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],"
             "\"resources\":[\"pods/status\"]}]",
             NULL);
    /* A create of a namespaced object: neither the UPDATE rule nor the Cluster scope. */
    json_decref(req(201, "POST", CM("default"), CM_BODY("x")));
    cr_assert_eq(calls_to("/deny"), 0);
    cr_assert_eq(calls_to("/deny-bare"), 0);
    json_decref(req_fail(403, "Forbidden", "PUT", "/api/v1/namespaces/default/configmaps/x",
                         "{'metadata':{'name':'x'},'data':{'a':'9'}}"));
    cr_assert_eq(calls_to("/deny"), 1);
    /* A Namespace is cluster-scoped. */
    json_decref(req(400, "POST", "/api/v1/namespaces", "{'metadata':{'name':'other'}}"));
    /* "pods/status" is not "pods". */
    json_decref(req(201, "POST", "/api/v1/namespaces/default/pods",
                    "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','image':'i'}]}}"));
    cr_assert_eq(calls_to("/allow"), 0);
    json_decref(req(200, "PUT", "/api/v1/namespaces/default/pods/p/status",
                    "{'metadata':{'name':'p'},'status':{'phase':'Running'}}"));
    cr_assert_eq(calls_to("/allow"), 1);
    json_t *rv = last_review("/allow");
    cr_assert_str_eq(jstr(rv, "request.subResource"), "status");
    json_decref(rv);
}

Test(admission, namespace_and_object_selectors)
{
    hook_cfg(false, "ns.example.com", "/deny", NULL,
             "{\"namespaceSelector\":{\"matchLabels\":{\"guarded\":\"yes\"}}}");
    hook_cfg(false, "obj.example.com", "/deny-bare", NULL,
             "{\"objectSelector\":{\"matchExpressions\":[{\"key\":\"check\","
             "\"operator\":\"Exists\"}]}}");
    json_decref(req(201, "POST", "/api/v1/namespaces",
                    "{'metadata':{'name':'guarded','labels':{'guarded':'yes'}}}"));
    json_decref(req(201, "POST", CM("default"), CM_BODY("free")));
    json_decref(req_fail(403, "Forbidden", "POST", CM("guarded"), CM_BODY("x")));
    json_decref(req(400, "POST", CM("default"), "{'metadata':{'name':'y','labels':{'check':''}}}"));
    cr_assert_eq(calls_to("/deny"), 1);
    cr_assert_eq(calls_to("/deny-bare"), 1);
}

Test(admission, mutating_patch_is_applied_before_validation)
{
    hook_cfg(true, "annotate.example.com", "/annotate", NULL, NULL);
    hook_cfg(false, "allow.example.com", "/allow", NULL, NULL);
    json_t *o = req(201, "POST", CM("default"), CM_BODY("x"));
    cr_assert_str_eq(jstr(o, "metadata.annotations.hooked"), "yes");
    json_decref(o);
    o = req(200, "GET", "/api/v1/namespaces/default/configmaps/x", NULL);
    cr_assert_str_eq(jstr(o, "metadata.annotations.hooked"), "yes");
    json_decref(o);
    json_t *rv = last_review("/allow");
    cr_assert_str_eq(jstr(rv, "request.object.metadata.annotations.hooked"), "yes");
    json_decref(rv);
    /* The mutating webhook did not see the annotation it adds. */
    rv = last_review("/annotate");
    cr_assert_null(jget(rv, "request.object.metadata.annotations"));
    json_decref(rv);
}

Test(admission, unreachable_webhook_fail_and_ignore)
{
    hook_cfg(false, "ignored.example.com", "https://127.0.0.1:1/x", NULL,
             "{\"failurePolicy\":\"Ignore\"}");
    json_decref(req(201, "POST", CM("default"), CM_BODY("a")));
    hook_cfg(false, "failing.example.com", "https://127.0.0.1:1/x", NULL,
             "{\"failurePolicy\":\"Fail\"}");
    json_t *st = req_fail(500, "InternalError", "POST", CM("default"), CM_BODY("b"));
    cr_assert_str_eq(jstr(st, "message"),
                     "Internal error occurred: failed calling webhook \"failing.example.com\": "
                     "failed to call webhook: Post \"https://127.0.0.1:1/x?timeout=10s\": dial "
                     "tcp 127.0.0.1:1: connect: connection refused");
    cr_assert_str_eq(jstr(st, "details.causes.0.message"),
                     "failed calling webhook \"failing.example.com\": failed to call webhook: "
                     "Post \"https://127.0.0.1:1/x?timeout=10s\": dial tcp 127.0.0.1:1: connect: "
                     "connection refused");
    json_decref(st);
    cr_assert(gone("/api/v1/namespaces/default/configmaps/b"));
}

Test(admission, broken_answers_follow_the_failure_policy)
{
    hook_cfg(false, "garbage.example.com", "/garbage", NULL, NULL);
    json_t *st = req_fail(500, "InternalError", "POST", CM("default"), CM_BODY("a"));
    cr_assert(strstr(jstr(st, "message"), "received invalid webhook response"));
    json_decref(st);
    json_decref(req(200, "DELETE", VWC "/garbage.example.com", NULL));
    hook_cfg(false, "baduid.example.com", "/baduid", NULL, NULL);
    st = req_fail(500, "InternalError", "POST", CM("default"), CM_BODY("a"));
    cr_assert(strstr(jstr(st, "message"), "expected response.uid="), "%s", jstr(st, "message"));
    json_decref(st);
    json_decref(req(200, "DELETE", VWC "/baduid.example.com", NULL));
    hook_cfg(false, "five.example.com", "/status500", NULL, "{\"failurePolicy\":\"Ignore\"}");
    json_decref(req(201, "POST", CM("default"), CM_BODY("a")));
    cr_assert_eq(calls_to("/status500"), 1);
}

Test(admission, untrusted_certificate_fails)
{
    json_t *w = json_pack("{s:s, s:{s:s}, s:[{s:[s], s:[s], s:[s], s:[s]}], s:s, s:[s]}", "name",
                          "noca.example.com", "clientConfig", "url",
                          S("https://127.0.0.1:%d/allow", hook_port), "rules", "operations", "*",
                          "apiGroups", "", "apiVersions", "v1", "resources", "configmaps",
                          "sideEffects", "None", "admissionReviewVersions", "v1");
    json_t *cfg = json_pack(
        "{s:s, s:s, s:{s:s}, s:[o]}", "apiVersion", "admissionregistration.k8s.io/v1", "kind",
        "ValidatingWebhookConfiguration", "metadata", "name", "noca", "webhooks", w);
    char *text = json_dumps(cfg, JSON_COMPACT);
    json_decref(req(201, "POST", VWC, text));
    free(text);
    json_decref(cfg);
    json_t *st = req_fail(500, "InternalError", "POST", CM("default"), CM_BODY("a"));
    cr_assert(strstr(jstr(st, "message"), "tls: failed to verify certificate"), "%s",
              jstr(st, "message"));
    json_decref(st);
    cr_assert_eq(calls_to("/allow"), 0);
}

static atomic_bool post_returned;

static void *post_cm(void *ud)
{
    long status = 0;
    json_t *b = req_full(0, "POST", CM("default"), NULL, ud, &status);
    json_decref(b);
    atomic_store(&post_returned, true);
    return (void *)status;
}

Test(admission, hanging_webhook_times_out_and_blocks_nothing_else)
{
    hook_cfg(false, "hang.example.com", "/hang", NULL, "{\"timeoutSeconds\":1}");
    json_t *st = req_fail(500, "InternalError", "POST", CM("default"), CM_BODY("a"));
    cr_assert_str_eq(jstr(st, "message"),
                     S("Internal error occurred: failed calling webhook \"hang.example.com\": "
                       "failed to call webhook: Post \"https://127.0.0.1:%d/hang?timeout=1s\": "
                       "context deadline exceeded",
                       hook_port));
    json_decref(st);
    /* Under failurePolicy Ignore the timed-out webhook is skipped. */
    json_decref(req(200, "DELETE", VWC "/hang.example.com", NULL));
    hook_cfg(false, "hangignored.example.com", "/hang", NULL,
             "{\"timeoutSeconds\":1, \"failurePolicy\":\"Ignore\"}");
    json_decref(req(201, "POST", CM("default"), CM_BODY("ignored")));
    json_decref(req(200, "DELETE", VWC "/hangignored.example.com", NULL));
    /* With a long timeout, a held webhook call holds only its own request. */
    hook_cfg(false, "hang2.example.com", "/hang", NULL,
             "{\"timeoutSeconds\":20, \"namespaceSelector\":{\"matchExpressions\":[{\"key\":"
             "\"kubernetes.io/metadata.name\",\"operator\":\"NotIn\",\"values\":"
             "[\"elsewhere\"]}]}}");
    json_decref(req(201, "POST", "/api/v1/namespaces", "{'metadata':{'name':'elsewhere'}}"));
    size_t before = calls_to("/hang");
    pthread_t th;
    atomic_store(&post_returned, false);
    pthread_create(&th, NULL, post_cm, (void *)CM_BODY("held"));
    /* Until the stub has the held call. */
    while (calls_to("/hang") == before)
        usleep(1000);
    /* The held request waits in the webhook; others are served meanwhile. */
    for (int i = 0; i < 6; i++) {
        json_decref(req(200, "GET", "/api/v1/namespaces", NULL));
        json_decref(req(201, "POST", CM("elsewhere"), CM_BODY(S("free%d", i))));
    }
    cr_assert(!atomic_load(&post_returned), "the held request is still waiting for its webhook");
    pthread_mutex_lock(&hook_mu);
    hang_release = true;
    pthread_cond_broadcast(&hook_cv);
    pthread_mutex_unlock(&hook_mu);
    void *status;
    pthread_join(th, &status);
    cr_assert_eq((long)status, 201);
}

Test(admission, dry_run_reaches_side_effect_free_webhooks)
{
    /* A v1 configuration can only say None or NoneOnDryRun (Some is refused
     * on create, below), so every webhook may see a dry run, with dryRun set. */
    hook_cfg(false, "dry.example.com", "/deny", NULL, "{\"sideEffects\":\"NoneOnDryRun\"}");
    json_decref(
        req_fail(403, "Forbidden", "POST", S("%s?dryRun=All", CM("default")), CM_BODY("x")));
    json_t *rv = last_review("/deny");
    cr_assert(json_is_true(jget(rv, "request.dryRun")));
    cr_assert_str_eq(jstr(rv, "request.options.dryRun.0"), "All");
    json_decref(rv);
}

Test(admission, configurations_are_defaulted)
{
    hook_cfg(true, "defaults.example.com", "/allow",
             "[{\"operations\":[\"CREATE\"],\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],"
             "\"resources\":[\"configmaps\"]}]",
             NULL);
    json_t *o = req(200, "GET", MWC "/defaults.example.com", NULL);
    cr_assert_str_eq(jstr(o, "webhooks.0.failurePolicy"), "Fail");
    cr_assert_str_eq(jstr(o, "webhooks.0.matchPolicy"), "Equivalent");
    cr_assert_str_eq(jstr(o, "webhooks.0.reinvocationPolicy"), "Never");
    cr_assert_eq(jint(o, "webhooks.0.timeoutSeconds"), 10);
    cr_assert(json_is_object(jget(o, "webhooks.0.namespaceSelector")));
    cr_assert(json_is_object(jget(o, "webhooks.0.objectSelector")));
    cr_assert_str_eq(jstr(o, "webhooks.0.rules.0.scope"), "*");
    json_decref(o);
}

/* POST a configuration with one webhook w (JSON); the 422's Status. */
static json_t *bad_cfg(const char *w)
{
    return req_fail(422, "Invalid", "POST", VWC,
                    S("{'apiVersion':'admissionregistration.k8s.io/v1',"
                      "'kind':'ValidatingWebhookConfiguration','metadata':{'name':'bad'},"
                      "'webhooks':[%s]}",
                      w));
}

Test(admission, invalid_configurations_are_refused)
{
    json_t *st = bad_cfg("{'name':'a.b.c','sideEffects':'Some','admissionReviewVersions':['v1'],"
                         "'clientConfig':{'url':'https://127.0.0.1/x'}}");
    cr_assert_str_eq(jstr(st, "message"),
                     "ValidatingWebhookConfiguration.admissionregistration.k8s.io \"bad\" is "
                     "invalid: webhooks[0].sideEffects: Unsupported value: \"Some\": supported "
                     "values: \"None\", \"NoneOnDryRun\"");
    json_decref(st);
    st = bad_cfg("{'name':'short.name','clientConfig':{'url':'http://h:1/p?q=1'},"
                 "'timeoutSeconds':31,'rules':[{'operations':['EAT'],'apiGroups':[''],"
                 "'apiVersions':['v1'],'resources':[]}]}");
    json_t *causes = jget(st, "details.causes");
    const char *want[][2] = {
        {"webhooks[0].name",
         "Invalid value: \"short.name\": should be a domain with at least three "
         "segments separated by dots"},
        {"webhooks[0].rules[0].operations[0]",
         "Unsupported value: \"EAT\": supported values: \"*\", \"CONNECT\", \"CREATE\", "
         "\"DELETE\", \"UPDATE\""},
        {"webhooks[0].rules[0].resources", "Required value"},
        {"webhooks[0].sideEffects", "Required value: must specify one of None, NoneOnDryRun"},
        {"webhooks[0].timeoutSeconds",
         "Invalid value: 31: the timeout value must be between 1 and 30 seconds"},
        {"webhooks[0].clientConfig.url", "Invalid value: \"http\": 'https' is the only allowed URL "
                                         "scheme; desired format: https://host[/path]"},
        {"webhooks[0].clientConfig.url",
         "Invalid value: \"q=1\": query parameters are not permitted in the URL"},
        {"webhooks[0].admissionReviewVersions", "Required value: must specify one of v1, v1beta1"},
    };
    size_t n = sizeof want / sizeof want[0];
    cr_assert_eq(json_array_size(causes), n, "%s", jstr(st, "message"));
    for (size_t i = 0; i < n; i++) {
        json_t *c = json_array_get(causes, i);
        cr_assert_str_eq(jstr(c, "field"), want[i][0]);
        cr_assert_str_eq(jstr(c, "message"), want[i][1]);
    }
    json_decref(st);
    st = bad_cfg("{'name':'a.b.c','sideEffects':'None','admissionReviewVersions':['v2'],"
                 "'clientConfig':{'url':'https://h/x','service':{'name':'s','namespace':'n'}}},"
                 "{'name':'a.b.c','sideEffects':'None','admissionReviewVersions':['v1'],"
                 "'clientConfig':{'service':{'namespace':'n','path':'no-slash','port':0}}}");
    causes = jget(st, "details.causes");
    const char *want2[][2] = {
        {"webhooks[0].clientConfig", "Required value: exactly one of url or service is required"},
        {"webhooks[0].admissionReviewVersions",
         "Invalid value: []string{\"v2\"}: must include at least one of v1, v1beta1"},
        {"webhooks[1].clientConfig.service.name", "Required value: service name is required"},
        {"webhooks[1].clientConfig.service.port",
         "Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive"},
        {"webhooks[1].clientConfig.service.path",
         "Invalid value: \"no-slash\": must start with a '/'"},
        {"webhooks[1].name", "Duplicate value: \"a.b.c\""},
    };
    n = sizeof want2 / sizeof want2[0];
    cr_assert_eq(json_array_size(causes), n, "%s", jstr(st, "message"));
    for (size_t i = 0; i < n; i++) {
        json_t *c = json_array_get(causes, i);
        cr_assert_str_eq(jstr(c, "field"), want2[i][0]);
        cr_assert_str_eq(jstr(c, "message"), want2[i][1]);
    }
    json_decref(st);
    cr_assert(gone(VWC "/bad"));
}

Test(admission, delete_denied_keeps_the_object)
{
    json_decref(req(201, "POST", CM("default"), CM_BODY("x")));
    hook_cfg(false, "nodelete.example.com", "/deny",
             "[{\"operations\":[\"DELETE\"],\"apiGroups\":[\"\"],\"apiVersions\":[\"v1\"],"
             "\"resources\":[\"configmaps\"]}]",
             NULL);
    json_decref(
        req_fail(403, "Forbidden", "DELETE", "/api/v1/namespaces/default/configmaps/x", NULL));
    json_decref(req(200, "GET", "/api/v1/namespaces/default/configmaps/x", NULL));
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    if (!strncasecmp(p, "Warning:", 8))
        json_array_append_new(ud, json_stringn(p + 8, size * n - 8));
    return size * n;
}

Test(admission, warnings_become_warning_headers)
{
    hook_cfg(false, "warn.example.com", "/warn", NULL, NULL);
    json_t *warnings = json_array();
    CURL *h = curl_easy_init();
    struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(h, CURLOPT_URL, S("%s%s", fakeapi_url(srv), CM("default")));
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, "{\"metadata\":{\"name\":\"w\"}}");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, warnings);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, NULL);
    FILE *devnull = fopen("/dev/null", "w");
    curl_easy_setopt(h, CURLOPT_WRITEDATA, devnull);
    cr_assert_eq(curl_easy_perform(h), CURLE_OK);
    long code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    cr_assert_eq(code, 201);
    fclose(devnull);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    cr_assert_eq(json_array_size(warnings), 2);
    cr_assert(strstr(json_string_value(json_array_get(warnings, 0)), "299 - \"careful: one\""));
    cr_assert(strstr(json_string_value(json_array_get(warnings, 1)), "299 - \"two\""));
    json_decref(warnings);
}

Test(admission, no_configuration_no_call)
{
    json_decref(req(201, "POST", CM("default"), CM_BODY("x")));
    hook_cfg(false, "deny.example.com", "/deny", NULL, NULL);
    json_decref(req_fail(403, "Forbidden", "POST", CM("default"), CM_BODY("y")));
    /* Deleting the configuration stops the calls at once. */
    json_decref(req(200, "DELETE", VWC "/deny.example.com", NULL));
    json_decref(req(201, "POST", CM("default"), CM_BODY("z")));
    cr_assert_eq(calls_to("/deny"), 1);
}

Test(admission, service_reference_resolves_through_endpoints)
{
    /* No Service: the call fails, under failurePolicy Fail. */
    json_t *w =
        json_pack("{s:s, s:{s:{s:s, s:s, s:s, s:i}, s:s}, s:[{s:[s], s:[s], s:[s], "
                  "s:[s]}], s:s, s:[s]}",
                  "name", "svc.example.com", "clientConfig", "service", "namespace", "default",
                  "name", "hooks", "path", "/allow", "port", 443, "caBundle", ca_b64, "rules",
                  "operations", "*", "apiGroups", "", "apiVersions", "v1", "resources",
                  "configmaps", "sideEffects", "None", "admissionReviewVersions", "v1");
    json_t *cfg = json_pack(
        "{s:s, s:s, s:{s:s}, s:[o]}", "apiVersion", "admissionregistration.k8s.io/v1", "kind",
        "ValidatingWebhookConfiguration", "metadata", "name", "svc", "webhooks", w);
    char *text = json_dumps(cfg, JSON_COMPACT);
    json_decref(req(201, "POST", VWC, text));
    free(text);
    json_decref(cfg);
    json_t *st = req_fail(500, "InternalError", "POST", CM("default"), CM_BODY("a"));
    cr_assert(strstr(jstr(st, "message"), "service \"hooks\" not found"), "%s",
              jstr(st, "message"));
    json_decref(st);
    /* A Service whose Endpoints point at the stub: the call reaches it
     * (the stub's certificate names 127.0.0.1, not hooks.default.svc, so
     * TLS refuses the name after connecting there). */
    json_decref(req(201, "POST", "/api/v1/namespaces/default/services",
                    S("{'metadata':{'name':'hooks'},'spec':{'ports':[{'port':443,"
                      "'targetPort':%d}]}}",
                      hook_port)));
    json_decref(req(201, "POST", "/api/v1/namespaces/default/endpoints",
                    S("{'metadata':{'name':'hooks'},'subsets':[{'addresses':[{'ip':'127.0.0.1'}],"
                      "'ports':[{'port':%d}]}]}",
                      hook_port)));
    st = req_fail(500, "InternalError", "POST", CM("default"), CM_BODY("a"));
    cr_assert(
        strstr(jstr(st, "message"), "Post \"https://hooks.default.svc:443/allow?timeout=10s\""),
        "%s", jstr(st, "message"));
    cr_assert(strstr(jstr(st, "message"), "tls: failed to verify certificate"), "%s",
              jstr(st, "message"));
    json_decref(st);
}

/* A CRD served in v1 (stored) and v2. */
static void two_version_crd(void)
{
    json_decref(req(201, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                    "{'apiVersion':'apiextensions.k8s.io/v1','kind':'CustomResourceDefinition',"
                    "'metadata':{'name':'gadgets.example.com'},'spec':{'group':'example.com',"
                    "'scope':'Namespaced','names':{'plural':'gadgets','singular':'gadget',"
                    "'kind':'Gadget','listKind':'GadgetList'},'versions':["
                    "{'name':'v1','served':true,'storage':true,'schema':{'openAPIV3Schema':"
                    "{'type':'object','x-kubernetes-preserve-unknown-fields':true}}},"
                    "{'name':'v2','served':true,'storage':false,'schema':{'openAPIV3Schema':"
                    "{'type':'object','x-kubernetes-preserve-unknown-fields':true}}}]}}"));
    for (int i = 0; i < 100 && gone("/apis/example.com/v2/namespaces/default/gadgets"); i++)
        sleep_ms(20);
}

#define GADGET_RULES                                                                               \
    "[{\"operations\":[\"CREATE\"],\"apiGroups\":[\"example.com\"],\"apiVersions\":[\"v1\"],"      \
    "\"resources\":[\"gadgets\"]}]"

Test(admission, equivalent_versions_match_and_are_converted)
{
    two_version_crd();
    hook_cfg(false, "v1only.example.com", "/allow", GADGET_RULES, NULL);
    json_decref(req(201, "POST", "/apis/example.com/v2/namespaces/default/gadgets",
                    "{'apiVersion':'example.com/v2','kind':'Gadget','metadata':{'name':'g'}}"));
    json_t *rv = last_review("/allow");
    cr_assert(rv, "called for a v2 request");
    cr_assert_str_eq(jstr(rv, "request.kind.version"), "v1");
    cr_assert_str_eq(jstr(rv, "request.requestKind.version"), "v2");
    cr_assert_str_eq(jstr(rv, "request.requestResource.version"), "v2");
    cr_assert_str_eq(jstr(rv, "request.object.apiVersion"), "example.com/v1");
    json_decref(rv);
}

Test(admission, exact_match_policy_skips_other_versions)
{
    two_version_crd();
    hook_cfg(false, "exact.example.com", "/deny", GADGET_RULES, "{\"matchPolicy\":\"Exact\"}");
    json_decref(req(201, "POST", "/apis/example.com/v2/namespaces/default/gadgets",
                    "{'apiVersion':'example.com/v2','kind':'Gadget','metadata':{'name':'g'}}"));
    cr_assert_eq(calls_to("/deny"), 0);
    json_decref(
        req_fail(403, "Forbidden", "POST", "/apis/example.com/v1/namespaces/default/gadgets",
                 "{'apiVersion':'example.com/v1','kind':'Gadget','metadata':{'name':'h'}}"));
}

Test(admission, if_needed_webhooks_are_reinvoked_after_a_later_change)
{
    /* "a-first" runs first (configurations by name) and asks to be called
     * again; "b-annotate" changes the object after it. */
    hook_cfg(true, "a-first.example.com", "/allow", NULL, "{\"reinvocationPolicy\":\"IfNeeded\"}");
    hook_cfg(true, "b-annotate.example.com", "/annotate", NULL, NULL);
    json_decref(req(201, "POST", CM("default"), CM_BODY("x")));
    cr_assert_eq(calls_to("/allow"), 2);
    cr_assert_eq(calls_to("/annotate"), 1);
    json_t *rv = last_review("/allow");
    cr_assert_str_eq(jstr(rv, "request.object.metadata.annotations.hooked"), "yes");
    json_decref(rv);
    /* Without IfNeeded, once. */
    json_decref(req(200, "DELETE", MWC "/a-first.example.com", NULL));
    hook_cfg(true, "a-first.example.com", "/allow", NULL, "{\"reinvocationPolicy\":\"Never\"}");
    json_decref(req(201, "POST", CM("default"), CM_BODY("y")));
    cr_assert_eq(calls_to("/allow"), 3);
}

static void *patch_held(void *ud)
{
    (void)ud;
    long status = 0;
    json_t *b = req_full(0, "PATCH", "/api/v1/namespaces/default/configmaps/x",
                         "application/merge-patch+json",
                         "{'metadata':{'labels':{'hold':'yes'}},'data':{'a':'patched'}}", &status);
    json_decref(b);
    return (void *)status;
}

Test(admission, update_changed_while_webhooks_ran_starts_over)
{
    json_decref(req(201, "POST", CM("default"), CM_BODY("x")));
    hook_cfg(false, "hold.example.com", "/hang", NULL,
             "{\"timeoutSeconds\":20, \"objectSelector\":{\"matchLabels\":{\"hold\":\"yes\"}}}");
    pthread_t th;
    pthread_create(&th, NULL, patch_held, NULL);
    pthread_mutex_lock(&hook_mu);
    while (hanging == 0)
        pthread_cond_wait(&hook_cv, &hook_mu);
    pthread_mutex_unlock(&hook_mu);
    /* Meanwhile another write (which the webhook does not select) changes it. */
    json_decref(req_ct(200, "PATCH", "/api/v1/namespaces/default/configmaps/x",
                       "application/merge-patch+json", "{'data':{'b':'other'}}"));
    pthread_mutex_lock(&hook_mu);
    hang_release = true;
    pthread_cond_broadcast(&hook_cv);
    pthread_mutex_unlock(&hook_mu);
    void *status;
    pthread_join(th, &status);
    cr_assert_eq((long)status, 200);
    /* The held patch was applied again to the new state, and admitted again. */
    cr_assert_eq(calls_to("/hang"), 2);
    json_t *o = req(200, "GET", "/api/v1/namespaces/default/configmaps/x", NULL);
    cr_assert_str_eq(jstr(o, "data.a"), "patched");
    cr_assert_str_eq(jstr(o, "data.b"), "other");
    cr_assert_str_eq(jstr(o, "metadata.labels.hold"), "yes");
    json_decref(o);
}

static void *post_held(void *ud)
{
    (void)ud;
    long status = 0;
    json_t *b = req_full(0, "POST", CM("default"), NULL, CM_BODY("held"), &status);
    json_decref(b);
    return (void *)status;
}

Test(admission, stopping_the_server_ends_webhook_calls_in_flight)
{
    hook_cfg(false, "slowstop.example.com", "/hang", NULL, "{\"timeoutSeconds\":30}");
    pthread_t th;
    pthread_create(&th, NULL, post_held, NULL);
    pthread_mutex_lock(&hook_mu);
    while (hanging == 0)
        pthread_cond_wait(&hook_cv, &hook_mu);
    pthread_mutex_unlock(&hook_mu);
    /* The webhook still holds the call; the server stops anyway. */
    fakeapi_stop(srv);
    srv = NULL;
    pthread_mutex_lock(&hook_mu);
    bool still_held = hanging == 1 && !hang_release;
    pthread_mutex_unlock(&hook_mu);
    cr_assert(still_held, "stop did not wait for the webhook's answer");
    void *status;
    pthread_join(th, &status);
    cr_assert_neq((long)status, 201, "the held write was not admitted");
}

Test(admission, server_side_apply_creates_and_updates_are_admitted)
{
    hook_cfg(true, "annotate.example.com", "/annotate", NULL, NULL);
    hook_cfg(false, "allow.example.com", "/allow", NULL, NULL);
    const char *path = "/api/v1/namespaces/default/configmaps/ssa?fieldManager=me";
    json_t *o = req_ct(201, "PATCH", path, "application/apply-patch+yaml",
                       "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'ssa'},"
                       "'data':{'a':'1'}}");
    cr_assert_str_eq(jstr(o, "metadata.annotations.hooked"), "yes");
    json_decref(o);
    json_t *rv = last_review("/allow");
    cr_assert_str_eq(jstr(rv, "request.operation"), "CREATE");
    cr_assert_str_eq(jstr(rv, "request.options.kind"), "PatchOptions");
    cr_assert_str_eq(jstr(rv, "request.name"), "ssa");
    json_decref(rv);
    json_decref(req_ct(200, "PATCH", path, "application/apply-patch+yaml",
                       "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'ssa'},"
                       "'data':{'a':'2'}}"));
    rv = last_review("/allow");
    cr_assert_str_eq(jstr(rv, "request.operation"), "UPDATE");
    cr_assert_str_eq(jstr(rv, "request.object.data.a"), "2");
    json_decref(rv);
    /* A denied apply creates nothing. */
    hook_cfg(false, "deny.example.com", "/deny", NULL, NULL);
    json_decref(req_fail_ct(403, "Forbidden", "PATCH",
                            "/api/v1/namespaces/default/configmaps/other?fieldManager=me",
                            "application/apply-patch+yaml",
                            "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'other'}}"));
    cr_assert(gone("/api/v1/namespaces/default/configmaps/other"));
}

Test(admission, validating_webhooks_see_the_object_as_stored)
{
    hook_cfg(false, "allow.example.com", "/allow", NULL, NULL);
    json_t *o = req(201, "POST", CM("default"), "{'metadata':{'generateName':'gen-'}}");
    json_t *rv = last_review("/allow");
    /* The generated name, uid and timestamp are there; the request's name was none. */
    cr_assert_str_eq(jstr(rv, "request.object.metadata.name"), jstr(o, "metadata.name"));
    cr_assert_str_eq(jstr(rv, "request.object.metadata.uid"), jstr(o, "metadata.uid"));
    cr_assert_not_null(jstr(rv, "request.object.metadata.creationTimestamp"));
    cr_assert_null(jget(rv, "request.name"));
    json_decref(rv);
    json_decref(o);
}

Test(admission, a_create_that_lost_its_name_while_validated_is_refused)
{
    /* The validating webhook holds the create of "x"; meanwhile a create
     * the webhook does not select takes the name. */
    hook_cfg(false, "hold.example.com", "/hang", NULL,
             "{\"timeoutSeconds\":20, \"objectSelector\":{\"matchLabels\":{\"hold\":\"yes\"}}}");
    pthread_t th;
    pthread_create(&th, NULL, post_cm, (void *)"{'metadata':{'name':'x','labels':{'hold':'yes'}}}");
    pthread_mutex_lock(&hook_mu);
    while (hanging == 0)
        pthread_cond_wait(&hook_cv, &hook_mu);
    pthread_mutex_unlock(&hook_mu);
    json_decref(req(201, "POST", CM("default"), CM_BODY("x")));
    pthread_mutex_lock(&hook_mu);
    hang_release = true;
    pthread_cond_broadcast(&hook_cv);
    pthread_mutex_unlock(&hook_mu);
    void *status;
    pthread_join(th, &status);
    cr_assert_eq((long)status, 409);
    json_t *got = req(200, "GET", "/api/v1/namespaces/default/configmaps/x", NULL);
    cr_assert_null(jget(got, "metadata.labels"), "the first create's object is the one stored");
    json_decref(got);
}

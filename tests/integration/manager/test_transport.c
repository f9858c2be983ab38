/*
 * Integration tests for the client's transport against a tiny
 * libmicrohttpd stub server started by each test: retries on 429 (with
 * Retry-After) and 503, no retry of non-idempotent verbs, Status bodies
 * built when the server sends none, transport failures, timeouts, the rate
 * limiter, connection reuse, User-Agent, and watch streams cut at odd
 * places. Delays go through a recording clock: nothing really sleeps.
 */
#include <criterion/criterion.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctrl/client.h"
#include "../../support/recclock.h"

/* ---- the stub server ---- */

typedef struct stub {
    struct MHD_Daemon *d;
    uint16_t port;
    char url[64];
    pthread_mutex_t mu;
    int requests; /* not counting discovery */
    int connections;
    char last_ua[128];
    char last_auth[256];
    char last_method[16];
    /* the script */
    int fail_status;
    int fail_times;
    const char *retry_after;
    const char *fail_body;
    int delay_ms;
    const char *ok_body;
    const char *watch_body;
    int chunk;
} stub;

static stub S;

static const char discovery[] =
    "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\",\"groupVersion\":\"v1\","
    "\"resources\":[{\"name\":\"configmaps\",\"singularName\":\"configmap\",\"namespaced\":true,"
    "\"kind\":\"ConfigMap\",\"verbs\":[\"get\",\"list\",\"watch\",\"create\",\"update\","
    "\"patch\",\"delete\"]}]}";

static const char default_ok[] = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
                                 "\"metadata\":{\"name\":\"x\",\"namespace\":\"default\"}}";

static enum MHD_Result send_text(struct MHD_Connection *conn, int status, const char *body,
                                 const char *ctype, const char *retry_after)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)(uintptr_t)body,
                                                             MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(r, "Content-Type", ctype);
    if (retry_after)
        MHD_add_response_header(r, "Retry-After", retry_after);
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)status, r);
    MHD_destroy_response(r);
    return ret;
}

static ssize_t watch_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    const char *body = cls;
    size_t len = strlen(body);
    if (pos >= len)
        return MHD_CONTENT_READER_END_OF_STREAM;
    size_t n = len - (size_t)pos;
    if (S.chunk > 0 && n > (size_t)S.chunk)
        n = (size_t)S.chunk;
    if (n > max)
        n = max;
    memcpy(buf, body + pos, n);
    return (ssize_t)n;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    (void)cls, (void)version, (void)upload;
    static int marker;
    if (*con_cls == NULL) {
        *con_cls = &marker;
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0;
        return MHD_YES;
    }
    if (!strcmp(url, "/api/v1"))
        return send_text(conn, 200, discovery, "application/json", NULL);
    pthread_mutex_lock(&S.mu);
    int n = ++S.requests;
    const char *ua = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "User-Agent");
    const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    snprintf(S.last_ua, sizeof S.last_ua, "%s", ua ? ua : "");
    snprintf(S.last_auth, sizeof S.last_auth, "%s", auth ? auth : "");
    snprintf(S.last_method, sizeof S.last_method, "%s", method);
    pthread_mutex_unlock(&S.mu);
    if (S.delay_ms)
        usleep((useconds_t)S.delay_ms * 1000);
    if (n <= S.fail_times)
        return send_text(conn, S.fail_status, S.fail_body ? S.fail_body : "", "text/plain",
                         S.retry_after);
    const char *watch = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "watch");
    if (watch && S.watch_body) {
        struct MHD_Response *r = MHD_create_response_from_callback(
            MHD_SIZE_UNKNOWN, 64, watch_reader, (void *)(uintptr_t)S.watch_body, NULL);
        MHD_add_response_header(r, "Content-Type", "application/json");
        enum MHD_Result ret = MHD_queue_response(conn, 200, r);
        MHD_destroy_response(r);
        return ret;
    }
    return send_text(conn, 200, S.ok_body ? S.ok_body : default_ok, "application/json", NULL);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    (void)cls, (void)c, (void)socket_context;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        pthread_mutex_lock(&S.mu);
        S.connections++;
        pthread_mutex_unlock(&S.mu);
    }
}

static void stub_start(void)
{
    memset(&S, 0, sizeof S);
    pthread_mutex_init(&S.mu, NULL);
    S.d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL,
                           NULL, handler, NULL, MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL,
                           MHD_OPTION_END);
    cr_assert_not_null(S.d);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(S.d, MHD_DAEMON_INFO_BIND_PORT);
    S.port = info->port;
    snprintf(S.url, sizeof S.url, "http://127.0.0.1:%u", S.port);
}

static void stub_stop(void)
{
    MHD_stop_daemon(S.d);
    S.d = NULL;
}

TestSuite(transport, .init = stub_start, .fini = stub_stop, .timeout = 60);

/* ---- a recording clock: tests/support/recclock.h ---- */

static ctrl_client *new_client(const char *url, ctrl_client_options o)
{
    ctrl_config *cfg = NULL;
    ctrl_client *c = NULL;
    ctrl_error err = {0};
    cr_assert_eq(ctrl_config_from_url(url, &cfg, &err), 0, "%s", err.message);
    o.clock = &recording;
    cr_assert_eq(ctrl_client_new(cfg, &o, &c, &err), 0, "%s", err.message);
    ctrl_config_free(cfg);
    return c;
}

static json_t *cm(void)
{
    return json_loads(default_ok, 0, NULL);
}

#define MS 1000000LL

Test(transport, retries_429_honouring_retry_after)
{
    S.fail_status = 429;
    S.fail_times = 2;
    S.retry_after = "2";
    ctrl_client *c = new_client(S.url, (ctrl_client_options){0});
    json_t *out = NULL;
    ctrl_error err = {0};
    cr_assert_eq(ctrl_client_get(c, "v1", "ConfigMap", "default", "x", &out, &err), 0, "%s",
                 err.message);
    cr_assert_str_eq(json_string_value(json_object_get(out, "kind")), "ConfigMap");
    cr_assert_eq(S.requests, 3);
    cr_assert_eq(FC.n, 2);
    cr_assert_eq(FC.sleeps[0], 2000 * MS);
    cr_assert_eq(FC.sleeps[1], 2000 * MS);
    json_decref(out);
    ctrl_client_free(c);
}

Test(transport, retries_503_with_exponential_backoff)
{
    S.fail_status = 503;
    S.fail_times = 3;
    ctrl_client *c = new_client(S.url, (ctrl_client_options){.backoff_base_ms = 100});
    json_t *out = NULL;
    cr_assert_eq(ctrl_client_get(c, "v1", "ConfigMap", "default", "x", &out, NULL), 0);
    cr_assert_eq(S.requests, 4);
    cr_assert_eq(FC.n, 3);
    int64_t base[] = {100 * MS, 200 * MS, 400 * MS};
    for (int i = 0; i < 3; i++) {
        cr_assert_geq(FC.sleeps[i], base[i], "sleep %d = %lld", i, (long long)FC.sleeps[i]);
        cr_assert_leq(FC.sleeps[i], base[i] + base[i] / 10, "sleep %d", i);
    }
    json_decref(out);
    ctrl_client_free(c);
}

Test(transport, post_is_not_retried)
{
    S.fail_status = 503;
    S.fail_times = 1;
    ctrl_client *c = new_client(S.url, (ctrl_client_options){0});
    json_t *obj = cm();
    ctrl_error err = {0};
    int rc = ctrl_client_create(c, obj, NULL, NULL, &err);
    cr_assert(ctrl_err_is_service_unavailable(rc), "rc %d", rc);
    cr_assert_eq(err.http_status, 503);
    cr_assert_eq(S.requests, 1);
    cr_assert_str_eq(S.last_method, "POST");
    cr_assert_eq(FC.n, 0);
    json_decref(obj);
    ctrl_error_deinit(&err);
    ctrl_client_free(c);
}

Test(transport, post_retried_when_asked)
{
    S.fail_status = 503;
    S.fail_times = 1;
    ctrl_client *c = new_client(S.url, (ctrl_client_options){.retry_non_idempotent = true});
    json_t *obj = cm();
    cr_assert_eq(ctrl_client_create(c, obj, NULL, NULL, NULL), 0);
    cr_assert_eq(S.requests, 2);
    cr_assert_eq(FC.n, 1);
    json_decref(obj);
    ctrl_client_free(c);
}

Test(transport, json_patch_not_retried_merge_patch_retried)
{
    S.fail_status = 429;
    S.fail_times = 1;
    S.retry_after = "1";
    ctrl_client *c = new_client(S.url, (ctrl_client_options){0});
    json_t *jp = json_pack("[{s:s, s:s}]", "op", "remove", "path", "/data");
    int rc = ctrl_client_patch(c, "v1", "ConfigMap", "default", "x", CTRL_PATCH_JSON, jp, NULL,
                               NULL, NULL);
    cr_assert(ctrl_err_is_too_many_requests(rc), "rc %d", rc);
    cr_assert_eq(S.requests, 1);
    S.requests = 0;
    json_t *mp = json_pack("{s:{s:s}}", "data", "a", "b");
    cr_assert_eq(ctrl_client_patch(c, "v1", "ConfigMap", "default", "x", CTRL_PATCH_MERGE, mp, NULL,
                                   NULL, NULL),
                 0);
    cr_assert_eq(S.requests, 2);
    cr_assert_eq(FC.n, 1);
    cr_assert_eq(FC.sleeps[0], 1000 * MS);
    json_decref(jp);
    json_decref(mp);
    ctrl_client_free(c);
}

Test(transport, retries_exhausted_keep_the_last_answer)
{
    S.fail_status = 429;
    S.fail_times = 1000;
    S.retry_after = "1";
    S.fail_body = "slow down";
    ctrl_client *c = new_client(S.url, (ctrl_client_options){.max_retries = 3});
    ctrl_error err = {0};
    json_t *out = NULL;
    int rc = ctrl_client_get(c, "v1", "ConfigMap", "default", "x", &out, &err);
    cr_assert_eq(rc, CTRL_ERR_TOO_MANY_REQUESTS);
    cr_assert_eq(S.requests, 4);
    cr_assert_eq(FC.n, 3);
    cr_assert_eq(err.retry_after_seconds, 1);
    cr_assert_eq(err.http_status, 429);
    /* No Status from the server: one is built, as client-go does. */
    cr_assert_not_null(err.status);
    cr_assert_str_eq(json_string_value(json_object_get(err.status, "kind")), "Status");
    cr_assert_str_eq(err.reason, "TooManyRequests");
    cr_assert(strstr(err.message, "slow down"), "%s", err.message);
    ctrl_error_deinit(&err);
    ctrl_client_free(c);
}

Test(transport, non_status_error_body)
{
    S.fail_status = 500;
    S.fail_times = 1;
    S.fail_body = "oops, a proxy page";
    ctrl_client *c = new_client(S.url, (ctrl_client_options){.max_retries = -1});
    ctrl_error err = {0};
    json_t *out = NULL;
    int rc = ctrl_client_request(c, "GET", "/anything", NULL, NULL, &out, &err);
    cr_assert(ctrl_err_is_internal_error(rc), "rc %d", rc);
    cr_assert_eq(err.http_status, 500);
    cr_assert_str_eq(err.reason, "InternalError");
    cr_assert(strstr(err.message, "oops, a proxy page"), "%s", err.message);
    cr_assert_eq(json_integer_value(json_object_get(err.status, "code")), 500);
    cr_assert_eq(FC.n, 0);
    ctrl_error_deinit(&err);
    ctrl_client_free(c);
}

Test(transport, status_body_with_retry_after_seconds)
{
    S.fail_status = 409;
    S.fail_times = 1;
    S.fail_body = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":"
                  "\"Failure\",\"message\":\"busy\",\"reason\":\"AlreadyExists\","
                  "\"details\":{\"name\":\"x\",\"retryAfterSeconds\":7},\"code\":409}";
    ctrl_client *c = new_client(S.url, (ctrl_client_options){0});
    ctrl_error err = {0};
    int rc = ctrl_client_request(c, "GET", "/x", NULL, NULL, NULL, &err);
    cr_assert(ctrl_err_is_already_exists(rc), "rc %d", rc);
    cr_assert_str_eq(err.message, "busy");
    cr_assert_eq(err.retry_after_seconds, 7);
    cr_assert_null(err.causes);
    ctrl_error_deinit(&err);
    ctrl_client_free(c);
}

Test(transport, connection_refused_is_a_transport_error)
{
    ctrl_client *c = new_client("http://127.0.0.1:1", (ctrl_client_options){.max_retries = 2});
    ctrl_error err = {0};
    int rc = ctrl_client_request(c, "POST", "/x", NULL, NULL, NULL, &err);
    cr_assert_eq(rc, CTRL_ERR_TRANSPORT, "rc %d %s", rc, err.message);
    cr_assert(ctrl_err_is_transport(rc));
    cr_assert_not(ctrl_err_is_api(rc));
    cr_assert_eq(err.http_status, 0);
    cr_assert_null(err.status);
    /* Nothing was sent, so even a POST was tried again. */
    cr_assert_eq(FC.n, 2);
    json_t *out = NULL;
    rc = ctrl_client_get(c, "v1", "ConfigMap", "default", "x", &out, &err);
    cr_assert(ctrl_err_is_transport(rc), "rc %d", rc);
    ctrl_error_deinit(&err);
    ctrl_client_free(c);
}

Test(transport, request_timeout)
{
    S.delay_ms = 1500;
    ctrl_client *c = new_client(S.url, (ctrl_client_options){.timeout_ms = 200, .max_retries = -1});
    ctrl_error err = {0};
    int rc = ctrl_client_request(c, "GET", "/slow", NULL, NULL, NULL, &err);
    cr_assert_eq(rc, CTRL_ERR_TIMEOUT, "rc %d %s", rc, err.message);
    cr_assert(ctrl_err_is_timeout(rc));
    ctrl_error_deinit(&err);
    ctrl_client_free(c);
}

Test(transport, user_agents_and_no_token_over_http)
{
    char kc[512];
    snprintf(kc, sizeof kc,
             "clusters: [{name: c, cluster: {server: '%s'}}]\n"
             "users: [{name: u, user: {token: secret}}]\n"
             "contexts: [{name: a, context: {cluster: c, user: u}}]\n",
             S.url);
    ctrl_config *cfg = NULL;
    cr_assert_eq(ctrl_config_from_kubeconfig_data(kc, strlen(kc), NULL, "a", &cfg, NULL), 0);
    ctrl_client *c = NULL;
    cr_assert_eq(ctrl_client_new(cfg, NULL, &c, NULL), 0);
    ctrl_config_free(cfg);
    cr_assert_eq(ctrl_client_request(c, "GET", "/x", NULL, NULL, NULL, NULL), 0);
    cr_assert_str_eq(S.last_ua, "kube-harness-ctrl/0.1");
    cr_assert_str_eq(S.last_auth, "");
    ctrl_client *child = NULL;
    cr_assert_eq(ctrl_client_new_for(c, "manager/controller-a", &child, NULL), 0);
    cr_assert_eq(ctrl_client_request(child, "GET", "/x", NULL, NULL, NULL, NULL), 0);
    cr_assert_str_eq(S.last_ua, "manager/controller-a");
    ctrl_client_free(child);
    ctrl_client_free(c);
}

Test(transport, connections_are_reused)
{
    ctrl_client *c = new_client(S.url, (ctrl_client_options){0});
    for (int i = 0; i < 5; i++) {
        json_t *out = NULL;
        cr_assert_eq(ctrl_client_get(c, "v1", "ConfigMap", "default", "x", &out, NULL), 0);
        json_decref(out);
    }
    cr_assert_eq(S.requests, 5);
    cr_assert_eq(S.connections, 1, "%d connections for 6 requests", S.connections);
    ctrl_client_free(c);
}

typedef struct par {
    ctrl_client *c;
    int ok;
} par;

static void *hammer(void *arg)
{
    par *p = arg;
    for (int i = 0; i < 20; i++) {
        json_t *out = NULL;
        if (ctrl_client_get(p->c, "v1", "ConfigMap", "default", "x", &out, NULL) == 0)
            p->ok++;
        json_decref(out);
    }
    return NULL;
}

Test(transport, many_threads_one_client)
{
    ctrl_client *c = new_client(S.url, (ctrl_client_options){0});
    pthread_t th[8];
    par ps[8];
    for (int i = 0; i < 8; i++) {
        ps[i] = (par){.c = c};
        cr_assert_eq(pthread_create(&th[i], NULL, hammer, &ps[i]), 0);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        cr_assert_eq(ps[i].ok, 20);
    }
    cr_assert_eq(S.requests, 160);
    cr_assert_leq(S.connections, 9); /* one per busy handle, plus discovery's */
    ctrl_client_free(c);
}

Test(transport, rate_limit)
{
    ctrl_client *c = new_client(S.url, (ctrl_client_options){.qps = 10, .burst = 1});
    for (int i = 0; i < 3; i++)
        cr_assert_eq(ctrl_client_request(c, "GET", "/x", NULL, NULL, NULL, NULL), 0);
    cr_assert_eq(FC.n, 2);
    cr_assert_eq(FC.sleeps[0], 100 * MS);
    cr_assert_eq(FC.sleeps[1], 100 * MS);
    ctrl_client_free(c);
}

Test(transport, response_size_limit)
{
    ctrl_client *c = new_client(S.url, (ctrl_client_options){.max_response_bytes = 16});
    ctrl_error err = {0};
    int rc = ctrl_client_request(c, "GET", "/x", NULL, NULL, NULL, &err);
    cr_assert_eq(rc, CTRL_ERR_PROTOCOL, "rc %d", rc);
    ctrl_error_deinit(&err);
    ctrl_client_free(c);
}

/* ---- watch streams ---- */

typedef struct events {
    int n;
    ctrl_watch_event_type types[16];
    char rv[16][16];
} events;

static int collect(const ctrl_watch_event *ev, void *user)
{
    events *e = user;
    if (e->n < 16) {
        e->types[e->n] = ev->type;
        const char *rv = json_string_value(
            json_object_get(json_object_get(ev->object, "metadata"), "resourceVersion"));
        snprintf(e->rv[e->n], sizeof e->rv[0], "%s", rv ? rv : "");
        e->n++;
    }
    return 0;
}

Test(transport, watch_lines_cut_anywhere_and_error_event)
{
    S.chunk = 7;
    S.watch_body =
        "{\"type\":\"ADDED\",\"object\":{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\","
        "\"resourceVersion\":\"5\"}}}\n"
        "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\","
        "\"resourceVersion\":\"6\"}}}\r\n"
        "\n"
        "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ConfigMap\",\"metadata\":{"
        "\"resourceVersion\":\"7\"}}}\n"
        "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
        "\"status\":\"Failure\",\"message\":\"too old resource version: 5 (12)\",\"reason\":"
        "\"Expired\",\"code\":410}}\n";
    ctrl_client *c = new_client(S.url, (ctrl_client_options){0});
    events e = {0};
    ctrl_error err = {0};
    ctrl_watch_options o = {.allow_bookmarks = true, .resource_version = "5"};
    int rc = ctrl_client_watch(c, "v1", "ConfigMap", NULL, &o, NULL, collect, &e, &err);
    cr_assert_eq(rc, CTRL_ERR_EXPIRED, "rc %d %s", rc, err.message);
    cr_assert(ctrl_err_is_gone(rc));
    cr_assert_eq(e.n, 4);
    cr_assert_eq(e.types[0], CTRL_WATCH_ADDED);
    cr_assert_eq(e.types[1], CTRL_WATCH_MODIFIED);
    cr_assert_eq(e.types[2], CTRL_WATCH_BOOKMARK);
    cr_assert_eq(e.types[3], CTRL_WATCH_ERROR);
    cr_assert_str_eq(e.rv[0], "5");
    cr_assert_str_eq(e.rv[1], "6");
    cr_assert_str_eq(e.rv[2], "7");
    cr_assert_str_eq(err.reason, "Expired");
    cr_assert_eq(err.http_status, 410);
    ctrl_error_deinit(&err);
    ctrl_client_free(c);
}

Test(transport, watch_last_line_without_newline)
{
    S.watch_body = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"resourceVersion\":\"9\"}}}";
    ctrl_client *c = new_client(S.url, (ctrl_client_options){0});
    events e = {0};
    cr_assert_eq(ctrl_client_watch(c, "v1", "ConfigMap", "default", NULL, NULL, collect, &e, NULL),
                 0);
    cr_assert_eq(e.n, 1);
    cr_assert_str_eq(e.rv[0], "9");
    ctrl_client_free(c);
}

Test(transport, watch_garbage_is_a_protocol_error)
{
    S.watch_body = "{\"type\":\"ADDED\",\"object\":{}}\nthis is not json\n"
                   "{\"type\":\"ADDED\",\"object\":{}}\n";
    ctrl_client *c = new_client(S.url, (ctrl_client_options){0});
    events e = {0};
    ctrl_error err = {0};
    int rc = ctrl_client_watch(c, "v1", "ConfigMap", "default", NULL, NULL, collect, &e, &err);
    cr_assert_eq(rc, CTRL_ERR_PROTOCOL, "rc %d", rc);
    cr_assert_eq(e.n, 1);
    cr_assert(strstr(err.message, "this is not json"), "%s", err.message);
    ctrl_error_deinit(&err);
    ctrl_client_free(c);
}

Test(transport, watch_refused_and_not_retried)
{
    S.fail_status = 503;
    S.fail_times = 1;
    S.watch_body = "{\"type\":\"ADDED\",\"object\":{}}\n";
    ctrl_client *c = new_client(S.url, (ctrl_client_options){0});
    events e = {0};
    int rc = ctrl_client_watch(c, "v1", "ConfigMap", "default", NULL, NULL, collect, &e, NULL);
    cr_assert(ctrl_err_is_service_unavailable(rc), "rc %d", rc);
    cr_assert_eq(S.requests, 1);
    cr_assert_eq(e.n, 0);
    ctrl_client_free(c);
}

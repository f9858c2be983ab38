/*
 * Integration tests for ctrl/roundtrip.h: libctrl's requests sent through
 * an embedder's round-tripper instead of libcurl. Two round-trippers live
 * here: one forwards to an in-process fakeapi (fakeapi_request, no HTTP)
 * for real objects, the other answers from a script (retries, failures,
 * watches in odd chunks, blocking until cancelled, timeouts). Delays of the
 * retry loop go through a recording clock: nothing really sleeps.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctrl/client.h"
#include "ctrl/manager.h"
#include "ctrl/roundtrip.h"
#include "fakeapi/fakeapi.h"
#include "../../support/recclock.h"

/* ---- a recording clock: tests/support/recclock.h ---- */

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- what a round-tripper saw ---- */

typedef struct seen {
    char method[16];
    char target[512];
    char ua[128];
    char token[128];
    bool had_token;
    char content_type[64];
    char accept[64];
    char body[2048];
    int timeout_ms;
    bool streaming;
} seen;

static void note(seen *s, const ctrl_roundtrip_request *req)
{
    snprintf(s->method, sizeof s->method, "%s", req->method);
    snprintf(s->target, sizeof s->target, "%s", req->target);
    snprintf(s->ua, sizeof s->ua, "%s", req->user_agent ? req->user_agent : "(null)");
    s->had_token = req->bearer_token != NULL;
    snprintf(s->token, sizeof s->token, "%s", req->bearer_token ? req->bearer_token : "");
    snprintf(s->content_type, sizeof s->content_type, "%s",
             req->content_type ? req->content_type : "");
    snprintf(s->accept, sizeof s->accept, "%s", req->accept ? req->accept : "");
    snprintf(s->body, sizeof s->body, "%.*s", (int)req->body_len, req->body ? req->body : "");
    s->timeout_ms = req->timeout_ms;
    s->streaming = req->streaming;
}

/* ---- a round-tripper that forwards to an in-process fakeapi ---- */

typedef struct fwd {
    fakeapi_server *api;
    pthread_mutex_t mu;
    int calls;
    int lease_calls;
    seen last;
} fwd;

static int fwd_roundtrip(void *ud, const ctrl_roundtrip_request *req, const ctrl_roundtrip_io *io)
{
    fwd *f = ud;
    pthread_mutex_lock(&f->mu);
    f->calls++;
    if (strstr(req->target, "/apis/coordination.k8s.io/"))
        f->lease_calls++;
    note(&f->last, req);
    pthread_mutex_unlock(&f->mu);
    char *body = req->body ? strndup(req->body, req->body_len) : NULL;
    int status = 0;
    json_t *out = NULL;
    int rc =
        fakeapi_request(f->api, req->method, req->target, req->content_type, body, &status, &out);
    free(body);
    if (rc != 0) {
        io->fail(io->io, CTRL_ROUNDTRIP_NOTHING_SENT, "fakeapi_request failed");
        return CTRL_ERR_TRANSPORT;
    }
    char *text = out ? json_dumps(out, JSON_COMPACT | JSON_ENCODE_ANY) : strdup("");
    json_decref(out);
    io->head(io->io, status, 0, "application/json");
    io->body(io->io, text, strlen(text));
    free(text);
    return 0;
}

/* ---- a scripted round-tripper ---- */

enum {
    ANSWER = 0,   /* head, then the body in chunks */
    DROPPED,      /* CTRL_ERR_TRANSPORT, dropped */
    NOTHING_SENT, /* CTRL_ERR_TRANSPORT, nothing sent */
    TIMEOUT,      /* wait for timeout_ms (or a cancel), then CTRL_ERR_TIMEOUT */
    BLOCK,        /* head 200, then block until cancelled */
    NO_ANSWER,    /* return 0 without head */
    CUT_SHORT,    /* head, half the body, then CTRL_ERR_TRANSPORT (dropped) */
    UNREGISTER,   /* head 200, register wake and unregister it, poll cancelled() */
};

typedef struct step {
    int what;
    int status;
    int retry_after;
    const char *body;
    size_t chunk; /* 0 = the whole body at once */
} step;

typedef struct script {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    step steps[8];
    int n;
    int calls; /* not counting discovery */
    seen last;
    bool woken;
    bool blocking;
    int wakes;
    int cancelled_return;
} script;

static script S;

static const char discovery[] =
    "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\",\"groupVersion\":\"v1\","
    "\"resources\":[{\"name\":\"configmaps\",\"singularName\":\"configmap\",\"namespaced\":true,"
    "\"kind\":\"ConfigMap\",\"verbs\":[\"get\",\"list\",\"watch\",\"create\",\"update\","
    "\"patch\",\"delete\"]}]}";

static const char cm_ok[] = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
                            "\"metadata\":{\"name\":\"x\",\"namespace\":\"default\"}}";

static void script_reset(void)
{
    memset(&S, 0, sizeof S);
    pthread_mutex_init(&S.mu, NULL);
    pthread_cond_init(&S.cv, NULL);
    memset(&FC.sleeps, 0, sizeof FC.sleeps);
    FC.n = 0;
}

static void script_add(step st)
{
    cr_assert_lt(S.n, 8);
    S.steps[S.n++] = st;
}

static void wake(void *ud)
{
    script *s = ud;
    pthread_mutex_lock(&s->mu);
    s->woken = true;
    s->wakes++;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* Wait until woken or ms elapse (ms <= 0: 10 s). true = woken. */
static bool wait_woken(int ms)
{
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    int64_t ns = (int64_t)(ms > 0 ? ms : 10000) * 1000000LL + dl.tv_nsec;
    dl.tv_sec += ns / 1000000000LL;
    dl.tv_nsec = ns % 1000000000LL;
    pthread_mutex_lock(&S.mu);
    S.blocking = true;
    pthread_cond_broadcast(&S.cv);
    while (!S.woken && pthread_cond_timedwait(&S.cv, &S.mu, &dl) == 0)
        ;
    bool w = S.woken;
    S.blocking = false;
    pthread_mutex_unlock(&S.mu);
    return w;
}

static int deliver(const ctrl_roundtrip_io *io, const char *body, size_t len, size_t chunk)
{
    for (size_t off = 0; off < len;) {
        size_t n = chunk && chunk < len - off ? chunk : len - off;
        if (io->body(io->io, body + off, n) != 0)
            return 1;
        off += n;
    }
    return 0;
}

static int scripted(void *ud, const ctrl_roundtrip_request *req, const ctrl_roundtrip_io *io)
{
    (void)ud;
    if (!strcmp(req->target, "/api/v1") || !strcmp(req->target, "/prefix/api/v1")) {
        io->head(io->io, 200, 0, "application/json");
        io->body(io->io, discovery, strlen(discovery));
        return 0;
    }
    pthread_mutex_lock(&S.mu);
    int i = S.calls < S.n ? S.calls : S.n - 1;
    S.calls++;
    note(&S.last, req);
    S.woken = false;
    step st = S.n ? S.steps[i] : (step){.status = 200, .body = cm_ok};
    pthread_mutex_unlock(&S.mu);
    const char *body = st.body ? st.body : "";
    switch (st.what) {
    case DROPPED:
        io->fail(io->io, CTRL_ROUNDTRIP_DROPPED, "Connection reset by peer");
        return CTRL_ERR_TRANSPORT;
    case NOTHING_SENT:
        io->fail(io->io, CTRL_ROUNDTRIP_NOTHING_SENT, "Connection refused");
        return CTRL_ERR_TRANSPORT;
    case TIMEOUT:
        io->on_cancel(io->io, wake, &S);
        if (wait_woken(req->timeout_ms)) {
            S.cancelled_return++;
            return CTRL_ERR_CANCELLED;
        }
        io->fail(io->io, CTRL_ROUNDTRIP_DROPPED, "Operation timed out");
        return CTRL_ERR_TIMEOUT;
    case NO_ANSWER:
        return 0;
    case UNREGISTER:
        io->head(io->io, 200, 0, "application/json");
        io->on_cancel(io->io, wake, &S);
        io->on_cancel(io->io, NULL, NULL);
        pthread_mutex_lock(&S.mu);
        S.blocking = true; /* stop_later may go */
        pthread_cond_broadcast(&S.cv);
        pthread_mutex_unlock(&S.mu);
        for (int k = 0; k < 1000 && !io->cancelled(io->io); k++)
            usleep(10000);
        return io->cancelled(io->io) ? CTRL_ERR_CANCELLED : 0;
    case CUT_SHORT:
        io->head(io->io, st.status, 0, "application/json");
        io->body(io->io, body, strlen(body) / 2);
        io->fail(io->io, CTRL_ROUNDTRIP_DROPPED, "transfer closed with data remaining");
        return CTRL_ERR_TRANSPORT;
    case BLOCK:
        io->head(io->io, 200, 0, "application/json");
        if (deliver(io, body, strlen(body), st.chunk))
            return 0;
        io->on_cancel(io->io, wake, &S);
        if (wait_woken(0) && io->cancelled(io->io)) {
            S.cancelled_return++;
            return CTRL_ERR_CANCELLED;
        }
        return 0;
    default:
        io->head(io->io, st.status, st.retry_after, "application/json");
        deliver(io, body, strlen(body), st.chunk);
        return 0;
    }
}

static const ctrl_roundtripper scripted_rt = {.roundtrip = scripted};

/* on_response: every attempt's status, in order. */
typedef struct codes {
    pthread_mutex_t mu;
    int v[32];
    int n;
    char host[64];
} codes;

static codes CODES = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void on_response(void *ud, int code, const char *method, const char *host)
{
    (void)method;
    codes *c = ud;
    pthread_mutex_lock(&c->mu);
    if (c->n < 32)
        c->v[c->n++] = code;
    snprintf(c->host, sizeof c->host, "%s", host);
    pthread_mutex_unlock(&c->mu);
}

static ctrl_client *scripted_client(const char *url, const char *token, ctrl_client_options o)
{
    ctrl_config *cfg = NULL;
    ctrl_client *c = NULL;
    ctrl_error err = {0};
    cr_assert_eq(ctrl_config_from_url(url, &cfg, &err), 0, "%s", err.message);
    if (token)
        cr_assert_eq(ctrl_config_set_token(cfg, token), 0);
    cr_assert_eq(ctrl_config_set_roundtripper(cfg, &scripted_rt), 0);
    o.clock = &recording;
    if (!o.on_response) {
        o.on_response = on_response;
        o.on_response_ud = &CODES;
    }
    cr_assert_eq(ctrl_client_new(cfg, &o, &c, &err), 0, "%s", err.message);
    ctrl_config_free(cfg);
    return c;
}

static json_t *cm(void)
{
    return json_loads(cm_ok, 0, NULL);
}

static const char *str_at(json_t *obj, const char *a, const char *b)
{
    json_t *v = json_object_get(obj, a);
    return json_string_value(b ? json_object_get(v, b) : v);
}

/* GET ConfigMap default/x, the answer dropped. */
static int get_x(ctrl_client *c, ctrl_error *err)
{
    json_t *out = NULL;
    int rc = ctrl_client_get(c, "v1", "ConfigMap", "default", "x", &out, err);
    json_decref(out);
    return rc;
}

/* ==== against a fakeapi, in-process ==== */

static fakeapi_server *api;
static fwd F;
static ctrl_client *rtc;  /* through the round-tripper */
static ctrl_client *http; /* over HTTP, for comparison */

static void fwd_start(void)
{
    cr_assert_eq(fakeapi_start(&(fakeapi_options){0}, &api), 0);
    memset(&F, 0, sizeof F);
    pthread_mutex_init(&F.mu, NULL);
    F.api = api;
    ctrl_config *cfg = NULL;
    ctrl_error err = {0};
    cr_assert_eq(ctrl_config_from_url(fakeapi_url(api), &cfg, &err), 0, "%s", err.message);
    cr_assert_eq(
        ctrl_client_new(cfg, &(ctrl_client_options){.user_agent = "over-http"}, &http, &err), 0,
        "%s", err.message);
    cr_assert_eq(ctrl_config_set_roundtripper(
                     cfg, &(ctrl_roundtripper){.roundtrip = fwd_roundtrip, .ud = &F}),
                 0);
    cr_assert_eq(
        ctrl_client_new(cfg, &(ctrl_client_options){.user_agent = "in-process"}, &rtc, &err), 0,
        "%s", err.message);
    ctrl_config_free(cfg);
}

static void fwd_stop(void)
{
    ctrl_client_free(rtc);
    ctrl_client_free(http);
    rtc = http = NULL;
    fakeapi_stop(api);
    api = NULL;
}

TestSuite(rt_fakeapi, .init = fwd_start, .fini = fwd_stop, .timeout = 60);

static json_t *configmap(const char *name, const char *value)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                     "metadata", "namespace", "default", "name", name, "data", "key", value);
}

Test(rt_fakeapi, create_get_update_list_delete)
{
    ctrl_error err = {0};
    json_t *obj = configmap("one", "v1"), *created = NULL, *got = NULL, *updated = NULL;
    cr_assert_eq(ctrl_client_create(rtc, obj, NULL, &created, &err), 0, "%s", err.message);
    json_decref(obj);
    cr_assert_not_null(str_at(created, "metadata", "uid"));
    cr_assert_str_eq(F.last.method, "POST");
    cr_assert_str_eq(F.last.target, "/api/v1/namespaces/default/configmaps");
    cr_assert_str_eq(F.last.content_type, "application/json");
    cr_assert_str_eq(F.last.accept, "application/json");
    cr_assert(strstr(F.last.body, "\"one\""), "body %s", F.last.body);

    /* The object is really in the server: HTTP sees it. */
    cr_assert_eq(ctrl_client_get(http, "v1", "ConfigMap", "default", "one", &got, &err), 0, "%s",
                 err.message);
    cr_assert_str_eq(str_at(got, "metadata", "uid"), str_at(created, "metadata", "uid"));
    json_decref(got);
    got = NULL;

    cr_assert_eq(ctrl_client_get(rtc, "v1", "ConfigMap", "default", "one", &got, &err), 0, "%s",
                 err.message);
    cr_assert_str_eq(str_at(got, "data", "key"), "v1");
    json_object_set_new(json_object_get(got, "data"), "key", json_string("v2"));
    cr_assert_eq(ctrl_client_update(rtc, got, NULL, &updated, &err), 0, "%s", err.message);
    cr_assert_str_eq(F.last.method, "PUT");
    cr_assert_str_eq(str_at(updated, "data", "key"), "v2");
    cr_assert_str_neq(str_at(updated, "metadata", "resourceVersion"),
                      str_at(got, "metadata", "resourceVersion"));

    json_t *two = configmap("two", "x");
    cr_assert_eq(ctrl_client_create(rtc, two, NULL, NULL, &err), 0, "%s", err.message);
    json_decref(two);
    json_t *list = NULL;
    cr_assert_eq(ctrl_client_list(rtc, "v1", "ConfigMap", "default", NULL, &list, &err), 0, "%s",
                 err.message);
    cr_assert_str_eq(str_at(list, "kind", NULL), "ConfigMapList");
    cr_assert_eq(json_array_size(json_object_get(list, "items")), 2);
    json_decref(list);

    cr_assert_eq(ctrl_client_delete(rtc, "v1", "ConfigMap", "default", "one", NULL, NULL, &err), 0,
                 "%s", err.message);
    cr_assert_str_eq(F.last.method, "DELETE");
    json_t *gone = NULL;
    int rc = ctrl_client_get(http, "v1", "ConfigMap", "default", "one", &gone, &err);
    cr_assert_eq(rc, CTRL_ERR_NOT_FOUND, "rc %d", rc);
    rc = ctrl_client_get(rtc, "v1", "ConfigMap", "default", "one", &gone, &err);
    cr_assert_eq(rc, CTRL_ERR_NOT_FOUND, "rc %d", rc);
    cr_assert_eq(err.http_status, 404);
    cr_assert_str_eq(err.reason, "NotFound");
    ctrl_error_deinit(&err);
    json_decref(created);
    json_decref(got);
    json_decref(updated);
}

/* The same failure over HTTP and through the round-tripper: same error. */
Test(rt_fakeapi, status_errors_as_over_http)
{
    json_t *obj = configmap("dup", "v");
    cr_assert_eq(ctrl_client_create(http, obj, NULL, NULL, NULL), 0);
    ctrl_error eh = {0}, er = {0};
    int rh = ctrl_client_create(http, obj, NULL, NULL, &eh);
    int rr = ctrl_client_create(rtc, obj, NULL, NULL, &er);
    cr_assert(ctrl_err_is_already_exists(rr), "rc %d", rr);
    cr_assert_eq(rr, rh);
    cr_assert_eq(er.code, eh.code);
    cr_assert_eq(er.http_status, 409);
    cr_assert_eq(er.http_status, eh.http_status);
    cr_assert_str_eq(er.reason, eh.reason);
    cr_assert_str_eq(er.message, eh.message);
    cr_assert_not_null(er.status);
    cr_assert(json_equal(er.status, eh.status));
    ctrl_error_deinit(&eh);
    ctrl_error_deinit(&er);

    /* A stale update: 409 Conflict both ways. */
    json_t *cur = NULL;
    cr_assert_eq(ctrl_client_get(rtc, "v1", "ConfigMap", "default", "dup", &cur, NULL), 0);
    json_t *newer = json_deep_copy(cur);
    json_object_set_new(json_object_get(newer, "data"), "key", json_string("changed"));
    cr_assert_eq(ctrl_client_update(rtc, newer, NULL, NULL, NULL), 0);
    json_decref(newer);
    rh = ctrl_client_update(http, cur, NULL, NULL, &eh);
    rr = ctrl_client_update(rtc, cur, NULL, NULL, &er);
    cr_assert(ctrl_err_is_conflict(rr), "rc %d", rr);
    cr_assert_eq(rr, rh);
    cr_assert_str_eq(er.reason, eh.reason);
    cr_assert_str_eq(er.message, eh.message);
    ctrl_error_deinit(&eh);
    ctrl_error_deinit(&er);
    json_decref(cur);
    json_decref(obj);
}

typedef struct mgr_runner {
    ctrl_manager *mgr;
    int rc;
} mgr_runner;

static void *run_manager(void *ud)
{
    mgr_runner *r = ud;
    r->rc = ctrl_manager_start(r->mgr, NULL);
    return NULL;
}

/* Children, the manager's clients and leader election all go through it. */
Test(rt_fakeapi, children_and_manager_carry_it)
{
    ctrl_client *child = NULL;
    cr_assert_eq(ctrl_client_new_for(rtc, "child-agent", &child, NULL), 0);
    int before = F.calls;
    json_t *obj = configmap("kid", "v");
    cr_assert_eq(ctrl_client_create(child, obj, NULL, NULL, NULL), 0);
    json_decref(obj);
    cr_assert_gt(F.calls, before);
    cr_assert_str_eq(F.last.ua, "child-agent");
    ctrl_client_free(child);

    ctrl_config *cfg = NULL;
    cr_assert_eq(ctrl_config_from_url("http://in-process.invalid", &cfg, NULL), 0);
    cr_assert_null(ctrl_config_roundtripper(cfg));
    cr_assert_eq(ctrl_config_set_roundtripper(
                     cfg, &(ctrl_roundtripper){.roundtrip = fwd_roundtrip, .ud = &F}),
                 0);
    cr_assert_not_null(ctrl_config_roundtripper(cfg));
    ctrl_config *copy = ctrl_config_copy(cfg);
    cr_assert_not_null(copy);
    cr_assert_eq(ctrl_config_roundtripper(copy)->ud, &F);
    ctrl_config_free(copy);

    ctrl_manager *mgr = NULL;
    ctrl_manager_options o = {.leader_election = true,
                              .leader_election_id = "rt-lease",
                              .leader_election_namespace = "default",
                              .identity = "rt-manager",
                              .metrics_addr = "0",
                              .user_agent = "rt-manager",
                              .log_level = CTRL_LOG_ERROR};
    ctrl_error err = {0};
    cr_assert_eq(ctrl_manager_new_for_config(cfg, &o, &mgr, &err), 0, "%s", err.message);
    ctrl_config_free(cfg);
    /* The manager's client: the host of the URL is never reached. */
    json_t *got = NULL;
    cr_assert_eq(
        ctrl_client_get(ctrl_manager_client(mgr), "v1", "ConfigMap", "default", "kid", &got, &err),
        0, "%s", err.message);
    json_decref(got);
    cr_assert(!strncmp(F.last.ua, "rt-manager", 10), "ua %s", F.last.ua);

    /* Leader election takes the Lease through the round-tripper. */
    mgr_runner r = {.mgr = mgr, .rc = -1};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, run_manager, &r), 0);
    int rc = ctrl_manager_elected(mgr, 20 * CTRL_SECOND);
    cr_assert_eq(rc, 0, "elected: %d", rc);
    cr_assert_gt(F.lease_calls, 0);
    ctrl_manager_stop(mgr);
    pthread_join(th, NULL);
    cr_assert_eq(r.rc, 0, "start: %d", r.rc);
    ctrl_manager_free(mgr);
    int status = 0;
    json_t *lease = NULL;
    cr_assert_eq(fakeapi_request(api, "GET",
                                 "/apis/coordination.k8s.io/v1/namespaces/default/leases/rt-lease",
                                 NULL, NULL, &status, &lease),
                 0);
    cr_assert_eq(status, 200);
    json_decref(lease);
}

/* ==== against the script ==== */

TestSuite(rt_script, .init = script_reset, .timeout = 60);

Test(rt_script, retries_429_and_503_with_retry_after)
{
    ctrl_client *c =
        scripted_client("http://scripted.invalid:1234", NULL, (ctrl_client_options){0});
    script_add((step){.status = 429, .retry_after = 2, .body = "{}"});
    script_add((step){.status = 503, .retry_after = 1, .body = "{}"});
    script_add((step){.status = 200, .body = cm_ok});
    json_t *out = NULL;
    ctrl_error err = {0};
    cr_assert_eq(ctrl_client_get(c, "v1", "ConfigMap", "default", "x", &out, &err), 0, "%s",
                 err.message);
    cr_assert_str_eq(str_at(out, "metadata", "name"), "x");
    json_decref(out);
    cr_assert_eq(S.calls, 3);
    cr_assert_eq(FC.n, 2);
    cr_assert_eq(FC.sleeps[0], 2 * CTRL_SECOND);
    cr_assert_eq(FC.sleeps[1], 1 * CTRL_SECOND);
    /* Metrics: every attempt, with the URL's host. */
    int n = CODES.n;
    cr_assert_geq(n, 3);
    cr_assert_eq(CODES.v[n - 3], 429);
    cr_assert_eq(CODES.v[n - 2], 503);
    cr_assert_eq(CODES.v[n - 1], 200);
    cr_assert_str_eq(CODES.host, "scripted.invalid:1234");
    ctrl_client_free(c);
}

Test(rt_script, retries_stop_at_max_retries)
{
    ctrl_client *c =
        scripted_client("http://scripted.invalid", NULL, (ctrl_client_options){.max_retries = 2});
    script_add((step){.status = 503, .body = "busy"});
    ctrl_error err = {0};
    int rc = get_x(c, &err);
    cr_assert_eq(rc, CTRL_ERR_SERVICE_UNAVAILABLE, "rc %d %s", rc, err.message);
    cr_assert_eq(err.http_status, 503);
    cr_assert_eq(S.calls, 3);
    /* No Retry-After: exponential backoff, 100 ms then 200 ms (+ up to 10%). */
    cr_assert_eq(FC.n, 2);
    cr_assert(FC.sleeps[0] >= 100000000LL && FC.sleeps[0] <= 110000000LL);
    cr_assert(FC.sleeps[1] >= 200000000LL && FC.sleeps[1] <= 220000000LL);
    ctrl_error_deinit(&err);
    ctrl_client_free(c);
}

Test(rt_script, post_429_not_retried)
{
    ctrl_client *c = scripted_client("http://scripted.invalid", NULL, (ctrl_client_options){0});
    script_add((step){.status = 429, .retry_after = 1, .body = "{}"});
    json_t *obj = cm();
    ctrl_error err = {0};
    int rc = ctrl_client_create(c, obj, NULL, NULL, &err);
    cr_assert_eq(rc, CTRL_ERR_TOO_MANY_REQUESTS, "rc %d", rc);
    cr_assert_eq(err.retry_after_seconds, 1);
    cr_assert_eq(S.calls, 1);
    cr_assert_eq(FC.n, 0);
    ctrl_error_deinit(&err);
    json_decref(obj);
    ctrl_client_free(c);
}

Test(rt_script, dropped_post_not_retried)
{
    ctrl_client *c = scripted_client("http://scripted.invalid", NULL, (ctrl_client_options){0});
    script_add((step){.what = DROPPED});
    script_add((step){.status = 201, .body = cm_ok});
    json_t *obj = cm();
    ctrl_error err = {0};
    int rc = ctrl_client_create(c, obj, NULL, NULL, &err);
    cr_assert_eq(rc, CTRL_ERR_TRANSPORT, "rc %d", rc);
    cr_assert_str_eq(err.message,
                     "POST http://scripted.invalid/api/v1/namespaces/default/configmaps:"
                     " Connection reset by peer");
    cr_assert_eq(err.http_status, 0);
    cr_assert_eq(S.calls, 1);
    ctrl_error_deinit(&err);
    json_decref(obj);
    ctrl_client_free(c);
}

Test(rt_script, answer_cut_short_is_dropped)
{
    ctrl_client *c = scripted_client("http://scripted.invalid", NULL, (ctrl_client_options){0});
    script_add((step){.what = CUT_SHORT, .status = 200, .body = cm_ok});
    script_add((step){.status = 200, .body = cm_ok});
    /* A GET is retried and gets the whole answer the second time. */
    json_t *out = NULL;
    cr_assert_eq(ctrl_client_get(c, "v1", "ConfigMap", "default", "x", &out, NULL), 0);
    cr_assert_str_eq(str_at(out, "metadata", "name"), "x");
    json_decref(out);
    cr_assert_eq(S.calls, 2);
    /* A POST is not. */
    script_reset();
    script_add((step){.what = CUT_SHORT, .status = 201, .body = cm_ok});
    script_add((step){.status = 201, .body = cm_ok});
    json_t *obj = cm();
    ctrl_error err = {0};
    cr_assert_eq(ctrl_client_create(c, obj, NULL, NULL, &err), CTRL_ERR_TRANSPORT);
    cr_assert(strstr(err.message, "transfer closed with data remaining"), "%s", err.message);
    cr_assert_eq(S.calls, 1);
    ctrl_error_deinit(&err);
    json_decref(obj);
    ctrl_client_free(c);
}

Test(rt_script, nothing_sent_post_retried)
{
    ctrl_client *c = scripted_client("http://scripted.invalid", NULL, (ctrl_client_options){0});
    script_add((step){.what = NOTHING_SENT});
    script_add((step){.what = NOTHING_SENT});
    script_add((step){.status = 201, .body = cm_ok});
    json_t *obj = cm(), *out = NULL;
    ctrl_error err = {0};
    cr_assert_eq(ctrl_client_create(c, obj, NULL, &out, &err), 0, "%s", err.message);
    cr_assert_str_eq(str_at(out, "metadata", "name"), "x");
    cr_assert_eq(S.calls, 3);
    cr_assert_eq(FC.n, 2); /* backoff between the attempts */
    json_decref(out);

    /* Refused every time: given up after max_retries, with the reason. */
    script_reset();
    script_add((step){.what = NOTHING_SENT});
    int rc = ctrl_client_create(c, obj, NULL, NULL, &err);
    cr_assert_eq(rc, CTRL_ERR_TRANSPORT);
    cr_assert_eq(S.calls, 6); /* 1 + the default 5 retries */
    cr_assert_str_eq(err.message,
                     "POST http://scripted.invalid/api/v1/namespaces/default/configmaps:"
                     " Connection refused");
    ctrl_error_deinit(&err);
    json_decref(obj);
    ctrl_client_free(c);
}

Test(rt_script, no_answer_and_too_big)
{
    ctrl_client *c = scripted_client("http://scripted.invalid", NULL,
                                     (ctrl_client_options){.max_response_bytes = 500});
    script_add((step){.what = NO_ANSWER});
    ctrl_error err = {0};
    int rc = get_x(c, &err);
    cr_assert_eq(rc, CTRL_ERR_PROTOCOL, "rc %d", rc);
    cr_assert(strstr(err.message, "no answer"), "%s", err.message);
    cr_assert_eq(S.calls, 1);

    script_reset();
    static char big[2000];
    memset(big, 'a', sizeof big - 1);
    script_add((step){.status = 200, .body = big, .chunk = 10});
    rc = get_x(c, &err);
    cr_assert_eq(rc, CTRL_ERR_PROTOCOL, "rc %d", rc);
    cr_assert(strstr(err.message, "answer larger than 500 bytes"), "%s", err.message);
    ctrl_error_deinit(&err);
    ctrl_client_free(c);
}

Test(rt_script, timeouts)
{
    ctrl_client *c =
        scripted_client("http://scripted.invalid", NULL, (ctrl_client_options){.timeout_ms = 150});
    script_add((step){.what = TIMEOUT});
    ctrl_error err = {0};
    int64_t t0 = mono_ms();
    int rc = get_x(c, &err);
    int64_t took = mono_ms() - t0;
    cr_assert_eq(rc, CTRL_ERR_TIMEOUT, "rc %d", rc);
    cr_assert_eq(S.last.timeout_ms, 150);
    cr_assert_eq(S.calls, 1); /* a timeout is not retried, as with libcurl */
    cr_assert_geq(took, 140);
    cr_assert_str_eq(err.message,
                     "GET http://scripted.invalid/api/v1/namespaces/default/configmaps/x: "
                     "Operation timed out");
    ctrl_error_deinit(&err);
    ctrl_client_free(c);

    /* The defaults: 30 s for requests, none (0) when the options say < 0. */
    c = scripted_client("http://scripted.invalid", NULL, (ctrl_client_options){0});
    script_reset();
    cr_assert_eq(get_x(c, NULL), 0);
    cr_assert_eq(S.last.timeout_ms, 30000);
    cr_assert(!S.last.streaming);
    ctrl_client_free(c);
    c = scripted_client("http://scripted.invalid", NULL, (ctrl_client_options){.timeout_ms = -1});
    cr_assert_eq(get_x(c, NULL), 0);
    cr_assert_eq(S.last.timeout_ms, 0);
    ctrl_client_free(c);
}

Test(rt_script, user_agent_token_and_target)
{
    /* http: the token is not handed over (it would not be sent in clear). */
    ctrl_client *c = scripted_client("http://scripted.invalid", "s3cret",
                                     (ctrl_client_options){.user_agent = "agent/1.0"});
    cr_assert_eq(get_x(c, NULL), 0);
    cr_assert_str_eq(S.last.ua, "agent/1.0");
    cr_assert(!S.last.had_token);
    ctrl_client_free(c);

    /* https: it is; the URL's path prefix starts the target. */
    c = scripted_client("https://scripted.invalid:6443/prefix", "s3cret",
                        (ctrl_client_options){.user_agent = "agent/2.0"});
    cr_assert_eq(get_x(c, NULL), 0);
    cr_assert_str_eq(S.last.ua, "agent/2.0");
    cr_assert(S.last.had_token);
    cr_assert_str_eq(S.last.token, "s3cret");
    cr_assert_str_eq(S.last.method, "GET");
    cr_assert_str_eq(S.last.target, "/prefix/api/v1/namespaces/default/configmaps/x");
    cr_assert_str_eq(S.last.content_type, "");

    ctrl_client *child = NULL;
    cr_assert_eq(ctrl_client_new_for(c, "agent/2.0 child", &child, NULL), 0);
    ctrl_client_free(c);
    cr_assert_eq(get_x(child, NULL), 0);
    cr_assert_str_eq(S.last.ua, "agent/2.0 child");
    cr_assert_str_eq(S.last.token, "s3cret");
    ctrl_client_free(child);
}

Test(rt_script, totals_count_roundtrips)
{
    ctrl_client *c = scripted_client("http://scripted.invalid", NULL, (ctrl_client_options){0});
    cr_assert_eq(get_x(c, NULL), 0);
    unsigned long n0;
    long long ns0;
    ctrl_transport_totals(&n0, &ns0);
    cr_assert_eq(get_x(c, NULL), 0);
    cr_assert_eq(get_x(c, NULL), 0);
    unsigned long n1;
    long long ns1;
    ctrl_transport_totals(&n1, &ns1);
    cr_assert_eq(n1 - n0, 2);
    cr_assert_geq(ns1, ns0);
    ctrl_client_free(c);
}

/* ---- watches ---- */

static const char events[] =
    "{\"type\":\"ADDED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
    "\"metadata\":{\"name\":\"a\",\"namespace\":\"default\",\"resourceVersion\":\"6\"}}}\n"
    "{\"type\":\"MODIFIED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
    "\"metadata\":{\"name\":\"b\",\"namespace\":\"default\",\"resourceVersion\":\"7\"}}}\n"
    "{\"type\":\"DELETED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
    "\"metadata\":{\"name\":\"c\",\"namespace\":\"default\",\"resourceVersion\":\"8\"}}}\n";

typedef struct watcher {
    int opened;
    int opened_before_first; /* on_open came before any event */
    int n;
    char names[8][8];
    ctrl_watch_event_type types[8];
    ctrl_watch *stop_after_first; /* stop the watch from inside the callback */
} watcher;

static void on_open(void *user)
{
    watcher *w = user;
    w->opened++;
    if (w->n == 0)
        w->opened_before_first = 1;
}

static int on_event(const ctrl_watch_event *ev, void *user)
{
    watcher *w = user;
    if (w->n < 8) {
        json_t *md = json_object_get(ev->object, "metadata");
        snprintf(w->names[w->n], sizeof w->names[0], "%s",
                 json_string_value(json_object_get(md, "name")));
        w->types[w->n] = ev->type;
    }
    w->n++;
    if (w->stop_after_first)
        ctrl_watch_stop(w->stop_after_first);
    return 0;
}

static void check_three(const watcher *w)
{
    cr_assert_eq(w->n, 3);
    cr_assert_eq(w->opened, 1);
    cr_assert(w->opened_before_first);
    cr_assert_str_eq(w->names[0], "a");
    cr_assert_str_eq(w->names[1], "b");
    cr_assert_str_eq(w->names[2], "c");
    cr_assert_eq(w->types[0], CTRL_WATCH_ADDED);
    cr_assert_eq(w->types[1], CTRL_WATCH_MODIFIED);
    cr_assert_eq(w->types[2], CTRL_WATCH_DELETED);
}

static void watch_in_chunks(size_t chunk)
{
    ctrl_client *c = scripted_client("http://scripted.invalid", NULL, (ctrl_client_options){0});
    script_add((step){.status = 200, .body = events, .chunk = chunk});
    watcher w = {0};
    ctrl_watch_options o = {.resource_version = "5", .timeout_seconds = 60, .on_open = on_open};
    ctrl_error err = {0};
    int rc = ctrl_client_watch(c, "v1", "ConfigMap", "default", &o, NULL, on_event, &w, &err);
    cr_assert_eq(rc, 0, "rc %d %s", rc, err.message);
    check_three(&w);
    cr_assert(S.last.streaming);
    cr_assert_str_eq(S.last.method, "GET");
    cr_assert(strstr(S.last.target, "watch=true"), "%s", S.last.target);
    cr_assert(strstr(S.last.target, "resourceVersion=5"), "%s", S.last.target);
    cr_assert_eq(S.last.timeout_ms, 90000); /* timeoutSeconds + 30 s */
    ctrl_client_free(c);
}

Test(rt_script, watch_one_byte_at_a_time)
{
    watch_in_chunks(1);
}

Test(rt_script, watch_odd_chunks)
{
    watch_in_chunks(7);
}

Test(rt_script, watch_several_lines_per_chunk)
{
    watch_in_chunks(0);
}

Test(rt_script, watch_refused_no_on_open)
{
    ctrl_client *c = scripted_client("http://scripted.invalid", NULL, (ctrl_client_options){0});
    script_add((step){.status = 410,
                      .body = "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                              "\"reason\":\"Expired\",\"message\":\"too old resource version\","
                              "\"code\":410}"});
    watcher w = {0};
    ctrl_watch_options o = {.resource_version = "1", .on_open = on_open};
    ctrl_error err = {0};
    int rc = ctrl_client_watch(c, "v1", "ConfigMap", "default", &o, NULL, on_event, &w, &err);
    cr_assert(ctrl_err_is_gone(rc), "rc %d", rc);
    cr_assert_str_eq(err.message, "too old resource version");
    cr_assert_eq(w.opened, 0);
    cr_assert_eq(w.n, 0);
    cr_assert_eq(S.calls, 1); /* watches are never retried */
    cr_assert_eq(S.last.timeout_ms, 0);
    ctrl_error_deinit(&err);
    ctrl_client_free(c);
}

typedef struct stopper {
    ctrl_watch *w;
    int delay_ms;
} stopper;

static void *stop_later(void *ud)
{
    stopper *s = ud;
    /* Wait until the round-tripper blocks, then a little more. */
    pthread_mutex_lock(&S.mu);
    while (!S.blocking)
        pthread_cond_wait(&S.cv, &S.mu);
    pthread_mutex_unlock(&S.mu);
    usleep((useconds_t)s->delay_ms * 1000);
    ctrl_watch_stop(s->w);
    return NULL;
}

Test(rt_script, watch_stop_wakes_a_blocked_roundtripper)
{
    ctrl_client *c = scripted_client("http://scripted.invalid", NULL, (ctrl_client_options){0});
    script_add((step){.what = BLOCK, .body = events, .chunk = 5});
    ctrl_watch *w = NULL;
    cr_assert_eq(ctrl_watch_new(&w), 0);
    stopper st = {.w = w, .delay_ms = 50};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, stop_later, &st), 0);
    watcher ws = {0};
    ctrl_watch_options o = {.on_open = on_open};
    ctrl_error err = {0};
    int64_t t0 = mono_ms();
    int rc = ctrl_client_watch(c, "v1", "ConfigMap", NULL, &o, w, on_event, &ws, &err);
    int64_t took = mono_ms() - t0;
    pthread_join(th, NULL);
    cr_assert_eq(rc, CTRL_ERR_CANCELLED, "rc %d %s", rc, err.message);
    check_three(&ws);
    /* Woken by wake, not by the round-tripper's own 10 s limit. */
    cr_assert_eq(S.wakes, 1);
    cr_assert_eq(S.cancelled_return, 1);
    cr_assert_lt(took, 5000, "took %lld ms", (long long)took);
    /* Later watches with w end at once, without a round trip. */
    int calls = S.calls;
    rc = ctrl_client_watch(c, "v1", "ConfigMap", NULL, &o, w, on_event, &ws, &err);
    cr_assert_eq(rc, CTRL_ERR_CANCELLED);
    cr_assert_eq(S.calls, calls);
    ctrl_error_deinit(&err);
    ctrl_watch_free(w);
    ctrl_client_free(c);
}

/* A round-tripper that unregistered its wake (its stream is gone) is not
 * woken by a later stop: it sees the stop through cancelled() alone. */
Test(rt_script, unregistered_wake_is_not_called)
{
    ctrl_client *c = scripted_client("http://scripted.invalid", NULL, (ctrl_client_options){0});
    script_add((step){.what = UNREGISTER});
    ctrl_watch *w = NULL;
    cr_assert_eq(ctrl_watch_new(&w), 0);
    stopper st = {.w = w, .delay_ms = 50};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, stop_later, &st), 0);
    watcher ws = {0};
    ctrl_error err = {0};
    int rc = ctrl_client_watch(c, "v1", "ConfigMap", NULL, NULL, w, on_event, &ws, &err);
    pthread_join(th, NULL);
    cr_assert_eq(rc, CTRL_ERR_CANCELLED, "rc %d %s", rc, err.message);
    cr_assert_eq(S.wakes, 0, "an unregistered wake was called");
    ctrl_error_deinit(&err);
    ctrl_watch_free(w);
    ctrl_client_free(c);
}

Test(rt_script, watch_stopped_before_blocking_wakes_at_once)
{
    ctrl_client *c = scripted_client("http://scripted.invalid", NULL, (ctrl_client_options){0});
    script_add((step){.what = BLOCK});
    ctrl_watch *w = NULL;
    cr_assert_eq(ctrl_watch_new(&w), 0);
    /* The stop comes between the head and on_cancel: the first event's callback. */
    static const char one[] =
        "{\"type\":\"ADDED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
        "\"metadata\":{\"name\":\"a\",\"namespace\":\"default\"}}}\n";
    S.steps[0].body = one;
    watcher ws = {.stop_after_first = w};
    ctrl_error err = {0};
    int64_t t0 = mono_ms();
    int rc = ctrl_client_watch(c, "v1", "ConfigMap", NULL, NULL, w, on_event, &ws, &err);
    int64_t took = mono_ms() - t0;
    cr_assert_eq(rc, CTRL_ERR_CANCELLED, "rc %d %s", rc, err.message);
    cr_assert_eq(ws.n, 1);
    cr_assert_eq(S.wakes, 1); /* called at once by on_cancel */
    cr_assert_lt(took, 5000, "took %lld ms", (long long)took);
    ctrl_error_deinit(&err);
    ctrl_watch_free(w);
    ctrl_client_free(c);
}

Test(rt_script, cancel_ends_a_chatty_roundtripper)
{
    /* A round-tripper that never looks at cancelled(): body() refuses the
     * next chunk once the watch is stopped. */
    ctrl_client *c = scripted_client("http://scripted.invalid", NULL, (ctrl_client_options){0});
    script_add((step){.status = 200, .body = events, .chunk = 3});
    ctrl_watch *w = NULL;
    cr_assert_eq(ctrl_watch_new(&w), 0);
    watcher ws = {.stop_after_first = w};
    int rc = ctrl_client_watch(c, "v1", "ConfigMap", NULL, NULL, w, on_event, &ws, NULL);
    cr_assert_eq(rc, CTRL_ERR_CANCELLED, "rc %d", rc);
    cr_assert_eq(ws.n, 1);
    ctrl_watch_free(w);
    ctrl_client_free(c);
}

/* Many threads through one round-tripper at once. */
static void *hammer(void *ud)
{
    ctrl_client *c = ud;
    for (int i = 0; i < 50; i++) {
        json_t *out = NULL;
        if (ctrl_client_get(c, "v1", "ConfigMap", "default", "x", &out, NULL) != 0)
            return (void *)1;
        json_decref(out);
    }
    return NULL;
}

Test(rt_script, many_threads)
{
    ctrl_client *c = scripted_client("http://scripted.invalid", NULL, (ctrl_client_options){0});
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, hammer, c), 0);
    for (int i = 0; i < 4; i++) {
        void *r = NULL;
        pthread_join(th[i], &r);
        cr_assert_null(r);
    }
    cr_assert_eq(S.calls, 200);
    ctrl_client_free(c);
}

Test(rt_script, set_null_is_curl_again)
{
    ctrl_config *cfg = NULL;
    cr_assert_eq(ctrl_config_from_url("http://127.0.0.1:1", &cfg, NULL), 0);
    cr_assert_eq(ctrl_config_set_roundtripper(cfg, &scripted_rt), 0);
    cr_assert_eq(ctrl_config_set_roundtripper(cfg, NULL), 0);
    cr_assert_null(ctrl_config_roundtripper(cfg));
    cr_assert_eq(ctrl_config_set_roundtripper(NULL, &scripted_rt), CTRL_ERR_ARG);
    ctrl_client *c = NULL;
    cr_assert_eq(ctrl_client_new(cfg, &(ctrl_client_options){.max_retries = -1}, &c, NULL), 0);
    ctrl_config_free(cfg);
    ctrl_error err = {0};
    /* Port 1 refuses: a curl error, and the script never ran. */
    int rc = get_x(c, &err);
    cr_assert_eq(rc, CTRL_ERR_TRANSPORT, "rc %d %s", rc, err.message);
    cr_assert_eq(S.calls, 0);
    ctrl_error_deinit(&err);
    ctrl_client_free(c);
}

/* ---- an informer syncing through a round-tripper ---- */

typedef struct router {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int lists, watches, wakes, blocked;
    bool woken;
} router;

static router R = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void router_wake(void *ud)
{
    router *r = ud;
    pthread_mutex_lock(&r->mu);
    r->woken = true;
    r->wakes++;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static int routed(void *ud, const ctrl_roundtrip_request *req, const ctrl_roundtrip_io *io)
{
    router *r = ud;
    static const char list[] =
        "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":"
        "\"10\"},\"items\":[{\"metadata\":{\"name\":\"a\",\"namespace\":\"default\","
        "\"resourceVersion\":\"9\"}}]}";
    static const char added[] =
        "{\"type\":\"ADDED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
        "\"metadata\":{\"name\":\"b\",\"namespace\":\"default\",\"resourceVersion\":\"11\"}}}\n";
    if (!strcmp(req->target, "/api/v1")) {
        io->head(io->io, 200, 0, "application/json");
        io->body(io->io, discovery, strlen(discovery));
        return 0;
    }
    if (!strstr(req->target, "watch=true")) {
        pthread_mutex_lock(&r->mu);
        r->lists++;
        pthread_mutex_unlock(&r->mu);
        io->head(io->io, 200, 0, "application/json");
        io->body(io->io, list, strlen(list));
        return 0;
    }
    pthread_mutex_lock(&r->mu);
    int n = ++r->watches;
    pthread_mutex_unlock(&r->mu);
    io->head(io->io, 200, 0, "application/json");
    if (n == 1 && deliver(io, added, strlen(added), 1))
        return 0;
    /* Then nothing more until the informer stops. */
    io->on_cancel(io->io, router_wake, r);
    pthread_mutex_lock(&r->mu);
    r->blocked++;
    pthread_cond_broadcast(&r->cv);
    while (!r->woken && !io->cancelled(io->io))
        pthread_cond_wait(&r->cv, &r->mu);
    pthread_mutex_unlock(&r->mu);
    return CTRL_ERR_CANCELLED;
}

Test(rt_script, informer_syncs_and_stops)
{
    ctrl_config *cfg = NULL;
    cr_assert_eq(ctrl_config_from_url("http://informer.invalid", &cfg, NULL), 0);
    cr_assert_eq(
        ctrl_config_set_roundtripper(cfg, &(ctrl_roundtripper){.roundtrip = routed, .ud = &R}), 0);
    ctrl_client *c = NULL;
    cr_assert_eq(ctrl_client_new(cfg, NULL, &c, NULL), 0);
    ctrl_config_free(cfg);
    ctrl_cache *cache = NULL;
    cr_assert_eq(ctrl_cache_new(c, &(ctrl_cache_options){.no_watch_list = true}, &cache, NULL), 0);
    ctrl_informer *inf = NULL;
    cr_assert_eq(ctrl_cache_informer(cache, "v1", "ConfigMap", NULL, &inf, NULL), 0);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    json_t *obj = NULL;
    cr_assert_eq(ctrl_informer_get(inf, "default", "a", &obj), 0);
    json_decref(obj);
    /* The watch's event arrives one byte at a time. */
    int rc = CTRL_ERR_NOT_FOUND;
    for (int i = 0; i < 500 && rc != 0; i++) {
        rc = ctrl_informer_get(inf, "default", "b", &obj);
        if (rc != 0)
            usleep(10000);
    }
    cr_assert_eq(rc, 0);
    json_decref(obj);
    char rv[32];
    ctrl_informer_last_rv(inf, rv, sizeof rv);
    cr_assert_str_eq(rv, "11");
    /* Stopping wakes the round-tripper blocked in the watch. */
    pthread_mutex_lock(&R.mu);
    while (!R.blocked)
        pthread_cond_wait(&R.cv, &R.mu);
    pthread_mutex_unlock(&R.mu);
    int64_t t0 = mono_ms();
    ctrl_cache_stop(cache);
    int64_t took = mono_ms() - t0;
    cr_assert_lt(took, 5000, "took %lld ms", (long long)took);
    cr_assert_geq(R.wakes, 1);
    cr_assert_eq(R.lists, 1);
    ctrl_cache_free(cache);
    ctrl_client_free(c);
}

Test(rt_script, dropped_post_retried_when_asked)
{
    ctrl_client *c = scripted_client("http://scripted.invalid", NULL,
                                     (ctrl_client_options){.retry_non_idempotent = true});
    script_add((step){.what = DROPPED});
    script_add((step){.status = 201, .body = cm_ok});
    json_t *obj = cm(), *out = NULL;
    ctrl_error err = {0};
    cr_assert_eq(ctrl_client_create(c, obj, NULL, &out, &err), 0, "%s", err.message);
    cr_assert_eq(S.calls, 2);
    json_decref(out);
    json_decref(obj);
    ctrl_client_free(c);
}

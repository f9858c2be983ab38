/*
 * test_reconcile_errors.c - what a controller built with ctrl_builder says
 * and frees, against an in-process fakeapi: a reconcile failing on a
 * conflict logs the server's message, reason, verb and object (not a bare
 * code); the context gives the controller's name and the manager's event
 * recorder; the builder's user data is freed with the manager, and at once
 * when the builder fails; a metrics or health port in use is named with
 * the address and the system's reason; a watched kind the server does not
 * serve (no CRD) is named within seconds, and the controller works once
 * the CRD is created.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>
#include <string.h>
#include <time.h>

#include "ctrl/client.h"
#include "ctrl/manager.h"
#include "ctrl/object.h"
#include "fakeapi/fakeapi.h"

static fakeapi_server *api;
static ctrl_config *cfg;

static void setup(void)
{
    cr_assert_eq(fakeapi_start(&(fakeapi_options){0}, &api), 0);
    ctrl_error err = {0};
    cr_assert_eq(ctrl_config_from_url(fakeapi_url(api), &cfg, &err), 0, "%s", err.message);
}

static void teardown(void)
{
    ctrl_config_free(cfg);
    fakeapi_stop(api);
}

TestSuite(reconcile_errors, .init = setup, .fini = teardown, .timeout = 60);

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char error_line[4096];
static char serve_line[4096];
static char nomatch_line[4096];
static int nomatch_lines;

static void sink(const char *line, void *user)
{
    (void)user;
    pthread_mutex_lock(&mu);
    if (!error_line[0] && strstr(line, "Reconciler error"))
        snprintf(error_line, sizeof error_line, "%s", line);
    if (!serve_line[0] && strstr(line, "cannot serve"))
        snprintf(serve_line, sizeof serve_line, "%s", line);
    if (strstr(line, "no matches for kind")) {
        if (!nomatch_line[0])
            snprintf(nomatch_line, sizeof nomatch_line, "%s", line);
        nomatch_lines++;
    }
    pthread_mutex_unlock(&mu);
}

typedef struct seen {
    int frees;
    int reconciles;
    bool had_recorder;
    char name[64];
} seen;

static void seen_free(void *user)
{
    ((seen *)user)->frees++;
}

/* Update the ConfigMap with a stale resourceVersion: a conflict. */
static ctrl_result stale_update(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    seen *s = user;
    pthread_mutex_lock(&mu);
    s->reconciles++;
    s->had_recorder = ctrl_ctx_recorder(ctx) != NULL;
    snprintf(s->name, sizeof s->name, "%s", ctrl_ctx_controller(ctx));
    pthread_mutex_unlock(&mu);
    json_t *cm = NULL;
    int rc =
        ctrl_client_get(ctrl_ctx_client(ctx), "v1", "ConfigMap", req->ns, req->name, &cm, NULL);
    if (rc < 0)
        return ctrl_err(rc);
    json_object_set_new(json_object_get(cm, "metadata"), "resourceVersion", json_string("1"));
    rc = ctrl_client_update(ctrl_ctx_client(ctx), cm, NULL, NULL, NULL);
    json_decref(cm);
    return rc < 0 ? ctrl_terminal(rc) : ctrl_done();
}

static void *run(void *arg)
{
    ctrl_manager_start(arg, NULL);
    return NULL;
}

Test(reconcile_errors, conflict_logs_message_verb_and_object)
{
    fakeapi_error ferr = {0};
    const char cm[] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: default, name: x}\n"
                      "data: {a: b}\n";
    cr_assert_eq(fakeapi_apply(api, cm, strlen(cm), &ferr), 0, "%s", ferr.message);
    /* Two writes so resourceVersion "1" is stale whatever the counter. */
    const char cm2[] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {namespace: default, name: x}\n"
                       "data: {a: c}\n";
    cr_assert_eq(fakeapi_apply(api, cm2, strlen(cm2), &ferr), 0, "%s", ferr.message);

    ctrl_manager_options o = {.metrics_addr = "0", .log_sink = sink};
    ctrl_manager *mgr = NULL;
    cr_assert_eq(ctrl_manager_new_for_config(cfg, &o, &mgr, NULL), 0);
    seen s = {0};
    ctrl_builder *b = ctrl_builder_named(ctrl_builder_for(mgr, "v1", "ConfigMap"), "cms");
    cr_assert_eq(ctrl_builder_complete(ctrl_builder_with_user_free(b, seen_free), stale_update, &s),
                 0);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, run, mgr), 0);
    bool got = false;
    for (int i = 0; i < 1000 && !got; i++) {
        pthread_mutex_lock(&mu);
        got = error_line[0] != '\0';
        pthread_mutex_unlock(&mu);
        if (!got)
            nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    ctrl_manager_stop(mgr);
    pthread_join(t, NULL);
    cr_assert(got, "no Reconciler error line");
    cr_assert(strstr(error_line, "Operation cannot be fulfilled on configmaps"), "%s", error_line);
    cr_assert(strstr(error_line, "verb=update"), "%s", error_line);
    cr_assert(strstr(error_line, "object=default/x"), "%s", error_line);
    cr_assert(strstr(error_line, "reason=Conflict"), "%s", error_line);
    cr_assert_null(strstr(error_line, "code=-"), "%s", error_line);
    cr_assert(s.had_recorder);
    cr_assert_str_eq(s.name, "cms");
    cr_assert_eq(s.frees, 0, "user data lives as long as the controller");
    ctrl_manager_free(mgr);
    cr_assert_eq(s.frees, 1, "freed once, with the manager");
}

Test(reconcile_errors, user_data_freed_when_the_builder_fails)
{
    ctrl_manager_options o = {.metrics_addr = "0", .log_sink = sink};
    ctrl_manager *mgr = NULL;
    cr_assert_eq(ctrl_manager_new_for_config(cfg, &o, &mgr, NULL), 0);
    seen a = {0}, b = {0};
    ctrl_builder *b1 = ctrl_builder_named(ctrl_builder_for(mgr, "v1", "ConfigMap"), "same");
    cr_assert_eq(
        ctrl_builder_complete(ctrl_builder_with_user_free(b1, seen_free), stale_update, &a), 0);
    ctrl_builder *b2 = ctrl_builder_named(ctrl_builder_for(mgr, "v1", "ConfigMap"), "same");
    cr_assert_lt(
        ctrl_builder_complete(ctrl_builder_with_user_free(b2, seen_free), stale_update, &b), 0,
        "a duplicate name is refused");
    cr_assert_eq(b.frees, 1, "the refused controller's data is freed at once");
    cr_assert_eq(a.frees, 0);
    ctrl_manager_free(mgr);
    cr_assert_eq(a.frees, 1);
    cr_assert_eq(b.frees, 1);
}

/* A port someone else listens on. */
static int busy_port(int *fd)
{
    *fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(*fd, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    cr_assert_eq(bind(*fd, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(*fd, 1), 0);
    socklen_t len = sizeof a;
    cr_assert_eq(getsockname(*fd, (struct sockaddr *)&a, &len), 0);
    return ntohs(a.sin_port);
}

static void port_in_use(bool health)
{
    int fd;
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", busy_port(&fd));
    ctrl_manager_options o = {.metrics_addr = health ? "0" : addr,
                              .health_probe_addr = health ? addr : NULL,
                              .log_sink = sink};
    ctrl_manager *mgr = NULL;
    cr_assert_eq(ctrl_manager_new_for_config(cfg, &o, &mgr, NULL), 0);
    serve_line[0] = '\0';
    cr_assert_eq(ctrl_manager_start(mgr, NULL), CTRL_ERR_IO);
    ctrl_manager_free(mgr);
    close(fd);
    char want[128];
    snprintf(want, sizeof want, "listen tcp %s: bind: %s (errno %d)", addr, strerror(EADDRINUSE),
             EADDRINUSE);
    cr_assert(strstr(serve_line, want), "%s", serve_line);
    cr_assert(strstr(serve_line, health ? "health probes" : "metrics"), "%s", serve_line);
}

Test(reconcile_errors, metrics_port_in_use)
{
    port_in_use(false);
}

Test(reconcile_errors, health_port_in_use)
{
    port_in_use(true);
}

static const char widget_crd[] = "apiVersion: apiextensions.k8s.io/v1\n"
                                 "kind: CustomResourceDefinition\n"
                                 "metadata: {name: widgets.example.com}\n"
                                 "spec:\n"
                                 "  group: example.com\n"
                                 "  scope: Namespaced\n"
                                 "  names: {plural: widgets, singular: widget, kind: Widget}\n"
                                 "  versions:\n"
                                 "  - {name: v1, served: true, storage: true}\n";

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

typedef struct widget_seen {
    int reconciles;
    char last[64];
} widget_seen;

static ctrl_result widget_reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    (void)ctx;
    widget_seen *w = user;
    pthread_mutex_lock(&mu);
    w->reconciles++;
    snprintf(w->last, sizeof w->last, "%s/%s", req->ns, req->name);
    pthread_mutex_unlock(&mu);
    return ctrl_done();
}

/* Poll cond (under mu) every 10 ms for up to ms milliseconds. */
#define WAIT_FOR(cond, ms)                                                                         \
    do {                                                                                           \
        for (int64_t end_ = mono_ms() + (ms); mono_ms() < end_;) {                                 \
            pthread_mutex_lock(&mu);                                                               \
            bool ok_ = (cond);                                                                     \
            pthread_mutex_unlock(&mu);                                                             \
            if (ok_)                                                                               \
                break;                                                                             \
            nanosleep(&(struct timespec){0, 10000000}, NULL);                                      \
        }                                                                                          \
    } while (0)

Test(reconcile_errors, unserved_kind_is_named_and_retried)
{
    pthread_mutex_lock(&mu);
    nomatch_line[0] = '\0';
    nomatch_lines = 0;
    pthread_mutex_unlock(&mu);
    ctrl_manager_options o = {.metrics_addr = "0", .log_sink = sink};
    ctrl_manager *mgr = NULL;
    cr_assert_eq(ctrl_manager_new_for_config(cfg, &o, &mgr, NULL), 0);
    widget_seen w = {0};
    cr_assert_eq(ctrl_builder_complete(ctrl_builder_for(mgr, "example.com/v1", "Widget"),
                                       widget_reconcile, &w),
                 0);
    int64_t t0 = mono_ms();
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, run, mgr), 0);
    WAIT_FOR(nomatch_line[0] != '\0', 5000);
    int64_t took = mono_ms() - t0;
    pthread_mutex_lock(&mu);
    char line[4096];
    snprintf(line, sizeof line, "%s", nomatch_line);
    pthread_mutex_unlock(&mu);
    cr_assert(line[0], "no error naming the unserved kind within 5 s");
    cr_assert_lt(took, 5000);
    cr_assert(strstr(line, "level=error"), "%s", line);
    cr_assert(strstr(line, "no matches for kind \\\"Widget\\\" in version "
                           "\\\"example.com/v1\\\""),
              "%s", line);
    cr_assert(strstr(line, "kind=Widget.example.com"), "%s", line);

    /* It keeps trying: a second report comes after the first backoff. */
    WAIT_FOR(nomatch_lines >= 2, 5000);
    pthread_mutex_lock(&mu);
    int reports = nomatch_lines;
    pthread_mutex_unlock(&mu);
    cr_assert_geq(reports, 2, "retried and reported again");

    /* The CRD appears: discovery is read again, the informer syncs, the
     * controller starts and reconciles a Widget. */
    fakeapi_error ferr = {0};
    cr_assert_eq(fakeapi_apply(api, widget_crd, strlen(widget_crd), &ferr), 0, "%s", ferr.message);
    const char obj[] = "apiVersion: example.com/v1\nkind: Widget\n"
                       "metadata: {namespace: default, name: w1}\n";
    cr_assert_eq(fakeapi_apply(api, obj, strlen(obj), &ferr), 0, "%s", ferr.message);
    WAIT_FOR(w.reconciles > 0, 30000);
    pthread_mutex_lock(&mu);
    int n = w.reconciles;
    char last[64];
    snprintf(last, sizeof last, "%s", w.last);
    pthread_mutex_unlock(&mu);
    ctrl_manager_stop(mgr);
    pthread_join(t, NULL);
    ctrl_manager_free(mgr);
    cr_assert_gt(n, 0, "the controller never reconciled once the CRD existed");
    cr_assert_str_eq(last, "default/w1");
}

/*
 * bench_controller.c - a controller's throughput on libctrl's manager
 * against an in-process fakeapi, one JSON object a line.
 *
 *   controller_converge  N primary objects exist before the manager starts;
 *                        time from ctrl_manager_start to the last status
 *                        written (cache sync, N reconciles, N status PUTs),
 *                        and reconciles per second over that time, for 1, 4
 *                        and 16 workers (max_concurrent_reconciles).
 *
 * Two controllers (--mode):
 *   widget  a minimal one on a CRD of its own (widgets.bench.example.com):
 *           read the object from the cache, write status.observedGeneration
 *           through /status; a generation-changed predicate keeps its own
 *           status writes from waking it again. One reconcile and one write
 *           per object.
 *   podset  the example PodSet controller (examples/replicaset) on PodSets
 *           with replicas 0: per object a finalizer update and a status
 *           write, and the reconciles their events bring.
 *
 * Usage: bench_controller [--objects N] [--mode widget|podset|both]
 *                         [--workers 1,4,16]
 * Figures are reported, never asserted; the exit status is non-zero only if
 * the benchmark could not run (or did not converge within 120 s).
 *
 * DESIGN: the main thread owns the server, writes the objects in-process
 * (fakeapi_apply of 500-item Lists), starts the manager on a second thread
 * and polls for convergence: the widget reconcile counts its status writes
 * in an atomic counter; for podset, once the manager's
 * rest_client_requests_total shows two PUTs per PodSet, a list of them
 * from the server confirms that every status is current. Each run gets a fresh server and manager.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "ctrl/manager.h"
#include "fakeapi/fakeapi.h"
#include "replicaset.h"

#define CONVERGE_LIMIT_NS (120 * CTRL_SECOND)

static const char widget_crd[] =
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
    "\"metadata\":{\"name\":\"widgets.bench.example.com\"},\"spec\":{\"group\":\"bench.example."
    "com\",\"scope\":\"Namespaced\",\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\","
    "\"kind\":\"Widget\",\"listKind\":\"WidgetList\"},\"versions\":[{\"name\":\"v1\",\"served\":"
    "true,\"storage\":true,\"subresources\":{\"status\":{}},\"schema\":{\"openAPIV3Schema\":{"
    "\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}}]}}";

static atomic_long status_writes;
static atomic_long write_errors;

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * CTRL_SECOND + ts.tv_nsec;
}

/* CPU time of the whole process (server, manager, this thread), in µs. */
static int64_t cpu_us(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (int64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 + ru.ru_utime.tv_usec +
           ru.ru_stime.tv_usec;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void quiet(const char *line, void *user)
{
    (void)line, (void)user;
}

/* ---- the widget controller ---- */

static ctrl_result widget_reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    (void)user;
    ctrl_informer *inf = NULL;
    int rc = ctrl_cache_informer(ctrl_ctx_cache(ctx), "bench.example.com/v1", "Widget", NULL, &inf,
                                 NULL);
    json_t *obj = NULL;
    if (rc == 0)
        rc = ctrl_informer_get(inf, req->ns, req->name, &obj);
    if (ctrl_err_is_not_found(rc))
        return ctrl_done();
    if (rc < 0)
        return ctrl_err(rc);
    json_t *gen = json_object_get(json_object_get(obj, "metadata"), "generation");
    json_t *seen = json_object_get(json_object_get(obj, "status"), "observedGeneration");
    if (seen && json_integer_value(seen) == json_integer_value(gen)) {
        json_decref(obj);
        return ctrl_done();
    }
    json_t *copy = json_deep_copy(obj);
    json_decref(obj);
    if (!copy)
        return ctrl_err(CTRL_ERR_NOMEM);
    json_object_set_new(copy, "status",
                        json_pack("{s:I}", "observedGeneration", json_integer_value(gen)));
    rc = ctrl_client_update_status(ctrl_ctx_client(ctx), copy, NULL, NULL, NULL);
    json_decref(copy);
    if (rc < 0) {
        atomic_fetch_add(&write_errors, 1);
        return ctrl_err(rc);
    }
    atomic_fetch_add(&status_writes, 1);
    return ctrl_done();
}

static int widget_setup(ctrl_manager *mgr, int workers)
{
    ctrl_builder *b = ctrl_builder_for(mgr, "bench.example.com/v1", "Widget");
    ctrl_builder_with_predicates(b, ctrl_pred_generation_changed());
    ctrl_builder_named(b, "widget");
    ctrl_builder_with_options(b, &(ctrl_controller_options){.max_concurrent_reconciles = workers});
    return ctrl_builder_complete(b, widget_reconcile, NULL);
}

/* ---- runs ---- */

typedef struct run {
    ctrl_manager *mgr;
    pthread_t t;
    int rc;
} run;

static void *run_mgr(void *arg)
{
    run *r = arg;
    r->rc = ctrl_manager_start(r->mgr, NULL);
    return NULL;
}

static int apply(fakeapi_server *api, const char *text)
{
    fakeapi_error err = {0};
    int rc = fakeapi_apply(api, text, strlen(text), &err);
    if (rc < 0)
        fprintf(stderr, "bench_controller: apply: %s\n", err.message);
    return rc;
}

/* Create n objects of the mode's kind, 500 to a List. */
static int create_objects(fakeapi_server *api, bool podset, int n)
{
    int rc = 0;
    for (int start = 0; start < n && rc == 0; start += 500) {
        json_t *items = json_array();
        for (int i = start; i < n && i < start + 500; i++) {
            char name[32];
            snprintf(name, sizeof name, "obj-%05d", i);
            json_t *o = podset ? json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:i, s:{s:{s:{s:s}}, "
                                           "s:{s:[{s:s, s:s}]}}}}",
                                           "apiVersion", EXAMPLE_PODSET_API_VERSION, "kind",
                                           EXAMPLE_PODSET_KIND, "metadata", "name", name,
                                           "namespace", "default", "spec", "replicas", 0,
                                           "template", "metadata", "labels", "app", name, "spec",
                                           "containers", "name", "c", "image", "busybox")
                               : json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:i}}", "apiVersion",
                                           "bench.example.com/v1", "kind", "Widget", "metadata",
                                           "name", name, "namespace", "default", "spec", "size", i);
            json_array_append_new(items, o);
        }
        json_t *list =
            json_pack("{s:s, s:s, s:o}", "apiVersion", "v1", "kind", "List", "items", items);
        char *text = json_dumps(list, JSON_COMPACT);
        json_decref(list);
        rc = text ? apply(api, text) : -1;
        free(text);
    }
    return rc;
}

/* PodSets whose status is current. */
static long podsets_done(fakeapi_server *api)
{
    json_t *all = NULL;
    if (fakeapi_list(api, EXAMPLE_PODSET_API_VERSION, EXAMPLE_PODSET_KIND, "default", NULL, &all,
                     NULL) < 0)
        return -1;
    long done = 0;
    size_t i;
    json_t *o;
    json_array_foreach(all, i, o)
    {
        json_t *gen = json_object_get(json_object_get(o, "metadata"), "generation");
        json_t *seen = json_object_get(json_object_get(o, "status"), "observedGeneration");
        if (seen && json_integer_value(seen) == json_integer_value(gen))
            done++;
    }
    json_decref(all);
    return done;
}

static double metric(ctrl_manager *mgr, const char *name, const char *ctl, const char *result)
{
    char lbl[128];
    if (result)
        snprintf(lbl, sizeof lbl, "controller=\"%s\",result=\"%s\"", ctl, result);
    else
        snprintf(lbl, sizeof lbl, "controller=\"%s\"", ctl);
    return ctrl_metrics_value(ctrl_manager_metrics(mgr), name, lbl);
}

static int bench_once(bool podset, int n, int workers)
{
    fakeapi_server *api = NULL;
    ctrl_config *cfg = NULL;
    run r = {0};
    bool started = false;
    int rc = fakeapi_start(&(fakeapi_options){.seed = 1, .history_max_events = 1000000}, &api);
    if (rc < 0) {
        fprintf(stderr, "bench_controller: fakeapi_start: %s\n", fakeapi_strerror(rc));
        return 1;
    }
    char crd_path[1024];
    snprintf(crd_path, sizeof crd_path, "%s/replicaset/crd.yaml", KH_FIXTURES);
    rc = podset ? fakeapi_apply_file(api, crd_path, NULL) : apply(api, widget_crd);
    if (rc == 0)
        rc = create_objects(api, podset, n);
    if (rc == 0)
        rc = ctrl_config_from_url(fakeapi_url(api), &cfg, NULL);
    if (rc == 0)
        rc = ctrl_manager_new_for_config(
            cfg, &(ctrl_manager_options){.metrics_addr = "0", .log_sink = quiet, .seed = 1}, &r.mgr,
            NULL);
    json_t *conf = json_pack("{s:i}", "maxConcurrentReconciles", workers);
    if (rc == 0)
        rc = podset ? example_replicaset_setup(r.mgr, conf) : widget_setup(r.mgr, workers);
    json_decref(conf);
    if (rc < 0) {
        fprintf(stderr, "bench_controller: set-up failed: %d\n", rc);
        goto out;
    }

    atomic_store(&status_writes, 0);
    atomic_store(&write_errors, 0);
    int64_t t0 = mono_ns(), cpu0 = cpu_us();
    if (pthread_create(&r.t, NULL, run_mgr, &r) != 0) {
        rc = -1;
        goto out;
    }
    started = true;
    long done = 0;
    int64_t t_end = 0;
    for (;;) {
        if (podset) {
            /* Cheap first (two PUTs per PodSet: finalizer, status), then
             * a list of them all to confirm. */
            char lbl[256];
            snprintf(lbl, sizeof lbl, "code=\"200\",host=\"%s\",method=\"PUT\"",
                     fakeapi_url(api) + strlen("http://"));
            double puts =
                ctrl_metrics_value(ctrl_manager_metrics(r.mgr), "rest_client_requests_total", lbl);
            done = puts >= 2.0 * n ? podsets_done(api) : 0;
        } else {
            done = atomic_load(&status_writes);
        }
        t_end = mono_ns();
        if (done >= n || t_end - t0 > CONVERGE_LIMIT_NS)
            break;
        sleep_ms(2);
    }
    const char *ctl = podset ? "podset" : "widget";
    double reconciles = metric(r.mgr, "controller_runtime_reconcile_total", ctl, "success") +
                        metric(r.mgr, "controller_runtime_reconcile_total", ctl, "error") +
                        metric(r.mgr, "controller_runtime_reconcile_total", ctl, "requeue") +
                        metric(r.mgr, "controller_runtime_reconcile_total", ctl, "requeue_after");
    double errors = metric(r.mgr, "controller_runtime_reconcile_errors_total", ctl, NULL);
    double secs = (double)(t_end - t0) / 1e9;
    double cpu_per_obj = (double)(cpu_us() - cpu0) / (done > 0 ? (double)done : 1.0);
    printf("{\"bench\":\"controller_converge\",\"mode\":\"%s\",\"objects\":%d,\"workers\":%d,"
           "\"value\":%.3f,\"unit\":\"s\",\"converged\":%s,\"done\":%ld,\"reconciles\":%.0f,"
           "\"reconciles_per_s\":%.0f,\"objects_per_s\":%.0f,\"reconcile_errors\":%.0f,"
           "\"cpu_us_per_object\":%.0f,"
           "\"target\":\"< 5 s for 10000\"}\n",
           podset ? "podset" : "widget", n, workers, secs, done >= n ? "true" : "false", done,
           reconciles, secs > 0 ? reconciles / secs : 0, secs > 0 ? (double)done / secs : 0, errors,
           cpu_per_obj);
    fflush(stdout);
    if (done < n)
        rc = -1;
out:
    if (started) {
        ctrl_manager_stop(r.mgr);
        pthread_join(r.t, NULL);
    }
    ctrl_manager_free(r.mgr);
    ctrl_config_free(cfg);
    fakeapi_stop(api);
    return rc < 0;
}

int main(int argc, char **argv)
{
    int n = 10000;
    const char *mode = "both";
    char workers_arg[64] = "1,4,16";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--objects") && i + 1 < argc)
            n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--mode") && i + 1 < argc)
            mode = argv[++i];
        else if (!strcmp(argv[i], "--workers") && i + 1 < argc)
            snprintf(workers_arg, sizeof workers_arg, "%s", argv[++i]);
        else {
            fprintf(stderr, "usage: bench_controller [--objects N] [--mode widget|podset|both] "
                            "[--workers 1,4,16]\n");
            return 2;
        }
    }
    if (n < 1 || (strcmp(mode, "widget") && strcmp(mode, "podset") && strcmp(mode, "both")))
        return 2;
    int failed = 0;
    for (int m = 0; m < 2; m++) {
        bool podset = m == 1;
        if (strcmp(mode, "both") && strcmp(mode, podset ? "podset" : "widget"))
            continue;
        char list[64];
        snprintf(list, sizeof list, "%s", workers_arg);
        char *save = NULL;
        for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
            int workers = atoi(w);
            if (workers < 1 || workers > 1024)
                return 2;
            failed |= bench_once(podset, n, workers);
        }
    }
    return failed;
}

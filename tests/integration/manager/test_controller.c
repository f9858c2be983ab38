/*
 * Integration tests for controllers (manager/controller_int.h, the
 * internal constructor the manager and builder use) against an in-process
 * fakeapi on port 0 and the real informer cache: each result kind,
 * requeue-after and backoff on a fake clock, terminal errors, the owner
 * and map handlers, predicates, max_concurrent_reconciles, graceful stop
 * with reconciles in flight, logs (also through the ctrl_logger handle),
 * hooks and metrics, the priority queue (initial list low, results'
 * priorities), the reconcile timeout.
 */
#include <criterion/criterion.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../../manager/controller_int.h"
#include "ctrl/cache.h"
#include "ctrl/client.h"
#include "ctrl/metrics.h"
#include "fakeapi/fakeapi.h"

/* ---- a fake clock for the controller (the cache keeps real time) ---- */

typedef struct fclock {
    pthread_mutex_t mu;
    int64_t now;
} fclock;

static fclock fc = {PTHREAD_MUTEX_INITIALIZER, 1000 * CTRL_SECOND};

static int64_t fc_now(void *ud)
{
    fclock *f = ud;
    pthread_mutex_lock(&f->mu);
    int64_t t = f->now;
    pthread_mutex_unlock(&f->mu);
    return t;
}

/* Short real waits: callers re-check, so an advance is seen within 1 ms. */
static void fc_wait(void *ud, pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline)
{
    if (fc_now(ud) >= deadline)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 1000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(cv, mu, &ts);
}

static void fc_advance(int64_t ns)
{
    pthread_mutex_lock(&fc.mu);
    fc.now += ns;
    pthread_mutex_unlock(&fc.mu);
}

static const ctrl_clock fake = {.now_ns = fc_now, .wait_until = fc_wait, .ud = &fc};

#define MAX_CALLS 512

typedef struct rec {
    pthread_mutex_t mu;
    char keys[MAX_CALLS][128];
    int prios[MAX_CALLS];
    int n;
    ctrl_result (*decide)(const ctrl_request *req, int nth);
    int sleep_ms;
    atomic_int active, max_active, violations;
    atomic_int in_flight[16];
    atomic_bool saw_cancel, finished;
    char log_line[2048];
    char helper_line[2048];
} rec;

static rec R;

/* ---- the fixture ---- */

static fakeapi_server *api;
static ctrl_client *client;
static ctrl_cache *cache;
static ctrl_metrics *metrics;
static ctrl__controller *ctl;

static void setup(void)
{
    cr_assert_eq(fakeapi_start(&(fakeapi_options){0}, &api), 0);
    ctrl_config *cfg = NULL;
    ctrl_error err = {0};
    cr_assert_eq(ctrl_config_from_url(fakeapi_url(api), &cfg, &err), 0, "%s", err.message);
    cr_assert_eq(
        ctrl_client_new(cfg, &(ctrl_client_options){.user_agent = "test-ctl"}, &client, &err), 0,
        "%s", err.message);
    ctrl_config_free(cfg);
    cr_assert_eq(ctrl_cache_new(client, &(ctrl_cache_options){0}, &cache, &err), 0, "%s",
                 err.message);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_metrics_new(&metrics), 0);
}

static ctrl__logger *logger;

static void teardown(void)
{
    cr_assert_eq(atomic_load(&R.violations), 0, "a reconcile saw something wrong");
    ctrl__controller_stop(ctl);
    ctrl_cache_stop(cache);
    ctrl__controller_free(ctl);
    ctl = NULL;
    ctrl_cache_free(cache);
    cache = NULL;
    ctrl_metrics_free(metrics);
    metrics = NULL;
    ctrl_client_free(client);
    client = NULL;
    fakeapi_stop(api);
    api = NULL;
    ctrl__logger_free(logger);
    logger = NULL;
}

TestSuite(controller, .init = setup, .fini = teardown, .timeout = 60);

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#define WAIT_FOR(cond, ms)                                                                         \
    do {                                                                                           \
        int64_t until_ = mono_ms() + (ms);                                                         \
        while (!(cond) && mono_ms() < until_)                                                      \
            usleep(1000);                                                                          \
        cr_assert(cond, "timed out waiting for %s", #cond);                                        \
    } while (0)

static void apply_json(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void apply_json(const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fakeapi_error e = {0};
    cr_assert_eq(fakeapi_apply(api, buf, strlen(buf), &e), 0, "%s: %s", buf, e.message);
}

static void put_cm(const char *name, const char *labels, const char *value)
{
    apply_json("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"namespace\":"
               "\"default\",\"name\":\"%s\",\"labels\":{%s}},\"data\":{\"v\":\"%s\"}}",
               name, labels ? labels : "", value);
}

/* ---- a recording reconciler ---- */

static void rec_reset(void)
{
    memset(&R, 0, sizeof(R));
    pthread_mutex_init(&R.mu, NULL);
}

static int calls(void)
{
    pthread_mutex_lock(&R.mu);
    int n = R.n;
    pthread_mutex_unlock(&R.mu);
    return n;
}

static int calls_for(const char *key)
{
    pthread_mutex_lock(&R.mu);
    int n = 0;
    for (int i = 0; i < R.n; i++)
        n += strcmp(R.keys[i], key) == 0;
    pthread_mutex_unlock(&R.mu);
    return n;
}

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    (void)user;
    char key[128];
    snprintf(key, sizeof key, "%s/%s", req->ns, req->name);
    pthread_mutex_lock(&R.mu);
    int nth = 0;
    for (int i = 0; i < R.n; i++)
        nth += strcmp(R.keys[i], key) == 0;
    if (R.n < MAX_CALLS) {
        R.prios[R.n] = ctrl_ctx_priority(ctx);
        snprintf(R.keys[R.n++], sizeof R.keys[0], "%s", key);
    }
    pthread_mutex_unlock(&R.mu);

    /* names "w<i>" share an in-flight counter per i: never two at once */
    int slot = req->name[0] == 'w' ? atoi(req->name + 1) % 16 : 15;
    if (atomic_fetch_add(&R.in_flight[slot], 1) != 0)
        atomic_fetch_add(&R.violations, 1);
    int a = atomic_fetch_add(&R.active, 1) + 1;
    int m = atomic_load(&R.max_active);
    while (a > m && !atomic_compare_exchange_weak(&R.max_active, &m, a)) {
    }
    /* (no cr_assert on worker threads: record, assert on the test thread) */
    if (strcmp(ctrl_ctx_controller(ctx), "cms") != 0 || strlen(ctrl_ctx_reconcile_id(ctx)) != 36)
        atomic_fetch_add(&R.violations, 1);
    ctrl_log_info(ctx, "reconciling", "data", "x");
    if (R.sleep_ms)
        usleep((useconds_t)R.sleep_ms * 1000);
    if (ctrl_ctx_cancelled(ctx))
        atomic_store(&R.saw_cancel, true);
    atomic_fetch_sub(&R.active, 1);
    atomic_fetch_sub(&R.in_flight[slot], 1);
    ctrl_result res = R.decide ? R.decide(req, nth) : ctrl_done();
    atomic_store(&R.finished, true);
    return res;
}

static void log_sink(const char *line, void *user)
{
    (void)user;
    pthread_mutex_lock(&R.mu);
    if (strstr(line, "msg=reconciling") && !R.log_line[0])
        snprintf(R.log_line, sizeof R.log_line, "%s", line);
    if (strstr(line, "msg=\"from a helper\"") && !R.helper_line[0])
        snprintf(R.helper_line, sizeof R.helper_line, "%s", line);
    pthread_mutex_unlock(&R.mu);
}

/* A controller "cms" on ConfigMaps (handler/predicate as given; h NULL =
 * for_object), started. */
static void start_controller(const ctrl_controller_options *o, const ctrl_clock *clock,
                             const ctrl_hooks *hooks, ctrl_handler *h, ctrl_predicate *p)
{
    if (!logger)
        cr_assert_eq(ctrl__logger_new(
                         &(ctrl__log_options){.level = CTRL_LOG_INFO, .sink = log_sink}, &logger),
                     0);
    ctrl__controller_config cfg = {
        .name = "cms",
        .reconcile = reconcile,
        .options = o ? *o : (ctrl_controller_options){0},
        .cache = cache,
        .client = client,
        .metrics = metrics,
        .clock = clock,
        .hooks = hooks,
        .logger = logger,
        .seed = 42,
    };
    cr_assert_eq(ctrl__controller_new(&cfg, &ctl), 0);
    ctrl_informer *inf = NULL;
    cr_assert_eq(ctrl_cache_informer(cache, "v1", "ConfigMap", NULL, &inf, NULL), 0);
    cr_assert_eq(ctrl__controller_watch(ctl, inf, h ? h : ctrl_handler_for_object(), p, NULL), 0);
    cr_assert_eq(ctrl__controller_wait_synced(ctl, 10 * CTRL_SECOND), 0);
    cr_assert_eq(ctrl__controller_start(ctl), 0);
    cr_assert_eq(ctrl__controller_start(ctl), CTRL_ERR_ARG, "starting twice");
}

static double metric(const char *name, const char *labels)
{
    return ctrl_metrics_value(metrics, name, labels);
}

#define TOTAL(result)                                                                              \
    metric("controller_runtime_reconcile_total", "controller=\"cms\",result=\"" result "\"")

/* ---- results ---- */

Test(controller, done_reconciles_once_per_change)
{
    rec_reset();
    start_controller(NULL, NULL, NULL, NULL, NULL);
    put_cm("a", NULL, "1");
    WAIT_FOR(calls() == 1, 5000);
    cr_assert_str_eq(R.keys[0], "default/a");
    WAIT_FOR(ctrl__controller_idle(ctl), 2000);
    usleep(100 * 1000);
    cr_assert_eq(calls(), 1, "done: nothing more");
    put_cm("a", NULL, "2");
    WAIT_FOR(calls() == 2, 5000);
    WAIT_FOR(TOTAL("success") == 2, 2000);
    cr_assert_eq(TOTAL("error"), 0);
    cr_assert_eq(metric("controller_runtime_max_concurrent_reconciles", "controller=\"cms\""), 1);
    cr_assert_eq(metric("controller_runtime_reconcile_time_seconds", "controller=\"cms\""), 2,
                 "two observations");
    cr_assert_geq(metric("workqueue_adds_total", "name=\"cms\""), 2);
    cr_assert_eq(ctrl__controller_next_deadline(ctl), INT64_MAX);
    /* the log line of the reconcile carries who, what and which run */
    pthread_mutex_lock(&R.mu);
    cr_assert_not_null(strstr(R.log_line, "controller=cms namespace=default name=a reconcileID="),
                       "%s", R.log_line);
    cr_assert_not_null(strstr(R.log_line, "data=x"), "%s", R.log_line);
    pthread_mutex_unlock(&R.mu);
    char *text = ctrl_metrics_text(metrics);
    cr_assert_not_null(
        strstr(text,
               "controller_runtime_reconcile_total{controller=\"cms\",result=\"success\"} 2\n"),
        "%s", text);
    cr_assert_not_null(strstr(text, "controller_runtime_active_workers{controller=\"cms\"} 0\n"));
    free(text);
}

static ctrl_result requeue_after_once(const ctrl_request *req, int nth)
{
    (void)req;
    return nth == 0 ? ctrl_requeue_after(10 * CTRL_SECOND) : ctrl_done();
}

Test(controller, requeue_after_on_the_fake_clock)
{
    rec_reset();
    R.decide = requeue_after_once;
    start_controller(NULL, &fake, NULL, NULL, NULL);
    int64_t t0 = fc_now(&fc);
    put_cm("a", NULL, "1");
    WAIT_FOR(calls() == 1, 5000);
    WAIT_FOR(ctrl__controller_next_deadline(ctl) == t0 + 10 * CTRL_SECOND, 2000);
    /* A delayed key is not ready work. The worker adds it before it marks
     * the key done, so the deadline can show a moment before idle does. */
    WAIT_FOR(ctrl__controller_idle(ctl), 2000);
    usleep(50 * 1000);
    cr_assert_eq(calls(), 1, "no real-time requeue behind the clock's back");
    fc_advance(10 * CTRL_SECOND);
    WAIT_FOR(calls() == 2, 5000);
    WAIT_FOR(TOTAL("success") == 1, 2000);
    cr_assert_eq(TOTAL("requeue_after"), 1);
    cr_assert_eq(ctrl__controller_next_deadline(ctl), INT64_MAX);
}

static ctrl_result fail_three_times(const ctrl_request *req, int nth)
{
    (void)req;
    return nth < 3 ? ctrl_err(CTRL_ERR_CONFLICT) : ctrl_done();
}

Test(controller, errors_are_retried_with_backoff)
{
    rec_reset();
    R.decide = fail_three_times;
    start_controller(NULL, &fake, NULL, NULL, NULL);
    put_cm("a", NULL, "1");
    int64_t want = 5 * CTRL_MILLISECOND;
    for (int i = 1; i <= 3; i++) {
        WAIT_FOR(calls() == i, 5000);
        int64_t t = fc_now(&fc);
        WAIT_FOR(ctrl__controller_next_deadline(ctl) == t + want, 2000);
        cr_assert_eq(ctrl_workqueue_num_requeues(ctrl__controller_queue(ctl), "default/a"), i);
        fc_advance(want);
        want *= 2;
    }
    WAIT_FOR(calls() == 4, 5000);
    WAIT_FOR(TOTAL("success") == 1, 2000);
    cr_assert_eq(TOTAL("error"), 3);
    cr_assert_eq(metric("controller_runtime_reconcile_errors_total", "controller=\"cms\""), 3);
    cr_assert_eq(metric("controller_runtime_terminal_reconcile_errors_total", "controller=\"cms\""),
                 0);
    cr_assert_eq(metric("workqueue_retries_total", "name=\"cms\""), 3);
    cr_assert_eq(ctrl_workqueue_num_requeues(ctrl__controller_queue(ctl), "default/a"), 0,
                 "success forgets the failures");
}

static ctrl_result terminal(const ctrl_request *req, int nth)
{
    (void)req;
    (void)nth;
    return ctrl_terminal(CTRL_ERR_INVALID);
}

Test(controller, terminal_errors_are_not_retried)
{
    rec_reset();
    R.decide = terminal;
    start_controller(NULL, NULL, NULL, NULL, NULL);
    put_cm("a", NULL, "1");
    WAIT_FOR(calls() == 1, 5000);
    WAIT_FOR(metric("controller_runtime_terminal_reconcile_errors_total", "controller=\"cms\"") ==
                 1,
             2000);
    usleep(200 * 1000);
    cr_assert_eq(calls(), 1);
    cr_assert_eq(metric("controller_runtime_reconcile_errors_total", "controller=\"cms\""), 1);
    cr_assert_eq(TOTAL("error"), 1);
    cr_assert_eq(ctrl__controller_next_deadline(ctl), INT64_MAX);
    cr_assert(ctrl__controller_idle(ctl));
}

static ctrl_result requeue_once(const ctrl_request *req, int nth)
{
    (void)req;
    return nth == 0 ? ctrl_requeue() : ctrl_done();
}

Test(controller, requeue_is_rate_limited)
{
    rec_reset();
    R.decide = requeue_once;
    start_controller(NULL, &fake, NULL, NULL, NULL);
    put_cm("a", NULL, "1");
    WAIT_FOR(calls() == 1, 5000);
    int64_t t = fc_now(&fc);
    WAIT_FOR(ctrl__controller_next_deadline(ctl) == t + 5 * CTRL_MILLISECOND, 2000);
    fc_advance(5 * CTRL_MILLISECOND);
    WAIT_FOR(calls() == 2, 5000);
    WAIT_FOR(TOTAL("success") == 1, 2000);
    cr_assert_eq(TOTAL("requeue"), 1);
}

/* ---- handlers and predicates ---- */

static const char *uid_of(const char *kind, const char *name)
{
    static char uids[2][64];
    static int next;
    json_t *o = NULL;
    cr_assert_eq(fakeapi_get(api, "v1", kind, "default", name, &o, NULL), 0);
    char *u = uids[next++ % 2];
    snprintf(u, 64, "%s",
             json_string_value(json_object_get(json_object_get(o, "metadata"), "uid")));
    json_decref(o);
    return u;
}

Test(controller, owner_handler_reconciles_the_owner)
{
    rec_reset();
    start_controller(NULL, NULL, NULL, ctrl_handler_for_owner("v1", "Secret", true), NULL);
    /* Owners exist, so the garbage collector leaves the child alone. */
    apply_json("{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"owner\"}}");
    apply_json("{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"other\"}}");
    const char *u1 = uid_of("Secret", "owner"), *u2 = uid_of("Secret", "other");
    apply_json("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"namespace\":"
               "\"default\",\"name\":\"child\",\"ownerReferences\":[{\"apiVersion\":\"v1\","
               "\"kind\":\"Secret\",\"name\":\"owner\",\"uid\":\"%s\",\"controller\":true},"
               "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"name\":\"other\","
               "\"uid\":\"%s\"}]},\"data\":{\"v\":\"1\"}}",
               u1, u2);
    WAIT_FOR(calls() >= 1, 5000);
    cr_assert_str_eq(R.keys[0], "default/owner");
    WAIT_FOR(ctrl__controller_idle(ctl), 2000);
    int before_update = calls();
    apply_json("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"namespace\":"
               "\"default\",\"name\":\"child\"},\"data\":{\"v\":\"2\"}}");
    WAIT_FOR(calls() > before_update, 5000);
    WAIT_FOR(ctrl__controller_idle(ctl), 2000);
    cr_assert_eq(calls_for("default/owner"), calls(), "every request is for the owner");
    int n = calls();
    put_cm("orphan", NULL, "1");
    usleep(200 * 1000);
    cr_assert_eq(calls(), n, "an object without owners maps to nothing");
    cr_assert_eq(calls_for("default/other"), 0, "not the controller owner");
}

static json_t *map_fn(const json_t *obj, void *user)
{
    (void)user;
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    char mapped[128];
    snprintf(mapped, sizeof mapped, "mapped-%s", name);
    return json_pack("[{s:s,s:s}]", "namespace", "elsewhere", "name", mapped);
}

Test(controller, map_handler)
{
    rec_reset();
    start_controller(NULL, NULL, NULL, ctrl_handler_from_map(map_fn, NULL), NULL);
    put_cm("a", NULL, "1");
    WAIT_FOR(calls() == 1, 5000);
    cr_assert_str_eq(R.keys[0], "elsewhere/mapped-a");
}

Test(controller, predicates_filter_events)
{
    rec_reset();
    start_controller(NULL, NULL, NULL, NULL,
                     ctrl_pred_and(ctrl_pred_label_selector("app=web"),
                                   ctrl_pred_not(ctrl_pred_label_selector("skip"))));
    put_cm("plain", NULL, "1");
    put_cm("other", "\"app\":\"db\"", "1");
    put_cm("skipped", "\"app\":\"web\",\"skip\":\"y\"", "1");
    put_cm("web", "\"app\":\"web\"", "1");
    WAIT_FOR(calls() == 1, 5000);
    usleep(200 * 1000);
    cr_assert_eq(calls(), 1);
    cr_assert_str_eq(R.keys[0], "default/web");
    put_cm("plain", "\"app\":\"web\"", "2"); /* now it matches */
    WAIT_FOR(calls_for("default/plain") == 1, 5000);
}

/* ---- concurrency ---- */

Test(controller, max_concurrent_reconciles)
{
    rec_reset();
    R.sleep_ms = 150;
    start_controller(&(ctrl_controller_options){.max_concurrent_reconciles = 4}, NULL, NULL, NULL,
                     NULL);
    cr_assert_eq(metric("controller_runtime_max_concurrent_reconciles", "controller=\"cms\""), 4);
    char name[16];
    for (int i = 0; i < 8; i++) {
        snprintf(name, sizeof name, "w%d", i);
        put_cm(name, NULL, "1");
    }
    WAIT_FOR(atomic_load(&R.max_active) == 4, 5000);
    /* change w0..w3 while they are being processed: queued again, not run twice at once */
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "w%d", i);
        put_cm(name, NULL, "2");
    }
    WAIT_FOR(calls() >= 12, 10000);
    WAIT_FOR(ctrl__controller_idle(ctl), 5000);
    cr_assert_eq(atomic_load(&R.max_active), 4, "never more than 4 workers");
    cr_assert_eq(atomic_load(&R.violations), 0, "one key was reconciled twice at once");
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "default/w%d", i);
        cr_assert_geq(calls_for(name), 2);
    }
}

Test(controller, graceful_stop_waits_for_reconciles_in_flight)
{
    rec_reset();
    R.sleep_ms = 300;
    start_controller(NULL, NULL, NULL, NULL, NULL);
    put_cm("slow", NULL, "1");
    put_cm("queued", NULL, "1");
    WAIT_FOR(atomic_load(&R.active) == 1, 5000);
    ctrl__controller_stop(ctl);
    cr_assert(atomic_load(&R.finished), "stop returned before the reconcile in flight ended");
    cr_assert(atomic_load(&R.saw_cancel), "the reconcile saw the stop");
    cr_assert_eq(calls(), 1, "queued keys are dropped");
    ctrl__controller_stop(ctl); /* idempotent */
}

/* ---- hooks and the runnable ---- */

typedef struct hooklog {
    pthread_mutex_t mu;
    char lines[64][160];
    int n;
} hooklog;

static hooklog H = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void hook(const char *what, const char *kind, const char *actor, const char *key)
{
    pthread_mutex_lock(&H.mu);
    if (H.n < 64 && strcmp(kind, "reconcile") == 0)
        snprintf(H.lines[H.n++], sizeof H.lines[0], "%s %s %s %s", what, kind, actor, key);
    pthread_mutex_unlock(&H.mu);
}

static void before(void *ud, const char *kind, const char *actor, const char *key)
{
    (void)ud;
    hook("before", kind, actor, key);
    if (calls_for(key) != 0) /* before() runs before the reconcile */
        atomic_fetch_add(&R.violations, 1);
}

static void after(void *ud, const char *kind, const char *actor, const char *key)
{
    (void)ud;
    hook("after", kind, actor, key);
    /* after() runs after the reconcile, once the key is done */
    if (calls_for(key) != 1 || ctrl_workqueue_processing(ctrl__controller_queue(ctl)) != 0)
        atomic_fetch_add(&R.violations, 1);
}

typedef struct runner {
    ctrl__controller *c;
    int rc;
} runner;

static void *run_main(void *arg)
{
    runner *r = arg;
    r->rc = ctrl__controller_run(r->c);
    return NULL;
}

Test(controller, hooks_and_runnable)
{
    rec_reset();
    H.n = 0;
    ctrl_hooks hooks = {.before = before, .after = after};
    ctrl__controller_config cfg = {
        .name = "cms", .reconcile = reconcile, .cache = cache, .client = client, .hooks = &hooks};
    cr_assert_eq(ctrl__controller_new(&cfg, &ctl), 0);
    ctrl_informer *inf = NULL;
    cr_assert_eq(ctrl_cache_informer(cache, "v1", "ConfigMap", NULL, &inf, NULL), 0);
    cr_assert_eq(ctrl__controller_watch(ctl, inf, ctrl_handler_for_object(), NULL, NULL), 0);
    runner r = {.c = ctl, .rc = -1};
    pthread_t th;
    pthread_create(&th, NULL, run_main, &r);
    put_cm("h", NULL, "1");
    WAIT_FOR(calls() == 1, 5000);
    pthread_mutex_lock(&H.mu);
    int n = H.n;
    pthread_mutex_unlock(&H.mu);
    for (int i = 0; i < 200 && n < 2; i++) {
        usleep(5000);
        pthread_mutex_lock(&H.mu);
        n = H.n;
        pthread_mutex_unlock(&H.mu);
    }
    cr_assert_eq(n, 2);
    cr_assert_str_eq(H.lines[0], "before reconcile cms default/h");
    cr_assert_str_eq(H.lines[1], "after reconcile cms default/h");
    ctrl__controller_halt(ctl);
    pthread_join(th, NULL);
    cr_assert_eq(r.rc, 0);
}

Test(controller, injected_events_without_an_informer)
{
    rec_reset();
    ctrl__controller_config cfg = {.name = "cms", .reconcile = reconcile};
    cr_assert_eq(ctrl__controller_new(&cfg, &ctl), 0);
    int idx = -1;
    cr_assert_eq(ctrl__controller_watch(ctl, NULL, ctrl_handler_for_object(),
                                        ctrl_pred_generation_changed(), &idx),
                 0);
    json_t *g1 =
        json_pack("{s:{s:s,s:s,s:i}}", "metadata", "namespace", "ns", "name", "x", "generation", 1);
    json_t *g2 =
        json_pack("{s:{s:s,s:s,s:i}}", "metadata", "namespace", "ns", "name", "x", "generation", 2);
    ctrl__controller_event(ctl, idx, CTRL__EVENT_ADD, NULL, g1);
    ctrl__controller_event(ctl, idx, CTRL__EVENT_UPDATE, g1, g1); /* filtered */
    cr_assert_eq(ctrl_workqueue_len(ctrl__controller_queue(ctl)), 1);
    cr_assert_not(ctrl__controller_idle(ctl));
    cr_assert_eq(ctrl__controller_start(ctl), 0);
    WAIT_FOR(calls() == 1, 5000);
    ctrl__controller_event(ctl, idx, CTRL__EVENT_UPDATE, g1, g2);
    WAIT_FOR(calls() == 2, 5000);
    cr_assert_str_eq(R.keys[1], "ns/x");
    json_decref(g1);
    json_decref(g2);
}

/* ---- the logger handle ---- */

/* A helper that is given only the logger. */
static void helper_logs(const ctrl_logger *lg, int replicas)
{
    ctrl_logger_debug(lg, "dropped below the level");
    ctrl_logger_info(lg, "from a helper", ctrl_kv_int("replicas", replicas),
                     ctrl_kv_bool("ready", true), "note", "n");
}

static ctrl_result reconcile_with_helper(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    (void)req;
    (void)user;
    helper_logs(ctrl_ctx_logger(ctx), 3);
    pthread_mutex_lock(&R.mu);
    snprintf(R.keys[R.n++], sizeof R.keys[0], "%s", ctrl_ctx_reconcile_id(ctx));
    pthread_mutex_unlock(&R.mu);
    return ctrl_done();
}

Test(controller, logger_handle_carries_the_reconcile_context)
{
    rec_reset();
    cr_assert_eq(
        ctrl__logger_new(&(ctrl__log_options){.level = CTRL_LOG_INFO, .sink = log_sink}, &logger),
        0);
    ctrl__controller_config cfg = {
        .name = "cms", .reconcile = reconcile_with_helper, .logger = logger, .seed = 7};
    cr_assert_eq(ctrl__controller_new(&cfg, &ctl), 0);
    int idx = -1;
    cr_assert_eq(ctrl__controller_watch(ctl, NULL, ctrl_handler_for_object(), NULL, &idx), 0);
    json_t *o = json_pack("{s:{s:s,s:s}}", "metadata", "namespace", "ns1", "name", "obj");
    ctrl__controller_event(ctl, idx, CTRL__EVENT_ADD, NULL, o);
    json_decref(o);
    cr_assert_eq(ctrl__controller_start(ctl), 0);
    WAIT_FOR(calls() == 1, 5000);
    ctrl__controller_stop(ctl);
    char want[256];
    snprintf(want, sizeof want,
             "logger=controller msg=\"from a helper\" controller=cms namespace=ns1 name=obj "
             "reconcileID=%s replicas=3 ready=true note=n",
             R.keys[0]);
    cr_assert(strstr(R.helper_line, want), "%s\nwant: %s", R.helper_line, want);
    cr_assert_not(ctrl_logger_enabled(NULL, CTRL_LOG_ERROR), "no ctx, no lines");
    cr_assert_null(ctrl_ctx_logger(NULL));
    ctrl_logger_error(NULL, "nowhere"); /* a NULL handle writes nothing */
}

/* ---- the priority queue ---- */

/* A stopped controller "cms" with one worker, its informer synced (the
 * initial list queued), workers not started. */
static void synced_controller(const ctrl_controller_options *o)
{
    ctrl__controller_config cfg = {
        .name = "cms",
        .reconcile = reconcile,
        .options = o ? *o : (ctrl_controller_options){0},
        .cache = cache,
        .client = client,
        .clock = &fake,
        .metrics = metrics,
        .seed = 1,
    };
    cr_assert_eq(ctrl__controller_new(&cfg, &ctl), 0);
    ctrl_informer *inf = NULL;
    cr_assert_eq(ctrl_cache_informer(cache, "v1", "ConfigMap", NULL, &inf, NULL), 0);
    cr_assert_eq(ctrl__controller_watch(ctl, inf, ctrl_handler_for_object(), NULL, NULL), 0);
    cr_assert_eq(ctrl__controller_wait_synced(ctl, 10 * CTRL_SECOND), 0);
}

static void initial_list_then_change(bool no_priority_queue)
{
    rec_reset();
    for (int i = 0; i < 5; i++) {
        char name[16];
        snprintf(name, sizeof name, "init%d", i);
        put_cm(name, NULL, "1");
    }
    synced_controller(&(ctrl_controller_options){.no_priority_queue = no_priority_queue});
    ctrl_workqueue *q = ctrl__controller_queue(ctl);
    WAIT_FOR(ctrl_workqueue_len(q) == 5, 5000);
    put_cm("changed", NULL, "1"); /* a watch event after the initial list */
    WAIT_FOR(ctrl_workqueue_len(q) == 6, 5000);
    cr_assert_eq(ctrl_metrics_value(metrics, "workqueue_depth", "name=\"cms\",priority=\"-100\""),
                 no_priority_queue ? 0 : 5);
    cr_assert_eq(ctrl__controller_start(ctl), 0);
    WAIT_FOR(calls() == 6, 5000);
    int first_init = no_priority_queue ? 0 : 1;
    int changed_at = no_priority_queue ? 5 : 0;
    cr_assert_str_eq(R.keys[changed_at], "default/changed");
    cr_assert_eq(R.prios[changed_at], 0);
    for (int i = 0; i < 5; i++) {
        char want[32];
        snprintf(want, sizeof want, "default/init%d", i);
        cr_assert_str_eq(R.keys[first_init + i], want, "FIFO within a priority");
        cr_assert_eq(R.prios[first_init + i], no_priority_queue ? 0 : CTRL_PRIORITY_LOW);
    }
}

Test(controller, initial_list_goes_after_a_later_change)
{
    initial_list_then_change(false);
}

Test(controller, without_the_priority_queue_keys_are_fifo)
{
    initial_list_then_change(true);
}

/* init0: requeue after 1 s keeping its (low) priority; init1: requeue
 * after 1 s at priority 50; then done. */
static ctrl_result requeue_with_priorities(const ctrl_request *req, int nth)
{
    if (nth > 0)
        return ctrl_done();
    if (!strcmp(req->name, "init1"))
        return ctrl_with_priority(ctrl_requeue_after(CTRL_SECOND), 50);
    return ctrl_requeue_after(CTRL_SECOND);
}

Test(controller, a_result_sets_the_priority_of_its_requeue)
{
    rec_reset();
    R.decide = requeue_with_priorities;
    put_cm("init0", NULL, "1");
    put_cm("init1", NULL, "1");
    synced_controller(NULL);
    WAIT_FOR(ctrl_workqueue_len(ctrl__controller_queue(ctl)) == 2, 5000);
    cr_assert_eq(ctrl__controller_start(ctl), 0);
    WAIT_FOR(calls() == 2, 5000);
    WAIT_FOR(ctrl__controller_idle(ctl), 2000);
    cr_assert_str_eq(R.keys[0], "default/init0");
    /* Both requeues become ready at the same clock time, init0's first:
     * init1 goes first with the priority its result named, init0 keeps
     * the low priority of the initial list. */
    fc_advance(CTRL_SECOND);
    WAIT_FOR(calls() == 4, 5000);
    cr_assert_str_eq(R.keys[2], "default/init1");
    cr_assert_eq(R.prios[2], 50);
    cr_assert_str_eq(R.keys[3], "default/init0");
    cr_assert_eq(R.prios[3], CTRL_PRIORITY_LOW);
}

/* ---- the reconcile timeout ---- */

typedef struct timeout_seen {
    atomic_bool started, cancelled_at_start, saw_cancel;
    _Atomic int64_t deadline;
} timeout_seen;

static timeout_seen TS;

/* "slow" waits (real time, bounded) until its ctx says cancelled; others
 * return at once. */
static ctrl_result reconcile_until_cancelled(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    (void)user;
    if (strcmp(req->name, "slow") != 0)
        return ctrl_done();
    atomic_store(&TS.deadline, ctrl_ctx_deadline(ctx));
    atomic_store(&TS.cancelled_at_start, ctrl_ctx_cancelled(ctx));
    atomic_store(&TS.started, true);
    for (int i = 0; i < 5000 && !ctrl_ctx_cancelled(ctx); i++)
        usleep(1000);
    atomic_store(&TS.saw_cancel, ctrl_ctx_cancelled(ctx));
    return ctrl_done();
}

Test(controller, reconcile_timeout_cancels_the_ctx_and_is_counted)
{
    memset(&TS, 0, sizeof TS);
    ctrl__controller_config cfg = {
        .name = "cms",
        .reconcile = reconcile_until_cancelled,
        .options = {.reconcile_timeout_ns = 30 * CTRL_SECOND},
        .clock = &fake,
        .metrics = metrics,
    };
    cr_assert_eq(ctrl__controller_new(&cfg, &ctl), 0);
    int idx = -1;
    cr_assert_eq(ctrl__controller_watch(ctl, NULL, ctrl_handler_for_object(), NULL, &idx), 0);
    const char *timeouts = "controller=\"cms\"";
    cr_assert_eq(metric("controller_runtime_reconcile_timeouts_total", timeouts), 0);
    cr_assert_eq(metric("controller_runtime_reconcile_panics_total", timeouts), 0,
                 "the series exists, at 0");
    cr_assert_eq(ctrl__controller_start(ctl), 0);
    json_t *fast = json_pack("{s:{s:s,s:s}}", "metadata", "namespace", "ns", "name", "fast");
    ctrl__controller_event(ctl, idx, CTRL__EVENT_ADD, NULL, fast);
    json_decref(fast);
    WAIT_FOR(ctrl__controller_idle(ctl) && TOTAL("success") == 1, 5000);
    cr_assert_eq(metric("controller_runtime_reconcile_timeouts_total", timeouts), 0,
                 "a quick reconcile is no timeout");

    int64_t t0 = fc_now(&fc);
    json_t *slow = json_pack("{s:{s:s,s:s}}", "metadata", "namespace", "ns", "name", "slow");
    ctrl__controller_event(ctl, idx, CTRL__EVENT_ADD, NULL, slow);
    json_decref(slow);
    WAIT_FOR(atomic_load(&TS.started), 5000);
    cr_assert_eq(atomic_load(&TS.deadline), t0 + 30 * CTRL_SECOND);
    cr_assert_not(atomic_load(&TS.cancelled_at_start));
    fc_advance(29 * CTRL_SECOND);
    usleep(20 * 1000);
    cr_assert_eq(TOTAL("success"), 1, "still running before its deadline");
    fc_advance(CTRL_SECOND);
    WAIT_FOR(TOTAL("success") == 2, 5000);
    cr_assert(atomic_load(&TS.saw_cancel), "the ctx reported cancelled at the deadline");
    cr_assert_eq(metric("controller_runtime_reconcile_timeouts_total", timeouts), 1);
}

Test(controller, resync_adds_at_low_priority_changes_at_default)
{
    rec_reset();
    /* This test's cache resyncs every 200 ms (real time). */
    ctrl_cache_stop(cache);
    ctrl_cache_free(cache);
    cache = NULL;
    ctrl_error err = {0};
    cr_assert_eq(ctrl_cache_new(client, &(ctrl_cache_options){.resync_ns = 200 * CTRL_MILLISECOND},
                                &cache, &err),
                 0, "%s", err.message);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    put_cm("r", NULL, "1");
    synced_controller(NULL);
    cr_assert_eq(ctrl__controller_start(ctl), 0);
    WAIT_FOR(calls() >= 2, 5000); /* the initial add, then a resync */
    int before = calls();
    put_cm("r", NULL, "2"); /* a change */
    bool changed_seen = false;
    int64_t until = mono_ms() + 5000;
    while (!changed_seen && mono_ms() < until) {
        pthread_mutex_lock(&R.mu);
        for (int i = before; i < R.n; i++)
            changed_seen = changed_seen || R.prios[i] == 0;
        pthread_mutex_unlock(&R.mu);
        usleep(1000);
    }
    pthread_mutex_lock(&R.mu);
    cr_assert_eq(R.prios[0], CTRL_PRIORITY_LOW, "the initial list");
    cr_assert_eq(R.prios[1], CTRL_PRIORITY_LOW, "a resync");
    pthread_mutex_unlock(&R.mu);
    cr_assert(changed_seen, "the change was queued at priority 0");
}

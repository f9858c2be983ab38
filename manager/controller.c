/*
 * controller.c - a controller: watches feeding a work queue, and workers
 * running the reconcile loop (controller-runtime's Controller and its
 * reconcileHandler).
 *
 * DESIGN
 *
 * Threads:
 *  - informer threads call the watch callbacks: predicate, handler, then
 *    ctrl_workqueue_add (thread-safe; nothing else is touched);
 *  - max_concurrent_reconciles worker threads loop on ctrl_workqueue_get;
 *    the queue guarantees one worker per key;
 *  - the owner (the manager's runnable thread or a test) starts and stops.
 *
 * Workers are started with ctrl__spawn (the scheduler's thread hooks);
 * every wake-up goes through ctrl_clock_notify (ctrl/clock.h).
 *
 * Locks: mu protects the watch list, the worker array and the
 * started/stopped/halted flags; it is never held while calling out (to a
 * reconcile, a hook, the queue or an informer). cancelled and active are
 * atomics read from reconciles and the idle check.
 *
 * One reconcile (worker): get key -> hooks.before("reconcile", name, key)
 * -> reconcile(ctx) -> metrics, logs, the result's queue operation
 * (forget / add_after / add_rate_limited) -> done(key) -> hooks.after. The
 * queue operations and done come before hooks.after so that a scheduler
 * released by after() already sees the state the reconcile left behind
 * (the requeued key, the worker no longer busy).
 */
#include "controller_int.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctrl/error.h"
#include "ctrl/manager.h"
#include "error_int.h"
#include "spawn_int.h"

#define MAX_WATCHES 256
#define MAX_WORKERS 1024
#define SYNC_TIMEOUT (2 * CTRL_MINUTE)
#define SYNC_SLICE (100 * CTRL_MILLISECOND)

typedef struct watch {
    ctrl__controller *c;
    ctrl_informer *inf;
    ctrl_handler *h;
    ctrl_predicate *p;
} watch;

struct ctrl__controller {
    char *name;
    char *label;         /* controller="name" */
    char *result_lbl[4]; /* controller="name",result="..." */
    ctrl_reconcile_fn fn;
    void *user;
    ctrl_controller_options o;
    ctrl_cache *cache;
    ctrl_client *client, *api_reader;
    ctrl_metrics *metrics;
    ctrl_clock clock;
    bool has_clock;
    ctrl_hooks hooks;
    bool has_hooks;
    const ctrl__logger *log;
    bool own_client, own_logger;
    ctrl_workqueue *q;
    ctrl_manager *mgr;
    void (*user_free)(void *user);

    pthread_mutex_t mu;
    pthread_cond_t cv;
    watch *watches[MAX_WATCHES];
    size_t nwatches;
    pthread_t *workers;
    int nworkers;
    bool started, stopped, halted;
    bool configuring; /* the builder is still adding watches: run waits */

    atomic_bool cancelled;
    atomic_int active;
    atomic_uint_fast64_t next_id;
    uint64_t seed;
};

/* A view of the manager's logger with a reconcile's values. */
struct ctrl_logger {
    const ctrl__logger *log;
    const char *fixed[8]; /* controller, namespace, name, reconcileID */
    size_t nfixed;
};

struct ctrl_ctx {
    ctrl__controller *c;
    const char *ns, *name;
    char id[40];
    int priority;
    int64_t deadline; /* clock time; INT64_MAX = no timeout */
    ctrl_logger lg;
};

enum { R_SUCCESS, R_ERROR, R_REQUEUE, R_REQUEUE_AFTER };
static const char *const result_names[] = {"success", "error", "requeue", "requeue_after"};

/* controller-runtime's reconcile_time_seconds buckets. */
static const double reconcile_buckets[] = {
    0.005, 0.01, 0.025, 0.05, 0.1,  0.15, 0.2,  0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6,
    0.7,   0.8,  0.9,   1.0,  1.25, 1.5,  1.75, 2.0,  2.5, 3.0,  3.5, 4.0,  4.5, 5,
    6,     7,    8,     9,    10,   15,   20,   25,   30,  40,   50,  60};

static const ctrl_clock *clk(const ctrl__controller *c)
{
    return c->has_clock ? &c->clock : NULL;
}

/* ---- metrics ---- */

static void declare_metrics(ctrl__controller *c)
{
    ctrl_metrics *m = c->metrics;
    ctrl_metrics_counter(m, "controller_runtime_reconcile_total",
                         "Total number of reconciliations per controller");
    ctrl_metrics_counter(m, "controller_runtime_reconcile_errors_total",
                         "Total number of reconciliation errors per controller");
    ctrl_metrics_counter(m, "controller_runtime_terminal_reconcile_errors_total",
                         "Total number of terminal reconciliation errors per controller");
    ctrl_metrics_counter(m, "controller_runtime_reconcile_panics_total",
                         "Total number of reconciliation panics per controller");
    ctrl_metrics_counter(m, "controller_runtime_reconcile_timeouts_total",
                         "Total number of reconciliation timeouts per controller");
    ctrl_metrics_histogram(m, "controller_runtime_reconcile_time_seconds",
                           "Length of time per reconciliation per controller", reconcile_buckets,
                           sizeof(reconcile_buckets) / sizeof(reconcile_buckets[0]));
    ctrl_metrics_gauge(m, "controller_runtime_max_concurrent_reconciles",
                       "Maximum number of concurrent reconciles per controller");
    ctrl_metrics_gauge(m, "controller_runtime_active_workers",
                       "Number of currently used workers per controller");
    /* As controller-runtime: every series exists from the start, at 0. */
    for (int i = 0; i < 4; i++)
        ctrl_metrics_add(m, "controller_runtime_reconcile_total", c->result_lbl[i], 0);
    ctrl_metrics_add(m, "controller_runtime_reconcile_errors_total", c->label, 0);
    ctrl_metrics_add(m, "controller_runtime_terminal_reconcile_errors_total", c->label, 0);
    /* A crash cannot be contained in C (controller.h): always 0. */
    ctrl_metrics_add(m, "controller_runtime_reconcile_panics_total", c->label, 0);
    ctrl_metrics_add(m, "controller_runtime_reconcile_timeouts_total", c->label, 0);
    ctrl_metrics_set(m, "controller_runtime_max_concurrent_reconciles", c->label,
                     c->o.max_concurrent_reconciles);
    ctrl_metrics_set(m, "controller_runtime_active_workers", c->label, 0);
}

/* A label value with the text format's escapes. */
static char *escape_label(const char *v)
{
    char *s = malloc(2 * strlen(v) + 1), *p = s;
    if (!s)
        return NULL;
    for (; *v; v++) {
        if (*v == '"' || *v == '\\' || *v == '\n')
            *p++ = '\\';
        *p++ = *v == '\n' ? 'n' : *v;
    }
    *p = '\0';
    return s;
}

/* ---- reconcile ids ---- */

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* A version-4 UUID drawn from the seed and a counter: the same seed gives
 * the same ids in the same order. */
static void make_id(ctrl__controller *c, char *buf, size_t len)
{
    uint64_t n = atomic_fetch_add(&c->next_id, 1);
    uint64_t a = splitmix64(c->seed ^ (2 * n)), b = splitmix64(c->seed ^ (2 * n + 1));
    a = (a & 0xffffffffffff0fffULL) | 0x4000ULL;
    b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
    snprintf(buf, len, "%08x-%04x-%04x-%04x-%012llx", (unsigned)(a >> 32),
             (unsigned)((a >> 16) & 0xffff), (unsigned)(a & 0xffff), (unsigned)(b >> 48),
             (unsigned long long)(b & 0xffffffffffffULL));
}

/* ---- lifecycle ---- */

int ctrl__controller_new(const ctrl__controller_config *cfg, ctrl__controller **out)
{
    if (!cfg || !out || !cfg->name || !*cfg->name || !cfg->reconcile)
        return CTRL_ERR_ARG;
    const ctrl_controller_options *o = &cfg->options;
    if (o->max_concurrent_reconciles < 0 || o->max_concurrent_reconciles > MAX_WORKERS ||
        o->base_delay_ns < 0 || o->max_delay_ns < 0 || o->reconcile_timeout_ns < 0)
        return CTRL_ERR_ARG;
    ctrl__controller *c = calloc(1, sizeof(*c));
    if (!c)
        return CTRL_ERR_NOMEM;
    c->o = *o;
    if (!c->o.max_concurrent_reconciles)
        c->o.max_concurrent_reconciles = 1;
    if (!c->o.slow_reconcile_ns)
        c->o.slow_reconcile_ns = 10 * CTRL_SECOND;
    c->fn = cfg->reconcile;
    c->user = cfg->user;
    c->mgr = cfg->manager;
    c->cache = cfg->cache;
    c->client = cfg->client;
    c->api_reader = cfg->api_reader ? cfg->api_reader : cfg->client;
    c->metrics = cfg->metrics;
    if (cfg->clock) {
        c->clock = *cfg->clock;
        c->has_clock = true;
    }
    if (cfg->hooks) {
        c->hooks = *cfg->hooks;
        c->has_hooks = true;
    }
    c->log = cfg->logger;
    c->seed = cfg->seed;
    if (!c->seed) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        c->seed =
            splitmix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)(uintptr_t)c);
    }
    atomic_init(&c->cancelled, false);
    atomic_init(&c->active, 0);
    atomic_init(&c->next_id, 0);

    int rc = CTRL_ERR_NOMEM;
    c->name = strdup(cfg->name);
    char *esc = escape_label(cfg->name);
    if (!c->name || !esc)
        goto fail;
    if (asprintf(&c->label, "controller=\"%s\"", esc) < 0) {
        c->label = NULL;
        goto fail;
    }
    for (int i = 0; i < 4; i++)
        if (asprintf(&c->result_lbl[i], "controller=\"%s\",result=\"%s\"", esc, result_names[i]) <
            0) {
            c->result_lbl[i] = NULL;
            goto fail;
        }
    rc = ctrl_workqueue_new(
        &(ctrl_workqueue_options){
            .name = cfg->name,
            .clock = cfg->clock,
            .base_delay_ns = c->o.base_delay_ns,
            .max_delay_ns = c->o.max_delay_ns,
            .metrics = cfg->metrics,
        },
        &c->q);
    if (rc < 0)
        goto fail;
    free(esc);
    if (c->metrics)
        declare_metrics(c);
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    c->own_client = cfg->own_client;
    c->own_logger = cfg->own_logger;
    *out = c;
    return 0;
fail:
    free(esc);
    for (int i = 0; i < 4; i++)
        free(c->result_lbl[i]);
    free(c->label);
    free(c->name);
    free(c);
    return rc;
}

void ctrl__controller_free(ctrl__controller *c)
{
    if (!c)
        return;
    ctrl__controller_stop(c);
    for (size_t i = 0; i < c->nwatches; i++) {
        ctrl_handler_free(c->watches[i]->h);
        ctrl_predicate_free(c->watches[i]->p);
        free(c->watches[i]);
    }
    ctrl_workqueue_free(c->q);
    free(c->workers);
    for (int i = 0; i < 4; i++)
        free(c->result_lbl[i]);
    free(c->label);
    free(c->name);
    if (c->own_client)
        ctrl_client_free(c->client);
    if (c->own_logger)
        ctrl__logger_free((ctrl__logger *)c->log);
    if (c->user_free && c->user)
        c->user_free(c->user);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* ---- events to the queue ---- */

/* What a handler's requests are queued with: one event's priority. */
typedef struct enqueue_to {
    ctrl__controller *c;
    int priority;
} enqueue_to;

static void enqueue(void *ud, const char *ns, const char *name)
{
    const enqueue_to *to = ud;
    char buf[512];
    int n = *ns ? snprintf(buf, sizeof(buf), "%s/%s", ns, name)
                : snprintf(buf, sizeof(buf), "%s", name);
    if (n < 0 || (size_t)n >= sizeof(buf))
        return; /* longer than any valid namespace/name */
    ctrl_workqueue_add_with_opts(to->c->q, buf,
                                 &(ctrl_workqueue_add_opts){.priority = to->priority});
}

/* low: the event is the initial list's or a resync's, not a change
 * (controller-runtime's handlers give those handler.LowPriority). */
static void dispatch(watch *w, ctrl__event_type type, const json_t *old_obj, const json_t *obj,
                     bool low)
{
    ctrl__controller *c = w->c;
    enqueue_to to = {c, low && !c->o.no_priority_queue ? CTRL_PRIORITY_LOW : 0};
    switch (type) {
    case CTRL__EVENT_ADD:
        if (ctrl__pred_create(w->p, obj))
            ctrl__handler_create(w->h, obj, enqueue, &to);
        return;
    case CTRL__EVENT_UPDATE:
        if (ctrl__pred_update(w->p, old_obj, obj))
            ctrl__handler_update(w->h, old_obj, obj, enqueue, &to);
        return;
    case CTRL__EVENT_DELETE:
        if (ctrl__pred_delete(w->p, obj))
            ctrl__handler_delete(w->h, obj, enqueue, &to);
        return;
    }
}

static const char *rv_of(const json_t *obj)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
}

static void on_add(const json_t *obj, bool initial, void *user)
{
    dispatch(user, CTRL__EVENT_ADD, NULL, obj, initial);
}

/* An update that changed nothing (same resourceVersion) is a resync. */
static void on_update(const json_t *old_obj, const json_t *new_obj, void *user)
{
    const char *a = rv_of(old_obj), *b = rv_of(new_obj);
    bool unchanged = old_obj == new_obj || (a && b && !strcmp(a, b));
    dispatch(user, CTRL__EVENT_UPDATE, old_obj, new_obj, unchanged);
}

static void on_delete(const json_t *obj, bool final_state_unknown, void *user)
{
    (void)final_state_unknown;
    dispatch(user, CTRL__EVENT_DELETE, NULL, obj, false);
}

int ctrl__controller_watch(ctrl__controller *c, ctrl_informer *inf, ctrl_handler *h,
                           ctrl_predicate *p, int *index)
{
    int rc = CTRL_ERR_ARG;
    if (!c || !h)
        goto fail;
    watch *w = calloc(1, sizeof(*w));
    if (!w) {
        rc = CTRL_ERR_NOMEM;
        goto fail;
    }
    *w = (watch){.c = c, .inf = inf, .h = h, .p = p};
    pthread_mutex_lock(&c->mu);
    if (c->nwatches == MAX_WATCHES) {
        pthread_mutex_unlock(&c->mu);
        free(w);
        goto fail;
    }
    int idx = (int)c->nwatches;
    c->watches[c->nwatches++] = w;
    pthread_mutex_unlock(&c->mu);
    if (inf) {
        rc = ctrl_informer_add_handler(
            inf, &(ctrl_event_handler){
                     .on_add = on_add, .on_update = on_update, .on_delete = on_delete, .user = w});
        if (rc < 0) {
            /* Not registered: the watch stays listed but inert (no events). */
            w->inf = NULL;
            return rc;
        }
    }
    if (index)
        *index = idx;
    return 0;
fail:
    ctrl_handler_free(h);
    ctrl_predicate_free(p);
    return rc;
}

void ctrl__controller_event(ctrl__controller *c, int index, ctrl__event_type type,
                            const json_t *old_obj, const json_t *obj)
{
    if (!c || index < 0)
        return;
    pthread_mutex_lock(&c->mu);
    watch *w = (size_t)index < c->nwatches ? c->watches[index] : NULL;
    pthread_mutex_unlock(&c->mu);
    if (w)
        dispatch(w, type, old_obj, obj, false);
}

/* ---- the reconcile loop ---- */

static void count_result(ctrl__controller *c, int r)
{
    if (c->metrics)
        ctrl_metrics_add(c->metrics, "controller_runtime_reconcile_total", c->result_lbl[r], 1);
}

static void set_active(ctrl__controller *c, int delta)
{
    int n = atomic_fetch_add(&c->active, delta) + delta;
    if (c->metrics)
        ctrl_metrics_set(c->metrics, "controller_runtime_active_workers", c->label, n);
}

static void reconcile_one(ctrl__controller *c, const char *key, int priority)
{
    char nsbuf[256];
    const char *slash = strchr(key, '/'), *ns = "", *name = key;
    if (slash && (size_t)(slash - key) < sizeof(nsbuf)) {
        memcpy(nsbuf, key, (size_t)(slash - key));
        nsbuf[slash - key] = '\0';
        ns = nsbuf;
        name = slash + 1;
    }
    if (c->has_hooks && c->hooks.before)
        c->hooks.before(c->hooks.ud, "reconcile", c->name, key);

    ctrl_ctx ctx = {.c = c, .ns = ns, .name = name, .priority = priority};
    make_id(c, ctx.id, sizeof(ctx.id));
    ctx.lg = (ctrl_logger){
        .log = c->log,
        .fixed = {"controller", c->name, "namespace", ns, "name", name, "reconcileID", ctx.id},
        .nfixed = 4};
    ctrl_request req = {.ns = ns, .name = name};
    ctrl__failure_clear();
    set_active(c, 1);
    int64_t t0 = ctrl_clock_now(clk(c));
    int64_t tmo = c->o.reconcile_timeout_ns;
    ctx.deadline = tmo > 0 && t0 <= INT64_MAX - tmo ? t0 + tmo : INT64_MAX;
    ctrl_result res = c->fn(&ctx, &req, c->user);
    int64_t took = ctrl_clock_now(clk(c)) - t0;
    if (tmo > 0 && took >= tmo) {
        if (c->metrics)
            ctrl_metrics_add(c->metrics, "controller_runtime_reconcile_timeouts_total", c->label,
                             1);
        if (ctrl__log_on(&ctx, CTRL_LOG_WARN)) {
            char d[32];
            snprintf(d, sizeof(d), "%.3fs", (double)tmo / 1e9);
            ctrl__log_kv(&ctx, CTRL_LOG_WARN, "Reconcile ran past its timeout", "timeout", d,
                         (const char *)0);
        }
    }
    set_active(c, -1);
    if (c->metrics)
        ctrl_metrics_observe(c->metrics, "controller_runtime_reconcile_time_seconds", c->label,
                             (double)took / 1e9);
    if (took > c->o.slow_reconcile_ns && ctrl__log_on(&ctx, CTRL_LOG_WARN)) {
        char d[32];
        snprintf(d, sizeof(d), "%.3fs", (double)took / 1e9);
        ctrl__log_kv(&ctx, CTRL_LOG_WARN, "slow reconcile", "duration", d, (const char *)0);
    }

    /* A requeue keeps the key's priority unless the result names one. */
    int prio = res.has_priority ? res.priority : priority;
    switch (res.kind) {
    case CTRL_RESULT_REQUEUE_AFTER:
        if (res.after_ns > 0) {
            ctrl_workqueue_forget(c->q, key);
            ctrl_workqueue_add_with_opts(
                c->q, key, &(ctrl_workqueue_add_opts){.after_ns = res.after_ns, .priority = prio});
            count_result(c, R_REQUEUE_AFTER);
            break;
        }
        /* requeue_after(0) is no requeue at all, as in controller-runtime */
        /* fall through */
    case CTRL_RESULT_DONE:
        ctrl_workqueue_forget(c->q, key);
        count_result(c, R_SUCCESS);
        break;
    case CTRL_RESULT_REQUEUE:
        ctrl_workqueue_add_with_opts(
            c->q, key, &(ctrl_workqueue_add_opts){.rate_limited = true, .priority = prio});
        count_result(c, R_REQUEUE);
        break;
    case CTRL_RESULT_ERROR:
    case CTRL_RESULT_TERMINAL:
    default: {
        bool terminal = res.kind == CTRL_RESULT_TERMINAL;
        if (terminal)
            ctrl_workqueue_forget(c->q, key);
        else
            ctrl_workqueue_add_with_opts(
                c->q, key, &(ctrl_workqueue_add_opts){.rate_limited = true, .priority = prio});
        if (c->metrics) {
            ctrl_metrics_add(c->metrics, "controller_runtime_reconcile_errors_total", c->label, 1);
            if (terminal)
                ctrl_metrics_add(c->metrics, "controller_runtime_terminal_reconcile_errors_total",
                                 c->label, 1);
        }
        count_result(c, R_ERROR);
        if (ctrl__log_on(&ctx, CTRL_LOG_ERROR)) {
            const char *what =
                terminal ? "Reconciler error (terminal, not retried)" : "Reconciler error";
            /* The request that failed with this code in this reconcile, if
             * any: the server's reason and message, the verb, the object. */
            const ctrl__failure *f = ctrl__failure_last();
            if (f->code && f->code == res.err)
                ctrl__log_kv(&ctx, CTRL_LOG_ERROR, what, "error", f->message, "reason",
                             f->reason[0] ? f->reason : ctrl_strerror(res.err), "verb", f->verb,
                             "resource", f->resource, "object", f->object, (const char *)0);
            else {
                char code[16];
                snprintf(code, sizeof(code), "%d", res.err);
                ctrl__log_kv(&ctx, CTRL_LOG_ERROR, what, "error", ctrl_strerror(res.err), "code",
                             code, (const char *)0);
            }
        }
        break;
    }
    }
    ctrl_workqueue_done(c->q, key);
    if (c->has_hooks && c->hooks.after)
        c->hooks.after(c->hooks.ud, "reconcile", c->name, key);
}

static void *worker_main(void *arg)
{
    ctrl__controller *c = arg;
    char *key;
    int priority = 0;
    while (ctrl_workqueue_get_with_priority(c->q, &key, &priority) == 0) {
        reconcile_one(c, key, priority);
        free(key);
    }
    return NULL;
}

int ctrl__controller_start(ctrl__controller *c)
{
    if (!c)
        return CTRL_ERR_ARG;
    pthread_mutex_lock(&c->mu);
    int rc = 0;
    if (c->started) {
        rc = CTRL_ERR_ARG;
        goto out;
    }
    int n = c->o.max_concurrent_reconciles;
    c->workers = calloc((size_t)n, sizeof(*c->workers));
    if (!c->workers) {
        rc = CTRL_ERR_NOMEM;
        goto out;
    }
    char tname[64];
    snprintf(tname, sizeof(tname), "reconcile/%s", c->name);
    for (int i = 0; i < n; i++) {
        if (ctrl__spawn(&c->workers[i], c->has_hooks ? &c->hooks : NULL, tname, worker_main, c) !=
            0) {
            rc = CTRL_ERR_NOMEM;
            break;
        }
        c->nworkers++;
    }
    c->started = true;
    if (rc < 0) {
        pthread_mutex_unlock(&c->mu);
        ctrl__controller_stop(c);
        return rc;
    }
    char nw[16];
    snprintf(nw, sizeof(nw), "%d", n);
    CTRL__LOG(c->log, CTRL_LOG_INFO, "controller", "Starting workers", "controller", c->name,
              "worker count", nw);
out:
    pthread_mutex_unlock(&c->mu);
    return rc;
}

void ctrl__controller_stop(ctrl__controller *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    if (c->stopped) {
        pthread_mutex_unlock(&c->mu);
        return;
    }
    c->stopped = true;
    bool started = c->started;
    pthread_mutex_unlock(&c->mu);
    atomic_store(&c->cancelled, true);
    ctrl_workqueue_shutdown(c->q, false);
    if (started)
        CTRL__LOG(c->log, CTRL_LOG_INFO, "controller",
                  "Shutdown signal received, waiting for all workers to finish", "controller",
                  c->name);
    /* The workers array is only written by start, which is over. */
    for (int i = 0; i < c->nworkers; i++)
        ctrl__join(c->has_hooks ? &c->hooks : NULL, c->workers[i]);
    c->nworkers = 0;
    if (started)
        CTRL__LOG(c->log, CTRL_LOG_INFO, "controller", "All workers finished", "controller",
                  c->name);
}

int ctrl__controller_wait_synced(ctrl__controller *c, int64_t timeout_ns)
{
    if (!c)
        return CTRL_ERR_ARG;
    pthread_mutex_lock(&c->mu);
    size_t n = c->nwatches;
    ctrl_informer *infs[MAX_WATCHES];
    for (size_t i = 0; i < n; i++)
        infs[i] = c->watches[i]->inf;
    pthread_mutex_unlock(&c->mu);
    for (size_t i = 0; i < n; i++) {
        if (!infs[i])
            continue;
        int rc = ctrl_informer_wait_for_sync(infs[i], timeout_ns);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int ctrl__controller_run(void *ud)
{
    ctrl__controller *c = ud;
    if (!c)
        return CTRL_ERR_ARG;
    /* A controller added while the manager runs may start before its
     * builder has added its watches: wait for them first. */
    pthread_mutex_lock(&c->mu);
    while (c->configuring && !c->halted)
        ctrl_clock_wait_until(clk(c), &c->cv, &c->mu, INT64_MAX);
    bool halted = c->halted;
    pthread_mutex_unlock(&c->mu);
    if (halted)
        return 0;
    /* Wait in slices, so that a halt (the manager stopping) ends the wait:
     * an informer that never syncs (its kind is not served) must not hold
     * the shutdown for the whole sync timeout. */
    int64_t start = ctrl_clock_now(clk(c));
    int rc;
    for (;;) {
        rc = ctrl__controller_wait_synced(c, SYNC_SLICE);
        if (rc != CTRL_ERR_TIMEOUT)
            break;
        pthread_mutex_lock(&c->mu);
        halted = c->halted;
        pthread_mutex_unlock(&c->mu);
        if (halted)
            return 0;
        if (ctrl_clock_now(clk(c)) - start >= SYNC_TIMEOUT)
            break;
    }
    if (rc < 0) {
        CTRL__LOG(c->log, CTRL_LOG_ERROR, "controller", "Could not wait for Cache to sync",
                  "controller", c->name, "error", ctrl_strerror(rc));
        return rc;
    }
    rc = ctrl__controller_start(c);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&c->mu);
    while (!c->halted)
        ctrl_clock_wait_until(clk(c), &c->cv, &c->mu, INT64_MAX);
    pthread_mutex_unlock(&c->mu);
    ctrl__controller_stop(c);
    return 0;
}

void ctrl__controller_halt(void *ud)
{
    ctrl__controller *c = ud;
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    c->halted = true;
    ctrl_clock_notify(clk(c), &c->cv);
    pthread_mutex_unlock(&c->mu);
}

/* ---- inspection ---- */

bool ctrl__controller_idle(ctrl__controller *c)
{
    return !c || (ctrl_workqueue_len(c->q) == 0 && ctrl_workqueue_processing(c->q) == 0);
}

int64_t ctrl__controller_next_deadline(ctrl__controller *c)
{
    return c ? ctrl_workqueue_next_deadline(c->q) : INT64_MAX;
}

const char *ctrl__controller_name(const ctrl__controller *c)
{
    return c ? c->name : NULL;
}

bool ctrl__controller_skips_name_validation(const ctrl__controller *c)
{
    return c && c->o.skip_name_validation;
}

ctrl_workqueue *ctrl__controller_queue(ctrl__controller *c)
{
    return c ? c->q : NULL;
}

void ctrl__controller_update_metrics(ctrl__controller *c)
{
    if (!c)
        return;
    ctrl_workqueue_stats st;
    ctrl_workqueue_stats_get(c->q, &st); /* refreshes the queue's gauges */
}

/* ---- the reconcile context ---- */

ctrl_client *ctrl_ctx_client(ctrl_ctx *ctx)
{
    return ctx ? ctx->c->client : NULL;
}

ctrl_client *ctrl_ctx_api_reader(ctrl_ctx *ctx)
{
    return ctx ? ctx->c->api_reader : NULL;
}

ctrl_cache *ctrl_ctx_cache(ctrl_ctx *ctx)
{
    return ctx ? ctx->c->cache : NULL;
}

bool ctrl_ctx_cancelled(ctrl_ctx *ctx)
{
    if (!ctx || atomic_load(&ctx->c->cancelled))
        return true;
    return ctx->deadline != INT64_MAX && ctrl_clock_now(clk(ctx->c)) >= ctx->deadline;
}

int64_t ctrl_ctx_deadline(ctrl_ctx *ctx)
{
    return ctx ? ctx->deadline : INT64_MAX;
}

const ctrl_clock *ctrl_ctx_clock(ctrl_ctx *ctx)
{
    return ctx ? clk(ctx->c) : NULL;
}

int64_t ctrl_ctx_now(ctrl_ctx *ctx)
{
    return ctrl_clock_now(ctx ? clk(ctx->c) : NULL);
}

const char *ctrl_ctx_controller(ctrl_ctx *ctx)
{
    return ctx ? ctx->c->name : "";
}

ctrl_recorder *ctrl_ctx_recorder(ctrl_ctx *ctx)
{
    return ctx && ctx->c->mgr ? ctrl_manager_recorder(ctx->c->mgr, ctx->c->name) : NULL;
}

void ctrl__controller_set_configuring(ctrl__controller *c, bool on)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    c->configuring = on;
    ctrl_clock_notify(clk(c), &c->cv);
    pthread_mutex_unlock(&c->mu);
}

void ctrl__controller_set_user_free(ctrl__controller *c, void (*user_free)(void *user))
{
    if (c)
        c->user_free = user_free;
}

const char *ctrl_ctx_reconcile_id(ctrl_ctx *ctx)
{
    return ctx ? ctx->id : "";
}

int ctrl_ctx_priority(ctrl_ctx *ctx)
{
    return ctx ? ctx->priority : 0;
}

bool ctrl__log_on(ctrl_ctx *ctx, ctrl_log_level level)
{
    return ctx && ctrl__log_enabled(ctx->c->log, level);
}

void ctrl__log_kv(ctrl_ctx *ctx, ctrl_log_level level, const char *msg, ...)
{
    if (!ctrl__log_on(ctx, level))
        return;
    va_list ap;
    va_start(ap, msg);
    ctrl_logger_logv(&ctx->lg, level, msg, ap);
    va_end(ap);
}

ctrl_logger *ctrl_ctx_logger(ctrl_ctx *ctx)
{
    return ctx ? &ctx->lg : NULL;
}

bool ctrl_logger_enabled(const ctrl_logger *lg, ctrl_log_level level)
{
    return lg && ctrl__log_enabled(lg->log, level);
}

void ctrl_logger_logv(const ctrl_logger *lg, ctrl_log_level level, const char *msg, va_list ap)
{
    if (ctrl_logger_enabled(lg, level))
        ctrl__log_v(lg->log, level, "controller", msg, lg->fixed, lg->nfixed, ap);
}

void ctrl_logger_log(const ctrl_logger *lg, ctrl_log_level level, const char *msg, ...)
{
    if (!ctrl_logger_enabled(lg, level))
        return;
    va_list ap;
    va_start(ap, msg);
    ctrl_logger_logv(lg, level, msg, ap);
    va_end(ap);
}

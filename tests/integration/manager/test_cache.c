/*
 * Integration tests for ctrl/cache.h against an in-process fakeapi on port
 * 0: initial sync, handler events in order, a watch dropped mid-stream, a
 * relist after compaction with final-state-unknown deletes, 410 on the
 * relist too, backoff and Retry-After on a recording clock, watch-list and
 * its fallback, bookmarks, namespace and label scoping, transform, indexes,
 * label-selector reads, resync on a fake clock, hooks, late handlers,
 * reads that are copies of the caller's own, the objects handed to update
 * and delete handlers, and the store's packed form (round trips).
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctrl/cache.h"
#include "ctrl/client.h"
#include "fakeapi/fakeapi.h"

/* The store's packed form is tested here, with the cache that uses it. */

static fakeapi_server *api;
static ctrl_client *client;
static ctrl_cache *cache;

static void start_api(const fakeapi_options *o, const ctrl_client_options *co)
{
    static const fakeapi_options def = {0};
    cr_assert_eq(fakeapi_start(o ? o : &def, &api), 0);
    ctrl_config *cfg = NULL;
    ctrl_error err = {0};
    cr_assert_eq(ctrl_config_from_url(fakeapi_url(api), &cfg, &err), 0, "%s", err.message);
    ctrl_client_options copts = co ? *co : (ctrl_client_options){0};
    if (!copts.user_agent)
        copts.user_agent = "test-cache";
    cr_assert_eq(ctrl_client_new(cfg, &copts, &client, &err), 0, "%s", err.message);
    ctrl_config_free(cfg);
}

static void setup(void)
{
    start_api(NULL, NULL);
}

static void teardown(void)
{
    ctrl_cache_free(cache);
    cache = NULL;
    ctrl_client_free(client);
    client = NULL;
    fakeapi_stop(api);
    api = NULL;
}

TestSuite(cache, .init = setup, .fini = teardown, .timeout = 60);
TestSuite(cache_custom, .fini = teardown, .timeout = 60);

/* ---- helpers ---- */

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Poll cond (evaluated once per round, never again after it held). */
#define WAIT_FOR(cond, ms)                                                                         \
    do {                                                                                           \
        int64_t until_ = mono_ms() + (ms);                                                         \
        bool ok_;                                                                                  \
        while (!(ok_ = (cond)) && mono_ms() < until_)                                              \
            usleep(2000);                                                                          \
        cr_assert(ok_, "timed out waiting for %s", #cond);                                         \
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

static void put_cm(const char *ns, const char *name, const char *labels, const char *value)
{
    apply_json("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"namespace\":\"%s\","
               "\"name\":\"%s\",\"labels\":{%s}},\"data\":{\"v\":\"%s\"}}",
               ns, name, labels ? labels : "", value);
}

static void put_ns(const char *name)
{
    apply_json("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}",
               name);
}

static void del_cm(const char *ns, const char *name)
{
    fakeapi_error e = {0};
    cr_assert_eq(fakeapi_delete(api, "v1", "ConfigMap", ns, name, &e), 0, "%s", e.message);
}

static const char *meta(const json_t *obj, const char *f)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), f));
}

/* The handlers' log: one line per event, "ADD ns/name rv i", "UPD ns/name
 * oldrv newrv", "DEL ns/name rv u". */
typedef struct evlog {
    pthread_mutex_t mu;
    char lines[4096][600];
    size_t n;
    size_t same_obj_updates; /* updates with old == new (resync) */
} evlog;

static void log_add(evlog *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void log_add(evlog *l, const char *fmt, ...)
{
    pthread_mutex_lock(&l->mu);
    if (l->n < 4096) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(l->lines[l->n++], sizeof l->lines[0], fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&l->mu);
}

static size_t log_len(evlog *l)
{
    pthread_mutex_lock(&l->mu);
    size_t n = l->n;
    pthread_mutex_unlock(&l->mu);
    return n;
}

/* One counter of an informer's stats: l(ists), w(atches), o(bjects). */
static unsigned long stat_of(ctrl_informer *inf, char which)
{
    ctrl_informer_stats s;
    ctrl_informer_stats_get(inf, &s);
    return which == 'l' ? s.lists : which == 'w' ? s.watches : s.objects;
}

/* True once the cache holds another version than was under ns/name. */
static bool replaced(ctrl_informer *inf, const char *ns, const char *name, const json_t *was)
{
    json_t *c = NULL;
    bool changed = ctrl_informer_get(inf, ns, name, &c) == 0 &&
                   strcmp(meta(c, "resourceVersion"), meta(was, "resourceVersion")) != 0;
    json_decref(c);
    return changed;
}

static void key_of(const json_t *o, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", meta(o, "namespace") ? meta(o, "namespace") : "", meta(o, "name"));
}

static void on_add(const json_t *obj, bool initial, void *user)
{
    char k[512];
    key_of(obj, k, sizeof k);
    log_add(user, "ADD %s %s %s", k, meta(obj, "resourceVersion"), initial ? "i" : "-");
}

static void on_update(const json_t *old, const json_t *obj, void *user)
{
    evlog *l = user;
    char k[512];
    key_of(obj, k, sizeof k);
    if (old == obj) {
        pthread_mutex_lock(&l->mu);
        l->same_obj_updates++;
        pthread_mutex_unlock(&l->mu);
    }
    log_add(l, "UPD %s %s %s", k, meta(old, "resourceVersion"), meta(obj, "resourceVersion"));
}

static void on_delete(const json_t *obj, bool unknown, void *user)
{
    char k[512];
    key_of(obj, k, sizeof k);
    log_add(user, "DEL %s %s %s", k, meta(obj, "resourceVersion"), unknown ? "u" : "-");
}

static evlog *new_log(void)
{
    evlog *l = calloc(1, sizeof *l);
    cr_assert_not_null(l);
    pthread_mutex_init(&l->mu, NULL);
    return l;
}

static ctrl_informer *cm_informer(const ctrl_cache_options *o, const ctrl_informer_options *io,
                                  evlog *l)
{
    ctrl_error err = {0};
    cr_assert_eq(ctrl_cache_new(client, o, &cache, &err), 0, "%s", err.message);
    ctrl_informer *inf = NULL;
    cr_assert_eq(ctrl_cache_informer(cache, "v1", "ConfigMap", io, &inf, &err), 0, "%s",
                 err.message);
    if (l) {
        ctrl_event_handler h = {on_add, on_update, on_delete, l};
        cr_assert_eq(ctrl_informer_add_handler(inf, &h), 0);
    }
    return inf;
}

static char *rev(void)
{
    static __thread char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)fakeapi_revision(api));
    return buf;
}

static void expect_log(evlog *l, const char *const *want, size_t n)
{
    int64_t until = mono_ms() + 10000;
    while (log_len(l) < n && mono_ms() < until)
        usleep(2000);
    usleep(50000); /* nothing more should come */
    pthread_mutex_lock(&l->mu);
    for (size_t i = 0; i < l->n; i++)
        cr_log_info("event %zu: %s", i, l->lines[i]);
    cr_assert_eq(l->n, n, "events: %zu, want %zu", l->n, n);
    for (size_t i = 0; i < n; i++)
        cr_assert_str_eq(l->lines[i], want[i], "event %zu", i);
    pthread_mutex_unlock(&l->mu);
}

/* ---- tests ---- */

Test(cache, initial_sync)
{
    char rvs[40][32];
    for (int i = 0; i < 40; i++) {
        char name[32];
        snprintf(name, sizeof name, "cm-%02d", i);
        put_cm("default", name, "\"app\":\"x\"", "v");
        snprintf(rvs[i], sizeof rvs[i], "%s", rev());
    }
    evlog *l = new_log();
    ctrl_informer *inf = cm_informer(NULL, NULL, l);
    cr_assert_not(ctrl_informer_has_synced(inf));
    cr_assert(ctrl_cache_has(cache, "v1", "ConfigMap"));
    cr_assert_not(ctrl_cache_has(cache, "v1", "Secret"));
    char rv[32];
    ctrl_informer_last_rv(inf, rv, sizeof rv);
    cr_assert_str_eq(rv, "");
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_start(cache), CTRL_ERR_ARG);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    cr_assert(ctrl_informer_has_synced(inf));
    ctrl_informer_stats st;
    ctrl_informer_stats_get(inf, &st);
    cr_assert_eq(st.objects, 40);
    ctrl_informer_last_rv(inf, rv, sizeof rv);
    cr_assert_str_eq(rv, rev());
    /* Every add is initial and in (namespace, name) order. */
    pthread_mutex_lock(&l->mu);
    cr_assert_eq(l->n, 40);
    for (int i = 0; i < 40; i++) {
        char want[128];
        snprintf(want, sizeof want, "ADD default/cm-%02d %s i", i, rvs[i]);
        cr_assert_str_eq(l->lines[i], want);
    }
    pthread_mutex_unlock(&l->mu);
    json_t *got = NULL;
    cr_assert_eq(ctrl_informer_get(inf, "default", "cm-07", &got), 0);
    cr_assert_str_eq(meta(got, "name"), "cm-07");
    json_decref(got);
    cr_assert_eq(ctrl_informer_get(inf, "default", "nope", &got), CTRL_ERR_NOT_FOUND);
    ctrl_cache_stop(cache);
    ctrl_cache_stop(cache);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, CTRL_SECOND), CTRL_ERR_CANCELLED);
    free(l);
}

Test(cache, events_in_order)
{
    evlog *l = new_log();
    cm_informer(&(ctrl_cache_options){.no_watch_list = true}, NULL, l);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    char want[6][512], arv[32], brv[32];
    put_cm("default", "a", NULL, "1");
    snprintf(arv, sizeof arv, "%s", rev());
    snprintf(want[0], sizeof want[0], "ADD default/a %s -", arv);
    put_cm("default", "a", NULL, "2");
    snprintf(want[1], sizeof want[1], "UPD default/a %s %s", arv, rev());
    put_cm("default", "b", NULL, "1");
    snprintf(brv, sizeof brv, "%s", rev());
    snprintf(want[2], sizeof want[2], "ADD default/b %s -", brv);
    del_cm("default", "a");
    snprintf(want[3], sizeof want[3], "DEL default/a %s -", rev());
    put_cm("default", "b", NULL, "2");
    snprintf(want[4], sizeof want[4], "UPD default/b %s %s", brv, rev());
    del_cm("default", "b");
    snprintf(want[5], sizeof want[5], "DEL default/b %s -", rev());
    const char *w[6] = {want[0], want[1], want[2], want[3], want[4], want[5]};
    expect_log(l, w, 6);
    ctrl_informer_stats st;
    ctrl_informer *inf = NULL;
    cr_assert_eq(ctrl_cache_informer(cache, "v1", "ConfigMap", NULL, &inf, NULL), 0);
    ctrl_informer_stats_get(inf, &st);
    cr_assert_eq(st.objects, 0);
    cr_assert_eq(st.events, 6);
    cr_assert_eq(st.lists, 1);
    free(l);
}

/* The server ends every watch after two events: the informer resumes from
 * its last resourceVersion each time, losing and repeating nothing. */
Test(cache, watch_dropped_resumes)
{
    fakeapi_error fe = {0};
    cr_assert_eq(fakeapi_fault_add(api,
                                   &(fakeapi_fault){.verb = "watch",
                                                    .resource = "configmaps",
                                                    .action = FAKEAPI_FAULT_WATCH_CLOSE,
                                                    .count = 2},
                                   NULL, &fe),
                 0, "%s", fe.message);
    evlog *l = new_log();
    ctrl_informer *inf =
        cm_informer(&(ctrl_cache_options){.no_watch_list = true, .seed = 7}, NULL, l);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    static char want[60][512];
    const char *w[60];
    char last[8][32] = {{0}};
    size_t n = 0;
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < 5; i++) {
            char name[16];
            snprintf(name, sizeof name, "o%d", i);
            char val[16];
            snprintf(val, sizeof val, "r%d", round);
            put_cm("default", name, NULL, val);
            if (round == 0)
                snprintf(want[n], sizeof want[n], "ADD default/%s %s -", name, rev());
            else
                snprintf(want[n], sizeof want[n], "UPD default/%s %s %s", name, last[i], rev());
            snprintf(last[i], sizeof last[i], "%s", rev());
            w[n] = want[n];
            n++;
        }
    }
    for (int i = 0; i < 5; i += 2) {
        char name[16];
        snprintf(name, sizeof name, "o%d", i);
        del_cm("default", name);
        snprintf(want[n], sizeof want[n], "DEL default/%s %s -", name, rev());
        w[n] = want[n];
        n++;
    }
    expect_log(l, w, n);
    ctrl_informer_stats st;
    ctrl_informer_stats_get(inf, &st);
    cr_assert_eq(st.lists, 1, "no relist: %lu lists", st.lists);
    cr_assert_eq(st.relists, 0);
    cr_assert_geq(st.watches, n / 2, "watches %lu", st.watches);
    cr_assert_eq(st.objects, 2);
    char rv[32];
    ctrl_informer_last_rv(inf, rv, sizeof rv);
    cr_assert_str_eq(rv, rev());
    free(l);
}

/* Hooks that block the informer on the event of one key until released. */
typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const char *key;
    bool armed, held, released;
    unsigned long before, after, before_keyed;
    char last_actor[64], last_kind[16];
} gate;

static void gate_before(void *ud, const char *kind, const char *actor, const char *key)
{
    gate *g = ud;
    pthread_mutex_lock(&g->mu);
    g->before++;
    if (*key)
        g->before_keyed++;
    snprintf(g->last_actor, sizeof g->last_actor, "%s", actor);
    snprintf(g->last_kind, sizeof g->last_kind, "%s", kind);
    if (g->armed && g->key && !strcmp(key, g->key)) {
        g->armed = false;
        g->held = true;
        pthread_cond_broadcast(&g->cv);
        while (!g->released)
            pthread_cond_wait(&g->cv, &g->mu);
    }
    pthread_mutex_unlock(&g->mu);
}

static void gate_after(void *ud, const char *kind, const char *actor, const char *key)
{
    gate *g = ud;
    pthread_mutex_lock(&g->mu);
    g->after++;
    pthread_mutex_unlock(&g->mu);
}

/*
 * While the informer is held on an event, objects are deleted and the
 * history compacted; the watch closes after that event (a fault), its
 * resume gets 410, and the relist reports the deletions as final state
 * unknown.
 */
Test(cache, compaction_relist_reports_deletes)
{
    fakeapi_error fe = {0};
    cr_assert_eq(fakeapi_fault_add(api,
                                   &(fakeapi_fault){.verb = "watch",
                                                    .resource = "configmaps",
                                                    .nth = 1,
                                                    .action = FAKEAPI_FAULT_WATCH_CLOSE,
                                                    .count = 1},
                                   NULL, &fe),
                 0, "%s", fe.message);
    put_cm("default", "keep", NULL, "1");
    put_cm("default", "gone1", NULL, "1");
    char gone1_rv[32];
    snprintf(gone1_rv, sizeof gone1_rv, "%s", rev());
    put_cm("default", "gone2", NULL, "1");
    char gone2_rv[32];
    snprintf(gone2_rv, sizeof gone2_rv, "%s", rev());
    static gate g = {
        .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER, .key = "default/trigger"};
    ctrl_hooks hooks = {.before = gate_before, .after = gate_after, .ud = &g};
    evlog *l = new_log();
    ctrl_informer *inf =
        cm_informer(&(ctrl_cache_options){.no_watch_list = true, .hooks = &hooks}, NULL, l);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    cr_assert_eq(log_len(l), 3);
    pthread_mutex_lock(&g.mu);
    g.armed = true;
    pthread_mutex_unlock(&g.mu);
    put_cm("default", "trigger", NULL, "1");
    char trig_rv[32];
    snprintf(trig_rv, sizeof trig_rv, "%s", rev());
    pthread_mutex_lock(&g.mu);
    while (!g.held)
        pthread_cond_wait(&g.cv, &g.mu);
    pthread_mutex_unlock(&g.mu);
    /* The informer is inside the trigger's event: change things behind it. */
    del_cm("default", "gone1");
    del_cm("default", "gone2");
    put_cm("default", "fresh", NULL, "1");
    char fresh_rv[32];
    snprintf(fresh_rv, sizeof fresh_rv, "%s", rev());
    cr_assert_eq(fakeapi_compact(api, 0), 0);
    pthread_mutex_lock(&g.mu);
    g.released = true;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
    WAIT_FOR(log_len(l) >= 7, 10000);
    usleep(50000);
    pthread_mutex_lock(&l->mu);
    cr_assert_eq(l->n, 7);
    char want[128];
    snprintf(want, sizeof want, "ADD default/trigger %s -", trig_rv);
    cr_assert_str_eq(l->lines[3], want);
    snprintf(want, sizeof want, "ADD default/fresh %s -", fresh_rv);
    cr_assert_str_eq(l->lines[4], want);
    snprintf(want, sizeof want, "DEL default/gone1 %s u", gone1_rv);
    cr_assert_str_eq(l->lines[5], want);
    snprintf(want, sizeof want, "DEL default/gone2 %s u", gone2_rv);
    cr_assert_str_eq(l->lines[6], want);
    pthread_mutex_unlock(&l->mu);
    ctrl_informer_stats st;
    ctrl_informer_stats_get(inf, &st);
    cr_assert_eq(st.relists, 1);
    cr_assert_eq(st.lists, 2);
    cr_assert_eq(st.objects, 3);
    /* Hooks saw every dispatched event. */
    pthread_mutex_lock(&g.mu);
    cr_assert_eq(g.before_keyed, 7);
    cr_assert_eq(g.after, g.before);
    cr_assert_str_eq(g.last_kind, "event");
    cr_assert_str_eq(g.last_actor, "v1/ConfigMap");
    pthread_mutex_unlock(&g.mu);
    free(l);
}

/* The watch is told 410; so is the relist from the last resourceVersion;
 * the informer then lists the newest state. */
Test(cache, fresh_list_when_relist_is_gone_too)
{
    fakeapi_error fe = {0};
    cr_assert_eq(fakeapi_fault_add(api,
                                   &(fakeapi_fault){.verb = "watch",
                                                    .resource = "configmaps",
                                                    .nth = 1,
                                                    .action = FAKEAPI_FAULT_WATCH_CLOSE,
                                                    .count = 1},
                                   NULL, &fe),
                 0);
    cr_assert_eq(fakeapi_fault_add(api,
                                   &(fakeapi_fault){.verb = "watch",
                                                    .resource = "configmaps",
                                                    .nth = 2,
                                                    .action = FAKEAPI_FAULT_WATCH_EXPIRE},
                                   NULL, &fe),
                 0);
    uint64_t list_rule;
    cr_assert_eq(fakeapi_fault_add(api,
                                   &(fakeapi_fault){.verb = "list",
                                                    .resource = "configmaps",
                                                    .nth = 2,
                                                    .action = FAKEAPI_FAULT_ERROR,
                                                    .status = 410,
                                                    .reason = "Expired"},
                                   &list_rule, &fe),
                 0);
    put_cm("default", "before", NULL, "1");
    evlog *l = new_log();
    ctrl_informer *inf = cm_informer(&(ctrl_cache_options){.no_watch_list = true}, NULL, l);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    put_cm("default", "x", NULL, "1");
    WAIT_FOR(stat_of(inf, 'l') >= 3 && stat_of(inf, 'w') >= 3, 10000);
    ctrl_informer_stats st;
    ctrl_informer_stats_get(inf, &st);
    cr_assert_eq(st.relists, 1);
    cr_assert_eq(st.lists, 3);
    cr_assert_eq(st.objects, 2);
    unsigned long matched = 0, fired = 0;
    cr_assert_eq(fakeapi_fault_hits(api, list_rule, &matched, &fired), 0);
    cr_assert_eq(fired, 1);
    free(l);
}

/* A clock whose waits return at once, moving time to the deadline and
 * recording how long each wait was. */
typedef struct autoclock {
    pthread_mutex_t mu;
    int64_t now;
    int64_t waits[64];
    size_t n;
} autoclock;

static int64_t auto_now(void *ud)
{
    autoclock *c = ud;
    pthread_mutex_lock(&c->mu);
    int64_t t = c->now;
    pthread_mutex_unlock(&c->mu);
    return t;
}

static void auto_wait(void *ud, pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline)
{
    autoclock *c = ud;
    if (deadline == INT64_MAX) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 5000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(cv, mu, &ts);
        return;
    }
    pthread_mutex_lock(&c->mu);
    if (deadline > c->now) {
        if (c->n < 64)
            c->waits[c->n++] = deadline - c->now;
        c->now = deadline;
    }
    pthread_mutex_unlock(&c->mu);
}

static void check_waits(autoclock *c, const int64_t *want, size_t n)
{
    pthread_mutex_lock(&c->mu);
    cr_assert_eq(c->n, n, "waits: %zu, want %zu", c->n, n);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(c->waits[i], want[i], "wait %zu: %lld", i, (long long)c->waits[i]);
    pthread_mutex_unlock(&c->mu);
}

Test(cache_custom, backoff_doubles_from_800ms)
{
    start_api(NULL, &(ctrl_client_options){.max_retries = -1});
    fakeapi_error fe = {0};
    cr_assert_eq(fakeapi_fault_add(api,
                                   &(fakeapi_fault){.verb = "list",
                                                    .resource = "configmaps",
                                                    .first = 4,
                                                    .action = FAKEAPI_FAULT_ERROR,
                                                    .status = 500},
                                   NULL, &fe),
                 0);
    static autoclock ac = {.mu = PTHREAD_MUTEX_INITIALIZER, .now = 1};
    ctrl_clock clk = {.now_ns = auto_now, .wait_until = auto_wait, .ud = &ac};
    ctrl_informer *inf =
        cm_informer(&(ctrl_cache_options){.no_watch_list = true, .clock = &clk}, NULL, NULL);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    WAIT_FOR(ctrl_informer_has_synced(inf), 10000);
    const int64_t want[] = {800 * CTRL_MILLISECOND, 1600 * CTRL_MILLISECOND,
                            3200 * CTRL_MILLISECOND, 6400 * CTRL_MILLISECOND};
    check_waits(&ac, want, 4);
    ctrl_informer_stats st;
    ctrl_informer_stats_get(inf, &st);
    cr_assert_eq(st.errors, 4);
    cr_assert_eq(st.lists, 5);
}

Test(cache_custom, list_429_retry_after_honoured)
{
    start_api(NULL, &(ctrl_client_options){.max_retries = -1});
    fakeapi_error fe = {0};
    cr_assert_eq(fakeapi_fault_add(api,
                                   &(fakeapi_fault){.verb = "list",
                                                    .resource = "configmaps",
                                                    .first = 2,
                                                    .action = FAKEAPI_FAULT_ERROR,
                                                    .status = 429,
                                                    .retry_after_s = 3},
                                   NULL, &fe),
                 0);
    static autoclock ac = {.mu = PTHREAD_MUTEX_INITIALIZER, .now = 1};
    ctrl_clock clk = {.now_ns = auto_now, .wait_until = auto_wait, .ud = &ac};
    ctrl_informer *inf =
        cm_informer(&(ctrl_cache_options){.no_watch_list = true, .clock = &clk}, NULL, NULL);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    WAIT_FOR(ctrl_informer_has_synced(inf), 10000);
    const int64_t want[] = {3 * CTRL_SECOND, 3 * CTRL_SECOND};
    check_waits(&ac, want, 2);
}

/* With the client's own retries (the default), a 429 is retried after the
 * server's Retry-After before the informer even sees it. */
Test(cache, list_429_retried_by_client)
{
    fakeapi_error fe = {0};
    uint64_t id;
    cr_assert_eq(fakeapi_fault_add(api,
                                   &(fakeapi_fault){.verb = "list",
                                                    .resource = "configmaps",
                                                    .first = 1,
                                                    .action = FAKEAPI_FAULT_ERROR,
                                                    .status = 429,
                                                    .retry_after_s = 1},
                                   &id, &fe),
                 0);
    ctrl_informer *inf = cm_informer(&(ctrl_cache_options){.no_watch_list = true}, NULL, NULL);
    int64_t t0 = mono_ms();
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    cr_assert_geq(mono_ms() - t0, 900, "synced after %lld ms", (long long)(mono_ms() - t0));
    ctrl_informer_stats st;
    ctrl_informer_stats_get(inf, &st);
    cr_assert_eq(st.errors, 0);
    cr_assert_eq(st.lists, 1);
    unsigned long matched = 0, fired = 0;
    fakeapi_fault_hits(api, id, &matched, &fired);
    cr_assert_eq(fired, 1);
    cr_assert_eq(matched, 2);
}

Test(cache_custom, watch_list_and_bookmarks)
{
    start_api(&(fakeapi_options){.bookmark_interval_ms = 50}, NULL);
    for (int i = 0; i < 5; i++) {
        char name[16];
        snprintf(name, sizeof name, "w%d", i);
        put_cm("default", name, NULL, "1");
    }
    evlog *l = new_log();
    ctrl_informer *inf = cm_informer(NULL, NULL, l);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    ctrl_informer_stats st;
    ctrl_informer_stats_get(inf, &st);
    cr_assert_eq(st.lists, 0, "watch-list needs no LIST");
    cr_assert_eq(st.watches, 1);
    cr_assert_eq(st.objects, 5);
    cr_assert_geq(st.bookmarks, 1);
    pthread_mutex_lock(&l->mu);
    cr_assert_eq(l->n, 5);
    for (size_t i = 0; i < 5; i++)
        cr_assert(strstr(l->lines[i], " i"), "%s", l->lines[i]);
    pthread_mutex_unlock(&l->mu);
    /* Writes to another kind move the revision: bookmarks carry it. */
    apply_json("{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"namespace\":"
               "\"default\",\"name\":\"s\"}}");
    char want[32];
    snprintf(want, sizeof want, "%s", rev());
    char rv[32] = "";
    WAIT_FOR((ctrl_informer_last_rv(inf, rv, sizeof rv), !strcmp(rv, want)), 5000);
    ctrl_informer_stats_get(inf, &st);
    cr_assert_geq(st.bookmarks, 2);
    cr_assert_eq(log_len(l), 5);
    /* Events still flow on the same stream. */
    put_cm("default", "w9", NULL, "1");
    WAIT_FOR(log_len(l) == 6, 5000);
    free(l);
}

Test(cache, watch_list_refused_falls_back)
{
    fakeapi_error fe = {0};
    cr_assert_eq(fakeapi_fault_add(api,
                                   &(fakeapi_fault){.verb = "watch",
                                                    .resource = "configmaps",
                                                    .first = 1,
                                                    .action = FAKEAPI_FAULT_ERROR,
                                                    .status = 400,
                                                    .reason = "BadRequest",
                                                    .message = "sendInitialEvents unsupported"},
                                   NULL, &fe),
                 0);
    put_cm("default", "a", NULL, "1");
    ctrl_informer *inf = cm_informer(NULL, NULL, NULL);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    put_cm("default", "b", NULL, "1");
    WAIT_FOR(stat_of(inf, 'o') == 2, 5000);
    ctrl_informer_stats st;
    ctrl_informer_stats_get(inf, &st);
    cr_assert_eq(st.lists, 1);
    cr_assert_eq(st.errors, 0, "a refusal is not an error to back off from");
    cr_assert_eq(st.watches, 2);
}

static size_t watches_in(const char *ns, const char *resource)
{
    fakeapi_watch_info *w = NULL;
    size_t n = 0, count = 0;
    cr_assert_eq(fakeapi_watches(api, &w, &n), 0);
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(w[i].ns, ns) && strstr(w[i].resource, resource))
            count++;
    }
    free(w);
    return count;
}

Test(cache, namespace_scoping)
{
    put_ns("ns-a");
    put_ns("ns-b");
    put_ns("ns-c");
    put_cm("ns-a", "one", NULL, "1");
    put_cm("ns-b", "two", NULL, "1");
    put_cm("ns-c", "three", NULL, "1");
    const char *const nss[] = {"ns-a", "ns-b", NULL};
    evlog *l = new_log();
    ctrl_informer *inf =
        cm_informer(&(ctrl_cache_options){.namespaces = nss, .no_watch_list = true}, NULL, l);
    ctrl_informer *nsinf = NULL;
    cr_assert_eq(ctrl_cache_informer(cache, "v1", "Namespace", NULL, &nsinf, NULL), 0);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    json_t *all = NULL;
    cr_assert_eq(ctrl_informer_list(inf, NULL, NULL, &all), 0);
    cr_assert_eq(json_array_size(all), 2);
    cr_assert_str_eq(meta(json_array_get(all, 0), "name"), "one");
    cr_assert_str_eq(meta(json_array_get(all, 1), "name"), "two");
    json_decref(all);
    WAIT_FOR(watches_in("ns-a", "configmaps") == 1 && watches_in("ns-b", "configmaps") == 1, 5000);
    cr_assert_eq(watches_in("ns-c", "configmaps"), 0);
    cr_assert_eq(watches_in("", "configmaps"), 0);
    /* A cluster-scoped kind is watched once, whatever the namespaces. */
    WAIT_FOR(watches_in("", "namespaces") == 1, 5000);
    cr_assert_eq(ctrl_informer_list(nsinf, NULL, NULL, &all), 0);
    cr_assert_geq(json_array_size(all), 6); /* default, kube-*, ns-a, ns-b, ns-c */
    json_decref(all);
    json_t *nsobj = NULL;
    cr_assert_eq(ctrl_informer_get(nsinf, NULL, "ns-c", &nsobj), 0);
    json_decref(nsobj);

    put_cm("ns-c", "four", NULL, "1");
    put_cm("ns-b", "five", NULL, "1");
    WAIT_FOR(log_len(l) == 3, 5000);
    usleep(50000);
    cr_assert_eq(log_len(l), 3);
    cr_assert(strstr(l->lines[2], "ADD ns-b/five"), "%s", l->lines[2]);
    char rv[32];
    ctrl_informer_last_rv(inf, rv, sizeof rv);
    cr_assert_str_eq(rv, rev());
    free(l);
}

Test(cache, label_selector_scoping)
{
    put_cm("default", "web1", "\"app\":\"web\"", "1");
    put_cm("default", "db1", "\"app\":\"db\"", "1");
    evlog *l = new_log();
    ctrl_informer *inf =
        cm_informer(NULL, &(ctrl_informer_options){.label_selector = "app=web"}, l);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    json_t *o = NULL;
    cr_assert_eq(ctrl_informer_get(inf, "default", "web1", &o), 0);
    json_decref(o);
    cr_assert_eq(ctrl_informer_get(inf, "default", "db1", &o), CTRL_ERR_NOT_FOUND);
    put_cm("default", "web2", "\"app\":\"web\"", "1");
    put_cm("default", "db2", "\"app\":\"db\"", "1");
    /* web1 stops matching: the server sends DELETED. */
    put_cm("default", "web1", "\"app\":\"db\"", "2");
    WAIT_FOR(log_len(l) == 3, 5000);
    usleep(50000);
    cr_assert_eq(log_len(l), 3);
    cr_assert(strstr(l->lines[1], "ADD default/web2"), "%s", l->lines[1]);
    cr_assert(strstr(l->lines[2], "DEL default/web1"), "%s", l->lines[2]);
    json_t *all = NULL;
    cr_assert_eq(ctrl_informer_list(inf, NULL, NULL, &all), 0);
    cr_assert_eq(json_array_size(all), 1);
    cr_assert_str_eq(meta(json_array_get(all, 0), "name"), "web2");
    json_decref(all);
    free(l);
}

static int transformed;
static void drop_managed(json_t *obj, void *user)
{
    json_object_del(json_object_get(obj, "metadata"), "managedFields");
    json_object_set_new(json_object_get(obj, "metadata"), "transformed", json_true());
    __atomic_add_fetch((int *)user, 1, __ATOMIC_SEQ_CST);
}

/* Returns how many objects the transform saw (each asserted above). */
static int transform_drops_managed_fields(bool no_watch_list)
{
    const char *mf = "\"managedFields\":[{\"manager\":\"test\",\"operation\":\"Update\","
                     "\"apiVersion\":\"v1\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{}}]";
    apply_json("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"namespace\":"
               "\"default\",\"name\":\"m1\",%s},\"data\":{\"a\":\"b\"}}",
               mf);
    transformed = 0;
    ctrl_informer *inf = cm_informer(
        &(ctrl_cache_options){.no_watch_list = no_watch_list},
        &(ctrl_informer_options){.transform = drop_managed, .transform_user = &transformed}, NULL);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    apply_json("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"namespace\":"
               "\"default\",\"name\":\"m2\",%s},\"data\":{\"a\":\"b\"}}",
               mf);
    json_t *o = NULL;
    WAIT_FOR(ctrl_informer_get(inf, "default", "m2", &o) == 0, 5000);
    json_decref(o);
    const char *names[] = {"m1", "m2"};
    for (int i = 0; i < 2; i++) {
        json_t *server = NULL;
        cr_assert_eq(fakeapi_get(api, "v1", "ConfigMap", "default", names[i], &server, NULL), 0);
        cr_log_info("server keeps managedFields: %d",
                    json_object_get(json_object_get(server, "metadata"), "managedFields") != NULL);
        json_decref(server);
        cr_assert_eq(ctrl_informer_get(inf, "default", names[i], &o), 0);
        cr_assert_null(json_object_get(json_object_get(o, "metadata"), "managedFields"));
        cr_assert(json_is_true(json_object_get(json_object_get(o, "metadata"), "transformed")));
        cr_assert_str_eq(json_string_value(json_object_get(json_object_get(o, "data"), "a")), "b");
        json_decref(o);
    }
    cr_assert_eq(__atomic_load_n(&transformed, __ATOMIC_SEQ_CST), 2, "once per object");
    return __atomic_load_n(&transformed, __ATOMIC_SEQ_CST);
}

Test(cache, transform_drops_managed_fields)
{
    /* m1 from watch-list's initial events */
    cr_assert_eq(transform_drops_managed_fields(false), 2);
}

Test(cache, transform_drops_managed_fields_list)
{
    cr_assert_eq(transform_drops_managed_fields(true), 2); /* m1 from a LIST */
}

static json_t *by_owner(const json_t *obj, void *user)
{
    const char *o = meta(obj, "name")
                        ? json_string_value(json_object_get(
                              json_object_get(json_object_get(obj, "metadata"), "labels"), "owner"))
                        : NULL;
    return o ? json_pack("[s]", o) : NULL;
}

static json_t *by_data_keys(const json_t *obj, void *user)
{
    json_t *out = json_array();
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(obj, "data"), k, v)
    {
        json_array_append_new(out, json_string(k));
    }
    return out;
}

static size_t count_by(ctrl_informer *inf, const char *index, const char *value)
{
    json_t *arr = NULL;
    cr_assert_eq(ctrl_informer_by_index(inf, index, value, &arr), 0);
    size_t n = json_array_size(arr);
    json_decref(arr);
    return n;
}

/* The first character of the cached ns/name's data.v ('-' when absent). */
static char data_v(ctrl_informer *inf, const char *ns, const char *name)
{
    json_t *o = NULL;
    if (ctrl_informer_get(inf, ns, name, &o) != 0)
        return '-';
    const char *v = json_string_value(json_object_get(json_object_get(o, "data"), "v"));
    char c = v ? v[0] : '-';
    json_decref(o);
    return c;
}

Test(cache, indexes)
{
    put_ns("ns-a");
    put_cm("default", "c1", "\"owner\":\"alice\"", "1");
    put_cm("default", "c2", "\"owner\":\"bob\"", "1");
    put_cm("ns-a", "c3", "\"owner\":\"alice\"", "1");
    ctrl_informer *inf = cm_informer(&(ctrl_cache_options){.no_watch_list = true}, NULL, NULL);
    cr_assert_eq(ctrl_informer_add_index(inf, "owner", by_owner, NULL), 0);
    cr_assert_eq(ctrl_informer_add_index(inf, "owner", by_owner, NULL), CTRL_ERR_ARG);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    cr_assert_eq(count_by(inf, "namespace", "default"), 2);
    cr_assert_eq(count_by(inf, "namespace", "ns-a"), 1);
    cr_assert_eq(count_by(inf, "namespace", "ns-b"), 0);
    cr_assert_eq(count_by(inf, "owner", "alice"), 2);
    cr_assert_eq(count_by(inf, "owner", "bob"), 1);
    json_t *arr = NULL;
    cr_assert_eq(ctrl_informer_by_index(inf, "owner", "alice", &arr), 0);
    cr_assert_str_eq(meta(json_array_get(arr, 0), "name"), "c1"); /* sorted by ns, name */
    cr_assert_str_eq(meta(json_array_get(arr, 1), "name"), "c3");
    json_decref(arr);
    cr_assert_eq(ctrl_informer_by_index(inf, "nope", "x", &arr), CTRL_ERR_ARG);
    /* An index added after sync is built from the store. */
    cr_assert_eq(ctrl_informer_add_index(inf, "datakeys", by_data_keys, NULL), 0);
    cr_assert_eq(count_by(inf, "datakeys", "v"), 3);
    /* Updates move objects between index values; deletes remove them. */
    put_cm("default", "c2", "\"owner\":\"alice\"", "2");
    WAIT_FOR(count_by(inf, "owner", "alice") == 3, 5000);
    cr_assert_eq(count_by(inf, "owner", "bob"), 0);
    cr_assert_eq(ctrl_informer_by_index(inf, "owner", "alice", &arr), 0);
    cr_assert_str_eq(meta(json_array_get(arr, 1), "name"), "c2");
    cr_assert_str_eq(
        json_string_value(json_object_get(json_object_get(json_array_get(arr, 1), "data"), "v")),
        "2", "the index hands out the object as updated");
    json_decref(arr);
    /* An update with the same index values keeps the object filed once. */
    put_cm("ns-a", "c3", "\"owner\":\"alice\"", "3");
    WAIT_FOR(data_v(inf, "ns-a", "c3") == '3', 5000);
    cr_assert_eq(count_by(inf, "owner", "alice"), 3);
    cr_assert_eq(count_by(inf, "datakeys", "v"), 3);
    del_cm("default", "c1");
    WAIT_FOR(count_by(inf, "owner", "alice") == 2, 5000);
    cr_assert_eq(count_by(inf, "namespace", "default"), 1);
    cr_assert_eq(count_by(inf, "datakeys", "v"), 2);
}

static size_t list_n(ctrl_informer *inf, const char *ns, const char *sel)
{
    json_t *arr = NULL;
    int rc = ctrl_informer_list(inf, ns, sel, &arr);
    cr_assert_eq(rc, 0, "%s: %d", sel, rc);
    size_t n = json_array_size(arr);
    json_decref(arr);
    return n;
}

Test(cache, list_with_label_selector)
{
    put_ns("other");
    put_cm("default", "a", "\"app\":\"web\",\"tier\":\"front\",\"n\":\"5\"", "1");
    put_cm("default", "b", "\"app\":\"db\",\"tier\":\"back\",\"n\":\"10\"", "1");
    put_cm("default", "c", "\"app\":\"cache\"", "1");
    put_cm("default", "d", NULL, "1");
    put_cm("other", "e", "\"app\":\"web\"", "1");
    ctrl_informer *inf = cm_informer(NULL, NULL, NULL);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    cr_assert_eq(list_n(inf, NULL, NULL), 5);
    cr_assert_eq(list_n(inf, NULL, ""), 5);
    cr_assert_eq(list_n(inf, "default", NULL), 4);
    cr_assert_eq(list_n(inf, "other", NULL), 1);
    cr_assert_eq(list_n(inf, "missing", NULL), 0);
    cr_assert_eq(list_n(inf, NULL, "app=web"), 2);
    cr_assert_eq(list_n(inf, "default", "app==web"), 1);
    cr_assert_eq(list_n(inf, "default", "app!=web"), 3); /* d has no app: matches */
    cr_assert_eq(list_n(inf, "default", "app in (web, db)"), 2);
    cr_assert_eq(list_n(inf, "default", "app notin (web,db)"), 2);
    cr_assert_eq(list_n(inf, "default", "tier"), 2);
    cr_assert_eq(list_n(inf, "default", "!tier"), 2);
    cr_assert_eq(list_n(inf, "default", "app=web,tier=front"), 1);
    cr_assert_eq(list_n(inf, "default", "app=web,tier=back"), 0);
    cr_assert_eq(list_n(inf, "default", "n>6"), 1);
    cr_assert_eq(list_n(inf, "default", "n<6"), 1);
    cr_assert_eq(list_n(inf, "default", " app = web , !missing "), 1);
    const char *bad[] = {"app in (web", "app=web,", "=x", "app in web", "n>x", "!a=b", "a b"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *arr = NULL;
        cr_assert_eq(ctrl_informer_list(inf, NULL, bad[i], &arr), CTRL_ERR_ARG, "%s", bad[i]);
        cr_assert_null(arr);
    }
    json_t *arr = NULL;
    cr_assert_eq(ctrl_informer_list(inf, NULL, NULL, &arr), 0);
    const char *order[] = {"a", "b", "c", "d", "e"};
    for (size_t i = 0; i < 5; i++)
        cr_assert_str_eq(meta(json_array_get(arr, i), "name"), order[i]);
    json_decref(arr);
}

/* A manual clock: time moves only when the test says; waits poll. */
typedef struct manclock {
    pthread_mutex_t mu;
    int64_t now;
} manclock;

static int64_t man_now(void *ud)
{
    manclock *c = ud;
    pthread_mutex_lock(&c->mu);
    int64_t t = c->now;
    pthread_mutex_unlock(&c->mu);
    return t;
}

static void man_wait(void *ud, pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 2000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(cv, mu, &ts);
}

Test(cache, resync_delivers_old_equals_new)
{
    put_cm("default", "r1", NULL, "1");
    put_cm("default", "r2", NULL, "1");
    put_cm("default", "r3", NULL, "1");
    static manclock mc = {.mu = PTHREAD_MUTEX_INITIALIZER, .now = 1000};
    ctrl_clock clk = {.now_ns = man_now, .wait_until = man_wait, .ud = &mc};
    evlog *l = new_log();
    cm_informer(&(ctrl_cache_options){.resync_ns = 10 * CTRL_SECOND, .clock = &clk, .seed = 3},
                NULL, l);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    usleep(100000);
    cr_assert_eq(log_len(l), 3);
    /* Not yet: 9 s of 10 (+ up to 10% jitter). */
    pthread_mutex_lock(&mc.mu);
    mc.now += 9 * CTRL_SECOND;
    pthread_mutex_unlock(&mc.mu);
    usleep(100000);
    cr_assert_eq(log_len(l), 3);
    pthread_mutex_lock(&mc.mu);
    mc.now += 2 * CTRL_SECOND + 1;
    pthread_mutex_unlock(&mc.mu);
    WAIT_FOR(log_len(l) == 6, 5000);
    pthread_mutex_lock(&l->mu);
    cr_assert_eq(l->same_obj_updates, 3);
    for (size_t i = 3; i < 6; i++) {
        char key[64], o[32], n[32];
        cr_assert_eq(sscanf(l->lines[i], "UPD %63s %31s %31s", key, o, n), 3, "%s", l->lines[i]);
        cr_assert_str_eq(o, n);
    }
    pthread_mutex_unlock(&l->mu);
    /* And again a period later. */
    pthread_mutex_lock(&mc.mu);
    mc.now += 12 * CTRL_SECOND;
    pthread_mutex_unlock(&mc.mu);
    WAIT_FOR(log_len(l) == 9, 5000);
    free(l);
}

Test(cache, late_handler_gets_existing_objects)
{
    put_cm("default", "x1", NULL, "1");
    put_cm("default", "x2", NULL, "1");
    ctrl_informer *inf = cm_informer(NULL, NULL, NULL);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    evlog *l = new_log();
    cr_assert_eq(
        ctrl_informer_add_handler(inf, &(ctrl_event_handler){on_add, on_update, on_delete, l}), 0);
    cr_assert_eq(log_len(l), 2);
    cr_assert(strstr(l->lines[0], "ADD default/x1"));
    put_cm("default", "x3", NULL, "1");
    WAIT_FOR(log_len(l) == 3, 5000);
    free(l);
}

/* An informer asked for after start starts at once; an unknown kind never
 * syncs, and waiting for it times out. */
Test(cache, late_informer_and_timeout)
{
    put_cm("default", "z", NULL, "1");
    ctrl_error err = {0};
    cr_assert_eq(ctrl_cache_new(client, NULL, &cache, &err), 0);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    ctrl_informer *inf = NULL, *again = NULL;
    cr_assert_eq(ctrl_cache_informer(cache, "v1", "ConfigMap", NULL, &inf, &err), 0);
    cr_assert_eq(ctrl_cache_informer(cache, "v1", "ConfigMap", NULL, &again, &err), 0);
    cr_assert_eq(inf, again);
    cr_assert_eq(ctrl_informer_wait_for_sync(inf, 10 * CTRL_SECOND), 0);
    ctrl_informer *ghost = NULL;
    cr_assert_eq(ctrl_cache_informer(cache, "example.com/v1", "Ghost", NULL, &ghost, &err), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 200 * CTRL_MILLISECOND), CTRL_ERR_TIMEOUT);
    cr_assert_not(ctrl_informer_has_synced(ghost));
    int64_t t0 = mono_ms();
    ctrl_cache_stop(cache);
    cr_assert_lt(mono_ms() - t0, 2000, "stop took %lld ms", (long long)(mono_ms() - t0));
    cr_assert_eq(ctrl_informer_wait_for_sync(ghost, CTRL_SECOND), CTRL_ERR_CANCELLED);
    ctrl_error_deinit(&err);
}

/* Reads are copies of the caller's own: a new object every time, equal to
 * the server's, that the caller may change without changing the cache, and
 * that outlives updates and the cache itself. */
Test(cache, reads_are_copies)
{
    put_cm("default", "s1", "\"app\":\"web\"", "1");
    ctrl_informer *inf = cm_informer(NULL, NULL, NULL);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    json_t *a = NULL, *b = NULL, *all = NULL, *idx = NULL, *server = NULL;
    cr_assert_eq(fakeapi_get(api, "v1", "ConfigMap", "default", "s1", &server, NULL), 0);
    cr_assert_eq(ctrl_informer_get(inf, "default", "s1", &a), 0);
    cr_assert_eq(ctrl_informer_get(inf, "default", "s1", &b), 0);
    cr_assert_neq(a, b);
    cr_assert_eq(a->refcount, 1, "the caller's own");
    cr_assert(json_equal(a, server), "the cached object is the server's");
    cr_assert(json_equal(a, b));
    cr_assert_eq(ctrl_informer_list(inf, NULL, NULL, &all), 0);
    cr_assert_eq(ctrl_informer_by_index(inf, "namespace", "default", &idx), 0);
    cr_assert_neq(json_array_get(all, 0), a);
    cr_assert_neq(json_array_get(idx, 0), a);
    cr_assert(json_equal(json_array_get(all, 0), a));
    cr_assert(json_equal(json_array_get(idx, 0), a));
    /* Changing copies changes nothing in the cache. */
    json_object_set_new(json_object_get(a, "data"), "v", json_string("changed"));
    json_object_del(json_object_get(a, "metadata"), "labels");
    json_object_clear(json_array_get(all, 0));
    json_object_clear(json_array_get(idx, 0));
    json_decref(b);
    cr_assert_eq(ctrl_informer_get(inf, "default", "s1", &b), 0);
    cr_assert(json_equal(b, server));
    json_decref(all);
    cr_assert_eq(ctrl_informer_list(inf, NULL, "app=web", &all), 0);
    cr_assert_eq(json_array_size(all), 1);
    cr_assert(json_equal(json_array_get(all, 0), server));
    json_decref(all);
    json_decref(idx);
    /* An update: the copy read before stays as it was. */
    put_cm("default", "s1", "\"app\":\"web\"", "2");
    WAIT_FOR(replaced(inf, "default", "s1", b), 5000);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(b, "data"), "v")), "1");
    ctrl_cache_free(cache);
    cache = NULL;
    cr_assert_eq(b->refcount, 1, "the freed cache keeps no reference");
    cr_assert_str_eq(meta(b, "name"), "s1");
    json_decref(a);
    json_decref(b);
    json_decref(server);
}

/* What update and delete handlers get, kept (deep copies) past the call. */
typedef struct kept {
    pthread_mutex_t mu;
    json_t *upd_old, *upd_new, *del;
} kept;

static void keep_update(const json_t *old, const json_t *obj, void *user)
{
    kept *k = user;
    pthread_mutex_lock(&k->mu);
    if (!k->upd_old) {
        k->upd_old = json_deep_copy(old);
        k->upd_new = json_deep_copy(obj);
    }
    pthread_mutex_unlock(&k->mu);
}

static void keep_delete(const json_t *obj, bool unknown, void *user)
{
    kept *k = user;
    pthread_mutex_lock(&k->mu);
    if (!k->del && !unknown)
        k->del = json_deep_copy(obj);
    pthread_mutex_unlock(&k->mu);
}

static bool kept_has(kept *k, json_t **which)
{
    pthread_mutex_lock(&k->mu);
    bool has = *which != NULL;
    pthread_mutex_unlock(&k->mu);
    return has;
}

static const char *data_str(const json_t *o)
{
    return json_string_value(json_object_get(json_object_get(o, "data"), "v"));
}

static const char *label_str(const json_t *o, const char *k)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(o, "metadata"), "labels"), k));
}

static json_t *by_app(const json_t *obj, void *user)
{
    const char *a = label_str(obj, "app");
    return a ? json_pack("[s]", a) : NULL;
}

/* An update hands handlers the object as cached before and as it is now;
 * a delete the object as deleted. Indexes and selectors follow. */
Test(cache, update_and_delete_handlers_get_old_and_new)
{
    put_cm("default", "h1", "\"app\":\"web\"", "1");
    static kept k = {.mu = PTHREAD_MUTEX_INITIALIZER};
    ctrl_informer *inf = cm_informer(NULL, NULL, NULL);
    cr_assert_eq(ctrl_informer_add_index(inf, "app", by_app, NULL), 0);
    ctrl_event_handler h = {.on_update = keep_update, .on_delete = keep_delete, .user = &k};
    cr_assert_eq(ctrl_informer_add_handler(inf, &h), 0);
    cr_assert_eq(ctrl_cache_start(cache), 0);
    cr_assert_eq(ctrl_cache_wait_for_sync(cache, 10 * CTRL_SECOND), 0);
    json_t *before = NULL, *now = NULL;
    cr_assert_eq(ctrl_informer_get(inf, "default", "h1", &before), 0);
    put_cm("default", "h1", "\"app\":\"db\"", "2");
    WAIT_FOR(kept_has(&k, &k.upd_old), 5000);
    pthread_mutex_lock(&k.mu);
    cr_assert(json_equal(k.upd_old, before), "old is the object as it was cached");
    cr_assert_str_eq(data_str(k.upd_new), "2");
    cr_assert_str_eq(label_str(k.upd_new, "app"), "db");
    cr_assert_str_neq(meta(k.upd_new, "resourceVersion"), meta(k.upd_old, "resourceVersion"));
    cr_assert_eq(ctrl_informer_get(inf, "default", "h1", &now), 0);
    cr_assert(json_equal(now, k.upd_new), "new is what the cache now holds");
    pthread_mutex_unlock(&k.mu);
    cr_assert_eq(count_by(inf, "app", "web"), 0);
    cr_assert_eq(count_by(inf, "app", "db"), 1);
    cr_assert_eq(list_n(inf, NULL, "app=web"), 0);
    cr_assert_eq(list_n(inf, NULL, "app=db"), 1);
    del_cm("default", "h1");
    WAIT_FOR(kept_has(&k, &k.del), 5000);
    cr_assert_str_eq(data_str(k.del), "2");
    cr_assert_str_eq(meta(k.del, "name"), "h1");
    cr_assert_eq(count_by(inf, "app", "db"), 0);
    cr_assert_eq(list_n(inf, NULL, "app=db"), 0);
    cr_assert_eq(list_n(inf, NULL, NULL), 0);
    json_decref(before);
    json_decref(now);
    json_decref(k.upd_old);
    json_decref(k.upd_new);
    json_decref(k.del);
}

/*
 * cachetest.c - what the cache tests (test_cache*.c) share: an in-process
 * fakeapi and a client to it, objects written in-process, a log of handler
 * events and the checks on it. See cachetest.h.
 */
#include "cachetest.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

fakeapi_server *api;
ctrl_client *client;
ctrl_cache *cache;

void start_api(const fakeapi_options *o, const ctrl_client_options *co)
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

void setup(void)
{
    start_api(NULL, NULL);
}

void teardown(void)
{
    ctrl_cache_free(cache);
    cache = NULL;
    ctrl_client_free(client);
    client = NULL;
    fakeapi_stop(api);
    api = NULL;
}

/* ---- helpers ---- */

int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void apply_json(const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fakeapi_error e = {0};
    cr_assert_eq(fakeapi_apply(api, buf, strlen(buf), &e), 0, "%s: %s", buf, e.message);
}

void put_cm(const char *ns, const char *name, const char *labels, const char *value)
{
    apply_json("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"namespace\":\"%s\","
               "\"name\":\"%s\",\"labels\":{%s}},\"data\":{\"v\":\"%s\"}}",
               ns, name, labels ? labels : "", value);
}

void put_ns(const char *name)
{
    apply_json("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}",
               name);
}

void del_cm(const char *ns, const char *name)
{
    fakeapi_error e = {0};
    cr_assert_eq(fakeapi_delete(api, "v1", "ConfigMap", ns, name, &e), 0, "%s", e.message);
}

const char *meta(const json_t *obj, const char *f)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), f));
}

void log_add(evlog *l, const char *fmt, ...)
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

size_t log_len(evlog *l)
{
    pthread_mutex_lock(&l->mu);
    size_t n = l->n;
    pthread_mutex_unlock(&l->mu);
    return n;
}

/* One counter of an informer's stats: l(ists), w(atches), o(bjects). */
unsigned long stat_of(ctrl_informer *inf, char which)
{
    ctrl_informer_stats s;
    ctrl_informer_stats_get(inf, &s);
    return which == 'l' ? s.lists : which == 'w' ? s.watches : s.objects;
}

/* True once the cache holds another version than was under ns/name. */
bool replaced(ctrl_informer *inf, const char *ns, const char *name, const json_t *was)
{
    json_t *c = NULL;
    bool changed = ctrl_informer_get(inf, ns, name, &c) == 0 &&
                   strcmp(meta(c, "resourceVersion"), meta(was, "resourceVersion")) != 0;
    json_decref(c);
    return changed;
}

void key_of(const json_t *o, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", meta(o, "namespace") ? meta(o, "namespace") : "", meta(o, "name"));
}

void on_add(const json_t *obj, bool initial, void *user)
{
    char k[512];
    key_of(obj, k, sizeof k);
    log_add(user, "ADD %s %s %s", k, meta(obj, "resourceVersion"), initial ? "i" : "-");
}

void on_update(const json_t *old, const json_t *obj, void *user)
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

void on_delete(const json_t *obj, bool unknown, void *user)
{
    char k[512];
    key_of(obj, k, sizeof k);
    log_add(user, "DEL %s %s %s", k, meta(obj, "resourceVersion"), unknown ? "u" : "-");
}

evlog *new_log(void)
{
    evlog *l = calloc(1, sizeof *l);
    cr_assert_not_null(l);
    pthread_mutex_init(&l->mu, NULL);
    return l;
}

ctrl_informer *cm_informer(const ctrl_cache_options *o, const ctrl_informer_options *io, evlog *l)
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

char *rev(void)
{
    static __thread char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)fakeapi_revision(api));
    return buf;
}

void expect_log(evlog *l, const char *const *want, size_t n)
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

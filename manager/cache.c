/*
 * cache.c - the registry of informers (one per apiVersion/kind) and their
 * common lifecycle.
 *
 * DESIGN
 *   The cache owns its informers (informer.c) and the options they share
 *   (namespaces, clock, hooks: copied here, borrowed by the informers).
 *   mu protects the informer array and the started/stopped flags; it is
 *   never held while waiting for an informer. Informers are created under
 *   mu (so two threads asking for one kind get one informer) and started
 *   at once when the cache already runs. Stopping signals every informer
 *   first and then joins them, so they shut down in parallel.
 */
#include "ctrl/cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache_int.h"
#include "error_int.h"
#include "informer_int.h"

struct ctrl_cache {
    ctrl_client *client;
    char **namespaces; /* NULL-terminated copy, or NULL */
    ctrl_clock clock;
    ctrl_hooks hooks;
    ctrl__informer_config cfg;

    pthread_mutex_t mu;
    ctrl_informer **infs;
    size_t n, cap;
    bool started, stopped, joined;
};

static uint64_t random_seed(const void *salt)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t s = (uint64_t)ts.tv_sec * 1000000007ULL ^ (uint64_t)ts.tv_nsec ^ (uintptr_t)salt;
    return s ? s : 1;
}

int ctrl_cache_new(ctrl_client *client, const ctrl_cache_options *opts, ctrl_cache **out,
                   ctrl_error *err)
{
    static const ctrl_cache_options none = {0};
    if (!client || !out)
        return ctrl__error_set(err, CTRL_ERR_ARG, "client and out are required");
    if (!opts)
        opts = &none;
    if (opts->resync_ns < 0 || opts->watch_timeout_s < 0)
        return ctrl__error_set(err, CTRL_ERR_ARG, "resync_ns and watch_timeout_s must be >= 0");
    ctrl_cache *c = calloc(1, sizeof *c);
    if (!c)
        return ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
    c->client = client;
    if (opts->namespaces && opts->namespaces[0]) {
        size_t n = 0;
        while (opts->namespaces[n])
            n++;
        c->namespaces = calloc(n + 1, sizeof *c->namespaces);
        for (size_t i = 0; c->namespaces && i < n; i++) {
            if (!(c->namespaces[i] = strdup(opts->namespaces[i]))) {
                for (size_t j = 0; j < i; j++)
                    free(c->namespaces[j]);
                free(c->namespaces);
                c->namespaces = NULL;
            }
        }
        if (!c->namespaces) {
            free(c);
            return ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
        }
    }
    if (opts->clock)
        c->clock = *opts->clock;
    if (opts->hooks)
        c->hooks = *opts->hooks;
    c->cfg = (ctrl__informer_config){
        .client = client,
        .namespaces = (const char *const *)c->namespaces,
        .resync_ns = opts->resync_ns,
        .watch_timeout_s = opts->watch_timeout_s,
        .no_watch_list = opts->no_watch_list,
        .clock = opts->clock ? &c->clock : NULL,
        .hooks = opts->hooks ? &c->hooks : NULL,
        .seed = opts->seed ? opts->seed : random_seed(c),
    };
    pthread_mutex_init(&c->mu, NULL);
    *out = c;
    return 0;
}

void ctrl_cache_free(ctrl_cache *cache)
{
    if (!cache)
        return;
    ctrl_cache_stop(cache);
    for (size_t i = 0; i < cache->n; i++)
        ctrl__informer_free(cache->infs[i]);
    free(cache->infs);
    for (size_t i = 0; cache->namespaces && cache->namespaces[i]; i++)
        free(cache->namespaces[i]);
    free(cache->namespaces);
    pthread_mutex_destroy(&cache->mu);
    free(cache);
}

int ctrl_cache_informer(ctrl_cache *cache, const char *api_version, const char *kind,
                        const ctrl_informer_options *opts, ctrl_informer **out, ctrl_error *err)
{
    if (!cache || !api_version || !kind || !out)
        return ctrl__error_set(err, CTRL_ERR_ARG, "cache, apiVersion, kind and out are required");
    int rc = 0;
    pthread_mutex_lock(&cache->mu);
    for (size_t i = 0; i < cache->n; i++) {
        if (ctrl__informer_is(cache->infs[i], api_version, kind)) {
            *out = cache->infs[i];
            goto out;
        }
    }
    if (cache->n == cache->cap) {
        size_t cap = cache->cap ? 2 * cache->cap : 8;
        ctrl_informer **n = realloc(cache->infs, cap * sizeof *n);
        if (!n) {
            rc = ctrl__error_set(err, CTRL_ERR_NOMEM, "out of memory");
            goto out;
        }
        cache->infs = n;
        cache->cap = cap;
    }
    ctrl__informer_config cfg = cache->cfg;
    cfg.seed += 0x9E3779B97F4A7C15ULL * (cache->n + 1);
    ctrl_informer *inf = NULL;
    rc = ctrl__informer_new(&cfg, api_version, kind, opts, &inf);
    if (rc < 0) {
        rc = ctrl__error_set(err, rc, "cannot create the informer of %s %s", api_version, kind);
        goto out;
    }
    if (cache->started && !cache->stopped && (rc = ctrl__informer_start(inf)) < 0) {
        ctrl__informer_free(inf);
        rc = ctrl__error_set(err, rc, "cannot start the informer of %s %s", api_version, kind);
        goto out;
    }
    if (cache->stopped)
        ctrl__informer_signal_stop(inf);
    cache->infs[cache->n++] = inf;
    *out = inf;
out:
    pthread_mutex_unlock(&cache->mu);
    return rc;
}

int ctrl_cache_start(ctrl_cache *cache)
{
    if (!cache)
        return CTRL_ERR_ARG;
    int rc = 0;
    pthread_mutex_lock(&cache->mu);
    if (cache->started || cache->stopped) {
        rc = CTRL_ERR_ARG;
        goto out;
    }
    cache->started = true;
    for (size_t i = 0; i < cache->n && rc == 0; i++)
        rc = ctrl__informer_start(cache->infs[i]);
out:
    pthread_mutex_unlock(&cache->mu);
    return rc;
}

void ctrl_cache_stop(ctrl_cache *cache)
{
    if (!cache)
        return;
    pthread_mutex_lock(&cache->mu);
    bool join = !cache->joined;
    cache->stopped = true;
    cache->joined = true;
    size_t n = cache->n;
    for (size_t i = 0; i < n; i++)
        ctrl__informer_signal_stop(cache->infs[i]);
    pthread_mutex_unlock(&cache->mu);
    /* No informer is added or freed once stopped: the array is stable. */
    for (size_t i = 0; join && i < n; i++)
        ctrl__informer_join(cache->infs[i]);
}

int ctrl_cache_wait_for_sync(ctrl_cache *cache, int64_t timeout_ns)
{
    if (!cache)
        return CTRL_ERR_ARG;
    const ctrl_clock *clk = cache->cfg.clock;
    int64_t start = ctrl_clock_now(clk);
    for (size_t i = 0;; i++) {
        pthread_mutex_lock(&cache->mu);
        ctrl_informer *inf = i < cache->n ? cache->infs[i] : NULL;
        bool stopped = cache->stopped;
        pthread_mutex_unlock(&cache->mu);
        if (stopped)
            return CTRL_ERR_CANCELLED;
        if (!inf)
            return 0;
        int64_t left = -1;
        if (timeout_ns >= 0) {
            left = timeout_ns - (ctrl_clock_now(clk) - start);
            if (left < 0)
                left = 0;
        }
        int rc = ctrl_informer_wait_for_sync(inf, left);
        if (rc < 0)
            return rc;
    }
}

bool ctrl_cache_has(ctrl_cache *cache, const char *api_version, const char *kind)
{
    if (!cache || !api_version || !kind)
        return false;
    bool found = false;
    pthread_mutex_lock(&cache->mu);
    for (size_t i = 0; i < cache->n && !found; i++)
        found = ctrl__informer_is(cache->infs[i], api_version, kind);
    pthread_mutex_unlock(&cache->mu);
    return found;
}

bool ctrl__cache_idle(ctrl_cache *cache)
{
    bool idle = true;
    pthread_mutex_lock(&cache->mu);
    for (size_t i = 0; i < cache->n && idle; i++)
        idle = ctrl__informer_idle(cache->infs[i]);
    pthread_mutex_unlock(&cache->mu);
    return idle;
}

void ctrl__cache_set_logger(ctrl_cache *cache, const struct ctrl__logger *log)
{
    pthread_mutex_lock(&cache->mu);
    cache->cfg.log = log;
    pthread_mutex_unlock(&cache->mu);
}

void ctrl__cache_unsynced(ctrl_cache *cache, char *buf, size_t len)
{
    if (!buf || !len)
        return;
    buf[0] = '\0';
    size_t used = 0;
    pthread_mutex_lock(&cache->mu);
    for (size_t i = 0; i < cache->n && used < len; i++) {
        if (ctrl_informer_has_synced(cache->infs[i]))
            continue;
        int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
                         ctrl__informer_name(cache->infs[i]));
        used = n < 0 ? len : used + (size_t)n;
    }
    pthread_mutex_unlock(&cache->mu);
}

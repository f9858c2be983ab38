/*
 * bench_cache - the informer cache's figures, one JSON object a line:
 *
 *   cache_sync_list       LIST+WATCH sync of N (default 10,000) one-kilobyte
 *                         ConfigMaps: seconds from ctrl_cache_start to
 *                         synced; memory per cached object (resident-set
 *                         delta and malloc heap delta, both after
 *                         malloc_trim, with the informer stopped and its
 *                         store kept) - targets < 1 s and < 3 KB/object
 *   cache_sync_watchlist  the same through watch-list (sendInitialEvents)
 *   cache_list            reads from the synced cache (informer stopped):
 *                         ctrl_informer_list of all N objects and with a
 *                         label selector matching 1/16 of them (best of 5,
 *                         milliseconds), and ctrl_informer_get of each
 *                         object in turn (mean microseconds)
 *   cache_event_rate      E (default 10,000) updates written through
 *                         fakeapi's in-process API as fast as it takes them:
 *                         events/s from the first write to the last handler
 *                         call, and write-to-handler latency (p50/p99/max)
 *
 * One process holds the server and the cache (they share the CPU).
 *   bench_cache [--objects N] [--events E]
 */
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctrl/cache.h"
#include "ctrl/client.h"
#include "fakeapi/fakeapi.h"

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static long rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * sysconf(_SC_PAGESIZE);
}

static long heap_bytes(void)
{
    struct mallinfo2 mi = mallinfo2();
    return (long)(mi.uordblks + mi.hblkhd);
}

/* Ten 1 KB ConfigMaps' worth of data: three labels, an annotation, eight
 * 90-byte values (about 1,050 bytes as the server sends it). */
static int create_objects(fakeapi_server *api, int n)
{
    char filler[91];
    memset(filler, 'x', 90);
    filler[90] = '\0';
    size_t cap = 600 * 1400;
    char *doc = malloc(cap);
    if (!doc)
        return -1;
    for (int start = 0; start < n; start += 500) {
        size_t len =
            (size_t)snprintf(doc, cap, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[");
        for (int i = start; i < start + 500 && i < n; i++) {
            len += (size_t)snprintf(
                doc + len, cap - len,
                "%s{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"namespace\":"
                "\"bench\",\"name\":\"obj-%05d\",\"labels\":{\"app\":\"bench\",\"tier\":"
                "\"backend\",\"shard\":\"%d\"},\"annotations\":{\"note\":\"benchmark object\"}},"
                "\"data\":{\"k0\":\"%s\",\"k1\":\"%s\",\"k2\":\"%s\",\"k3\":\"%s\",\"k4\":\"%s\","
                "\"k5\":\"%s\",\"k6\":\"%s\",\"k7\":\"%s\"}}",
                i == start ? "" : ",", i, i % 16, filler, filler, filler, filler, filler, filler,
                filler, filler);
        }
        len += (size_t)snprintf(doc + len, cap - len, "]}");
        fakeapi_error e = {0};
        if (fakeapi_apply(api, doc, len, &e) != 0) {
            fprintf(stderr, "bench_cache: apply: %s\n", e.message);
            free(doc);
            return -1;
        }
    }
    free(doc);
    return 0;
}

/* ---- reads from the cache ---- */

static double best_list_ms(ctrl_informer *inf, const char *sel, size_t *got)
{
    double best = -1;
    for (int i = 0; i < 5; i++) {
        json_t *arr = NULL;
        int64_t t0 = mono_ns();
        if (ctrl_informer_list(inf, NULL, sel, &arr) != 0)
            return -1;
        *got = json_array_size(arr);
        json_decref(arr);
        double ms = (double)(mono_ns() - t0) / 1e6;
        if (best < 0 || ms < best)
            best = ms;
    }
    return best;
}

static int bench_list(ctrl_informer *inf, int n)
{
    size_t all = 0, some = 0;
    double list_ms = best_list_ms(inf, NULL, &all);
    double sel_ms = best_list_ms(inf, "shard=3", &some);
    int64_t t0 = mono_ns();
    int found = 0;
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "obj-%05d", i);
        json_t *o = NULL;
        if (ctrl_informer_get(inf, "bench", name, &o) == 0)
            found++;
        json_decref(o);
    }
    double get_us = (double)(mono_ns() - t0) / 1e3 / n;
    printf("{\"bench\":\"cache_list\",\"objects\":%zu,\"list_ms\":%.2f,"
           "\"selector_matched\":%zu,\"list_selector_ms\":%.2f,\"get_found\":%d,"
           "\"get_us\":%.2f}\n",
           all, list_ms, some, sel_ms, found, get_us);
    fflush(stdout);
    return list_ms < 0 || sel_ms < 0 || found != n ? -1 : 0;
}

/* ---- sync ---- */

static int bench_sync(fakeapi_server *api, ctrl_client *client, int n, bool watch_list,
                      size_t obj_bytes)
{
    malloc_trim(0);
    long rss0 = rss_bytes(), heap0 = heap_bytes();
    ctrl_cache *cache = NULL;
    ctrl_informer *inf = NULL;
    ctrl_error err = {0};
    const char *const nss[] = {"bench", NULL};
    if (ctrl_cache_new(client,
                       &(ctrl_cache_options){.namespaces = nss, .no_watch_list = !watch_list},
                       &cache, &err) != 0 ||
        ctrl_cache_informer(cache, "v1", "ConfigMap", NULL, &inf, &err) != 0) {
        fprintf(stderr, "bench_cache: %s\n", err.message);
        return -1;
    }
    int64_t t0 = mono_ns();
    ctrl_cache_start(cache);
    int rc = ctrl_cache_wait_for_sync(cache, 60 * CTRL_SECOND);
    double secs = (double)(mono_ns() - t0) / 1e9;
    ctrl_informer_stats st;
    ctrl_informer_stats_get(inf, &st);
    /* Stop first (the store stays): an open watch-list stream would count
     * the in-process server's send buffer of the initial events too. */
    ctrl_cache_stop(cache);
    usleep(200000);
    malloc_trim(0);
    long rss1 = rss_bytes(), heap1 = heap_bytes();
    double rss_per = (double)(rss1 - rss0) / n, heap_per = (double)(heap1 - heap0) / n;
    printf("{\"bench\":\"%s\",\"objects\":%zu,\"object_bytes\":%zu,\"seconds\":%.3f,"
           "\"objects_per_s\":%.0f,\"rss_per_object_bytes\":%.0f,"
           "\"heap_per_object_bytes\":%.0f,\"lists\":%lu,\"watches\":%lu,"
           "\"target_seconds\":1,\"target_bytes_per_object\":3072,\"met\":%s}\n",
           watch_list ? "cache_sync_watchlist" : "cache_sync_list", st.objects, obj_bytes, secs,
           n / secs, rss_per, heap_per, st.lists, st.watches,
           rc == 0 && secs < 1.0 && rss_per < 3072 && heap_per < 3072 ? "true" : "false");
    fflush(stdout);
    if (rc == 0 && !watch_list)
        rc = bench_list(inf, n);
    ctrl_cache_free(cache);
    return rc;
}

/* ---- event rate ---- */

typedef struct lat {
    int64_t *ns;
    atomic_size_t n;
    size_t want;
    int64_t last;
} lat;

static void on_update(const json_t *old, const json_t *obj, void *user)
{
    lat *l = user;
    const char *t = json_string_value(json_object_get(json_object_get(obj, "data"), "t"));
    if (!t)
        return;
    int64_t now = mono_ns();
    size_t i = atomic_load(&l->n);
    if (i < l->want)
        l->ns[i] = now - strtoll(t, NULL, 10);
    l->last = now;
    atomic_store(&l->n, i + 1); /* one informer thread: a plain counter would do */
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int bench_events(fakeapi_server *api, ctrl_client *client, int events, int objects)
{
    lat l = {.ns = calloc((size_t)events, sizeof(int64_t)), .want = (size_t)events};
    ctrl_cache *cache = NULL;
    ctrl_informer *inf = NULL;
    const char *const nss[] = {"bench", NULL};
    if (!l.ns || ctrl_cache_new(client, &(ctrl_cache_options){.namespaces = nss}, &cache, NULL) ||
        ctrl_cache_informer(cache, "v1", "ConfigMap", NULL, &inf, NULL))
        return -1;
    ctrl_informer_add_handler(inf, &(ctrl_event_handler){.on_update = on_update, .user = &l});
    ctrl_cache_start(cache);
    if (ctrl_cache_wait_for_sync(cache, 60 * CTRL_SECOND) != 0)
        return -1;
    int64_t t0 = mono_ns();
    for (int i = 0; i < events; i++) {
        char doc[256];
        int len =
            snprintf(doc, sizeof doc,
                     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
                     "\"namespace\":\"bench\",\"name\":\"obj-%05d\"},\"data\":{\"t\":\"%lld\"}}",
                     i % objects, (long long)mono_ns());
        fakeapi_error e = {0};
        if (fakeapi_apply(api, doc, (size_t)len, &e) != 0) {
            fprintf(stderr, "bench_cache: update: %s\n", e.message);
            return -1;
        }
    }
    int64_t t_written = mono_ns();
    while (atomic_load(&l.n) < (size_t)events && mono_ns() - t_written < 60 * CTRL_SECOND)
        usleep(1000);
    ctrl_cache_stop(cache);
    size_t got = atomic_load(&l.n);
    size_t m = got < (size_t)events ? got : (size_t)events;
    qsort(l.ns, m, sizeof *l.ns, cmp64);
    double secs = (double)(l.last - t0) / 1e9;
    printf("{\"bench\":\"cache_event_rate\",\"events\":%zu,\"seconds\":%.3f,\"events_per_s\":%.0f,"
           "\"writer_per_s\":%.0f,\"latency_p50_ms\":%.3f,\"latency_p99_ms\":%.3f,"
           "\"latency_max_ms\":%.3f}\n",
           got, secs, got / secs, events / ((double)(t_written - t0) / 1e9),
           m ? l.ns[m / 2] / 1e6 : 0, m ? l.ns[m * 99 / 100] / 1e6 : 0, m ? l.ns[m - 1] / 1e6 : 0);
    fflush(stdout);
    ctrl_cache_free(cache);
    free(l.ns);
    return got == (size_t)events ? 0 : -1;
}

int main(int argc, char **argv)
{
    int objects = 10000, events = 10000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--objects"))
            objects = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--events"))
            events = atoi(argv[i + 1]);
    }
    if (objects < 1)
        objects = 1;
    fakeapi_server *api = NULL;
    if (fakeapi_start(&(fakeapi_options){.seed = 1}, &api) != 0)
        return 1;
    fakeapi_error e = {0};
    const char *ns =
        "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"bench\"}}";
    if (fakeapi_apply(api, ns, strlen(ns), &e) != 0 || create_objects(api, objects) != 0)
        return 1;
    json_t *one = NULL;
    size_t obj_bytes = 0;
    if (fakeapi_get(api, "v1", "ConfigMap", "bench", "obj-00000", &one, NULL) == 0) {
        char *text = json_dumps(one, JSON_COMPACT);
        obj_bytes = text ? strlen(text) : 0;
        free(text);
        json_decref(one);
    }
    ctrl_config *cfg = NULL;
    ctrl_client *client = NULL;
    if (ctrl_config_from_url(fakeapi_url(api), &cfg, NULL) != 0 ||
        ctrl_client_new(cfg, &(ctrl_client_options){.user_agent = "bench-cache"}, &client, NULL))
        return 1;
    ctrl_config_free(cfg);
    /* A warm-up sync: discovery, the connection pool, SQLite's page cache. */
    ctrl_cache *warm = NULL;
    ctrl_informer *winf = NULL;
    if (ctrl_cache_new(client, &(ctrl_cache_options){.no_watch_list = true}, &warm, NULL) == 0 &&
        ctrl_cache_informer(warm, "v1", "Namespace", NULL, &winf, NULL) == 0) {
        ctrl_cache_start(warm);
        ctrl_cache_wait_for_sync(warm, 10 * CTRL_SECOND);
    }
    ctrl_cache_free(warm);
    int rc = 0;
    rc |= bench_sync(api, client, objects, false, obj_bytes);
    rc |= bench_sync(api, client, objects, true, obj_bytes);
    rc |= bench_events(api, client, events, objects);
    ctrl_client_free(client);
    fakeapi_stop(api);
    return rc ? 1 : 0;
}

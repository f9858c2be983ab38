/*
 * stress_cache - eight threads read an informer's cache (get, list with and
 * without a label selector, by_index) while the informer applies 100,000
 * events: creates, updates (value and index label) and deletes over 500
 * ConfigMaps, written through fakeapi's in-process API. At the end the cache
 * must equal the server (names and resourceVersions), the handlers' own
 * model must equal the cache, and every read along the way must have been
 * self-consistent.
 *
 * A plain program (no Criterion: it runs under ThreadSanitizer too):
 *   stress_cache [EVENTS]      (default 100000)
 * Prints one JSON object; exits 0 when consistent.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctrl/cache.h"
#include "ctrl/client.h"
#include "fakeapi/fakeapi.h"

#define STRESS_NAME "stress_cache"
#include "stress.h"

#define KEYS 500
#define GROUPS 8
#define READERS 8

static atomic_bool done;
static atomic_ulong failures;
static atomic_ulong reads;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *meta(const json_t *obj, const char *f)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), f));
}

static const char *label(const json_t *obj, const char *k)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(obj, "metadata"), "labels"), k));
}

static unsigned long long rv_of(const json_t *obj)
{
    const char *rv = meta(obj, "resourceVersion");
    return rv ? strtoull(rv, NULL, 10) : 0;
}

static json_t *by_group(const json_t *obj, void *user)
{
    const char *g = label(obj, "group");
    return g ? json_pack("[s]", g) : NULL;
}

/* ---- the handlers' model: name -> resourceVersion, informer thread only ---- */

static unsigned long long model[KEYS];
static unsigned long handler_events;

static int key_index(const json_t *obj)
{
    const char *n = meta(obj, "name");
    return n && !strncmp(n, "cm-", 3) ? atoi(n + 3) : -1;
}

static void h_add(const json_t *obj, bool initial, void *user)
{
    int k = key_index(obj);
    handler_events++;
    if (k < 0 || k >= KEYS) {
        FAIL("add of an unknown object");
        return;
    }
    if (model[k])
        FAIL("add of cm-%d, already there at rv %llu", k, model[k]);
    model[k] = rv_of(obj);
}

static void h_update(const json_t *old, const json_t *obj, void *user)
{
    int k = key_index(obj);
    handler_events++;
    if (k < 0 || k >= KEYS) {
        FAIL("update of an unknown object");
        return;
    }
    if (model[k] != rv_of(old))
        FAIL("update of cm-%d: old rv %llu, model %llu", k, rv_of(old), model[k]);
    if (rv_of(obj) <= rv_of(old))
        FAIL("update of cm-%d goes back: %llu -> %llu", k, rv_of(old), rv_of(obj));
    model[k] = rv_of(obj);
}

static void h_delete(const json_t *obj, bool unknown, void *user)
{
    int k = key_index(obj);
    handler_events++;
    if (k < 0 || k >= KEYS) {
        FAIL("delete of an unknown object");
        return;
    }
    if (!model[k])
        FAIL("delete of cm-%d, not there", k);
    model[k] = 0;
}

/* ---- readers ---- */

typedef struct reader {
    ctrl_informer *inf;
    unsigned seed;
    unsigned long ops;
} reader;

static void check_sorted(json_t *arr, const char *what)
{
    const char *prev = NULL;
    size_t i;
    json_t *o;
    json_array_foreach(arr, i, o)
    {
        const char *n = meta(o, "name");
        if (!n) {
            FAIL("%s: an object without a name", what);
            return;
        }
        if (prev && strcmp(prev, n) >= 0)
            FAIL("%s: %s before %s", what, prev, n);
        prev = n;
    }
}

static void *reader_main(void *arg)
{
    reader *r = arg;
    while (!atomic_load(&done)) {
        unsigned op = (unsigned)rand_r(&r->seed) % 4;
        int k = rand_r(&r->seed) % KEYS;
        int g = rand_r(&r->seed) % GROUPS;
        char name[32], gs[16], sel[32];
        snprintf(name, sizeof name, "cm-%d", k);
        snprintf(gs, sizeof gs, "%d", g);
        json_t *out = NULL;
        if (op == 0) {
            int rc = ctrl_informer_get(r->inf, "default", name, &out);
            if (rc == 0 && (!meta(out, "name") || strcmp(meta(out, "name"), name)))
                FAIL("get %s returned %s", name, meta(out, "name"));
            else if (rc != 0 && rc != CTRL_ERR_NOT_FOUND)
                FAIL("get %s: %d", name, rc);
        } else if (op == 1) {
            if (ctrl_informer_list(r->inf, "default", NULL, &out) != 0)
                FAIL("list failed");
            else if (json_array_size(out) > KEYS)
                FAIL("list: %zu objects", json_array_size(out));
            check_sorted(out, "list");
        } else if (op == 2) {
            if (ctrl_informer_by_index(r->inf, "group", gs, &out) != 0) {
                FAIL("by_index failed");
            } else {
                size_t i;
                json_t *o;
                json_array_foreach(out, i, o)
                {
                    if (!label(o, "group") || strcmp(label(o, "group"), gs))
                        FAIL("by_index group=%s has %s in group %s", gs, meta(o, "name"),
                             label(o, "group"));
                }
                check_sorted(out, "by_index");
            }
        } else {
            snprintf(sel, sizeof sel, "group=%d", g);
            if (ctrl_informer_list(r->inf, NULL, sel, &out) != 0) {
                FAIL("list %s failed", sel);
            } else {
                size_t i;
                json_t *o;
                json_array_foreach(out, i, o)
                {
                    if (!label(o, "group") || strcmp(label(o, "group"), gs))
                        FAIL("list %s has %s", sel, meta(o, "name"));
                }
            }
        }
        json_decref(out);
        r->ops++;
    }
    atomic_fetch_add(&reads, r->ops);
    return NULL;
}

/* ---- writer ---- */

static int apply_cm(fakeapi_server *api, int k, int group, unsigned long gen)
{
    char doc[512];
    int n = snprintf(doc, sizeof doc,
                     "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"namespace\":"
                     "\"default\",\"name\":\"cm-%d\",\"labels\":{\"group\":\"%d\"}},"
                     "\"data\":{\"gen\":\"%lu\"}}",
                     k, group, gen);
    fakeapi_error e = {0};
    int rc = fakeapi_apply(api, doc, (size_t)n, &e);
    if (rc != 0)
        FAIL("apply cm-%d: %s", k, e.message);
    return rc;
}

int main(int argc, char **argv)
{
    unsigned long events = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
    fakeapi_server *api = NULL;
    if (fakeapi_start(&(fakeapi_options){.seed = 1, .history_max_events = 200000}, &api) != 0) {
        fprintf(stderr, "stress_cache: fakeapi_start failed\n");
        return 1;
    }
    ctrl_config *cfg = NULL;
    ctrl_client *client = NULL;
    ctrl_cache *cache = NULL;
    ctrl_informer *inf = NULL;
    ctrl_error err = {0};
    if (ctrl_config_from_url(fakeapi_url(api), &cfg, &err) != 0 ||
        ctrl_client_new(cfg, &(ctrl_client_options){.user_agent = "stress-cache"}, &client, &err) !=
            0 ||
        ctrl_cache_new(client, &(ctrl_cache_options){.seed = 42}, &cache, &err) != 0 ||
        ctrl_cache_informer(cache, "v1", "ConfigMap", NULL, &inf, &err) != 0) {
        fprintf(stderr, "stress_cache: set-up: %s\n", err.message);
        return 1;
    }
    ctrl_config_free(cfg);
    ctrl_informer_add_index(inf, "group", by_group, NULL);
    ctrl_informer_add_handler(inf, &(ctrl_event_handler){h_add, h_update, h_delete, NULL});
    if (ctrl_cache_start(cache) != 0 || ctrl_cache_wait_for_sync(cache, 30 * CTRL_SECOND) != 0) {
        fprintf(stderr, "stress_cache: no sync\n");
        return 1;
    }

    reader readers[READERS];
    pthread_t threads[READERS];
    for (int i = 0; i < READERS; i++) {
        readers[i] = (reader){.inf = inf, .seed = 1000u + (unsigned)i};
        pthread_create(&threads[i], NULL, reader_main, &readers[i]);
    }

    /* Writes: create what is missing, else update (70%) or delete (30%). */
    static bool exists[KEYS];
    unsigned seed = 7;
    unsigned long creates = 0, updates = 0, deletes = 0;
    double t0 = now_s();
    for (unsigned long i = 0; i < events; i++) {
        int k = rand_r(&seed) % KEYS;
        int g = rand_r(&seed) % GROUPS;
        if (!exists[k]) {
            if (apply_cm(api, k, g, i) == 0) {
                exists[k] = true;
                creates++;
            }
        } else if (rand_r(&seed) % 10 < 7) {
            if (apply_cm(api, k, g, i) == 0)
                updates++;
        } else {
            char name[32];
            snprintf(name, sizeof name, "cm-%d", k);
            fakeapi_error e = {0};
            if (fakeapi_delete(api, "v1", "ConfigMap", "default", name, &e) == 0) {
                exists[k] = false;
                deletes++;
            } else {
                FAIL("delete %s: %s", name, e.message);
            }
        }
    }
    double t_write = now_s() - t0;

    /* Wait for the informer to catch up with the server. */
    char want[32], rv[32] = "";
    snprintf(want, sizeof want, "%" PRIu64, fakeapi_revision(api));
    double until = now_s() + 120;
    for (;;) {
        ctrl_informer_last_rv(inf, rv, sizeof rv);
        if (!strcmp(rv, want) || now_s() > until)
            break;
        usleep(2000);
    }
    double t_catchup = now_s() - t0;
    atomic_store(&done, true);
    for (int i = 0; i < READERS; i++)
        pthread_join(threads[i], NULL);
    if (strcmp(rv, want))
        FAIL("the informer stopped at rv %s, the server is at %s", rv, want);

    /* Stop the informer first: the handlers' model is then quiet (reads
     * of the store still work). */
    ctrl_cache_stop(cache);

    /* The cache equals the server. */
    json_t *server = NULL, *cached = NULL;
    if (fakeapi_list(api, "v1", "ConfigMap", "default", NULL, &server, NULL) != 0 ||
        ctrl_informer_list(inf, "default", NULL, &cached) != 0) {
        FAIL("final lists failed");
    } else {
        if (json_array_size(server) != json_array_size(cached))
            FAIL("server has %zu objects, the cache %zu", json_array_size(server),
                 json_array_size(cached));
        /* fakeapi_list sorts by name too (cm-1 < cm-10 < cm-100 as strings). */
        size_t n = json_array_size(server) < json_array_size(cached) ? json_array_size(server)
                                                                     : json_array_size(cached);
        for (size_t i = 0; i < n; i++) {
            json_t *s = json_array_get(server, i), *c = json_array_get(cached, i);
            if (strcmp(meta(s, "name"), meta(c, "name")) || rv_of(s) != rv_of(c))
                FAIL("item %zu: server %s@%llu, cache %s@%llu", i, meta(s, "name"), rv_of(s),
                     meta(c, "name"), rv_of(c));
        }
        size_t live = 0;
        for (int k = 0; k < KEYS; k++)
            live += exists[k];
        if (live != json_array_size(cached))
            FAIL("the writer left %zu objects, the cache has %zu", live, json_array_size(cached));
        /* The handlers' model equals the cache; the index partitions it. */
        size_t i;
        json_t *o;
        json_array_foreach(cached, i, o)
        {
            int k = key_index(o);
            if (k < 0 || model[k] != rv_of(o))
                FAIL("model of %s: %llu, cache %llu", meta(o, "name"), k < 0 ? 0 : model[k],
                     rv_of(o));
        }
        size_t modelled = 0;
        for (int k = 0; k < KEYS; k++)
            modelled += model[k] != 0;
        if (modelled != json_array_size(cached))
            FAIL("the model holds %zu objects, the cache %zu", modelled, json_array_size(cached));
        size_t indexed = 0;
        for (int g = 0; g < GROUPS; g++) {
            char gs[16];
            json_t *arr = NULL;
            snprintf(gs, sizeof gs, "%d", g);
            if (ctrl_informer_by_index(inf, "group", gs, &arr) == 0)
                indexed += json_array_size(arr);
            json_decref(arr);
        }
        if (indexed != json_array_size(cached))
            FAIL("the group index holds %zu objects, the cache %zu", indexed,
                 json_array_size(cached));
    }
    ctrl_informer_stats st;
    ctrl_informer_stats_get(inf, &st);
    json_decref(server);
    json_decref(cached);
    ctrl_cache_free(cache);
    ctrl_client_free(client);
    fakeapi_stop(api);
    printf("{\"bench\":\"stress_cache\",\"writes\":%lu,\"creates\":%lu,\"updates\":%lu,"
           "\"deletes\":%lu,\"write_s\":%.2f,\"caught_up_s\":%.2f,\"reads\":%lu,"
           "\"handler_events\":%lu,\"watch_events\":%lu,\"watches\":%lu,\"lists\":%lu,"
           "\"relists\":%lu,\"errors\":%lu,\"failures\":%lu}\n",
           creates + updates + deletes, creates, updates, deletes, t_write, t_catchup,
           atomic_load(&reads), handler_events, st.events, st.watches, st.lists, st.relists,
           st.errors, atomic_load(&failures));
    return atomic_load(&failures) ? 1 : 0;
}

/*
 * recorder.c - core/v1 Events about objects, with client-go's counting of
 * repeats (the EventCorrelator's eventLogger).
 *
 * DESIGN
 * - No threads. A recorder's mutex (r->mu) is held for the whole of one
 *   event, request included, so that two threads repeating the same event
 *   cannot both patch count n+1: events of one recorder are written one at
 *   a time, in call order.
 * - A repeat of (object uid, type, reason, message) within the cache
 *   (CACHE_SIZE entries, least recently used dropped) patches the Event
 *   written first: count + 1 and lastTimestamp. If that Event is gone (404)
 *   a new one is created and the entry starts again.
 * - Events are written synchronously with the manager's client (its
 *   retries included), where client-go queues them to a goroutine; a
 *   caller that cannot wait should not record events from a hot path.
 *   client-go's spam filter and the aggregation of similar messages are
 *   not done.
 */
#include "recorder_int.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CACHE_SIZE 256

typedef struct entry {
    char *key;  /* uid \x1f type \x1f reason \x1f message; NULL = free */
    char *name; /* the Event's name */
    char *ns;
    long long count;
    char first[32];
    uint64_t used; /* LRU tick */
} entry;

struct ctrl_recorder {
    ctrl_client *client;
    ctrl_clock clock;
    char *component;
    char *host;
    pthread_mutex_t mu;
    entry cache[CACHE_SIZE];
    uint64_t tick;
};

ctrl_recorder *ctrl__recorder_new(ctrl_client *client, const ctrl_clock *clock,
                                  const char *component, const char *host)
{
    ctrl_recorder *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->client = client;
    if (clock)
        r->clock = *clock;
    r->component = strdup(component ? component : "");
    r->host = host ? strdup(host) : NULL;
    if (!r->component || (host && !r->host)) {
        free(r->component);
        free(r->host);
        free(r);
        return NULL;
    }
    pthread_mutex_init(&r->mu, NULL);
    return r;
}

const char *ctrl__recorder_component(const ctrl_recorder *r)
{
    return r->component;
}

static void entry_clear(entry *e)
{
    free(e->key);
    free(e->name);
    free(e->ns);
    memset(e, 0, sizeof *e);
}

void ctrl__recorder_free(ctrl_recorder *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < CACHE_SIZE; i++)
        entry_clear(&r->cache[i]);
    pthread_mutex_destroy(&r->mu);
    free(r->component);
    free(r->host);
    free(r);
}

/* metav1.Time: RFC 3339 in seconds, UTC. */
static void rfc3339(int64_t wall_ns, char *buf, size_t len)
{
    time_t secs = (time_t)(wall_ns / CTRL_SECOND);
    struct tm tm;
    gmtime_r(&secs, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static const char *str_at(const json_t *obj, const char *a, const char *b)
{
    const json_t *v = json_object_get(obj, a);
    if (b)
        v = json_object_get(v, b);
    const char *s = json_string_value(v);
    return s ? s : "";
}

/* The involvedObject reference (client-go's reference.GetReference). */
static json_t *reference(const json_t *obj)
{
    json_t *ref = json_object();
    if (!ref)
        return NULL;
    static const struct {
        const char *key, *a, *b;
    } fields[] = {
        {"apiVersion", "apiVersion", NULL},
        {"kind", "kind", NULL},
        {"namespace", "metadata", "namespace"},
        {"name", "metadata", "name"},
        {"uid", "metadata", "uid"},
        {"resourceVersion", "metadata", "resourceVersion"},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        const char *v = str_at(obj, fields[i].a, fields[i].b);
        if (*v)
            json_object_set_new(ref, fields[i].key, json_string(v));
    }
    return ref;
}

static entry *lookup(ctrl_recorder *r, const char *key)
{
    for (size_t i = 0; i < CACHE_SIZE; i++)
        if (r->cache[i].key && strcmp(r->cache[i].key, key) == 0)
            return &r->cache[i];
    return NULL;
}

static entry *victim(ctrl_recorder *r)
{
    entry *best = &r->cache[0];
    for (size_t i = 0; i < CACHE_SIZE; i++) {
        if (!r->cache[i].key)
            return &r->cache[i];
        if (r->cache[i].used < best->used)
            best = &r->cache[i];
    }
    entry_clear(best);
    return best;
}

/* Patch a repeat: 0, or a negative code (CTRL_ERR_NOT_FOUND: create anew). */
static int patch_repeat(ctrl_recorder *r, entry *e, const char *now, const char *message)
{
    json_t *patch = json_pack("{s:I, s:s, s:s}", "count", (json_int_t)(e->count + 1),
                              "lastTimestamp", now, "message", message);
    if (!patch)
        return CTRL_ERR_NOMEM;
    int rc = ctrl_client_patch(r->client, "v1", "Event", e->ns, e->name, CTRL_PATCH_STRATEGIC,
                               patch, NULL, NULL, NULL);
    json_decref(patch);
    if (rc == 0)
        e->count++;
    return rc;
}

static int create_event(ctrl_recorder *r, const json_t *obj, const char *ns, const char *type,
                        const char *reason, const char *message, const char *now, int64_t wall,
                        entry *e)
{
    const char *objname = str_at(obj, "metadata", "name");
    char name[300];
    /* client-go: <name>.<UnixNano in hex>; the recorder's tick keeps two
     * events at one instant of a virtual clock apart. */
    snprintf(name, sizeof name, "%.230s.%llx", *objname ? objname : "event",
             (unsigned long long)wall + r->tick);
    json_t *source = json_pack("{s:s}", "component", r->component);
    if (source && r->host)
        json_object_set_new(source, "host", json_string(r->host));
    json_t *ev = json_pack(
        "{s:s, s:s, s:{s:s, s:s}, s:o, s:s, s:s, s:s, s:o, s:s, s:s, s:I, s:s, s:s}", "apiVersion",
        "v1", "kind", "Event", "metadata", "name", name, "namespace", ns, "involvedObject",
        reference(obj), "reason", reason, "message", message, "type", type, "source", source,
        "firstTimestamp", now, "lastTimestamp", now, "count", (json_int_t)1, "reportingComponent",
        r->component, "reportingInstance", r->host ? r->host : "");
    if (!ev)
        return CTRL_ERR_NOMEM;
    int rc = ctrl_client_create(r->client, ev, NULL, NULL, NULL);
    json_decref(ev);
    if (rc == 0 && e) {
        e->name = strdup(name);
        e->ns = strdup(ns);
        e->count = 1;
        snprintf(e->first, sizeof e->first, "%s", now);
        if (!e->name || !e->ns)
            entry_clear(e);
    }
    return rc;
}

void ctrl_recorder_event(ctrl_recorder *r, const json_t *obj, const char *type, const char *reason,
                         const char *fmt, ...)
{
    if (!r || !obj || !type || !reason || !fmt)
        return;
    char message[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    const char *ns = str_at(obj, "metadata", "namespace");
    if (!*ns)
        ns = "default"; /* events about cluster-scoped objects, as client-go */
    const char *uid = str_at(obj, "metadata", "uid");
    char *key = NULL;
    size_t kl = strlen(uid) + strlen(ns) + strlen(str_at(obj, "metadata", "name")) +
                strlen(str_at(obj, "kind", NULL)) + strlen(type) + strlen(reason) +
                strlen(message) + 16;
    key = malloc(kl);
    if (!key)
        return;
    snprintf(key, kl, "%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s", uid, str_at(obj, "kind", NULL), ns,
             str_at(obj, "metadata", "name"), type, reason, message);
    int64_t wall = ctrl_clock_wall_ns(&r->clock);
    char now[32];
    rfc3339(wall, now, sizeof now);

    pthread_mutex_lock(&r->mu);
    entry *e = lookup(r, key);
    if (e) {
        e->used = ++r->tick;
        int rc = patch_repeat(r, e, now, message);
        if (rc == 0 || rc != CTRL_ERR_NOT_FOUND) {
            pthread_mutex_unlock(&r->mu);
            free(key);
            return;
        }
        entry_clear(e); /* the Event is gone (expired or deleted): start over */
    }
    e = victim(r);
    e->key = key;
    e->used = ++r->tick;
    key = NULL;
    if (create_event(r, obj, ns, type, reason, message, now, wall, e) < 0)
        entry_clear(e);
    pthread_mutex_unlock(&r->mu);
    free(key);
}

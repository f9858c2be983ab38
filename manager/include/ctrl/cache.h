/*
 * ctrl/cache.h - informers and the cache the manager's reads come from.
 *
 * An informer keeps a local copy of one kind: it LISTs (paginated) and then
 * WATCHes from the list's resourceVersion with bookmarks and a timeout with
 * jitter, resumes from the last resourceVersion it saw (bookmarks included),
 * relists on 410 Expired (a fresh list if that too is 410), backs off on
 * errors (0.8 s doubling to 30 s, as client-go), and uses watch-list
 * (sendInitialEvents) where the server offers it, falling back to LIST+WATCH
 * when it refuses. Objects that vanished while the watch was down are
 * delivered as deletes on relist ("final state unknown").
 *
 * A cache owns one informer per apiVersion+kind (as spelled: "ConfigMap"
 * and "configmaps" are two), created on first use with the first caller's
 * options, and starts them with ctrl_cache_start.
 *
 * The cache keeps every object in a compact packed form (about a quarter
 * of a jansson tree) and builds a json_t for each read: objects handed out
 * by get, list and by_index are new and the caller's own - change them
 * freely, json_decref them when done; they never change with the cache.
 * A read costs about 1-3 us per KB of object. Objects passed to handlers
 * are borrowed for the call: read-only; json_deep_copy to keep one. (The
 * cache keeps the objects of recent watch events as they came, within a
 * budget, for the next event's old object: handlers must never change
 * them.)
 *
 * Threads: each informer runs one thread (list/watch and handler dispatch);
 * a namespaced kind in a cache scoped to N namespaces runs one per
 * namespace, and a resync period adds one. Handlers for one informer are
 * called one event at a time (under one lock), in order per object. Reads
 * (get, list, by_index) may be called from any thread at once. Every other
 * function here is thread-safe too, except ctrl_cache_free (last, from one
 * thread). docs/manager.md ("Cache") has the model.
 */
#ifndef CTRL_CACHE_H
#define CTRL_CACHE_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#include "ctrl/client.h"
#include "ctrl/clock.h"
#include "ctrl/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ctrl_cache ctrl_cache;
typedef struct ctrl_informer ctrl_informer;

/* Drop fields before storing (memory): modify obj in place. Called once per
 * object received, before it is stored or handed to handlers. Any informer
 * thread. */
typedef void (*ctrl_transform_fn)(json_t *obj, void *user);

/* Per-kind scoping. Zero-initialise. */
typedef struct ctrl_informer_options {
    const char *label_selector; /* server-side filter; NULL = all */
    const char *field_selector;
    ctrl_transform_fn transform;
    void *transform_user;
} ctrl_informer_options;

typedef struct ctrl_cache_options {
    const char *const *namespaces; /* NULL-terminated; NULL = every namespace */
    int64_t resync_ns;             /* 0 = no periodic resync; jittered up to +10% */
    int watch_timeout_s;           /* 0 = 300 (plus jitter up to 300) */
    bool no_watch_list;            /* never try sendInitialEvents */
    const ctrl_clock *clock;       /* NULL = real; every delay goes through it */
    uint64_t seed;                 /* jitter draws; 0 = random */
    const ctrl_hooks *hooks;       /* deterministic runs (ctrl/clock.h); NULL = none */
} ctrl_cache_options;

int ctrl_cache_new(ctrl_client *client, const ctrl_cache_options *opts, ctrl_cache **out,
                   ctrl_error *err);
/* Stops (if needed) and frees. NULL does nothing. */
void ctrl_cache_free(ctrl_cache *cache);

/*
 * The informer for apiVersion/kind, created on first call (borrowed: lives
 * as long as the cache). opts apply only when it is created. Informers
 * created after ctrl_cache_start start at once.
 */
int ctrl_cache_informer(ctrl_cache *cache, const char *api_version, const char *kind,
                        const ctrl_informer_options *opts, ctrl_informer **out, ctrl_error *err);

/* Start every informer's thread. Starting twice is CTRL_ERR_ARG. */
int ctrl_cache_start(ctrl_cache *cache);
/* Stop every informer and join its thread. Safe to call twice. */
void ctrl_cache_stop(ctrl_cache *cache);
/* Wait until every informer has synced, or timeout_ns passes on the cache's
 * clock (CTRL_ERR_TIMEOUT; < 0 waits without limit, 0 only checks), or the
 * cache stops (CTRL_ERR_CANCELLED). */
int ctrl_cache_wait_for_sync(ctrl_cache *cache, int64_t timeout_ns);

/* True when the cache holds (is informed about) this kind. */
bool ctrl_cache_has(ctrl_cache *cache, const char *api_version, const char *kind);

/* ---- one informer ---- */

/*
 * Handlers. initial is true for the adds of the first list. For a delete,
 * final_state_unknown is true when the object vanished while the watch was
 * down (obj is then the last state the cache had). Resync delivers
 * on_update with old == new.
 */
typedef struct ctrl_event_handler {
    void (*on_add)(const json_t *obj, bool initial, void *user);
    void (*on_update)(const json_t *old_obj, const json_t *new_obj, void *user);
    void (*on_delete)(const json_t *obj, bool final_state_unknown, void *user);
    void *user;
} ctrl_event_handler;

/* Register handlers (copied). Handlers added once objects are cached first
 * receive an add (initial true) for every one, on the calling thread. May be
 * called from a handler. */
int ctrl_informer_add_handler(ctrl_informer *inf, const ctrl_event_handler *h);

bool ctrl_informer_has_synced(ctrl_informer *inf);
int ctrl_informer_wait_for_sync(ctrl_informer *inf, int64_t timeout_ns);

/* The last resourceVersion the informer has seen ("" before the first list). */
void ctrl_informer_last_rv(ctrl_informer *inf, char *buf, size_t len);

/* A cached object: *out is a new object of the caller's own.
 * CTRL_ERR_NOT_FOUND; CTRL_ERR_NOMEM. */
int ctrl_informer_get(ctrl_informer *inf, const char *ns, const char *name, json_t **out);
/* As ctrl_informer_get, but *out (a reference of the caller's:
 * json_decref it) is shared with the cache and every other caller:
 * READ-ONLY, as ctrl_informer_by_index_shared's objects - never change it
 * or anything in it (json_deep_copy it to change it). The object of a
 * recent watch event is handed out as it came, others are unpacked once
 * per stored version and kept while unchanged: a read-only caller pays a
 * reference instead of an unpack (~90k instructions for a 3.4 KB Pod). */
int ctrl_informer_get_shared(ctrl_informer *inf, const char *ns, const char *name, json_t **out);

/* Cached objects in (namespace, name) order, in ns (NULL = all), matching
 * label_selector (NULL = all; CTRL_ERR_ARG if malformed): *out is a new array
 * of new objects, all the caller's own. */
int ctrl_informer_list(ctrl_informer *inf, const char *ns, const char *label_selector,
                       json_t **out);

/* Index functions return the index values of an object as a new JSON array
 * of strings (or NULL for none). Called on informer threads (and by
 * ctrl_informer_add_index for the objects already cached) with the store
 * locked: they must be pure (an object's old values are computed again
 * from the old object when it changes) and must not call back into the
 * informer. The index "namespace" is built in. */
typedef json_t *(*ctrl_index_fn)(const json_t *obj, void *user);

/* Add an index (before start, or at any time: it is built from the store,
 * every cached object unpacked for it with the store locked - ~1-3 ms per
 * 1,000 objects). */
int ctrl_informer_add_index(ctrl_informer *inf, const char *name, ctrl_index_fn fn, void *user);
/* Objects whose index name has value, sorted as ctrl_informer_list; *out a
 * new array of new objects, the caller's own. CTRL_ERR_ARG for an unknown
 * index. */
int ctrl_informer_by_index(ctrl_informer *inf, const char *name, const char *value, json_t **out);
/* As ctrl_informer_by_index, but *out (a new array, the caller's own)
 * holds objects shared with the cache and with every other caller:
 * READ-ONLY - never change them or anything in them (json_deep_copy one to
 * change it); keeping references is safe (json_incref/json_decref are
 * atomic), they never change. Each stored version is unpacked once and
 * kept while unchanged, so a hot reconcile that reads many unchanged
 * objects pays a reference per object instead of an unpack. */
int ctrl_informer_by_index_shared(ctrl_informer *inf, const char *name, const char *value,
                                  json_t **out);

/* Counters, for tests and metrics. */
typedef struct ctrl_informer_stats {
    unsigned long lists, watches, relists, events, bookmarks, errors;
    size_t objects;
} ctrl_informer_stats;
void ctrl_informer_stats_get(ctrl_informer *inf, ctrl_informer_stats *out);

#ifdef __cplusplus
}
#endif

#endif

/*
 * informer.c - one informer: list/watch (or watch-list) into a store, and
 * handler dispatch.
 *
 * DESIGN
 *   Threads. The informer's main thread first resolves the kind's scope
 *   (discovery, retried with backoff), then runs the reflector of the first
 *   namespace. A namespaced kind with a cache scoped to N namespaces gets N
 *   reflectors (one LIST+WATCH per namespace), the extra N-1 on threads of
 *   their own spawned by the main thread; every other case has one
 *   reflector for every namespace. With a resync period, one more thread
 *   delivers the periodic on_update(obj, obj). All of them write the store
 *   and call handlers only while holding dispatch_mu, so handlers of one
 *   informer run one event at a time, in the order the events arrived (per
 *   object, since an object lives in exactly one namespace). Threads start
 *   through ctrl__spawn (scheduler hooks); each dispatched event or line
 *   read is one turn (hooks before/after "event", called outside every
 *   lock), each LIST one "list" turn, and a watch is bracketed by
 *   io_wait(true) / io_wait(false).
 *
 *   A reflector: LIST (paginated, by ctrl_client_list) then WATCH from the
 *   list's resourceVersion with bookmarks and a jittered timeoutSeconds;
 *   after a clean close or a broken connection, WATCH again from the last
 *   resourceVersion seen (events and bookmarks); on 410, LIST again from the
 *   last resourceVersion, and if that is 410 too, from "" (the newest
 *   state). The new list replaces the reflector's part of the store: new
 *   objects are adds, changed ones (another resourceVersion) updates, and
 *   the objects that are gone are deletes with final_state_unknown. Unless
 *   the cache says no_watch_list, the first attempt is watch-list
 *   (sendInitialEvents): the ADDED events up to the BOOKMARK annotated
 *   k8s.io/initial-events-end are gathered and replace the store like a
 *   list; a 4xx refusal (other than 410 and 429) switches the reflector to
 *   LIST+WATCH for good. Errors back off 0.8 s doubling to 30 s (the
 *   server's Retry-After when longer) on the cache's clock; a list or a
 *   watch that delivered something resets the backoff. A watch that ends
 *   cleanly within a second without any event counts as an error, as
 *   client-go's "very short watch".
 *
 *   Locks, in the order they are taken:
 *     dispatch_mu (recursive) - store writes, handler calls and the handler
 *                               array; held across handler calls, so a
 *                               handler may add handlers or indexes.
 *     store lock (store.c)    - inside dispatch_mu, never held outside a
 *                               store call.
 *     mu                      - lifecycle flags, reflectors' rv and synced,
 *                               stats, the resync rng; never held while
 *                               calling out; cv signals stop and sync.
 */
#include "informer_int.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log_int.h"
#include "packed_int.h"
#include "spawn_int.h"
#include "store_int.h"

#define BACKOFF_FIRST (800 * CTRL_MILLISECOND)
#define BACKOFF_MAX (30 * CTRL_SECOND)
#define DISCOVERY_RETRY_MAX (10 * CTRL_SECOND) /* controller-runtime polls every 10 s */
#define SHORT_WATCH CTRL_SECOND
#define DEFAULT_WATCH_TIMEOUT_S 300
#define RV_MAX 64

typedef struct reflector {
    ctrl_informer *inf;
    const char *ns; /* NULL = every namespace */
    ctrl_watch *w;
    pthread_t thread;
    bool spawned;    /* thread created (mu) */
    char rv[RV_MAX]; /* last resourceVersion seen; written under mu by its thread */
    bool synced;     /* first list done (mu) */
    bool watch_list; /* try watch-list (its thread only) */
    bool list_fresh; /* next list from "" (its thread only) */
    int64_t backoff; /* last backoff (its thread only) */
    uint64_t rng;    /* its thread only */
} reflector;

struct ctrl_informer {
    ctrl__informer_config cfg;
    atomic_int in_dispatch; /* watch lines received and not yet fully handled */
    char *api_version, *kind, *name;
    char *label_selector, *field_selector;
    ctrl_transform_fn transform;
    void *transform_user;
    ctrl__store *store;

    pthread_mutex_t dispatch_mu;
    ctrl_event_handler *handlers;
    size_t nh, caph;

    pthread_mutex_t mu;
    pthread_cond_t cv;
    reflector *refl;
    size_t nrefl;   /* allocated */
    size_t nactive; /* in use, once the scope is known (0 before) */
    pthread_t main_thread, resync_thread;
    bool started, stopping, synced, resync_started;
    ctrl_informer_stats stats;
    uint64_t rng;
};

/* ---- small helpers ---- */

static uint64_t rng_next(uint64_t *s)
{
    /* splitmix64 */
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static const char *obj_rv(const json_t *obj)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
}

static bool is_stopping(ctrl_informer *inf)
{
    pthread_mutex_lock(&inf->mu);
    bool s = inf->stopping;
    pthread_mutex_unlock(&inf->mu);
    return s;
}

/* Wait ns on the cache's clock; false if the informer stops meanwhile. */
static bool sleep_for(ctrl_informer *inf, int64_t ns)
{
    pthread_mutex_lock(&inf->mu);
    int64_t deadline = ctrl_clock_now(inf->cfg.clock) + ns;
    while (!inf->stopping && ctrl_clock_now(inf->cfg.clock) < deadline)
        ctrl_clock_wait_until(inf->cfg.clock, &inf->cv, &inf->mu, deadline);
    bool ok = !inf->stopping;
    pthread_mutex_unlock(&inf->mu);
    return ok;
}

static void count_error(ctrl_informer *inf)
{
    pthread_mutex_lock(&inf->mu);
    inf->stats.errors++;
    pthread_mutex_unlock(&inf->mu);
}

/* Count an error and back off: 0.8 s doubling to 30 s, or Retry-After. */
static bool backoff(reflector *r, const ctrl_error *err)
{
    count_error(r->inf);
    int64_t d = r->backoff ? r->backoff * 2 : BACKOFF_FIRST;
    if (d > BACKOFF_MAX)
        d = BACKOFF_MAX;
    r->backoff = d;
    if (err && err->retry_after_seconds > 0 && err->retry_after_seconds * CTRL_SECOND > d)
        d = err->retry_after_seconds * CTRL_SECOND;
    return sleep_for(r->inf, d);
}

static void set_rv(reflector *r, const char *rv)
{
    if (!rv || !*rv || strlen(rv) >= RV_MAX)
        return;
    pthread_mutex_lock(&r->inf->mu);
    memcpy(r->rv, rv, strlen(rv) + 1);
    pthread_mutex_unlock(&r->inf->mu);
}

/* ---- dispatch ---- */

/* Turn hooks: called with no lock held (before() may block). */
static void hook_before_kind(ctrl_informer *inf, const char *kind, const char *key)
{
    const ctrl_hooks *h = inf->cfg.hooks;
    if (h && h->before)
        h->before(h->ud, kind, inf->name, key);
}

static void hook_after_kind(ctrl_informer *inf, const char *kind, const char *key)
{
    const ctrl_hooks *h = inf->cfg.hooks;
    if (h && h->after)
        h->after(h->ud, kind, inf->name, key);
}

static void hook_before(ctrl_informer *inf, const char *key)
{
    hook_before_kind(inf, "event", key);
}

static void hook_after(ctrl_informer *inf, const char *key)
{
    hook_after_kind(inf, "event", key);
}

static void hook_io_wait(ctrl_informer *inf, bool waiting)
{
    const ctrl_hooks *h = inf->cfg.hooks;
    if (h && h->io_wait)
        h->io_wait(h->ud, waiting);
}

/* Handlers are copied out one at a time: a handler may add handlers. */
static void call_add(ctrl_informer *inf, const json_t *obj, bool initial)
{
    for (size_t i = 0; i < inf->nh; i++) {
        ctrl_event_handler h = inf->handlers[i];
        if (h.on_add)
            h.on_add(obj, initial, h.user);
    }
}

static void call_update(ctrl_informer *inf, const json_t *old, const json_t *obj)
{
    for (size_t i = 0; i < inf->nh; i++) {
        ctrl_event_handler h = inf->handlers[i];
        if (h.on_update)
            h.on_update(old, obj, h.user);
    }
}

static void call_delete(ctrl_informer *inf, const json_t *obj, bool unknown)
{
    for (size_t i = 0; i < inf->nh; i++) {
        ctrl_event_handler h = inf->handlers[i];
        if (h.on_delete)
            h.on_delete(obj, unknown, h.user);
    }
}

/*
 * Store obj under key and tell the handlers, as one turn (hooks) under
 * dispatch_mu. From a list (relist true), an object whose resourceVersion
 * did not change is left alone, without a turn.
 */
static void dispatch_upsert(ctrl_informer *inf, const char *key, json_t *obj, bool initial,
                            bool relist)
{
    if (relist && ctrl__store_has_rv(inf->store, key, obj_rv(obj)))
        return;
    hook_before(inf, key);
    pthread_mutex_lock(&inf->dispatch_mu);
    json_t *old = NULL;
    /* A watch event's object is kept by the store (read-only from now on,
     * as for handlers): its next update or delete needs it again. */
    if (ctrl__store_put(inf->store, key, obj, !relist, &old) == 0) {
        if (old)
            call_update(inf, old, obj);
        else
            call_add(inf, obj, initial);
    }
    pthread_mutex_unlock(&inf->dispatch_mu);
    json_decref(old);
    hook_after(inf, key);
}

/* Remove key; handlers get the event's object, or the last state stored
 * when the deletion was inferred (final state unknown). */
static void dispatch_delete(ctrl_informer *inf, const char *key, json_t *event_obj, bool unknown)
{
    hook_before(inf, key);
    pthread_mutex_lock(&inf->dispatch_mu);
    json_t *old = NULL;
    /* The last state stored is unpacked only when it is what handlers get. */
    ctrl__store_remove(inf->store, key, event_obj ? NULL : &old);
    const json_t *what = event_obj ? event_obj : old;
    if (what)
        call_delete(inf, what, unknown);
    pthread_mutex_unlock(&inf->dispatch_mu);
    json_decref(old);
    hook_after(inf, key);
}

static void transform(ctrl_informer *inf, json_t *obj)
{
    if (inf->transform && json_is_object(obj))
        inf->transform(obj, inf->transform_user);
}

/* The reflector's first sync is done: maybe the informer's too. */
static void mark_synced(reflector *r)
{
    ctrl_informer *inf = r->inf;
    pthread_mutex_lock(&inf->mu);
    r->synced = true;
    bool all = inf->nactive > 0;
    for (size_t i = 0; i < inf->nactive; i++)
        all = all && inf->refl[i].synced;
    if (all && !inf->synced) {
        inf->synced = true;
        ctrl_clock_notify(inf->cfg.clock, &inf->cv);
    }
    pthread_mutex_unlock(&inf->mu);
}

/*
 * A full list replaces the reflector's part of the store. items is a JSON
 * array of the list's objects: trees from a LIST, transformed here, or
 * packed strings (packed_int.h) from watch-list, transformed and packed as
 * they came (on_event_locked). The memory of items is given back before
 * the informer counts as synced (freeing 10,000 trees takes tens of
 * milliseconds, which would otherwise delay the first events after the
 * sync): packed strings one by one as they are stored (the store's
 * records then reuse their room), trees all together at the end - freed
 * one by one, they would leave holes that the records fill, the records
 * would end up spread over the trees' pages, and the pages could not be
 * given back to the system.
 */
static void replace(reflector *r, json_t *items, const char *rv)
{
    ctrl_informer *inf = r->inf;
    bool initial = !r->synced;
    json_t *gone = ctrl__store_keys(inf->store, r->ns);
    char key[CTRL__KEY_MAX];
    for (size_t i = 0; i < json_array_size(items); i++) {
        json_t *item = json_array_get(items, i);
        bool packed = json_is_string(item);
        json_t *obj = packed ? ctrl__unpack(json_string_value(item), json_string_length(item))
                             : json_incref(item);
        if (packed)
            json_array_set_new(items, i, json_null());
        if (!obj)
            continue; /* out of memory */
        if (!packed)
            transform(inf, obj);
        if (ctrl__store_key(obj, key, sizeof key) == 0) {
            if (gone)
                json_object_del(gone, key);
            dispatch_upsert(inf, key, obj, initial, true);
        }
        json_decref(obj);
    }
    json_array_clear(items);
    const char *k;
    json_t *null;
    json_object_foreach(gone, k, null)
    {
        dispatch_delete(inf, k, NULL, true);
    }
    json_decref(gone);
    set_rv(r, rv);
    mark_synced(r);
}

/* ---- list ---- */

static int do_list(reflector *r, ctrl_error *err)
{
    ctrl_informer *inf = r->inf;
    const char *rv = !r->list_fresh && r->rv[0] ? r->rv : NULL;
    ctrl_list_options lo = {.label_selector = inf->label_selector,
                            .field_selector = inf->field_selector,
                            .resource_version = rv,
                            .resource_version_match = rv ? "NotOlderThan" : NULL};
    json_t *list = NULL;
    pthread_mutex_lock(&inf->mu);
    inf->stats.lists++;
    pthread_mutex_unlock(&inf->mu);
    hook_before_kind(inf, "list", "");
    int rc = ctrl_client_list(inf->cfg.client, inf->api_version, inf->kind, r->ns, &lo, &list, err);
    if (ctrl_err_is_gone(rc) && rv) {
        /* Even the last resourceVersion is gone: the newest state, then. */
        lo.resource_version = NULL;
        lo.resource_version_match = NULL;
        pthread_mutex_lock(&inf->mu);
        inf->stats.lists++;
        pthread_mutex_unlock(&inf->mu);
        rc = ctrl_client_list(inf->cfg.client, inf->api_version, inf->kind, r->ns, &lo, &list, err);
    }
    hook_after_kind(inf, "list", "");
    if (rc < 0)
        return rc;
    const char *list_rv = obj_rv(list);
    json_t *items = json_object_get(list, "items");
    replace(r, json_is_array(items) ? items : NULL, list_rv);
    r->list_fresh = false;
    json_decref(list);
    return 0;
}

/* ---- watch ---- */

typedef struct watch_ctx {
    reflector *r;
    bool initial_phase; /* watch-list: gathering the initial events */
    bool initial_done;  /* watch-list: the initial-events-end bookmark came */
    json_t *initial;    /* key -> packed object while gathering (see replace) */
    unsigned long events;
    bool opened; /* the server accepted the watch (io_wait(true) was called) */
} watch_ctx;

static bool initial_end(const json_t *obj)
{
    json_t *ann = json_object_get(json_object_get(obj, "metadata"), "annotations");
    const char *v = json_string_value(json_object_get(ann, "k8s.io/initial-events-end"));
    return v && !strcmp(v, "true");
}

static int on_event_locked(const ctrl_watch_event *ev, watch_ctx *wc);

/* A line from the watch: counted as in flight until fully handled, so that
 * ctrl_manager_idle() never reports idle with an event half-way through. */
static int on_event(const ctrl_watch_event *ev, void *user)
{
    watch_ctx *wc = user;
    atomic_fetch_add(&wc->r->inf->in_dispatch, 1);
    int rc = on_event_locked(ev, wc);
    atomic_fetch_sub(&wc->r->inf->in_dispatch, 1);
    return rc;
}

static int on_event_locked(const ctrl_watch_event *ev, watch_ctx *wc)
{
    reflector *r = wc->r;
    ctrl_informer *inf = r->inf;
    json_t *obj = ev->object;
    char key[CTRL__KEY_MAX];
    switch (ev->type) {
    case CTRL_WATCH_ADDED:
    case CTRL_WATCH_MODIFIED:
    case CTRL_WATCH_DELETED:
        wc->events++;
        pthread_mutex_lock(&inf->mu);
        inf->stats.events++;
        pthread_mutex_unlock(&inf->mu);
        if (ctrl__store_key(obj, key, sizeof key) < 0)
            break;
        if (wc->initial_phase) {
            hook_before(inf, key);
            json_t *packed = NULL;
            if (ev->type == CTRL_WATCH_DELETED) {
                json_object_del(wc->initial, key);
            } else {
                /* Packed at once: a tree per object until the end of the
                 * initial events would cost ~5 KB each meanwhile, and leave
                 * the heap fragmented under the store's records. */
                transform(inf, obj);
                if (ctrl__pack_string(obj, NULL, 0, &packed) == 0)
                    json_object_set_new_nocheck(wc->initial, key, packed);
            }
            hook_after(inf, key);
            break;
        }
        transform(inf, obj);
        if (ev->type == CTRL_WATCH_DELETED)
            dispatch_delete(inf, key, obj, false);
        else
            dispatch_upsert(inf, key, obj, false, false);
        set_rv(r, obj_rv(obj));
        break;
    case CTRL_WATCH_BOOKMARK:
        hook_before(inf, "");
        pthread_mutex_lock(&inf->mu);
        inf->stats.bookmarks++;
        pthread_mutex_unlock(&inf->mu);
        hook_after(inf, "");
        if (wc->initial_phase && initial_end(obj)) {
            json_t *items = json_array();
            const char *k;
            json_t *o;
            json_object_foreach(wc->initial, k, o)
            {
                json_array_append(items, o);
            }
            json_object_clear(wc->initial);
            wc->initial_phase = false;
            wc->initial_done = true;
            replace(r, items, obj_rv(obj));
            json_decref(items);
        } else if (!wc->initial_phase) {
            set_rv(r, obj_rv(obj));
        }
        break;
    case CTRL_WATCH_ERROR:
        hook_before(inf, ""); /* ctrl_client_watch returns its code */
        hook_after(inf, "");
        break;
    }
    if (is_stopping(inf))
        return 1;
    /* Back to waiting for the server's next line. */
    if (wc->opened)
        hook_io_wait(inf, true);
    return 0;
}

static void watch_opened(void *user)
{
    watch_ctx *wc = user;
    wc->opened = true;
    hook_io_wait(wc->r->inf, true);
}

static int do_watch(reflector *r, bool watch_list, watch_ctx *wc, ctrl_error *err)
{
    ctrl_informer *inf = r->inf;
    *wc = (watch_ctx){.r = r, .initial_phase = watch_list};
    if (watch_list && !(wc->initial = json_object()))
        return CTRL_ERR_NOMEM;
    int base = inf->cfg.watch_timeout_s > 0 ? inf->cfg.watch_timeout_s : DEFAULT_WATCH_TIMEOUT_S;
    int timeout = base + (int)(rng_next(&r->rng) % ((uint64_t)base + 1));
    const char *rv = r->rv[0] ? r->rv : NULL;
    if (watch_list && r->list_fresh)
        rv = NULL;
    ctrl_watch_options wo = {.label_selector = inf->label_selector,
                             .field_selector = inf->field_selector,
                             .resource_version = rv,
                             .timeout_seconds = timeout,
                             .allow_bookmarks = true,
                             .send_initial_events = watch_list};
    pthread_mutex_lock(&inf->mu);
    inf->stats.watches++;
    pthread_mutex_unlock(&inf->mu);
    /* io_wait(true) only once the server has the watch (on_open): until then
     * the request is this thread's own work, not something it waits for. */
    wo.on_open = watch_opened;
    int rc = ctrl_client_watch(inf->cfg.client, inf->api_version, inf->kind, r->ns, &wo, r->w,
                               on_event, wc, err);
    if (wc->opened)
        hook_io_wait(inf, false);
    json_decref(wc->initial);
    wc->initial = NULL;
    return rc;
}

/* A server that does not do watch-list refuses it with a 4xx. */
static bool refused(int rc, const ctrl_error *err)
{
    if (!ctrl_err_is_api(rc) || ctrl_err_is_gone(rc) || ctrl_err_is_too_many_requests(rc))
        return false;
    return err->http_status >= 400 && err->http_status < 500;
}

static void run_reflector(reflector *r)
{
    ctrl_informer *inf = r->inf;
    ctrl_error err = {0};
    bool need_list = true;
    r->watch_list = !inf->cfg.no_watch_list;
    while (!is_stopping(inf)) {
        int rc;
        if (need_list && !r->watch_list) {
            rc = do_list(r, &err);
            if (rc == 0) {
                need_list = false;
                r->backoff = 0;
            } else if (rc == CTRL_ERR_CANCELLED || !backoff(r, &err)) {
                break;
            }
            continue;
        }
        bool as_list = need_list;
        watch_ctx wc;
        int64_t t0 = ctrl_clock_now(inf->cfg.clock);
        rc = do_watch(r, as_list, &wc, &err);
        if (rc == CTRL_ERR_CANCELLED || is_stopping(inf))
            break;
        if (as_list && !wc.initial_done) {
            if (wc.events == 0 && refused(rc, &err)) {
                r->watch_list = false; /* the server does not do watch-list */
                continue;
            }
            if (ctrl_err_is_gone(rc) && wc.events == 0 && !r->list_fresh && r->rv[0]) {
                r->list_fresh = true;
                continue;
            }
            if (!backoff(r, &err))
                break;
            continue;
        }
        if (as_list) {
            need_list = false;
            r->list_fresh = false;
        }
        if (ctrl_err_is_gone(rc)) {
            /* 410: the history we need is gone; list again. */
            pthread_mutex_lock(&inf->mu);
            inf->stats.relists++;
            pthread_mutex_unlock(&inf->mu);
            need_list = true;
            continue;
        }
        if (rc == 0 &&
            (wc.events > 0 || ctrl_clock_now(inf->cfg.clock) - t0 >= SHORT_WATCH || as_list)) {
            r->backoff = 0;
            continue;
        }
        if (wc.events > 0)
            r->backoff = 0;
        if (!backoff(r, rc < 0 ? &err : NULL))
            break;
    }
    ctrl_error_deinit(&err);
}

static void *reflector_main(void *arg)
{
    run_reflector(arg);
    return NULL;
}

/* "Kind.group" (controller-runtime's GroupKind), or "Kind" for the core group. */
static void report_no_match(ctrl_informer *inf, const ctrl_error *err)
{
    if (!ctrl__log_enabled(inf->cfg.log, CTRL_LOG_ERROR))
        return;
    char gk[512];
    const char *slash = strchr(inf->api_version, '/');
    if (slash)
        snprintf(gk, sizeof gk, "%s.%.*s", inf->kind, (int)(slash - inf->api_version),
                 inf->api_version);
    else
        snprintf(gk, sizeof gk, "%s", inf->kind);
    ctrl__log(inf->cfg.log, CTRL_LOG_ERROR, "source",
              "if kind is a CRD, it should be installed before calling Start", "error",
              err->message, "kind", gk, "apiVersion", inf->api_version, (const char *)0);
}

static void *informer_main(void *arg)
{
    ctrl_informer *inf = arg;
    reflector *r0 = &inf->refl[0];
    ctrl_error err = {0};
    ctrl_resource_info info;
    for (;;) {
        int rc =
            ctrl_client_resource_for(inf->cfg.client, inf->api_version, inf->kind, &info, &err);
        if (rc == 0)
            break;
        if (rc == CTRL_ERR_NO_MATCH) {
            /* A kind the server does not serve (its CRD is missing): say so
             * at once and at every retry, as controller-runtime's Kind
             * source; each retry reads the group's discovery document
             * again, so a CRD created later is found. */
            report_no_match(inf, &err);
            if (r0->backoff >= DISCOVERY_RETRY_MAX / 2)
                r0->backoff = DISCOVERY_RETRY_MAX / 2; /* the next wait is 10 s */
        }
        if (!backoff(r0, &err))
            goto out;
    }
    r0->backoff = 0;
    pthread_mutex_lock(&inf->mu);
    if (!info.namespaced) {
        r0->ns = NULL;
        inf->nactive = 1;
    } else {
        inf->nactive = inf->nrefl;
    }
    for (size_t i = 1; i < inf->nactive && !inf->stopping; i++) {
        char tname[64];
        snprintf(tname, sizeof tname, "reflector %s %s", inf->name, inf->refl[i].ns);
        if (ctrl__spawn(&inf->refl[i].thread, inf->cfg.hooks, tname, reflector_main,
                        &inf->refl[i]) == 0)
            inf->refl[i].spawned = true;
        else
            inf->stats.errors++; /* that namespace stays unsynced */
    }
    pthread_mutex_unlock(&inf->mu);
    run_reflector(r0);
out:
    ctrl_error_deinit(&err);
    return NULL;
}

/* ---- resync ---- */

/* Keys, then one object at a time: the store is never unpacked whole. */
static void resync(ctrl_informer *inf)
{
    json_t *all = ctrl__store_keys(inf->store, NULL);
    const char *key;
    json_t *null;
    json_object_foreach(all, key, null)
    {
        hook_before(inf, key);
        pthread_mutex_lock(&inf->dispatch_mu);
        json_t *cur = NULL;
        /* Only what is still there, as it is now. */
        if (ctrl__store_get_shared(inf->store, key, false, &cur) == 0)
            call_update(inf, cur, cur);
        pthread_mutex_unlock(&inf->dispatch_mu);
        json_decref(cur);
        hook_after(inf, key);
    }
    json_decref(all);
}

static void *resync_main(void *arg)
{
    ctrl_informer *inf = arg;
    pthread_mutex_lock(&inf->mu);
    while (!inf->stopping) {
        int64_t period = inf->cfg.resync_ns;
        if (period >= 10)
            period += (int64_t)(rng_next(&inf->rng) % (uint64_t)(period / 10 + 1));
        int64_t deadline = ctrl_clock_now(inf->cfg.clock) + period;
        while (!inf->stopping && ctrl_clock_now(inf->cfg.clock) < deadline)
            ctrl_clock_wait_until(inf->cfg.clock, &inf->cv, &inf->mu, deadline);
        if (inf->stopping || !inf->synced)
            continue;
        pthread_mutex_unlock(&inf->mu);
        resync(inf);
        pthread_mutex_lock(&inf->mu);
    }
    pthread_mutex_unlock(&inf->mu);
    return NULL;
}

/* ---- lifecycle (cache.c) ---- */

int ctrl__informer_new(const ctrl__informer_config *cfg, const char *api_version, const char *kind,
                       const ctrl_informer_options *opts, ctrl_informer **out)
{
    static const ctrl_informer_options none = {0};
    if (!cfg || !cfg->client || !api_version || !kind || !out)
        return CTRL_ERR_ARG;
    if (!opts)
        opts = &none;
    ctrl_informer *inf = calloc(1, sizeof *inf);
    if (!inf)
        return CTRL_ERR_NOMEM;
    inf->cfg = *cfg;
    inf->rng = cfg->seed;
    size_t nns = 0;
    while (cfg->namespaces && cfg->namespaces[nns])
        nns++;
    inf->nrefl = nns ? nns : 1;
    inf->api_version = strdup(api_version);
    inf->kind = strdup(kind);
    size_t nlen = strlen(api_version) + strlen(kind) + 2;
    inf->name = malloc(nlen);
    if (inf->name)
        snprintf(inf->name, nlen, "%s/%s", api_version, kind);
    inf->label_selector = dup_or_null(opts->label_selector);
    inf->field_selector = dup_or_null(opts->field_selector);
    inf->transform = opts->transform;
    inf->transform_user = opts->transform_user;
    inf->refl = calloc(inf->nrefl, sizeof *inf->refl);
    bool ok = inf->api_version && inf->kind && inf->name && inf->refl &&
              (!opts->label_selector || inf->label_selector) &&
              (!opts->field_selector || inf->field_selector) && ctrl__store_new(&inf->store) == 0;
    for (size_t i = 0; ok && i < inf->nrefl; i++) {
        reflector *r = &inf->refl[i];
        r->inf = inf;
        r->ns = nns ? cfg->namespaces[i] : NULL;
        r->rng = cfg->seed + 0x632BE59BD9B4E019ULL * (i + 1);
        ok = ctrl_watch_new(&r->w) == 0;
    }
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&inf->dispatch_mu, &ma);
    pthread_mutexattr_destroy(&ma);
    pthread_mutex_init(&inf->mu, NULL);
    pthread_cond_init(&inf->cv, NULL);
    if (!ok) {
        ctrl__informer_free(inf);
        return CTRL_ERR_NOMEM;
    }
    *out = inf;
    return 0;
}

const char *ctrl__informer_name(const ctrl_informer *inf)
{
    return inf->name;
}

bool ctrl__informer_is(const ctrl_informer *inf, const char *api_version, const char *kind)
{
    return !strcmp(inf->api_version, api_version) && !strcmp(inf->kind, kind);
}

int ctrl__informer_start(ctrl_informer *inf)
{
    int rc = 0;
    pthread_mutex_lock(&inf->mu);
    if (inf->started || inf->stopping) {
        rc = CTRL_ERR_ARG;
        goto out;
    }
    /* "informer <user agent> <apiVersion>/<Kind>": a scheduler matches the
     * server's watches (client, kind) to the thread that reads them. */
    char tname[256];
    snprintf(tname, sizeof tname, "informer %s %s", ctrl_client_user_agent(inf->cfg.client),
             inf->name);
    if (ctrl__spawn(&inf->main_thread, inf->cfg.hooks, tname, informer_main, inf) != 0) {
        rc = CTRL_ERR_NOMEM;
        goto out;
    }
    inf->started = true;
    snprintf(tname, sizeof tname, "resync %s", inf->name);
    if (inf->cfg.resync_ns > 0 &&
        ctrl__spawn(&inf->resync_thread, inf->cfg.hooks, tname, resync_main, inf) == 0)
        inf->resync_started = true;
out:
    pthread_mutex_unlock(&inf->mu);
    return rc;
}

void ctrl__informer_signal_stop(ctrl_informer *inf)
{
    pthread_mutex_lock(&inf->mu);
    inf->stopping = true;
    ctrl_clock_notify(inf->cfg.clock, &inf->cv);
    pthread_mutex_unlock(&inf->mu);
    for (size_t i = 0; i < inf->nrefl; i++)
        ctrl_watch_stop(inf->refl[i].w);
}

void ctrl__informer_join(ctrl_informer *inf)
{
    pthread_mutex_lock(&inf->mu);
    bool started = inf->started, resync_started = inf->resync_started;
    pthread_mutex_unlock(&inf->mu);
    if (!started)
        return;
    ctrl__join(inf->cfg.hooks, inf->main_thread);
    /* The main thread spawned the others: their flags are final now. */
    for (size_t i = 1; i < inf->nrefl; i++) {
        if (inf->refl[i].spawned)
            ctrl__join(inf->cfg.hooks, inf->refl[i].thread);
        inf->refl[i].spawned = false;
    }
    if (resync_started)
        ctrl__join(inf->cfg.hooks, inf->resync_thread);
    pthread_mutex_lock(&inf->mu);
    inf->started = false;
    inf->resync_started = false;
    pthread_mutex_unlock(&inf->mu);
}

void ctrl__informer_free(ctrl_informer *inf)
{
    if (!inf)
        return;
    for (size_t i = 0; inf->refl && i < inf->nrefl; i++)
        ctrl_watch_free(inf->refl[i].w);
    free(inf->refl);
    ctrl__store_free(inf->store);
    free(inf->handlers);
    free(inf->api_version);
    free(inf->kind);
    free(inf->name);
    free(inf->label_selector);
    free(inf->field_selector);
    pthread_mutex_destroy(&inf->dispatch_mu);
    pthread_mutex_destroy(&inf->mu);
    pthread_cond_destroy(&inf->cv);
    free(inf);
}

/* ---- public ---- */

int ctrl_informer_add_handler(ctrl_informer *inf, const ctrl_event_handler *h)
{
    if (!inf || !h)
        return CTRL_ERR_ARG;
    pthread_mutex_lock(&inf->dispatch_mu);
    if (inf->nh == inf->caph) {
        size_t cap = inf->caph ? 2 * inf->caph : 4;
        ctrl_event_handler *n = realloc(inf->handlers, cap * sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&inf->dispatch_mu);
            return CTRL_ERR_NOMEM;
        }
        inf->handlers = n;
        inf->caph = cap;
    }
    inf->handlers[inf->nh++] = *h;
    /* A late handler first hears of what is already cached (dispatch_mu
     * keeps the store as it is; one object unpacked at a time). */
    json_t *all = NULL;
    if (h->on_add && ctrl__store_len(inf->store) > 0 &&
        (all = ctrl__store_keys(inf->store, NULL))) {
        const char *key;
        json_t *null;
        json_object_foreach(all, key, null)
        {
            json_t *obj = NULL;
            if (ctrl__store_get_shared(inf->store, key, false, &obj) == 0)
                h->on_add(obj, true, h->user);
            json_decref(obj);
        }
        json_decref(all);
    }
    pthread_mutex_unlock(&inf->dispatch_mu);
    return 0;
}

bool ctrl_informer_has_synced(ctrl_informer *inf)
{
    if (!inf)
        return false;
    pthread_mutex_lock(&inf->mu);
    bool s = inf->synced;
    pthread_mutex_unlock(&inf->mu);
    return s;
}

int ctrl_informer_wait_for_sync(ctrl_informer *inf, int64_t timeout_ns)
{
    if (!inf)
        return CTRL_ERR_ARG;
    pthread_mutex_lock(&inf->mu);
    int64_t now = ctrl_clock_now(inf->cfg.clock);
    int64_t deadline =
        timeout_ns < 0 || timeout_ns > INT64_MAX - now ? INT64_MAX : now + timeout_ns;
    while (!inf->synced && !inf->stopping && ctrl_clock_now(inf->cfg.clock) < deadline)
        ctrl_clock_wait_until(inf->cfg.clock, &inf->cv, &inf->mu, deadline);
    int rc = inf->synced ? 0 : inf->stopping ? CTRL_ERR_CANCELLED : CTRL_ERR_TIMEOUT;
    pthread_mutex_unlock(&inf->mu);
    return rc;
}

static unsigned long long rv_num(const char *rv, bool *ok)
{
    char *end = NULL;
    unsigned long long n = strtoull(rv, &end, 10);
    *ok = *rv && end && !*end;
    return n;
}

void ctrl_informer_last_rv(ctrl_informer *inf, char *buf, size_t len)
{
    if (!buf || !len)
        return;
    buf[0] = '\0';
    if (!inf)
        return;
    pthread_mutex_lock(&inf->mu);
    const char *best = "";
    unsigned long long best_n = 0;
    size_t n = inf->nactive ? inf->nactive : 1;
    for (size_t i = 0; i < n; i++) {
        const char *rv = inf->refl[i].rv;
        bool ok;
        unsigned long long v = rv_num(rv, &ok);
        if (!*rv)
            continue;
        if (!*best || (ok && v > best_n)) {
            best = rv;
            best_n = ok ? v : 0;
        }
    }
    snprintf(buf, len, "%s", best);
    pthread_mutex_unlock(&inf->mu);
}

/* The store key of ns/name (name alone when cluster-scoped): 0, or
 * CTRL_ERR_ARG / CTRL_ERR_NOT_FOUND (too long to be stored). */
static int key_of(const ctrl_informer *inf, const char *ns, const char *name, json_t **out,
                  char *key, size_t len)
{
    if (!inf || !name || !out)
        return CTRL_ERR_ARG;
    int n = ns && *ns ? snprintf(key, len, "%s/%s", ns, name) : snprintf(key, len, "%s", name);
    return n < 0 || (size_t)n >= len ? CTRL_ERR_NOT_FOUND : 0;
}

int ctrl_informer_get(ctrl_informer *inf, const char *ns, const char *name, json_t **out)
{
    char key[CTRL__KEY_MAX];
    int rc = key_of(inf, ns, name, out, key, sizeof key);
    return rc < 0 ? rc : ctrl__store_get(inf->store, key, out);
}

int ctrl_informer_get_shared(ctrl_informer *inf, const char *ns, const char *name, json_t **out)
{
    char key[CTRL__KEY_MAX];
    int rc = key_of(inf, ns, name, out, key, sizeof key);
    return rc < 0 ? rc : ctrl__store_get_shared(inf->store, key, true, out);
}

int ctrl_informer_list(ctrl_informer *inf, const char *ns, const char *label_selector, json_t **out)
{
    if (!inf || !out)
        return CTRL_ERR_ARG;
    ctrl__selector *sel = NULL;
    if (label_selector && *label_selector) {
        int rc = ctrl__selector_parse(label_selector, &sel);
        if (rc < 0)
            return rc;
    }
    int rc = ctrl__store_list(inf->store, ns && *ns ? ns : NULL, sel, out);
    ctrl__selector_free(sel);
    return rc;
}

int ctrl_informer_add_index(ctrl_informer *inf, const char *name, ctrl_index_fn fn, void *user)
{
    if (!inf)
        return CTRL_ERR_ARG;
    return ctrl__store_add_index(inf->store, name, fn, user);
}

int ctrl_informer_by_index(ctrl_informer *inf, const char *name, const char *value, json_t **out)
{
    if (!inf || !out)
        return CTRL_ERR_ARG;
    return ctrl__store_by_index(inf->store, name, value, out);
}

int ctrl_informer_by_index_shared(ctrl_informer *inf, const char *name, const char *value,
                                  json_t **out)
{
    if (!inf || !out)
        return CTRL_ERR_ARG;
    return ctrl__store_by_index_shared(inf->store, name, value, out);
}

void ctrl_informer_stats_get(ctrl_informer *inf, ctrl_informer_stats *out)
{
    if (!inf || !out)
        return;
    pthread_mutex_lock(&inf->mu);
    *out = inf->stats;
    pthread_mutex_unlock(&inf->mu);
    out->objects = ctrl__store_len(inf->store);
}

bool ctrl__informer_idle(ctrl_informer *inf)
{
    return atomic_load(&inf->in_dispatch) == 0;
}

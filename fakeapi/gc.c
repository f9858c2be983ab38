/*
 * gc.c - garbage collection and namespace deletion (see gc.h).
 *
 * DESIGN: one thread sleeps on gc_cond until fakeapi__gc_wake() bumps
 * gc_pending, then sweeps until a pass changes nothing. A pass:
 *  1. objects being deleted (deletionTimestamp set):
 *     - a namespace: delete everything in it; once empty, drop the
 *       "kubernetes" finalizer and remove it;
 *     - finalizer "orphan": strip this owner from its dependents'
 *       ownerReferences, then drop the finalizer;
 *     - finalizer "foregroundDeletion": delete the dependents; once none
 *       remains, drop the finalizer;
 *     an object whose last finalizer goes is removed.
 *  2. dependents whose owners are gone: if no owner remains, delete them
 *     (background); otherwise drop the dangling references.
 * Each action is one transaction. Lock order: gc_mu is a leaf, never held
 * while taking the store lock.
 */
#include "gc.h"

#include <stdlib.h>
#include <string.h>

#include "objmeta.h"
#include "txn.h"
#include "verbs.h"

#define GC_MAX_PASSES 64

static int collect_key(void *ud, const char *key, const char *ns, const char *name)
{
    return json_array_append_new(ud, json_pack("[s,s,s]", key, ns, name));
}

/* Load one object by [key, ns, name] inside t; NULL if gone. */
static json_t *load(fakeapi__txn *t, const json_t *ref)
{
    json_t *obj = NULL;
    if (fakeapi__store_get(t->srv->store, json_string_value(json_array_get(ref, 0)),
                           json_string_value(json_array_get(ref, 1)),
                           json_string_value(json_array_get(ref, 2)), &obj) != 0)
        return NULL;
    return obj;
}

/* Write obj back after a finalizer was dropped: remove it if none remain. */
static int store_after_finalizer(fakeapi__txn *t, const fakeapi__resource *res, json_t *obj,
                                 json_t *prev)
{
    if (fakeapi__finalizer_count(obj) == 0 && !fakeapi__grace_pending(obj))
        return fakeapi__txn_remove(t, res, obj);
    return fakeapi__txn_put(t, res, obj, prev);
}

/* Delete everything in namespace ns; 1 if something remains. */
static int drain_namespace(fakeapi__txn *t, const char *ns)
{
    size_t n;
    fakeapi__resource **all = fakeapi__registry_all(t->srv->reg, &n);
    int remaining = 0;
    for (size_t i = 0; i < n; i++) {
        fakeapi__resource *res = all[i];
        if (!res->namespaced || !res->storage_version)
            continue;
        json_t *objs = json_array();
        fakeapi__store_load_all(t->srv->store, res->store_key, ns, objs);
        size_t j;
        json_t *obj;
        json_array_foreach(objs, j, obj)
        {
            remaining = 1;
            fakeapi__delete_in_txn(t, res, obj, "Background");
        }
        json_decref(objs);
    }
    fakeapi__registry_release(all, n);
    return remaining;
}

static int finish_namespace(fakeapi__txn *t, const fakeapi__resource *res, json_t *nsobj)
{
    if (drain_namespace(t, fakeapi__meta_str(nsobj, "name")))
        return 1;
    json_t *prev = json_deep_copy(nsobj);
    json_t *spec = json_object_get(nsobj, "spec");
    json_object_del(spec, "finalizers");
    int rc = store_after_finalizer(t, res, nsobj, prev);
    json_decref(prev);
    return rc < 0 ? -1 : 1;
}

/* Strip ownerReferences naming uid from obj; true if any went. */
static bool drop_owner_ref(json_t *obj, const char *uid)
{
    json_t *refs = json_object_get(fakeapi__meta(obj), "ownerReferences");
    bool changed = false;
    for (size_t i = json_array_size(refs); i-- > 0;) {
        const char *u = json_string_value(json_object_get(json_array_get(refs, i), "uid"));
        if (uid == NULL || (u && !strcmp(u, uid))) {
            json_array_remove(refs, i);
            changed = true;
        }
    }
    if (refs && json_array_size(refs) == 0)
        json_object_del(fakeapi__meta(obj), "ownerReferences");
    return changed;
}

/* Orphan or delete the dependents of owner; returns how many remain. */
static int handle_dependents(fakeapi__txn *t, const char *uid, bool orphan)
{
    json_t *deps = json_array();
    fakeapi__store_dependents(t->srv->store, uid, collect_key, deps);
    int remaining = 0;
    size_t i;
    json_t *ref;
    json_array_foreach(deps, i, ref)
    {
        json_t *dep = load(t, ref);
        fakeapi__resource *res =
            fakeapi__registry_find_key(t->srv->reg, json_string_value(json_array_get(ref, 0)));
        if (dep && res) {
            if (orphan) {
                json_t *prev = json_deep_copy(dep);
                if (drop_owner_ref(dep, uid))
                    fakeapi__txn_put(t, res, dep, prev);
                json_decref(prev);
            } else {
                remaining++;
                fakeapi__delete_in_txn(t, res, dep, "Background");
            }
        }
        fakeapi__resource_unref(res);
        json_decref(dep);
    }
    json_decref(deps);
    return remaining;
}

/* Step 1 for one object being deleted; > 0 if it changed something. */
static int sweep_deleting(fakeapi__txn *t, const fakeapi__resource *res, json_t *obj)
{
    if (!strcmp(res->store_key, "/namespaces"))
        return finish_namespace(t, res, obj);
    const char *uid = fakeapi__meta_str(obj, "uid");
    bool orphan = fakeapi__has_finalizer(obj, "orphan");
    bool fg = fakeapi__has_finalizer(obj, "foregroundDeletion");
    if (!orphan && !fg)
        return 0;
    int remaining = handle_dependents(t, uid, orphan);
    if (remaining)
        return 1;
    json_t *prev = json_deep_copy(obj);
    fakeapi__remove_finalizer(obj, orphan ? "orphan" : "foregroundDeletion");
    int rc = store_after_finalizer(t, res, obj, prev);
    json_decref(prev);
    return rc < 0 ? -1 : 1;
}

/* Step 2 for one dependent with a missing owner. */
static int sweep_orphan(fakeapi__txn *t, const fakeapi__resource *res, json_t *obj)
{
    json_t *refs = json_object_get(json_object_get(obj, "metadata"), "ownerReferences");
    json_t *prev = json_deep_copy(obj);
    bool any_alive = false;
    for (size_t i = json_array_size(refs); i-- > 0;) {
        const char *u = json_string_value(json_object_get(json_array_get(refs, i), "uid"));
        if (u && fakeapi__store_uid_exists(t->srv->store, u) == 1)
            any_alive = true;
        else
            json_array_remove(refs, i);
    }
    int rc;
    if (any_alive)
        rc = fakeapi__txn_put(t, res, obj, prev);
    else {
        json_decref(obj);
        obj = json_deep_copy(prev);
        rc = fakeapi__delete_in_txn(t, res, obj, "Background");
    }
    json_decref(prev);
    json_decref(obj);
    return rc < 0 ? -1 : 1;
}

/* Whether sweep_deleting may have work on the object at ref: a namespace,
 * or one whose stored text names an orphan or foreground finalizer (the
 * stored text never escapes ASCII, so one that has it names it). Most
 * objects being deleted are pods in their grace period, which the sweep
 * parsed at every pass to find neither. */
static bool may_sweep(fakeapi__txn *t, const json_t *ref)
{
    const char *key = json_string_value(json_array_get(ref, 0));
    if (!key || !strcmp(key, "/namespaces"))
        return true;
    char *text = NULL;
    size_t len = 0;
    if (fakeapi__store_get_text(t->srv->store, key, json_string_value(json_array_get(ref, 1)),
                                json_string_value(json_array_get(ref, 2)), &text, &len) != 0)
        return true; /* load decides */
    bool may =
        memmem(text, len, "\"orphan\"", 8) || memmem(text, len, "\"foregroundDeletion\"", 20);
    free(text);
    return may;
}

typedef int (*sweep_fn)(fakeapi__txn *t, const fakeapi__resource *res, json_t *obj);

/* Run fn on each object listed, one transaction each. Returns changes made. */
static int sweep_list(fakeapi_server *srv, const json_t *refs, sweep_fn fn, bool owns_obj)
{
    int changed = 0;
    size_t i;
    json_t *ref;
    json_array_foreach(refs, i, ref)
    {
        fakeapi__txn t;
        if (atomic_load(&srv->stopping) || fakeapi__txn_begin(&t, srv) < 0)
            break;
        fakeapi__resource *res =
            fakeapi__registry_find_key(srv->reg, json_string_value(json_array_get(ref, 0)));
        json_t *obj = res && (fn != sweep_deleting || may_sweep(&t, ref)) ? load(&t, ref) : NULL;
        int rc = obj ? fn(&t, res, obj) : 0;
        if (!owns_obj)
            json_decref(obj);
        /* Only a pass that wrote something counts: objects waiting on other
         * finalizers must not keep the sweep spinning. */
        if (rc >= 0 && t.n > 0 && fakeapi__txn_commit(&t) == 0)
            changed++;
        else if (rc < 0 || t.n == 0)
            fakeapi__txn_abort(&t);
        fakeapi__resource_unref(res);
    }
    return changed;
}

static json_t *list_refs(fakeapi_server *srv,
                         int (*lister)(fakeapi__store *, fakeapi__store_dep_fn, void *))
{
    json_t *refs = json_array();
    fakeapi__store_lock(srv->store);
    lister(srv->store, collect_key, refs);
    fakeapi__store_unlock(srv->store);
    return refs;
}

int fakeapi__gc_sweep(fakeapi_server *srv)
{
    int total = 0;
    for (int pass = 0; pass < GC_MAX_PASSES; pass++) {
        json_t *deleting = list_refs(srv, fakeapi__store_deleting);
        int changed = sweep_list(srv, deleting, sweep_deleting, false);
        json_decref(deleting);
        json_t *orphans = list_refs(srv, fakeapi__store_orphans);
        changed += sweep_list(srv, orphans, sweep_orphan, true);
        json_decref(orphans);
        total += changed;
        if (!changed)
            break;
    }
    return total;
}

static void *gc_main(void *arg)
{
    fakeapi_server *srv = arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&srv->gc_mu);
    for (;;) {
        while (!srv->gc_stop && srv->gc_pending == seen)
            pthread_cond_wait(&srv->gc_cond, &srv->gc_mu);
        if (srv->gc_stop)
            break;
        seen = srv->gc_pending;
        pthread_mutex_unlock(&srv->gc_mu);
        fakeapi__gc_sweep(srv);
        pthread_mutex_lock(&srv->gc_mu);
    }
    pthread_mutex_unlock(&srv->gc_mu);
    return NULL;
}

int fakeapi__gc_start(fakeapi_server *srv)
{
    if (srv->opts.sync_gc)
        return 0;
    pthread_mutex_init(&srv->gc_mu, NULL);
    pthread_cond_init(&srv->gc_cond, NULL);
    if (pthread_create(&srv->gc_thread, NULL, gc_main, srv) != 0)
        return -1;
    srv->gc_started = true;
    return 0;
}

void fakeapi__gc_stop(fakeapi_server *srv)
{
    if (!srv->gc_started)
        return;
    pthread_mutex_lock(&srv->gc_mu);
    srv->gc_stop = true;
    pthread_cond_signal(&srv->gc_cond);
    pthread_mutex_unlock(&srv->gc_mu);
    pthread_join(srv->gc_thread, NULL);
    srv->gc_started = false;
    pthread_mutex_destroy(&srv->gc_mu);
    pthread_cond_destroy(&srv->gc_cond);
}

void fakeapi__gc_wake(fakeapi_server *srv)
{
    static __thread bool sweeping;
    if (srv->opts.sync_gc) {
        /* Deterministic runs: collect now, on the writer's thread, before it
         * answers (a sweep's own writes do not start another). */
        if (!sweeping) {
            sweeping = true;
            fakeapi__gc_sweep(srv);
            sweeping = false;
        }
        return;
    }
    if (!srv->gc_started)
        return;
    pthread_mutex_lock(&srv->gc_mu);
    srv->gc_pending++;
    pthread_cond_signal(&srv->gc_cond);
    pthread_mutex_unlock(&srv->gc_mu);
}

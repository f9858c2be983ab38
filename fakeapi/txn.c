#include "txn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc.h"
#include "objmeta.h"
#include "watch.h"

int fakeapi__txn_begin(fakeapi__txn *t, fakeapi_server *srv)
{
    memset(t, 0, sizeof *t);
    t->srv = srv;
    fakeapi__store_lock(srv->store);
    fakeapi__store_stamp(srv->store, fakeapi__srv_now(srv));
    if (fakeapi__store_begin(srv->store) < 0) {
        fakeapi__store_unlock(srv->store);
        return -1;
    }
    return 0;
}

static int stage(fakeapi__txn *t, fakeapi__event *ev)
{
    if (!ev)
        return -1;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 4;
        fakeapi__event **evs = realloc(t->events, cap * sizeof *evs);
        if (!evs) {
            fakeapi__event_unref(ev);
            return -1;
        }
        t->events = evs;
        t->cap = cap;
    }
    t->events[t->n++] = ev;
    return 0;
}

/* Write obj's new revision, serialise it, and record the event. */
static int write_event(fakeapi__txn *t, const fakeapi__resource *res, json_t *obj, json_t *prev,
                       int type)
{
    fakeapi__store *s = t->srv->store;
    uint64_t rv = fakeapi__store_next_rev(s);
    char rvs[24];
    snprintf(rvs, sizeof rvs, "%llu", (unsigned long long)rv);
    if (fakeapi__meta_set_str(obj, "resourceVersion", rvs) < 0)
        return -1;
    const char *ns = fakeapi__meta_str(obj, "namespace");
    const char *name = fakeapi__meta_str(obj, "name");
    if (!res->namespaced)
        ns = "";
    char *text = json_dumps(obj, JSON_COMPACT);
    char *prev_text = prev ? json_dumps(prev, JSON_COMPACT) : NULL;
    int rc = -1;
    if (!text || !name || (prev && !prev_text))
        goto out;
    /* History keeps the state before a delete too, so past revisions can be
     * rebuilt (lists at an exact resourceVersion). */
    if (type == FAKEAPI__EV_DELETED &&
        fakeapi__store_get_text(s, res->store_key, ns, name, &prev_text, NULL) < 0)
        goto out;
    if (type == FAKEAPI__EV_DELETED) {
        if (fakeapi__store_del(s, res->store_key, ns, name) < 0)
            goto out;
    } else {
        char *labels = fakeapi__labels_text(obj);
        json_t *owners = fakeapi__owner_uids(obj);
        rc = fakeapi__store_put(s, res->store_key, ns, name, fakeapi__meta_str(obj, "uid"), rv,
                                labels, text);
        if (rc == 0)
            rc = fakeapi__store_set_owners(s, res->store_key, ns, name, owners);
        free(labels);
        json_decref(owners);
        if (rc < 0)
            goto out;
        rc = -1;
    }
    if (fakeapi__store_add_event(s, rv, type, res->store_key, ns, name, text, prev_text) < 0)
        goto out;
    rc = stage(
        t, fakeapi__event_new(rv, type, res->store_key, ns, name, text, strlen(text), obj, prev));
out:
    free(text);
    free(prev_text);
    if (rc < 0)
        t->failed = true;
    return rc;
}

int fakeapi__txn_put(fakeapi__txn *t, const fakeapi__resource *res, json_t *obj, json_t *prev)
{
    if (json_object_get(json_object_get(obj, "metadata"), "ownerReferences"))
        t->gc_wake = true; /* its owner may already be gone */
    return write_event(t, res, obj, prev, prev ? FAKEAPI__EV_MODIFIED : FAKEAPI__EV_ADDED);
}

int fakeapi__txn_remove(fakeapi__txn *t, const fakeapi__resource *res, json_t *obj)
{
    t->gc_wake = true;
    return write_event(t, res, obj, NULL, FAKEAPI__EV_DELETED);
}

char *fakeapi__txn_last_text(const fakeapi__txn *t, size_t *len)
{
    if (!t->n)
        return NULL;
    const fakeapi__event *ev = t->events[t->n - 1];
    char *copy = malloc(ev->len + 1);
    if (copy) {
        memcpy(copy, ev->text, ev->len + 1);
        *len = ev->len;
    }
    return copy;
}

void fakeapi__txn_wake_gc(fakeapi__txn *t)
{
    t->gc_wake = true;
}

static void drop_events(fakeapi__txn *t)
{
    for (size_t i = 0; i < t->n; i++)
        fakeapi__event_unref(t->events[i]);
    free(t->events);
    t->events = NULL;
    t->n = t->cap = 0;
}

/* Keep the history within its configured bounds, inside the transaction. */
static int auto_compact(fakeapi_server *srv)
{
    fakeapi__store *s = srv->store;
    size_t max = srv->opts.history_max_events ? srv->opts.history_max_events : 100000;
    uint64_t rev = fakeapi__store_rev(s), upto = 0;
    if ((size_t)fakeapi__store_history_len(s) > max && rev > max)
        upto = rev - max;
    if (srv->opts.history_max_age_ms > 0) {
        int64_t now = fakeapi__srv_now(srv);
        if (now - srv->last_age_check_ns >= 1000000000) {
            srv->last_age_check_ns = now;
            uint64_t old =
                fakeapi__store_rev_before(s, now - srv->opts.history_max_age_ms * 1000000);
            if (old > upto)
                upto = old;
        }
    }
    return upto ? fakeapi__store_compact(s, upto) : 0;
}

int fakeapi__txn_commit(fakeapi__txn *t)
{
    fakeapi_server *srv = t->srv;
    if (t->n && !t->failed && auto_compact(srv) < 0)
        t->failed = true;
    if (t->failed || fakeapi__store_commit(srv->store) < 0) {
        fakeapi__txn_abort(t);
        return -1;
    }
    for (size_t i = 0; i < t->n; i++)
        fakeapi__hub_publish(srv->hub, t->events[i]);
    fakeapi__store_unlock(srv->store);
    drop_events(t);
    if (t->gc_wake)
        fakeapi__gc_wake(srv);
    return 0;
}

void fakeapi__txn_abort(fakeapi__txn *t)
{
    fakeapi__store_rollback(t->srv->store);
    fakeapi__store_unlock(t->srv->store);
    drop_events(t);
}

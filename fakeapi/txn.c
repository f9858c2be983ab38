#include "txn.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "jsonscan.h"
#include "kh/jsonfast.h"
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
    size_t len = 0, prev_len;
    /* A kind served in another version than it is stored in is stored converted. */
    json_t *conv = NULL, *conv_prev = NULL;
    if (fakeapi__convert_needed(res)) {
        conv = json_deep_copy(obj);
        conv_prev = prev ? json_deep_copy(prev) : NULL;
        if (!conv || (prev && !conv_prev) || fakeapi__convert_in(res, conv) < 0 ||
            (conv_prev && fakeapi__convert_in(res, conv_prev) < 0)) {
            json_decref(conv);
            json_decref(conv_prev);
            t->failed = true;
            return -1;
        }
        obj = conv;
        prev = conv_prev;
    }
    int rc = -1;
    char *text = kh_json_dump_compact(obj, &len);
    /* prev is the stored state (txn.h), whose text is what serialising it
     * gives: an update that read the kept tree has it already, any other
     * reads it from the table, both cheaper than serialising prev again. */
    char *prev_text = prev && !conv_prev
                          ? fakeapi__store_kept_text(s, res->store_key, ns, name, prev, &prev_len)
                          : NULL;
    if (prev && !prev_text && name) {
        int got = fakeapi__store_get_text(s, res->store_key, ns, name, &prev_text, &prev_len);
        if (got < 0)
            goto out;
        if (got == 1)
            prev_text = kh_json_dump_compact(prev, &prev_len);
    }
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
        /* A created object has no owner rows to replace (a delete drops them). */
        if (rc == 0 && (type != FAKEAPI__EV_ADDED || json_array_size(owners)))
            rc = fakeapi__store_set_owners(s, res->store_key, ns, name, owners);
        free(labels);
        json_decref(owners);
        if (rc < 0)
            goto out;
        rc = -1;
    }
    if (fakeapi__store_add_event(s, rv, type, res->store_key, ns, name, text, prev_text) < 0)
        goto out;
    rc = stage(t, fakeapi__event_new(rv, type, res->store_key, ns, name, text, len, obj, prev));
out:
    free(text);
    free(prev_text);
    json_decref(conv);
    json_decref(conv_prev);
    if (rc < 0)
        t->failed = true;
    return rc;
}

/* Every owner obj names exists and is not being deleted: a sweep would
 * find nothing to do for it. Asked in the writer's transaction, so owners
 * written earlier in it count. */
static bool owners_live(fakeapi__txn *t, const json_t *meta)
{
    const json_t *refs = json_object_get(meta, "ownerReferences");
    size_t i;
    json_t *ref;
    json_array_foreach(refs, i, ref)
    {
        const char *uid = json_string_value(json_object_get(ref, "uid"));
        if (!uid || fakeapi__store_uid_live(t->srv->store, uid) != 1)
            return false;
    }
    return true;
}

int fakeapi__txn_put(fakeapi__txn *t, const fakeapi__resource *res, json_t *obj, json_t *prev)
{
    /* A dependent whose owner may already be gone, or is going (orphan or
     * foreground finalizers), or which is being deleted itself, wakes the
     * collector. One whose owners all live does not: a sweep per write
     * made every write cost a scan of every owner reference (O(n) a write
     * with n objects), which the collector never needed. */
    const json_t *meta = json_object_get(obj, "metadata");
    if (json_object_get(meta, "ownerReferences") &&
        (json_object_get(meta, "deletionTimestamp") || !owners_live(t, meta)))
        t->gc_wake = true;
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

char *fakeapi__txn_text_of(const fakeapi__txn *t, const json_t *obj, size_t *len)
{
    if (!t->n || t->events[t->n - 1]->obj != obj)
        return NULL;
    return fakeapi__txn_last_text(t, len);
}

void fakeapi__txn_keep(fakeapi__txn *t, json_t *obj)
{
    t->keep = obj;
}

/* Whether text parses back as it was written: jansson's parser refuses
 * \u0000 and invalid UTF-8, which a string from YAML or protobuf may hold;
 * a read of such an object stays a parse (and its error). */
static bool parses_back(const char *text, size_t len)
{
    /* A text has few escapes (memchr finds the backslashes fast) and
     * mostly no byte outside ASCII, which is valid UTF-8: a word at a time
     * tells that apart cheaply. */
    const char *end = text + len;
    for (const char *p = text; (p = memchr(p, '\\', (size_t)(end - p))); p++)
        if (end - p >= 6 && !memcmp(p, "\\u0000", 6))
            return false;
    uint64_t high = 0;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, text + i, 8);
        high |= w;
    }
    for (; i < len; i++)
        high |= (unsigned char)text[i];
    return !(high & 0x8080808080808080ULL) || kh_json_utf8_ok(text, len);
}

/* After the commit: the store keeps t->keep parsed if the last event of
 * its object wrote it (not a delete, nor a converted copy). */
static void keep_written(fakeapi__txn *t)
{
    for (size_t i = t->n; t->keep && i-- > 0;) {
        const fakeapi__event *ev = t->events[i];
        if (ev->obj != t->keep)
            continue;
        for (size_t j = i + 1; j < t->n; j++)
            if (!strcmp(t->events[j]->key, ev->key) && !strcmp(t->events[j]->ns, ev->ns) &&
                !strcmp(t->events[j]->name, ev->name))
                return;
        if (ev->type != FAKEAPI__EV_DELETED && parses_back(ev->text, ev->len))
            fakeapi__store_keep(t->srv->store, ev->key, ev->ns, ev->name, ev->obj, ev->text,
                                ev->len);
        return;
    }
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

/* A webhook configuration's key (admission.h; compared here, since the
 * store layer does not call up into admission). */
static bool is_webhook_key(const char *key)
{
    return key && (!strcmp(key, "admissionregistration.k8s.io/mutatingwebhookconfigurations") ||
                   !strcmp(key, "admissionregistration.k8s.io/validatingwebhookconfigurations"));
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
    keep_written(t);
    bool webhooks = false;
    for (size_t i = 0; i < t->n; i++) {
        fakeapi__hub_publish(srv->hub, t->events[i]);
        webhooks |= is_webhook_key(t->events[i]->key);
    }
    if (webhooks)
        atomic_fetch_add(&srv->webhooks_gen, 1); /* admission.c reloads them */
    fakeapi__store_unlock(srv->store);
    drop_events(t);
    if (t->gc_wake && srv->gc_wake)
        srv->gc_wake(srv);
    return 0;
}

void fakeapi__txn_abort(fakeapi__txn *t)
{
    fakeapi__store_rollback(t->srv->store);
    fakeapi__store_unlock(t->srv->store);
    drop_events(t);
}

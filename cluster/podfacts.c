/*
 * podfacts.c - per owner facts about its pods, kept from events
 * (podfacts.h).
 *
 * DESIGN
 * - Threads: none of its own; callers are the Pod informer's thread (put,
 *   remove) and reconcile workers (count). One mutex (mu) guards
 *   everything; a leaf, never held across a call out of this file (the
 *   pure helpers of podutil.c aside).
 * - Layout: owners in an array, found by uid through a JSON object
 *   (uid -> index); each owner's pods in an array of small records, found
 *   by "namespace/name" through the owner's own JSON object (key -> index);
 *   a removal moves the last record (or owner) into the hole. A JSON object
 *   where ("namespace/name" -> owner uid) finds a pod's owner on removal
 *   and when its controller changes, whatever the event's object says.
 * - Counts: each record holds whether it matches the owner's last selector
 *   and template labels; the owner's totals are the sum of its records'
 *   contributions, kept as records come, change and go. The totals are
 *   valid once a count has set the selector (have_sig); before that, or
 *   when a count brings another selector, every record is matched again.
 */
#include "podfacts.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/controllerutil.h"
#include "ctrl/object.h"
#include "kc/cluster.h"
#include "podutil.h"

typedef struct rec {
    char *key;           /* "namespace/name" */
    json_t *labels;      /* a copy, or NULL */
    int64_t ready_since; /* kc__pod_ready_since */
    bool active, ready;
    bool sel, tmpl; /* against the owner's sel and tl (valid when have_sig) */
} rec;

typedef struct owner {
    char *uid;
    json_t *index; /* key -> position in recs */
    rec *recs;
    size_t n, cap;
    bool have_sig;
    json_t *sel, *tl; /* copies, as last counted against */
    int64_t matching, not_matching, labelled, ready;
} owner;

struct kc_podfacts {
    pthread_mutex_t mu;
    json_t *owner_index; /* uid -> position in owners */
    json_t *where;       /* key -> owner uid */
    owner **owners;
    size_t n, cap;
    bool broken; /* a put failed: counts are no longer to be trusted */
};

kc_podfacts *kc__podfacts_new(void)
{
    kc_podfacts *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->owner_index = json_object();
    f->where = json_object();
    if (!f->owner_index || !f->where) {
        json_decref(f->owner_index);
        json_decref(f->where);
        free(f);
        return NULL;
    }
    pthread_mutex_init(&f->mu, NULL);
    return f;
}

static void owner_free(owner *o)
{
    if (!o)
        return;
    for (size_t i = 0; i < o->n; i++) {
        free(o->recs[i].key);
        json_decref(o->recs[i].labels);
    }
    free(o->recs);
    json_decref(o->index);
    json_decref(o->sel);
    json_decref(o->tl);
    free(o->uid);
    free(o);
}

void kc__podfacts_free(kc_podfacts *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n; i++)
        owner_free(f->owners[i]);
    free(f->owners);
    json_decref(f->owner_index);
    json_decref(f->where);
    pthread_mutex_destroy(&f->mu);
    free(f);
}

/* ---- records ---- */

static void contribute(owner *o, const rec *r, int sign)
{
    if (!o->have_sig || !r->active)
        return;
    if (!r->sel) {
        o->not_matching += sign;
        return;
    }
    o->matching += sign;
    if (r->tmpl)
        o->labelled += sign;
    if (r->ready)
        o->ready += sign;
}

static void match(const owner *o, rec *r)
{
    r->sel = kc__selector_matches(o->sel, r->labels) == 1;
    r->tmpl = kc__map_matches(o->tl, r->labels);
}

static owner *find_owner(kc_podfacts *f, const char *uid)
{
    json_t *pos = json_object_get(f->owner_index, uid);
    return pos ? f->owners[json_integer_value(pos)] : NULL;
}

static owner *add_owner(kc_podfacts *f, const char *uid)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 16;
        owner **n = realloc(f->owners, cap * sizeof *n);
        if (!n)
            return NULL;
        f->owners = n;
        f->cap = cap;
    }
    owner *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    o->uid = strdup(uid);
    o->index = json_object();
    if (!o->uid || !o->index ||
        json_object_set_new(f->owner_index, uid, json_integer((json_int_t)f->n)) < 0) {
        owner_free(o);
        return NULL;
    }
    f->owners[f->n++] = o;
    return o;
}

static void drop_owner(kc_podfacts *f, owner *o)
{
    size_t pos = (size_t)json_integer_value(json_object_get(f->owner_index, o->uid));
    json_object_del(f->owner_index, o->uid);
    if (pos + 1 < f->n) {
        f->owners[pos] = f->owners[f->n - 1];
        json_integer_set(json_object_get(f->owner_index, f->owners[pos]->uid), (json_int_t)pos);
    }
    f->n--;
    owner_free(o);
}

/* Forget the pod under key, wherever it is. */
static void remove_locked(kc_podfacts *f, const char *key)
{
    const char *uid = json_string_value(json_object_get(f->where, key));
    owner *o = uid ? find_owner(f, uid) : NULL;
    json_t *pos = o ? json_object_get(o->index, key) : NULL;
    if (pos) {
        size_t i = (size_t)json_integer_value(pos);
        contribute(o, &o->recs[i], -1);
        free(o->recs[i].key);
        json_decref(o->recs[i].labels);
        json_object_del(o->index, key);
        if (i + 1 < o->n) {
            o->recs[i] = o->recs[o->n - 1];
            json_integer_set(json_object_get(o->index, o->recs[i].key), (json_int_t)i);
        }
        o->n--;
        if (!o->n)
            drop_owner(f, o);
    }
    json_object_del(f->where, key);
}

static void pod_key(const json_t *pod, char *buf, size_t len)
{
    const char *ns = ctrl_obj_namespace(pod), *name = ctrl_obj_name(pod);
    snprintf(buf, len, "%s/%s", ns ? ns : "", name ? name : "");
}

static bool same(const json_t *a, const json_t *b)
{
    return a == b || (a && b && json_equal(a, b));
}

/* The record for key under o, new (zeroed but for key; *fresh set) if
 * none. */
static rec *record(kc_podfacts *f, owner *o, const char *key, bool *fresh)
{
    json_t *pos = json_object_get(o->index, key);
    *fresh = !pos;
    if (pos)
        return &o->recs[json_integer_value(pos)];
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 8;
        rec *n = realloc(o->recs, cap * sizeof *n);
        if (!n)
            return NULL;
        o->recs = n;
        o->cap = cap;
    }
    rec *r = &o->recs[o->n];
    memset(r, 0, sizeof *r);
    r->key = strdup(key);
    if (!r->key || json_object_set_new(o->index, key, json_integer((json_int_t)o->n)) < 0 ||
        json_object_set_new(f->where, key, json_string(o->uid)) < 0) {
        json_object_del(o->index, key);
        free(r->key);
        return NULL;
    }
    o->n++;
    return r;
}

int kc__podfacts_put(kc_podfacts *f, const json_t *pod)
{
    char key[512];
    pod_key(pod, key, sizeof key);
    const char *uid = json_string_value(json_object_get(ctrl_get_controller_of(pod), "uid"));
    const json_t *labels = ctrl_obj_get(pod, "metadata.labels");
    int rc = 0;
    pthread_mutex_lock(&f->mu);
    const char *was = json_string_value(json_object_get(f->where, key));
    if (was && (!uid || strcmp(was, uid)))
        remove_locked(f, key);
    if (!uid)
        goto out;
    owner *o = find_owner(f, uid);
    if (!o && !(o = add_owner(f, uid))) {
        rc = KC_ERR_NOMEM;
        goto out;
    }
    bool fresh = false;
    rec *r = record(f, o, key, &fresh);
    if (!r) {
        rc = KC_ERR_NOMEM;
        remove_locked(f, key);
        if (!o->n)
            drop_owner(f, o);
        goto out;
    }
    contribute(o, r, -1);
    if (fresh || !same(r->labels, labels)) {
        json_t *copy = labels ? json_deep_copy(labels) : NULL;
        if (labels && !copy) {
            rc = KC_ERR_NOMEM;
            remove_locked(f, key);
            goto out;
        }
        json_decref(r->labels);
        r->labels = copy;
        if (o->have_sig)
            match(o, r);
    }
    r->active = kc__pod_active(pod);
    r->ready = kc__pod_ready(pod);
    r->ready_since = kc__pod_ready_since(pod);
    contribute(o, r, +1);
out:
    if (rc < 0)
        f->broken = true;
    pthread_mutex_unlock(&f->mu);
    return rc;
}

void kc__podfacts_remove(kc_podfacts *f, const json_t *pod)
{
    char key[512];
    pod_key(pod, key, sizeof key);
    pthread_mutex_lock(&f->mu);
    remove_locked(f, key);
    pthread_mutex_unlock(&f->mu);
}

/* ---- counts ---- */

/* Match every record against sel and tl (copied) and sum again. */
static int rematch(owner *o, const json_t *sel, const json_t *tl)
{
    json_t *s = sel ? json_deep_copy(sel) : NULL, *t = tl ? json_deep_copy(tl) : NULL;
    if ((sel && !s) || (tl && !t)) {
        json_decref(s);
        json_decref(t);
        return KC_ERR_NOMEM;
    }
    json_decref(o->sel);
    json_decref(o->tl);
    o->sel = s;
    o->tl = t;
    o->have_sig = true;
    o->matching = o->not_matching = o->labelled = o->ready = 0;
    for (size_t i = 0; i < o->n; i++) {
        match(o, &o->recs[i]);
        contribute(o, &o->recs[i], +1);
    }
    return 0;
}

int kc__podfacts_count(kc_podfacts *f, const char *owner_uid, const json_t *sel, const json_t *tl,
                       kc_podfacts_counts *out, int64_t **since)
{
    memset(out, 0, sizeof *out);
    if (since)
        *since = NULL;
    int rc = 0;
    pthread_mutex_lock(&f->mu);
    if (f->broken) {
        rc = KC_ERR_NOMEM;
        goto out;
    }
    owner *o = owner_uid ? find_owner(f, owner_uid) : NULL;
    if (!o)
        goto out;
    if ((!o->have_sig || !same(o->sel, sel) || !same(o->tl, tl)) && (rc = rematch(o, sel, tl)) < 0)
        goto out;
    if (since && o->ready) {
        int64_t *v = malloc((size_t)o->ready * sizeof *v);
        if (!v) {
            rc = KC_ERR_NOMEM;
            goto out;
        }
        size_t k = 0;
        for (size_t i = 0; i < o->n; i++) {
            const rec *r = &o->recs[i];
            if (r->active && r->sel && r->ready)
                v[k++] = r->ready_since;
        }
        *since = v;
    }
    out->matching = o->matching;
    out->not_matching = o->not_matching;
    out->labelled = o->labelled;
    out->ready = o->ready;
out:
    pthread_mutex_unlock(&f->mu);
    return rc;
}

/*
 * store.c - the informer's object store: objects by key, indexes, and a
 * label-selector matcher.
 *
 * DESIGN
 *   Records. An object is kept as one record: its packed form (packed.c: a
 *   compact binary form of the jansson tree) behind a short head of what
 *   reads need without the object:
 *
 *     namespace \0 name \0 resourceVersion \0 (label \0 value \0)* \0 packed
 *
 *   The head serves the built-in namespace index (namespace), the sort of
 *   list and by_index (namespace, name), a relist's "unchanged?" question
 *   (resourceVersion) and the label-selector matcher (the string-valued
 *   labels with a non-empty key: the only ones a selector can name). The
 *   record is a jansson string made with json_stringn_nocheck and used only
 *   as an immutable, reference-counted byte buffer (it is never handed
 *   out): jansson's atomic reference count lets a reader take a record
 *   under the read lock and unpack it after unlocking, while a writer
 *   replaces it. A 1.1 KB ConfigMap (1.0 KB packed) costs about 1.4 KB this
 *   way - the record, jansson's 32-byte string and two hash-table entries
 *   (objects, namespace index) - where its json_t tree cost 5.5 KB (a
 *   malloc per node and a hash table per JSON object).
 *
 *   Why packed and not the compact JSON text: jansson takes ~20 us to parse
 *   and ~11 us to dump such an object, against ~1-3 us to unpack and
 *   ~0.6 us to pack (a busy 2-core machine); the sizes are about the same.
 *
 *   Reads. get, list and by_index unpack records into new json_t objects
 *   outside the lock: callers get objects of their own, never shared with
 *   the store or each other. That is what reads cost now: a get ~2-4 us
 *   instead of ~0.25 us; a list of 10,000 1 KB objects ~120 ms instead of
 *   ~30 ms, most of it allocating and (for the caller) freeing 55 MB of
 *   trees - ~350 ms where each list's memory is new to the process and
 *   every page is a fault (bench_cache's cache_list). A list with a label
 *   selector unpacks only what matches. The informer's own walks over the
 *   store (relist, resync, a late handler) take keys and get one object at
 *   a time, so nothing unpacks the whole store at once.
 *
 *   Shared reads (by_index_shared) are for hot read-only callers that
 *   would otherwise unpack the same unchanged objects again and again (a
 *   ReplicaSet's reconcile reads all its pods on every pod event): the
 *   first such read of a record takes the object kept from its watch
 *   write (below) or unpacks it, into `trees` (key -> object, under the
 *   read lock and tmu, so the record is current), later reads
 *   hand out references to that object, and a writer drops the entry
 *   (write lock held) when it replaces or removes the key. Nobody may
 *   change a shared object; jansson's reference counts are atomic, so
 *   readers on several threads may take and drop references at once.
 *   Memory: a kept object costs its full tree (~4x the record) for as long
 *   as it stays unchanged, only for objects read this way.
 *
 *   Writes. put takes the informer's parsed object (json_t) and packs its
 *   record before taking the lock. Index values are not remembered per
 *   object: replacing or removing an object recomputes the old values from
 *   the old object (index functions must be pure), as client-go does. That
 *   needs the old object, which the caller wants anyway for its update or
 *   delete event: the one kept for the key (below) when there is one, else
 *   unpacked before the write lock from the record seen under a read lock,
 *   and again under the write lock only if another writer replaced that
 *   record meanwhile (the informer has one writer at a time, so in
 *   practice never).
 *
 *   Recent objects. A watch write (put with keep) also keeps the object
 *   it was given - the tree the watch event was parsed into, read-only
 *   from then on as handlers already treat it - in `recent`, key -> object,
 *   until the key is written again or removed. The next event for that key
 *   then has its old object without an unpack (an unpack of a 3.4 KB
 *   packed Pod with managedFields is ~100k instructions and a free of
 *   ~60k more: a third of what the informer spent per event), and shared
 *   reads and the informer's own reads for handlers (resync, a late
 *   handler: get_shared) take the kept object too. get, list and by_index
 *   still unpack: the objects they hand out are the caller's own, and an
 *   unpack is cheaper than a json_deep_copy (~11 us against ~13-20 us for
 *   that Pod). Memory: a tree costs ~6-13x its record (45 KB for that
 *   Pod: a hash table per JSON object), so `recent` is bounded by the
 *   length of the records of its keys, RECENT_MAX (4 MiB, so at most
 *   ~50 MB of trees per informer; ~1,200 such Pods): past it the oldest
 *   writes are dropped first (jansson keeps insertion order, and a
 *   written key is deleted and added again, so the first key is the
 *   oldest). Lists and relists (put without keep) keep nothing, so a
 *   freshly synced store costs what it did (bench_cache). The packed
 *   record stays the store's truth: everything kept can be dropped at any
 *   time and unpacked again.
 *
 *   Data: `objects` is a JSON object key -> record (jansson's hash table,
 *   so lookups are O(1) and keys are kept once, inline). Each index is a
 *   JSON object value -> (JSON object key -> record): the inner objects are
 *   sets of keys that also hold a reference to the record, so by_index
 *   needs no second lookup. Index 0 is the built-in "namespace" index,
 *   computed from the head without calling out.
 *
 *   Locking: one pthread rwlock, writer-preferring (glibc's default prefers
 *   readers, which lets eight busy readers starve the informer). Readers
 *   take it shared and only json_incref the records they want; matching
 *   labels is done under it, sorting and unpacking after the unlock. Writers
 *   take it exclusively; the informer guarantees there is one writer at a
 *   time, and ctrl__store_add_index may come from any thread (it unpacks
 *   every record with the lock held: ~1-3 ms per 1,000 objects).
 */
#include "store_int.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "packed_int.h"

/* A record's head is written on the stack first up to this size. */
#define HEAD_STACK 512

/* Objects kept from watch writes: at most this many bytes of their records
 * (DESIGN, "Recent objects"). */
#define RECENT_MAX (4u << 20)

typedef struct store_index {
    char *name;
    ctrl_index_fn fn; /* NULL: the built-in namespace index */
    void *user;
    json_t *map; /* value -> {key -> record} */
} store_index;

struct ctrl__store {
    pthread_rwlock_t lock;
    json_t *objects; /* key -> record */
    /* key -> the record's object unpacked once for shared reads; filled by
     * readers (read lock and tmu held), dropped by writers (write lock). */
    json_t *trees;
    pthread_mutex_t tmu;
    /* key -> the object a watch write stored (kept), oldest write first;
     * changed by writers only (write lock). recent_bytes: the length of
     * the records of its keys, at most RECENT_MAX. */
    json_t *recent;
    size_t recent_bytes;
    store_index *idx;
    size_t nidx, capidx;
};

static bool packed_matches(const ctrl__selector *sel, const char *labels);

static const char *meta_str(const json_t *obj, const char *field)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
}

int ctrl__store_key(const json_t *obj, char *buf, size_t len)
{
    const char *name = meta_str(obj, "name");
    const char *ns = meta_str(obj, "namespace");
    if (!name || !*name)
        return CTRL_ERR_ARG;
    int n = ns && *ns ? snprintf(buf, len, "%s/%s", ns, name) : snprintf(buf, len, "%s", name);
    return n < 0 || (size_t)n >= len ? CTRL_ERR_ARG : 0;
}

/* ---- records ---- */

/* A record's parts: pointers into its (immutable) buffer, valid while the
 * record is referenced. labels is the first of the (label, value) pairs. */
typedef struct rec_view {
    const char *ns, *name, *rv, *labels, *body;
    size_t body_len;
} rec_view;

static const char *skip_str(const char *p)
{
    return p + strlen(p) + 1;
}

static void rec_view_of(const json_t *rec, rec_view *v)
{
    const char *p = json_string_value(rec);
    const char *end = p + json_string_length(rec);
    v->ns = p;
    v->name = p = skip_str(p);
    v->rv = p = skip_str(p);
    v->labels = p = skip_str(p);
    while (*p)
        p = skip_str(skip_str(p)); /* a label and its value */
    v->body = p + 1;
    v->body_len = (size_t)(end - v->body);
}

static const char *str_or_empty(const json_t *obj, const char *field)
{
    const char *s = json_string_value(json_object_get(obj, field));
    return s ? s : "";
}

static char *put_str(char *p, const char *s)
{
    size_t n = strlen(s) + 1;
    memcpy(p, s, n);
    return p + n;
}

/* Write obj's head at buf (NULL: only measure); its length. */
static size_t rec_head(const json_t *obj, char *buf)
{
    json_t *meta = json_object_get(obj, "metadata");
    const char *parts[] = {str_or_empty(meta, "namespace"), str_or_empty(meta, "name"),
                           str_or_empty(meta, "resourceVersion")};
    size_t n = 1; /* the NUL that ends the labels */
    for (size_t i = 0; i < 3; i++) {
        n += strlen(parts[i]) + 1;
        if (buf)
            buf = put_str(buf, parts[i]);
    }
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(meta, "labels"), k, v)
    {
        if (!*k || !json_is_string(v))
            continue;
        n += strlen(k) + strlen(json_string_value(v)) + 2;
        if (buf)
            buf = put_str(put_str(buf, k), json_string_value(v));
    }
    if (buf)
        *buf = '\0';
    return n;
}

/* obj's record (a new reference): CTRL_ERR_ARG when obj is not a JSON
 * object or nests too deep; CTRL_ERR_NOMEM. */
static int rec_new(const json_t *obj, json_t **out)
{
    if (!json_is_object(obj))
        return CTRL_ERR_ARG;
    char stack[HEAD_STACK];
    size_t len = rec_head(obj, NULL);
    char *head = len <= sizeof stack ? stack : malloc(len);
    if (!head)
        return CTRL_ERR_NOMEM;
    rec_head(obj, head);
    int rc = ctrl__pack_string(obj, head, len, out);
    if (head != stack)
        free(head);
    return rc;
}

/* A new object unpacked from rec, or NULL (out of memory). */
static json_t *rec_load(const json_t *rec)
{
    rec_view v;
    rec_view_of(rec, &v);
    return ctrl__unpack(v.body, v.body_len);
}

/* ---- the store ---- */

int ctrl__store_new(ctrl__store **out)
{
    ctrl__store *s = calloc(1, sizeof *s);
    if (!s)
        return CTRL_ERR_NOMEM;
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    int prc = pthread_rwlock_init(&s->lock, &attr);
    pthread_rwlockattr_destroy(&attr);
    if (prc != 0) {
        free(s);
        return CTRL_ERR_NOMEM;
    }
    s->objects = json_object();
    s->trees = json_object();
    s->recent = json_object();
    pthread_mutex_init(&s->tmu, NULL);
    s->idx = calloc(4, sizeof *s->idx);
    s->capidx = 4;
    if (s->idx)
        s->idx[0] = (store_index){.name = strdup(CTRL__INDEX_NAMESPACE), .map = json_object()};
    if (!s->objects || !s->trees || !s->recent || !s->idx || !s->idx[0].name || !s->idx[0].map) {
        if (s->idx) {
            free(s->idx[0].name);
            json_decref(s->idx[0].map);
        }
        free(s->idx);
        json_decref(s->objects);
        json_decref(s->trees);
        json_decref(s->recent);
        pthread_mutex_destroy(&s->tmu);
        pthread_rwlock_destroy(&s->lock);
        free(s);
        return CTRL_ERR_NOMEM;
    }
    s->nidx = 1;
    *out = s;
    return 0;
}

void ctrl__store_free(ctrl__store *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nidx; i++) {
        free(s->idx[i].name);
        json_decref(s->idx[i].map);
    }
    free(s->idx);
    json_decref(s->objects);
    json_decref(s->trees);
    json_decref(s->recent);
    pthread_mutex_destroy(&s->tmu);
    pthread_rwlock_destroy(&s->lock);
    free(s);
}

/* File (rec != NULL) or unfile (rec NULL) key under one index value. */
static int index_one(store_index *ix, const char *value, const char *key, json_t *rec)
{
    json_t *set = json_object_get(ix->map, value);
    if (rec) {
        if (!set) {
            set = json_object();
            if (!set || json_object_set_new_nocheck(ix->map, value, set) < 0)
                return CTRL_ERR_NOMEM;
        }
        return json_object_set_nocheck(set, key, rec) < 0 ? CTRL_ERR_NOMEM : 0;
    }
    if (set) {
        json_object_del(set, key);
        if (json_object_size(set) == 0)
            json_object_del(ix->map, value);
    }
    return 0;
}

/* File (file true) or unfile key, stored as rec whose object is obj, under
 * the values ix gives it. obj may be NULL for the built-in index only. */
static int index_apply(store_index *ix, const char *key, json_t *rec, const json_t *obj, bool file)
{
    if (!ix->fn) {
        rec_view v;
        rec_view_of(rec, &v);
        return index_one(ix, v.ns, key, file ? rec : NULL);
    }
    json_t *vals = ix->fn(obj, ix->user);
    int rc = 0;
    size_t i;
    json_t *v;
    json_array_foreach(vals, i, v)
    {
        if (json_is_string(v) && index_one(ix, json_string_value(v), key, file ? rec : NULL) < 0)
            rc = CTRL_ERR_NOMEM;
    }
    json_decref(vals);
    return rc;
}

static int index_all(ctrl__store *s, const char *key, json_t *rec, const json_t *obj, bool file)
{
    int rc = 0;
    for (size_t i = 0; i < s->nidx; i++) {
        if (index_apply(&s->idx[i], key, rec, obj, file) < 0)
            rc = CTRL_ERR_NOMEM;
    }
    return rc;
}

/* The record under key (a new reference) or NULL; takes the read lock. */
static json_t *peek(ctrl__store *s, const char *key)
{
    pthread_rwlock_rdlock(&s->lock);
    json_t *rec = json_incref(json_object_get(s->objects, key));
    pthread_rwlock_unlock(&s->lock);
    return rec;
}

/* The object already built for the record under key (kept from a watch
 * write or a shared read; a new reference, read-only), or NULL. Read or
 * write lock held. */
static json_t *known_tree(ctrl__store *s, const char *key)
{
    json_t *tree = json_object_get(s->recent, key);
    if (tree)
        return json_incref(tree);
    pthread_mutex_lock(&s->tmu);
    tree = json_incref(json_object_get(s->trees, key));
    pthread_mutex_unlock(&s->tmu);
    return tree;
}

/* As peek; *tree (read-only) the record's object when one is known, else
 * unpacked for the caller when want is set, else NULL. NULL with *tree
 * NULL means absent; a record with want and no *tree, out of memory. */
static json_t *peek_object(ctrl__store *s, const char *key, bool want, json_t **tree)
{
    pthread_rwlock_rdlock(&s->lock);
    json_t *rec = json_incref(json_object_get(s->objects, key));
    *tree = rec ? known_tree(s, key) : NULL;
    pthread_rwlock_unlock(&s->lock);
    if (rec && !*tree && want)
        *tree = rec_load(rec);
    return rec;
}

/*
 * Write lock held: *obj becomes the object of prev, the record now under
 * key, when the index functions need it or want is set. *obj came in as
 * the object of seen, found before the lock: kept when prev is still seen
 * (the reference to seen kept its address from being reused).
 */
static int prev_object(ctrl__store *s, const char *key, json_t *prev, json_t *seen, json_t **obj,
                       bool want)
{
    if (prev == seen && (*obj || !prev))
        return 0;
    json_decref(*obj);
    *obj = NULL;
    if (!prev || (!want && s->nidx == 1))
        return 0;
    *obj = known_tree(s, key);
    if (!*obj)
        *obj = rec_load(prev);
    return *obj ? 0 : CTRL_ERR_NOMEM;
}

/* Write lock held: forget the objects built for prev, the record under key
 * that is being replaced or removed. */
static void forget(ctrl__store *s, const char *key, const json_t *prev)
{
    if (json_object_get(s->recent, key)) {
        s->recent_bytes -= json_string_length(prev);
        json_object_del(s->recent, key);
    }
    json_object_del(s->trees, key);
}

/* Write lock held: keep obj, the object of rec now stored under key, as its
 * tree (a reference), then drop the oldest kept objects beyond RECENT_MAX.
 * Out of memory only means obj is not kept. */
static void remember(ctrl__store *s, const char *key, const json_t *rec, const json_t *obj)
{
    size_t len = json_string_length(rec);
    /* jansson counts references on const objects too; nothing is changed. */
    if (len > RECENT_MAX || json_object_set_nocheck(s->recent, key, (json_t *)obj) < 0)
        return;
    s->recent_bytes += len;
    while (s->recent_bytes > RECENT_MAX) {
        void *it = json_object_iter(s->recent);
        char oldest[CTRL__KEY_MAX];
        snprintf(oldest, sizeof oldest, "%s", json_object_iter_key(it));
        s->recent_bytes -= json_string_length(json_object_get(s->objects, oldest));
        json_object_del(s->recent, oldest);
    }
}

int ctrl__store_put(ctrl__store *s, const char *key, const json_t *obj, bool keep, json_t **old)
{
    json_t *rec = NULL;
    int rc = rec_new(obj, &rec);
    if (rc < 0)
        return rc;
    json_t *prev_obj = NULL, *prev = NULL;
    json_t *seen = old ? peek_object(s, key, true, &prev_obj) : NULL;
    if (seen && !prev_obj) {
        rc = CTRL_ERR_NOMEM;
        goto out;
    }
    pthread_rwlock_wrlock(&s->lock);
    prev = json_incref(json_object_get(s->objects, key));
    rc = prev_object(s, key, prev, seen, &prev_obj, old != NULL);
    if (rc == 0 && prev) {
        index_all(s, key, prev, prev_obj, false);
        forget(s, key, prev); /* stale once rec replaces prev */
    }
    if (rc == 0 && json_object_set_nocheck(s->objects, key, rec) < 0) {
        rc = CTRL_ERR_NOMEM;
        if (prev)
            index_all(s, key, prev, prev_obj, true); /* the old record stays */
    } else if (rc == 0) {
        if (index_all(s, key, rec, obj, true) < 0)
            rc = CTRL_ERR_NOMEM;
        if (keep)
            remember(s, key, rec, obj);
    }
    pthread_rwlock_unlock(&s->lock);
out:
    json_decref(rec);
    json_decref(prev);
    json_decref(seen);
    if (old && rc == 0)
        *old = prev_obj;
    else
        json_decref(prev_obj);
    return rc;
}

int ctrl__store_remove(ctrl__store *s, const char *key, json_t **old)
{
    int rc = 0;
    json_t *prev_obj = NULL, *prev = NULL;
    json_t *seen = old ? peek_object(s, key, true, &prev_obj) : NULL;
    if (seen && !prev_obj) {
        rc = CTRL_ERR_NOMEM;
        goto out;
    }
    pthread_rwlock_wrlock(&s->lock);
    prev = json_incref(json_object_get(s->objects, key));
    rc = prev_object(s, key, prev, seen, &prev_obj, old != NULL);
    if (rc == 0 && prev) {
        index_all(s, key, prev, prev_obj, false);
        forget(s, key, prev);
        json_object_del(s->objects, key);
    }
    pthread_rwlock_unlock(&s->lock);
out:
    json_decref(prev);
    json_decref(seen);
    if (old && rc == 0)
        *old = prev_obj;
    else
        json_decref(prev_obj);
    return rc;
}

int ctrl__store_add_index(ctrl__store *s, const char *name, ctrl_index_fn fn, void *user)
{
    if (!name || !fn)
        return CTRL_ERR_ARG;
    int rc = 0;
    pthread_rwlock_wrlock(&s->lock);
    for (size_t i = 0; i < s->nidx; i++) {
        if (!strcmp(s->idx[i].name, name)) {
            rc = CTRL_ERR_ARG;
            goto out;
        }
    }
    if (s->nidx == s->capidx) {
        store_index *n = realloc(s->idx, 2 * s->capidx * sizeof *n);
        if (!n) {
            rc = CTRL_ERR_NOMEM;
            goto out;
        }
        s->idx = n;
        s->capidx *= 2;
    }
    store_index ix = {.name = strdup(name), .fn = fn, .user = user, .map = json_object()};
    if (!ix.name || !ix.map) {
        rc = CTRL_ERR_NOMEM;
        goto fail;
    }
    const char *key;
    json_t *rec;
    json_object_foreach(s->objects, key, rec)
    {
        json_t *obj = rec_load(rec);
        rc = obj ? index_apply(&ix, key, rec, obj, true) : CTRL_ERR_NOMEM;
        json_decref(obj);
        if (rc < 0)
            goto fail;
    }
    s->idx[s->nidx++] = ix;
    goto out;
fail:
    free(ix.name);
    json_decref(ix.map);
out:
    pthread_rwlock_unlock(&s->lock);
    return rc;
}

int ctrl__store_get(ctrl__store *s, const char *key, json_t **out)
{
    json_t *rec = peek(s, key);
    if (!rec)
        return CTRL_ERR_NOT_FOUND;
    json_t *obj = rec_load(rec);
    json_decref(rec);
    if (!obj)
        return CTRL_ERR_NOMEM;
    *out = obj;
    return 0;
}

bool ctrl__store_has_rv(ctrl__store *s, const char *key, const char *rv)
{
    if (!rv || !*rv)
        return false;
    json_t *rec = peek(s, key);
    bool same = false;
    if (rec) {
        rec_view v;
        rec_view_of(rec, &v);
        same = !strcmp(v.rv, rv);
    }
    json_decref(rec);
    return same;
}

/* A record taken by a read: a reference, and its parts. */
typedef struct hit {
    json_t *rec;
    json_t *tree; /* shared reads: the record's shared object (a reference) */
    rec_view v;
} hit;

static int cmp_hits(const void *a, const void *b)
{
    const hit *x = a, *y = b;
    int c = strcmp(x->v.ns, y->v.ns);
    return c ? c : strcmp(x->v.name, y->v.name);
}

/* The shared object of rec stored under key (a new reference), unpacked
 * and remembered on first use, or NULL (out of memory). Read lock held, so
 * rec is the record under key now and no writer can drop the entry while
 * it is made. */
static json_t *shared_tree(ctrl__store *s, const char *key, const json_t *rec)
{
    pthread_mutex_lock(&s->tmu);
    json_t *tree = json_object_get(s->trees, key);
    if (!tree) {
        tree = json_incref(json_object_get(s->recent, key));
        if (!tree)
            tree = rec_load(rec);
        if (tree && json_object_set_new_nocheck(s->trees, key, tree) < 0)
            tree = NULL; /* set_new released it */
    }
    json_incref(tree);
    pthread_mutex_unlock(&s->tmu);
    return tree;
}

int ctrl__store_get_shared(ctrl__store *s, const char *key, bool keep, json_t **out)
{
    json_t *obj = NULL, *rec;
    if (keep) {
        pthread_rwlock_rdlock(&s->lock);
        rec = json_object_get(s->objects, key);
        obj = rec ? shared_tree(s, key, rec) : NULL;
        pthread_rwlock_unlock(&s->lock);
    } else {
        rec = peek_object(s, key, true, &obj);
        json_decref(rec); /* only its presence is asked */
    }
    if (!rec)
        return CTRL_ERR_NOT_FOUND;
    if (!obj)
        return CTRL_ERR_NOMEM;
    *out = obj;
    return 0;
}

static void release(hit *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        json_decref(v[i].rec);
        json_decref(v[i].tree);
    }
    free(v);
}

/* Collect (incref) the records of set that sel matches (NULL = all),
 * sorted by namespace then name once the lock is released; with shared
 * (not NULL), also their shared objects from that store. Lock held. */
static int collect(json_t *set, const ctrl__selector *sel, ctrl__store *shared, hit **v, size_t *n)
{
    size_t cap = json_object_size(set);
    *n = 0;
    *v = malloc((cap ? cap : 1) * sizeof **v);
    if (!*v)
        return CTRL_ERR_NOMEM;
    const char *key;
    json_t *rec;
    json_object_foreach(set, key, rec)
    {
        hit *h = &(*v)[*n];
        rec_view_of(rec, &h->v);
        if (sel && !packed_matches(sel, h->v.labels))
            continue;
        h->tree = NULL;
        if (shared && !(h->tree = shared_tree(shared, key, rec))) {
            release(*v, *n);
            *v = NULL;
            *n = 0;
            return CTRL_ERR_NOMEM;
        }
        h->rec = json_incref(rec);
        (*n)++;
    }
    return 0;
}

/* Sort the collected records, unpack them into a new array, release them. */
static int to_array(hit *v, size_t n, json_t **out)
{
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_hits);
    json_t *arr = json_array();
    int rc = arr ? 0 : CTRL_ERR_NOMEM;
    for (size_t i = 0; i < n && rc == 0; i++) {
        json_t *obj =
            v[i].tree ? json_incref(v[i].tree) : ctrl__unpack(v[i].v.body, v[i].v.body_len);
        if (!obj || json_array_append_new(arr, obj) < 0)
            rc = CTRL_ERR_NOMEM;
    }
    release(v, n);
    if (rc < 0) {
        json_decref(arr);
        return rc;
    }
    *out = arr;
    return 0;
}

/* The records in ns (NULL = all), or NULL. Lock held. */
static json_t *ns_set(ctrl__store *s, const char *ns)
{
    return ns ? json_object_get(s->idx[0].map, ns) : s->objects;
}

int ctrl__store_list(ctrl__store *s, const char *ns, const ctrl__selector *sel, json_t **out)
{
    hit *v = NULL;
    size_t n = 0;
    pthread_rwlock_rdlock(&s->lock);
    json_t *set = ns_set(s, ns);
    int rc = set ? collect(set, sel, NULL, &v, &n) : 0;
    pthread_rwlock_unlock(&s->lock);
    if (rc < 0)
        return rc;
    return to_array(v, n, out);
}

static int by_index(ctrl__store *s, const char *name, const char *value, bool shared, json_t **out)
{
    if (!name || !value)
        return CTRL_ERR_ARG;
    hit *v = NULL;
    size_t n = 0;
    int rc = CTRL_ERR_ARG;
    pthread_rwlock_rdlock(&s->lock);
    for (size_t i = 0; i < s->nidx; i++) {
        if (!strcmp(s->idx[i].name, name)) {
            json_t *set = json_object_get(s->idx[i].map, value);
            rc = set ? collect(set, NULL, shared ? s : NULL, &v, &n) : 0;
            break;
        }
    }
    pthread_rwlock_unlock(&s->lock);
    if (rc < 0)
        return rc;
    return to_array(v, n, out);
}

int ctrl__store_by_index(ctrl__store *s, const char *name, const char *value, json_t **out)
{
    return by_index(s, name, value, false, out);
}

int ctrl__store_by_index_shared(ctrl__store *s, const char *name, const char *value, json_t **out)
{
    return by_index(s, name, value, true, out);
}

json_t *ctrl__store_keys(ctrl__store *s, const char *ns)
{
    hit *v = NULL;
    size_t n = 0;
    pthread_rwlock_rdlock(&s->lock);
    json_t *set = ns_set(s, ns);
    int rc = set ? collect(set, NULL, NULL, &v, &n) : 0;
    pthread_rwlock_unlock(&s->lock);
    if (rc < 0)
        return NULL;
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_hits);
    json_t *keys = json_object();
    for (size_t i = 0; i < n && keys; i++) {
        char key[CTRL__KEY_MAX];
        int len = *v[i].v.ns ? snprintf(key, sizeof key, "%s/%s", v[i].v.ns, v[i].v.name)
                             : snprintf(key, sizeof key, "%s", v[i].v.name);
        if (len < 0 || (size_t)len >= sizeof key)
            continue; /* never stored: ctrl__store_key refuses it */
        if (json_object_set_new_nocheck(keys, key, json_null()) < 0) {
            json_decref(keys);
            keys = NULL;
        }
    }
    release(v, n);
    return keys;
}

size_t ctrl__store_len(ctrl__store *s)
{
    pthread_rwlock_rdlock(&s->lock);
    size_t n = json_object_size(s->objects);
    pthread_rwlock_unlock(&s->lock);
    return n;
}

/* ---- label selectors ---- */

typedef enum sel_op {
    SEL_EQ,
    SEL_NE,
    SEL_IN,
    SEL_NOTIN,
    SEL_EXISTS,
    SEL_NOT_EXISTS,
    SEL_GT,
    SEL_LT,
} sel_op;

typedef struct sel_req {
    sel_op op;
    char *key;
    char **vals;
    size_t nvals;
    long long num; /* SEL_GT, SEL_LT */
} sel_req;

struct ctrl__selector {
    sel_req *reqs;
    size_t n;
};

void ctrl__selector_free(ctrl__selector *sel)
{
    if (!sel)
        return;
    for (size_t i = 0; i < sel->n; i++) {
        free(sel->reqs[i].key);
        for (size_t j = 0; j < sel->reqs[i].nvals; j++)
            free(sel->reqs[i].vals[j]);
        free(sel->reqs[i].vals);
    }
    free(sel->reqs);
    free(sel);
}

static bool key_char(char c)
{
    return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.' || c == '/';
}

static bool value_char(char c)
{
    return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.';
}

static void skip_ws(const char **p)
{
    while (**p == ' ' || **p == '\t')
        (*p)++;
}

/* A token of allowed characters (may be empty) as a new string. */
static char *token(const char **p, bool (*ok)(char))
{
    const char *start = *p;
    while (ok(**p))
        (*p)++;
    size_t n = (size_t)(*p - start);
    char *t = malloc(n + 1);
    if (t) {
        memcpy(t, start, n);
        t[n] = '\0';
    }
    return t;
}

static int add_val(sel_req *r, char *v)
{
    char **n = realloc(r->vals, (r->nvals + 1) * sizeof *n);
    if (!n) {
        free(v);
        return CTRL_ERR_NOMEM;
    }
    r->vals = n;
    r->vals[r->nvals++] = v;
    return 0;
}

/* One requirement at *p; on success *p is at ',' or the end. */
static int parse_req(const char **p, sel_req *r)
{
    skip_ws(p);
    bool negate = false;
    if (**p == '!') {
        negate = true;
        (*p)++;
        skip_ws(p);
    }
    r->key = token(p, key_char);
    if (!r->key)
        return CTRL_ERR_NOMEM;
    if (!*r->key)
        return CTRL_ERR_ARG;
    skip_ws(p);
    if (negate || **p == ',' || **p == '\0') {
        r->op = negate ? SEL_NOT_EXISTS : SEL_EXISTS;
        return negate && **p != ',' && **p != '\0' ? CTRL_ERR_ARG : 0;
    }
    bool set = false;
    if (!strncmp(*p, "==", 2)) {
        r->op = SEL_EQ;
        *p += 2;
    } else if (!strncmp(*p, "!=", 2)) {
        r->op = SEL_NE;
        *p += 2;
    } else if (**p == '=') {
        r->op = SEL_EQ;
        *p += 1;
    } else if (**p == '>' || **p == '<') {
        r->op = **p == '>' ? SEL_GT : SEL_LT;
        *p += 1;
    } else if (!strncmp(*p, "notin", 5) && !key_char((*p)[5])) {
        r->op = SEL_NOTIN;
        *p += 5;
        set = true;
    } else if (!strncmp(*p, "in", 2) && !key_char((*p)[2])) {
        r->op = SEL_IN;
        *p += 2;
        set = true;
    } else {
        return CTRL_ERR_ARG;
    }
    skip_ws(p);
    if (!set) {
        char *v = token(p, value_char);
        if (!v)
            return CTRL_ERR_NOMEM;
        if (r->op == SEL_GT || r->op == SEL_LT) {
            char *end = NULL;
            errno = 0;
            r->num = strtoll(v, &end, 10);
            bool bad = !*v || *end || errno;
            free(v);
            if (bad)
                return CTRL_ERR_ARG;
        } else if (add_val(r, v) < 0) {
            return CTRL_ERR_NOMEM;
        }
        skip_ws(p);
        return **p == ',' || **p == '\0' ? 0 : CTRL_ERR_ARG;
    }
    if (**p != '(')
        return CTRL_ERR_ARG;
    (*p)++;
    for (;;) {
        skip_ws(p);
        char *v = token(p, value_char);
        if (!v || add_val(r, v) < 0)
            return CTRL_ERR_NOMEM;
        skip_ws(p);
        if (**p == ',') {
            (*p)++;
            continue;
        }
        if (**p != ')')
            return CTRL_ERR_ARG;
        (*p)++;
        break;
    }
    skip_ws(p);
    return **p == ',' || **p == '\0' ? 0 : CTRL_ERR_ARG;
}

int ctrl__selector_parse(const char *text, ctrl__selector **out)
{
    ctrl__selector *sel = calloc(1, sizeof *sel);
    if (!sel)
        return CTRL_ERR_NOMEM;
    const char *p = text ? text : "";
    skip_ws(&p);
    int rc = 0;
    while (*p) {
        sel_req *n = realloc(sel->reqs, (sel->n + 1) * sizeof *n);
        if (!n) {
            rc = CTRL_ERR_NOMEM;
            break;
        }
        sel->reqs = n;
        sel->reqs[sel->n] = (sel_req){0};
        rc = parse_req(&p, &sel->reqs[sel->n++]);
        if (rc < 0)
            break;
        if (*p == ',') {
            p++;
            skip_ws(&p);
            if (!*p) {
                rc = CTRL_ERR_ARG; /* a trailing comma */
                break;
            }
        }
    }
    if (rc < 0) {
        ctrl__selector_free(sel);
        return rc;
    }
    *out = sel;
    return 0;
}

static bool in_set(const sel_req *r, const char *v)
{
    for (size_t i = 0; i < r->nvals; i++) {
        if (!strcmp(r->vals[i], v))
            return true;
    }
    return false;
}

/* Whether r holds for v, the value of r's label (NULL: no such label). */
static bool req_matches(const sel_req *r, const char *v)
{
    switch (r->op) {
    case SEL_EQ:
    case SEL_IN:
        return v && in_set(r, v);
    case SEL_NE:
    case SEL_NOTIN:
        return !v || !in_set(r, v);
    case SEL_EXISTS:
        return v != NULL;
    case SEL_NOT_EXISTS:
        return v == NULL;
    case SEL_GT:
    case SEL_LT: {
        if (!v || !*v)
            return false;
        char *end = NULL;
        errno = 0;
        long long n = strtoll(v, &end, 10);
        if (*end || errno)
            return false;
        return r->op == SEL_GT ? n > r->num : n < r->num;
    }
    }
    return false;
}

bool ctrl__selector_matches(const ctrl__selector *sel, const json_t *labels)
{
    for (size_t i = 0; sel && i < sel->n; i++) {
        const sel_req *r = &sel->reqs[i];
        if (!req_matches(r, json_string_value(json_object_get(labels, r->key))))
            return false;
    }
    return true;
}

/* The value of key among a record's (label, value) pairs, or NULL. */
static const char *packed_label(const char *labels, const char *key)
{
    for (const char *p = labels; *p;) {
        const char *v = skip_str(p);
        if (!strcmp(p, key))
            return v;
        p = skip_str(v);
    }
    return NULL;
}

/* ctrl__selector_matches for a record's labels. */
static bool packed_matches(const ctrl__selector *sel, const char *labels)
{
    for (size_t i = 0; i < sel->n; i++) {
        const sel_req *r = &sel->reqs[i];
        if (!req_matches(r, packed_label(labels, r->key)))
            return false;
    }
    return true;
}

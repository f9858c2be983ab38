/*
 * store.c - the informer's object store: objects by key, indexes, and a
 * label-selector matcher.
 *
 * DESIGN
 *   Data: `objects` is a JSON object key -> stored object (jansson's hash
 *   table, so lookups are O(1) and keys are kept once, inline). Each index
 *   is a JSON object value -> (JSON object key -> stored object): the inner
 *   objects are sets of keys that also hold a reference to the object, so
 *   by_index needs no second lookup. Index 0 is the built-in "namespace"
 *   index, computed without calling out. Index values are not remembered
 *   per object: replacing or removing an object recomputes the old values
 *   from the old object (index functions must be pure), as client-go does.
 *
 *   Locking: one pthread rwlock, writer-preferring (glibc's default prefers
 *   readers, which lets eight busy readers starve the informer). Readers
 *   take it shared and only json_incref what they hand out (jansson's
 *   reference counts are atomic); sorting happens after the unlock. Writers
 *   take it exclusively; the informer guarantees there is one writer at a
 *   time, and ctrl__store_add_index may come from any thread.
 */
#include "store_int.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct store_index {
    char *name;
    ctrl_index_fn fn; /* NULL: the built-in namespace index */
    void *user;
    json_t *map; /* value -> {key -> object} */
} store_index;

struct ctrl__store {
    pthread_rwlock_t lock;
    json_t *objects; /* key -> object */
    store_index *idx;
    size_t nidx, capidx;
};

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
    s->idx = calloc(4, sizeof *s->idx);
    s->capidx = 4;
    if (s->idx)
        s->idx[0] = (store_index){.name = strdup(CTRL__INDEX_NAMESPACE), .map = json_object()};
    if (!s->objects || !s->idx || !s->idx[0].name || !s->idx[0].map) {
        if (s->idx) {
            free(s->idx[0].name);
            json_decref(s->idx[0].map);
        }
        free(s->idx);
        json_decref(s->objects);
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
    pthread_rwlock_destroy(&s->lock);
    free(s);
}

/* File (obj != NULL) or unfile (obj NULL) key under one index value. */
static int index_one(store_index *ix, const char *value, const char *key, json_t *obj)
{
    json_t *set = json_object_get(ix->map, value);
    if (obj) {
        if (!set) {
            set = json_object();
            if (!set || json_object_set_new_nocheck(ix->map, value, set) < 0)
                return CTRL_ERR_NOMEM;
        }
        return json_object_set_nocheck(set, key, obj) < 0 ? CTRL_ERR_NOMEM : 0;
    }
    if (set) {
        json_object_del(set, key);
        if (json_object_size(set) == 0)
            json_object_del(ix->map, value);
    }
    return 0;
}

/* File or unfile `of` (whose values are computed) with object obj. */
static int index_apply(store_index *ix, const char *key, const json_t *of, json_t *obj)
{
    if (!ix->fn) {
        const char *ns = meta_str(of, "namespace");
        return index_one(ix, ns ? ns : "", key, obj);
    }
    json_t *vals = ix->fn(of, ix->user);
    int rc = 0;
    size_t i;
    json_t *v;
    json_array_foreach(vals, i, v)
    {
        if (json_is_string(v) && index_one(ix, json_string_value(v), key, obj) < 0)
            rc = CTRL_ERR_NOMEM;
    }
    json_decref(vals);
    return rc;
}

int ctrl__store_put(ctrl__store *s, const char *key, json_t *obj, json_t **old)
{
    int rc = 0;
    pthread_rwlock_wrlock(&s->lock);
    json_t *prev = json_incref(json_object_get(s->objects, key));
    if (prev) {
        for (size_t i = 0; i < s->nidx; i++)
            index_apply(&s->idx[i], key, prev, NULL);
    }
    if (json_object_set_nocheck(s->objects, key, obj) < 0) {
        rc = CTRL_ERR_NOMEM;
        obj = prev; /* the old object stays; file it again */
    }
    for (size_t i = 0; obj && i < s->nidx; i++) {
        if (index_apply(&s->idx[i], key, obj, obj) < 0)
            rc = CTRL_ERR_NOMEM;
    }
    pthread_rwlock_unlock(&s->lock);
    if (old)
        *old = prev;
    else
        json_decref(prev);
    return rc;
}

int ctrl__store_remove(ctrl__store *s, const char *key, json_t **old)
{
    pthread_rwlock_wrlock(&s->lock);
    json_t *prev = json_incref(json_object_get(s->objects, key));
    if (prev) {
        for (size_t i = 0; i < s->nidx; i++)
            index_apply(&s->idx[i], key, prev, NULL);
        json_object_del(s->objects, key);
    }
    pthread_rwlock_unlock(&s->lock);
    if (old)
        *old = prev;
    else
        json_decref(prev);
    return 0;
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
        free(ix.name);
        json_decref(ix.map);
        rc = CTRL_ERR_NOMEM;
        goto out;
    }
    const char *key;
    json_t *obj;
    json_object_foreach(s->objects, key, obj)
    {
        if (index_apply(&ix, key, obj, obj) < 0) {
            free(ix.name);
            json_decref(ix.map);
            rc = CTRL_ERR_NOMEM;
            goto out;
        }
    }
    s->idx[s->nidx++] = ix;
out:
    pthread_rwlock_unlock(&s->lock);
    return rc;
}

int ctrl__store_get(ctrl__store *s, const char *key, json_t **out)
{
    pthread_rwlock_rdlock(&s->lock);
    json_t *obj = json_incref(json_object_get(s->objects, key));
    pthread_rwlock_unlock(&s->lock);
    if (!obj)
        return CTRL_ERR_NOT_FOUND;
    *out = obj;
    return 0;
}

static int cmp_objects(const void *a, const void *b)
{
    const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
    const char *nx = meta_str(x, "namespace"), *ny = meta_str(y, "namespace");
    int c = strcmp(nx ? nx : "", ny ? ny : "");
    if (c)
        return c;
    nx = meta_str(x, "name");
    ny = meta_str(y, "name");
    return strcmp(nx ? nx : "", ny ? ny : "");
}

/* Sort the collected references and hand them over as a JSON array. */
static int to_sorted_array(json_t **v, size_t n, json_t **out)
{
    int rc = 0;
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_objects);
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        if (arr && json_array_append_new(arr, v[i]) < 0) {
            json_decref(arr);
            arr = NULL;
        } else if (!arr) {
            json_decref(v[i]);
        }
    }
    if (!arr)
        rc = CTRL_ERR_NOMEM;
    else
        *out = arr;
    free(v);
    return rc;
}

/* Collect (incref) the members of set that sel matches. Lock held. */
static int collect(json_t *set, const ctrl__selector *sel, json_t ***v, size_t *n)
{
    size_t cap = json_object_size(set);
    *n = 0;
    *v = malloc((cap ? cap : 1) * sizeof **v);
    if (!*v)
        return CTRL_ERR_NOMEM;
    const char *key;
    json_t *obj;
    json_object_foreach(set, key, obj)
    {
        if (sel && !ctrl__selector_matches(
                       sel, json_object_get(json_object_get(obj, "metadata"), "labels")))
            continue;
        (*v)[(*n)++] = json_incref(obj);
    }
    return 0;
}

int ctrl__store_list(ctrl__store *s, const char *ns, const ctrl__selector *sel, json_t **out)
{
    json_t **v = NULL;
    size_t n = 0;
    pthread_rwlock_rdlock(&s->lock);
    json_t *set = ns ? json_object_get(s->idx[0].map, ns) : s->objects;
    int rc = set ? collect(set, sel, &v, &n) : 0;
    pthread_rwlock_unlock(&s->lock);
    if (rc < 0)
        return rc;
    return to_sorted_array(v, n, out);
}

int ctrl__store_by_index(ctrl__store *s, const char *name, const char *value, json_t **out)
{
    if (!name || !value)
        return CTRL_ERR_ARG;
    json_t **v = NULL;
    size_t n = 0;
    int rc = CTRL_ERR_ARG;
    pthread_rwlock_rdlock(&s->lock);
    for (size_t i = 0; i < s->nidx; i++) {
        if (!strcmp(s->idx[i].name, name)) {
            json_t *set = json_object_get(s->idx[i].map, value);
            rc = set ? collect(set, NULL, &v, &n) : 0;
            break;
        }
    }
    pthread_rwlock_unlock(&s->lock);
    if (rc < 0)
        return rc;
    return to_sorted_array(v, n, out);
}

json_t *ctrl__store_snapshot(ctrl__store *s, const char *ns)
{
    pthread_rwlock_rdlock(&s->lock);
    json_t *set = ns ? json_object_get(s->idx[0].map, ns) : s->objects;
    json_t *copy = set ? json_copy(set) : json_object();
    pthread_rwlock_unlock(&s->lock);
    return copy;
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

static bool req_matches(const sel_req *r, const json_t *labels)
{
    const char *v = json_string_value(json_object_get(labels, r->key));
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
        if (!req_matches(&sel->reqs[i], labels))
            return false;
    }
    return true;
}

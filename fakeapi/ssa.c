/*
 * ssa.c - server-side apply and field ownership. See ssa.h.
 *
 * The pieces follow structured-merge-diff and apimachinery's fieldmanager:
 * on top of typed.c's merge, compare and removal, the prune (the
 * applier's old fields nobody owns any more), the ownership moves of
 * Updater.update, and around them the managedFields codec, strip-meta,
 * reset fields by scope, the cap on Update entries, before-first-apply and
 * the last-applied upgrade. Pure: any thread.
 */
#include "ssa.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "strbuf.h"
#include "typed.h"

#define LAST_APPLIED "kubectl.kubernetes.io/last-applied-configuration"
#define BEFORE_FIRST_APPLY "before-first-apply"
#define MAX_MANAGER_LEN 128
/* upstream's DefaultMaxUpdateManagers, and where older Update entries go. */
#define MAX_UPDATE_MANAGERS 10
#define ANCIENT_CHANGES "ancient-changes"

void fakeapi__ssa_err_deinit(fakeapi__ssa_err *e)
{
    if (!e)
        return;
    json_decref(e->causes);
    e->causes = NULL;
}

static int fail(fakeapi__ssa_err *e, int code, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(fakeapi__ssa_err *e, int code, const char *reason, const char *fmt, ...)
{
    if (!e)
        return -1;
    e->code = code;
    e->reason = reason;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
    return -1;
}

fakeapi__fptype fakeapi__ssa_type_of(const fakeapi__resource *res)
{
    if (res && res->type)
        return fakeapi__fptype_builtin(res->type);
    if (res && res->custom)
        return fakeapi__fptype_crd(res->schema);
    return fakeapi__fptype_deduced();
}

fakeapi__ssa_opts fakeapi__ssa_opts_for(const fakeapi__resource *res, const char *sub,
                                        const char *now)
{
    fakeapi__ssa_opts o = {0};
    o.type = fakeapi__ssa_type_of(res);
    o.api_version = res->group_version;
    o.subresource = sub ? sub : "";
    o.now = now;
    if (sub && !strcmp(sub, "status"))
        o.scope = FAKEAPI__SSA_STATUS_ONLY;
    else if (res->subresources & FAKEAPI__SUB_STATUS)
        o.scope = FAKEAPI__SSA_NO_STATUS;
    return o;
}

void fakeapi__ssa_manager_name(const char *field_manager, const char *user_agent, char *buf,
                               size_t len)
{
    if (!len)
        return;
    buf[0] = 0;
    if (field_manager && *field_manager) {
        snprintf(buf, len, "%s", field_manager);
        return;
    }
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)(user_agent ? user_agent : "");
         *p && *p != '/'; p++) {
        if (*p < 0x20 || *p == 0x7f)
            continue;
        /* A UTF-8 sequence is kept whole or not at all. */
        size_t seq = *p < 0x80 ? 1 : *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : 2;
        if (n + seq > MAX_MANAGER_LEN || n + seq >= len)
            break;
        for (size_t i = 0; i < seq && p[i]; i++)
            buf[n++] = (char)p[i];
        p += seq - 1;
    }
    buf[n] = 0;
}

/* ---- managedFields entries ---- */

typedef struct mf_entry {
    char *manager;
    bool apply;
    char *api_version;
    char *time; /* NULL: not set */
    char *sub;  /* "" for the main resource */
    fakeapi__fpset *set;
    /*
     * What the entry was decoded from, when it is written exactly as
     * managed_encode writes it: fields (its fieldsV1) while set is
     * unchanged, raw (the entry object) while nothing in it changed.
     * Change set only through entry_set or entry_dirty.
     */
    json_t *fields;
    json_t *raw;
    /* set is not decoded yet (an empty stand-in): fields says it; see entry_fpset. */
    bool lazy;
} mf_entry;

typedef struct managed {
    mf_entry *v;
    size_t n, cap;
} managed;

/* The set changed: what was decoded no longer says it. */
static void entry_dirty(mf_entry *e)
{
    json_decref(e->fields);
    json_decref(e->raw);
    e->fields = NULL;
    e->raw = NULL;
}

/* Replace the entry's set (taken). */
static void entry_set(mf_entry *e, fakeapi__fpset *set)
{
    fakeapi__fpset_free(e->set);
    e->set = set;
    e->lazy = false;
    entry_dirty(e);
}

/* The entry's set, decoded from its fields first when that was left for later. NULL on ENOMEM. */
static fakeapi__fpset *entry_fpset(mf_entry *e)
{
    if (!e->lazy)
        return e->set;
    fakeapi__fpset *set = NULL;
    char err[128];
    if (fakeapi__fpset_from_json(e->fields, &set, err, sizeof err) < 0)
        return NULL;
    fakeapi__fpset_free(e->set);
    e->set = set;
    e->lazy = false;
    return set;
}

static bool entry_empty(const mf_entry *e)
{
    return e->lazy ? !json_object_size(e->fields) : fakeapi__fpset_empty(e->set);
}

static void entry_deinit(mf_entry *e)
{
    entry_dirty(e);
    free(e->manager);
    free(e->api_version);
    free(e->time);
    free(e->sub);
    fakeapi__fpset_free(e->set);
    memset(e, 0, sizeof *e);
}

static void managed_deinit(managed *m)
{
    for (size_t i = 0; i < m->n; i++)
        entry_deinit(&m->v[i]);
    free(m->v);
    memset(m, 0, sizeof *m);
}

static bool same_id(const mf_entry *e, const char *manager, bool apply, const char *apiv,
                    const char *sub)
{
    /* Appliers are one manager whatever version they apply at. */
    return !strcmp(e->manager, manager) && e->apply == apply && !strcmp(e->sub, sub) &&
           (apply || !strcmp(e->api_version, apiv));
}

static long find_entry(const managed *m, const char *manager, bool apply, const char *apiv,
                       const char *sub)
{
    for (size_t i = 0; i < m->n; i++)
        if (same_id(&m->v[i], manager, apply, apiv, sub))
            return (long)i;
    return -1;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* Add an entry (set taken) and return its index, or -1 on ENOMEM. */
static long add_entry(managed *m, const char *manager, bool apply, const char *apiv,
                      const char *time, const char *sub, fakeapi__fpset *set)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 4;
        mf_entry *v = realloc(m->v, cap * sizeof *v);
        if (!v) {
            fakeapi__fpset_free(set);
            return -1;
        }
        m->v = v;
        m->cap = cap;
    }
    mf_entry *e = &m->v[m->n];
    memset(e, 0, sizeof *e);
    e->manager = strdup(manager);
    e->apply = apply;
    e->api_version = strdup(apiv);
    e->time = dup_or_null(time);
    e->sub = strdup(sub);
    e->set = set;
    if (!e->manager || !e->api_version || !e->sub || (time && !e->time) || !set) {
        entry_deinit(e);
        return -1;
    }
    return (long)m->n++;
}

static void remove_entry(managed *m, size_t i)
{
    entry_deinit(&m->v[i]);
    memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof *m->v);
    m->n--;
}

static void drop_empty(managed *m)
{
    for (size_t i = m->n; i-- > 0;)
        if (entry_empty(&m->v[i]))
            remove_entry(m, i);
}

/* upstream's isResetManagedFields: [] or [{}]. */
static bool is_reset(const json_t *mf)
{
    if (!json_is_array(mf))
        return false;
    if (!json_array_size(mf))
        return true;
    return json_array_size(mf) == 1 && json_is_object(json_array_get(mf, 0)) &&
           !json_object_size(json_array_get(mf, 0));
}

/* Whether o has the members managed_encode writes, in its order, all strings but fieldsV1. */
static bool entry_canonical(const json_t *o)
{
    static const char *const order[] = {"manager",    "operation", "apiVersion", "time",
                                        "fieldsType", "fieldsV1",  "subresource"};
    const size_t time_at = 3, fields_at = 5, sub_at = 6, n = 7;
    size_t k = 0;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)o, key, v)
    {
        while (k < n && strcmp(order[k], key)) {
            if (k != time_at && k != sub_at)
                return false; /* a member it always writes is missing */
            k++;
        }
        if (k == n || (k != fields_at && !json_is_string(v)) ||
            (k == sub_at && !json_string_length(v)))
            return false;
        k++;
    }
    return k > fields_at;
}

/* Whether e->raw still says what e does (see mf_entry). */
static bool raw_current(const mf_entry *e)
{
    if (!e->raw || !e->fields)
        return false;
    const json_t *t = json_object_get(e->raw, "time"),
                 *sub = json_object_get(e->raw, "subresource");
    const json_t *mgr = json_object_get(e->raw, "manager");
    const json_t *av = json_object_get(e->raw, "apiVersion");
    const char *op = json_string_value(json_object_get(e->raw, "operation"));
    return json_string_length(mgr) == strlen(e->manager) &&
           !strcmp(json_string_value(mgr), e->manager) && op &&
           !strcmp(op, e->apply ? "Apply" : "Update") &&
           json_string_length(av) == strlen(e->api_version) &&
           !strcmp(json_string_value(av), e->api_version) && !t == !e->time &&
           (!t ||
            (json_string_length(t) == strlen(e->time) && !strcmp(json_string_value(t), e->time))) &&
           !sub == !*e->sub &&
           (!sub ||
            (json_string_length(sub) == strlen(e->sub) && !strcmp(json_string_value(sub), e->sub)));
}

/*
 * Decode managedFields; 0, or -1 when invalid (m left empty). NULL or
 * absent: empty. lazy: an entry written as managed_encode writes it is
 * checked but its set is decoded only when needed (entry_fpset).
 */
static int managed_decode(const json_t *mf, managed *m, bool lazy, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (!mf || json_is_null(mf))
        return 0;
    if (!json_is_array(mf)) {
        snprintf(err, errlen, "managedFields is not a list");
        return -1;
    }
    size_t i;
    json_t *e;
    json_array_foreach(mf, i, e)
    {
        const char *op = json_string_value(json_object_get(e, "operation"));
        const char *apiv = json_string_value(json_object_get(e, "apiVersion"));
        const char *ft = json_string_value(json_object_get(e, "fieldsType"));
        const char *mgr = json_string_value(json_object_get(e, "manager"));
        const char *time = json_string_value(json_object_get(e, "time"));
        const char *sub = json_string_value(json_object_get(e, "subresource"));
        json_t *fv1 = json_object_get(e, "fieldsV1");
        if (!json_is_object(e) || !op || (strcmp(op, "Apply") && strcmp(op, "Update"))) {
            snprintf(err, errlen, "operation must be `Apply` or `Update`");
            goto bad;
        }
        if (!apiv || !*apiv) {
            snprintf(err, errlen, "apiVersion must not be empty");
            goto bad;
        }
        if (!ft || strcmp(ft, "FieldsV1")) {
            snprintf(err, errlen, "%s fieldsType in managed fields entry %zu",
                     ft ? "invalid" : "missing", i);
            goto bad;
        }
        fakeapi__fpset *set = NULL;
        bool canon = false, later = false;
        if (fv1 && !json_is_null(fv1) && lazy) {
            if (fakeapi__fpset_check_json(fv1, &canon, err, errlen) < 0)
                goto bad;
            later = canon;
        }
        if (later) {
            if (!(set = fakeapi__fpset_new()))
                goto bad;
        } else if (fv1 && !json_is_null(fv1)) {
            if (fakeapi__fpset_from_json_canon(fv1, &set, &canon, err, errlen) < 0)
                goto bad;
        } else if (!(set = fakeapi__fpset_new())) {
            goto bad;
        }
        bool apply = !strcmp(op, "Apply");
        long at = find_entry(m, mgr ? mgr : "", apply, apiv, sub ? sub : "");
        if (at >= 0)
            remove_entry(m, (size_t)at);
        long at2 = add_entry(m, mgr ? mgr : "", apply, apiv, time, sub ? sub : "", set);
        if (at2 < 0) {
            snprintf(err, errlen, "out of memory");
            goto bad;
        }
        if (canon) {
            m->v[at2].lazy = later;
            m->v[at2].fields = json_incref(fv1);
            if (entry_canonical(e))
                m->v[at2].raw = json_incref(e);
        }
    }
    return 0;
bad:
    managed_deinit(m);
    return -1;
}

static int entry_order(const void *pa, const void *pb)
{
    const mf_entry *a = pa, *b = pb;
    if (a->apply != b->apply)
        return a->apply ? -1 : 1;
    int c = strcmp(a->time ? a->time : "", b->time ? b->time : "");
    if (!c)
        c = strcmp(a->manager, b->manager);
    if (!c)
        c = strcmp(a->api_version, b->api_version);
    if (!c)
        c = strcmp(a->sub, b->sub);
    return c;
}

/* The managedFields list, sorted as upstream sorts it (a new array, NULL on ENOMEM). */
static json_t *managed_encode(managed *m)
{
    qsort(m->v, m->n, sizeof *m->v, entry_order);
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < m->n; i++) {
        const mf_entry *e = &m->v[i];
        if (raw_current(e)) {
            if (json_array_append(arr, e->raw) < 0) {
                json_decref(arr);
                return NULL;
            }
            continue;
        }
        json_t *o = json_object();
        json_t *fields = e->fields ? json_incref(e->fields) : fakeapi__fpset_to_json(e->set);
        if (!o || !fields) {
            json_decref(o);
            json_decref(fields);
            json_decref(arr);
            return NULL;
        }
        json_object_set_new(o, "manager", json_string(e->manager));
        json_object_set_new(o, "operation", json_string(e->apply ? "Apply" : "Update"));
        json_object_set_new(o, "apiVersion", json_string(e->api_version));
        if (e->time)
            json_object_set_new(o, "time", json_string(e->time));
        json_object_set_new(o, "fieldsType", json_string("FieldsV1"));
        json_object_set_new(o, "fieldsV1", fields);
        if (*e->sub)
            json_object_set_new(o, "subresource", json_string(e->sub));
        json_array_append_new(arr, o);
    }
    return arr;
}

/* upstream's printManager. */
static void print_manager(const mf_entry *e, fakeapi__strbuf *b)
{
    fakeapi__strbuf_addf(b, "\"%s\"", e->manager);
    if (*e->sub)
        fakeapi__strbuf_addf(b, " with subresource \"%s\"", e->sub);
    if (!e->apply)
        fakeapi__strbuf_addf(b, " using %s", e->api_version);
}

/* ---- objects without managedFields ---- */

static json_t *strip_managed(const json_t *obj)
{
    json_t *c = json_deep_copy(obj);
    if (c)
        json_object_del(json_object_get(c, "metadata"), "managedFields");
    return c;
}

/* As strip_managed, for reading only: a shallow copy sharing every value
 * with obj but metadata (itself shallow), so an update's comparison does
 * not copy the whole object twice. Never change what it returns. */
static json_t *strip_managed_view(const json_t *obj)
{
    json_t *meta = json_object_get(obj, "metadata");
    if (!json_object_get(meta, "managedFields"))
        return json_incref((json_t *)obj);
    json_t *c = json_copy((json_t *)obj), *m = json_copy(meta);
    if (!c || !m || json_object_del(m, "managedFields") < 0 ||
        json_object_set_new(c, "metadata", json_incref(m)) < 0) {
        json_decref(m);
        json_decref(c);
        return NULL;
    }
    json_decref(m);
    return c;
}

/* A set restricted to the write's scope (a new set; NULL on ENOMEM). */
static fakeapi__fpset *scoped(const fakeapi__fpset *s, fakeapi__ssa_scope scope)
{
    if (scope == FAKEAPI__SSA_ALL)
        return fakeapi__fpset_copy(s);
    fakeapi__pe pe;
    if (fakeapi__pe_field(&pe, "status") < 0) {
        fakeapi__pe_deinit(&pe);
        return NULL;
    }
    fakeapi__fpset *out = NULL;
    if (scope == FAKEAPI__SSA_STATUS_ONLY) {
        out = fakeapi__fpset_only(s, &pe);
    } else {
        fakeapi__fpset *status = fakeapi__fpset_new();
        if (status && fakeapi__fpset_insert(status, &pe, 1) == 0)
            out = fakeapi__fpset_recursive_difference(s, status);
        fakeapi__fpset_free(status);
    }
    fakeapi__pe_deinit(&pe);
    return out;
}

typedef struct comparison {
    fakeapi__fpset *added, *modified, *removed;
} comparison;

static void comparison_deinit(comparison *r)
{
    fakeapi__fpset_free(r->added);
    fakeapi__fpset_free(r->modified);
    fakeapi__fpset_free(r->removed);
    memset(r, 0, sizeof *r);
}

/*
 * Compare a and b (either may be NULL) within scope. 0, or -1 on ENOMEM.
 * no_managed: leave metadata.managedFields out (a and b may carry theirs).
 */
static int compare_objects_part(const fakeapi__ssa_opts *o, const json_t *a, const json_t *b,
                                bool no_managed, comparison *r)
{
    memset(r, 0, sizeof *r);
    fakeapi__typed_part part = {NULL, NULL, no_managed};
    if (o->scope == FAKEAPI__SSA_STATUS_ONLY)
        part.only = "status";
    else if (o->scope == FAKEAPI__SSA_NO_STATUS)
        part.skip = "status";
    bool whole = !part.only && !part.skip && !part.no_managed;
    if (fakeapi__typed_compare_part(&o->type, a, b, whole ? NULL : &part, &r->added, &r->modified,
                                    &r->removed) < 0) {
        memset(r, 0, sizeof *r);
        return -1;
    }
    return 0;
}

static int compare_objects(const fakeapi__ssa_opts *o, const json_t *a, const json_t *b,
                           comparison *r)
{
    return compare_objects_part(o, a, b, false, r);
}

static bool comparison_same(const comparison *r)
{
    return fakeapi__fpset_empty(r->added) && fakeapi__fpset_empty(r->modified) &&
           fakeapi__fpset_empty(r->removed);
}

/* ---- ownership moves (Updater.update) ---- */

typedef struct conflict {
    size_t entry; /* index into the managed list at the time */
    fakeapi__fpset *set;
} conflict;

typedef struct conflicts {
    conflict *v;
    size_t n;
} conflicts;

static void conflicts_deinit(conflicts *c)
{
    for (size_t i = 0; i < c->n; i++)
        fakeapi__fpset_free(c->v[i].set);
    free(c->v);
    memset(c, 0, sizeof *c);
}

/*
 * Move ownership for a change from a to b: every entry but self loses the
 * removed paths; the changed paths an entry owns are its conflicts (taken
 * from it when force). Returns 0, 1 when there are conflicts and not force
 * (*out lists them, nothing changed), -1 on ENOMEM.
 */
static int move_ownership(managed *m, long self, const comparison *r, bool force, conflicts *out)
{
    memset(out, 0, sizeof *out);
    if (!force) {
        fakeapi__fpset *changed = fakeapi__fpset_union(r->modified, r->added);
        if (!changed)
            return -1;
        out->v = calloc(m->n ? m->n : 1, sizeof *out->v);
        if (!out->v) {
            fakeapi__fpset_free(changed);
            return -1;
        }
        for (size_t i = 0; i < m->n; i++) {
            if ((long)i == self)
                continue;
            fakeapi__fpset *own = entry_fpset(&m->v[i]);
            fakeapi__fpset *cs = own ? fakeapi__fpset_intersection(own, changed) : NULL;
            if (!cs) {
                fakeapi__fpset_free(changed);
                return -1;
            }
            if (fakeapi__fpset_empty(cs)) {
                fakeapi__fpset_free(cs);
                continue;
            }
            out->v[out->n].entry = i;
            out->v[out->n++].set = cs;
        }
        fakeapi__fpset_free(changed);
        if (out->n)
            return 1;
    }
    /* Forced (or nothing in conflict): the others lose what changed and what went. */
    for (size_t i = 0; i < m->n; i++) {
        if ((long)i == self)
            continue;
        mf_entry *e = &m->v[i];
        if (e->lazy && !fakeapi__fpset_meets_json(r->modified, e->fields) &&
            !fakeapi__fpset_meets_json(r->added, e->fields) &&
            !fakeapi__fpset_meets_json(r->removed, e->fields))
            continue; /* it owns none of them: left as it is */
        fakeapi__fpset *own = entry_fpset(e);
        if (!own)
            return -1;
        bool ch = fakeapi__fpset_subtract(own, r->modified);
        ch |= fakeapi__fpset_subtract(own, r->added);
        ch |= fakeapi__fpset_subtract(own, r->removed);
        if (ch)
            entry_dirty(e);
    }
    return 0;
}

/* Strip-meta on every entry (the exact paths, not their subtrees), then drop the empty ones. */
static int strip_all(managed *m)
{
    static const char *const top[] = {"apiVersion", "kind", "metadata"};
    static const char *const meta[] = {"name",       "namespace",     "creationTimestamp",
                                       "selfLink",   "uid",           "clusterName",
                                       "generation", "managedFields", "resourceVersion"};
    /* The same as fieldsV1 keys. */
    static const char *const top_keys[] = {"f:apiVersion", "f:kind", "f:metadata"};
    static const char *const meta_keys[] = {
        "f:name",        "f:namespace",  "f:creationTimestamp", "f:selfLink",       "f:uid",
        "f:clusterName", "f:generation", "f:managedFields",     "f:resourceVersion"};
    for (size_t i = 0; i < m->n; i++) {
        fakeapi__pe p[2] = {{.kind = FAKEAPI__PE_FIELD}, {.kind = FAKEAPI__PE_FIELD}};
        bool ch = false;
        if (m->v[i].lazy) {
            /* Its fields as written: only one with a path to strip is decoded. */
            const json_t *f = m->v[i].fields, *fm = json_object_get(f, "f:metadata");
            bool hit = false;
            for (size_t k = 0; !hit && k < sizeof top_keys / sizeof top_keys[0]; k++) {
                const json_t *v = json_object_get(f, top_keys[k]);
                hit = v && (!json_object_size(v) || json_object_get(v, "."));
            }
            for (size_t k = 0; !hit && fm && k < sizeof meta_keys / sizeof meta_keys[0]; k++) {
                const json_t *v = json_object_get(fm, meta_keys[k]);
                hit = v && (!json_object_size(v) || json_object_get(v, "."));
            }
            if (!hit)
                continue;
        }
        fakeapi__fpset *own = entry_fpset(&m->v[i]);
        if (!own)
            return -1;
        for (size_t k = 0; k < sizeof top / sizeof top[0]; k++) {
            p[0].name = (char *)top[k];
            ch |= fakeapi__fpset_remove(own, p, 1);
        }
        p[0].name = (char *)"metadata";
        for (size_t k = 0; k < sizeof meta / sizeof meta[0]; k++) {
            p[1].name = (char *)meta[k];
            ch |= fakeapi__fpset_remove(own, p, 2);
        }
        if (ch)
            entry_dirty(&m->v[i]);
    }
    drop_empty(m);
    return 0;
}

static int updater_order(const mf_entry *a, const mf_entry *b)
{
    int c = strcmp(a->time ? a->time : "", b->time ? b->time : "");
    return c ? c : strcmp(a->manager, b->manager);
}

/*
 * At most MAX_UPDATE_MANAGERS Update entries: the oldest are merged, per
 * apiVersion, into an "ancient-changes" entry (upstream's capManagersManager).
 * 0, or -1 on ENOMEM.
 */
static int cap_updaters(managed *m)
{
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++)
        n += !m->v[i].apply;
    if (n <= MAX_UPDATE_MANAGERS)
        return 0;
    for (size_t i = 0; i < m->n; i++)
        if (!entry_fpset(&m->v[i]))
            return -1;
    size_t *u = calloc(n, sizeof *u);
    size_t *first = calloc(n, sizeof *first); /* per updater: the first of its version */
    bool *gone = calloc(m->n, sizeof *gone);
    int rc = -1;
    if (!u || !first || !gone)
        goto out;
    size_t k = 0;
    for (size_t i = 0; i < m->n; i++) {
        if (m->v[i].apply)
            continue;
        size_t j = k++;
        while (j > 0 && updater_order(&m->v[u[j - 1]], &m->v[i]) > 0) {
            u[j] = u[j - 1];
            j--;
        }
        u[j] = i;
    }
    size_t length = n, nfirst = 0;
    for (size_t i = 0; i < n && length > MAX_UPDATE_MANAGERS; i++) {
        mf_entry *e = &m->v[u[i]];
        size_t f = 0;
        while (f < nfirst && strcmp(m->v[first[f]].api_version, e->api_version))
            f++;
        if (f == nfirst) {
            first[nfirst++] = u[i];
            continue;
        }
        long b = find_entry(m, ANCIENT_CHANGES, false, e->api_version, "");
        if (b < 0 || gone[b]) {
            /* The first entry of this version becomes the bucket. */
            mf_entry *fe = &m->v[first[f]];
            char *name = strdup(ANCIENT_CHANGES), *sub = strdup("");
            if (!name || !sub) {
                free(name);
                free(sub);
                goto out;
            }
            free(fe->manager);
            free(fe->sub);
            fe->manager = name;
            fe->sub = sub;
            b = (long)first[f];
        }
        fakeapi__fpset *un = fakeapi__fpset_union(m->v[b].set, e->set);
        char *t = dup_or_null(e->time);
        if (!un || (e->time && !t)) {
            fakeapi__fpset_free(un);
            free(t);
            goto out;
        }
        entry_set(&m->v[b], un);
        free(m->v[b].time);
        m->v[b].time = t;
        gone[u[i]] = true;
        length--;
    }
    for (size_t i = m->n; i-- > 0;)
        if (gone[i])
            remove_entry(m, i);
    rc = 0;
out:
    free(u);
    free(first);
    free(gone);
    return rc;
}

static const char *sub_of(const fakeapi__ssa_opts *o)
{
    return o->subresource ? o->subresource : "";
}

/*
 * The Update step: a change from a to b by manager (an Update entry at the
 * write's version and subresource). 0, or -1 on ENOMEM.
 */
static int record_update(const fakeapi__ssa_opts *o, managed *m, const json_t *a, const json_t *b,
                         bool no_managed, const char *manager)
{
    comparison r;
    conflicts cs;
    if (compare_objects_part(o, a, b, no_managed, &r) < 0)
        return -1;
    long self = find_entry(m, manager, false, o->api_version, sub_of(o));
    int rc = move_ownership(m, self, &r, true, &cs);
    conflicts_deinit(&cs);
    if (rc < 0)
        goto out;
    rc = -1;
    /* Its entry: what it had, less what went, with what it changed. */
    bool touched = !fakeapi__fpset_empty(r.modified) || !fakeapi__fpset_empty(r.added);
    if (self >= 0) {
        mf_entry *e = &m->v[self];
        /* Still undecoded: left so when its fields stay what they were. */
        bool same = e->lazy && !fakeapi__fpset_meets_json(r.removed, e->fields) &&
                    fakeapi__fpset_within_json(r.modified, e->fields) &&
                    fakeapi__fpset_within_json(r.added, e->fields);
        if (!same) {
            if (!entry_fpset(e))
                goto out;
            bool ch = fakeapi__fpset_subtract(e->set, r.removed);
            int arc = fakeapi__fpset_add(e->set, r.modified, &ch);
            if (!arc)
                arc = fakeapi__fpset_add(e->set, r.added, &ch);
            if (ch || arc)
                entry_dirty(e);
            if (arc)
                goto out;
        }
        if (touched) {
            char *t = strdup(o->now);
            if (!t)
                goto out;
            free(e->time);
            e->time = t;
        }
    } else if (touched) {
        fakeapi__fpset *now = r.added;
        bool ch = false;
        r.added = NULL;
        if (fakeapi__fpset_add(now, r.modified, &ch) < 0) {
            fakeapi__fpset_free(now);
            goto out;
        }
        if (add_entry(m, manager, false, o->api_version, o->now, sub_of(o), now) < 0)
            goto out;
    }
    rc = 0;
out:
    comparison_deinit(&r);
    return rc;
}

/* ---- apply ---- */

static const char *last_applied(const json_t *obj)
{
    return json_string_value(json_object_get(
        json_object_get(json_object_get(obj, "metadata"), "annotations"), LAST_APPLIED));
}

/* One conflicting path: a "- path" line and a cause. */
typedef struct conflict_acc {
    fakeapi__strbuf *lines;
    json_t *causes;
    const char *who;
    const char *first; /* the first path (borrowed from causes) */
} conflict_acc;

static int conflict_path(const fakeapi__pe *path, size_t n, void *ud)
{
    conflict_acc *a = ud;
    fakeapi__strbuf p = {0};
    fakeapi__fp_path_string(path, n, &p);
    fakeapi__strbuf_addf(a->lines, "\n- %s", p.data ? p.data : "");
    json_t *cause = json_object();
    char msg[300];
    snprintf(msg, sizeof msg, "conflict with %s", a->who);
    json_object_set_new(cause, "reason", json_string("FieldManagerConflict"));
    json_object_set_new(cause, "message", json_string(msg));
    json_object_set_new(cause, "field", json_string(p.data ? p.data : ""));
    json_array_append_new(a->causes, cause);
    if (!a->first)
        a->first = json_string_value(json_object_get(cause, "field"));
    fakeapi__strbuf_deinit(&p);
    return 0;
}

static int conflict_order(const mf_entry *p, const mf_entry *q)
{
    int c = strcmp(p->manager, q->manager);
    if (!c && p->apply != q->apply)
        c = p->apply ? -1 : 1;
    if (!c)
        c = strcmp(p->sub, q->sub);
    return c;
}

/* The conflicts as upstream reports them: message and causes. */
static void conflict_error(const managed *m, const conflicts *cs, fakeapi__ssa_err *err)
{
    fakeapi__strbuf msg = {0}, lines = {0};
    json_t *causes = json_array();
    size_t total = 0;
    size_t *order = calloc(cs->n ? cs->n : 1, sizeof *order);
    for (size_t i = 0; order && i < cs->n; i++) {
        size_t j = i;
        while (j > 0 &&
               conflict_order(&m->v[cs->v[order[j - 1]].entry], &m->v[cs->v[i].entry]) > 0) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
        total += fakeapi__fpset_size(cs->v[i].set);
    }
    const char *first_who = NULL;
    char *who_keep = NULL;
    for (size_t oi = 0; order && oi < cs->n; oi++) {
        const conflict *c = &cs->v[order[oi]];
        fakeapi__strbuf who = {0};
        print_manager(&m->v[c->entry], &who);
        fakeapi__strbuf_addf(&lines, "%sconflicts with %s:", lines.len ? "\n" : "",
                             who.data ? who.data : "");
        conflict_acc a = {&lines, causes, who.data ? who.data : "", NULL};
        fakeapi__fpset_iterate(c->set, conflict_path, &a);
        if (!first_who) {
            who_keep = fakeapi__strbuf_take(&who, NULL);
            first_who = who_keep;
        }
        fakeapi__strbuf_deinit(&who);
    }
    if (total == 1)
        fakeapi__strbuf_addf(
            &msg, "Apply failed with 1 conflict: conflict with %s: %s", first_who ? first_who : "",
            json_string_value(json_object_get(json_array_get(causes, 0), "field")));
    else
        fakeapi__strbuf_addf(&msg, "Apply failed with %zu conflicts: %s", total,
                             lines.data ? lines.data : "");
    free(order);
    free(who_keep);
    fail(err, 409, "Conflict", "%s", msg.data ? msg.data : "Apply failed");
    if (err) {
        json_decref(err->causes);
        err->causes = causes;
    } else {
        json_decref(causes);
    }
    fakeapi__strbuf_deinit(&msg);
    fakeapi__strbuf_deinit(&lines);
}

static int managed_copy(const managed *src, managed *dst)
{
    memset(dst, 0, sizeof *dst);
    for (size_t i = 0; i < src->n; i++) {
        const mf_entry *e = &src->v[i];
        fakeapi__fpset *s = fakeapi__fpset_copy(e->set);
        if (add_entry(dst, e->manager, e->apply, e->api_version, e->time, e->sub, s) < 0) {
            managed_deinit(dst);
            return -1;
        }
    }
    return 0;
}

/* Set (or, when empty, delete) obj.metadata.managedFields. 0, or -1 on ENOMEM. */
static int put_managed(json_t *obj, managed *m)
{
    json_t *meta = json_object_get(obj, "metadata");
    if (meta && !json_is_object(meta))
        return 0; /* nowhere to keep them: the decode step refuses such objects */
    if (!m->n) {
        json_object_del(meta, "managedFields");
        return 0;
    }
    if (!meta) {
        if (json_object_set_new(obj, "metadata", json_object()) < 0)
            return -1;
        meta = json_object_get(obj, "metadata");
    }
    json_t *arr = managed_encode(m);
    return arr ? json_object_set_new(meta, "managedFields", arr) : -1;
}

/*
 * The fields kubectl's client-side apply is taken to own: the last-applied
 * configuration's fields whose values the live object still has (NULL when
 * there is no usable annotation).
 */
static fakeapi__fpset *allowed_from_last_applied(const fakeapi__ssa_opts *o, const json_t *live)
{
    const char *text = last_applied(live);
    if (!text || !*text)
        return NULL;
    json_t *la = json_loads(text, 0, NULL);
    fakeapi__fpset *set = NULL, *out = NULL;
    comparison r = {0};
    char err[256];
    if (!json_is_object(la) || fakeapi__fp_object_set(&o->type, la, 0, &set, err, sizeof err) < 0)
        goto done;
    if (compare_objects(o, la, live, &r) < 0)
        goto done;
    fakeapi__fpset *d1 = fakeapi__fpset_difference(set, r.modified);
    fakeapi__fpset *d2 = d1 ? fakeapi__fpset_difference(d1, r.added) : NULL;
    out = d2 ? fakeapi__fpset_difference(d2, r.removed) : NULL;
    fakeapi__fpset_free(d1);
    fakeapi__fpset_free(d2);
done:
    comparison_deinit(&r);
    fakeapi__fpset_free(set);
    json_decref(la);
    return out;
}

/* Take allowed out of every conflict set; true if none is left. */
static bool conflicts_allowed(conflicts *cs, const fakeapi__fpset *allowed)
{
    size_t k = 0;
    for (size_t i = 0; i < cs->n; i++) {
        fakeapi__fpset *d = fakeapi__fpset_difference(cs->v[i].set, allowed);
        fakeapi__fpset_free(cs->v[i].set);
        if (!fakeapi__fpset_empty(d)) {
            cs->v[k] = cs->v[i];
            cs->v[k++].set = d;
        } else {
            fakeapi__fpset_free(d);
        }
    }
    cs->n = k;
    return k == 0;
}

/* Sync the client-side apply annotation from a "kubectl" apply (lastAppliedUpdater). */
static int sync_last_applied(json_t *result, const json_t *config)
{
    json_t *c = json_deep_copy(config);
    if (!c)
        return -1;
    json_t *ann = json_object_get(json_object_get(c, "metadata"), "annotations");
    json_object_del(ann, LAST_APPLIED);
    if (ann && !json_object_size(ann))
        json_object_del(json_object_get(c, "metadata"), "annotations");
    char *text = json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(c);
    json_t *rann = json_object_get(json_object_get(result, "metadata"), "annotations");
    int rc = text && rann ? json_object_set_new(rann, LAST_APPLIED, json_string(text)) : -1;
    free(text);
    return rc;
}

/*
 * One apply attempt. 0 with *out; 1 on conflicts (*cs filled, mm kept for
 * printing); -1 on ENOMEM.
 */
static int apply_once(const fakeapi__ssa_opts *o, const json_t *live_s, const managed *m,
                      const json_t *config, const fakeapi__fpset *cset, const char *manager,
                      bool force, managed *mm, conflicts *cs, json_t **out, bool *same)
{
    const char *sub = sub_of(o);
    json_t *merged = NULL;
    fakeapi__fpset *last = NULL;
    comparison r = {0};
    int rc = -1;
    memset(cs, 0, sizeof *cs);
    if (managed_copy(m, mm) < 0)
        return -1;
    if (!mm->n && live_s) {
        if (record_update(o, mm, NULL, live_s, false, BEFORE_FIRST_APPLY) < 0 || strip_all(mm) < 0)
            goto out;
    }
    json_t *empty = json_object();
    merged = fakeapi__typed_merge(&o->type, live_s ? live_s : empty, config);
    json_decref(empty);
    if (!merged)
        goto out;
    long self = find_entry(mm, manager, true, o->api_version, sub);
    if (self >= 0) {
        last = mm->v[self].set;
        mm->v[self].set = NULL;
        entry_set(&mm->v[self], fakeapi__fpset_copy(cset));
        if (!mm->v[self].set)
            goto out;
        char *apiv = strdup(o->api_version);
        if (!apiv)
            goto out;
        free(mm->v[self].api_version);
        mm->v[self].api_version = apiv;
    } else if ((self = add_entry(mm, manager, true, o->api_version, NULL, sub,
                                 fakeapi__fpset_copy(cset))) < 0) {
        goto out;
    }
    if (!fakeapi__fpset_empty(last)) {
        /* Prune what the applier owned, no longer sends, and nobody else owns. */
        fakeapi__fpset *all = fakeapi__fpset_new();
        for (size_t i = 0; all && i < mm->n; i++) {
            fakeapi__fpset *u = fakeapi__fpset_union(all, mm->v[i].set);
            fakeapi__fpset_free(all);
            all = u;
        }
        fakeapi__fpset *ln = fakeapi__fpset_named_members(last, &o->type);
        fakeapi__fpset *an = all ? fakeapi__fpset_named_members(all, &o->type) : NULL;
        fakeapi__fpset *gone = ln && an ? fakeapi__fpset_difference(ln, an) : NULL;
        if (gone)
            fakeapi__typed_remove(&o->type, merged, gone);
        bool ok = gone != NULL;
        fakeapi__fpset_free(all);
        fakeapi__fpset_free(ln);
        fakeapi__fpset_free(an);
        fakeapi__fpset_free(gone);
        if (!ok)
            goto out;
    }
    if (compare_objects(o, live_s, merged, &r) < 0)
        goto out;
    rc = move_ownership(mm, self, &r, force, cs);
    if (rc)
        goto out;
    *same = live_s && comparison_same(&r);
    if (!*same) {
        char *t = strdup(o->now);
        if (!t) {
            rc = -1;
            goto out;
        }
        free(mm->v[self].time);
        mm->v[self].time = t;
    }
    if (strip_all(mm) < 0 || cap_updaters(mm) < 0 || put_managed(merged, mm) < 0) {
        rc = -1;
        goto out;
    }
    *out = merged;
    merged = NULL;
out:
    fakeapi__fpset_free(last);
    comparison_deinit(&r);
    json_decref(merged);
    return rc;
}

int fakeapi__ssa_apply(const fakeapi__ssa_opts *o, const json_t *live, const json_t *config,
                       const char *manager, bool force, json_t **out, bool *changed,
                       fakeapi__ssa_err *err)
{
    managed m = {0}, mm = {0};
    conflicts cs = {0};
    fakeapi__fpset *set = NULL, *cset = NULL, *allowed = NULL;
    json_t *live_s = NULL, *result = NULL;
    char msg[1024] = "";
    int rc = -1;
    if (!json_is_object(config))
        return fail(err, 400, "BadRequest", "the apply configuration is not an object");
    json_t *cmeta = json_object_get(config, "metadata");
    if (cmeta && !json_is_object(cmeta))
        return fail(err, 400, "BadRequest", "metadata of the apply configuration is not an object");
    json_t *cmf = json_object_get(cmeta, "managedFields");
    if (cmf && !json_is_null(cmf))
        return fail(err, 400, "BadRequest", "metadata.managedFields must be nil");
    if (fakeapi__fp_object_set(&o->type, config, FAKEAPI__FP_STRICT, &set, msg, sizeof msg) < 0) {
        if (err)
            err->typed = true;
        return fail(err, 400, "BadRequest", "%s", msg);
    }
    if (live) {
        json_t *lmf = json_object_get(json_object_get(live, "metadata"), "managedFields");
        if (managed_decode(lmf, &m, false, msg, sizeof msg) < 0)
            memset(&m, 0, sizeof m); /* an invalid list is reset */
        if (!(live_s = strip_managed(live)))
            goto oom;
    }
    if (!(cset = scoped(set, o->scope)))
        goto oom;
    bool same = false;
    rc = apply_once(o, live_s, &m, config, cset, manager, force, &mm, &cs, &result, &same);
    if (rc == 1 && !strcmp(manager, "kubectl") && live) {
        /* kubectl's upgrade from client-side apply: its own old fields are no conflict. */
        allowed = allowed_from_last_applied(o, live_s);
        if (allowed && conflicts_allowed(&cs, allowed)) {
            managed_deinit(&mm);
            conflicts_deinit(&cs);
            rc = apply_once(o, live_s, &m, config, cset, manager, true, &mm, &cs, &result, &same);
        }
    }
    if (rc == 1) {
        conflict_error(&mm, &cs, err);
        rc = -1;
        goto done;
    }
    if (rc < 0)
        goto oom;
    if (!strcmp(manager, "kubectl") && live && last_applied(live_s) &&
        sync_last_applied(result, config) < 0)
        goto oom;
    *changed = !live || !json_equal(result, (json_t *)live);
    *out = result;
    result = NULL;
    rc = 0;
    goto done;
oom:
    rc = fail(err, 500, "InternalError", "out of memory");
done:
    json_decref(result);
    json_decref(live_s);
    fakeapi__fpset_free(set);
    fakeapi__fpset_free(cset);
    fakeapi__fpset_free(allowed);
    conflicts_deinit(&cs);
    managed_deinit(&mm);
    managed_deinit(&m);
    return rc;
}

/* Whether obj's metadata holds managedFields and nothing else. */
static bool managed_only(const json_t *obj)
{
    const json_t *meta = json_object_get(obj, "metadata");
    return json_object_size(meta) == 1 && json_object_get(meta, "managedFields");
}

int fakeapi__ssa_update(const fakeapi__ssa_opts *o, const json_t *live, json_t *next,
                        const char *manager)
{
    managed m = {0};
    char msg[256];
    json_t *meta = json_object_get(next, "metadata");
    json_t *nmf = json_object_get(meta, "managedFields");
    const json_t *lmf = json_object_get(json_object_get(live, "metadata"), "managedFields");
    bool from_live = true;
    if (!*sub_of(o)) {
        if (is_reset(nmf)) {
            from_live = false;
        } else if (nmf && managed_decode(nmf, &m, true, msg, sizeof msg) == 0 && m.n) {
            from_live = false;
        } else {
            managed_deinit(&m);
        }
    }
    if (from_live && managed_decode(lmf, &m, true, msg, sizeof msg) < 0)
        memset(&m, 0, sizeof m);
    /*
     * The comparison leaves managedFields out; only where that would leave
     * metadata empty does it take copies without them (an empty metadata
     * compares as no metadata).
     */
    bool copies = managed_only(live) || managed_only(next);
    json_t *a = live && copies ? strip_managed_view(live) : NULL;
    json_t *b = copies ? strip_managed_view(next) : NULL;
    int rc = -1;
    if (copies && ((live && !a) || !b))
        goto out;
    if (record_update(o, &m, copies ? a : live, copies ? b : next, !copies, manager) < 0 ||
        strip_all(&m) < 0 || cap_updaters(&m) < 0)
        goto out;
    rc = put_managed(next, &m);
out:
    if (rc < 0)
        json_object_del(meta, "managedFields");
    json_decref(a);
    json_decref(b);
    managed_deinit(&m);
    return rc;
}

/*
 * state_mask.c - masked, canonical cluster states (scn/state_mask.h).
 *
 * A spec is parsed once into segments (a key, an index, any key, any
 * index); masking walks each object depth first with the path so far and
 * replaces the first node a spec matches exactly. Generated names are
 * mapped before the walk, so the walk replaces names and references alike.
 *
 * Threads: none of its own; a masker belongs to one thread at a time.
 */
#include "scn/state_mask.h"
#include "scn_parse.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SEGS 32
#define MAX_DEPTH 128
#define MASKED "<masked>"
#define MASKED_TIME "<time>"

typedef enum seg_kind { SEG_KEY, SEG_INDEX, SEG_ANY_KEY, SEG_ANY_INDEX } seg_kind;

typedef struct seg {
    seg_kind kind;
    char *key;
    size_t index;
} seg;

typedef struct spec {
    char *api_version; /* NULL: any */
    char *kind;        /* NULL: any */
    seg segs[MAX_SEGS];
    size_t n;
} spec;

typedef struct spec_list {
    spec *v;
    size_t n, cap;
} spec_list;

struct scn_mask {
    spec_list defaults, ignore, keep;
};

struct scn_masker {
    const scn_mask *m;
    json_t *names;  /* "apiVersion|kind|ns|name" -> placeholder */
    json_t *byname; /* generated name -> placeholder (for references) */
    json_t *counts; /* group -> last K given */
};

/* ---- specs ---- */

static void spec_deinit(spec *s)
{
    free(s->api_version);
    free(s->kind);
    for (size_t i = 0; i < s->n; i++)
        free(s->segs[i].key);
    memset(s, 0, sizeof *s);
}

__attribute__((format(printf, 3, 4))) static int bad(char *msg, size_t len, const char *fmt, ...)
{
    va_list ap;
    if (msg) {
        va_start(ap, fmt);
        vsnprintf(msg, len, fmt, ap);
        va_end(ap);
    }
    return SCN_ERR_INPUT;
}

/* Parse text into *s; on error s is deinitialised. */
static int spec_parse(const char *text, spec *s, char *msg, size_t len)
{
    memset(s, 0, sizeof *s);
    const char *colon = strchr(text, ':');
    const char *p = text;
    if (colon && text[0] != '.' && text[0] != '[') {
        char *sel = strndup(text, (size_t)(colon - text));
        if (!sel)
            return SCN_ERR_NOMEM;
        char *slash = strrchr(sel, '/');
        if (slash) {
            *slash = '\0';
            s->api_version = strdup(sel);
            s->kind = strdup(slash + 1);
            free(sel);
            if (!s->api_version || !s->kind) {
                spec_deinit(s);
                return SCN_ERR_NOMEM;
            }
        } else {
            s->kind = sel;
        }
        if (!s->kind[0] || (s->api_version && !s->api_version[0])) {
            spec_deinit(s);
            return bad(msg, len, "\"%s\": an empty kind or apiVersion before ':'", text);
        }
        p = colon + 1;
    }
    if (*p != '.' && *p != '[') {
        spec_deinit(s);
        return bad(msg, len, "\"%s\": a path starts with '.' or '[' (e.g. .metadata.labels)", text);
    }
    if (!strcmp(p, "."))
        return 0;
    while (*p) {
        if (s->n == MAX_SEGS) {
            spec_deinit(s);
            return bad(msg, len, "\"%s\": too many path segments", text);
        }
        seg *g = &s->segs[s->n];
        if (*p == '.') {
            p++;
            if (*p == '*') {
                g->kind = SEG_ANY_KEY;
                p++;
            } else {
                size_t k = strcspn(p, ".[");
                if (k == 0) {
                    spec_deinit(s);
                    return bad(msg, len, "\"%s\": an empty key", text);
                }
                g->kind = SEG_KEY;
                if (!(g->key = strndup(p, k))) {
                    spec_deinit(s);
                    return SCN_ERR_NOMEM;
                }
                p += k;
            }
        } else if (*p == '[') {
            p++;
            if (*p == '\'' || *p == '"') {
                char q = *p++;
                const char *end = strchr(p, q);
                if (!end || end[1] != ']') {
                    spec_deinit(s);
                    return bad(msg, len, "\"%s\": an unterminated quoted key", text);
                }
                g->kind = SEG_KEY;
                if (!(g->key = strndup(p, (size_t)(end - p)))) {
                    spec_deinit(s);
                    return SCN_ERR_NOMEM;
                }
                p = end + 2;
            } else if (p[0] == '*' && p[1] == ']') {
                g->kind = SEG_ANY_INDEX;
                p += 2;
            } else {
                char *end;
                unsigned long v = strtoul(p, &end, 10);
                if (end == p || *end != ']') {
                    spec_deinit(s);
                    return bad(msg, len, "\"%s\": expected [N], [*] or ['key']", text);
                }
                g->kind = SEG_INDEX;
                g->index = v;
                p = end + 1;
            }
        } else {
            spec_deinit(s);
            return bad(msg, len, "\"%s\": expected '.' or '[' between path segments", text);
        }
        s->n++;
    }
    return 0;
}

int scn_mask_check_spec(const char *text, char *msg, size_t len)
{
    spec s;
    if (!text)
        return bad(msg, len, "%s", "a null spec");
    int rc = spec_parse(text, &s, msg, len);
    if (rc == 0)
        spec_deinit(&s);
    return rc;
}

static int list_add(spec_list *l, const char *text, char *msg, size_t len)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        spec *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return SCN_ERR_NOMEM;
        l->v = v;
        l->cap = cap;
    }
    int rc = spec_parse(text, &l->v[l->n], msg, len);
    if (rc == 0)
        l->n++;
    return rc;
}

static void list_free(spec_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        spec_deinit(&l->v[i]);
    free(l->v);
}

int scn_mask_new(scn_mask **out)
{
    static const char *const defaults[] = {
        ".metadata.uid",
        ".metadata.resourceVersion",
        ".metadata.creationTimestamp",
        ".metadata.deletionTimestamp",
        ".metadata.managedFields[*].time",
        ".metadata.ownerReferences[*].uid",
        "Event:.involvedObject.uid",
        "Event:.involvedObject.resourceVersion",
        "events.k8s.io/v1/Event:.regarding.uid",
        "events.k8s.io/v1/Event:.regarding.resourceVersion",
        NULL,
    };
    scn_mask *m = calloc(1, sizeof *m);
    if (!m || !out) {
        free(m);
        return m ? SCN_ERR_INPUT : SCN_ERR_NOMEM;
    }
    for (size_t i = 0; defaults[i]; i++) {
        if (list_add(&m->defaults, defaults[i], NULL, 0) < 0) {
            scn_mask_free(m);
            return SCN_ERR_NOMEM;
        }
    }
    *out = m;
    return 0;
}

void scn_mask_free(scn_mask *m)
{
    if (!m)
        return;
    list_free(&m->defaults);
    list_free(&m->ignore);
    list_free(&m->keep);
    free(m);
}

static int add_spec(spec_list *l, const char *field, const char *text, scn_error *err)
{
    char msg[400] = "";
    int rc = text ? list_add(l, text, msg, sizeof msg) : SCN_ERR_INPUT;
    if (rc == SCN_ERR_INPUT && err) {
        memset(err, 0, sizeof *err);
        err->code = rc;
        snprintf(err->field, sizeof err->field, "%s", field);
        snprintf(err->message, sizeof err->message, "%s", msg[0] ? msg : "a null spec");
    }
    return rc;
}

int scn_mask_ignore(scn_mask *m, const char *spec_text, scn_error *err)
{
    return m ? add_spec(&m->ignore, "ignore", spec_text, err) : SCN_ERR_INPUT;
}

int scn_mask_keep(scn_mask *m, const char *spec_text, scn_error *err)
{
    return m ? add_spec(&m->keep, "keep", spec_text, err) : SCN_ERR_INPUT;
}

int scn_mask_add_scenario(scn_mask *m, const scn_scenario *sc, scn_error *err)
{
    if (!m || !sc)
        return SCN_ERR_INPUT;
    const scn__priv *pv = sc->priv_;
    json_t *diff = pv ? json_object_get(pv->doc, "diff") : NULL;
    static const char *const keys[] = {"ignore", "keep"};
    for (size_t k = 0; k < 2; k++) {
        json_t *v;
        size_t i;
        json_array_foreach(json_object_get(diff, keys[k]), i, v)
        {
            int rc = k == 0 ? scn_mask_ignore(m, json_string_value(v), err)
                            : scn_mask_keep(m, json_string_value(v), err);
            if (rc < 0) {
                if (err) {
                    snprintf(err->file, sizeof err->file, "%s", sc->file ? sc->file : "");
                    snprintf(err->field, sizeof err->field, "diff.%s[%zu]", keys[k], i);
                }
                return rc;
            }
        }
    }
    return 0;
}

/* ---- matching ---- */

typedef struct pathel {
    const char *key; /* NULL: an index */
    size_t index;
} pathel;

static bool spec_matches(const spec *s, const char *av, const char *kind, const pathel *path,
                         size_t depth)
{
    if (s->n != depth)
        return false;
    if (s->kind && (!kind || strcmp(s->kind, kind)))
        return false;
    if (s->api_version && (!av || strcmp(s->api_version, av)))
        return false;
    for (size_t i = 0; i < depth; i++) {
        const seg *g = &s->segs[i];
        switch (g->kind) {
        case SEG_KEY:
            if (!path[i].key || strcmp(path[i].key, g->key))
                return false;
            break;
        case SEG_INDEX:
            if (path[i].key || path[i].index != g->index)
                return false;
            break;
        case SEG_ANY_KEY:
            if (!path[i].key)
                return false;
            break;
        case SEG_ANY_INDEX:
            if (path[i].key)
                return false;
            break;
        }
    }
    return true;
}

static bool any_matches(const spec_list *l, const char *av, const char *kind, const pathel *path,
                        size_t depth)
{
    for (size_t i = 0; i < l->n; i++)
        if (spec_matches(&l->v[i], av, kind, path, depth))
            return true;
    return false;
}

static bool digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

/* RFC 3339: 2026-01-01T00:00:00Z, with optional fraction and offset. */
static bool is_time(const char *s)
{
    size_t n = strlen(s);
    if (n < 20 || !digits(s, 4) || s[4] != '-' || !digits(s + 5, 2) || s[7] != '-' ||
        !digits(s + 8, 2) || (s[10] != 'T' && s[10] != 't') || !digits(s + 11, 2) || s[13] != ':' ||
        !digits(s + 14, 2) || s[16] != ':' || !digits(s + 17, 2))
        return false;
    const char *p = s + 19;
    if (*p == '.') {
        p++;
        size_t k = 0;
        while (p[k] >= '0' && p[k] <= '9')
            k++;
        if (k == 0)
            return false;
        p += k;
    }
    if ((*p == 'Z' || *p == 'z') && p[1] == '\0')
        return true;
    return (*p == '+' || *p == '-') && strlen(p) == 6 && digits(p + 1, 2) && p[3] == ':' &&
           digits(p + 4, 2);
}

typedef struct walk {
    const scn_mask *m;
    const json_t *byname;
    const char *av, *kind;
    pathel path[MAX_DEPTH];
} walk;

/* The value that replaces v at path[0..depth), or NULL to keep (and descend). */
static json_t *replacement(walk *w, const json_t *v, size_t depth, bool *drop)
{
    bool kept = any_matches(&w->m->keep, w->av, w->kind, w->path, depth);
    if (any_matches(&w->m->ignore, w->av, w->kind, w->path, depth) ||
        (!kept && any_matches(&w->m->defaults, w->av, w->kind, w->path, depth))) {
        if (depth == 0)
            *drop = true;
        return json_string(MASKED);
    }
    if (json_is_string(v)) {
        json_t *ph = json_object_get(w->byname, json_string_value(v));
        if (ph)
            return json_incref(ph);
        if (!kept && is_time(json_string_value(v)))
            return json_string(MASKED_TIME);
    }
    return NULL;
}

/* Mask v in place (its children); v is a private copy. */
static int mask_children(walk *w, json_t *v, size_t depth)
{
    if (depth >= MAX_DEPTH)
        return 0;
    bool drop = false;
    if (json_is_object(v)) {
        const char *key;
        json_t *child;
        void *it = json_object_iter(v);
        while (it) {
            key = json_object_iter_key(it);
            child = json_object_iter_value(it);
            w->path[depth] = (pathel){.key = key};
            json_t *r = replacement(w, child, depth + 1, &drop);
            if (r) {
                if (json_object_iter_set_new(v, it, r) < 0)
                    return SCN_ERR_NOMEM;
            } else if (mask_children(w, child, depth + 1) < 0) {
                return SCN_ERR_NOMEM;
            }
            it = json_object_iter_next(v, it);
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *child = json_array_get(v, i);
            w->path[depth] = (pathel){.index = i};
            json_t *r = replacement(w, child, depth + 1, &drop);
            if (r) {
                if (json_array_set_new(v, i, r) < 0)
                    return SCN_ERR_NOMEM;
            } else if (mask_children(w, child, depth + 1) < 0) {
                return SCN_ERR_NOMEM;
            }
        }
    }
    return 0;
}

/* ---- generated names ---- */

static const char *meta_str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(json_object_get(o, "metadata"), key));
}

static const char *str_or(const char *s)
{
    return s ? s : "";
}

static void object_key(const json_t *o, const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s|%s|%s|%s", str_or(json_string_value(json_object_get(o, "apiVersion"))),
             str_or(json_string_value(json_object_get(o, "kind"))),
             str_or(meta_str(o, "namespace")), str_or(name));
}

/* A generated object seen for the first time. */
typedef struct fresh {
    const json_t *obj;
    const char *name;
    char group[1200];
    const char *created;
    char *content; /* canonical text without the name, for ties */
    char prefix[300];
} fresh;

/* The part of an object's name that was not generated: its generateName,
 * or for an Event named as client-go names them (<object>.<hex time>) the
 * part up to the dot. NULL if none. */
static const char *prefix_of(const json_t *o, char *buf, size_t len)
{
    const char *g = meta_str(o, "generateName"), *name = meta_str(o, "name");
    const char *kind = json_string_value(json_object_get(o, "kind"));
    if (g && *g) {
        snprintf(buf, len, "%s", g);
        return buf;
    }
    const char *dot = name ? strrchr(name, '.') : NULL;
    if (!kind || strcmp(kind, "Event") || !dot || !dot[1] || (size_t)(dot - name) + 2 > len)
        return NULL;
    for (const char *p = dot + 1; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return NULL;
    snprintf(buf, len, "%.*s", (int)(dot - name + 1), name);
    return buf;
}

static int cmp_fresh(const void *a, const void *b)
{
    const fresh *x = a, *y = b;
    int c = strcmp(x->group, y->group);
    if (!c)
        c = strcmp(str_or(x->created), str_or(y->created));
    if (!c)
        c = strcmp(str_or(x->content), str_or(y->content));
    if (!c)
        c = strcmp(x->name, y->name);
    return c;
}

/* The controller owner (or the first owner) as kind/name, mapped if known. */
static void owner_of(scn_masker *mk, const json_t *o, char *buf, size_t len)
{
    const json_t *refs = json_object_get(json_object_get(o, "metadata"), "ownerReferences");
    const json_t *pick = NULL, *r;
    size_t i;
    json_array_foreach(refs, i, r)
    {
        if (json_is_true(json_object_get(r, "controller"))) {
            pick = r;
            break;
        }
        if (!pick)
            pick = r;
    }
    const char *name = json_string_value(json_object_get(pick, "name"));
    json_t *ph = name ? json_object_get(mk->byname, name) : NULL;
    snprintf(buf, len, "%s/%s", str_or(json_string_value(json_object_get(pick, "kind"))),
             ph ? json_string_value(ph) : str_or(name));
}

static int map_names(scn_masker *mk, const json_t *objects)
{
    size_t n = json_array_size(objects), nf = 0;
    fresh *f = calloc(n ? n : 1, sizeof *f);
    if (!f)
        return SCN_ERR_NOMEM;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *o = json_array_get(objects, i);
        const char *g = prefix_of(o, f[nf].prefix, sizeof f[nf].prefix);
        const char *name = meta_str(o, "name");
        char key[1024], owner[600];
        if (!g || !*g || !name || strncmp(name, g, strlen(g)) || !strcmp(name, g))
            continue;
        object_key(o, name, key, sizeof key);
        if (json_object_get(mk->names, key))
            continue;
        owner_of(mk, o, owner, sizeof owner);
        fresh *e = &f[nf++];
        e->obj = o;
        e->name = name;
        object_key(o, g, e->group, sizeof e->group);
        size_t gl = strlen(e->group);
        snprintf(e->group + gl, sizeof e->group - gl, "|%s", owner);
        e->created = meta_str(o, "creationTimestamp");
        /* the content without the fields that differ anyway */
        json_t *copy = json_deep_copy(o);
        json_t *meta = json_object_get(copy, "metadata");
        static const char *const drop[] = {
            "name", "uid", "resourceVersion", "creationTimestamp", "managedFields", NULL};
        for (size_t k = 0; meta && drop[k]; k++)
            json_object_del(meta, drop[k]);
        e->content = copy ? json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        json_decref(copy);
    }
    qsort(f, nf, sizeof *f, cmp_fresh);
    for (size_t i = 0; i < nf && rc == 0; i++) {
        const char *g = f[i].prefix;
        json_int_t k = json_integer_value(json_object_get(mk->counts, f[i].group)) + 1;
        char ph[600], key[1024];
        snprintf(ph, sizeof ph, "%s<generated-%lld>", g, (long long)k);
        object_key(f[i].obj, f[i].name, key, sizeof key);
        if (json_object_set_new(mk->counts, f[i].group, json_integer(k)) < 0 ||
            json_object_set_new(mk->names, key, json_string(ph)) < 0 ||
            json_object_set_new(mk->byname, f[i].name, json_string(ph)) < 0)
            rc = SCN_ERR_NOMEM;
    }
    for (size_t i = 0; i < nf; i++)
        free(f[i].content);
    free(f);
    return rc;
}

/* ---- the state ---- */

int scn_masker_new(const scn_mask *m, scn_masker **out)
{
    if (!m || !out)
        return SCN_ERR_INPUT;
    scn_masker *mk = calloc(1, sizeof *mk);
    if (!mk)
        return SCN_ERR_NOMEM;
    mk->m = m;
    mk->names = json_object();
    mk->byname = json_object();
    mk->counts = json_object();
    if (!mk->names || !mk->byname || !mk->counts) {
        scn_masker_free(mk);
        return SCN_ERR_NOMEM;
    }
    *out = mk;
    return 0;
}

void scn_masker_free(scn_masker *mk)
{
    if (!mk)
        return;
    json_decref(mk->names);
    json_decref(mk->byname);
    json_decref(mk->counts);
    free(mk);
}

static int cmp_str_field(const json_t *a, const json_t *b, const char *key)
{
    return strcmp(str_or(json_string_value(json_object_get(a, key))),
                  str_or(json_string_value(json_object_get(b, key))));
}

static int cmp_objects(const void *pa, const void *pb)
{
    const json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
    int c = cmp_str_field(a, b, "apiVersion");
    if (!c)
        c = cmp_str_field(a, b, "kind");
    if (!c)
        c = strcmp(str_or(meta_str(a, "namespace")), str_or(meta_str(b, "namespace")));
    if (!c)
        c = strcmp(str_or(meta_str(a, "name")), str_or(meta_str(b, "name")));
    return c;
}

int scn_masker_apply(scn_masker *mk, const json_t *objects, json_t **out)
{
    if (!mk || !out || !json_is_array(objects))
        return SCN_ERR_INPUT;
    int rc = map_names(mk, objects);
    if (rc < 0)
        return rc;
    size_t n = json_array_size(objects), kept = 0;
    json_t **v = calloc(n ? n : 1, sizeof *v);
    if (!v)
        return SCN_ERR_NOMEM;
    walk *w = calloc(1, sizeof *w);
    if (!w) {
        free(v);
        return SCN_ERR_NOMEM;
    }
    w->m = mk->m;
    w->byname = mk->byname;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const json_t *o = json_array_get(objects, i);
        if (!json_is_object(o))
            continue;
        bool drop = false;
        w->av = json_string_value(json_object_get(o, "apiVersion"));
        w->kind = json_string_value(json_object_get(o, "kind"));
        json_t *r = replacement(w, o, 0, &drop);
        json_decref(r);
        if (drop)
            continue;
        json_t *copy = json_deep_copy(o);
        if (!copy || mask_children(w, copy, 0) < 0) {
            json_decref(copy);
            rc = SCN_ERR_NOMEM;
            break;
        }
        v[kept++] = copy;
    }
    free(w);
    json_t *arr = rc == 0 ? json_array() : NULL;
    if (rc == 0 && !arr)
        rc = SCN_ERR_NOMEM;
    if (rc == 0)
        qsort(v, kept, sizeof *v, cmp_objects);
    for (size_t i = 0; i < kept; i++) {
        if (rc == 0 && json_array_append(arr, v[i]) < 0)
            rc = SCN_ERR_NOMEM;
        json_decref(v[i]);
    }
    free(v);
    if (rc < 0) {
        json_decref(arr);
        return rc;
    }
    *out = arr;
    return 0;
}

int scn_state_mask(const scn_mask *m, const json_t *objects, json_t **out)
{
    scn_masker *mk = NULL;
    int rc = scn_masker_new(m, &mk);
    if (rc == 0)
        rc = scn_masker_apply(mk, objects, out);
    scn_masker_free(mk);
    return rc;
}

char *scn_state_text(const json_t *state)
{
    size_t len = 0, cap = 256, i;
    char *buf = malloc(cap);
    const json_t *o;
    if (!buf)
        return NULL;
    buf[0] = '\0';
    json_array_foreach(state, i, o)
    {
        char *line = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        if (!line) {
            free(buf);
            return NULL;
        }
        size_t k = strlen(line);
        if (len + k + 2 > cap) {
            while (len + k + 2 > cap)
                cap *= 2;
            char *p = realloc(buf, cap);
            if (!p) {
                free(line);
                free(buf);
                return NULL;
            }
            buf = p;
        }
        memcpy(buf + len, line, k);
        len += k;
        buf[len++] = '\n';
        buf[len] = '\0';
        free(line);
    }
    return buf;
}

uint64_t scn_state_hash(const json_t *state)
{
    char *t = scn_state_text(state);
    uint64_t h = 1469598103934665603ULL;
    for (const char *p = t; p && *p; p++)
        h = (h ^ (uint64_t)(unsigned char)*p) * 1099511628211ULL;
    free(t);
    return h;
}

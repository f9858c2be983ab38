/*
 * fieldpath.c - field sets, their fieldsV1 codec, and the field set of an
 * object under a schema (built-in type tables, CRD openAPIV3Schema, or
 * deduced). See fieldpath.h. Pure functions: any thread.
 *
 * A set is a tree: each node holds one sorted array of entries, an entry
 * being a path element, whether the path ending there is a member, and the
 * subtree below it. Upstream keeps members and children in two arrays; one
 * array in element order gives the same serialisation (a member that also
 * has children is written with ".").
 */
#include "fieldpath.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kh/jsonfast.h"
#include "types.h"

/* ---- path elements ---- */

int fakeapi__pe_field(fakeapi__pe *pe, const char *name)
{
    memset(pe, 0, sizeof *pe);
    pe->kind = FAKEAPI__PE_FIELD;
    pe->name = strdup(name);
    return pe->name ? 0 : -1;
}

int fakeapi__pe_key(fakeapi__pe *pe, const json_t *keys)
{
    memset(pe, 0, sizeof *pe);
    pe->kind = FAKEAPI__PE_KEY;
    pe->value = json_deep_copy(keys);
    return pe->value ? 0 : -1;
}

int fakeapi__pe_value(fakeapi__pe *pe, const json_t *value)
{
    memset(pe, 0, sizeof *pe);
    pe->kind = FAKEAPI__PE_VALUE;
    pe->value = json_deep_copy(value);
    return pe->value ? 0 : -1;
}

void fakeapi__pe_index(fakeapi__pe *pe, long long index)
{
    memset(pe, 0, sizeof *pe);
    pe->kind = FAKEAPI__PE_INDEX;
    pe->index = index;
}

int fakeapi__pe_copy(fakeapi__pe *dst, const fakeapi__pe *src)
{
    *dst = *src;
    if (src->name && !(dst->name = strdup(src->name)))
        return -1;
    if (src->value)
        json_incref(dst->value); /* elements never change their value */
    return 0;
}

void fakeapi__pe_deinit(fakeapi__pe *pe)
{
    free(pe->name);
    json_decref(pe->value);
    pe->name = NULL;
    pe->value = NULL;
}

static int cmp3(long long a, long long b)
{
    return a < b ? -1 : a > b;
}

static int dcmp(double a, double b)
{
    return a < b ? -1 : a > b;
}

/* Keys of an object in sorted order (a new array of borrowed strings). */
static const char **sorted_keys(const json_t *o, size_t *n)
{
    size_t cnt = json_object_size(o);
    const char **k = malloc((cnt ? cnt : 1) * sizeof *k);
    if (!k)
        return NULL;
    size_t i = 0;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)o, key, v)
    {
        k[i++] = key;
    }
    for (size_t a = 1; a < i; a++) {
        const char *x = k[a];
        size_t b = a;
        while (b > 0 && strcmp(k[b - 1], x) > 0) {
            k[b] = k[b - 1];
            b--;
        }
        k[b] = x;
    }
    *n = i;
    return k;
}

/* Rank of a JSON type in upstream's value order: numbers, strings, bools, lists, maps, null. */
static int type_rank(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_INTEGER:
    case JSON_REAL:
        return 0;
    case JSON_STRING:
        return 1;
    case JSON_TRUE:
    case JSON_FALSE:
        return 2;
    case JSON_ARRAY:
        return 3;
    case JSON_OBJECT:
        return 4;
    default:
        return 5;
    }
}

int fakeapi__fp_value_compare(const json_t *a, const json_t *b)
{
    int ra = type_rank(a), rb = type_rank(b);
    if (ra != rb)
        return ra < rb ? -1 : 1;
    switch (ra) {
    case 0:
        if (json_is_integer(a) && json_is_integer(b))
            return cmp3(json_integer_value(a), json_integer_value(b));
        return dcmp(json_number_value(a), json_number_value(b));
    case 1:
        return strcmp(json_string_value(a), json_string_value(b));
    case 2:
        return cmp3(json_is_true(a), json_is_true(b));
    case 3: {
        size_t na = json_array_size(a), nb = json_array_size(b);
        for (size_t i = 0; i < na && i < nb; i++) {
            int c = fakeapi__fp_value_compare(json_array_get(a, i), json_array_get(b, i));
            if (c)
                return c;
        }
        return cmp3((long long)na, (long long)nb);
    }
    case 4: {
        size_t na, nb;
        const char **ka = sorted_keys(a, &na);
        const char **kb = sorted_keys(b, &nb);
        int c = 0;
        if (!ka || !kb) {
            free(ka);
            free(kb);
            return cmp3((long long)json_object_size(a), (long long)json_object_size(b));
        }
        for (size_t i = 0; !c && i < na && i < nb; i++) {
            c = strcmp(ka[i], kb[i]);
            if (!c)
                c = fakeapi__fp_value_compare(json_object_get(a, ka[i]), json_object_get(b, kb[i]));
        }
        if (!c)
            c = cmp3((long long)na, (long long)nb);
        free(ka);
        free(kb);
        return c;
    }
    default:
        return 0;
    }
}

/* A key element's object is built in sorted order: compare it as a field list. */
static int key_compare(const json_t *a, const json_t *b)
{
    void *ia = json_object_iter((json_t *)a), *ib = json_object_iter((json_t *)b);
    while (ia && ib) {
        int c = strcmp(json_object_iter_key(ia), json_object_iter_key(ib));
        if (!c)
            c = fakeapi__fp_value_compare(json_object_iter_value(ia), json_object_iter_value(ib));
        if (c)
            return c;
        ia = json_object_iter_next((json_t *)a, ia);
        ib = json_object_iter_next((json_t *)b, ib);
    }
    return ia ? 1 : ib ? -1 : 0;
}

int fakeapi__pe_compare(const fakeapi__pe *a, const fakeapi__pe *b)
{
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    switch (a->kind) {
    case FAKEAPI__PE_FIELD:
        return strcmp(a->name, b->name);
    case FAKEAPI__PE_KEY:
        return key_compare(a->value, b->value);
    case FAKEAPI__PE_VALUE:
        return fakeapi__fp_value_compare(a->value, b->value);
    default:
        return cmp3(a->index, b->index);
    }
}

/* v as json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) writes it (the faster writer). */
static int add_json(fakeapi__strbuf *out, const json_t *v)
{
    size_t len = 0;
    char *t = kh_json_dump_compact(v, &len);
    if (!t)
        return -1;
    int rc = fakeapi__strbuf_add(out, t, len);
    free(t);
    return rc;
}

int fakeapi__pe_serialize(const fakeapi__pe *pe, fakeapi__strbuf *out)
{
    switch (pe->kind) {
    case FAKEAPI__PE_FIELD:
        fakeapi__strbuf_adds(out, "f:");
        return fakeapi__strbuf_adds(out, pe->name);
    case FAKEAPI__PE_KEY:
        fakeapi__strbuf_adds(out, "k:");
        return add_json(out, pe->value);
    case FAKEAPI__PE_VALUE:
        fakeapi__strbuf_adds(out, "v:");
        return add_json(out, pe->value);
    default:
        return fakeapi__strbuf_addf(out, "i:%lld", pe->index);
    }
}

/* An object with the keys of o in sorted order (a new reference). */
static json_t *sorted_object(const json_t *o)
{
    size_t n;
    const char **k = sorted_keys(o, &n);
    json_t *out = k ? json_object() : NULL;
    for (size_t i = 0; out && i < n; i++)
        if (json_object_set(out, k[i], json_object_get(o, k[i])) < 0) {
            json_decref(out);
            out = NULL;
        }
    free(k);
    return out;
}

int fakeapi__pe_parse(fakeapi__pe *pe, const char *text)
{
    memset(pe, 0, sizeof *pe);
    if (strlen(text) < 2 || text[1] != ':')
        return -1;
    const char *rest = text + 2;
    switch (text[0]) {
    case 'f':
        return fakeapi__pe_field(pe, rest);
    case 'k': {
        json_t *v = kh_json_loadb(rest, strlen(rest), 0, NULL);
        if (!json_is_object(v)) {
            json_decref(v);
            return -1;
        }
        pe->kind = FAKEAPI__PE_KEY;
        pe->value = sorted_object(v);
        json_decref(v);
        return pe->value ? 0 : -1;
    }
    case 'v': {
        json_t *v = json_loads(rest, JSON_DECODE_ANY, NULL);
        if (!v)
            return -1;
        pe->kind = FAKEAPI__PE_VALUE;
        pe->value = v;
        return 0;
    }
    case 'i': {
        char *end;
        long long i = strtoll(rest, &end, 10);
        if (end == rest || *end || i < 0)
            return -1;
        fakeapi__pe_index(pe, i);
        return 0;
    }
    default:
        return -1;
    }
}

/* upstream value.ToString: strings quoted, the rest as JSON. */
static int add_value_string(fakeapi__strbuf *out, const json_t *v)
{
    return add_json(out, v);
}

int fakeapi__fp_path_string(const fakeapi__pe *path, size_t n, fakeapi__strbuf *out)
{
    for (size_t i = 0; i < n; i++) {
        const fakeapi__pe *pe = &path[i];
        switch (pe->kind) {
        case FAKEAPI__PE_FIELD:
            fakeapi__strbuf_addf(out, ".%s", pe->name);
            break;
        case FAKEAPI__PE_KEY: {
            fakeapi__strbuf_adds(out, "[");
            const char *k;
            json_t *v;
            bool first = true;
            json_object_foreach(pe->value, k, v)
            {
                fakeapi__strbuf_addf(out, "%s%s=", first ? "" : ",", k);
                add_value_string(out, v);
                first = false;
            }
            fakeapi__strbuf_adds(out, "]");
            break;
        }
        case FAKEAPI__PE_VALUE:
            fakeapi__strbuf_adds(out, "[=");
            add_value_string(out, pe->value);
            fakeapi__strbuf_adds(out, "]");
            break;
        default:
            fakeapi__strbuf_addf(out, "[%lld]", pe->index);
        }
    }
    return out->failed ? -1 : 0;
}

/* ---- sets ---- */

typedef struct entry {
    fakeapi__pe pe;
    bool member;
    fakeapi__fpset *child; /* NULL or non-empty */
} entry;

struct fakeapi__fpset {
    entry *v;
    size_t n, cap;
};

fakeapi__fpset *fakeapi__fpset_new(void)
{
    return calloc(1, sizeof(fakeapi__fpset));
}

void fakeapi__fpset_free(fakeapi__fpset *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        fakeapi__pe_deinit(&s->v[i].pe);
        fakeapi__fpset_free(s->v[i].child);
    }
    free(s->v);
    free(s);
}

/* Index of pe in s, or -(insertion point) - 1. */
static long find(const fakeapi__fpset *s, const fakeapi__pe *pe)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = fakeapi__pe_compare(&s->v[mid].pe, pe);
        if (!c)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -(long)lo - 1;
}

/* Append an entry at the end (callers append in order); takes pe and child. */
static int push(fakeapi__fpset *s, fakeapi__pe *pe, bool member, fakeapi__fpset *child)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 4;
        entry *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return -1;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n].pe = *pe;
    s->v[s->n].member = member;
    s->v[s->n].child = child;
    s->n++;
    return 0;
}

/* Append a copy of e's element with the given member flag and child (taken). */
static int push_copy(fakeapi__fpset *s, const entry *e, bool member, fakeapi__fpset *child)
{
    if (child && !child->n) {
        fakeapi__fpset_free(child);
        child = NULL;
    }
    if (!member && !child)
        return 0;
    fakeapi__pe pe;
    if (fakeapi__pe_copy(&pe, &e->pe) < 0 || push(s, &pe, member, child) < 0) {
        fakeapi__pe_deinit(&pe);
        fakeapi__fpset_free(child);
        return -1;
    }
    return 0;
}

fakeapi__fpset *fakeapi__fpset_copy(const fakeapi__fpset *s)
{
    fakeapi__fpset *out = fakeapi__fpset_new();
    for (size_t i = 0; out && i < s->n; i++) {
        fakeapi__fpset *c = NULL;
        if (s->v[i].child && !(c = fakeapi__fpset_copy(s->v[i].child)))
            goto fail;
        if (push_copy(out, &s->v[i], s->v[i].member, c) < 0)
            goto fail;
    }
    return out;
fail:
    fakeapi__fpset_free(out);
    return NULL;
}

int fakeapi__fpset_insert(fakeapi__fpset *s, const fakeapi__pe *path, size_t n)
{
    if (!n)
        return 0;
    long i = find(s, &path[0]);
    if (i < 0) {
        size_t at = (size_t)(-i - 1);
        fakeapi__pe pe;
        if (fakeapi__pe_copy(&pe, &path[0]) < 0 || push(s, &pe, false, NULL) < 0) {
            fakeapi__pe_deinit(&pe);
            return -1;
        }
        entry e = s->v[s->n - 1];
        memmove(&s->v[at + 1], &s->v[at], (s->n - 1 - at) * sizeof *s->v);
        s->v[at] = e;
        i = (long)at;
    }
    entry *e = &s->v[i];
    if (n == 1) {
        e->member = true;
        return 0;
    }
    if (!e->child && !(e->child = fakeapi__fpset_new()))
        return -1;
    return fakeapi__fpset_insert(e->child, path + 1, n - 1);
}

bool fakeapi__fpset_has(const fakeapi__fpset *s, const fakeapi__pe *path, size_t n)
{
    for (size_t d = 0; s && d < n; d++) {
        long i = find(s, &path[d]);
        if (i < 0)
            return false;
        if (d + 1 == n)
            return s->v[i].member;
        s = s->v[i].child;
    }
    return false;
}

bool fakeapi__fpset_has_prefix(const fakeapi__fpset *s, const fakeapi__pe *path, size_t n)
{
    for (size_t d = 0; s && d < n; d++) {
        long i = find(s, &path[d]);
        if (i < 0)
            return false;
        s = s->v[i].child;
        if (d + 1 == n)
            return true;
    }
    return n == 0;
}

bool fakeapi__fpset_empty(const fakeapi__fpset *s)
{
    return !s || !s->n;
}

size_t fakeapi__fpset_size(const fakeapi__fpset *s)
{
    size_t n = 0;
    for (size_t i = 0; s && i < s->n; i++)
        n += s->v[i].member + fakeapi__fpset_size(s->v[i].child);
    return n;
}

bool fakeapi__fpset_equal(const fakeapi__fpset *a, const fakeapi__fpset *b)
{
    size_t na = a ? a->n : 0, nb = b ? b->n : 0;
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++) {
        if (fakeapi__pe_compare(&a->v[i].pe, &b->v[i].pe) || a->v[i].member != b->v[i].member ||
            !fakeapi__fpset_equal(a->v[i].child, b->v[i].child))
            return false;
    }
    return true;
}

const fakeapi__fpset *fakeapi__fpset_child(const fakeapi__fpset *s, const fakeapi__pe *pe)
{
    long i = s ? find(s, pe) : -1;
    return i < 0 ? NULL : s->v[i].child;
}

fakeapi__fpset *fakeapi__fpset_only(const fakeapi__fpset *s, const fakeapi__pe *pe)
{
    fakeapi__fpset *out = fakeapi__fpset_new();
    long i = s && out ? find(s, pe) : -1;
    if (i >= 0) {
        fakeapi__fpset *c = NULL;
        if ((s->v[i].child && !(c = fakeapi__fpset_copy(s->v[i].child))) ||
            push_copy(out, &s->v[i], s->v[i].member, c) < 0) {
            fakeapi__fpset_free(out);
            return NULL;
        }
    }
    return out;
}

bool fakeapi__fpset_member(const fakeapi__fpset *s, const fakeapi__pe *pe)
{
    long i = s ? find(s, pe) : -1;
    return i >= 0 && s->v[i].member;
}

typedef enum { OP_UNION, OP_DIFF, OP_INTER, OP_RDIFF } setop;

static fakeapi__fpset *combine(const fakeapi__fpset *a, const fakeapi__fpset *b, setop op);

/* The child sets of two matching entries under op (NULL when empty, or *err on ENOMEM). */
static fakeapi__fpset *combine_child(const fakeapi__fpset *a, const fakeapi__fpset *b, setop op,
                                     bool *err)
{
    fakeapi__fpset *c = NULL;
    if (a || b) {
        static const fakeapi__fpset none = {0};
        c = combine(a ? a : &none, b ? b : &none, op);
        if (!c)
            *err = true;
    }
    return c;
}

static fakeapi__fpset *combine(const fakeapi__fpset *a, const fakeapi__fpset *b, setop op)
{
    fakeapi__fpset *out = fakeapi__fpset_new();
    if (!out)
        return NULL;
    size_t i = 0, j = 0;
    bool err = false;
    while (!err && (i < a->n || j < b->n)) {
        int c = i >= a->n ? 1 : j >= b->n ? -1 : fakeapi__pe_compare(&a->v[i].pe, &b->v[j].pe);
        const entry *ea = c <= 0 ? &a->v[i] : NULL;
        const entry *eb = c >= 0 ? &b->v[j] : NULL;
        int rc = 0;
        if (ea && eb) {
            bool m;
            fakeapi__fpset *ch;
            switch (op) {
            case OP_UNION:
                m = ea->member || eb->member;
                ch = combine_child(ea->child, eb->child, op, &err);
                break;
            case OP_DIFF:
                m = ea->member && !eb->member;
                ch = combine_child(ea->child, eb->child, op, &err);
                break;
            case OP_INTER:
                m = ea->member && eb->member;
                ch = ea->child && eb->child ? combine_child(ea->child, eb->child, op, &err) : NULL;
                break;
            default:
                m = ea->member && !eb->member;
                ch = eb->member ? NULL : combine_child(ea->child, eb->child, op, &err);
                if (eb->member)
                    m = false;
            }
            rc = err ? -1 : push_copy(out, ea, m, ch);
        } else if (ea && op != OP_INTER) {
            fakeapi__fpset *ch = ea->child ? fakeapi__fpset_copy(ea->child) : NULL;
            err = ea->child && !ch;
            rc = err ? -1 : push_copy(out, ea, ea->member, ch);
        } else if (eb && op == OP_UNION) {
            fakeapi__fpset *ch = eb->child ? fakeapi__fpset_copy(eb->child) : NULL;
            err = eb->child && !ch;
            rc = err ? -1 : push_copy(out, eb, eb->member, ch);
        }
        if (rc < 0)
            err = true;
        i += c <= 0;
        j += c >= 0;
    }
    if (err) {
        fakeapi__fpset_free(out);
        return NULL;
    }
    return out;
}

fakeapi__fpset *fakeapi__fpset_union(const fakeapi__fpset *a, const fakeapi__fpset *b)
{
    return combine(a, b, OP_UNION);
}

fakeapi__fpset *fakeapi__fpset_difference(const fakeapi__fpset *a, const fakeapi__fpset *b)
{
    return combine(a, b, OP_DIFF);
}

fakeapi__fpset *fakeapi__fpset_intersection(const fakeapi__fpset *a, const fakeapi__fpset *b)
{
    return combine(a, b, OP_INTER);
}

fakeapi__fpset *fakeapi__fpset_recursive_difference(const fakeapi__fpset *a,
                                                    const fakeapi__fpset *b)
{
    return combine(a, b, OP_RDIFF);
}

/* Take entry i out of s (its element and subtree freed). */
static void drop_at(fakeapi__fpset *s, size_t i)
{
    fakeapi__pe_deinit(&s->v[i].pe);
    fakeapi__fpset_free(s->v[i].child);
    memmove(&s->v[i], &s->v[i + 1], (s->n - i - 1) * sizeof *s->v);
    s->n--;
}

bool fakeapi__fpset_subtract(fakeapi__fpset *s, const fakeapi__fpset *b)
{
    bool changed = false;
    if (!s || !b)
        return false;
    size_t i = 0, j = 0;
    while (i < s->n && j < b->n) {
        int c = fakeapi__pe_compare(&s->v[i].pe, &b->v[j].pe);
        if (c < 0) {
            i++;
            continue;
        }
        if (c > 0) {
            j++;
            continue;
        }
        entry *e = &s->v[i];
        if (e->member && b->v[j].member) {
            e->member = false;
            changed = true;
        }
        if (e->child && b->v[j].child && fakeapi__fpset_subtract(e->child, b->v[j].child)) {
            changed = true;
            if (!e->child->n) {
                fakeapi__fpset_free(e->child);
                e->child = NULL;
            }
        }
        j++;
        if (!e->member && !e->child)
            drop_at(s, i);
        else
            i++;
    }
    return changed;
}

int fakeapi__fpset_add(fakeapi__fpset *s, const fakeapi__fpset *b, bool *changed)
{
    if (!b || !b->n)
        return 0;
    /* The elements both have: members and subtrees. */
    size_t extra = 0;
    for (size_t i = 0, j = 0; j < b->n;) {
        int c = i >= s->n ? 1 : fakeapi__pe_compare(&s->v[i].pe, &b->v[j].pe);
        if (c > 0)
            extra++;
        if (!c) {
            entry *e = &s->v[i];
            const entry *eb = &b->v[j];
            if (eb->member && !e->member) {
                e->member = true;
                *changed = true;
            }
            if (eb->child && !e->child) {
                if (!(e->child = fakeapi__fpset_copy(eb->child)))
                    return -1;
                *changed = true;
            } else if (eb->child && fakeapi__fpset_add(e->child, eb->child, changed) < 0) {
                return -1;
            }
        }
        i += c <= 0;
        j += c >= 0;
    }
    /* The ones only b has go in, in order: merged into a new array. */
    if (extra) {
        /* Copy first (s untouched on ENOMEM), then merge. */
        entry *add = calloc(extra, sizeof *add);
        entry *v = malloc((s->n + extra) * sizeof *v);
        size_t na = 0;
        bool oom = !add || !v;
        for (size_t i = 0, j = 0; !oom && j < b->n;) {
            int c = i >= s->n ? 1 : fakeapi__pe_compare(&s->v[i].pe, &b->v[j].pe);
            if (c > 0) {
                const entry *eb = &b->v[j];
                entry *ne = &add[na++];
                ne->member = eb->member;
                oom = fakeapi__pe_copy(&ne->pe, &eb->pe) < 0 ||
                      (eb->child && !(ne->child = fakeapi__fpset_copy(eb->child)));
            }
            i += c <= 0;
            j += c >= 0;
        }
        if (oom) {
            for (size_t x = 0; add && x < na; x++) {
                fakeapi__pe_deinit(&add[x].pe);
                fakeapi__fpset_free(add[x].child);
            }
            free(add);
            free(v);
            return -1;
        }
        size_t i = 0, x = 0, k = 0;
        while (i < s->n || x < na) {
            if (x >= na || (i < s->n && fakeapi__pe_compare(&s->v[i].pe, &add[x].pe) < 0))
                v[k++] = s->v[i++];
            else
                v[k++] = add[x++];
        }
        free(add);
        free(s->v);
        s->v = v;
        s->n = s->cap = k;
        *changed = true;
    }
    return 0;
}

bool fakeapi__fpset_remove(fakeapi__fpset *s, const fakeapi__pe *path, size_t n)
{
    if (!s || !n)
        return false;
    long i = find(s, &path[0]);
    if (i < 0)
        return false;
    entry *e = &s->v[i];
    bool changed = false;
    if (n == 1) {
        changed = e->member;
        e->member = false;
    } else if (e->child && fakeapi__fpset_remove(e->child, path + 1, n - 1)) {
        changed = true;
        if (!e->child->n) {
            fakeapi__fpset_free(e->child);
            e->child = NULL;
        }
    }
    if (!e->member && !e->child)
        drop_at(s, (size_t)i);
    return changed;
}

#define MAX_DEPTH 128

typedef struct iter {
    fakeapi__pe path[MAX_DEPTH];
    size_t n;
    fakeapi__fpset_fn fn;
    void *ud;
} iter;

static int iterate(const fakeapi__fpset *s, iter *it)
{
    if (it->n >= MAX_DEPTH)
        return 0;
    for (size_t i = 0; i < s->n; i++) {
        if (!s->v[i].member)
            continue;
        it->path[it->n] = s->v[i].pe;
        int rc = it->fn(it->path, it->n + 1, it->ud);
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < s->n; i++) {
        if (!s->v[i].child)
            continue;
        it->path[it->n++] = s->v[i].pe;
        int rc = iterate(s->v[i].child, it);
        it->n--;
        if (rc)
            return rc;
    }
    return 0;
}

int fakeapi__fpset_iterate(const fakeapi__fpset *s, fakeapi__fpset_fn fn, void *ud)
{
    iter *it = malloc(sizeof *it);
    if (!it)
        return -1;
    it->n = 0;
    it->fn = fn;
    it->ud = ud;
    int rc = s ? iterate(s, it) : 0;
    free(it);
    return rc;
}

/* Write s into out; key is scratch space shared down the tree. */
static int to_json(const fakeapi__fpset *s, json_t *out, fakeapi__strbuf *key)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < s->n; i++) {
        const entry *e = &s->v[i];
        key->len = 0;
        if (fakeapi__pe_serialize(&e->pe, key) < 0 || key->failed)
            return -1;
        json_t *o = json_object();
        /* The key goes in first: key is written over below. Names come
         * from JSON keys and values from the JSON writer: UTF-8 already. */
        if (!o || json_object_setn_new_nocheck(out, key->data, key->len, o) < 0)
            return -1;
        if (e->member && e->child)
            rc = json_object_set_new_nocheck(o, ".", json_object());
        if (!rc && e->child)
            rc = to_json(e->child, o, key);
    }
    return rc;
}

json_t *fakeapi__fpset_to_json(const fakeapi__fpset *s)
{
    json_t *o = json_object();
    fakeapi__strbuf key = {0};
    if (o && s && to_json(s, o, &key) < 0) {
        json_decref(o);
        o = NULL;
    }
    fakeapi__strbuf_deinit(&key);
    return o;
}

char *fakeapi__fpset_to_text(const fakeapi__fpset *s)
{
    json_t *o = fakeapi__fpset_to_json(s);
    char *t = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return t;
}

/*
 * Whether key k (parsed as pe) is written as fakeapi__pe_serialize writes
 * it. A field name always is; keys and values are written again to see.
 */
static bool key_canonical(const char *k, const fakeapi__pe *pe)
{
    if (pe->kind == FAKEAPI__PE_FIELD)
        return true;
    fakeapi__strbuf b = {0};
    bool same = fakeapi__pe_serialize(pe, &b) == 0 && !b.failed && b.data && !strcmp(b.data, k);
    fakeapi__strbuf_deinit(&b);
    return same;
}

/* Is the "." member v, the at-th of fields at depth, where to_json writes
 * it: first, as {}, in a member that has children? */
static bool dot_canonical(const json_t *fields, const json_t *v, int depth, size_t at)
{
    return depth > 0 && at == 1 && json_is_object(v) && !json_object_size(v) &&
           json_object_size(fields) >= 2;
}

/* What a fieldsV1 value says of its key: a member itself ({} or "."
 * inside), and whether it has children. */
static void shape_of(const json_t *v, bool *member, bool *children)
{
    const json_t *dot = json_object_get(v, ".");
    *member = !json_object_size(v) || dot;
    *children = json_object_size(v) > (dot ? 1u : 0u);
}

/*
 * Parse one level of fieldsV1 into s. *canon (when not NULL) is cleared
 * unless fields is exactly what to_json writes for the result: keys in
 * element order, each as serialised, "." first and only beside children.
 */
static int from_json(const json_t *fields, fakeapi__fpset *s, int depth, bool *canon, char *err,
                     size_t errlen)
{
    const char *k;
    json_t *v;
    size_t at = 0;
    if (depth > MAX_DEPTH) {
        snprintf(err, errlen, "fieldsV1 nested too deeply");
        return -1;
    }
    json_object_foreach((json_t *)fields, k, v)
    {
        at++;
        if (!strcmp(k, ".")) {
            if (canon && !dot_canonical(fields, v, depth, at))
                *canon = false;
            continue;
        }
        if (!json_is_object(v)) {
            snprintf(err, errlen, "fieldsV1: the value of %s is not an object", k);
            return -1;
        }
        fakeapi__pe pe;
        if (fakeapi__pe_parse(&pe, k) < 0) {
            snprintf(err, errlen, "fieldsV1: invalid path element %s", k);
            fakeapi__pe_deinit(&pe);
            return -1;
        }
        bool member, children;
        shape_of(v, &member, &children);
        int rc = 0;
        bool last = s->n && fakeapi__pe_compare(&s->v[s->n - 1].pe, &pe) < 0;
        /* A member without children is written {}, never {".":{}}. */
        if (canon && *canon &&
            ((s->n && !last) || (member && !children && json_object_size(v)) ||
             !key_canonical(k, &pe)))
            *canon = false;
        long i = -1;
        if (!s->n || last) {
            /* In order (as written): append, the element taken. */
            if (push(s, &pe, member, NULL) < 0) {
                fakeapi__pe_deinit(&pe);
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            memset(&pe, 0, sizeof pe);
            i = (long)s->n - 1;
        } else {
            if (member)
                rc = fakeapi__fpset_insert(s, &pe, 1);
            if (!rc && children && (i = find(s, &pe)) < 0) {
                rc = fakeapi__fpset_insert(s, &pe, 1);
                i = find(s, &pe);
                if (!rc)
                    s->v[i].member = false;
            }
        }
        if (!rc && children) {
            entry *e = &s->v[i];
            if (!rc && !e->child && !(e->child = fakeapi__fpset_new()))
                rc = -1;
            if (!rc)
                rc = from_json(v, e->child, depth + 1, canon, err, errlen);
            if (!rc && !e->child->n) {
                fakeapi__fpset_free(e->child);
                e->child = NULL;
            }
        }
        fakeapi__pe_deinit(&pe);
        if (rc < 0) {
            if (!*err)
                snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    return 0;
}

/*
 * One level of fieldsV1 checked as from_json reads it, nothing built: 0 if
 * it parses (*canon cleared unless canonical), -1 with a message in err.
 */
static int check_json(const json_t *fields, int depth, bool *canon, char *err, size_t errlen)
{
    const char *k;
    json_t *v;
    size_t at = 0;
    fakeapi__pe prev = {0};
    bool have_prev = false, prev_owned = false;
    int rc = 0;
    if (depth > MAX_DEPTH) {
        snprintf(err, errlen, "fieldsV1 nested too deeply");
        return -1;
    }
    json_object_foreach((json_t *)fields, k, v)
    {
        at++;
        if (!strcmp(k, ".")) {
            if (!dot_canonical(fields, v, depth, at))
                *canon = false;
            continue;
        }
        if (!json_is_object(v)) {
            snprintf(err, errlen, "fieldsV1: the value of %s is not an object", k);
            rc = -1;
            break;
        }
        fakeapi__pe pe = {0};
        bool owned = !(k[0] == 'f' && k[1] == ':');
        if (!owned) {
            pe.kind = FAKEAPI__PE_FIELD;
            pe.name = (char *)k + 2; /* borrowed */
        } else if (fakeapi__pe_parse(&pe, k) < 0) {
            snprintf(err, errlen, "fieldsV1: invalid path element %s", k);
            fakeapi__pe_deinit(&pe);
            rc = -1;
            break;
        }
        bool member, children;
        shape_of(v, &member, &children);
        if (*canon && ((have_prev && fakeapi__pe_compare(&prev, &pe) >= 0) ||
                       (member && !children && json_object_size(v)) || !key_canonical(k, &pe)))
            *canon = false;
        if (prev_owned)
            fakeapi__pe_deinit(&prev);
        prev = pe;
        prev_owned = owned;
        have_prev = true;
        if (children && (rc = check_json(v, depth + 1, canon, err, errlen)) < 0)
            break;
    }
    if (prev_owned)
        fakeapi__pe_deinit(&prev);
    return rc;
}

int fakeapi__fpset_check_json(const json_t *fields, bool *canonical, char *err, size_t errlen)
{
    if (errlen)
        *err = 0;
    *canonical = true;
    if (!json_is_object(fields)) {
        snprintf(err, errlen, "fieldsV1 is not an object");
        return -1;
    }
    return check_json(fields, 0, canonical, err, errlen);
}

/* Whether v (a fieldsV1 value) says its path is a member. */
static bool json_member(const json_t *v)
{
    return !json_object_size(v) || json_object_get(v, ".");
}

bool fakeapi__fpset_within_json(const fakeapi__fpset *s, const json_t *fields)
{
    if (!s || !s->n)
        return true;
    fakeapi__strbuf key = {0};
    bool within = true;
    for (size_t i = 0; within && i < s->n; i++) {
        const entry *e = &s->v[i];
        key.len = 0;
        const json_t *v = NULL;
        if (fakeapi__pe_serialize(&e->pe, &key) == 0 && !key.failed)
            v = json_object_get(fields, key.data);
        within = v && (!e->member || json_member(v)) &&
                 (!e->child || fakeapi__fpset_within_json(e->child, v));
    }
    fakeapi__strbuf_deinit(&key);
    return within;
}

bool fakeapi__fpset_meets_json(const fakeapi__fpset *s, const json_t *fields)
{
    if (!s || !json_object_size(fields))
        return false;
    fakeapi__strbuf key = {0};
    bool meets = false;
    for (size_t i = 0; !meets && i < s->n; i++) {
        const entry *e = &s->v[i];
        key.len = 0;
        if (fakeapi__pe_serialize(&e->pe, &key) < 0 || key.failed) {
            meets = true; /* cannot tell: say so, the caller decodes */
            break;
        }
        const json_t *v = json_object_get(fields, key.data);
        if (!v)
            continue;
        meets =
            (e->member && json_member(v)) || (e->child && fakeapi__fpset_meets_json(e->child, v));
    }
    fakeapi__strbuf_deinit(&key);
    return meets;
}

int fakeapi__fpset_from_json(const json_t *fields, fakeapi__fpset **out, char *err, size_t errlen)
{
    return fakeapi__fpset_from_json_canon(fields, out, NULL, err, errlen);
}

int fakeapi__fpset_from_json_canon(const json_t *fields, fakeapi__fpset **out, bool *canonical,
                                   char *err, size_t errlen)
{
    if (errlen)
        *err = 0;
    if (canonical)
        *canonical = true;
    if (!json_is_object(fields)) {
        snprintf(err, errlen, "fieldsV1 is not an object");
        return -1;
    }
    fakeapi__fpset *s = fakeapi__fpset_new();
    if (!s || from_json(fields, s, 0, canonical, err, errlen) < 0) {
        if (!s)
            snprintf(err, errlen, "out of memory");
        fakeapi__fpset_free(s);
        return -1;
    }
    *out = s;
    return 0;
}

/* ---- schemas ---- */

void fakeapi__fptype_describe(const fakeapi__fptype *t, const json_t *v, fakeapi__fpnode *out)
{
    memset(out, 0, sizeof *out);
    if (t->ops) {
        t->ops->describe(t, v, out);
        return;
    }
    /* Deduced: objects are granular maps, lists atomic, the rest leaves. */
    if (json_is_object(v))
        out->kind = FAKEAPI__FPK_MAP;
    else if (json_is_array(v))
        out->kind = FAKEAPI__FPK_LIST;
}

bool fakeapi__fptype_child(const fakeapi__fptype *t, const char *key, fakeapi__fptype *out)
{
    if (t->ops)
        return t->ops->child(t, key, out);
    *out = fakeapi__fptype_deduced();
    return false;
}

void fakeapi__fptype_elem(const fakeapi__fptype *t, fakeapi__fptype *out)
{
    if (t->ops)
        t->ops->elem(t, out);
    else
        *out = fakeapi__fptype_deduced();
}

fakeapi__fptype fakeapi__fptype_deduced(void)
{
    fakeapi__fptype t = {0};
    return t;
}

/* Split "a,b" into node->keys (sorted), copied into node->keybuf. */
static void set_keys(fakeapi__fpnode *node, const char *list)
{
    size_t len = strlen(list);
    if (len >= sizeof node->keybuf)
        len = sizeof node->keybuf - 1;
    memcpy(node->keybuf, list, len);
    node->keybuf[len] = 0;
    char *p = node->keybuf;
    node->nkeys = 0;
    while (*p && node->nkeys < FAKEAPI__FP_MAX_KEYS) {
        node->keys[node->nkeys++] = p;
        char *comma = strchr(p, ',');
        if (!comma)
            break;
        *comma = 0;
        p = comma + 1;
    }
}

static void sort_keys(fakeapi__fpnode *node)
{
    for (size_t a = 1; a < node->nkeys; a++) {
        const char *x = node->keys[a];
        size_t b = a;
        while (b > 0 && strcmp(node->keys[b - 1], x) > 0) {
            node->keys[b] = node->keys[b - 1];
            b--;
        }
        node->keys[b] = x;
    }
}

/*
 * Built-in types. a: a message (a struct or special value), or NULL; b: a
 * repeated or map field (the container), or NULL. Both NULL: a scalar.
 */
static const fakeapi__fpops builtin_ops;

static fakeapi__fptype bt(const fakeapi__tmsg *m, const fakeapi__tfield *f)
{
    fakeapi__fptype t = {&builtin_ops, m, f};
    /* A Go slice type's JSON is its field 1: describe that container. */
    if (m && !f && m->special == FAKEAPI__S_SLICE && m->nfields) {
        t.a = NULL;
        t.b = &m->fields[0];
    }
    return t;
}

/* The type of a value of element type of field f (a message or a scalar). */
static fakeapi__fptype bt_elem_of(const fakeapi__tfield *f)
{
    if (f->type == FAKEAPI__T_MSG)
        return bt(fakeapi__type_at(f->msg), NULL);
    return bt(NULL, NULL);
}

static void builtin_describe(const fakeapi__fptype *t, const json_t *v, fakeapi__fpnode *out)
{
    const fakeapi__tmsg *m = t->a;
    const fakeapi__tfield *f = t->b;
    (void)v;
    /* A list or map without omitempty is there (null) in every Go object. */
    if (f)
        out->implicit = !(f->flags & FAKEAPI__F_OMITEMPTY);
    if (f && (f->flags & FAKEAPI__F_MAP)) {
        out->kind = FAKEAPI__FPK_MAP;
        out->atomic = f->list == FAKEAPI__L_ATOMIC;
        return;
    }
    if (f) {
        out->kind = FAKEAPI__FPK_LIST;
        bool scalar = f->type != FAKEAPI__T_MSG;
        switch (f->list) {
        case FAKEAPI__L_SET:
            out->list = FAKEAPI__FPL_SET;
            break;
        case FAKEAPI__L_MAP:
            out->list = FAKEAPI__FPL_MAP;
            set_keys(out, f->list_keys ? f->list_keys : f->merge_key ? f->merge_key : "");
            break;
        case FAKEAPI__L_ATOMIC:
            out->list = FAKEAPI__FPL_ATOMIC;
            break;
        default:
            /* No +listType: what +patchStrategy=merge implies, else atomic. */
            if ((f->patch & FAKEAPI__P_MERGE) && f->merge_key && !scalar) {
                out->list = FAKEAPI__FPL_MAP;
                set_keys(out, f->merge_key);
            } else if ((f->patch & FAKEAPI__P_MERGE) && scalar) {
                out->list = FAKEAPI__FPL_SET;
            } else {
                out->list = FAKEAPI__FPL_ATOMIC;
            }
        }
        if (out->list == FAKEAPI__FPL_MAP && !out->nkeys)
            out->list = FAKEAPI__FPL_ATOMIC;
        sort_keys(out);
        return;
    }
    if (!m) {
        out->kind = FAKEAPI__FPK_SCALAR;
        return;
    }
    switch (m->special) {
    case FAKEAPI__S_NONE:
        out->kind = FAKEAPI__FPK_STRUCT;
        out->atomic = m->atomic;
        /*
         * The tables do not say which message fields are Go pointers; a
         * value struct is the common case, and a granular one always exists
         * in the Go object.
         */
        out->implicit = !m->atomic;
        break;
    default:
        /* Times, quantities, int-or-string, raw JSON: values, owned whole. */
        out->kind = FAKEAPI__FPK_SCALAR;
    }
}

static bool builtin_child(const fakeapi__fptype *t, const char *key, fakeapi__fptype *out)
{
    const fakeapi__tmsg *m = t->a;
    const fakeapi__tfield *f = t->b;
    if (f && (f->flags & FAKEAPI__F_MAP)) {
        *out = bt_elem_of(f);
        return false;
    }
    if (m && !f && m->special == FAKEAPI__S_NONE) {
        const fakeapi__tfield *cf = fakeapi__type_field_json(m, key, strlen(key), NULL);
        if (cf && !(cf->flags & FAKEAPI__F_NOJSON)) {
            if (cf->flags & (FAKEAPI__F_REPEATED | FAKEAPI__F_MAP))
                *out = bt(NULL, cf);
            else
                *out = bt_elem_of(cf);
            return true;
        }
    }
    /* Not in the tables: read it as untyped data. */
    *out = fakeapi__fptype_deduced();
    return false;
}

static void builtin_elem(const fakeapi__fptype *t, fakeapi__fptype *out)
{
    const fakeapi__tfield *f = t->b;
    *out = f ? bt_elem_of(f) : fakeapi__fptype_deduced();
}

static json_t *builtin_key_default(const fakeapi__fptype *t, const char *name)
{
    const fakeapi__tfield *f = t->b;
    if (!f || f->type != FAKEAPI__T_MSG)
        return NULL;
    /*
     * The one defaulted list-map key among the built-in types: protocol
     * (+default="TCP" on ContainerPort, ServicePort, EndpointPort, ...). The
     * type tables carry no defaults, so it is named here.
     */
    const fakeapi__tmsg *m = fakeapi__type_at(f->msg);
    if (m && !strcmp(name, "protocol") && fakeapi__type_field_json(m, "protocol", 8, NULL))
        return json_string("TCP");
    return NULL;
}

static const fakeapi__fpops builtin_ops = {builtin_describe, builtin_child, builtin_elem,
                                           builtin_key_default};

fakeapi__fptype fakeapi__fptype_builtin(const void *msg)
{
    if (!msg)
        return fakeapi__fptype_deduced();
    return bt(msg, NULL);
}

/*
 * CRD schemas. a: a JSONSchemaProps node; b: non-NULL at the object's root,
 * where apiVersion, kind and metadata are typed as every object's.
 */
static const fakeapi__fpops crd_ops;

static fakeapi__fptype ct(const json_t *node)
{
    fakeapi__fptype t = {&crd_ops, node, NULL};
    return t;
}

static bool crd_untyped(const json_t *n)
{
    return !n || (json_is_true(json_object_get(n, "x-kubernetes-preserve-unknown-fields")) &&
                  !json_object_get(n, "properties") &&
                  !json_object_get(n, "additionalProperties") && !json_object_get(n, "items"));
}

static void crd_describe(const fakeapi__fptype *t, const json_t *v, fakeapi__fpnode *out)
{
    const json_t *n = t->a;
    if (t->b) {
        out->kind = FAKEAPI__FPK_STRUCT;
        return;
    }
    if (crd_untyped(n)) {
        fakeapi__fptype d = fakeapi__fptype_deduced();
        fakeapi__fptype_describe(&d, v, out);
        return;
    }
    const char *type = json_string_value(json_object_get(n, "type"));
    bool atomic_map =
        json_is_string(json_object_get(n, "x-kubernetes-map-type")) &&
        !strcmp(json_string_value(json_object_get(n, "x-kubernetes-map-type")), "atomic");
    if (json_is_true(json_object_get(n, "x-kubernetes-int-or-string"))) {
        out->kind = FAKEAPI__FPK_SCALAR;
    } else if ((type && !strcmp(type, "array")) || json_object_get(n, "items")) {
        out->kind = FAKEAPI__FPK_LIST;
        const char *lt = json_string_value(json_object_get(n, "x-kubernetes-list-type"));
        out->list = FAKEAPI__FPL_ATOMIC;
        if (lt && !strcmp(lt, "set")) {
            out->list = FAKEAPI__FPL_SET;
        } else if (lt && !strcmp(lt, "map")) {
            size_t i;
            json_t *k;
            size_t off = 0;
            json_array_foreach(json_object_get(n, "x-kubernetes-list-map-keys"), i, k)
            {
                const char *s = json_string_value(k);
                size_t len = s ? strlen(s) : 0;
                if (!s || off + len + 1 > sizeof out->keybuf || out->nkeys >= FAKEAPI__FP_MAX_KEYS)
                    continue;
                memcpy(out->keybuf + off, s, len + 1);
                out->keys[out->nkeys++] = out->keybuf + off;
                off += len + 1;
            }
            out->list = out->nkeys ? FAKEAPI__FPL_MAP : FAKEAPI__FPL_ATOMIC;
            sort_keys(out);
        }
    } else if (json_object_get(n, "properties")) {
        out->kind = FAKEAPI__FPK_STRUCT;
        out->atomic = atomic_map;
    } else if (json_is_object(json_object_get(n, "additionalProperties"))) {
        out->kind = FAKEAPI__FPK_MAP;
        out->atomic = atomic_map;
    } else if (type && !strcmp(type, "object")) {
        out->kind = FAKEAPI__FPK_MAP;
        out->atomic = atomic_map;
    } else {
        out->kind = FAKEAPI__FPK_SCALAR;
    }
}

static bool crd_child(const fakeapi__fptype *t, const char *key, fakeapi__fptype *out)
{
    const json_t *n = t->a;
    if (t->b) {
        if (!strcmp(key, "metadata")) {
            *out = bt(fakeapi__type_find("k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta"), NULL);
            return true;
        }
        if (!strcmp(key, "apiVersion") || !strcmp(key, "kind")) {
            *out = bt(NULL, NULL);
            return true;
        }
    }
    if (crd_untyped(n) && !t->b) {
        *out = fakeapi__fptype_deduced();
        return false;
    }
    const json_t *p = json_object_get(json_object_get(n, "properties"), key);
    if (p) {
        *out = ct(p);
        return true;
    }
    const json_t *ap = json_object_get(n, "additionalProperties");
    if (json_is_object(ap)) {
        *out = ct(ap);
        return false;
    }
    *out = fakeapi__fptype_deduced();
    return false;
}

static void crd_elem(const fakeapi__fptype *t, fakeapi__fptype *out)
{
    const json_t *items = json_object_get(t->a, "items");
    *out = items ? ct(items) : fakeapi__fptype_deduced();
}

static json_t *crd_key_default(const fakeapi__fptype *t, const char *name)
{
    const json_t *items = json_object_get(t->a, "items");
    const json_t *d =
        json_object_get(json_object_get(json_object_get(items, "properties"), name), "default");
    return d ? json_incref((json_t *)d) : NULL;
}

static const fakeapi__fpops crd_ops = {crd_describe, crd_child, crd_elem, crd_key_default};

fakeapi__fptype fakeapi__fptype_crd(const json_t *schema)
{
    fakeapi__fptype t = {&crd_ops, schema, (const void *)1};
    if (!schema)
        t.a = NULL;
    return t;
}

/* ---- the field set of an object ---- */

static bool is_scalar(const json_t *v)
{
    return !json_is_object(v) && !json_is_array(v);
}

int fakeapi__fp_list_item_pe(const fakeapi__fptype *list, const fakeapi__fpnode *node,
                             const json_t *item, unsigned flags, fakeapi__pe *out, char *err,
                             size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (node->list == FAKEAPI__FPL_SET) {
        if (!is_scalar(item) && (flags & FAKEAPI__FP_STRICT)) {
            snprintf(err, errlen, "expected a scalar list item in a set");
            return -1;
        }
        return fakeapi__pe_value(out, item) < 0 ? (snprintf(err, errlen, "out of memory"), -1) : 0;
    }
    if (!json_is_object(item)) {
        snprintf(err, errlen, "associative list with keys has an element that is not a map");
        return -1;
    }
    json_t *keys = json_object();
    if (!keys) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < node->nkeys; i++) {
        const char *k = node->keys[i];
        json_t *v = json_object_get(item, k);
        if (v) {
            json_object_set(keys, k, v);
            continue;
        }
        json_t *d = list->ops && list->ops->key_default ? list->ops->key_default(list, k) : NULL;
        if (d) {
            json_object_set_new(keys, k, d);
        } else if (flags & FAKEAPI__FP_STRICT) {
            snprintf(err, errlen,
                     "associative list with keys has an element that omits key field \"%s\" "
                     "(and doesn't have default value)",
                     k);
            json_decref(keys);
            return -1;
        }
    }
    out->kind = FAKEAPI__PE_KEY;
    out->value = keys;
    return 0;
}

typedef struct walker {
    fakeapi__pe path[MAX_DEPTH];
    size_t n;
    unsigned flags;
    fakeapi__fpset *set;
    char *err;
    size_t errlen;
} walker;

static int fail_at(walker *w, const char *msg)
{
    fakeapi__strbuf b = {0};
    fakeapi__fp_path_string(w->path, w->n, &b);
    snprintf(w->err, w->errlen, "%s: %s", b.data ? b.data : ".", msg);
    fakeapi__strbuf_deinit(&b);
    return -1;
}

static int insert_here(walker *w)
{
    return fakeapi__fpset_insert(w->set, w->path, w->n) < 0 ? fail_at(w, "out of memory") : 0;
}

static int walk(walker *w, const fakeapi__fptype *t, const json_t *v);

static int walk_list(walker *w, const fakeapi__fptype *t, const fakeapi__fpnode *node,
                     const json_t *v)
{
    size_t n = json_array_size(v);
    fakeapi__pe *pes = calloc(n ? n : 1, sizeof *pes);
    fakeapi__fptype et;
    int rc = 0;
    if (!pes)
        return fail_at(w, "out of memory");
    fakeapi__fptype_elem(t, &et);
    for (size_t i = 0; i < n && !rc; i++) {
        char msg[300];
        if (fakeapi__fp_list_item_pe(t, node, json_array_get(v, i), w->flags, &pes[i], msg,
                                     sizeof msg) < 0) {
            char m2[340];
            snprintf(m2, sizeof m2, "element %zu: %s", i, msg);
            rc = fail_at(w, m2);
        }
    }
    for (size_t i = 0; i < n && !rc; i++) {
        bool dup = false;
        for (size_t j = 0; j < n && !dup; j++)
            dup = j != i && !fakeapi__pe_compare(&pes[i], &pes[j]);
        if (dup && (w->flags & FAKEAPI__FP_STRICT)) {
            fakeapi__strbuf b = {0};
            fakeapi__fp_path_string(&pes[i], 1, &b);
            char m2[400];
            snprintf(m2, sizeof m2, "duplicate entries for key %s", b.data ? b.data : "");
            fakeapi__strbuf_deinit(&b);
            rc = fail_at(w, m2);
            break;
        }
        if (w->n >= MAX_DEPTH) {
            rc = fail_at(w, "nested too deeply");
            break;
        }
        w->path[w->n++] = pes[i];
        /* A duplicated item is owned whole. */
        if (!dup)
            rc = walk(w, &et, json_array_get(v, i));
        if (!rc)
            rc = insert_here(w);
        w->n--;
    }
    for (size_t i = 0; i < n; i++)
        fakeapi__pe_deinit(&pes[i]);
    free(pes);
    return rc;
}

static int walk(walker *w, const fakeapi__fptype *t, const json_t *v)
{
    fakeapi__fpnode node;
    fakeapi__fptype_describe(t, v, &node);
    switch (node.kind) {
    case FAKEAPI__FPK_STRUCT:
    case FAKEAPI__FPK_MAP: {
        if (!json_is_object(v) || node.atomic)
            return w->n ? insert_here(w) : 0;
        const char *k;
        json_t *cv;
        json_object_foreach((json_t *)v, k, cv)
        {
            fakeapi__fptype ctype;
            bool named = fakeapi__fptype_child(t, k, &ctype);
            if (w->n >= MAX_DEPTH)
                return fail_at(w, "nested too deeply");
            fakeapi__pe *pe = &w->path[w->n];
            memset(pe, 0, sizeof *pe);
            pe->kind = FAKEAPI__PE_FIELD;
            pe->name = (char *)k; /* borrowed: copied on insert */
            w->n++;
            int rc = walk(w, &ctype, cv);
            if (!rc &&
                (json_is_null(cv) || (json_is_object(cv) && !json_object_size(cv)) || !named))
                rc = insert_here(w);
            w->n--;
            if (rc)
                return rc;
        }
        return 0;
    }
    case FAKEAPI__FPK_LIST:
        if (!json_is_array(v) || node.list == FAKEAPI__FPL_ATOMIC)
            return w->n ? insert_here(w) : 0;
        return walk_list(w, t, &node, v);
    default:
        return w->n ? insert_here(w) : 0;
    }
}

int fakeapi__fp_object_set(const fakeapi__fptype *t, const json_t *obj, unsigned flags,
                           fakeapi__fpset **out, char *err, size_t errlen)
{
    walker *w = calloc(1, sizeof *w);
    fakeapi__fpset *s = fakeapi__fpset_new();
    int rc = -1;
    if (!w || !s) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    w->flags = flags;
    w->set = s;
    w->err = err;
    w->errlen = errlen;
    rc = walk(w, t, obj);
    if (!rc) {
        *out = s;
        s = NULL;
    }
out:
    fakeapi__fpset_free(s);
    free(w);
    return rc;
}

static fakeapi__fpset *named(const fakeapi__fpset *s, const fakeapi__fptype *t)
{
    fakeapi__fpset *out = fakeapi__fpset_new();
    fakeapi__fpnode node;
    fakeapi__fptype_describe(t, NULL, &node);
    for (size_t i = 0; out && i < s->n; i++) {
        const entry *e = &s->v[i];
        fakeapi__fptype ctype = fakeapi__fptype_deduced();
        bool is_named = false;
        if (e->pe.kind == FAKEAPI__PE_FIELD)
            is_named =
                fakeapi__fptype_child(t, e->pe.name, &ctype) && node.kind == FAKEAPI__FPK_STRUCT;
        else
            fakeapi__fptype_elem(t, &ctype);
        fakeapi__fpset *c = NULL;
        if (e->child && !(c = named(e->child, &ctype)))
            goto fail;
        if (push_copy(out, e, e->member || (is_named && e->child), c) < 0)
            goto fail;
    }
    return out;
fail:
    fakeapi__fpset_free(out);
    return NULL;
}

fakeapi__fpset *fakeapi__fpset_named_members(const fakeapi__fpset *s, const fakeapi__fptype *t)
{
    return named(s, t);
}

/*
 * table_cells.c - the shared pieces of the Table printers: field access,
 * bounded cell text, and the formats the real server's printers reuse
 * (translateTimestampSince, labels.FormatLabels, LabelSelector strings,
 * container names and images). See table_cells.h.
 *
 * Thread-safety: reentrant; arguments are only read.
 */
#include "table_cells.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timefmt.h"

const char fakeapi__desc_name[] =
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name "
    "automatically.";
const char fakeapi__desc_age[] =
    "CreationTimestamp is a timestamp representing the server time when this object was created.";

/* ---- reading JSON ---- */

const json_t *fakeapi__dig(const json_t *obj, const char *path)
{
    char key[128];
    const json_t *cur = obj;
    while (cur && *path) {
        size_t n = strcspn(path, ".");
        if (n >= sizeof key)
            return NULL;
        memcpy(key, path, n);
        key[n] = '\0';
        cur = json_object_get(cur, key);
        path += n;
        if (*path == '.')
            path++;
    }
    return cur;
}

const char *fakeapi__dig_str(const json_t *obj, const char *path)
{
    return json_string_value(fakeapi__dig(obj, path));
}

json_int_t fakeapi__dig_int(const json_t *obj, const char *path, json_int_t dflt)
{
    const json_t *v = fakeapi__dig(obj, path);
    if (json_is_integer(v))
        return json_integer_value(v);
    if (json_is_real(v))
        return (json_int_t)json_real_value(v);
    return dflt;
}

bool fakeapi__has_condition(const json_t *obj, const char *path, const char *type)
{
    size_t i;
    const json_t *c;
    json_array_foreach(fakeapi__dig(obj, path), i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && !strcmp(t, type)) {
            const char *st = json_string_value(json_object_get(c, "status"));
            return st && !strcmp(st, "True");
        }
    }
    return false;
}

/* ---- bounded cell text ---- */

void fakeapi__cb_init(fakeapi__cellbuf *b)
{
    b->len = 0;
    b->s[0] = '\0';
}

void fakeapi__cb_add(fakeapi__cellbuf *b, const char *s)
{
    size_t n = strlen(s);
    if (n > sizeof b->s - 1 - b->len)
        n = sizeof b->s - 1 - b->len;
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void fakeapi__cb_addf(fakeapi__cellbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = sizeof b->s - b->len;
    int n = vsnprintf(b->s + b->len, room, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->s[b->len] = '\0';
        return;
    }
    b->len += (size_t)n < room ? (size_t)n : room - 1;
}

void fakeapi__cb_join(fakeapi__cellbuf *b, const char *sep, const char *s)
{
    if (b->len)
        fakeapi__cb_add(b, sep);
    fakeapi__cb_add(b, s);
}

json_t *fakeapi__cb_or(const fakeapi__cellbuf *b, const char *dflt)
{
    return json_string(b->len ? b->s : dflt);
}

json_t *fakeapi__str_or(const char *s, const char *dflt)
{
    return json_string(s && *s ? s : dflt);
}

/* ---- formats ---- */

json_t *fakeapi__since_cell(const char *ts, int64_t now_ns, const char *absent)
{
    char buf[32];
    int64_t t;
    if (!ts || !*ts)
        return json_string(absent);
    if (fakeapi__parse_time(ts, &t) < 0)
        return json_string("<invalid>");
    fakeapi__human_duration(now_ns - t, buf, sizeof buf);
    return json_string(buf);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The keys of a JSON object, sorted; *n their count. NULL when empty or out of memory. */
static const char **sorted_keys(const json_t *map, size_t *n)
{
    *n = 0;
    size_t size = json_object_size(map);
    if (!size)
        return NULL;
    const char **keys = malloc(size * sizeof *keys);
    if (!keys)
        return NULL;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)map, k, v)
    {
        if (*n < size)
            keys[(*n)++] = k;
    }
    qsort(keys, *n, sizeof *keys, cmp_str);
    return keys;
}

void fakeapi__label_map_text(const json_t *map, fakeapi__cellbuf *b)
{
    size_t n;
    const char **keys = sorted_keys(map, &n);
    for (size_t i = 0; i < n; i++) {
        const char *val = json_string_value(json_object_get(map, keys[i]));
        if (b->len)
            fakeapi__cb_add(b, ",");
        fakeapi__cb_addf(b, "%s=%s", keys[i], val ? val : "");
    }
    free(keys);
}

/* One selector requirement, to be sorted by key as labels.Selector.String() does. */
typedef struct req {
    const char *key;
    const json_t *expr; /* a matchExpressions entry, or NULL */
    const char *value;  /* for a matchLabels entry */
} req;

static int cmp_req(const void *a, const void *b)
{
    return strcmp(((const req *)a)->key, ((const req *)b)->key);
}

static void req_text(const req *r, fakeapi__cellbuf *b)
{
    if (!r->expr) {
        fakeapi__cb_addf(b, "%s=%s", r->key, r->value ? r->value : "");
        return;
    }
    const char *op = json_string_value(json_object_get(r->expr, "operator"));
    if (!op)
        op = "";
    if (!strcmp(op, "Exists")) {
        fakeapi__cb_add(b, r->key);
    } else if (!strcmp(op, "DoesNotExist")) {
        fakeapi__cb_addf(b, "!%s", r->key);
    } else {
        /* In / NotIn: values sorted, as sets are printed. */
        const json_t *vals = json_object_get(r->expr, "values");
        size_t n = json_array_size(vals), m = 0;
        const char **v = n ? malloc(n * sizeof *v) : NULL;
        for (size_t i = 0; v && i < n; i++)
            if (json_string_value(json_array_get(vals, i)))
                v[m++] = json_string_value(json_array_get(vals, i));
        if (v)
            qsort(v, m, sizeof *v, cmp_str);
        fakeapi__cb_addf(b, "%s %s (", r->key, !strcmp(op, "NotIn") ? "notin" : "in");
        for (size_t i = 0; i < m; i++) {
            if (i)
                fakeapi__cb_add(b, ",");
            fakeapi__cb_add(b, v[i]);
        }
        fakeapi__cb_add(b, ")");
        free(v);
    }
}

void fakeapi__selector_text(const json_t *sel, fakeapi__cellbuf *b)
{
    const json_t *labels = json_object_get(sel, "matchLabels");
    const json_t *exprs = json_object_get(sel, "matchExpressions");
    size_t n = json_object_size(labels) + json_array_size(exprs), m = 0;
    if (!n)
        return;
    req *reqs = malloc(n * sizeof *reqs);
    if (!reqs)
        return;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)labels, k, v)
    {
        if (m < n)
            reqs[m++] = (req){k, NULL, json_string_value(v)};
    }
    size_t i;
    const json_t *e;
    json_array_foreach(exprs, i, e)
    {
        const char *key = json_string_value(json_object_get(e, "key"));
        if (key && m < n)
            reqs[m++] = (req){key, e, NULL};
    }
    qsort(reqs, m, sizeof *reqs, cmp_req);
    for (size_t j = 0; j < m; j++) {
        if (b->len)
            fakeapi__cb_add(b, ",");
        req_text(&reqs[j], b);
    }
    free(reqs);
}

json_t *fakeapi__containers_cell(const json_t *podspec, const char *field)
{
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(podspec, "containers"), i, c)
    {
        const char *s = json_string_value(json_object_get(c, field));
        if (i)
            fakeapi__cb_add(&b, ",");
        fakeapi__cb_add(&b, s ? s : "");
    }
    return json_string(b.s);
}

/* ---- generic cells ---- */

json_t *fakeapi__cell_name(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    const char *name = fakeapi__dig_str(o, "metadata.name");
    return json_string(name ? name : "");
}

json_t *fakeapi__cell_age(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)arg;
    return fakeapi__since_cell(fakeapi__dig_str(o, "metadata.creationTimestamp"), now_ns,
                               "<unknown>");
}

json_t *fakeapi__cell_created_at(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    /* The default convertor prints the time itself, RFC 3339 in UTC. */
    int64_t t;
    char buf[40];
    const char *ts = fakeapi__dig_str(o, "metadata.creationTimestamp");
    if (!ts || fakeapi__parse_time(ts, &t) < 0)
        return json_string("0001-01-01T00:00:00Z"); /* Go's zero time, as the real one prints */
    fakeapi__fmt_time(t, buf, sizeof buf);
    return json_string(buf);
}

json_t *fakeapi__cell_str(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    const fakeapi__field *f = arg;
    return fakeapi__str_or(fakeapi__dig_str(o, f->path), f->dflt ? f->dflt : "");
}

json_t *fakeapi__cell_int(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    const fakeapi__field *f = arg;
    return json_integer(fakeapi__dig_int(o, f->path, f->idflt));
}

json_t *fakeapi__cell_bool(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    const fakeapi__field *f = arg;
    const json_t *v = fakeapi__dig(o, f->path);
    return json_boolean(json_is_boolean(v) ? json_is_true(v) : f->idflt != 0);
}

json_t *fakeapi__cell_count(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    const fakeapi__field *f = arg;
    const json_t *v = fakeapi__dig(o, f->path);
    size_t n = json_is_object(v) ? json_object_size(v) : json_array_size(v);
    return json_integer((json_int_t)n);
}

json_t *fakeapi__cell_since(const json_t *o, int64_t now_ns, const void *arg)
{
    const fakeapi__field *f = arg;
    return fakeapi__since_cell(fakeapi__dig_str(o, f->path), now_ns,
                               f->dflt ? f->dflt : "<unknown>");
}

json_t *fakeapi__cell_labels(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    fakeapi__label_map_text(fakeapi__dig(o, arg), &b);
    return fakeapi__cb_or(&b, "<none>");
}

json_t *fakeapi__cell_selector(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    fakeapi__selector_text(fakeapi__dig(o, arg), &b);
    return fakeapi__cb_or(&b, "<none>");
}

json_t *fakeapi__cell_names(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    return fakeapi__containers_cell(fakeapi__dig(o, arg), "name");
}

json_t *fakeapi__cell_images(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    return fakeapi__containers_cell(fakeapi__dig(o, arg), "image");
}

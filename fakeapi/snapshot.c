#include "snapshot.h"

#include <stdlib.h>
#include <string.h>
#include <jansson.h>

/* Rows keyed "ns\x1fname" -> text (the separator sorts below any name byte). */
typedef struct snap {
    json_t *rows; /* object: key -> string (object text) */
    json_t *undo; /* array of [type, ns, name, prev] after rv, oldest first */
    const char *ns;
} snap;

static void row_key(char *buf, size_t len, const char *ns, const char *name)
{
    snprintf(buf, len, "%s\x1f%s", ns, name);
}

static int collect_current(void *ud, const char *ns, const char *name, const char *labels,
                           const char *text, size_t len)
{
    (void)labels;
    snap *sn = ud;
    char k[600];
    row_key(k, sizeof k, ns, name);
    return json_object_set_new(sn->rows, k, json_stringn(text, len));
}

static int collect_history(void *ud, uint64_t rv, int type, const char *key, const char *ns,
                           const char *name, const char *text, const char *prev)
{
    (void)rv, (void)key, (void)text;
    snap *sn = ud;
    if (sn->ns && strcmp(sn->ns, ns))
        return 0;
    return json_array_append_new(sn->undo, json_pack("[i,s,s,s?]", type, ns, name, prev));
}

/* Walk the history backwards, turning the current rows into those at rv. */
static void undo_history(snap *sn)
{
    for (size_t i = json_array_size(sn->undo); i-- > 0;) {
        json_t *u = json_array_get(sn->undo, i);
        char k[600];
        row_key(k, sizeof k, json_string_value(json_array_get(u, 1)),
                json_string_value(json_array_get(u, 2)));
        json_t *prev = json_array_get(u, 3);
        if (json_integer_value(json_array_get(u, 0)) == FAKEAPI__EV_ADDED || !json_is_string(prev))
            json_object_del(sn->rows, k);
        else
            json_object_set(sn->rows, k, prev);
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Labels of an object text, as the store keeps them (compact JSON or NULL). */
static char *labels_of(const char *text)
{
    json_t *obj = json_loads(text, 0, NULL);
    json_t *l = json_object_get(json_object_get(obj, "metadata"), "labels");
    char *out = json_is_object(l) && json_object_size(l) ? json_dumps(l, JSON_COMPACT) : NULL;
    json_decref(obj);
    return out;
}

static int emit(snap *sn, const char *after_ns, const char *after_name, fakeapi__store_scan_fn cb,
                void *ud)
{
    size_t n = json_object_size(sn->rows), i = 0;
    const char **keys = malloc((n ? n : 1) * sizeof *keys);
    if (!keys)
        return -1;
    const char *k;
    json_t *v;
    json_object_foreach(sn->rows, k, v) keys[i++] = k;
    qsort(keys, n, sizeof *keys, cmp_str);
    char after[600] = "";
    if (after_name)
        row_key(after, sizeof after, after_ns ? after_ns : "", after_name);
    int rc = 0;
    for (i = 0; i < n && rc == 0; i++) {
        if (after_name && strcmp(keys[i], after) <= 0)
            continue;
        const char *sep = strchr(keys[i], '\x1f');
        char ns[300];
        snprintf(ns, sizeof ns, "%.*s", (int)(sep - keys[i]), keys[i]);
        const char *text = json_string_value(json_object_get(sn->rows, keys[i]));
        char *labels = labels_of(text);
        rc = cb(ud, ns, sep + 1, labels, text, strlen(text));
        free(labels);
    }
    free(keys);
    return rc < 0 ? rc : 0;
}

int fakeapi__snapshot_scan(fakeapi__store *s, const char *key, const char *ns, uint64_t rv,
                           const char *after_ns, const char *after_name, fakeapi__store_scan_fn cb,
                           void *ud)
{
    snap sn = {.rows = json_object(), .undo = json_array(), .ns = ns};
    int rc = -1;
    if (!sn.rows || !sn.undo)
        goto out;
    if (fakeapi__store_scan(s, key, ns, NULL, NULL, collect_current, &sn) < 0 ||
        fakeapi__store_history(s, key, rv, collect_history, &sn) < 0)
        goto out;
    undo_history(&sn);
    rc = emit(&sn, after_ns, after_name, cb, ud);
out:
    json_decref(sn.rows);
    json_decref(sn.undo);
    return rc;
}

typedef struct find_one {
    const char *name;
    char *text;
    size_t len;
} find_one;

static int find_visit(void *ud, const char *ns, const char *name, const char *labels,
                      const char *text, size_t len)
{
    (void)ns, (void)labels;
    find_one *f = ud;
    if (strcmp(name, f->name))
        return 0;
    f->text = strndup(text, len);
    f->len = len;
    return f->text ? 1 : -1;
}

int fakeapi__snapshot_get(fakeapi__store *s, const char *key, const char *ns, const char *name,
                          uint64_t rv, char **text, size_t *len)
{
    find_one f = {.name = name};
    if (fakeapi__snapshot_scan(s, key, ns ? ns : "", rv, NULL, NULL, find_visit, &f) < 0)
        return -1;
    if (!f.text)
        return 1;
    *text = f.text;
    if (len)
        *len = f.len;
    return 0;
}

uint64_t fakeapi__stale_rev(fakeapi__store *s, uint64_t revision, uint64_t lag)
{
    uint64_t now = fakeapi__store_rev(s), at = revision;
    if (!at && lag)
        at = now > lag ? now - lag : 1;
    if (at && at < fakeapi__store_compacted(s))
        at = fakeapi__store_compacted(s);
    return at && at < now ? at : 0;
}

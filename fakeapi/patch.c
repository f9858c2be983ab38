/*
 * patch.c - JSON patch (RFC 6902), JSON merge patch (RFC 7386) and the
 * Kubernetes strategic merge patch, over jansson values.
 *
 * Every entry point deep-copies the document, applies the whole patch to the
 * copy and hands the copy out only when everything applied: a failure leaves
 * the caller's document and *out as they were. The patch is only read. It is
 * never increfed either, so a patch shared between threads stays untouched;
 * the casts in ro() exist because jansson's iterators are not const-correct.
 *
 * Strategic merge follows k8s.io/apimachinery/pkg/util/strategicpatch,
 * including its list order (normalizeElementOrder): elements named by the
 * patch come in the patch's order, elements only on the server keep theirs,
 * and a server-only element goes before a patch element only when both were
 * in the original list in that order. So a new element lands in front of the
 * old ones, as on a real API server.
 */
#include "patch.h"

#include "types.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOT_FOUND SIZE_MAX
#define SMP_PATH_MAX 4096

#define DIR_PATCH "$patch"
#define DIR_RETAIN "$retainKeys"
#define DIR_ORDER "$setElementOrder/"
#define DIR_DELPRIM "$deleteFromPrimitiveList/"

/* ---- shared helpers ---------------------------------------------------- */

static json_t *ro(const json_t *j)
{
    return (json_t *)j;
}

__attribute__((format(printf, 3, 0))) static void vfail(char *err, size_t errlen, const char *fmt,
                                                        va_list ap)
{
    if (err && errlen > 0)
        vsnprintf(err, errlen, fmt, ap);
}

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t errlen, const char *fmt,
                                                      ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static bool has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool json_eq(const json_t *a, const json_t *b);

static bool object_eq(const json_t *a, const json_t *b)
{
    const char *k;
    json_t *v;
    if (json_object_size(a) != json_object_size(b))
        return false;
    json_object_foreach(ro(a), k, v)
    {
        if (!json_eq(v, json_object_get(b, k)))
            return false;
    }
    return true;
}

static bool array_eq(const json_t *a, const json_t *b)
{
    size_t i;
    json_t *v;
    if (json_array_size(a) != json_array_size(b))
        return false;
    json_array_foreach(a, i, v)
    {
        if (!json_eq(v, json_array_get(b, i)))
            return false;
    }
    return true;
}

/* Deep equality where 1 and 1.0 are the same number (RFC 6902 4.6), which
 * jansson's json_equal() does not grant. */
static bool json_eq(const json_t *a, const json_t *b)
{
    if (!a || !b)
        return false;
    if (json_is_integer(a) && json_is_integer(b))
        return json_integer_value(a) == json_integer_value(b);
    if (json_is_number(a) && json_is_number(b))
        return json_number_value(a) == json_number_value(b);
    if (json_is_object(a) && json_is_object(b))
        return object_eq(a, b);
    if (json_is_array(a) && json_is_array(b))
        return array_eq(a, b);
    return json_equal(a, b);
}

/* ---- RFC 6901 pointers ------------------------------------------------- */

/* Where a pointer leads: the container holding the target and the last
 * reference token, unescaped. parent is NULL for "" (the whole document). */
typedef struct {
    json_t *parent;
    char *tok; /* owned */
} ptr_loc;

/* Unescape the token after the '/' at *p into tok (strlen(*p) + 1 bytes)
 * and move *p to the next '/' or the end. */
static int ptr_token(const char **p, char *tok)
{
    const char *s = *p + 1;
    size_t n = 0;
    for (; *s && *s != '/'; s++) {
        if (*s != '~') {
            tok[n++] = *s;
            continue;
        }
        if (s[1] != '0' && s[1] != '1')
            return -1;
        tok[n++] = s[1] == '0' ? '~' : '/';
        s++;
    }
    tok[n] = '\0';
    *p = s;
    return 0;
}

/* An array index as RFC 6901 spells it: "0", or digits with no leading zero. */
static int parse_index(const char *tok, size_t *out)
{
    size_t v = 0;
    if (!*tok || (tok[0] == '0' && tok[1]))
        return -1;
    for (const char *s = tok; *s; s++) {
        if (*s < '0' || *s > '9' || v > (SIZE_MAX - 9) / 10)
            return -1;
        v = v * 10 + (size_t)(*s - '0');
    }
    *out = v;
    return 0;
}

static json_t *child_get(json_t *parent, const char *tok)
{
    size_t i;
    if (json_is_object(parent))
        return json_object_get(parent, tok);
    if (json_is_array(parent) && parse_index(tok, &i) == 0)
        return json_array_get(parent, i);
    return NULL;
}

/* Returns 0, -1 for a malformed pointer (message in err), or 1 when a
 * container on the way is missing (no message: the caller words it). */
static int ptr_locate(json_t *root, const char *ptr, ptr_loc *loc, char *err, size_t errlen)
{
    const char *p = ptr;
    json_t *cur = root;
    loc->parent = NULL;
    loc->tok = NULL;
    if (*ptr == '\0')
        return 0;
    if (*ptr != '/')
        return fail(err, errlen, "invalid JSON pointer \"%s\": must start with '/'", ptr);
    loc->tok = malloc(strlen(ptr) + 1);
    if (!loc->tok)
        return fail(err, errlen, "out of memory");
    while (ptr_token(&p, loc->tok) == 0) {
        if (*p == '\0') {
            loc->parent = cur;
            return 0;
        }
        if (!(cur = child_get(cur, loc->tok))) {
            free(loc->tok);
            loc->tok = NULL;
            return 1;
        }
    }
    free(loc->tok);
    loc->tok = NULL;
    return fail(err, errlen, "invalid JSON pointer \"%s\": '~' must be followed by 0 or 1", ptr);
}

static json_t *loc_get(json_t *root, const ptr_loc *loc)
{
    return loc->parent ? child_get(loc->parent, loc->tok) : root;
}

/* ---- RFC 6902 operations ---------------------------------------------- */

/* Find the value at path: 0 with *found (borrowed, NULL when absent), or -1
 * for a malformed pointer. */
static int jp_lookup(json_t *root, const char *path, json_t **found, char *err, size_t errlen)
{
    ptr_loc loc;
    int rc = ptr_locate(root, path, &loc, err, errlen);
    *found = rc == 0 ? loc_get(root, &loc) : NULL;
    free(loc.tok);
    return rc < 0 ? -1 : 0;
}

static int loc_insert(json_t *arr, const char *tok, json_t *value, const char *path, char *err,
                      size_t errlen)
{
    size_t i = json_array_size(arr);
    if (strcmp(tok, "-") != 0 && (parse_index(tok, &i) != 0 || i > json_array_size(arr))) {
        json_decref(value);
        return fail(err, errlen, "path %s: array index out of bounds or malformed", path);
    }
    if (json_array_insert_new(arr, i, value) != 0)
        return fail(err, errlen, "path %s: cannot insert", path);
    return 0;
}

/* Add value (stolen) at path, as RFC 6902 4.1 defines it. */
static int jp_insert(json_t **root, const char *path, json_t *value, char *err, size_t errlen)
{
    ptr_loc loc;
    int rc = ptr_locate(*root, path, &loc, err, errlen);
    if (rc != 0) {
        json_decref(value);
        return rc < 0 ? -1 : fail(err, errlen, "path %s not found", path);
    }
    if (!loc.parent) {
        json_decref(*root);
        *root = value;
    } else if (json_is_object(loc.parent)) {
        if (json_object_set_new(loc.parent, loc.tok, value) != 0)
            rc = fail(err, errlen, "path %s: cannot set member", path);
    } else if (json_is_array(loc.parent)) {
        rc = loc_insert(loc.parent, loc.tok, value, path, err, errlen);
    } else {
        json_decref(value);
        rc = fail(err, errlen, "path %s: parent is not an object or array", path);
    }
    free(loc.tok);
    return rc;
}

/* Remove the value at path and hand it to the caller in *taken. */
static int jp_take(json_t **root, const char *path, json_t **taken, char *err, size_t errlen)
{
    ptr_loc loc;
    size_t i;
    int rc = ptr_locate(*root, path, &loc, err, errlen);
    if (rc < 0)
        return -1;
    if (rc == 0 && !loc.parent)
        return fail(err, errlen, "cannot remove the whole document");
    *taken = rc == 0 ? json_incref(loc_get(*root, &loc)) : NULL;
    if (!*taken) {
        free(loc.tok);
        return fail(err, errlen, "path %s not found", path);
    }
    if (json_is_object(loc.parent))
        json_object_del(loc.parent, loc.tok);
    else if (parse_index(loc.tok, &i) == 0)
        json_array_remove(loc.parent, i);
    free(loc.tok);
    return 0;
}

static int op_add(json_t **root, const char *path, const char *from, const json_t *value, char *err,
                  size_t errlen)
{
    json_t *v = json_deep_copy(value);
    (void)from;
    if (!v)
        return fail(err, errlen, "out of memory");
    return jp_insert(root, path, v, err, errlen);
}

static int op_remove(json_t **root, const char *path, const char *from, const json_t *value,
                     char *err, size_t errlen)
{
    json_t *old;
    (void)from;
    (void)value;
    if (jp_take(root, path, &old, err, errlen) != 0)
        return -1;
    json_decref(old);
    return 0;
}

/* Replace in place rather than remove+add, so that an object member keeps
 * its position. */
static int op_replace(json_t **root, const char *path, const char *from, const json_t *value,
                      char *err, size_t errlen)
{
    ptr_loc loc;
    size_t i;
    json_t *v = NULL;
    int rc = ptr_locate(*root, path, &loc, err, errlen);
    (void)from;
    if (rc < 0)
        return -1;
    if (rc > 0 || !loc_get(*root, &loc))
        rc = fail(err, errlen, "path %s not found", path);
    else if (!(v = json_deep_copy(value)))
        rc = fail(err, errlen, "out of memory");
    else if (!loc.parent) {
        json_decref(*root);
        *root = v;
    } else if (json_is_object(loc.parent)
                   ? json_object_set_new(loc.parent, loc.tok, v) != 0
                   : parse_index(loc.tok, &i) != 0 || json_array_set_new(loc.parent, i, v) != 0)
        rc = fail(err, errlen, "path %s: cannot replace", path);
    free(loc.tok);
    return rc;
}

static int op_move(json_t **root, const char *path, const char *from, const json_t *value,
                   char *err, size_t errlen)
{
    size_t fl = strlen(from);
    json_t *v;
    (void)value;
    if (strncmp(path, from, fl) == 0 && path[fl] == '/')
        return fail(err, errlen, "cannot move %s into its own child %s", from, path);
    if (strcmp(path, from) == 0) {
        if (jp_lookup(*root, from, &v, err, errlen) != 0)
            return -1;
        return v ? 0 : fail(err, errlen, "path %s not found", from);
    }
    if (jp_take(root, from, &v, err, errlen) != 0)
        return -1;
    return jp_insert(root, path, v, err, errlen);
}

static int op_copy(json_t **root, const char *path, const char *from, const json_t *value,
                   char *err, size_t errlen)
{
    json_t *v;
    if (jp_lookup(*root, from, &v, err, errlen) != 0)
        return -1;
    if (!v)
        return fail(err, errlen, "path %s not found", from);
    return op_add(root, path, NULL, v, err, errlen);
}

/* A missing target fails the test like a different value does: both mean
 * "the document is not what the client expected" (-2), not a malformed patch. */
static int op_test(json_t **root, const char *path, const char *from, const json_t *value,
                   char *err, size_t errlen)
{
    json_t *cur;
    (void)from;
    if (jp_lookup(*root, path, &cur, err, errlen) != 0)
        return -1;
    if (!cur) {
        fail(err, errlen, "test operation failed at %s: path not found", path);
        return -2;
    }
    if (!json_eq(cur, value)) {
        fail(err, errlen, "test operation failed at %s", path);
        return -2;
    }
    return 0;
}

typedef int (*jp_op_fn)(json_t **root, const char *path, const char *from, const json_t *value,
                        char *err, size_t errlen);

static const struct {
    const char *name;
    bool needs_value;
    bool needs_from;
    jp_op_fn fn;
} jp_ops[] = {
    {"add", true, false, op_add},         {"remove", false, false, op_remove},
    {"replace", true, false, op_replace}, {"move", false, true, op_move},
    {"copy", false, true, op_copy},       {"test", true, false, op_test},
};

static int jp_apply_op(json_t **root, const json_t *op, size_t n, char *err, size_t errlen)
{
    const char *name, *path, *from;
    const json_t *value;
    if (!json_is_object(op))
        return fail(err, errlen, "invalid operation %zu: not a JSON object", n);
    name = json_string_value(json_object_get(op, "op"));
    path = json_string_value(json_object_get(op, "path"));
    from = json_string_value(json_object_get(op, "from"));
    value = json_object_get(op, "value");
    if (!name)
        return fail(err, errlen, "invalid operation %zu: \"op\" missing or not a string", n);
    if (!path)
        return fail(err, errlen, "invalid operation %zu: \"path\" missing or not a string", n);
    for (size_t i = 0; i < sizeof jp_ops / sizeof jp_ops[0]; i++) {
        if (strcmp(name, jp_ops[i].name) != 0)
            continue;
        if (jp_ops[i].needs_value && !value)
            return fail(err, errlen, "invalid operation %zu: %s needs \"value\"", n, name);
        if (jp_ops[i].needs_from && !from)
            return fail(err, errlen, "invalid operation %zu: %s needs \"from\" (a string)", n,
                        name);
        return jp_ops[i].fn(root, path, from, value, err, errlen);
    }
    return fail(err, errlen, "invalid operation %zu: unknown op \"%s\"", n, name);
}

int fakeapi__json_patch(const json_t *doc, const json_t *patch, json_t **out, char *err,
                        size_t errlen)
{
    json_t *root, *op;
    size_t i;
    int rc = 0;
    if (!doc || !out)
        return fail(err, errlen, "invalid arguments");
    if (!json_is_array(patch))
        return fail(err, errlen, "invalid patch: a JSON patch must be an array of operations");
    if (!(root = json_deep_copy(doc)))
        return fail(err, errlen, "out of memory");
    json_array_foreach(patch, i, op)
    {
        if ((rc = jp_apply_op(&root, op, i, err, errlen)) != 0)
            break;
    }
    if (rc != 0) {
        json_decref(root);
        return rc;
    }
    *out = root;
    return 0;
}

/* ---- RFC 7386 merge patch ---------------------------------------------- */

/* Merge patch into *target (owned, mutable; may be NULL), replacing it. */
static int merge_into(json_t **target, const json_t *patch)
{
    const char *k;
    json_t *pv, *child;
    if (!json_is_object(patch)) {
        if (!(child = json_deep_copy(patch)))
            return -1;
        json_decref(*target);
        *target = child;
        return 0;
    }
    if (!json_is_object(*target)) {
        json_decref(*target);
        if (!(*target = json_object()))
            return -1;
    }
    json_object_foreach(ro(patch), k, pv)
    {
        if (json_is_null(pv)) {
            json_object_del(*target, k);
            continue;
        }
        child = json_incref(json_object_get(*target, k));
        if (merge_into(&child, pv) != 0) {
            json_decref(child);
            return -1;
        }
        if (json_object_set_new(*target, k, child) != 0)
            return -1;
    }
    return 0;
}

int fakeapi__merge_patch(const json_t *doc, const json_t *patch, json_t **out)
{
    json_t *root = NULL;
    if (!patch || !out)
        return -1;
    if (doc && !(root = json_deep_copy(doc)))
        return -1;
    if (merge_into(&root, patch) != 0) {
        json_decref(root);
        return -1;
    }
    *out = root;
    return 0;
}

/* ---- strategic merge patch --------------------------------------------- */

typedef struct {
    fakeapi__smp_key_fn key_fn;
    void *ud;
    char *err;
    size_t errlen;
    char path[SMP_PATH_MAX]; /* field names from the root joined by '.' */
    size_t len;
} smp_ctx;

enum smp_op { SMP_NONE, SMP_MERGE, SMP_REPLACE, SMP_DELETE };

/* Fail with the current field path in front of the message. */
__attribute__((format(printf, 2, 3))) static int smp_fail(smp_ctx *c, const char *fmt, ...)
{
    va_list ap;
    int n = 0;
    if (!c->err || c->errlen == 0)
        return -1;
    if (c->len > 0)
        n = snprintf(c->err, c->errlen, "%s: ", c->path);
    if (n < 0 || (size_t)n >= c->errlen)
        return -1;
    va_start(ap, fmt);
    vfail(c->err + n, c->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static int path_push(smp_ctx *c, const char *field, size_t *saved)
{
    size_t fl = strlen(field);
    *saved = c->len;
    if (c->len + 1 + fl >= sizeof c->path)
        return fail(c->err, c->errlen, "field path longer than %d bytes", SMP_PATH_MAX - 1);
    if (c->len > 0)
        c->path[c->len++] = '.';
    memcpy(c->path + c->len, field, fl + 1);
    c->len += fl;
    return 0;
}

static void path_pop(smp_ctx *c, size_t saved)
{
    c->len = saved;
    c->path[saved] = '\0';
}

static bool is_directive_key(const char *k)
{
    return strcmp(k, DIR_PATCH) == 0 || strcmp(k, DIR_RETAIN) == 0 || has_prefix(k, DIR_ORDER) ||
           has_prefix(k, DIR_DELPRIM);
}

static bool is_directive_elem(const json_t *e)
{
    return json_is_object(e) && json_object_get(e, DIR_PATCH) != NULL;
}

static bool is_primitive(const json_t *v)
{
    return !json_is_object(v) && !json_is_array(v);
}

static int smp_directive(smp_ctx *c, const json_t *obj, enum smp_op *op)
{
    static const char *const names[] = {"", "merge", "replace", "delete"};
    const char *s = json_string_value(json_object_get(obj, DIR_PATCH));
    *op = SMP_NONE;
    if (!json_object_get(obj, DIR_PATCH))
        return 0;
    for (int i = SMP_MERGE; s && i <= SMP_DELETE; i++) {
        if (strcmp(s, names[i]) == 0) {
            *op = (enum smp_op)i;
            return 0;
        }
    }
    return smp_fail(c, "unknown $patch directive \"%s\"", s ? s : "(not a string)");
}

/* The value of the directive prefix+field in patch, if present. */
static const json_t *directive_for(const json_t *patch, const char *prefix, const char *field)
{
    const char *k;
    json_t *v;
    size_t pl = strlen(prefix);
    json_object_foreach(ro(patch), k, v)
    {
        if (strncmp(k, prefix, pl) == 0 && strcmp(k + pl, field) == 0)
            return v;
    }
    return NULL;
}

/* The value an element is matched on: its merge key, or itself. */
static const json_t *kv(const json_t *item, const char *key)
{
    return key ? json_object_get(item, key) : item;
}

/* Index of the first non-directive element of list matching v, or NOT_FOUND. */
static size_t find_kv(const json_t *list, const json_t *v, const char *key)
{
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        if (!is_directive_elem(e) && json_eq(kv(e, key), v))
            return i;
    }
    return NOT_FOUND;
}

static bool is_first(const json_t *list, size_t i, const char *key)
{
    const json_t *e = json_array_get(list, i);
    return !is_directive_elem(e) && find_kv(list, kv(e, key), key) == i;
}

static int append_matching(json_t *dst, const json_t *merged, const json_t *v, const char *key)
{
    size_t i;
    json_t *m;
    json_array_foreach(merged, i, m)
    {
        if (json_eq(kv(m, key), v) && json_array_append(dst, m) != 0)
            return -1;
    }
    return 0;
}

/* apimachinery's mergeSortedSlice: a server-only element goes first only
 * when it and the patch element were both in sref, in that order. */
static json_t *interleave(const json_t *server, const json_t *patch, const json_t *sref,
                          const char *key)
{
    json_t *res = json_array();
    size_t i = 0, j = 0, ns = json_array_size(server), np = json_array_size(patch);
    while (res && (i < ns || j < np)) {
        size_t si = i < ns ? find_kv(sref, kv(json_array_get(server, i), key), key) : NOT_FOUND;
        size_t pi = j < np ? find_kv(sref, kv(json_array_get(patch, j), key), key) : NOT_FOUND;
        bool left = j >= np || (i < ns && si != NOT_FOUND && pi != NOT_FOUND && si < pi);
        json_t *e = left ? json_array_get(server, i++) : json_array_get(patch, j++);
        if (json_array_append(res, e) != 0) {
            json_decref(res);
            res = NULL;
        }
    }
    return res;
}

static int collect_patch_items(json_t *front, const json_t *merged, const json_t *pref,
                               const char *key)
{
    for (size_t i = 0; i < json_array_size(pref); i++) {
        if (is_first(pref, i, key) &&
            append_matching(front, merged, kv(json_array_get(pref, i), key), key) != 0)
            return -1;
    }
    return 0;
}

static int collect_server_items(json_t *back, const json_t *merged, const json_t *pref,
                                const json_t *sref, const char *key)
{
    size_t i;
    json_t *e;
    for (i = 0; i < json_array_size(sref); i++) {
        const json_t *v = kv(json_array_get(sref, i), key);
        if (is_first(sref, i, key) && find_kv(pref, v, key) == NOT_FOUND &&
            append_matching(back, merged, v, key) != 0)
            return -1;
    }
    json_array_foreach(merged, i, e)
    {
        const json_t *v = kv(e, key);
        if (find_kv(pref, v, key) == NOT_FOUND && find_kv(sref, v, key) == NOT_FOUND &&
            json_array_append(back, e) != 0)
            return -1;
    }
    return 0;
}

/* apimachinery's normalizeElementOrder: the elements of merged named in pref
 * in pref's order, the others in sref's order, then interleaved. */
static json_t *order_list(const json_t *merged, const json_t *pref, const json_t *sref,
                          const char *key)
{
    json_t *front = json_array(), *back = json_array(), *res = NULL;
    if (front && back && collect_patch_items(front, merged, pref, key) == 0 &&
        collect_server_items(back, merged, pref, sref, key) == 0)
        res = interleave(back, front, sref, key);
    json_decref(front);
    json_decref(back);
    return res;
}

static int smp_object(smp_ctx *c, json_t **slot, const json_t *patch);

/* A patch value where the document has nothing to merge with: a copy with
 * directives and nulls resolved. */
static int smp_fresh(smp_ctx *c, const json_t *pv, json_t **out)
{
    *out = NULL;
    if (json_is_object(pv)) {
        /* smp_object leaves what it built so far in *out when it fails. */
        if (smp_object(c, out, pv) != 0) {
            json_decref(*out);
            *out = NULL;
            return -1;
        }
        return 0;
    }
    if (!(*out = json_deep_copy(pv)))
        return smp_fail(c, "out of memory");
    return 0;
}

static int append_fresh(smp_ctx *c, json_t *dst, const json_t *pv)
{
    json_t *v;
    if (smp_fresh(c, pv, &v) != 0)
        return -1;
    if (v && json_array_append_new(dst, v) != 0)
        return smp_fail(c, "out of memory");
    return 0;
}

/* A list the key function does not merge: the patch's list replaces it. */
static int smp_replace_list(smp_ctx *c, const json_t *plist, json_t **out)
{
    size_t i;
    json_t *e;
    enum smp_op op = SMP_NONE;
    if (!(*out = json_array()))
        return smp_fail(c, "out of memory");
    json_array_foreach(plist, i, e)
    {
        if (json_is_object(e) && smp_directive(c, e, &op) != 0)
            return -1;
        if (is_directive_elem(e) && op == SMP_DELETE)
            return smp_fail(c, "$patch delete on a list without a merge key");
        if (is_directive_elem(e) && op == SMP_MERGE)
            return smp_fail(c, "$patch merge is not supported in a list");
        if (!is_directive_elem(e) && append_fresh(c, *out, e) != 0)
            return -1;
    }
    return 0;
}

/* Elements of a merged list must carry the merge key, or be primitives in
 * a set. what names the list in the message. */
static int check_elem(smp_ctx *c, const json_t *e, size_t i, const char *key, const char *what)
{
    if (key && !json_is_object(e))
        return smp_fail(c, "element %zu of %s is not an object", i, what);
    if (key && !kv(e, key))
        return smp_fail(c, "element %zu of %s has no merge key \"%s\"", i, what, key);
    if (!key && !is_primitive(e))
        return smp_fail(c, "element %zu of %s is not a primitive (the list is a set)", i, what);
    return 0;
}

/* Check one element of a patch list; sets *replace for {"$patch":"replace"}. */
static int check_patch_elem(smp_ctx *c, const json_t *e, size_t i, const char *key, bool *replace)
{
    enum smp_op op = SMP_NONE;
    if (json_is_object(e) && smp_directive(c, e, &op) != 0)
        return -1;
    if (op == SMP_MERGE)
        return smp_fail(c, "$patch merge is not supported in a list");
    if (op == SMP_REPLACE) {
        *replace = true;
        return 0;
    }
    if (!key && op == SMP_DELETE)
        return smp_fail(c, "$patch delete in a list of primitives: use " DIR_DELPRIM "<list>");
    return check_elem(c, e, i, key, "the patch list");
}

static int check_patch_list(smp_ctx *c, const json_t *plist, const char *key, bool *replace)
{
    size_t i;
    json_t *e;
    *replace = false;
    json_array_foreach(plist, i, e)
    {
        if (check_patch_elem(c, e, i, key, replace) != 0)
            return -1;
    }
    return 0;
}

static int check_plain_list(smp_ctx *c, const json_t *list, const char *key, const char *what)
{
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        if (check_elem(c, e, i, key, what) != 0)
            return -1;
    }
    return 0;
}

/* apimachinery's validatePatchWithSetOrderList: the patch's elements must
 * appear in $setElementOrder, in the same relative order. */
static int check_order(smp_ctx *c, const json_t *order, const json_t *plist, const char *key)
{
    size_t oi = 0, i, n = json_array_size(order);
    json_t *e;
    if (check_plain_list(c, order, key, "$setElementOrder") != 0)
        return -1;
    json_array_foreach(plist, i, e)
    {
        if (is_directive_elem(e))
            continue;
        while (oi < n && !json_eq(kv(json_array_get(order, oi), key), kv(e, key)))
            oi++;
        if (oi++ == n)
            return smp_fail(c, "the order of the patch list does not match $setElementOrder");
    }
    return 0;
}

static bool deleted_by(const json_t *plist, const json_t *v, const char *key)
{
    size_t i;
    json_t *e;
    json_array_foreach(plist, i, e)
    {
        const char *d = json_string_value(json_object_get(e, DIR_PATCH));
        if (d && strcmp(d, "delete") == 0 && json_eq(kv(e, key), v))
            return true;
    }
    return false;
}

/* The list the patch merges into: the patch's own elements under
 * {"$patch":"replace"}, else the document's minus deleted elements. Sets
 * are deduplicated, as apimachinery's deduplicateScalars does. */
static int merge_base(smp_ctx *c, const json_t *orig, const json_t *plist, const char *key,
                      bool replace, json_t **out)
{
    size_t i;
    json_t *e;
    if (!(*out = json_array()))
        return smp_fail(c, "out of memory");
    json_array_foreach(replace ? plist : orig, i, e)
    {
        if (is_directive_elem(e) || (!replace && key && deleted_by(plist, kv(e, key), key)) ||
            (!key && find_kv(*out, e, NULL) != NOT_FOUND))
            continue;
        if (replace && append_fresh(c, *out, e) != 0)
            return -1;
        if (!replace && json_array_append(*out, e) != 0)
            return smp_fail(c, "out of memory");
    }
    return 0;
}

/* Merge one patch element into merged: into the element with the same key,
 * or appended (normalisation moves it later). */
static int merge_elem(smp_ctx *c, json_t *merged, const json_t *pe, const char *key)
{
    size_t idx = find_kv(merged, kv(pe, key), key);
    json_t *e;
    if (idx == NOT_FOUND)
        return append_fresh(c, merged, pe);
    if (!key)
        return 0;
    e = json_incref(json_array_get(merged, idx));
    if (smp_object(c, &e, pe) != 0) {
        json_decref(e);
        return -1;
    }
    return json_array_set_new(merged, idx, e) == 0 ? 0 : smp_fail(c, "out of memory");
}

static int merge_elems(smp_ctx *c, json_t *merged, const json_t *plist, const char *key)
{
    size_t i;
    json_t *e;
    json_array_foreach(plist, i, e)
    {
        if (!is_directive_elem(e) && merge_elem(c, merged, e, key) != 0)
            return -1;
    }
    return 0;
}

/* apimachinery's mergeSlice plus the $setElementOrder pass of
 * mergePatchIntoOriginal. key is NULL for a set of primitives. */
static int smp_merge_list(smp_ctx *c, const json_t *orig, const json_t *plist, const char *key,
                          const json_t *order, json_t **out)
{
    json_t *merged = NULL, *res = NULL;
    bool replace;
    int rc = -1;
    if (check_patch_list(c, plist, key, &replace) != 0 ||
        check_plain_list(c, orig, key, "the existing list") != 0 ||
        (order && check_order(c, order, plist, key) != 0) ||
        merge_base(c, orig, plist, key, replace, &merged) != 0)
        goto out;
    if (!replace) {
        if (merge_elems(c, merged, plist, key) != 0)
            goto out;
        res = order_list(merged, plist, orig, key);
        json_decref(merged);
        if (!(merged = res))
            goto oom;
    }
    if (!(res = order ? order_list(merged, order, orig, key) : json_incref(merged)))
        goto oom;
    *out = res;
    rc = 0;
    goto out;
oom:
    smp_fail(c, "out of memory");
out:
    json_decref(merged);
    return rc;
}

static int smp_list(smp_ctx *c, json_t **slot, const json_t *plist, const json_t *order)
{
    const char *key = c->key_fn ? c->key_fn(c->path, c->ud) : NULL;
    const json_t *orig = json_is_array(*slot) ? *slot : NULL;
    json_t *res = NULL;
    int rc;
    if (!key)
        rc = smp_replace_list(c, plist, &res);
    else
        rc = smp_merge_list(c, orig, plist, *key ? key : NULL, order, &res);
    if (rc != 0) {
        json_decref(res);
        return -1;
    }
    json_decref(*slot);
    *slot = res;
    return 0;
}

static int smp_value(smp_ctx *c, json_t **slot, const json_t *pv, const json_t *order)
{
    if (order && !json_is_array(pv))
        return smp_fail(c, "$setElementOrder given for a field that is not a list");
    if (json_is_object(pv))
        return smp_object(c, slot, pv);
    if (json_is_array(pv))
        return smp_list(c, slot, pv, order);
    json_decref(*slot);
    if (!(*slot = json_deep_copy(pv)))
        return smp_fail(c, "out of memory");
    return 0;
}

/* Merge pv into obj[field] (pv NULL: only reorder it per order). */
static int smp_child(smp_ctx *c, json_t *obj, const char *field, const json_t *pv,
                     const json_t *order)
{
    json_t *child, *empty = NULL;
    size_t saved;
    int rc;
    if (!pv && !(pv = empty = json_array()))
        return smp_fail(c, "out of memory");
    if (path_push(c, field, &saved) != 0) {
        json_decref(empty);
        return -1;
    }
    child = json_incref(json_object_get(obj, field));
    rc = smp_value(c, &child, pv, order);
    json_decref(empty);
    if (rc != 0) {
        json_decref(child);
        return -1; /* keep the path: the message names it already */
    }
    path_pop(c, saved);
    if (!child) {
        json_object_del(obj, field);
        return 0;
    }
    return json_object_set_new(obj, field, child) == 0 ? 0 : smp_fail(c, "out of memory");
}

/* $setElementOrder/<field>: its list is ordered along with the patch's
 * <field>; here only when the patch does not touch <field> itself. */
static int smp_order_only(smp_ctx *c, json_t *obj, const json_t *patch, const char *field,
                          const json_t *order)
{
    if (!*field)
        return smp_fail(c, "malformed directive " DIR_ORDER ": no list name");
    if (!json_is_array(order))
        return smp_fail(c, DIR_ORDER "%s must be a list", field);
    if (json_object_get(patch, field) || !json_is_array(json_object_get(obj, field)))
        return 0;
    return smp_child(c, obj, field, NULL, order);
}

static int smp_field(smp_ctx *c, json_t *obj, const json_t *patch, const char *key,
                     const json_t *pv)
{
    if (strcmp(key, DIR_PATCH) == 0 || strcmp(key, DIR_RETAIN) == 0 || has_prefix(key, DIR_DELPRIM))
        return 0;
    if (has_prefix(key, DIR_ORDER))
        return smp_order_only(c, obj, patch, key + strlen(DIR_ORDER), pv);
    if (json_is_null(pv)) {
        json_object_del(obj, key);
        return 0;
    }
    return smp_child(c, obj, key, pv, directive_for(patch, DIR_ORDER, key));
}

static bool all_match(const json_t *list, bool (*pred)(const json_t *))
{
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        if (!pred(e))
            return false;
    }
    return true;
}

static bool is_string(const json_t *v)
{
    return json_is_string(v);
}

static bool listed(const json_t *list, const char *s)
{
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        if (json_is_string(e) && strcmp(json_string_value(e), s) == 0)
            return true;
    }
    return false;
}

/* $retainKeys: drop the document's fields not listed; every field the patch
 * sets must be listed (apimachinery's applyRetainKeysDirective). */
static int smp_retain_keys(smp_ctx *c, json_t *obj, const json_t *patch)
{
    const json_t *keep = json_object_get(patch, DIR_RETAIN);
    const char *k;
    json_t *v;
    void *tmp;
    if (!keep)
        return 0;
    if (!json_is_array(keep) || !all_match(keep, is_string))
        return smp_fail(c, DIR_RETAIN " must be a list of field names");
    json_object_foreach(ro(patch), k, v)
    {
        if (!json_is_null(v) && !is_directive_key(k) && !listed(keep, k))
            return smp_fail(c, "field \"%s\" is set by the patch but not in " DIR_RETAIN, k);
    }
    json_object_foreach_safe(obj, tmp, k, v)
    {
        if (!listed(keep, k))
            json_object_del(obj, k);
    }
    return 0;
}

/* Remove from list every value that appears in values. */
static void remove_values(json_t *list, const json_t *values)
{
    for (size_t i = json_array_size(list); i-- > 0;) {
        if (find_kv(values, json_array_get(list, i), NULL) != NOT_FOUND)
            json_array_remove(list, i);
    }
}

static int smp_delete_from_lists(smp_ctx *c, json_t *obj, const json_t *patch)
{
    const char *k, *field;
    json_t *v;
    json_object_foreach(ro(patch), k, v)
    {
        if (!has_prefix(k, DIR_DELPRIM))
            continue;
        field = k + strlen(DIR_DELPRIM);
        if (!*field)
            return smp_fail(c, "malformed directive " DIR_DELPRIM ": no list name");
        if (!json_is_array(v) || !all_match(v, is_primitive))
            return smp_fail(c, "%s must be a list of primitives", k);
        if (json_is_array(json_object_get(obj, field)))
            remove_values(json_object_get(obj, field), v);
    }
    return 0;
}

/* apimachinery's mergeMap. *slot (owned, may be NULL) is merged in place or
 * replaced; NULL on return means "$patch": "delete" removed it. */
static int smp_object(smp_ctx *c, json_t **slot, const json_t *patch)
{
    enum smp_op op;
    const char *k;
    json_t *pv;
    if (smp_directive(c, patch, &op) != 0)
        return -1;
    if (op == SMP_DELETE) {
        json_decref(*slot);
        *slot = NULL;
        return 0;
    }
    if (op == SMP_REPLACE || !json_is_object(*slot)) {
        json_decref(*slot);
        if (!(*slot = json_object()))
            return smp_fail(c, "out of memory");
    }
    if (smp_retain_keys(c, *slot, patch) != 0 || smp_delete_from_lists(c, *slot, patch) != 0)
        return -1;
    json_object_foreach(ro(patch), k, pv)
    {
        if (smp_field(c, *slot, patch, k, pv) != 0)
            return -1;
    }
    return 0;
}

int fakeapi__smp_patch(const json_t *doc, const json_t *patch, fakeapi__smp_key_fn key_fn, void *ud,
                       json_t **out, char *err, size_t errlen)
{
    smp_ctx c = {.key_fn = key_fn, .ud = ud, .err = err, .errlen = errlen};
    json_t *root;
    if (!out)
        return fail(err, errlen, "invalid arguments");
    if (!json_is_object(doc))
        return fail(err, errlen, "the document is not a JSON object");
    if (!json_is_object(patch))
        return fail(err, errlen, "a strategic merge patch must be a JSON object");
    if (!(root = json_deep_copy(doc)))
        return fail(err, errlen, "out of memory");
    if (smp_object(&c, &root, patch) != 0) {
        json_decref(root);
        return -1;
    }
    /* "$patch": "delete" at the top leaves an empty object, as in apimachinery. */
    if (!root && !(root = json_object()))
        return fail(err, errlen, "out of memory");
    *out = root;
    return 0;
}

/* ---- merge keys from the type tables ----------------------------------- */

/*
 * The field that path names below m, or NULL. Array positions are not in
 * path, so a list's element type is walked like a single message. A map's
 * key is one segment or, when it holds dots ("app.kubernetes.io/name"),
 * several: every split is tried until the rest resolves.
 */
static const fakeapi__tfield *type_walk(const fakeapi__tmsg *m, const char *path, int depth)
{
    if (!m || depth > 64)
        return NULL;
    size_t seg = strcspn(path, ".");
    const fakeapi__tfield *f = fakeapi__type_field_json(m, path, seg, NULL);
    if (!f)
        return NULL;
    if (!path[seg])
        return f;
    const char *rest = path + seg + 1;
    if (f->type != FAKEAPI__T_MSG)
        return NULL;
    const fakeapi__tmsg *vm = fakeapi__type_at(f->msg);
    if (!(f->flags & FAKEAPI__F_MAP))
        return type_walk(vm, rest, depth + 1);
    /* A map value that is itself a list (ExtraValue) has no strategy: only messages go on. */
    for (const char *dot = strchr(rest, '.'); dot; dot = strchr(dot + 1, '.')) {
        const fakeapi__tfield *g = type_walk(vm, dot + 1, depth + 1);
        if (g)
            return g;
    }
    return NULL;
}

/* True when the list's elements are JSON scalars (strings, numbers, Quantity, ...). */
static bool primitive_elems(const fakeapi__tfield *f)
{
    if (f->type != FAKEAPI__T_MSG)
        return true;
    const fakeapi__tmsg *m = fakeapi__type_at(f->msg);
    return m && m->special != FAKEAPI__S_NONE && m->special != FAKEAPI__S_SLICE;
}

const char *fakeapi__smp_type_key(const char *path, void *ud)
{
    fakeapi__smp_types *t = ud;
    if (!t || !t->root || !path)
        return NULL;
    const fakeapi__tfield *f = type_walk(t->root, path, 0);
    if (!f || !(f->flags & FAKEAPI__F_REPEATED) || (f->flags & FAKEAPI__F_MAP))
        return NULL;
    bool prim = primitive_elems(f);
    if (t->apply) {
        /* Server-side apply goes by +listType, and by the patch strategy only without one. */
        switch (f->list) {
        case FAKEAPI__L_ATOMIC:
            return NULL;
        case FAKEAPI__L_SET:
            return prim ? "" : NULL;
        case FAKEAPI__L_MAP:
            if (f->merge_key)
                return f->merge_key;
            if (f->list_keys) {
                snprintf(t->keybuf, sizeof t->keybuf, "%.*s", (int)strcspn(f->list_keys, ","),
                         f->list_keys);
                return t->keybuf;
            }
            return NULL;
        default:
            break;
        }
    }
    if (!(f->patch & FAKEAPI__P_MERGE))
        return NULL;
    if (prim)
        return "";
    return f->merge_key;
}

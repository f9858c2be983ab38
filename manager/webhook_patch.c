/*
 * webhook_patch.c - the JSON patch between two documents (ctrl/webhook.h,
 * ctrl_json_patch_diff), which a defaulting webhook answers with.
 *
 * Reentrant; no state.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/webhook.h"

#define MAX_POINTER 8192

/* Append an RFC 6901 token to a pointer: '~' as "~0", '/' as "~1". */
static int push(char *ptr, size_t *len, const char *tok)
{
    size_t n = *len;
    if (n + 1 >= MAX_POINTER)
        return -1;
    ptr[n++] = '/';
    for (const char *p = tok; *p; p++) {
        if (n + 3 >= MAX_POINTER)
            return -1;
        if (*p == '~' || *p == '/') {
            ptr[n++] = '~';
            ptr[n++] = *p == '~' ? '0' : '1';
        } else {
            ptr[n++] = *p;
        }
    }
    ptr[n] = '\0';
    *len = n;
    return 0;
}

static int op(json_t *out, const char *name, const char *path, const json_t *value)
{
    json_t *o = value ? json_pack("{s:s, s:s, s:O}", "op", name, "path", path, "value", value)
                      : json_pack("{s:s, s:s}", "op", name, "path", path);
    return o && json_array_append_new(out, o) == 0 ? 0 : -1;
}

static int diff(const json_t *a, const json_t *b, char *ptr, size_t len, json_t *out);

static int diff_objects(const json_t *a, const json_t *b, char *ptr, size_t len, json_t *out)
{
    const char *k;
    json_t *v;
    /* Removals first, in a's order; then changes and additions in b's. */
    json_object_foreach((json_t *)a, k, v)
    {
        if (json_object_get(b, k))
            continue;
        size_t n = len;
        if (push(ptr, &n, k) < 0 || op(out, "remove", ptr, NULL) < 0)
            return -1;
        ptr[len] = '\0';
    }
    json_object_foreach((json_t *)b, k, v)
    {
        size_t n = len;
        if (push(ptr, &n, k) < 0)
            return -1;
        const json_t *av = json_object_get(a, k);
        int rc = av ? diff(av, v, ptr, n, out) : op(out, "add", ptr, v);
        ptr[len] = '\0';
        if (rc < 0)
            return -1;
    }
    return 0;
}

static int diff_arrays(const json_t *a, const json_t *b, char *ptr, size_t len, json_t *out)
{
    size_t na = json_array_size(a), nb = json_array_size(b);
    size_t common = na < nb ? na : nb;
    for (size_t i = 0; i < common; i++) {
        char idx[24];
        snprintf(idx, sizeof idx, "%zu", i);
        size_t n = len;
        if (push(ptr, &n, idx) < 0 ||
            diff(json_array_get(a, i), json_array_get(b, i), ptr, n, out) < 0)
            return -1;
        ptr[len] = '\0';
    }
    /* Surplus elements go from the end backwards, so each index is still valid. */
    for (size_t i = na; i > common; i--) {
        char idx[24];
        snprintf(idx, sizeof idx, "%zu", i - 1);
        size_t n = len;
        if (push(ptr, &n, idx) < 0 || op(out, "remove", ptr, NULL) < 0)
            return -1;
        ptr[len] = '\0';
    }
    for (size_t i = common; i < nb; i++) {
        size_t n = len;
        if (push(ptr, &n, "-") < 0 || op(out, "add", ptr, json_array_get(b, i)) < 0)
            return -1;
        ptr[len] = '\0';
    }
    return 0;
}

static int diff(const json_t *a, const json_t *b, char *ptr, size_t len, json_t *out)
{
    if (json_equal((json_t *)a, (json_t *)b))
        return 0;
    if (json_is_object(a) && json_is_object(b))
        return diff_objects(a, b, ptr, len, out);
    if (json_is_array(a) && json_is_array(b))
        return diff_arrays(a, b, ptr, len, out);
    return op(out, "replace", len ? ptr : "", b);
}

int ctrl_json_patch_diff(const json_t *from, const json_t *to, json_t **out)
{
    if (!from || !to || !out)
        return CTRL_ERR_ARG;
    json_t *ops = json_array();
    char *ptr = malloc(MAX_POINTER);
    if (!ops || !ptr) {
        json_decref(ops);
        free(ptr);
        return CTRL_ERR_NOMEM;
    }
    ptr[0] = '\0';
    int rc = diff(from, to, ptr, 0, ops);
    free(ptr);
    if (rc < 0) {
        /* A pointer deeper than MAX_POINTER: replace the whole document. */
        json_array_clear(ops);
        if (op(ops, "replace", "", to) < 0) {
            json_decref(ops);
            return CTRL_ERR_NOMEM;
        }
    }
    *out = ops;
    return 0;
}

/*
 * jsonpath.c - the subset of kubectl's JSONPath that CRD printer columns use
 * (see jsonpath.h).
 */
#include "jsonpath.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define JSONPATH_MAX_DEPTH 32

/*
 * Collect into out (as new references) every value path selects in node.
 * Supported: ".a.b", ".a[0].b", ".a[-1]", ".a[*].b", ".a.*", "['x.y']",
 * backslash-escaped dots in names ("app\.kubernetes\.io"), an optional
 * leading '$' and surrounding '{}'. Anything else selects nothing.
 */
static void jp_eval(const json_t *node, const char *p, json_t *out, int depth)
{
    if (!node || depth > JSONPATH_MAX_DEPTH)
        return;
    if (!*p) {
        json_array_append(out, (json_t *)node);
        return;
    }
    char key[256];
    size_t k = 0;
    if (*p == '.') {
        p++;
        if (*p == '*' || *p == '[' || !*p) {
            if (*p == '*')
                p++;
            else if (*p)
                goto bracket; /* "..[" is not supported; "a.[0]" tolerated */
            goto wildcard;
        }
        while (*p && *p != '.' && *p != '[' && k + 1 < sizeof key) {
            if (*p == '\\' && p[1])
                p++;
            key[k++] = *p++;
        }
        key[k] = '\0';
        jp_eval(json_object_get(node, key), p, out, depth + 1);
        return;
    }
    if (*p != '[')
        return;
bracket:
    p++;
    if (*p == '*' && p[1] == ']') {
        p += 2;
        goto wildcard;
    }
    if (*p == '\'' || *p == '"') {
        char q = *p++;
        while (*p && *p != q && k + 1 < sizeof key)
            key[k++] = *p++;
        key[k] = '\0';
        if (*p != q || p[1] != ']')
            return;
        jp_eval(json_object_get(node, key), p + 2, out, depth + 1);
        return;
    }
    {
        char *end;
        long idx = strtol(p, &end, 10);
        if (end == p || *end != ']' || !json_is_array(node))
            return;
        long n = (long)json_array_size(node);
        if (idx < 0)
            idx += n;
        if (idx < 0 || idx >= n)
            return;
        jp_eval(json_array_get(node, (size_t)idx), end + 1, out, depth + 1);
        return;
    }
wildcard:
    if (json_is_array(node)) {
        size_t i;
        const json_t *v;
        json_array_foreach(node, i, v) jp_eval(v, p, out, depth + 1);
    } else if (json_is_object(node)) {
        const char *kk;
        const json_t *v;
        json_object_foreach((json_t *)node, kk, v) jp_eval(v, p, out, depth + 1);
    }
}

json_t *fakeapi__jsonpath(const json_t *obj, const char *path)
{
    json_t *out = json_array();
    if (!out || !path)
        return out;
    while (isspace((unsigned char)*path))
        path++;
    size_t n = strlen(path);
    char buf[1024];
    if (n >= sizeof buf)
        return out;
    memcpy(buf, path, n + 1);
    if (buf[0] == '{' && n >= 2 && buf[n - 1] == '}') {
        buf[n - 1] = '\0';
        memmove(buf, buf + 1, n - 1);
    }
    const char *p = buf;
    if (*p == '$')
        p++;
    jp_eval(obj, p, out, 0);
    return out;
}

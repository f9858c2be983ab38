#include "router.h"

#include <string.h>

#define MAX_SEGS 9

/* Split path on '/', ignoring empty segments. Returns the count, -1 if too many. */
static int split(const char *path, const char *seg[], size_t len[])
{
    int n = 0;
    const char *p = path;
    while (*p) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        const char *e = strchr(p, '/');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (n == MAX_SEGS)
            return -1;
        seg[n] = p;
        len[n++] = l;
        p += l;
    }
    return n;
}

static int copy(char *dst, size_t cap, const char *src, size_t n)
{
    if (n >= cap)
        return -1;
    memcpy(dst, src, n);
    dst[n] = '\0';
    return 0;
}

static int is(const char *seg, size_t len, const char *word)
{
    return strlen(word) == len && !memcmp(seg, word, len);
}

/* Everything after /api/v1 or /apis/<g>/<v>: segments s[0..n). */
static int parse_resource_path(const char *s[], size_t l[], int n, fakeapi__route *rt)
{
    int i = 0;
    if (n == 0) {
        rt->kind = FAKEAPI__RT_GROUPVERSION;
        return 0;
    }
    /* namespaces/<ns>/<res>... ; but namespaces/<ns> and namespaces/<ns>/status|finalize
     * address the Namespace object itself. */
    if (is(s[0], l[0], "namespaces") && n >= 3 && !is(s[2], l[2], "status") &&
        !is(s[2], l[2], "finalize")) {
        if (copy(rt->ns, sizeof rt->ns, s[1], l[1]) < 0)
            return -1;
        i = 2;
    }
    int rest = n - i;
    if (rest < 1 || rest > 3)
        return -1;
    if (copy(rt->resource, sizeof rt->resource, s[i], l[i]) < 0)
        return -1;
    rt->kind = FAKEAPI__RT_COLLECTION;
    if (rest >= 2) {
        if (copy(rt->name, sizeof rt->name, s[i + 1], l[i + 1]) < 0)
            return -1;
        rt->kind = FAKEAPI__RT_OBJECT;
    }
    if (rest == 3) {
        if (copy(rt->sub, sizeof rt->sub, s[i + 2], l[i + 2]) < 0)
            return -1;
        rt->kind = FAKEAPI__RT_SUBRESOURCE;
    }
    return 0;
}

static int parse_openapi(const char *s[], size_t l[], int n, fakeapi__route *rt)
{
    if (n == 2 && is(s[1], l[1], "v2")) {
        rt->kind = FAKEAPI__RT_OPENAPI_V2;
        return 0;
    }
    if (n < 2 || !is(s[1], l[1], "v3"))
        return -1;
    if (n == 2) {
        rt->kind = FAKEAPI__RT_OPENAPI_V3;
        return 0;
    }
    if (n == 4 && is(s[2], l[2], "api")) {
        rt->kind = FAKEAPI__RT_OPENAPI_V3_GV;
        return copy(rt->version, sizeof rt->version, s[3], l[3]);
    }
    if (n == 5 && is(s[2], l[2], "apis")) {
        rt->kind = FAKEAPI__RT_OPENAPI_V3_GV;
        if (copy(rt->group, sizeof rt->group, s[3], l[3]) < 0)
            return -1;
        return copy(rt->version, sizeof rt->version, s[4], l[4]);
    }
    return -1;
}

static int parse_segments(const char *path, const char *s[], size_t l[], int n, fakeapi__route *rt)
{
    if (n == 0)
        return -1;
    if (is(s[0], l[0], "version") && n == 1) {
        rt->kind = FAKEAPI__RT_VERSION;
        return 0;
    }
    if (is(s[0], l[0], "healthz") || is(s[0], l[0], "readyz") || is(s[0], l[0], "livez")) {
        rt->kind = FAKEAPI__RT_HEALTH;
        return 0;
    }
    if (is(s[0], l[0], "metrics") && n == 1) {
        rt->kind = FAKEAPI__RT_METRICS;
        return 0;
    }
    if (is(s[0], l[0], "openapi"))
        return parse_openapi(s, l, n, rt);
    if (is(s[0], l[0], "fakeapi") && n >= 2 && is(s[1], l[1], "v1")) {
        rt->kind = FAKEAPI__RT_CONTROL;
        const char *rest = n > 2 ? s[2] : "";
        return copy(rt->name, sizeof rt->name, rest, strlen(rest));
    }
    (void)path;
    if (is(s[0], l[0], "api")) {
        if (n == 1) {
            rt->kind = FAKEAPI__RT_API;
            return 0;
        }
        if (copy(rt->version, sizeof rt->version, s[1], l[1]) < 0)
            return -1;
        return parse_resource_path(s + 2, l + 2, n - 2, rt);
    }
    if (is(s[0], l[0], "apis")) {
        if (n == 1) {
            rt->kind = FAKEAPI__RT_APIS;
            return 0;
        }
        if (copy(rt->group, sizeof rt->group, s[1], l[1]) < 0)
            return -1;
        if (n == 2) {
            rt->kind = FAKEAPI__RT_GROUP;
            return 0;
        }
        if (copy(rt->version, sizeof rt->version, s[2], l[2]) < 0)
            return -1;
        return parse_resource_path(s + 3, l + 3, n - 3, rt);
    }
    return -1;
}

int fakeapi__route_parse(const char *path, fakeapi__route *rt)
{
    const char *s[MAX_SEGS];
    size_t l[MAX_SEGS];
    memset(rt, 0, sizeof *rt);
    int n = split(path ? path : "", s, l);
    if (n < 0 || parse_segments(path, s, l, n, rt) < 0) {
        memset(rt, 0, sizeof *rt);
        return -1;
    }
    return 0;
}

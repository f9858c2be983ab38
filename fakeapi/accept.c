/*
 * accept.c - pick the representation an Accept header asks for (accept.h).
 */
#include "accept.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct span {
    const char *p;
    size_t n;
} span;

static span trim(const char *p, size_t n)
{
    while (n && (*p == ' ' || *p == '\t'))
        p++, n--;
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    return (span){p, n};
}

static bool is(span s, const char *lit)
{
    return s.n == strlen(lit) && !strncasecmp(s.p, lit, s.n);
}

/* One media range: what it asks for (NONE if fakeapi cannot write it), and its q in 0..1000. */
static fakeapi__as range_as(span r, int *q)
{
    *q = 1000;
    const char *semi = memchr(r.p, ';', r.n);
    span type = trim(r.p, semi ? (size_t)(semi - r.p) : r.n);
    bool json = is(type, "application/json") || is(type, "application/*") || is(type, "*/*");
    span as = {NULL, 0}, g = {NULL, 0}, v = {NULL, 0};
    bool bad_param = false;
    const char *end = r.p + r.n;
    for (const char *p = semi; p && p < end;) {
        p++;
        const char *next = memchr(p, ';', (size_t)(end - p));
        span param = trim(p, next ? (size_t)(next - p) : (size_t)(end - p));
        p = next;
        const char *eq = memchr(param.p, '=', param.n);
        if (!eq)
            continue;
        span key = trim(param.p, (size_t)(eq - param.p));
        span val = trim(eq + 1, param.n - (size_t)(eq + 1 - param.p));
        if (val.n >= 2 && val.p[0] == '"' && val.p[val.n - 1] == '"')
            val = (span){val.p + 1, val.n - 2};
        if (is(key, "q")) {
            double d = strtod(val.p, NULL);
            *q = d <= 0 ? 0 : d >= 1 ? 1000 : (int)(d * 1000 + 0.5);
        } else if (is(key, "as")) {
            as = val;
        } else if (is(key, "g")) {
            g = val;
        } else if (is(key, "v")) {
            v = val;
        } else if (is(key, "stream")) {
            bad_param |= !is(val, "watch");
        }
        /* charset, pretty and others do not change the representation. */
    }
    if (!json || bad_param)
        return FAKEAPI__AS_NONE;
    if (!as.p)
        return FAKEAPI__AS_OBJECT;
    if (!is(g, "meta.k8s.io") || !(is(v, "v1") || is(v, "v1beta1")))
        return FAKEAPI__AS_NONE;
    if (is(as, "Table"))
        return FAKEAPI__AS_TABLE;
    if (is(as, "PartialObjectMetadata") || is(as, "PartialObjectMetadataList"))
        return FAKEAPI__AS_PARTIAL;
    return FAKEAPI__AS_NONE;
}

fakeapi__as fakeapi__accept_pick(const char *accept)
{
    if (!accept)
        return FAKEAPI__AS_OBJECT;
    span all = trim(accept, strlen(accept));
    if (!all.n)
        return FAKEAPI__AS_OBJECT;
    fakeapi__as best = FAKEAPI__AS_NONE;
    int best_q = 0;
    const char *end = accept + strlen(accept);
    for (const char *p = accept; p < end;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        span r = trim(p, comma ? (size_t)(comma - p) : (size_t)(end - p));
        p = comma ? comma + 1 : end;
        if (!r.n)
            continue;
        int q;
        fakeapi__as as = range_as(r, &q);
        if (as != FAKEAPI__AS_NONE && q > best_q) {
            best = as;
            best_q = q;
        }
    }
    return best;
}

json_t *fakeapi__partial_of(const json_t *obj)
{
    json_t *meta = json_object_get(obj, "metadata");
    return json_pack("{s:s, s:s, s:O}", "kind", "PartialObjectMetadata", "apiVersion",
                     "meta.k8s.io/v1", "metadata", meta ? meta : json_object());
}

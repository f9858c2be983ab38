/*
 * fuzz_router.c - libFuzzer target: URL paths to routes.
 *
 * The input, cut at its first NUL, is a request target for
 * fakeapi__url_split (success: a decoded path no longer than the target and
 * valid UTF-8, a query object of strings; failure: both NULL and a message
 * that is valid UTF-8), and a path. Invariants of the path: success means a
 * known route kind and failure an all-zero route; every field is
 * NUL-terminated within its array; a resource route (group/version,
 * collection, object, subresource) written back as its canonical path
 * parses to the same route.
 */
#include "router.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_terminated(const fakeapi__route *rt)
{
    if (!memchr(rt->group, '\0', sizeof rt->group) ||
        !memchr(rt->version, '\0', sizeof rt->version) || !memchr(rt->ns, '\0', sizeof rt->ns) ||
        !memchr(rt->resource, '\0', sizeof rt->resource) ||
        !memchr(rt->name, '\0', sizeof rt->name) || !memchr(rt->sub, '\0', sizeof rt->sub))
        abort();
}

/* The canonical path of a resource route into buf; 0, or -1 if it has none. */
static int canonical(const fakeapi__route *rt, char *buf, size_t len)
{
    size_t n = 0;
    int w;
#define PUT(...)                                                                                   \
    do {                                                                                           \
        w = snprintf(buf + n, len - n, __VA_ARGS__);                                               \
        if (w < 0 || (size_t)w >= len - n)                                                         \
            abort();                                                                               \
        n += (size_t)w;                                                                            \
    } while (0)
    switch (rt->kind) {
    case FAKEAPI__RT_GROUPVERSION:
    case FAKEAPI__RT_COLLECTION:
    case FAKEAPI__RT_OBJECT:
    case FAKEAPI__RT_SUBRESOURCE:
        break;
    default:
        return -1;
    }
    if (rt->group[0])
        PUT("/apis/%s/%s", rt->group, rt->version);
    else
        PUT("/api/%s", rt->version);
    if (rt->watch)
        PUT("/watch");
    if (rt->ns[0])
        PUT("/namespaces/%s", rt->ns);
    if (rt->resource[0])
        PUT("/%s", rt->resource);
    if (rt->name[0])
        PUT("/%s", rt->name);
    if (rt->sub[0])
        PUT("/%s", rt->sub);
#undef PUT
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *path = malloc(size + 1);
    if (!path)
        return 0;
    if (size)
        memcpy(path, data, size);
    path[size] = '\0';
    char *decoded = NULL;
    json_t *query = NULL;
    char err[256] = "";
    int urc = fakeapi__url_split(path, &decoded, &query, err, sizeof err);
    if (urc == 0) {
        json_t *js = json_string(decoded);
        if (!query || !json_is_object(query) || strlen(decoded) > strlen(path) || !js)
            abort();
        json_decref(js);
        const char *k;
        json_t *v;
        json_object_foreach(query, k, v)
        {
            if (!json_is_string(v))
                abort();
        }
    } else {
        json_t *js = json_string(err);
        if (decoded || query || !js || urc < FAKEAPI__URL_NOMEM)
            abort();
        json_decref(js);
    }
    free(decoded);
    json_decref(query);
    fakeapi__route rt;
    memset(&rt, 0xa5, sizeof rt);
    int rc = fakeapi__route_parse(path, &rt);
    if (rc != 0) {
        static const fakeapi__route zero;
        if (memcmp(&rt, &zero, sizeof rt) != 0)
            abort();
    } else {
        if (rt.kind == FAKEAPI__RT_UNKNOWN)
            abort();
        check_terminated(&rt);
        char canon[2048];
        if (canonical(&rt, canon, sizeof canon) == 0) {
            fakeapi__route again;
            if (fakeapi__route_parse(canon, &again) != 0 || again.kind != rt.kind ||
                strcmp(again.group, rt.group) || strcmp(again.version, rt.version) ||
                strcmp(again.ns, rt.ns) || strcmp(again.resource, rt.resource) ||
                strcmp(again.name, rt.name) || strcmp(again.sub, rt.sub))
                abort();
        }
    }
    free(path);
    return 0;
}

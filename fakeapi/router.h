/*
 * router.h - Kubernetes URL paths to routes (K8S-API.md section 2).
 *
 * Pure parsing: no registry lookups, so it is trivially testable. The
 * handler decides whether the named resource exists.
 * Reentrant.
 */
#ifndef FAKEAPI_ROUTER_H
#define FAKEAPI_ROUTER_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

typedef enum fakeapi__route_kind {
    FAKEAPI__RT_UNKNOWN = 0,
    FAKEAPI__RT_VERSION,       /* /version */
    FAKEAPI__RT_HEALTH,        /* /healthz /readyz /livez (.resource), /livez/<check> (.name) */
    FAKEAPI__RT_API,           /* /api */
    FAKEAPI__RT_APIS,          /* /apis */
    FAKEAPI__RT_GROUP,         /* /apis/<g> */
    FAKEAPI__RT_GROUPVERSION,  /* /api/v1, /apis/<g>/<v> */
    FAKEAPI__RT_COLLECTION,    /* .../<res> or .../namespaces/<ns>/<res> */
    FAKEAPI__RT_OBJECT,        /* .../<res>/<name> */
    FAKEAPI__RT_SUBRESOURCE,   /* .../<res>/<name>/<sub> */
    FAKEAPI__RT_OPENAPI_V3,    /* /openapi/v3 */
    FAKEAPI__RT_OPENAPI_V3_GV, /* /openapi/v3/api/v1, /openapi/v3/apis/<g>/<v> */
    FAKEAPI__RT_OPENAPI_V2,    /* /openapi/v2 */
    FAKEAPI__RT_CONTROL,       /* /fakeapi/v1/... (rest in .name) */
    FAKEAPI__RT_METRICS,       /* /metrics */
} fakeapi__route_kind;

#define FAKEAPI__SEG_MAX 254

typedef struct fakeapi__route {
    fakeapi__route_kind kind;
    char group[FAKEAPI__SEG_MAX];
    char version[64];
    char ns[FAKEAPI__SEG_MAX]; /* "" when not namespaced */
    char resource[FAKEAPI__SEG_MAX];
    char name[FAKEAPI__SEG_MAX]; /* for CONTROL: the path after /fakeapi/v1/ */
    char sub[64];
    /* A legacy watch path (/api/v1/watch/..., /apis/<g>/<v>/watch/...): a
     * COLLECTION or OBJECT route to be served as ?watch=true on it. */
    bool watch;
} fakeapi__route;

/*
 * Parse path (no query string) into *rt. Returns 0, or -1 for a path the API
 * does not serve (rt->kind is FAKEAPI__RT_UNKNOWN) or one with an
 * over-long segment.
 */
int fakeapi__route_parse(const char *path, fakeapi__route *rt);

/* What fakeapi__url_split found wrong. */
enum {
    FAKEAPI__URL_BAD_PATH = -1,  /* a NUL or invalid UTF-8 in the decoded path: 404 */
    FAKEAPI__URL_MALFORMED = -2, /* a '%' without two hex digits in the path: 400 */
    FAKEAPI__URL_BAD_QUERY = -3, /* a parameter with a bad escape, a NUL or bad UTF-8: 400 */
    FAKEAPI__URL_NOMEM = -4,
};

/*
 * Split a request target as it came off the wire ("/api/v1/pods?watch=1")
 * into its decoded path and its query parameters, refusing what cannot be
 * named exactly: a decoded NUL (which C strings would cut the name at) or
 * invalid UTF-8 anywhere, a malformed escape. The query decodes '+' as a
 * space; a repeated parameter keeps its first value, as kube-apiserver's
 * parameter codec does; a parameter without '=' has the value "".
 * On success *path (malloc'ed) and *query (an object of strings, new
 * reference) are the caller's; on error they are NULL and err (ASCII) says
 * why. Reentrant.
 */
int fakeapi__url_split(const char *raw, char **path, json_t **query, char *err, size_t errlen);

#endif

/*
 * openapi.h - the OpenAPI documents, generated from the registry and the
 * built-in type tables (types.h).
 *
 * Nothing here is hand-written per kind: every document is derived from the
 * registry's entries at the moment of the call (or, through the cache, at
 * the registry generation it was built for), so a CRD that is added or
 * removed shows up in (or disappears from) the next document.
 *
 * Ownership: the document builders return a NEW json_t reference the caller
 * owns (json_decref it), or NULL when the group/version is not served (or on
 * allocation failure); the cached forms a malloc'ed copy. reg is borrowed.
 *
 * Thread-safety: every function may be called from any thread at any time;
 * the builders only read the registry through its own locked snapshot
 * (fakeapi__registry_all), the cache has its own mutex.
 */
#ifndef FAKEAPI_OPENAPI_H
#define FAKEAPI_OPENAPI_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "registry.h"

/*
 * GET /openapi/v3: {"paths": {"api/v1": {"serverRelativeURL":
 * "/openapi/v3/api/v1?hash=<hex>"}, "apis/apps/v1": {...}}}, one entry per
 * served group-version. The hash is a digest of the group-version's document,
 * so it changes exactly when that document changes (kubectl caches by URL).
 */
json_t *fakeapi__openapi_v3_root(fakeapi__registry *reg);

/*
 * GET /openapi/v3/api/v1, /openapi/v3/apis/<group>/<version>: an OpenAPI
 * 3.0.0 document for one group-version, or NULL if it is not served.
 *
 * It carries what kubectl 1.32 reads: every PATCH (and PUT/POST) operation
 * names its kind in x-kubernetes-group-version-kind and declares the
 * fieldValidation query parameter (so create/apply validate server-side), and
 * components.schemas holds one schema per kind and list kind tagged with
 * x-kubernetes-group-version-kind (so explain works). CRD kinds get their
 * openAPIV3Schema; built-in kinds their whole structure from the type
 * tables: one definition per message they reach, named as the real server
 * names it, with formats, list/map/patch extensions and required fields.
 * Paths carry the operations the resource's verbs allow.
 */
json_t *fakeapi__openapi_v3_gv(fakeapi__registry *reg, const char *group, const char *version);

/*
 * GET /openapi/v2: one Swagger 2.0 document for everything served: the paths
 * and definitions of every group-version's v3 document, rewritten in v2
 * terms (#/definitions references, body parameters, no oneOf/nullable).
 */
json_t *fakeapi__openapi_v2(fakeapi__registry *reg);

/*
 * The v2 document is large (hundreds of definitions), so the server keeps
 * its bytes, JSON and protobuf (openapi_pb.h) each built on the first
 * request for it and rebuilt when the registry's generation moves. The
 * cache is made at start (nothing is built then) and freed at stop. Any
 * thread; its mutex is taken before the registry's lock.
 */
typedef struct fakeapi__openapi_cache fakeapi__openapi_cache;
fakeapi__openapi_cache *fakeapi__openapi_cache_new(void);
void fakeapi__openapi_cache_free(fakeapi__openapi_cache *c);

typedef enum fakeapi__openapi_fmt {
    FAKEAPI__OPENAPI_JSON = 0,
    FAKEAPI__OPENAPI_PROTOBUF = 1, /* gnostic's openapi.v2.Document */
} fakeapi__openapi_fmt;

/*
 * The v2 document in form fmt as a new malloc'ed copy in *out (*len bytes,
 * NUL-terminated for JSON). 0, or -1 on failure.
 */
int fakeapi__openapi_v2_body(fakeapi__openapi_cache *c, fakeapi__registry *reg,
                             fakeapi__openapi_fmt fmt, char **out, size_t *len);

/*
 * The v3 documents through the same cache: the root (version NULL) or the
 * document of group/version ("" for core), as the uncached functions above
 * build them; all of them are built together (the root needs every one's
 * hash) and kept until the registry's generation moves. *out is a new
 * malloc'ed copy (*len bytes). 0; 1 when group/version is not served; -1
 * on failure.
 */
int fakeapi__openapi_v3_body(fakeapi__openapi_cache *c, fakeapi__registry *reg,
                             const char *group, const char *version, char **out, size_t *len);

/*
 * The form an Accept header asks for, taking its media ranges in order:
 * JSON for application/json, a wildcard that covers it, or no header; the
 * protobuf form for application/com.github.proto-openapi.spec.v2@v1.0+protobuf
 * (or its older spelling with ".v1.0"). -1 when nothing listed is served
 * (the handler answers 406).
 */
int fakeapi__openapi_v2_form(const char *accept);

#endif

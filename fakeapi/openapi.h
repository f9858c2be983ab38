/*
 * openapi.h - the OpenAPI documents, generated from the registry.
 *
 * Nothing here is hand-written per kind: every document is derived from the
 * registry's entries at the moment of the call, so a CRD that is added or
 * removed shows up in (or disappears from) the next document.
 *
 * Ownership: every function returns a NEW json_t reference the caller owns
 * (json_decref it), or NULL when the group/version is not served (or on
 * allocation failure). reg is borrowed.
 *
 * Thread-safety: every function may be called from any thread at any time;
 * they only read the registry through its own locked snapshot
 * (fakeapi__registry_all).
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
 * openAPIV3Schema; built-in kinds get their top-level fields only, with
 * x-kubernetes-preserve-unknown-fields below that.
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
 * its compact text, rebuilt when the registry's generation moves. The cache
 * is made at start (nothing is built until the first request) and freed at
 * stop. Any thread.
 */
typedef struct fakeapi__openapi_cache fakeapi__openapi_cache;
fakeapi__openapi_cache *fakeapi__openapi_cache_new(void);
void fakeapi__openapi_cache_free(fakeapi__openapi_cache *c);

/* The v2 document's text as a new malloc'ed copy in *out (*len bytes). 0, or -1 on failure. */
int fakeapi__openapi_v2_text(fakeapi__openapi_cache *c, fakeapi__registry *reg, char **out,
                             size_t *len);

/*
 * True when an Accept header admits the JSON form: application/json, a
 * wildcard that covers it, or no header at all. The protobuf form
 * (application/com.github.proto-openapi.spec.v2@v1.0+protobuf) is not
 * served: asked for alone it gets 406.
 */
bool fakeapi__openapi_v2_accepts_json(const char *accept);

#endif

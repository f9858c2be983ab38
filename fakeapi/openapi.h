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

#endif

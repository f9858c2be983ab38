/*
 * discovery.h - the discovery documents, generated from the registry (OpenAPI:
 * openapi.h).
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
 * (fakeapi__registry_all) and keep no state of their own.
 */
#ifndef FAKEAPI_DISCOVERY_H
#define FAKEAPI_DISCOVERY_H

#include <jansson.h>

#include "registry.h"

/* GET /version: a fixed version.Info ("v1.32.0-fakeapi"); no wall clock. */
json_t *fakeapi__disc_version(void);

/* GET /api: APIVersions with the single core version "v1". */
json_t *fakeapi__disc_api(void);

/*
 * GET /apis: APIGroupList of every non-core group, in registration order,
 * each with its served versions (in registration order) and its preferred
 * version (the storage version, else the first). Never NULL unless out of
 * memory: clients fail all discovery when /apis fails.
 */
json_t *fakeapi__disc_apis(fakeapi__registry *reg);

/* GET /apis/<group>: one APIGroup, or NULL if group is not served ("" is not). */
json_t *fakeapi__disc_group(fakeapi__registry *reg, const char *group);

/*
 * GET /api/v1 (group "") and /apis/<group>/<version>: the APIResourceList,
 * with one entry per kind and one per subresource ("pods/status",
 * "deployments/scale"). NULL if nothing is served at group/version.
 */
json_t *fakeapi__disc_resources(fakeapi__registry *reg, const char *group, const char *version);

/*
 * The same document as compact JSON text (malloc'ed, NUL-terminated, its
 * length in *len), made once per process for a group-version of built-in
 * kinds alone (discovery_text.c). NULL if nothing is served there, or out
 * of memory.
 */
char *fakeapi__disc_resources_text(fakeapi__registry *reg, const char *group, const char *version,
                                   size_t *len);

#endif

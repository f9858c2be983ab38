/*
 * discovery.h - kind -> resource mapping for libctrl, from the server's
 * discovery documents (/api/v1, /apis/<group>/<version>), cached per
 * group-version and re-read on a miss, so kinds that CRDs add at run time
 * are found on first use.
 *
 * A ctrl__discovery is reference-counted (a client and its children share
 * one). Every function is thread-safe: one mutex guards the cache and is
 * never held during HTTP; two threads missing at once may both fetch, and
 * the later answer wins.
 */
#ifndef CTRL_DISCOVERY_H
#define CTRL_DISCOVERY_H

#include "ctrl/client.h"
#include "transport.h"

typedef struct ctrl__discovery ctrl__discovery;

int ctrl__discovery_new(ctrl__discovery **out);
ctrl__discovery *ctrl__discovery_ref(ctrl__discovery *d);
void ctrl__discovery_unref(ctrl__discovery *d);

/*
 * Split "group/version" (or "v1") into its parts. 0 or CTRL_ERR_ARG when
 * the string is empty, has more than one '/', or a part is too long.
 */
int ctrl__split_api_version(const char *api_version, char *group, size_t gcap, char *version,
                            size_t vcap);

/*
 * Resolve (api_version, kind) - or a resource name when `kind` starts with
 * a lower-case letter - through the cache, fetching the group-version's
 * document over t on a miss. Errors: CTRL_ERR_ARG, CTRL_ERR_NO_MATCH, and
 * those of the fetch.
 */
int ctrl__discovery_lookup(ctrl__discovery *d, ctrl__transport *t, const char *api_version,
                           const char *kind, ctrl_resource_info *out, ctrl_error *err);

/* Drop every cached document. */
void ctrl__discovery_invalidate(ctrl__discovery *d);

#endif

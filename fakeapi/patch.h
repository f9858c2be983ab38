/*
 * patch.h - the three Kubernetes patch types, applied to jansson documents.
 *
 *  - JSON patch (RFC 6902): add, remove, replace, move, copy, test, with
 *    RFC 6901 pointers ("~0", "~1", "-" for append).
 *  - JSON merge patch (RFC 7386): objects merge recursively, null deletes,
 *    everything else replaces.
 *  - Strategic merge patch (K8S-API.md items 54-55): like merge patch, but
 *    lists named by the caller's merge-key callback merge element by element
 *    on a key, primitive lists marked as sets are unioned, and the directives
 *    $patch (delete, replace, merge), $setElementOrder/<list>,
 *    $retainKeys, $deleteFromPrimitiveList/<list> are honoured and never
 *    left in the result.
 *
 * None of these functions modifies its inputs: each returns a new document.
 * Reentrant; no global state.
 */
#ifndef FAKEAPI_PATCH_H
#define FAKEAPI_PATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

/*
 * Apply an RFC 6902 patch (a JSON array of operations) to doc.
 * Returns 0 and a new document in *out (caller owns); or -1 with a message
 * in err ("test operation failed at /spec/x", "path /a/b not found",
 * "invalid operation: ...") and *out untouched. A failed "test" is -2, so the
 * caller can answer 409/422 as the API server does (it answers 422 for a
 * failed test, 400 for malformed patches, we keep them apart).
 */
int fakeapi__json_patch(const json_t *doc, const json_t *patch, json_t **out, char *err,
                        size_t errlen);

/* Apply an RFC 7386 merge patch. patch may be any JSON value (non-objects
 * replace doc). Returns 0 and a new document in *out; -1 only on allocation
 * failure. */
int fakeapi__merge_patch(const json_t *doc, const json_t *patch, json_t **out);

/*
 * The merge key of the list found at path, or NULL if that list is
 * replaced wholesale. path is the list's field names from the document root
 * joined by '.', with array positions left out, e.g.
 * "spec.template.spec.containers" or "spec.template.spec.containers.ports".
 * Return "" for a list of primitives merged as a set (finalizers).
 */
typedef const char *(*fakeapi__smp_key_fn)(const char *path, void *ud);

/*
 * Apply a strategic merge patch. key_fn may be NULL (then every list is
 * replaced, i.e. it behaves as a merge patch plus directives); it is called
 * with ud on this thread, during the call only.
 * Returns 0 and a new document in *out (caller owns); -1 with a message for
 * a malformed patch (e.g. "$patch delete on a list without a merge key",
 * unknown directive value, a list element without its merge key, a
 * $setElementOrder that contradicts the patch's order), a doc or patch that
 * is not an object, or allocation failure; *out untouched.
 * Merged lists are ordered as apimachinery orders them: patch elements in
 * the patch's (or $setElementOrder's) order, the others in the document's,
 * so an element the document did not have comes before the old ones.
 */
int fakeapi__smp_patch(const json_t *doc, const json_t *patch, fakeapi__smp_key_fn key_fn, void *ud,
                       json_t **out, char *err, size_t errlen);

/*
 * The merge keys of the built-in kinds, from the type tables (types.h):
 * path is walked from the document's message through nested messages,
 * inline fields and map values to the list it names. A list of messages
 * with +patchStrategy=merge merges on its +patchMergeKey; a list of
 * scalars with +patchStrategy=merge is a set (""); any other list is
 * replaced (NULL), so is an unknown path. For server-side apply (apply set)
 * +listType decides first: map merges on its merge key (else the first
 * +listMapKey), set is a set, atomic is replaced. ud is a
 * fakeapi__smp_types; the returned string lives in the tables or in ud.
 * Runs on the caller's thread; ud must not be shared between threads.
 */
struct fakeapi__tmsg;
typedef struct fakeapi__smp_types {
    const struct fakeapi__tmsg *root; /* the patched document's message; NULL: all replaced */
    bool apply;                       /* server-side apply semantics (+listType first) */
    char keybuf[64];                  /* holds a +listMapKey when one is returned */
} fakeapi__smp_types;

const char *fakeapi__smp_type_key(const char *path, void *ud);

#endif

/*
 * ctrl/controllerutil.h - the helpers controller-runtime's controllerutil
 * package gives Go controllers: create-or-update and create-or-patch,
 * owner and controller references, finalizers.
 *
 * Objects are unstructured (jansson objects with apiVersion, kind and
 * metadata), changed in place. Errors are 0 or a negative ctrl_errcode; the
 * optional ctrl_error carries the message (controller-runtime's wording
 * where it has one, e.g. "Object default/web-1 is already owned by another
 * PodSet controller web").
 *
 * Threads: reentrant; an object belongs to one thread at a time. The
 * create-or-* calls use the client, which is thread-safe (ctrl/client.h).
 */
#ifndef CTRL_CONTROLLERUTIL_H
#define CTRL_CONTROLLERUTIL_H

#include <stdbool.h>
#include <jansson.h>

#include "ctrl/client.h"
#include "ctrl/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- create or update ---- */

/* What a create-or-* call did ("Deployment default/web has been ..."). */
typedef enum ctrl_op_result {
    CTRL_OP_UNCHANGED = 0,      /* "unchanged": nothing written */
    CTRL_OP_CREATED,            /* "created" */
    CTRL_OP_UPDATED,            /* "updated" */
    CTRL_OP_UPDATED_STATUS,     /* "updatedStatus": the object and its status (patch) */
    CTRL_OP_UPDATED_STATUS_ONLY /* "updatedStatusOnly": only the status (patch) */
} ctrl_op_result;

/* controller-runtime's OperationResult string for r. Never NULL. */
const char *ctrl_op_result_string(ctrl_op_result r);

/* Bring obj (the server's copy, or the caller's when it is new) to the
 * desired state. 0, or a negative code that the create-or-* call returns
 * as is, writing nothing. Must not change metadata.name or namespace. */
typedef int (*ctrl_mutate_fn)(json_t *obj, void *user);

/*
 * CreateOrUpdate. obj names the object (apiVersion, kind, metadata.name and
 * metadata.namespace for namespaced kinds). Gets it: when it does not exist,
 * mutate(obj) is called and obj is created; when it exists, obj is replaced
 * by the server's copy, mutate(obj) is called, and obj is updated (PUT) only
 * if mutate changed anything. On success obj holds what the server answered
 * (or the unchanged copy) and *result (may be NULL) what was done.
 *
 * Changes mutate makes to status are sent with the update, which the server
 * ignores for kinds with a status subresource (as in Go).
 *
 * Errors: the client's (get, create, update: a 409 Conflict when the object
 * changed between the get and the update: reconcile again), mutate's own,
 * CTRL_ERR_ARG when mutate changed the name or namespace ("MutateFn cannot
 * mutate object name and/or object namespace") or obj has no name.
 * On error *result is CTRL_OP_UNCHANGED.
 */
int ctrl_create_or_update(ctrl_client *c, json_t *obj, ctrl_mutate_fn mutate, void *user,
                          ctrl_op_result *result, ctrl_error *err);

/*
 * CreateOrPatch: as ctrl_create_or_update, but an existing object is
 * written with JSON merge patches of what mutate changed: one for the
 * object without status, then one to the status subresource when status
 * changed (CTRL_OP_UPDATED, CTRL_OP_UPDATED_STATUS, or
 * CTRL_OP_UPDATED_STATUS_ONLY). A new object is created with what mutate
 * gave it; its status is not written (requeue and patch it then, as Go's).
 * mutate may be NULL (get, or create obj as given).
 */
int ctrl_create_or_patch(ctrl_client *c, json_t *obj, ctrl_mutate_fn mutate, void *user,
                         ctrl_op_result *result, ctrl_error *err);

/*
 * The JSON merge patch (RFC 7386) that turns before into after: changed
 * members, null for removed ones, arrays whole. A new object ({} when they
 * are equal), or NULL when out of memory.
 */
json_t *ctrl_merge_patch_diff(const json_t *before, const json_t *after);

/* ---- owner references ---- */

/*
 * SetControllerReference: make owner (an object from the server: it needs
 * apiVersion, kind, metadata.name and metadata.uid) the controller of obj:
 * an ownerReferences entry with controller and blockOwnerDeletion true,
 * replacing any entry for the same owner (same group, kind and name).
 * Errors (obj unchanged):
 *   CTRL_ERR_ALREADY_OWNED obj has another controller ("Object ns/name is
 *                          already owned by another Kind controller name");
 *   CTRL_ERR_ARG           a namespaced owner of a cluster-scoped object
 *                          ("cluster-scoped resource must not have a
 *                          namespace-scoped owner, owner's namespace ns"), an
 *                          owner in another namespace ("cross-namespace owner
 *                          references are disallowed, ..."), or an owner
 *                          without apiVersion, kind, name or uid.
 * A cluster-scoped owner may own namespaced objects.
 */
int ctrl_set_controller_reference(const json_t *owner, json_t *obj, ctrl_error *err);

/* SetOwnerReference: the same entry without controller and
 * blockOwnerDeletion (a dependency, not control); the same namespace rules. */
int ctrl_set_owner_reference(const json_t *owner, json_t *obj, ctrl_error *err);

/* RemoveOwnerReference: drop obj's entry for owner (group, kind, name).
 * CTRL_ERR_NOT_FOUND when there is none. */
int ctrl_remove_owner_reference(const json_t *owner, json_t *obj, ctrl_error *err);

/* HasOwnerReference: obj has an entry for owner (group, kind, name). */
bool ctrl_has_owner_reference(const json_t *obj, const json_t *owner);

/* HasControllerReference: some entry of obj has controller true. */
bool ctrl_has_controller_reference(const json_t *obj);

/* The entry with controller true (borrowed from obj), or NULL. */
const json_t *ctrl_get_controller_of(const json_t *obj);

/* ---- finalizers ---- */

/* AddFinalizer: append f to metadata.finalizers unless there. True when
 * obj changed (false also when out of memory or obj is not an object). */
bool ctrl_add_finalizer(json_t *obj, const char *f);
/* RemoveFinalizer: remove every f. True when obj changed. */
bool ctrl_remove_finalizer(json_t *obj, const char *f);
/* ContainsFinalizer. */
bool ctrl_contains_finalizer(const json_t *obj, const char *f);

#ifdef __cplusplus
}
#endif

#endif

/*
 * claim.h - adoption and release of dependents by a controller owner
 * (kube-controller-manager's ControllerRefManager.ClaimObject), shared by
 * the ReplicaSet controller (its pods) and the Deployment controller (its
 * ReplicaSets).
 *
 * For each object: one controlled by another owner is left alone; one
 * controlled by the owner is kept if the selector matches it and released
 * (its ownerReference removed) if not, unless the owner is being deleted;
 * an orphan that matches is adopted (a controller ownerReference added)
 * unless it or the owner is being deleted, after one fresh read of the
 * owner from the API server confirms that it still exists with the same uid
 * (a cache may still hold an owner that was deleted and made again).
 * Writes are merge patches carrying the object's resourceVersion, so an
 * object that changed meanwhile is a 409 and the reconcile retries.
 *
 * Threads: reentrant; called from reconciles.
 */
#ifndef KC_CLAIM_H
#define KC_CLAIM_H

#include <jansson.h>

#include "ctrl/cache.h"
#include "ctrl/client.h"

typedef struct kc_claim {
    ctrl_client *writer;            /* patches go here */
    ctrl_client *reader;            /* the fresh read of the owner (an uncached client) */
    const json_t *owner;            /* borrowed: apiVersion, kind, metadata name/namespace/uid */
    const json_t *selector;         /* borrowed: the owner's LabelSelector */
    const char *api_version, *kind; /* of the objects */
} kc_claim;

/*
 * Claim objs (borrowed array of objects in the owner's namespace): *out is
 * a new array of those the owner now controls (references to the objects
 * of objs, or the patched copies the server answered). Objects that could
 * not be released or adopted because they are gone (404) are skipped.
 * Returns 0, or the first other error (*out untouched).
 */
int kc__claim(const kc_claim *cl, const json_t *objs, json_t **out);

/*
 * Two indexes for a dependents' informer, shared by the controllers that
 * claim: KC_CONTROLLER_INDEX maps an object to its controller owner's uid,
 * KC_ORPHAN_INDEX maps an object without a controller to its namespace.
 * kc__add_claim_indexes adds both (0 also when they are there already).
 */
#define KC_CONTROLLER_INDEX "kc/controller-uid"
#define KC_ORPHAN_INDEX "kc/orphans"
int kc__add_claim_indexes(ctrl_informer *inf);

/* The ownerReference entry of obj that is its controller and names
 * owner_uid, or NULL. */
const json_t *kc__controlled_by(const json_t *obj, const char *owner_uid);

#endif

/*
 * claim.c - adoption and release of dependents (claim.h).
 */
#include "claim.h"

#include <string.h>

#include "ctrl/controllerutil.h"
#include "ctrl/object.h"
#include "podutil.h"

const json_t *kc__controlled_by(const json_t *obj, const char *owner_uid)
{
    const json_t *ref = ctrl_get_controller_of(obj);
    const char *uid = json_string_value(json_object_get(ref, "uid"));
    return uid && owner_uid && !strcmp(uid, owner_uid) ? ref : NULL;
}

/* A merge patch setting obj's ownerReferences to refs (taken over; NULL or
 * empty: removed), guarded by obj's resourceVersion. */
static int patch_refs(const kc_claim *cl, const json_t *obj, json_t *refs, json_t **out)
{
    json_t *patch =
        json_pack("{s:{s:s?, s:o}}", "metadata", "resourceVersion", ctrl_obj_resource_version(obj),
                  "ownerReferences", refs && json_array_size(refs) ? refs : json_null());
    if (refs && !json_array_size(refs))
        json_decref(refs);
    if (!patch)
        return CTRL_ERR_NOMEM;
    int rc = ctrl_client_patch(cl->writer, cl->api_version, cl->kind, ctrl_obj_namespace(obj),
                               ctrl_obj_name(obj), CTRL_PATCH_MERGE, patch, NULL, out, NULL);
    json_decref(patch);
    return rc;
}

static int release(const kc_claim *cl, const json_t *obj)
{
    const char *owner_uid = ctrl_obj_uid(cl->owner);
    json_t *refs = json_array();
    if (!refs)
        return CTRL_ERR_NOMEM;
    size_t i;
    json_t *ref;
    json_array_foreach(ctrl_obj_get(obj, "metadata.ownerReferences"), i, ref)
    {
        const char *uid = json_string_value(json_object_get(ref, "uid"));
        if (!uid || strcmp(uid, owner_uid))
            json_array_append(refs, ref);
    }
    int rc = patch_refs(cl, obj, refs, NULL);
    /* Gone, or no longer valid to change: either way it is not ours. */
    return ctrl_err_is_not_found(rc) || ctrl_err_is_invalid(rc) ? 0 : rc;
}

/* The owner, read fresh: still there, the same uid, not being deleted? */
static int can_adopt(const kc_claim *cl)
{
    json_t *fresh = NULL;
    int rc = ctrl_client_get(cl->reader, ctrl_obj_api_version(cl->owner), ctrl_obj_kind(cl->owner),
                             ctrl_obj_namespace(cl->owner), ctrl_obj_name(cl->owner), &fresh, NULL);
    if (rc < 0)
        return ctrl_err_is_not_found(rc) ? 1 : rc;
    const char *a = ctrl_obj_uid(fresh), *b = ctrl_obj_uid(cl->owner);
    int ok = a && b && !strcmp(a, b) && !ctrl_obj_deleting(fresh) ? 0 : 1;
    json_decref(fresh);
    return ok;
}

static int adopt(const kc_claim *cl, const json_t *obj, json_t **out)
{
    json_t *copy = json_deep_copy(obj);
    if (!copy)
        return CTRL_ERR_NOMEM;
    int rc = ctrl_set_controller_reference(cl->owner, copy, NULL);
    if (rc == 0) {
        json_t *refs = ctrl_obj_get(copy, "metadata.ownerReferences");
        rc = patch_refs(cl, obj, json_incref(refs), out);
    }
    json_decref(copy);
    return rc;
}

int kc__claim(const kc_claim *cl, const json_t *objs, json_t **out)
{
    json_t *claimed = json_array();
    if (!claimed)
        return CTRL_ERR_NOMEM;
    const char *owner_uid = ctrl_obj_uid(cl->owner);
    bool owner_deleting = ctrl_obj_deleting(cl->owner);
    int adoptable = -1; /* unknown until the first orphan */
    int rc = 0;
    size_t i;
    json_t *obj;
    json_array_foreach(objs, i, obj)
    {
        int m = kc__selector_matches(cl->selector, ctrl_obj_get(obj, "metadata.labels"));
        const json_t *ctl = ctrl_get_controller_of(obj);
        if (ctl) {
            const char *uid = json_string_value(json_object_get(ctl, "uid"));
            if (!uid || !owner_uid || strcmp(uid, owner_uid))
                continue; /* another owner's */
            if (m == 1) {
                json_array_append(claimed, obj);
            } else if (!owner_deleting && (rc = release(cl, obj)) < 0) {
                goto out;
            }
            continue;
        }
        if (owner_deleting || m != 1 || ctrl_obj_deleting(obj))
            continue;
        if (adoptable < 0 && (adoptable = can_adopt(cl)) < 0) {
            rc = adoptable;
            goto out;
        }
        if (adoptable != 0)
            continue;
        json_t *patched = NULL;
        rc = adopt(cl, obj, &patched);
        if (ctrl_err_is_not_found(rc)) {
            rc = 0;
            continue;
        }
        if (rc < 0)
            goto out;
        json_array_append_new(claimed, patched);
    }
out:
    if (rc < 0)
        json_decref(claimed);
    else
        *out = claimed;
    return rc;
}

static json_t *controller_index(const json_t *obj, void *user)
{
    (void)user;
    const json_t *ref = ctrl_get_controller_of(obj);
    const char *uid = json_string_value(json_object_get(ref, "uid"));
    return uid ? json_pack("[s]", uid) : NULL;
}

static json_t *orphan_index(const json_t *obj, void *user)
{
    (void)user;
    const char *ns = ctrl_obj_namespace(obj);
    return !ctrl_get_controller_of(obj) && ns ? json_pack("[s]", ns) : NULL;
}

int kc__add_claim_indexes(ctrl_informer *inf)
{
    /* CTRL_ERR_ARG: the index exists (another controller added it). */
    int rc = ctrl_informer_add_index(inf, KC_CONTROLLER_INDEX, controller_index, NULL);
    if (rc < 0 && rc != CTRL_ERR_ARG)
        return rc;
    rc = ctrl_informer_add_index(inf, KC_ORPHAN_INDEX, orphan_index, NULL);
    return rc == CTRL_ERR_ARG ? 0 : rc;
}

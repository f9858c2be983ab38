/*
 * handler.c - event handlers: events to requests (ctrl/controller.h), as
 * controller-runtime's handler package: EnqueueRequestForObject,
 * EnqueueRequestForOwner (OnlyControllerOwner or every owner of a kind) and
 * EnqueueRequestsFromMapFunc.
 *
 * A handler is immutable once built (the builder may set the owner's scope
 * before the controller starts), so informer threads use it without a lock.
 */
#include <stdlib.h>
#include <string.h>

#include "controller_int.h"

typedef enum hkind { H_OBJECT, H_OWNER, H_MAP } hkind;

struct ctrl_handler {
    hkind kind;
    char *owner_group; /* H_OWNER: the group of owner_api_version ("" = core) */
    char *owner_kind;
    bool only_controller;
    bool owner_cluster_scoped;
    ctrl_map_fn fn; /* H_MAP */
    void *user;
};

ctrl_handler *ctrl_handler_for_object(void)
{
    ctrl_handler *h = calloc(1, sizeof(*h));
    if (h)
        h->kind = H_OBJECT;
    return h;
}

/* The group of an apiVersion: "apps/v1" -> "apps", "v1" -> "". */
static char *group_of(const char *api_version)
{
    const char *slash = strchr(api_version, '/');
    return slash ? strndup(api_version, (size_t)(slash - api_version)) : strdup("");
}

ctrl_handler *ctrl_handler_for_owner(const char *owner_api_version, const char *owner_kind,
                                     bool only_controller)
{
    if (!owner_api_version || !owner_kind || !*owner_kind)
        return NULL;
    ctrl_handler *h = calloc(1, sizeof(*h));
    if (!h)
        return NULL;
    h->kind = H_OWNER;
    h->owner_group = group_of(owner_api_version);
    h->owner_kind = strdup(owner_kind);
    h->only_controller = only_controller;
    if (!h->owner_group || !h->owner_kind) {
        ctrl_handler_free(h);
        return NULL;
    }
    return h;
}

ctrl_handler *ctrl_handler_from_map(ctrl_map_fn fn, void *user)
{
    if (!fn)
        return NULL;
    ctrl_handler *h = calloc(1, sizeof(*h));
    if (!h)
        return NULL;
    h->kind = H_MAP;
    h->fn = fn;
    h->user = user;
    return h;
}

void ctrl_handler_free(ctrl_handler *h)
{
    if (!h)
        return;
    free(h->owner_group);
    free(h->owner_kind);
    free(h);
}

void ctrl__handler_set_owner_cluster_scoped(ctrl_handler *h, bool cluster_scoped)
{
    if (h)
        h->owner_cluster_scoped = cluster_scoped;
}

bool ctrl__handler_is_owner(const ctrl_handler *h)
{
    return h && h->kind == H_OWNER;
}

/* ---- mapping ---- */

static const char *str_or(const json_t *v, const char *dflt)
{
    const char *s = json_string_value(v);
    return s ? s : dflt;
}

/* Does ownerReference ref name an owner this handler wants? */
static bool owner_matches(const ctrl_handler *h, const json_t *ref)
{
    if (h->only_controller && !json_is_true(json_object_get(ref, "controller")))
        return false;
    const char *kind = json_string_value(json_object_get(ref, "kind"));
    const char *av = json_string_value(json_object_get(ref, "apiVersion"));
    if (!kind || !av || strcmp(kind, h->owner_kind) != 0)
        return false;
    /* Versions may differ (apps/v1 vs apps/v1beta1): compare groups only. */
    const char *slash = strchr(av, '/');
    size_t glen = slash ? (size_t)(slash - av) : 0;
    return strlen(h->owner_group) == glen && strncmp(av, h->owner_group, glen) == 0;
}

static void map_one(const ctrl_handler *h, const json_t *obj, ctrl__enqueue_fn fn, void *ud)
{
    if (!obj)
        return;
    const json_t *md = json_object_get(obj, "metadata");
    const char *ns = str_or(json_object_get(md, "namespace"), "");
    switch (h->kind) {
    case H_OBJECT: {
        const char *name = json_string_value(json_object_get(md, "name"));
        if (name && *name)
            fn(ud, ns, name);
        return;
    }
    case H_OWNER: {
        const json_t *refs = json_object_get(md, "ownerReferences");
        size_t i;
        const json_t *ref;
        json_array_foreach(refs, i, ref)
        {
            const char *name = json_string_value(json_object_get(ref, "name"));
            if (name && *name && owner_matches(h, ref))
                fn(ud, h->owner_cluster_scoped ? "" : ns, name);
        }
        return;
    }
    case H_MAP: {
        json_t *reqs = h->fn(obj, h->user);
        size_t i;
        json_t *r;
        json_array_foreach(reqs, i, r)
        {
            const char *name = json_string_value(json_object_get(r, "name"));
            if (name && *name)
                fn(ud, str_or(json_object_get(r, "namespace"), ""), name);
        }
        json_decref(reqs);
        return;
    }
    }
}

void ctrl__handler_create(const ctrl_handler *h, const json_t *obj, ctrl__enqueue_fn fn, void *ud)
{
    if (h && fn)
        map_one(h, obj, fn, ud);
}

void ctrl__handler_update(const ctrl_handler *h, const json_t *old_obj, const json_t *new_obj,
                          ctrl__enqueue_fn fn, void *ud)
{
    if (!h || !fn)
        return;
    if (h->kind == H_OBJECT) {
        /* The object's name and namespace do not change: the new one is enough. */
        map_one(h, new_obj ? new_obj : old_obj, fn, ud);
        return;
    }
    /* Owners and mapped requests may change with the update: both sides
     * count (the work queue drops the duplicates). */
    map_one(h, old_obj, fn, ud);
    map_one(h, new_obj, fn, ud);
}

void ctrl__handler_delete(const ctrl_handler *h, const json_t *obj, ctrl__enqueue_fn fn, void *ud)
{
    if (h && fn)
        map_one(h, obj, fn, ud);
}

/*
 * controllerutil.c - see ctrl/controllerutil.h. Reentrant; called from
 * reconcile workers (any thread).
 */
#include "ctrl/controllerutil.h"

#include <string.h>

#include "ctrl/object.h"
#include "error_int.h"

const char *ctrl_op_result_string(ctrl_op_result r)
{
    switch (r) {
    case CTRL_OP_CREATED:
        return "created";
    case CTRL_OP_UPDATED:
        return "updated";
    case CTRL_OP_UPDATED_STATUS:
        return "updatedStatus";
    case CTRL_OP_UPDATED_STATUS_ONLY:
        return "updatedStatusOnly";
    case CTRL_OP_UNCHANGED:
        break;
    }
    return "unchanged";
}

/* ---- create or update / patch ---- */

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

static bool same_str(const char *a, const char *b)
{
    return !strcmp(or_empty(a), or_empty(b));
}

/* Run mutate and check it kept the key (name, namespace). */
static int run_mutate(ctrl_mutate_fn mutate, void *user, json_t *obj, const char *name,
                      const char *ns, ctrl_error *err)
{
    if (!mutate)
        return 0;
    int rc = mutate(obj, user);
    if (rc < 0)
        return ctrl__error_set(err, rc, "mutate: %s", ctrl_strerror(rc));
    if (!same_str(ctrl_obj_name(obj), name) || !same_str(ctrl_obj_namespace(obj), ns))
        return ctrl__error_set(err, CTRL_ERR_ARG,
                               "MutateFn cannot mutate object name and/or object namespace");
    return 0;
}

/* Replace obj's members by src's (obj keeps its identity for the caller). */
static int replace_members(json_t *obj, json_t *src)
{
    json_object_clear(obj);
    return json_object_update(obj, src) < 0 ? CTRL_ERR_NOMEM : 0;
}

typedef struct key {
    char api_version[256], kind[256], ns[256], name[256];
} key;

static int read_key(const json_t *obj, key *k, ctrl_error *err)
{
    const char *av = ctrl_obj_api_version(obj), *kind = ctrl_obj_kind(obj);
    const char *name = ctrl_obj_name(obj), *ns = ctrl_obj_namespace(obj);
    if (!json_is_object(obj) || !av || !kind || !name || !*name)
        return ctrl__error_set(err, CTRL_ERR_ARG, "object needs apiVersion, kind and metadata.name");
    if (strlen(av) >= sizeof k->api_version || strlen(kind) >= sizeof k->kind ||
        strlen(name) >= sizeof k->name || (ns && strlen(ns) >= sizeof k->ns))
        return ctrl__error_set(err, CTRL_ERR_ARG, "object key too long");
    strcpy(k->api_version, av);
    strcpy(k->kind, kind);
    strcpy(k->name, name);
    strcpy(k->ns, ns ? ns : "");
    return 0;
}

/*
 * The common first half: get; when missing, mutate and create (*done =
 * true). Otherwise obj holds the server's copy and *before a deep copy of it.
 */
static int get_or_create(ctrl_client *c, json_t *obj, ctrl_mutate_fn mutate, void *user,
                         const key *k, json_t **before, ctrl_op_result *result, bool *done,
                         ctrl_error *err)
{
    json_t *cur = NULL;
    int rc = ctrl_client_get(c, k->api_version, k->kind, k->ns, k->name, &cur, err);
    if (rc < 0 && !ctrl_err_is_not_found(rc))
        return rc;
    if (rc < 0) {
        rc = run_mutate(mutate, user, obj, k->name, *k->ns ? k->ns : NULL, err);
        if (rc < 0)
            return rc;
        json_t *made = NULL;
        rc = ctrl_client_create(c, obj, NULL, &made, err);
        if (rc < 0)
            return rc;
        rc = replace_members(obj, made);
        json_decref(made);
        if (rc == 0) {
            *result = CTRL_OP_CREATED;
            *done = true;
        }
        return rc;
    }
    /* Reads of cached kinds may come back without apiVersion and kind. */
    if (!json_object_get(cur, "apiVersion"))
        json_object_set_new(cur, "apiVersion", json_string(k->api_version));
    if (!json_object_get(cur, "kind"))
        json_object_set_new(cur, "kind", json_string(k->kind));
    rc = replace_members(obj, cur);
    json_decref(cur);
    if (rc < 0)
        return rc;
    *before = json_deep_copy(obj);
    return *before ? 0 : CTRL_ERR_NOMEM;
}

int ctrl_create_or_update(ctrl_client *c, json_t *obj, ctrl_mutate_fn mutate, void *user,
                          ctrl_op_result *result, ctrl_error *err)
{
    ctrl_op_result r = CTRL_OP_UNCHANGED;
    if (result)
        *result = r;
    if (!c)
        return ctrl__error_set(err, CTRL_ERR_ARG, "no client");
    key k;
    int rc = read_key(obj, &k, err);
    if (rc < 0)
        return rc;
    json_t *before = NULL;
    bool done = false;
    rc = get_or_create(c, obj, mutate, user, &k, &before, &r, &done, err);
    if (rc < 0 || done)
        goto out;
    rc = run_mutate(mutate, user, obj, k.name, *k.ns ? k.ns : NULL, err);
    if (rc < 0 || json_equal(before, obj))
        goto out;
    json_t *answer = NULL;
    rc = ctrl_client_update(c, obj, NULL, &answer, err);
    if (rc == 0) {
        rc = replace_members(obj, answer);
        json_decref(answer);
        r = CTRL_OP_UPDATED;
    }
out:
    json_decref(before);
    if (result)
        *result = rc < 0 ? CTRL_OP_UNCHANGED : r;
    return rc;
}

/* A copy of obj without status; *status (borrowed from obj) the status. */
static json_t *without_status(const json_t *obj, json_t **status)
{
    *status = json_object_get(obj, "status");
    json_t *copy = json_copy((json_t *)obj); /* shallow: members shared */
    if (copy)
        json_object_del(copy, "status");
    return copy;
}

int ctrl_create_or_patch(ctrl_client *c, json_t *obj, ctrl_mutate_fn mutate, void *user,
                         ctrl_op_result *result, ctrl_error *err)
{
    ctrl_op_result r = CTRL_OP_UNCHANGED;
    if (result)
        *result = r;
    if (!c)
        return ctrl__error_set(err, CTRL_ERR_ARG, "no client");
    key k;
    int rc = read_key(obj, &k, err);
    if (rc < 0)
        return rc;
    json_t *before = NULL, *b_main = NULL, *a_main = NULL, *patch = NULL, *answer = NULL;
    bool done = false;
    rc = get_or_create(c, obj, mutate, user, &k, &before, &r, &done, err);
    if (rc < 0 || done)
        goto out;
    rc = run_mutate(mutate, user, obj, k.name, *k.ns ? k.ns : NULL, err);
    if (rc < 0)
        goto out;
    json_t *b_status, *a_status;
    b_main = without_status(before, &b_status);
    a_main = without_status(obj, &a_status);
    if (!b_main || !a_main) {
        rc = CTRL_ERR_NOMEM;
        goto out;
    }
    /* Keep the status mutate wanted: the main patch's answer carries the
     * server's status. */
    json_t *want_status = a_status ? json_deep_copy(a_status) : NULL;
    if (!json_equal(b_main, a_main)) {
        patch = ctrl_merge_patch_diff(b_main, a_main);
        if (!patch) {
            json_decref(want_status);
            rc = CTRL_ERR_NOMEM;
            goto out;
        }
        rc = ctrl_client_patch(c, k.api_version, k.kind, *k.ns ? k.ns : NULL, k.name,
                               CTRL_PATCH_MERGE, patch, NULL, &answer, err);
        json_decref(patch);
        patch = NULL;
        if (rc < 0) {
            json_decref(want_status);
            goto out;
        }
        r = CTRL_OP_UPDATED;
    }
    if ((b_status || want_status) && !json_equal(b_status, want_status)) {
        json_t *bs = json_pack("{s:O?}", "status", b_status);
        json_t *as = json_pack("{s:O?}", "status", want_status);
        patch = bs && as ? ctrl_merge_patch_diff(bs, as) : NULL;
        json_decref(bs);
        json_decref(as);
        if (!patch) {
            json_decref(want_status);
            rc = CTRL_ERR_NOMEM;
            goto out;
        }
        json_decref(answer);
        answer = NULL;
        rc = ctrl_client_patch_status(c, k.api_version, k.kind, *k.ns ? k.ns : NULL, k.name,
                                      CTRL_PATCH_MERGE, patch, NULL, &answer, err);
        if (rc < 0) {
            json_decref(want_status);
            goto out;
        }
        r = r == CTRL_OP_UPDATED ? CTRL_OP_UPDATED_STATUS : CTRL_OP_UPDATED_STATUS_ONLY;
    }
    json_decref(want_status);
    if (answer)
        rc = replace_members(obj, answer);
out:
    json_decref(before);
    json_decref(b_main);
    json_decref(a_main);
    json_decref(patch);
    json_decref(answer);
    if (result)
        *result = rc < 0 ? CTRL_OP_UNCHANGED : r;
    return rc;
}

json_t *ctrl_merge_patch_diff(const json_t *before, const json_t *after)
{
    json_t *patch = json_object();
    if (!patch)
        return NULL;
    const char *k;
    json_t *a;
    json_object_foreach((json_t *)after, k, a)
    {
        json_t *b = json_object_get(before, k);
        if (b && json_equal(a, b))
            continue;
        json_t *v;
        if (json_is_object(a) && json_is_object(b))
            v = ctrl_merge_patch_diff(b, a);
        else
            v = json_deep_copy(a);
        if (!v || json_object_set_new(patch, k, v) < 0) {
            json_decref(patch);
            return NULL;
        }
    }
    json_t *b;
    json_object_foreach((json_t *)before, k, b)
    {
        if (!json_object_get(after, k) && json_object_set_new(patch, k, json_null()) < 0) {
            json_decref(patch);
            return NULL;
        }
    }
    return patch;
}

/* ---- owner references ---- */

/* The group of an apiVersion ("apps/v1": "apps"; "v1": ""), its length. */
static size_t group_len(const char *av)
{
    const char *slash = av ? strchr(av, '/') : NULL;
    return slash ? (size_t)(slash - av) : 0;
}

/* a and b name the same object: same group, kind and name (any version). */
static bool same_ref(const json_t *a, const char *av, const char *kind, const char *name)
{
    const char *aav = json_string_value(json_object_get(a, "apiVersion"));
    size_t la = group_len(aav), lb = group_len(av);
    return aav && la == lb && !strncmp(aav, av, la) &&
           same_str(json_string_value(json_object_get(a, "kind")), kind) &&
           same_str(json_string_value(json_object_get(a, "name")), name);
}

static int validate_owner(const json_t *owner, const json_t *obj, ctrl_error *err)
{
    const char *ons = ctrl_obj_namespace(owner), *ns = ctrl_obj_namespace(obj);
    if (!ons || !*ons)
        return 0;
    if (!ns || !*ns)
        return ctrl__error_set(err, CTRL_ERR_ARG,
                               "cluster-scoped resource must not have a namespace-scoped owner, "
                               "owner's namespace %s",
                               ons);
    if (strcmp(ons, ns))
        return ctrl__error_set(err, CTRL_ERR_ARG,
                               "cross-namespace owner references are disallowed, owner's "
                               "namespace %s, obj's namespace %s",
                               ons, ns);
    return 0;
}

/* The owner's fields, checked. */
static int owner_fields(const json_t *owner, const json_t *obj, const char **av, const char **kind,
                        const char **name, const char **uid, ctrl_error *err)
{
    *av = ctrl_obj_api_version(owner);
    *kind = ctrl_obj_kind(owner);
    *name = ctrl_obj_name(owner);
    *uid = ctrl_obj_uid(owner);
    if (!json_is_object(obj))
        return ctrl__error_set(err, CTRL_ERR_ARG, "object is not a JSON object");
    if (!*av || !*kind || !*name || !*uid || !**name || !**uid)
        return ctrl__error_set(err, CTRL_ERR_ARG,
                               "owner needs apiVersion, kind, metadata.name and metadata.uid");
    return validate_owner(owner, obj, err);
}

static json_t *owner_refs(json_t *obj, bool create)
{
    json_t *meta = json_object_get(obj, "metadata");
    if (!meta && create) {
        meta = json_object();
        json_object_set_new(obj, "metadata", meta);
    }
    json_t *refs = json_object_get(meta, "ownerReferences");
    if (!refs && create && json_is_object(meta)) {
        refs = json_array();
        json_object_set_new(meta, "ownerReferences", refs);
    }
    return json_is_array(refs) ? refs : NULL;
}

/* Insert ref, or replace the entry for the same object. Takes ref. */
static int upsert_ref(json_t *obj, json_t *ref, const char *av, const char *kind, const char *name)
{
    json_t *refs = owner_refs(obj, true);
    if (!refs || !ref) {
        json_decref(ref);
        return refs ? CTRL_ERR_NOMEM : CTRL_ERR_ARG;
    }
    size_t i;
    json_t *r;
    json_array_foreach(refs, i, r)
    {
        if (same_ref(r, av, kind, name))
            return json_array_set_new(refs, i, ref) < 0 ? CTRL_ERR_NOMEM : 0;
    }
    return json_array_append_new(refs, ref) < 0 ? CTRL_ERR_NOMEM : 0;
}

const json_t *ctrl_get_controller_of(const json_t *obj)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(json_object_get(obj, "metadata"), "ownerReferences"), i, r)
    {
        if (json_is_true(json_object_get(r, "controller")))
            return r;
    }
    return NULL;
}

bool ctrl_has_controller_reference(const json_t *obj)
{
    return ctrl_get_controller_of(obj) != NULL;
}

int ctrl_set_controller_reference(const json_t *owner, json_t *obj, ctrl_error *err)
{
    const char *av, *kind, *name, *uid;
    int rc = owner_fields(owner, obj, &av, &kind, &name, &uid, err);
    if (rc < 0)
        return rc;
    const json_t *cur = ctrl_get_controller_of(obj);
    if (cur && !same_ref(cur, av, kind, name)) {
        const char *ns = ctrl_obj_namespace(obj);
        return ctrl__error_set(err, CTRL_ERR_ALREADY_OWNED,
                               "Object %s/%s is already owned by another %s controller %s",
                               or_empty(ns), or_empty(ctrl_obj_name(obj)),
                               or_empty(json_string_value(json_object_get(cur, "kind"))),
                               or_empty(json_string_value(json_object_get(cur, "name"))));
    }
    json_t *ref = json_pack("{s:s,s:s,s:s,s:s,s:b,s:b}", "apiVersion", av, "kind", kind, "name",
                            name, "uid", uid, "controller", 1, "blockOwnerDeletion", 1);
    return upsert_ref(obj, ref, av, kind, name);
}

int ctrl_set_owner_reference(const json_t *owner, json_t *obj, ctrl_error *err)
{
    const char *av, *kind, *name, *uid;
    int rc = owner_fields(owner, obj, &av, &kind, &name, &uid, err);
    if (rc < 0)
        return rc;
    json_t *ref = json_pack("{s:s,s:s,s:s,s:s}", "apiVersion", av, "kind", kind, "name", name,
                            "uid", uid);
    return upsert_ref(obj, ref, av, kind, name);
}

bool ctrl_has_owner_reference(const json_t *obj, const json_t *owner)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(json_object_get(obj, "metadata"), "ownerReferences"), i, r)
    {
        if (same_ref(r, ctrl_obj_api_version(owner), ctrl_obj_kind(owner), ctrl_obj_name(owner)))
            return true;
    }
    return false;
}

int ctrl_remove_owner_reference(const json_t *owner, json_t *obj, ctrl_error *err)
{
    json_t *refs = owner_refs(obj, false);
    size_t i;
    json_t *r;
    json_array_foreach(refs, i, r)
    {
        if (same_ref(r, ctrl_obj_api_version(owner), ctrl_obj_kind(owner), ctrl_obj_name(owner))) {
            json_array_remove(refs, i);
            return 0;
        }
    }
    return ctrl__error_set(err, CTRL_ERR_NOT_FOUND, "%s %s/%s has no owner reference for %s %s",
                           ctrl_obj_kind(obj) ? ctrl_obj_kind(obj) : "object",
                           or_empty(ctrl_obj_namespace(obj)), or_empty(ctrl_obj_name(obj)),
                           or_empty(ctrl_obj_kind(owner)), or_empty(ctrl_obj_name(owner)));
}

/* ---- finalizers ---- */

bool ctrl_contains_finalizer(const json_t *obj, const char *f)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(json_object_get(obj, "metadata"), "finalizers"), i, e)
    {
        if (f && same_str(json_string_value(e), f))
            return true;
    }
    return false;
}

bool ctrl_add_finalizer(json_t *obj, const char *f)
{
    if (!json_is_object(obj) || !f || ctrl_contains_finalizer(obj, f))
        return false;
    json_t *meta = json_object_get(obj, "metadata");
    if (!meta) {
        meta = json_object();
        if (json_object_set_new(obj, "metadata", meta) < 0)
            return false;
    }
    json_t *list = json_object_get(meta, "finalizers");
    if (!list || json_is_null(list)) {
        list = json_array();
        if (json_object_set_new(meta, "finalizers", list) < 0)
            return false;
    }
    return json_is_array(list) && json_array_append_new(list, json_string(f)) == 0;
}

bool ctrl_remove_finalizer(json_t *obj, const char *f)
{
    json_t *list = json_object_get(json_object_get(obj, "metadata"), "finalizers");
    bool changed = false;
    for (size_t i = json_array_size(list); f && i-- > 0;) {
        if (same_str(json_string_value(json_array_get(list, i)), f)) {
            json_array_remove(list, i);
            changed = true;
        }
    }
    return changed;
}

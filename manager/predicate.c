/*
 * predicate.c - event filters (ctrl/controller.h), as controller-runtime's
 * predicate package: funcs, generation / resourceVersion / labels /
 * annotations changed, label selector, and/or/not.
 *
 * A predicate is an immutable tree with an atomic reference count, so one
 * can be shared by several watches and evaluated from any informer thread
 * at once without a lock.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "controller_int.h"
#include "store_int.h"

typedef enum pkind {
    P_FUNCS,
    P_GENERATION,
    P_RESOURCE_VERSION,
    P_LABELS,
    P_ANNOTATIONS,
    P_SELECTOR,
    P_AND,
    P_OR,
    P_NOT,
} pkind;

struct ctrl_predicate {
    atomic_int refs;
    pkind kind;
    ctrl_predicate_funcs funcs; /* P_FUNCS */
    ctrl__selector *sel;        /* P_SELECTOR */
    ctrl_predicate *a, *b;      /* P_AND, P_OR (a, b); P_NOT (a) */
};

static ctrl_predicate *alloc_pred(pkind kind)
{
    ctrl_predicate *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    atomic_init(&p->refs, 1);
    p->kind = kind;
    return p;
}

ctrl_predicate *ctrl_pred_funcs(const ctrl_predicate_funcs *f)
{
    ctrl_predicate *p = alloc_pred(P_FUNCS);
    if (p && f)
        p->funcs = *f;
    return p;
}

ctrl_predicate *ctrl_pred_generation_changed(void)
{
    return alloc_pred(P_GENERATION);
}

ctrl_predicate *ctrl_pred_resource_version_changed(void)
{
    return alloc_pred(P_RESOURCE_VERSION);
}

ctrl_predicate *ctrl_pred_labels_changed(void)
{
    return alloc_pred(P_LABELS);
}

ctrl_predicate *ctrl_pred_annotations_changed(void)
{
    return alloc_pred(P_ANNOTATIONS);
}

ctrl_predicate *ctrl_pred_label_selector(const char *selector)
{
    ctrl__selector *sel = NULL;
    if (!selector || ctrl__selector_parse(selector, &sel) < 0)
        return NULL;
    ctrl_predicate *p = alloc_pred(P_SELECTOR);
    if (!p) {
        ctrl__selector_free(sel);
        return NULL;
    }
    p->sel = sel;
    return p;
}

static ctrl_predicate *combine(pkind kind, ctrl_predicate *a, ctrl_predicate *b)
{
    ctrl_predicate *p = a && (b || kind == P_NOT) ? alloc_pred(kind) : NULL;
    if (!p) {
        ctrl_predicate_free(a);
        ctrl_predicate_free(b);
        return NULL;
    }
    p->a = a;
    p->b = b;
    return p;
}

ctrl_predicate *ctrl_pred_and(ctrl_predicate *a, ctrl_predicate *b)
{
    return combine(P_AND, a, b);
}

ctrl_predicate *ctrl_pred_or(ctrl_predicate *a, ctrl_predicate *b)
{
    return combine(P_OR, a, b);
}

ctrl_predicate *ctrl_pred_not(ctrl_predicate *p)
{
    return combine(P_NOT, p, NULL);
}

ctrl_predicate *ctrl_predicate_ref(ctrl_predicate *p)
{
    if (p)
        atomic_fetch_add(&p->refs, 1);
    return p;
}

void ctrl_predicate_free(ctrl_predicate *p)
{
    while (p && atomic_fetch_sub(&p->refs, 1) == 1) {
        ctrl_predicate *a = p->a, *b = p->b;
        ctrl__selector_free(p->sel);
        free(p);
        ctrl_predicate_free(b);
        p = a; /* iterate down the left spine: long and-chains need no deep recursion */
    }
}

/* ---- evaluation ---- */

static const json_t *meta(const json_t *obj, const char *field)
{
    return json_object_get(json_object_get(obj, "metadata"), field);
}

/* Maps that are absent and maps that are empty compare equal. */
static bool maps_equal(const json_t *a, const json_t *b)
{
    bool ea = !json_is_object(a) || json_object_size(a) == 0;
    bool eb = !json_is_object(b) || json_object_size(b) == 0;
    if (ea || eb)
        return ea && eb;
    return json_equal((json_t *)a, (json_t *)b);
}

typedef enum ev { EV_CREATE, EV_UPDATE, EV_DELETE } ev;

static bool eval(const ctrl_predicate *p, ev e, const json_t *old_obj, const json_t *obj)
{
    switch (p->kind) {
    case P_FUNCS:
        if (e == EV_CREATE)
            return !p->funcs.create || p->funcs.create(obj, p->funcs.user);
        if (e == EV_UPDATE)
            return !p->funcs.update || p->funcs.update(old_obj, obj, p->funcs.user);
        return !p->funcs.remove || p->funcs.remove(obj, p->funcs.user);
    case P_GENERATION:
        /* As controller-runtime: an update without both objects' metadata
         * is dropped; a missing generation on both is "unchanged". */
        if (e != EV_UPDATE)
            return true;
        if (!json_is_object(json_object_get(old_obj, "metadata")) ||
            !json_is_object(json_object_get(obj, "metadata")))
            return false;
        return json_integer_value(meta(old_obj, "generation")) !=
               json_integer_value(meta(obj, "generation"));
    case P_RESOURCE_VERSION: {
        if (e != EV_UPDATE)
            return true;
        const char *a = json_string_value(meta(old_obj, "resourceVersion"));
        const char *b = json_string_value(meta(obj, "resourceVersion"));
        if (!a || !b)
            return false;
        return strcmp(a, b) != 0;
    }
    case P_LABELS:
        if (e != EV_UPDATE)
            return true;
        return !maps_equal(meta(old_obj, "labels"), meta(obj, "labels"));
    case P_ANNOTATIONS:
        if (e != EV_UPDATE)
            return true;
        return !maps_equal(meta(old_obj, "annotations"), meta(obj, "annotations"));
    case P_SELECTOR:
        /* Updates are judged by the new object, as controller-runtime. */
        return ctrl__selector_matches(p->sel, meta(obj, "labels"));
    case P_AND:
        return eval(p->a, e, old_obj, obj) && eval(p->b, e, old_obj, obj);
    case P_OR:
        return eval(p->a, e, old_obj, obj) || eval(p->b, e, old_obj, obj);
    case P_NOT:
        return !eval(p->a, e, old_obj, obj);
    }
    return false;
}

bool ctrl__pred_create(const ctrl_predicate *p, const json_t *obj)
{
    return !p || eval(p, EV_CREATE, NULL, obj);
}

bool ctrl__pred_update(const ctrl_predicate *p, const json_t *old_obj, const json_t *new_obj)
{
    return !p || eval(p, EV_UPDATE, old_obj, new_obj);
}

bool ctrl__pred_delete(const ctrl_predicate *p, const json_t *obj)
{
    return !p || eval(p, EV_DELETE, NULL, obj);
}

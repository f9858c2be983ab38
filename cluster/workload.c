/*
 * workload.c - shared pieces of the pod-owning controllers (workload.h).
 *
 * DESIGN: no threads, no locks of its own. The Pod informer's handler
 * (one per kc_wl) runs on the informer's thread and only counts down the
 * kc_expect, whose mutex is a leaf. A kc_wl is freed with its controller,
 * after the manager has stopped its informers.
 */
#include "workload.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/controllerutil.h"
#include "ctrl/object.h"
#include "podutil.h"

#define CREATE_ATTEMPTS 3

const char *kc__wl_key(const char *ns, const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", ns ? ns : "", name ? name : "");
    return buf;
}

static json_t *owner_index(const json_t *obj, void *user)
{
    (void)user;
    const json_t *ref = ctrl_get_controller_of(obj);
    const char *uid = json_string_value(json_object_get(ref, "uid"));
    return uid ? json_pack("[s]", uid) : NULL;
}

/* The key of pod's controller owner when it is of wl's kind, else NULL. */
static const char *owner_key(const kc_wl *wl, const json_t *pod, char *buf, size_t len)
{
    const json_t *ref = ctrl_get_controller_of(pod);
    const char *kind = json_string_value(json_object_get(ref, "kind"));
    const char *av = json_string_value(json_object_get(ref, "apiVersion"));
    const char *name = json_string_value(json_object_get(ref, "name"));
    size_t gl = strlen(wl->group);
    if (!kind || !av || !name || strcmp(kind, wl->kind) || strncmp(av, wl->group, gl) ||
        av[gl] != '/')
        return NULL;
    return kc__wl_key(ctrl_obj_namespace(pod), name, buf, len);
}

static void on_add(const json_t *obj, bool initial, void *user)
{
    (void)initial;
    kc_wl *wl = user;
    char key[512];
    if (owner_key(wl, obj, key, sizeof key))
        kc__expect_observed_add(wl->expect, key);
}

static void on_update(const json_t *old_obj, const json_t *new_obj, void *user)
{
    kc_wl *wl = user;
    char key[512];
    if (!ctrl_obj_deleting(old_obj) && ctrl_obj_deleting(new_obj) &&
        owner_key(wl, new_obj, key, sizeof key))
        kc__expect_observed_del(wl->expect, key);
}

static void on_delete(const json_t *obj, bool final_state_unknown, void *user)
{
    (void)final_state_unknown;
    kc_wl *wl = user;
    char key[512];
    /* A pod that had a deletionTimestamp was counted when it got it. */
    if (!ctrl_obj_deleting(obj) && owner_key(wl, obj, key, sizeof key))
        kc__expect_observed_del(wl->expect, key);
}

int kc__wl_setup(ctrl_manager *mgr, kc_config *cfg, const char *group, const char *kind,
                 kc_wl **out)
{
    ctrl_informer *pods = NULL;
    int rc = kc__wl_index(mgr, "v1", "Pod");
    if (rc == 0)
        rc = ctrl_cache_informer(ctrl_manager_cache(mgr), "v1", "Pod", NULL, &pods, NULL);
    if (rc < 0)
        return rc;
    kc_wl *wl = calloc(1, sizeof *wl);
    if (!wl)
        return CTRL_ERR_NOMEM;
    wl->expect = kc__expect_new(0);
    if (!wl->expect) {
        free(wl);
        return CTRL_ERR_NOMEM;
    }
    wl->group = group;
    wl->kind = kind;
    ctrl_event_handler h = {
        .on_add = on_add, .on_update = on_update, .on_delete = on_delete, .user = wl};
    if ((rc = ctrl_informer_add_handler(pods, &h)) < 0) {
        kc__expect_free(wl->expect);
        free(wl);
        return rc;
    }
    wl->cfg = kc_config_ref(cfg);
    *out = wl;
    return 0;
}

void kc__wl_free(void *p)
{
    kc_wl *wl = p;
    if (!wl)
        return;
    kc__expect_free(wl->expect);
    kc_config_free(wl->cfg);
    free(wl);
}

int kc__wl_index(ctrl_manager *mgr, const char *api_version, const char *kind)
{
    ctrl_informer *inf = NULL;
    int rc = ctrl_cache_informer(ctrl_manager_cache(mgr), api_version, kind, NULL, &inf, NULL);
    if (rc == 0)
        rc = ctrl_informer_add_index(inf, KC__WL_OWNER_INDEX, owner_index, NULL);
    return rc == CTRL_ERR_ARG ? 0 : rc; /* ARG: another controller added it */
}

int kc__wl_owned(ctrl_ctx *ctx, const char *api_version, const char *kind, const char *uid,
                 json_t **out)
{
    ctrl_informer *inf = NULL;
    int rc = ctrl_cache_informer(ctrl_ctx_cache(ctx), api_version, kind, NULL, &inf, NULL);
    if (rc < 0)
        return rc;
    return ctrl_informer_by_index(inf, KC__WL_OWNER_INDEX, uid, out);
}

int kc__wl_pods(ctrl_ctx *ctx, const char *uid, json_t **out)
{
    return kc__wl_owned(ctx, "v1", "Pod", uid, out);
}

int64_t kc__wl_wall(ctrl_ctx *ctx)
{
    return ctrl_clock_wall_ns(ctrl_ctx_clock(ctx));
}

ctrl_result kc__wl_after(ctrl_ctx *ctx, int64_t started_wall, int64_t delay_ns)
{
    int64_t left = delay_ns - (kc__wl_wall(ctx) - started_wall);
    return ctrl_requeue_after(left > CTRL_MILLISECOND ? left : CTRL_MILLISECOND);
}

int kc__wl_create(ctrl_ctx *ctx, kc_wl *wl, const char *key, const json_t *pod, json_t **out)
{
    int rc = 0;
    json_t *made = NULL;
    for (int attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
        rc = ctrl_client_create(ctrl_ctx_client(ctx), pod, NULL, &made, NULL);
        /* A generated name already taken: nothing was created; again. */
        if (!ctrl_err_is_already_exists(rc) || !ctrl_obj_meta(pod, "generateName"))
            break;
    }
    if (rc < 0) {
        kc__expect_observed_add(wl->expect, key);
        return rc;
    }
    if (out)
        *out = made;
    else
        json_decref(made);
    return 0;
}

int kc__wl_delete(ctrl_ctx *ctx, kc_wl *wl, const char *key, const json_t *pod)
{
    ctrl_delete_options o = {.precondition_uid = ctrl_obj_uid(pod)};
    int rc = ctrl_client_delete(ctrl_ctx_client(ctx), "v1", "Pod", ctrl_obj_namespace(pod),
                                ctrl_obj_name(pod), &o, NULL, NULL);
    if (rc == 0)
        return 0;
    /* Never seen as deleted by the informer through us: count it now. */
    kc__expect_observed_del(wl->expect, key);
    return ctrl_err_is_not_found(rc) || ctrl_err_is_conflict(rc) ? 0 : rc;
}

int kc__wl_write_status(ctrl_ctx *ctx, const json_t *orig, const json_t *updated, json_t **written)
{
    if (json_equal(json_object_get(orig, "status"), json_object_get(updated, "status"))) {
        if (written)
            *written = json_deep_copy(orig);
        return 0;
    }
    return ctrl_client_update_status(ctrl_ctx_client(ctx), updated, NULL, written, NULL);
}

void kc__wl_set_int(json_t *obj, const char *field, int64_t v, bool omit_zero)
{
    json_t *st = json_object_get(obj, "status");
    if (!json_is_object(st)) {
        st = json_object();
        json_object_set_new(obj, "status", st);
    }
    if (v == 0 && omit_zero)
        json_object_del(st, field);
    else
        json_object_set_new(st, field, json_integer(v));
}

void kc__wl_event(ctrl_ctx *ctx, const json_t *obj, const char *type, const char *reason,
                  const char *fmt, ...)
{
    ctrl_recorder *r = ctrl_ctx_recorder(ctx);
    if (!r)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ctrl_recorder_event(r, obj, type, reason, "%s", msg);
}

static int phase_rank(const json_t *pod)
{
    const char *p = kc__pod_phase(pod);
    return !strcmp(p, "Pending") ? 0 : !strcmp(p, "Unknown") ? 1 : 2;
}

static int deletion_order(const void *a, const void *b)
{
    const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
    int ax = ctrl_obj_get_string(x, "spec.nodeName") != NULL;
    int ay = ctrl_obj_get_string(y, "spec.nodeName") != NULL;
    if (ax != ay)
        return ax - ay;
    int px = phase_rank(x), py = phase_rank(y);
    if (px != py)
        return px - py;
    int rx = kc__pod_ready(x), ry = kc__pod_ready(y);
    if (rx != ry)
        return rx - ry;
    const char *tx = ctrl_obj_meta(x, "creationTimestamp"),
               *ty = ctrl_obj_meta(y, "creationTimestamp");
    int c = strcmp(ty ? ty : "", tx ? tx : "");
    if (c)
        return c;
    return strcmp(ctrl_obj_name(y) ? ctrl_obj_name(y) : "",
                  ctrl_obj_name(x) ? ctrl_obj_name(x) : "");
}

void kc__wl_sort_for_deletion(json_t *pods)
{
    size_t n = json_array_size(pods);
    if (n < 2)
        return;
    json_t **v = malloc(n * sizeof *v);
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(pods, i));
    qsort(v, n, sizeof *v, deletion_order);
    json_array_clear(pods);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(pods, v[i]);
    free(v);
}

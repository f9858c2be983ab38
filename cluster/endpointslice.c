/*
 * endpointslice.c - the EndpointSlice controller (kube-controller-manager's
 * "endpointslice" controller, pkg/controller/endpointslice): for every
 * Service with a selector, discovery.k8s.io/v1 EndpointSlices (addressType
 * IPv4) listing the selected pods, at most 100 endpoints a slice.
 *
 * A reconcile is one Service key. The Service and its pods come from the
 * cache; the Service's slices from the API server (a list by the
 * kubernetes.io/service-name and managed-by labels), so that a slice this
 * controller has just created under a generated name is never missed and
 * never made twice. Each selected pod with an IPv4 address (being deleted
 * or not; Succeeded and Failed pods are out) is one endpoint: addresses,
 * conditions {ready, serving, terminating} as upstream computes them,
 * hostname (when the pod's subdomain is the Service), nodeName, zone (the
 * node's topology.kubernetes.io/zone label, from the Node cache), targetRef;
 * the ports are the Service's ports resolved for that pod (FindPort), and
 * endpoints are grouped into slices by that port list.
 *
 * Placement keeps slices stable, as upstream's reconciler does: an
 * endpoint already in a slice of its group stays there (updated in place);
 * the new ones fill the group's slices with room, in name order, then new
 * slices (generateName "<service>-"); slices left empty are deleted, and so
 * are slices of a port list no endpoint has any more and slices another
 * Service (an older one of the same name) owns. A Service with no
 * endpoints keeps one empty placeholder slice. Endpoints are sorted by pod
 * name within a slice. Slices carry the Service's labels, the two labels
 * above, service.kubernetes.io/headless for headless Services, an owner
 * reference to the Service (the garbage collector removes them with it)
 * and the last-change-trigger-time annotation on the slices a pass writes.
 * A slice is written only when its endpoints, ports or labels change.
 *
 * Threads: reconciles on the controller's worker (one key at a time); the
 * pod map function on the pod informer's thread. The trigger tracker has
 * its own lock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_int.h"
#include "liveclient.h"
#include "ctrl/controller.h"
#include "ctrl/controllerutil.h"
#include "ctrl/object.h"
#include "podutil.h"
#include "svcutil.h"

#define NAME "endpointslice"
#define DISCOVERY "discovery.k8s.io/v1"
#define SERVICE_NAME_LABEL "kubernetes.io/service-name"
#define MANAGED_BY_LABEL "endpointslice.kubernetes.io/managed-by"
#define MANAGED_BY "endpointslice-controller.k8s.io"
#define MAX_PER_SLICE 100
#define ZONE_LABEL "topology.kubernetes.io/zone"

typedef struct es_ctl {
    kc_config *cfg;
    ctrl_informer *svcs, *pods, *nodes;
    kc_trigger *trig;
    ctrl_client *live; /* reads of the slices (liveclient.h) */
} es_ctl;

static void es_free(void *p)
{
    es_ctl *e = p;
    if (!e)
        return;
    kc__trigger_free(e->trig);
    ctrl_client_free(e->live);
    kc_config_free(e->cfg);
    free(e);
}

/* ---- desired state ---- */

static json_t *endpoint_for(const json_t *pod, const json_t *svc, const char *ip,
                            ctrl_informer *nodes)
{
    bool serving = kc__pod_ready(pod), terminating = ctrl_obj_deleting(pod);
    bool ready =
        ctrl_obj_get_bool(svc, "spec.publishNotReadyAddresses", false) || (serving && !terminating);
    json_t *ep =
        json_pack("{s:[s], s:{s:b, s:b, s:b}, s:{s:s, s:s, s:s, s:s}}", "addresses", ip,
                  "conditions", "ready", ready, "serving", serving, "terminating", terminating,
                  "targetRef", "kind", "Pod", "namespace", ctrl_obj_namespace(pod), "name",
                  ctrl_obj_name(pod), "uid", ctrl_obj_uid(pod) ? ctrl_obj_uid(pod) : "");
    if (!ep)
        return NULL;
    if (kc__pod_hostname_for(pod, svc))
        json_object_set_new(ep, "hostname", json_string(ctrl_obj_get_string(pod, "spec.hostname")));
    const char *node = ctrl_obj_get_string(pod, "spec.nodeName");
    if (node && *node) {
        json_object_set_new(ep, "nodeName", json_string(node));
        /* The zone of the pod's node, when the node says. */
        json_t *n = NULL;
        if (ctrl_informer_get(nodes, "", node, &n) == 0) {
            const char *zone = ctrl_obj_label(n, ZONE_LABEL);
            if (zone && *zone)
                json_object_set_new(ep, "zone", json_string(zone));
        }
        json_decref(n);
    }
    return ep;
}

/* getEndpointPorts: the Service's ports this pod resolves. */
static json_t *ports_for(const json_t *pod, const json_t *svc)
{
    json_t *out = json_array();
    size_t i;
    json_t *sp;
    json_array_foreach(ctrl_obj_get(svc, "spec.ports"), i, sp)
    {
        int64_t num;
        if (!out || kc__find_port(pod, sp, &num) < 0)
            continue;
        const char *name = json_string_value(json_object_get(sp, "name"));
        const char *proto = json_string_value(json_object_get(sp, "protocol"));
        json_t *p = json_pack("{s:s, s:I, s:s}", "name", name ? name : "", "port", (json_int_t)num,
                              "protocol", proto ? proto : "TCP");
        const json_t *ap = json_object_get(sp, "appProtocol");
        if (p && json_is_string(ap))
            json_object_set(p, "appProtocol", (json_t *)ap);
        json_array_append_new(out, p);
    }
    return out;
}

static char *ports_key(const json_t *ports)
{
    json_t *empty = NULL;
    if (!ports)
        ports = empty = json_array();
    char *k = json_dumps(ports, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(empty);
    return k;
}

/*
 * The desired endpoints, grouped: a new object port-key -> {"ports": [..],
 * "eps": {pod name: endpoint}}; selected gets every selected pod (for the
 * trigger tracker). NULL when out of memory.
 */
static json_t *desired_groups(const json_t *svc, const json_t *pods, json_t *selected,
                              ctrl_informer *nodes)
{
    json_t *groups = json_object();
    size_t i;
    json_t *pod;
    json_array_foreach(pods, i, pod)
    {
        if (!groups)
            return NULL;
        if (!kc__svc_selects(svc, pod))
            continue;
        json_array_append(selected, pod);
        const char *ip = kc__pod_ip(pod);
        if (!kc__pod_in_endpoints(pod, true) || !ip || strchr(ip, ':'))
            continue;
        json_t *ports = ports_for(pod, svc), *ep = endpoint_for(pod, svc, ip, nodes);
        char *key = ports ? ports_key(ports) : NULL;
        json_t *g = key ? json_object_get(groups, key) : NULL;
        if (key && !g) {
            g = json_pack("{s:O, s:{}}", "ports", ports, "eps");
            if (g && json_object_set_new(groups, key, g) < 0)
                g = NULL;
        }
        bool ok =
            g && ep && json_object_set(json_object_get(g, "eps"), ctrl_obj_name(pod), ep) == 0;
        free(key);
        json_decref(ports);
        json_decref(ep);
        if (!ok) {
            json_decref(groups);
            return NULL;
        }
    }
    return groups;
}

static json_t *labels_for(const json_t *svc)
{
    json_t *l = json_object();
    const char *k;
    json_t *v;
    json_object_foreach(ctrl_obj_get(svc, "metadata.labels"), k, v)
    {
        if (strcmp(k, SERVICE_NAME_LABEL) && strcmp(k, MANAGED_BY_LABEL) &&
            strcmp(k, KC_HEADLESS_LABEL))
            json_object_set(l, k, v);
    }
    json_object_set_new(l, SERVICE_NAME_LABEL, json_string(ctrl_obj_name(svc)));
    json_object_set_new(l, MANAGED_BY_LABEL, json_string(MANAGED_BY));
    if (kc__svc_headless(svc))
        json_object_set_new(l, KC_HEADLESS_LABEL, json_string(""));
    return l;
}

/* ---- placement ---- */

/* A slice as planned: the existing one (NULL: to create) and its new
 * endpoints (an object pod name -> endpoint) and ports. */
typedef struct plan {
    json_t *slice; /* borrowed from the listed slices */
    json_t *eps;   /* owned */
    json_t *ports; /* owned */
    char *key;     /* ports key */
} plan;

typedef struct pass {
    ctrl_ctx *ctx;
    ctrl_client *c;
    const json_t *svc;
    json_t *labels;
    int64_t trigger;
    plan *ps;
    size_t n, cap;
} pass;

static plan *add_plan(pass *p, json_t *slice, json_t *ports, const char *key)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 8;
        plan *more = realloc(p->ps, cap * sizeof *more);
        if (!more)
            return NULL;
        p->ps = more;
        p->cap = cap;
    }
    plan *pl = &p->ps[p->n];
    *pl = (plan){slice, json_object(), json_incref(ports), strdup(key)};
    if (!pl->eps || !pl->key) {
        json_decref(pl->eps);
        json_decref(pl->ports);
        free(pl->key);
        return NULL;
    }
    p->n++;
    return pl;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The keys of obj, sorted: a malloc'ed array of borrowed strings. */
static const char **sorted_keys(const json_t *obj, size_t *n)
{
    *n = json_object_size(obj);
    const char **ks = malloc((*n ? *n : 1) * sizeof *ks);
    if (!ks)
        return NULL;
    size_t i = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) ks[i++] = k;
    qsort(ks, *n, sizeof *ks, name_cmp);
    return ks;
}

static bool owned_by(const json_t *slice, const json_t *svc)
{
    const json_t *ref = ctrl_get_controller_of(slice);
    const char *uid = json_string_value(json_object_get(ref, "uid"));
    const char *kind = json_string_value(json_object_get(ref, "kind"));
    return uid && kind && !strcmp(kind, "Service") && ctrl_obj_uid(svc) &&
           !strcmp(uid, ctrl_obj_uid(svc));
}

/* Place the desired endpoints into the existing slices (sorted by name)
 * and new ones. Slices not to keep get a plan with no endpoints. */
static int place(pass *p, json_t *groups, const json_t *slices)
{
    size_t i;
    json_t *s;
    json_array_foreach(slices, i, s)
    {
        json_t *ports = json_object_get(s, "ports");
        char *key = ports_key(ports);
        if (!key)
            return CTRL_ERR_NOMEM;
        json_t *empty = json_array();
        plan *pl = add_plan(p, s, json_is_array(ports) ? ports : empty, key);
        json_decref(empty);
        json_t *g = json_object_get(groups, key);
        free(key);
        if (!pl)
            return CTRL_ERR_NOMEM;
        const char *addr_type = json_string_value(json_object_get(s, "addressType"));
        if (!g || !owned_by(s, p->svc) || !addr_type || strcmp(addr_type, "IPv4"))
            continue;
        size_t j;
        json_t *ep;
        json_t *want = json_object_get(g, "eps");
        json_array_foreach(json_object_get(s, "endpoints"), j, ep)
        {
            const char *pod =
                json_string_value(json_object_get(json_object_get(ep, "targetRef"), "name"));
            json_t *d = pod ? json_object_get(want, pod) : NULL;
            if (d) {
                json_object_set(pl->eps, pod, d);
                json_object_del(want, pod);
            }
        }
    }
    size_t ng;
    const char **keys = sorted_keys(groups, &ng);
    if (!keys)
        return CTRL_ERR_NOMEM;
    int rc = 0;
    for (size_t k = 0; k < ng && rc == 0; k++) {
        json_t *g = json_object_get(groups, keys[k]);
        json_t *want = json_object_get(g, "eps");
        size_t nl;
        const char **left = sorted_keys(want, &nl);
        if (!left) {
            rc = CTRL_ERR_NOMEM;
            break;
        }
        size_t next = 0, nexisting = p->n;
        for (size_t j = 0; j < nexisting && next < nl; j++) {
            plan *pl = &p->ps[j];
            if (!pl->slice || strcmp(pl->key, keys[k]) || !owned_by(pl->slice, p->svc))
                continue;
            const char *at = json_string_value(json_object_get(pl->slice, "addressType"));
            if (!at || strcmp(at, "IPv4"))
                continue;
            while (next < nl && json_object_size(pl->eps) < MAX_PER_SLICE) {
                json_object_set(pl->eps, left[next], json_object_get(want, left[next]));
                next++;
            }
        }
        while (next < nl && rc == 0) {
            plan *pl = add_plan(p, NULL, json_object_get(g, "ports"), keys[k]);
            if (!pl) {
                rc = CTRL_ERR_NOMEM;
                break;
            }
            while (next < nl && json_object_size(pl->eps) < MAX_PER_SLICE) {
                json_object_set(pl->eps, left[next], json_object_get(want, left[next]));
                next++;
            }
        }
        free(left);
    }
    free(keys);
    return rc;
}

/* The endpoints of a plan as a sorted array. */
static json_t *eps_array(const plan *pl)
{
    size_t n;
    const char **ks = sorted_keys(pl->eps, &n);
    json_t *arr = json_array();
    if (!ks || !arr) {
        free(ks);
        json_decref(arr);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        json_array_append(arr, json_object_get(pl->eps, ks[i]));
    free(ks);
    return arr;
}

static bool same_array(const json_t *have, const json_t *want)
{
    if (!json_array_size(have))
        return json_array_size(want) == 0;
    return json_equal(have, want);
}

/* Create or update the slice of pl (obj: its new content) when it changed. */
static int write_plan(pass *p, const plan *pl)
{
    json_t *eps = eps_array(pl);
    json_t *obj = NULL;
    int rc = 0;
    if (!eps)
        return CTRL_ERR_NOMEM;
    if (pl->slice && same_array(json_object_get(pl->slice, "endpoints"), eps) &&
        same_array(json_object_get(pl->slice, "ports"), pl->ports) &&
        json_equal(ctrl_obj_get(pl->slice, "metadata.labels"), p->labels))
        goto out;
    if (pl->slice) {
        obj = json_deep_copy(pl->slice);
    } else {
        char gen[300];
        snprintf(gen, sizeof gen, "%s-", ctrl_obj_name(p->svc));
        obj = json_pack("{s:s, s:s, s:{s:s, s:s}, s:s}", "apiVersion", DISCOVERY, "kind",
                        "EndpointSlice", "metadata", "generateName", gen, "namespace",
                        ctrl_obj_namespace(p->svc), "addressType", "IPv4");
        if (obj && (rc = ctrl_set_controller_reference(p->svc, obj, NULL)) < 0)
            goto out;
    }
    if (!obj) {
        rc = CTRL_ERR_NOMEM;
        goto out;
    }
    ctrl_obj_set(obj, "metadata.labels", json_deep_copy(p->labels));
    if (p->trigger >= 0) {
        char when[40];
        kc__rfc3339(p->trigger, when, sizeof when);
        ctrl_obj_set_annotation(obj, KC_TRIGGER_ANNOTATION, when);
    } else if (ctrl_obj_annotation(obj, KC_TRIGGER_ANNOTATION)) {
        ctrl_obj_set_annotation(obj, KC_TRIGGER_ANNOTATION, NULL);
    }
    json_object_set(obj, "endpoints", eps);
    json_object_set(obj, "ports", pl->ports);
    rc = pl->slice ? ctrl_client_update(p->c, obj, NULL, NULL, NULL)
                   : ctrl_client_create(p->c, obj, NULL, NULL, NULL);
    if (rc == 0 && ctrl__log_on(p->ctx, CTRL_LOG_DEBUG)) {
        char n[32];
        snprintf(n, sizeof n, "%zu", json_array_size(eps));
        ctrl_log_debug(p->ctx, pl->slice ? "updated endpointslice" : "created endpointslice",
                       "endpoints", n);
    }
out:
    json_decref(obj);
    json_decref(eps);
    return rc;
}

static int delete_slice(pass *p, const json_t *slice)
{
    ctrl_delete_options o = {.precondition_uid = ctrl_obj_uid(slice)};
    int rc = ctrl_client_delete(p->c, DISCOVERY, "EndpointSlice", ctrl_obj_namespace(slice),
                                ctrl_obj_name(slice), &o, NULL, NULL);
    return ctrl_err_is_not_found(rc) || ctrl_err_is_conflict(rc) ? 0 : rc;
}

/* Write the plan: creations, updates, then deletions (as upstream). */
static int apply(pass *p, size_t total)
{
    /* No endpoints at all: one placeholder slice stays, the first kept or
     * a new one. */
    if (total == 0) {
        plan *keep = NULL;
        for (size_t i = 0; i < p->n && !keep; i++)
            if (p->ps[i].slice && owned_by(p->ps[i].slice, p->svc))
                keep = &p->ps[i];
        json_t *none = json_array();
        if (!none)
            return CTRL_ERR_NOMEM;
        if (!keep)
            keep = add_plan(p, NULL, none, "[]");
        if (keep) {
            json_decref(keep->ports);
            keep->ports = json_incref(none);
        }
        json_decref(none);
        if (!keep)
            return CTRL_ERR_NOMEM;
        int rc = write_plan(p, keep);
        for (size_t i = 0; i < p->n && rc == 0; i++)
            if (&p->ps[i] != keep && p->ps[i].slice)
                rc = delete_slice(p, p->ps[i].slice);
        return rc;
    }
    int rc = 0;
    for (size_t i = 0; i < p->n && rc == 0; i++)
        if (!p->ps[i].slice)
            rc = write_plan(p, &p->ps[i]);
    for (size_t i = 0; i < p->n && rc == 0; i++)
        if (p->ps[i].slice && json_object_size(p->ps[i].eps))
            rc = write_plan(p, &p->ps[i]);
    for (size_t i = 0; i < p->n && rc == 0; i++)
        if (p->ps[i].slice && !json_object_size(p->ps[i].eps))
            rc = delete_slice(p, p->ps[i].slice);
    return rc;
}

static int slice_name_cmp(const void *a, const void *b)
{
    const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
    return strcmp(ctrl_obj_name(x), ctrl_obj_name(y));
}

/* The Service's slices from the server, sorted by name; a new array. */
static int list_slices(ctrl_client *live, const ctrl_request *req, json_t **out)
{
    char sel[400];
    snprintf(sel, sizeof sel, SERVICE_NAME_LABEL "=%s," MANAGED_BY_LABEL "=" MANAGED_BY, req->name);
    ctrl_list_options lo = {.label_selector = sel};
    json_t *list = NULL;
    int rc = ctrl_client_list(live, DISCOVERY, "EndpointSlice", req->ns, &lo, &list, NULL);
    if (rc < 0)
        return rc;
    json_t *items = json_incref(json_object_get(list, "items"));
    json_decref(list);
    size_t n = json_array_size(items);
    json_t **v = malloc((n ? n : 1) * sizeof *v);
    json_t *sorted = json_array();
    if (!items || !v || !sorted) {
        free(v);
        json_decref(items);
        json_decref(sorted);
        return CTRL_ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = json_array_get(items, i);
    qsort(v, n, sizeof *v, slice_name_cmp);
    for (size_t i = 0; i < n; i++)
        json_array_append(sorted, v[i]);
    free(v);
    json_decref(items);
    *out = sorted;
    return 0;
}

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    es_ctl *e = user;
    char key[512];
    snprintf(key, sizeof key, "%s/%s", req->ns, req->name);
    json_t *svc = NULL, *pods = NULL, *selected = NULL, *groups = NULL, *slices = NULL;
    pass p = {.ctx = ctx, .c = ctrl_ctx_client(ctx)};
    ctrl_result res = ctrl_done();
    int rc = ctrl_informer_get(e->svcs, req->ns, req->name, &svc);
    if (ctrl_err_is_not_found(rc)) {
        /* The garbage collector removes the slices with their Service. */
        kc__trigger_delete(e->trig, key);
        return ctrl_done();
    }
    if (rc < 0)
        return ctrl_err(rc);
    if (!kc__svc_has_selector(svc))
        goto out;
    p.svc = svc;
    selected = json_array();
    rc = kc__svc_pods(e->pods, svc, &pods);
    if (rc == 0 && !selected)
        rc = CTRL_ERR_NOMEM;
    if (rc == 0 && !(groups = desired_groups(svc, pods, selected, e->nodes)))
        rc = CTRL_ERR_NOMEM;
    if (rc == 0 && !(p.labels = labels_for(svc)))
        rc = CTRL_ERR_NOMEM;
    if (rc == 0)
        rc = list_slices(e->live, req, &slices);
    if (rc < 0) {
        res = ctrl_err(rc);
        goto out;
    }
    p.trigger = kc__trigger_compute(e->trig, key, svc, selected);
    size_t total = 0;
    const char *k;
    json_t *g;
    json_object_foreach(groups, k, g) total += json_object_size(json_object_get(g, "eps"));
    rc = place(&p, groups, slices);
    if (rc == 0)
        rc = apply(&p, total);
    if (rc < 0 && !(ctrl_err_is_forbidden(rc) && ctrl_obj_deleting(svc)))
        res = ctrl_err(rc);
out:
    for (size_t i = 0; i < p.n; i++) {
        json_decref(p.ps[i].eps);
        json_decref(p.ps[i].ports);
        free(p.ps[i].key);
    }
    free(p.ps);
    json_decref(p.labels);
    json_decref(slices);
    json_decref(groups);
    json_decref(selected);
    json_decref(pods);
    json_decref(svc);
    return res;
}

int kc__endpointslice_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen)
{
    ctrl_cache *cache = ctrl_manager_cache(mgr);
    es_ctl *e = calloc(1, sizeof *e);
    if (!e)
        return KC_ERR_NOMEM;
    int rc = ctrl_cache_informer(cache, "v1", "Service", NULL, &e->svcs, NULL);
    if (rc == 0)
        rc = ctrl_cache_informer(cache, "v1", "Pod", NULL, &e->pods, NULL);
    if (rc == 0)
        rc = ctrl_cache_informer(cache, "v1", "Node", NULL, &e->nodes, NULL);
    e->trig = kc__trigger_new();
    if (rc == 0 && !e->trig)
        rc = KC_ERR_NOMEM;
    char name[64];
    kc__controller_name(NAME, name, sizeof name);
    if (rc == 0)
        rc = kc__live_client(mgr, name, &e->live);
    if (rc < 0) {
        es_free(e);
        snprintf(errbuf, errlen, NAME ": informers: %d", rc);
        return rc;
    }
    e->cfg = kc_config_ref(cfg);
    ctrl_builder *b = ctrl_builder_for(mgr, "v1", "Service");
    ctrl_builder_named(b, name);
    ctrl_builder_watches(b, "v1", "Pod", ctrl_handler_from_map(kc__svc_map_pod, e->svcs), NULL);
    ctrl_builder_watches(b, DISCOVERY, "EndpointSlice",
                         ctrl_handler_for_owner("v1", "Service", true), NULL);
    ctrl_builder_with_user_free(b, es_free);
    rc = ctrl_builder_complete(b, reconcile, e);
    if (rc < 0 && errbuf && errlen)
        snprintf(errbuf, errlen, NAME ": %s", ctrl_strerror(rc));
    return rc;
}

/*
 * endpoints.c - the Endpoints controller (kube-controller-manager's
 * "endpoint" controller, pkg/controller/endpoint): for every Service with a
 * selector, an Endpoints object of the same name listing the selected pods.
 *
 * A reconcile is one Service key. The Service and its pods come from the
 * cache; the Endpoints from the API server (it is this controller's own
 * write, and a stale read would only make a write fail with a conflict).
 * Each selected pod with an IP becomes an address (ip, nodeName, hostname
 * when its subdomain is the Service, targetRef) in addresses when it is
 * Ready (or the Service publishes not-ready addresses) and in
 * notReadyAddresses otherwise, once per Service port it resolves (FindPort);
 * the subsets are then repacked as upstream's RepackSubsets does: one subset
 * per distinct set of (address, ready) sharing the same ports. Addresses in
 * a subset are sorted by IP and then pod uid (upstream's order); ports by
 * name, port and protocol, and subsets by their content (upstream orders
 * those two by a hash of the Go structures, an order no client relies on).
 *
 * The Endpoints carries the Service's labels, endpoints.kubernetes.io/
 * managed-by=endpoint-controller, service.kubernetes.io/headless for
 * headless Services, and the last-change-trigger-time annotation. It is
 * written only when its subsets or labels differ from what they should be,
 * and deleted when the Service goes. Services without a selector are left
 * alone.
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
#include "ctrl/object.h"
#include "podutil.h"
#include "svcutil.h"

#define NAME "endpoints"
#define MANAGED_BY_LABEL "endpoints.kubernetes.io/managed-by"
#define MANAGED_BY "endpoint-controller"
#define OVER_CAPACITY_KEY "endpoints.kubernetes.io/over-capacity"
#define MAX_CAPACITY 1000

typedef struct ep_ctl {
    kc_config *cfg;
    ctrl_informer *svcs, *pods;
    kc_trigger *trig;
    ctrl_client *live; /* reads of the Endpoints (liveclient.h) */
} ep_ctl;

static void ep_free(void *p)
{
    ep_ctl *e = p;
    if (!e)
        return;
    kc__trigger_free(e->trig);
    ctrl_client_free(e->live);
    kc_config_free(e->cfg);
    free(e);
}

/* ---- repacking ---- */

/* One (address, port, ready) as the pods give them; port NULL = the
 * no-ports sentinel of a headless Service without ports. */
typedef struct entry {
    size_t addr;  /* index in the addrs array */
    json_t *port; /* borrowed, or NULL */
    bool ready;
} entry;

static const char *addr_uid(const json_t *a)
{
    return json_string_value(json_object_get(json_object_get(a, "targetRef"), "uid"));
}

/* LessEndpointAddress: by IP (bytes), then by the target's uid. */
static int addr_cmp(const void *x, const void *y)
{
    const json_t *a = *(const json_t *const *)x, *b = *(const json_t *const *)y;
    int c = strcmp(json_string_value(json_object_get(a, "ip")),
                   json_string_value(json_object_get(b, "ip")));
    if (c)
        return c;
    const char *ua = addr_uid(a), *ub = addr_uid(b);
    if (!ub)
        return 0;
    if (!ua)
        return -1;
    return strcmp(ua, ub);
}

static int str_or_empty_cmp(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

static int port_cmp(const void *x, const void *y)
{
    const json_t *a = *(const json_t *const *)x, *b = *(const json_t *const *)y;
    int c = str_or_empty_cmp(json_string_value(json_object_get(a, "name")),
                             json_string_value(json_object_get(b, "name")));
    if (c)
        return c;
    json_int_t pa = json_integer_value(json_object_get(a, "port")),
               pb = json_integer_value(json_object_get(b, "port"));
    if (pa != pb)
        return pa < pb ? -1 : 1;
    return str_or_empty_cmp(json_string_value(json_object_get(a, "protocol")),
                            json_string_value(json_object_get(b, "protocol")));
}

typedef struct keyed {
    char *key;
    json_t *v;
} keyed;

static int keyed_cmp(const void *x, const void *y)
{
    return strcmp(((const keyed *)x)->key, ((const keyed *)y)->key);
}

/* Sort a JSON array in place with cmp over its elements. */
static int sort_array(json_t *arr, int (*cmp)(const void *, const void *))
{
    size_t n = json_array_size(arr);
    if (n < 2)
        return 0;
    json_t **v = malloc(n * sizeof *v);
    if (!v)
        return CTRL_ERR_NOMEM;
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(arr, i));
    qsort(v, n, sizeof *v, cmp);
    json_array_clear(arr);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, v[i]);
    free(v);
    return 0;
}

static void free_states(char **states, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(states[i]);
    free(states);
}

/*
 * RepackSubsets over entries: a new array of subsets, or NULL when out of
 * memory. addrs holds each distinct address once (entries point into it).
 */
static json_t *repack(const entry *es, size_t n, const json_t *addrs)
{
    size_t na = json_array_size(addrs), nst = 0;
    json_t *ports = json_array();   /* distinct ports (null = sentinel) */
    char **states = NULL;           /* per port: 'x' / '0' / '1' per address */
    json_t *groups = json_object(); /* state string -> array of ports */
    json_t *out = json_array();
    if (!ports || !groups || !out)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        size_t p, np = json_array_size(ports);
        json_t *pv = es[i].port ? es[i].port : json_null();
        for (p = 0; p < np; p++)
            if (json_equal(json_array_get(ports, p), pv))
                break;
        if (p == np) {
            char **more = realloc(states, (nst + 1) * sizeof *more);
            char *st = malloc(na + 1);
            if (more)
                states = more;
            if (!more || !st || json_array_append(ports, pv) < 0) {
                free(st);
                goto fail;
            }
            memset(st, 'x', na);
            st[na] = 0;
            states[nst++] = st;
        }
        /* Once ready for a port, an address stays ready for it. */
        char *st = states[p];
        if (st[es[i].addr] != '1')
            st[es[i].addr] = es[i].ready ? '1' : '0';
    }
    size_t p;
    json_t *pv;
    json_array_foreach(ports, p, pv)
    {
        const char *s = states[p];
        json_t *g = json_object_get(groups, s);
        if (!g) {
            g = json_array();
            if (!g || json_object_set_new(groups, s, g) < 0)
                goto fail;
        }
        if (!json_is_null(pv))
            json_array_append(g, pv);
    }
    const char *s;
    json_t *g;
    size_t ng = json_object_size(groups), k = 0;
    keyed *ks = calloc(ng ? ng : 1, sizeof *ks);
    if (!ks)
        goto fail;
    json_object_foreach(groups, s, g)
    {
        json_t *ready = json_array(), *notready = json_array();
        for (size_t a = 0; a < na; a++) {
            if (s[a] == '1')
                json_array_append(ready, json_array_get(addrs, a));
            else if (s[a] == '0')
                json_array_append(notready, json_array_get(addrs, a));
        }
        sort_array(ready, addr_cmp);
        sort_array(notready, addr_cmp);
        sort_array(g, port_cmp);
        json_t *sub = json_object();
        if (json_array_size(ready))
            json_object_set(sub, "addresses", ready);
        if (json_array_size(notready))
            json_object_set(sub, "notReadyAddresses", notready);
        if (json_array_size(g))
            json_object_set(sub, "ports", g);
        json_decref(ready);
        json_decref(notready);
        ks[k].v = sub;
        ks[k].key = json_dumps(sub, JSON_COMPACT | JSON_SORT_KEYS);
        k++;
    }
    qsort(ks, k, sizeof *ks, keyed_cmp);
    bool ok = true;
    for (size_t i = 0; i < k; i++) {
        ok = ok && ks[i].key && ks[i].v;
        if (ks[i].v)
            json_array_append_new(out, ks[i].v);
        free(ks[i].key);
    }
    free(ks);
    if (!ok)
        goto fail;
    free_states(states, nst);
    json_decref(ports);
    json_decref(groups);
    return out;
fail:
    free_states(states, nst);
    json_decref(ports);
    json_decref(groups);
    json_decref(out);
    return NULL;
}

/* Keep the first n addresses of arr (in place). */
static void keep_first(json_t *arr, size_t n)
{
    while (json_array_size(arr) > n)
        json_array_remove(arr, json_array_size(arr) - 1);
}

/*
 * truncateEndpoints: at most MAX_CAPACITY addresses over all subsets,
 * ready ones first, each subset keeping its share (rounded up; the last
 * ones get what is left). True when anything was cut.
 */
static bool truncate_subsets(json_t *subsets)
{
    size_t ready = 0, not_ready = 0, i;
    json_t *sub;
    json_array_foreach(subsets, i, sub)
    {
        ready += json_array_size(json_object_get(sub, "addresses"));
        not_ready += json_array_size(json_object_get(sub, "notReadyAddresses"));
    }
    if (ready + not_ready <= MAX_CAPACITY)
        return false;
    bool cut_ready = ready > MAX_CAPACITY;
    size_t max = cut_ready ? MAX_CAPACITY : MAX_CAPACITY - ready;
    size_t total = cut_ready ? ready : not_ready, room = max;
    json_array_foreach(subsets, i, sub)
    {
        json_t *list = json_object_get(sub, cut_ready ? "addresses" : "notReadyAddresses");
        size_t in = json_array_size(list);
        size_t share = (in * max + total - 1) / total;
        if (share > room)
            share = room;
        keep_first(list, share);
        if (cut_ready)
            json_object_del(sub, "notReadyAddresses");
        else if (!json_array_size(list))
            json_object_del(sub, "notReadyAddresses");
        if (cut_ready && !json_array_size(list))
            json_object_del(sub, "addresses");
        room -= json_array_size(list);
    }
    return true;
}

/* The address of pod for svc (podToEndpointAddressForService). */
static json_t *pod_address(const json_t *pod, const json_t *svc)
{
    json_t *a = json_pack("{s:s, s:{s:s, s:s, s:s, s:s}}", "ip", kc__pod_ip(pod), "targetRef",
                          "kind", "Pod", "namespace", ctrl_obj_namespace(pod), "name",
                          ctrl_obj_name(pod), "uid", ctrl_obj_uid(pod) ? ctrl_obj_uid(pod) : "");
    if (!a)
        return NULL;
    if (kc__pod_hostname_for(pod, svc))
        json_object_set_new(a, "hostname", json_string(ctrl_obj_get_string(pod, "spec.hostname")));
    const char *node = ctrl_obj_get_string(pod, "spec.nodeName");
    if (node && *node)
        json_object_set_new(a, "nodeName", json_string(node));
    return a;
}

/* The EndpointPort for a Service port resolved to num. */
static json_t *endpoint_port(const json_t *sp, int64_t num)
{
    const char *name = json_string_value(json_object_get(sp, "name"));
    const char *proto = json_string_value(json_object_get(sp, "protocol"));
    json_t *p = json_pack("{s:I, s:s}", "port", (json_int_t)num, "protocol", proto ? proto : "TCP");
    if (p && name && *name)
        json_object_set_new(p, "name", json_string(name));
    const json_t *ap = json_object_get(sp, "appProtocol");
    if (p && json_is_string(ap))
        json_object_set(p, "appProtocol", (json_t *)ap);
    return p;
}

/* The subsets for svc over pods (the namespace's pods); a new array or NULL. */
static json_t *subsets_for(const json_t *svc, const json_t *pods, json_t *selected)
{
    bool tolerate = ctrl_obj_get_bool(svc, "spec.publishNotReadyAddresses", false);
    const json_t *sports = ctrl_obj_get(svc, "spec.ports");
    json_t *addrs = json_array(), *ports = json_array();
    size_t cap = 16, n = 0;
    entry *es = malloc(cap * sizeof *es);
    json_t *out = NULL;
    if (!addrs || !ports || !es)
        goto done;
    size_t i;
    json_t *pod;
    json_array_foreach(pods, i, pod)
    {
        if (!kc__svc_selects(svc, pod))
            continue;
        json_array_append(selected, pod);
        if (!kc__pod_in_endpoints(pod, tolerate))
            continue;
        json_t *addr = pod_address(pod, svc);
        if (!addr || json_array_append_new(addrs, addr) < 0)
            goto done;
        bool ready = tolerate || kc__pod_ready(pod);
        size_t nports = json_array_size(sports);
        for (size_t j = 0; j < (nports ? nports : 1); j++) {
            json_t *ep = NULL;
            if (nports) {
                int64_t num;
                if (kc__find_port(pod, json_array_get(sports, j), &num) < 0)
                    continue;
                ep = endpoint_port(json_array_get(sports, j), num);
                if (!ep || json_array_append_new(ports, ep) < 0)
                    goto done;
            } else if (!kc__svc_headless(svc)) {
                break; /* no ports and not headless: no endpoints */
            }
            if (n == cap) {
                entry *more = realloc(es, 2 * cap * sizeof *es);
                if (!more)
                    goto done;
                es = more;
                cap *= 2;
            }
            es[n++] = (entry){json_array_size(addrs) - 1, ep, ready};
        }
    }
    out = repack(es, n, addrs);
done:
    free(es);
    json_decref(addrs);
    json_decref(ports);
    return out;
}

/* The labels the Endpoints should carry. */
static json_t *labels_for(const json_t *svc)
{
    const json_t *sl = ctrl_obj_get(svc, "metadata.labels");
    json_t *l = json_is_object(sl) ? json_deep_copy(sl) : json_object();
    if (!l)
        return NULL;
    json_object_set_new(l, MANAGED_BY_LABEL, json_string(MANAGED_BY));
    if (kc__svc_headless(svc))
        json_object_set_new(l, KC_HEADLESS_LABEL, json_string(""));
    else
        json_object_del(l, KC_HEADLESS_LABEL);
    return l;
}

static bool same_subsets(const json_t *cur, const json_t *want)
{
    const json_t *have = json_object_get(cur, "subsets");
    if (!json_array_size(have))
        return json_array_size(want) == 0;
    return json_equal(have, want);
}

static bool same_labels(const json_t *cur, const json_t *want)
{
    const json_t *have = ctrl_obj_get(cur, "metadata.labels");
    if (!json_object_size(have))
        return json_object_size(want) == 0;
    return json_equal(have, want);
}

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    ep_ctl *e = user;
    ctrl_client *c = ctrl_ctx_client(ctx);
    char key[512];
    snprintf(key, sizeof key, "%s/%s", req->ns, req->name);
    json_t *svc = NULL, *pods = NULL, *selected = NULL, *subsets = NULL, *labels = NULL,
           *cur = NULL, *obj = NULL;
    ctrl_result res = ctrl_done();
    int rc = ctrl_informer_get(e->svcs, req->ns, req->name, &svc);
    if (ctrl_err_is_not_found(rc)) {
        /* The Service is gone: so are its endpoints. */
        kc__trigger_delete(e->trig, key);
        rc = ctrl_client_delete(c, "v1", "Endpoints", req->ns, req->name, NULL, NULL, NULL);
        return rc < 0 && !ctrl_err_is_not_found(rc) ? ctrl_err(rc) : ctrl_done();
    }
    if (rc < 0)
        return ctrl_err(rc);
    if (!kc__svc_has_selector(svc))
        goto out; /* endpoints made by hand: not ours */
    rc = kc__svc_pods(e->pods, svc, &pods);
    selected = json_array();
    if (rc < 0 || !selected) {
        res = ctrl_err(rc < 0 ? rc : CTRL_ERR_NOMEM);
        goto out;
    }
    subsets = subsets_for(svc, pods, selected);
    bool truncated = subsets && truncate_subsets(subsets);
    labels = labels_for(svc);
    if (!subsets || !labels) {
        res = ctrl_err(CTRL_ERR_NOMEM);
        goto out;
    }
    int64_t trigger = kc__trigger_compute(e->trig, key, svc, selected);
    rc = ctrl_client_get(e->live, "v1", "Endpoints", req->ns, req->name, &cur, NULL);
    if (rc < 0 && !ctrl_err_is_not_found(rc)) {
        res = ctrl_err(rc);
        goto out;
    }
    if (cur && same_subsets(cur, subsets) && same_labels(cur, labels) &&
        !ctrl_obj_annotation(cur, OVER_CAPACITY_KEY) == !truncated)
        goto out;
    obj = cur ? json_incref(cur)
              : json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "v1", "kind", "Endpoints",
                          "metadata", "name", req->name, "namespace", req->ns);
    if (!obj) {
        res = ctrl_err(CTRL_ERR_NOMEM);
        goto out;
    }
    ctrl_obj_set(obj, "metadata.labels", json_incref(labels));
    if (trigger >= 0) {
        char when[40];
        kc__rfc3339(trigger, when, sizeof when);
        ctrl_obj_set_annotation(obj, KC_TRIGGER_ANNOTATION, when);
    } else if (ctrl_obj_annotation(obj, KC_TRIGGER_ANNOTATION)) {
        ctrl_obj_set_annotation(obj, KC_TRIGGER_ANNOTATION, NULL);
    }
    if (truncated)
        ctrl_obj_set_annotation(obj, OVER_CAPACITY_KEY, "truncated");
    else if (ctrl_obj_annotation(obj, OVER_CAPACITY_KEY))
        ctrl_obj_set_annotation(obj, OVER_CAPACITY_KEY, NULL);
    if (json_array_size(subsets))
        json_object_set(obj, "subsets", subsets);
    else
        json_object_del(obj, "subsets");
    rc = cur ? ctrl_client_update(c, obj, NULL, NULL, NULL)
             : ctrl_client_create(c, obj, NULL, NULL, NULL);
    if (rc < 0) {
        /* A namespace being deleted refuses creations: nothing to do. */
        if (!cur && ctrl_err_is_forbidden(rc))
            goto out;
        res = ctrl_err(rc);
        goto out;
    }
    if (ctrl__log_on(ctx, CTRL_LOG_DEBUG)) {
        char n[32];
        snprintf(n, sizeof n, "%zu", json_array_size(subsets));
        ctrl_log_debug(ctx, cur ? "updated endpoints" : "created endpoints", "subsets", n);
    }
out:
    json_decref(obj);
    json_decref(cur);
    json_decref(labels);
    json_decref(subsets);
    json_decref(selected);
    json_decref(pods);
    json_decref(svc);
    return res;
}

/* Only deletions of Endpoints matter (someone removed one: write it again). */
static bool no_event(const json_t *obj, void *user)
{
    (void)obj;
    (void)user;
    return false;
}

static bool no_update(const json_t *a, const json_t *b, void *user)
{
    (void)a;
    (void)b;
    (void)user;
    return false;
}

int kc__endpoints_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen)
{
    ctrl_cache *cache = ctrl_manager_cache(mgr);
    ep_ctl *e = calloc(1, sizeof *e);
    if (!e)
        return KC_ERR_NOMEM;
    int rc = ctrl_cache_informer(cache, "v1", "Service", NULL, &e->svcs, NULL);
    if (rc == 0)
        rc = ctrl_cache_informer(cache, "v1", "Pod", NULL, &e->pods, NULL);
    e->trig = kc__trigger_new();
    if (rc == 0 && !e->trig)
        rc = KC_ERR_NOMEM;
    char name[64];
    kc__controller_name(NAME, name, sizeof name);
    if (rc == 0)
        rc = kc__live_client(mgr, name, &e->live);
    if (rc < 0) {
        ep_free(e);
        snprintf(errbuf, errlen, NAME ": informers: %d", rc);
        return rc;
    }
    e->cfg = kc_config_ref(cfg);
    ctrl_predicate_funcs deletes = {.create = no_event, .update = no_update};
    ctrl_builder *b = ctrl_builder_for(mgr, "v1", "Service");
    ctrl_builder_named(b, name);
    ctrl_builder_watches(b, "v1", "Pod", ctrl_handler_from_map(kc__svc_map_pod, e->svcs), NULL);
    ctrl_builder_watches(b, "v1", "Endpoints", ctrl_handler_for_object(),
                         ctrl_pred_funcs(&deletes));
    ctrl_builder_with_user_free(b, ep_free);
    rc = ctrl_builder_complete(b, reconcile, e);
    if (rc < 0 && errbuf && errlen)
        snprintf(errbuf, errlen, NAME ": %s", ctrl_strerror(rc));
    return rc;
}

/*
 * nodes.c - the simulated Nodes (the "nodes" built-in): registers the
 * configured fake Nodes, keeps them Ready with a Lease per node, and takes
 * one NotReady on demand (KC_NOT_READY_ANNOTATION).
 *
 * DESIGN
 * - One controller, "kc-nodes", For Node, with one worker. Its reconcile is
 *   the node's kubelet: it creates the Node the first time (as a kubelet
 *   registers), writes its conditions when they should change or the
 *   heartbeat is due, and renews its Lease every nodeLeaseRenew of clock
 *   time when the document asks (ctrl_requeue_after; by default never: a
 *   long scenario does not want 8,640 renewals a day per node, and with no
 *   renewals there are no periodic heartbeats either). The first reconciles come from
 * a watch of the kube-node-lease Namespace (which the server always has), mapped to every
 * configured node's name.
 * - A node deleted by a user after we registered it stays deleted (a
 *   running kubelet does not re-register); a new manager registers again.
 * - State: the names registered and the clock time of each node's last
 *   renewal, under mu (a leaf lock). Both are this manager's: a restarted
 *   manager renews at once.
 * - Times written to objects come from the manager's clock
 *   (ctrl_clock_wall_ns), so runs under a virtual clock are repeatable.
 */
#include "nodes.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctrl/conditions.h"
#include "ctrl/controllerutil.h"
#include "ctrl/object.h"
#include "podutil.h"
#include "stages.h"

/* How often the conditions' lastHeartbeatTime is refreshed while nothing
 * changes (the kubelet's nodeStatusReportFrequency). */
#define HEARTBEAT (5 * CTRL_MINUTE)
#define KUBELET_VERSION "v1.32.0"

typedef struct nodes_state {
    kc_config *cfg;
    int64_t renew; /* lease renewal interval; 0 = created once, never renewed */
    pthread_mutex_t mu;
    json_t *registered; /* name -> true */
    json_t *renewed;    /* name -> clock ns of the last lease write */
} nodes_state;

/* ---- shared helpers (nodes.h) ---- */

int kc__node_index(const kc_config *cfg, const char *name)
{
    for (size_t i = 0; name && cfg && i < cfg->n_nodes; i++)
        if (!strcmp(cfg->nodes[i].name, name))
            return (int)i;
    return -1;
}

void kc__ipv4_string(uint32_t a, char *buf, size_t len)
{
    snprintf(buf, len, "%u.%u.%u.%u", (a >> 24) & 255, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

void kc__node_internal_ip(size_t index, char *buf, size_t len)
{
    /* 172.18.0.0/16, from .0.2 on, as a kind cluster's docker network. */
    uint32_t host = (uint32_t)index + 2;
    kc__ipv4_string((172u << 24) | (18u << 16) | (host & 0xffff), buf, len);
}

const char *kc__node_ready_status(const json_t *node)
{
    const char *s = json_string_value(json_object_get(kc__condition(node, "Ready"), "status"));
    return s ? s : "Unknown";
}

bool kc__node_ready(const json_t *node)
{
    return !strcmp(kc__node_ready_status(node), "True");
}

static json_t *node_name_index(const json_t *obj, void *user)
{
    (void)user;
    const char *n = ctrl_obj_get_string(obj, "spec.nodeName");
    return n && *n ? json_pack("[s]", n) : NULL;
}

int kc__pod_node_index(ctrl_cache *cache, ctrl_informer **out)
{
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    ctrl_informer *inf = NULL;
    int rc = ctrl_cache_informer(cache, "v1", "Pod", NULL, &inf, NULL);
    if (rc < 0)
        return rc;
    /* Several modules ask: the first adds it, the others find it there. */
    pthread_mutex_lock(&mu);
    json_t *probe = NULL;
    if (ctrl_informer_by_index(inf, KC_POD_NODE_INDEX, "", &probe) < 0)
        rc = ctrl_informer_add_index(inf, KC_POD_NODE_INDEX, node_name_index, NULL);
    json_decref(probe);
    pthread_mutex_unlock(&mu);
    if (rc == 0)
        *out = inf;
    return rc;
}

/* ---- the Node object ---- */

static void micro_time(int64_t wall_ns, char *out, size_t len)
{
    char sec[32];
    kc__rfc3339(wall_ns, sec, sizeof sec);
    sec[strlen(sec) - 1] = 0; /* the Z */
    snprintf(out, len, "%s.%06lldZ", sec, (long long)((wall_ns % CTRL_SECOND) / 1000));
}

/* A hex string of n digits derived from text (deterministic ids). */
static void derived_hex(const char *text, int n, char *out)
{
    uint32_t h = 0;
    for (int i = 0; i < n; i += 8) {
        h = kc__fnv32(text, strlen(text), h ^ (uint32_t)(i + 1) * 2654435761u);
        snprintf(out + i, 9, "%08x", h);
    }
    out[n] = 0;
}

static const char *const cond_types[] = {"MemoryPressure", "DiskPressure", "PIDPressure", "Ready"};
static const char *const up_reason[] = {"KubeletHasSufficientMemory", "KubeletHasNoDiskPressure",
                                        "KubeletHasSufficientPID", "KubeletReady"};
static const char *const up_message[] = {
    "kubelet has sufficient memory available", "kubelet has no disk pressure",
    "kubelet has sufficient PID available", "kubelet is posting ready status"};

/*
 * Set the four standard conditions on node (a copy of ours) for up or
 * down, at wall time now. Returns true when anything but the heartbeat
 * changed; *stale when the heartbeat is due.
 */
static bool set_conditions(json_t *node, bool up, int64_t now, bool *stale)
{
    char ts[32];
    kc__rfc3339(now, ts, sizeof ts);
    json_t *conds = ctrl_obj_conditions(node);
    bool changed = false;
    *stale = false;
    for (int i = 0; conds && i < 4; i++) {
        ctrl_condition c = {cond_types[i],
                            up ? (i == 3 ? "True" : "False") : "Unknown",
                            up ? up_reason[i] : "NodeStatusUnknown",
                            up ? up_message[i] : "Kubelet stopped posting node status.",
                            0,
                            NULL};
        changed |= ctrl_condition_set(conds, &c, now);
        json_t *have = ctrl_condition_find(conds, cond_types[i]);
        const char *hb = json_string_value(json_object_get(have, "lastHeartbeatTime"));
        int64_t t = hb ? kc__parse_time(hb) : -1;
        if (t < 0 || (up && t + HEARTBEAT <= now)) {
            *stale = true;
            json_object_set_new(have, "lastHeartbeatTime", json_string(ts));
        }
    }
    return changed;
}

static json_t *new_node(const kc_config *cfg, size_t idx, int64_t now)
{
    const kc_node_spec *n = &cfg->nodes[idx];
    char cidr[40], ip[20], net[20], id[40];
    kc__ipv4_string(n->pod_net, net, sizeof net);
    snprintf(cidr, sizeof cidr, "%s/24", net);
    kc__node_internal_ip(idx, ip, sizeof ip);
    derived_hex(n->name, 32, id);
    json_t *node = json_pack(
        "{s:s, s:s, s:{s:s, s:O, s:{s:s}}, s:{s:s, s:[s], s:O}, "
        "s:{s:O, s:O, s:[], s:[{s:s, s:s}, {s:s, s:s}], s:{s:{s:i}}, "
        "s:{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}}}",
        "apiVersion", "v1", "kind", "Node", "metadata", "name", n->name, "labels", n->labels,
        "annotations", "node.alpha.kubernetes.io/ttl", "0", "spec", "podCIDR", cidr, "podCIDRs",
        cidr, "taints", n->taints, "status", "capacity", n->capacity, "allocatable", n->capacity,
        "conditions", "addresses", "type", "InternalIP", "address", ip, "type", "Hostname",
        "address", n->name, "daemonEndpoints", "kubeletEndpoint", "Port", 10250, "nodeInfo",
        "machineID", id, "systemUUID", id, "bootID", id, "kernelVersion", "6.8.0", "osImage",
        "kube-harness simulated node", "containerRuntimeVersion", "containerd://1.7.22",
        "kubeletVersion", KUBELET_VERSION, "kubeProxyVersion", KUBELET_VERSION, "operatingSystem",
        "linux", "architecture", "amd64");
    if (!node)
        return NULL;
    json_t *spec = json_object_get(node, "spec");
    if (json_array_size(json_object_get(spec, "taints")) == 0)
        json_object_del(spec, "taints");
    json_t *st = json_object_get(node, "status");
    json_t *conds = json_object_get(st, "conditions");
    char ts[32];
    kc__rfc3339(now, ts, sizeof ts);
    for (int i = 0; i < 4; i++)
        json_array_append_new(conds, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "type",
                                               cond_types[i], "status", i == 3 ? "True" : "False",
                                               "lastHeartbeatTime", ts, "lastTransitionTime", ts,
                                               "reason", up_reason[i], "message", up_message[i]));
    return node;
}

/* ---- the lease ---- */

static int renew_lease(ctrl_client *c, const json_t *node, int64_t wall)
{
    const char *name = ctrl_obj_name(node);
    char rt[48];
    micro_time(wall, rt, sizeof rt);
    json_t *patch = json_pack("{s:{s:s, s:i, s:s}}", "spec", "holderIdentity", name,
                              "leaseDurationSeconds", KC_NODE_LEASE_DURATION_S, "renewTime", rt);
    int rc = patch ? ctrl_client_patch(c, "coordination.k8s.io/v1", "Lease", KC_NODE_LEASE_NS, name,
                                       CTRL_PATCH_MERGE, patch, NULL, NULL, NULL)
                   : CTRL_ERR_NOMEM;
    json_decref(patch);
    if (!ctrl_err_is_not_found(rc))
        return rc;
    json_t *lease = json_pack(
        "{s:s, s:s, s:{s:s, s:s, s:[{s:s, s:s, s:s, s:s}]}, "
        "s:{s:s, s:i, s:s, s:s}}",
        "apiVersion", "coordination.k8s.io/v1", "kind", "Lease", "metadata", "name", name,
        "namespace", KC_NODE_LEASE_NS, "ownerReferences", "apiVersion", "v1", "kind", "Node",
        "name", name, "uid", ctrl_obj_uid(node) ? ctrl_obj_uid(node) : "", "spec", "holderIdentity",
        name, "leaseDurationSeconds", KC_NODE_LEASE_DURATION_S, "renewTime", rt, "acquireTime", rt);
    rc = lease ? ctrl_client_create(c, lease, NULL, NULL, NULL) : CTRL_ERR_NOMEM;
    json_decref(lease);
    return rc;
}

/* ---- the reconcile ---- */

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    nodes_state *s = user;
    int idx = kc__node_index(s->cfg, req->name);
    if (idx < 0)
        return ctrl_done();
    ctrl_client *c = ctrl_ctx_client(ctx);
    int64_t wall = ctrl_clock_wall_ns(ctrl_ctx_clock(ctx)), now = ctrl_ctx_now(ctx);
    json_t *node = NULL, *out = NULL;
    ctrl_result res = ctrl_done();
    int rc = ctrl_client_get(c, "v1", "Node", "", req->name, &node, NULL);
    if (ctrl_err_is_not_found(rc)) {
        pthread_mutex_lock(&s->mu);
        bool was = json_is_true(json_object_get(s->registered, req->name));
        pthread_mutex_unlock(&s->mu);
        if (was)
            return ctrl_done(); /* deleted by someone: stays deleted */
        json_t *fresh = new_node(s->cfg, (size_t)idx, wall);
        rc = fresh ? ctrl_client_create(c, fresh, NULL, &node, NULL) : CTRL_ERR_NOMEM;
        json_decref(fresh);
        if (ctrl_err_is_already_exists(rc))
            return ctrl_requeue(); /* the cache is behind */
        if (rc < 0)
            return ctrl_err(rc);
        ctrl_log_info(ctx, "registered node");
        pthread_mutex_lock(&s->mu);
        json_object_set_new(s->registered, req->name, json_true());
        pthread_mutex_unlock(&s->mu);
    } else if (rc < 0) {
        return ctrl_err(rc);
    } else {
        pthread_mutex_lock(&s->mu);
        json_object_set_new(s->registered, req->name, json_true());
        pthread_mutex_unlock(&s->mu);
    }
    if (ctrl_obj_deleting(node))
        goto out;
    const char *ann = ctrl_obj_annotation(node, KC_NOT_READY_ANNOTATION);
    bool up = !(ann && !strcmp(ann, "true"));
    json_t *copy = json_deep_copy(node);
    bool stale = false;
    bool changed = copy && set_conditions(copy, up, wall, &stale);
    if (!copy) {
        res = ctrl_err(CTRL_ERR_NOMEM);
        goto out;
    }
    if (changed || stale) {
        rc = ctrl_client_update_status(c, copy, NULL, &out, NULL);
        if (rc < 0) {
            json_decref(copy);
            res = ctrl_err(rc);
            goto out;
        }
        if (changed)
            ctrl_log_info(ctx, up ? "node ready" : "node not ready");
        json_decref(node);
        node = out;
        out = NULL;
    }
    json_decref(copy);
    if (!up)
        goto out; /* a stopped kubelet renews nothing */
    pthread_mutex_lock(&s->mu);
    json_t *last = json_object_get(s->renewed, req->name);
    int64_t due = !last ? now : s->renew ? json_integer_value(last) + s->renew : INT64_MAX;
    pthread_mutex_unlock(&s->mu);
    if (due <= now) {
        rc = renew_lease(c, node, wall);
        if (rc < 0) {
            res = ctrl_err(rc);
            goto out;
        }
        pthread_mutex_lock(&s->mu);
        json_object_set_new(s->renewed, req->name, json_integer(now));
        pthread_mutex_unlock(&s->mu);
        due = s->renew ? now + s->renew : INT64_MAX;
    }
    if (due != INT64_MAX)
        res = ctrl_requeue_after(due - now);
out:
    json_decref(node);
    json_decref(out);
    return res;
}

/* The kube-node-lease Namespace's events start every node. */
static json_t *all_nodes(const json_t *obj, void *user)
{
    nodes_state *s = user;
    json_t *reqs = json_array();
    const char *name = ctrl_obj_name(obj);
    if (!reqs || !name || strcmp(name, KC_NODE_LEASE_NS))
        return reqs;
    for (size_t i = 0; i < s->cfg->n_nodes; i++)
        json_array_append_new(
            reqs, json_pack("{s:s, s:s}", "namespace", "", "name", s->cfg->nodes[i].name));
    return reqs;
}

static void state_free(void *user)
{
    nodes_state *s = user;
    if (!s)
        return;
    kc_config_free(s->cfg);
    json_decref(s->registered);
    json_decref(s->renewed);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

int kc__nodes_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen)
{
    nodes_state *s = calloc(1, sizeof *s);
    if (!s)
        return KC_ERR_NOMEM;
    pthread_mutex_init(&s->mu, NULL);
    s->cfg = kc_config_ref(cfg);
    s->renew = KC_NODE_LEASE_RENEW;
    const json_t *renew = json_object_get(cfg->doc, "nodeLeaseRenew");
    if (renew && !kc__duration_parse(renew, &s->renew)) {
        state_free(s);
        if (errbuf && errlen)
            snprintf(errbuf, errlen,
                     "nodeLeaseRenew: a duration such as \"10s\" or \"1m\", or 0 for never");
        return KC_ERR_INPUT;
    }
    s->registered = json_object();
    s->renewed = json_object();
    if (!s->registered || !s->renewed) {
        state_free(s);
        return KC_ERR_NOMEM;
    }
    char name[64];
    ctrl_builder *b = ctrl_builder_for(mgr, "v1", "Node");
    ctrl_builder_named(b, kc__controller_name("nodes", name, sizeof name));
    ctrl_builder_watches(b, "v1", "Namespace", ctrl_handler_from_map(all_nodes, s), NULL);
    ctrl_builder_with_user_free(b, state_free);
    int rc = ctrl_builder_complete(b, reconcile, s);
    if (rc < 0 && errbuf && errlen)
        snprintf(errbuf, errlen, "nodes: %s", ctrl_strerror(rc));
    return rc;
}

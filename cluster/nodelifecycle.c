/*
 * nodelifecycle.c - the node lifecycle controller (the "nodelifecycle"
 * built-in): taints nodes by their condition and spec, marks the pods of
 * a node that is not Ready as not Ready, and evicts pods from nodes with
 * NoExecute taints once their tolerations run out (kube-controller-
 * manager's node lifecycle controller and taint eviction controller).
 *
 * DESIGN
 * - One controller, "kc-nodelifecycle", For Node, with a watch of bound
 *   pods mapped to their node (a pod scheduled onto a tainted node is
 *   evicted too). One worker.
 * - Taints it owns: node.kubernetes.io/not-ready (Ready False) and
 *   node.kubernetes.io/unreachable (Ready Unknown), each NoSchedule and
 *   NoExecute, and node.kubernetes.io/unschedulable:NoSchedule
 *   (spec.unschedulable: kubectl cordon, drain). Other taints are left
 *   alone. NoExecute taints carry timeAdded (the manager's wall clock).
 * - Eviction: a pod that does not tolerate a NoExecute taint goes at once;
 *   one that does goes at timeAdded + the smallest tolerationSeconds of the
 *   tolerations that match (none: never). A pod without a toleration for
 *   not-ready/unreachable is treated as having one of 300 s, as the
 *   DefaultTolerationSeconds admission plugin would have given it. The
 *   pod gets condition DisruptionTarget (DeletionByTaintManager) and a
 *   TaintManagerEviction event, then an ordinary (graceful) delete; the
 *   reconcile requeues itself (ctrl_requeue_after) for the next one due.
 * - Times: timeAdded is written in whole seconds; it is read as the end of
 *   its second, so an eviction is due up to a second late, never early.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/conditions.h"
#include "ctrl/object.h"
#include "nodes.h"
#include "podutil.h"
#include "scheduler.h"

#define NOT_READY "node.kubernetes.io/not-ready"
#define UNREACHABLE "node.kubernetes.io/unreachable"
#define UNSCHEDULABLE "node.kubernetes.io/unschedulable"
#define DEFAULT_TOLERATION_S 300

typedef struct lc_state {
    kc_config *cfg;
    ctrl_recorder *rec;
    ctrl_informer *pod_inf;
} lc_state;

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static bool managed(const char *key)
{
    return !strcmp(key, NOT_READY) || !strcmp(key, UNREACHABLE) || !strcmp(key, UNSCHEDULABLE);
}

/* The taints node should have: new array, or NULL when they are what it
 * has. */
static json_t *wanted_taints(const json_t *node, const char *now)
{
    const char *ready = kc__node_ready_status(node);
    const char *cond_key = !strcmp(ready, "True")    ? NULL
                           : !strcmp(ready, "False") ? NOT_READY
                                                     : UNREACHABLE;
    bool cordoned = ctrl_obj_get_bool(node, "spec.unschedulable", false);
    struct {
        const char *key, *effect;
    } want[3];
    size_t n = 0;
    if (cond_key) {
        want[n].key = cond_key;
        want[n++].effect = "NoSchedule";
        want[n].key = cond_key;
        want[n++].effect = "NoExecute";
    }
    if (cordoned) {
        want[n].key = UNSCHEDULABLE;
        want[n++].effect = "NoSchedule";
    }
    const json_t *have = ctrl_obj_get(node, "spec.taints");
    json_t *out = json_array();
    bool changed = false;
    size_t i;
    json_t *t;
    json_array_foreach(have, i, t)
    {
        bool keep = !managed(str(t, "key"));
        for (size_t j = 0; !keep && j < n; j++)
            keep = !strcmp(str(t, "key"), want[j].key) && !strcmp(str(t, "effect"), want[j].effect);
        if (keep)
            json_array_append(out, t);
        else
            changed = true;
    }
    for (size_t j = 0; j < n; j++) {
        bool present = false;
        json_array_foreach(have, i, t)
        {
            present |=
                !strcmp(str(t, "key"), want[j].key) && !strcmp(str(t, "effect"), want[j].effect);
        }
        if (present)
            continue;
        json_t *nt = json_pack("{s:s, s:s}", "key", want[j].key, "effect", want[j].effect);
        if (nt && !strcmp(want[j].effect, "NoExecute"))
            json_object_set_new(nt, "timeAdded", json_string(now));
        json_array_append_new(out, nt);
        changed = true;
    }
    if (!changed) {
        json_decref(out);
        return NULL;
    }
    return out;
}

/*
 * When pod must leave node for its NoExecute taints: wall ns, INT64_MAX
 * for never.
 */
static int64_t evict_at(const json_t *pod, const json_t *node)
{
    int64_t at = INT64_MAX;
    size_t i;
    json_t *t;
    json_array_foreach(ctrl_obj_get(node, "spec.taints"), i, t)
    {
        if (strcmp(str(t, "effect"), "NoExecute"))
            continue;
        int64_t added = kc__parse_time(str(t, "timeAdded"));
        added = added < 0 ? 0 : added + CTRL_SECOND - 1;
        bool matched = false;
        int64_t secs = INT64_MAX;
        size_t j;
        json_t *tol;
        json_array_foreach(ctrl_obj_get(pod, "spec.tolerations"), j, tol)
        {
            if (!kc__tolerates(tol, t))
                continue;
            matched = true;
            const json_t *s = json_object_get(tol, "tolerationSeconds");
            if (json_is_integer(s) && json_integer_value(s) < secs)
                secs = json_integer_value(s) < 0 ? 0 : json_integer_value(s);
        }
        if (!matched &&
            (!strcmp(str(t, "key"), NOT_READY) || !strcmp(str(t, "key"), UNREACHABLE))) {
            matched = true;
            secs = DEFAULT_TOLERATION_S;
        }
        int64_t when = !matched ? 0 : secs == INT64_MAX ? INT64_MAX : added + secs * CTRL_SECOND;
        if (when < at)
            at = when;
    }
    return at;
}

static int mark_not_ready(ctrl_ctx *ctx, lc_state *s, const json_t *pod, int64_t wall)
{
    if (!kc__pod_ready(pod))
        return 0;
    json_t *copy = json_deep_copy(pod);
    json_t *conds = copy ? ctrl_obj_conditions(copy) : NULL;
    if (!conds) {
        json_decref(copy);
        return CTRL_ERR_NOMEM;
    }
    ctrl_condition c = {"Ready", "False", NULL, NULL, 0, NULL};
    ctrl_condition_set(conds, &c, wall);
    json_t *have = ctrl_condition_find(conds, "Ready");
    json_object_del(have, "reason");
    json_object_del(have, "message");
    int rc = ctrl_client_update_status(ctrl_ctx_client(ctx), copy, NULL, NULL, NULL);
    json_decref(copy);
    if (rc == 0)
        ctrl_recorder_event(s->rec, pod, "Warning", "NodeNotReady", "Node is not ready");
    return rc;
}

static int evict(ctrl_ctx *ctx, lc_state *s, const json_t *pod, int64_t wall)
{
    ctrl_client *c = ctrl_ctx_client(ctx);
    json_t *copy = json_deep_copy(pod);
    json_t *conds = copy ? ctrl_obj_conditions(copy) : NULL;
    if (!conds) {
        json_decref(copy);
        return CTRL_ERR_NOMEM;
    }
    ctrl_condition dt = {"DisruptionTarget",
                         "True",
                         "DeletionByTaintManager",
                         "Taint manager: deleting due to NoExecute taint",
                         0,
                         NULL};
    int rc = 0;
    if (ctrl_condition_set(conds, &dt, wall))
        rc = ctrl_client_update_status(c, copy, NULL, NULL, NULL);
    json_decref(copy);
    if (rc < 0 && !ctrl_err_is_conflict(rc))
        return ctrl_err_is_not_found(rc) ? 0 : rc;
    ctrl_recorder_event(s->rec, pod, "Normal", "TaintManagerEviction",
                        "Marking for deletion Pod %s/%s", ctrl_obj_namespace(pod),
                        ctrl_obj_name(pod));
    ctrl_delete_options o = {.precondition_uid = ctrl_obj_uid(pod)};
    rc = ctrl_client_delete(c, "v1", "Pod", ctrl_obj_namespace(pod), ctrl_obj_name(pod), &o, NULL,
                            NULL);
    if (rc == 0)
        ctrl_log_info(ctx, "evicted pod", "pod", ctrl_obj_name(pod));
    return rc < 0 && !ctrl_err_is_not_found(rc) && !ctrl_err_is_conflict(rc) ? rc : 0;
}

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    lc_state *s = user;
    ctrl_client *c = ctrl_ctx_client(ctx);
    json_t *node = NULL, *pods = NULL;
    ctrl_result res = ctrl_done();
    /* Read only: the taints are changed on a copy. */
    int rc = ctrl_client_get_shared(c, "v1", "Node", "", req->name, &node, NULL);
    if (ctrl_err_is_not_found(rc))
        return ctrl_done();
    if (rc < 0)
        return ctrl_err(rc);
    int64_t wall = ctrl_clock_wall_ns(ctrl_ctx_clock(ctx));
    char now[40];
    kc__rfc3339(wall, now, sizeof now);
    json_t *taints = ctrl_obj_deleting(node) ? NULL : wanted_taints(node, now);
    if (taints) {
        json_t *copy = json_deep_copy(node);
        if (!copy) {
            json_decref(taints);
            res = ctrl_err(CTRL_ERR_NOMEM);
            goto out;
        }
        if (json_array_size(taints))
            ctrl_obj_set(copy, "spec.taints", taints);
        else {
            json_decref(taints);
            ctrl_obj_remove(copy, "spec.taints");
        }
        rc = ctrl_client_update(c, copy, NULL, NULL, NULL);
        json_decref(copy);
        if (rc < 0) {
            res = ctrl_err(rc);
            goto out;
        }
        ctrl_log_info(ctx, "node taints updated", "ready", kc__node_ready_status(node));
        goto out; /* the update's event brings us back with it */
    }
    bool ready = kc__node_ready(node);
    bool no_execute = false;
    size_t i;
    json_t *t;
    json_array_foreach(ctrl_obj_get(node, "spec.taints"), i, t)
    {
        no_execute |= !strcmp(str(t, "effect"), "NoExecute");
    }
    if (ready && !no_execute)
        goto out;
    if ((rc = ctrl_informer_by_index(s->pod_inf, KC_POD_NODE_INDEX, req->name, &pods)) < 0) {
        res = ctrl_err(rc);
        goto out;
    }
    int64_t next = INT64_MAX;
    json_t *p;
    json_array_foreach(pods, i, p)
    {
        if (!kc__pod_active(p))
            continue;
        if (!ready && (rc = mark_not_ready(ctx, s, p, wall)) < 0 && !ctrl_err_is_not_found(rc)) {
            res = ctrl_err(rc);
            goto out;
        }
        int64_t at = no_execute ? evict_at(p, node) : INT64_MAX;
        if (at <= wall) {
            if ((rc = evict(ctx, s, p, wall)) < 0) {
                res = ctrl_err(rc);
                goto out;
            }
        } else if (at < next) {
            next = at;
        }
    }
    if (next != INT64_MAX)
        res = ctrl_requeue_after(next - wall);
out:
    json_decref(pods);
    json_decref(node);
    return res;
}

/* A bound pod's events go to its node. */
static json_t *node_of_pod(const json_t *pod, void *user)
{
    (void)user;
    const char *n = ctrl_obj_get_string(pod, "spec.nodeName");
    if (!n || !*n)
        return json_array();
    return json_pack("[{s:s, s:s}]", "namespace", "", "name", n);
}

static bool bound(const json_t *pod, void *user)
{
    (void)user;
    const char *n = ctrl_obj_get_string(pod, "spec.nodeName");
    return n && *n && kc__pod_active(pod);
}

static bool bound_update(const json_t *old_obj, const json_t *new_obj, void *user)
{
    (void)user;
    /* A pod newly bound, or newly Ready (on a node that is not, it must be
     * marked again). */
    return bound(new_obj, NULL) &&
           (!bound(old_obj, NULL) || kc__pod_ready(old_obj) != kc__pod_ready(new_obj));
}

static bool never(const json_t *obj, void *user)
{
    (void)obj;
    (void)user;
    return false;
}

static void state_free(void *user)
{
    lc_state *s = user;
    if (!s)
        return;
    kc_config_free(s->cfg);
    free(s);
}

int kc__nodelifecycle_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen)
{
    lc_state *s = calloc(1, sizeof *s);
    if (!s)
        return KC_ERR_NOMEM;
    s->cfg = kc_config_ref(cfg);
    s->rec = ctrl_manager_recorder(mgr, "node-controller");
    int rc = kc__pod_node_index(ctrl_manager_cache(mgr), &s->pod_inf);
    if (rc < 0) {
        state_free(s);
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "nodelifecycle: %s", ctrl_strerror(rc));
        return rc;
    }
    char name[64];
    ctrl_predicate_funcs pods = {bound, bound_update, never, NULL};
    ctrl_builder *b = ctrl_builder_for(mgr, "v1", "Node");
    ctrl_builder_named(b, kc__controller_name("nodelifecycle", name, sizeof name));
    ctrl_builder_watches(b, "v1", "Pod", ctrl_handler_from_map(node_of_pod, s),
                         ctrl_pred_funcs(&pods));
    ctrl_builder_with_user_free(b, state_free);
    rc = ctrl_builder_complete(b, reconcile, s);
    if (rc < 0 && errbuf && errlen)
        snprintf(errbuf, errlen, "nodelifecycle: %s", ctrl_strerror(rc));
    return rc;
}

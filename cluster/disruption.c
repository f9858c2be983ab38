/*
 * disruption.c - the disruption controller (kube-controller-manager's
 * "disruption" controller, pkg/controller/disruption): the status of every
 * PodDisruptionBudget, which the API server's eviction subresource reads.
 *
 * A reconcile is one PDB (trySync):
 *   pods          the pods of its namespace its selector matches (a missing
 *                 selector matches none, an empty one all, as
 *                 LabelSelectorAsSelector);
 *   expectedPods  with maxUnavailable, or a percentage minAvailable: the sum
 *                 of spec.replicas of the pods' controllers (a
 *                 ReplicationController, the Deployment of a ReplicaSet, a
 *                 ReplicaSet, a StatefulSet, or any kind with a scale
 *                 subresource), each counted once; pods without a
 *                 controller are left out (an UnmanagedPods event says so);
 *                 with an integer minAvailable: the number of pods;
 *   desiredHealthy  minAvailable, or expectedPods - maxUnavailable (not below
 *                 0); percentages are of expectedPods, rounded up;
 *   currentHealthy  pods Ready, not being deleted, and not in disruptedPods
 *                 (a pod the eviction subresource took counts as gone for
 *                 two minutes, DeletionTimeout);
 *   disruptionsAllowed  currentHealthy - desiredHealthy, 0 when negative or
 *                 when expectedPods is 0;
 *   conditions    DisruptionAllowed True/SufficientPods or
 *                 False/InsufficientPods, observedGeneration.
 * disruptedPods keeps only the entries of pods that exist, are not being
 * deleted and were taken less than two minutes ago; the PDB is looked at
 * again when the earliest of those expires. When the expected count cannot
 * be computed (a pod's controller is missing or has no scale, a malformed
 * percentage) the status goes fail-safe: disruptionsAllowed 0 and
 * DisruptionAllowed False/SyncFailed with the error as its message, and a
 * CalculateExpectedPodCountFailed event.
 *
 * fakeapi's eviction subresource (fakeapi/verbs_pod.c) uses this status as
 * kube-apiserver does once observedGeneration is set: it refuses when
 * disruptionsAllowed is 0 (429, "needs <desiredHealthy> healthy pods and
 * has <currentHealthy> currently"), decrements disruptionsAllowed and
 * records the pod in disruptedPods when it allows one; an unready pod may
 * go when currentHealthy >= desiredHealthy > 0.
 *
 * The status is written (PUT /status with the cached resourceVersion: an
 * eviction writing between is a conflict, and the PDB is synced again)
 * only when it differs.
 *
 * A second controller, kc-disruption-stale-pods, is upstream's stale pod
 * disruption queue: a pod whose DisruptionTarget condition has been True
 * for two minutes while the pod is neither being deleted nor terminal (the
 * eviction that set it did not go through) gets the condition set back to
 * False (server-side apply of the status, field manager
 * DisruptionController); conditions the kubelet set
 * (TerminationByKubelet) are left alone.
 *
 * Threads: reconciles on the controller's worker; map functions on informer
 * threads.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_int.h"
#include "ctrl/conditions.h"
#include "ctrl/controller.h"
#include "ctrl/controllerutil.h"
#include "ctrl/manager.h"
#include "ctrl/object.h"
#include "podutil.h"

#define NAME "disruption"
#define POLICY "policy/v1"
#define PDB_KIND "PodDisruptionBudget"
#define CONDITION "DisruptionAllowed"
#define DELETION_TIMEOUT (2 * CTRL_MINUTE)
#define STALE_TIMEOUT (2 * CTRL_MINUTE)
#define DISRUPTION_TARGET "DisruptionTarget"
#define FIELD_MANAGER "DisruptionController"

typedef struct dis_ctl {
    int refs; /* atomic: one per controller using it */
    kc_config *cfg;
    ctrl_informer *pdbs, *pods;
} dis_ctl;

static void dis_free(void *p)
{
    dis_ctl *d = p;
    if (!d || __atomic_sub_fetch(&d->refs, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    kc_config_free(d->cfg);
    free(d);
}

/* ---- event mapping ---- */

/* A pod: the PDBs of its namespace that select it. */
static json_t *pod_to_pdbs(const json_t *pod, void *user)
{
    dis_ctl *d = user;
    json_t *out = json_array(), *all = NULL;
    const char *ns = ctrl_obj_namespace(pod);
    if (!out || !ns || ctrl_informer_list(d->pdbs, ns, NULL, &all) < 0)
        return out;
    size_t i;
    json_t *pdb;
    json_array_foreach(all, i, pdb)
    {
        if (kc__selector_matches(ctrl_obj_get(pdb, "spec.selector"),
                                 ctrl_obj_get(pod, "metadata.labels")) == 1)
            json_array_append_new(
                out, json_pack("{s:s, s:s}", "namespace", ns, "name", ctrl_obj_name(pdb)));
    }
    json_decref(all);
    return out;
}

/* A workload whose scale may have changed: every PDB of its namespace. */
static json_t *ns_to_pdbs(const json_t *obj, void *user)
{
    dis_ctl *d = user;
    json_t *out = json_array(), *all = NULL;
    const char *ns = ctrl_obj_namespace(obj);
    if (!out || !ns || ctrl_informer_list(d->pdbs, ns, NULL, &all) < 0)
        return out;
    size_t i;
    json_t *pdb;
    json_array_foreach(all, i, pdb)
    {
        json_array_append_new(out,
                              json_pack("{s:s, s:s}", "namespace", ns, "name", ctrl_obj_name(pdb)));
    }
    json_decref(all);
    return out;
}

/* ---- the expected count ---- */

typedef struct pdb_sync {
    ctrl_ctx *ctx;
    ctrl_client *c;
    const json_t *pdb;
    const char *ns;
    char err[512]; /* why the expected count could not be computed */
} pdb_sync;

__attribute__((format(printf, 2, 3))) static int sync_fail(pdb_sync *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
    return -1;
}

/* The group of an apiVersion ("" for "v1"), into buf. */
static const char *group_of(const char *api_version, char *buf, size_t len)
{
    const char *slash = api_version ? strchr(api_version, '/') : NULL;
    snprintf(buf, len, "%.*s", slash ? (int)(slash - api_version) : 0, slash ? api_version : "");
    return buf;
}

/* ref names kind in one of groups (NULL-terminated). */
static bool ref_is(const json_t *ref, const char *kind, const char *const *groups)
{
    const char *k = json_string_value(json_object_get(ref, "kind"));
    char g[256];
    group_of(json_string_value(json_object_get(ref, "apiVersion")), g, sizeof g);
    if (!k || strcmp(k, kind))
        return false;
    for (; *groups; groups++)
        if (!strcmp(g, *groups))
            return true;
    return false;
}

/* Get the object ref names, when it exists with ref's uid (else *out NULL). */
static int get_ref(pdb_sync *s, const char *api_version, const char *kind, const json_t *ref,
                   json_t **out)
{
    json_t *obj = NULL;
    const char *name = json_string_value(json_object_get(ref, "name"));
    const char *uid = json_string_value(json_object_get(ref, "uid"));
    *out = NULL;
    if (!name)
        return 0;
    int rc = ctrl_client_get(s->c, api_version, kind, s->ns, name, &obj, NULL);
    if (ctrl_err_is_not_found(rc))
        return 0;
    if (rc < 0)
        return sync_fail(s, "%s %s/%s: %s", kind, s->ns, name, ctrl_strerror(rc));
    if (!uid || !ctrl_obj_uid(obj) || strcmp(uid, ctrl_obj_uid(obj))) {
        json_decref(obj);
        return 0;
    }
    *out = obj;
    return 0;
}

static int64_t replicas_of(const json_t *obj)
{
    return ctrl_obj_get_int(obj, "spec.replicas", 1);
}

/* The scale subresource of any other kind (getScaleController). 0 with
 * *found set when it answers for ref's uid. */
static int scale_of(pdb_sync *s, const json_t *ref, bool *found, char *uid, size_t uidlen,
                    int64_t *scale)
{
    const char *av = json_string_value(json_object_get(ref, "apiVersion"));
    const char *kind = json_string_value(json_object_get(ref, "kind"));
    const char *name = json_string_value(json_object_get(ref, "name"));
    const char *want = json_string_value(json_object_get(ref, "uid"));
    ctrl_resource_info ri;
    *found = false;
    if (!av || !kind || !name)
        return 0;
    int rc = ctrl_client_resource_for(s->c, av, kind, &ri, NULL);
    if (rc < 0)
        return sync_fail(s, "no matches for kind \"%s\" in version \"%s\"", kind, av);
    char path[1400];
    if (ri.group[0])
        snprintf(path, sizeof path, "/apis/%s/%s/namespaces/%s/%s/%s/scale", ri.group, ri.version,
                 s->ns, ri.resource, name);
    else
        snprintf(path, sizeof path, "/api/%s/namespaces/%s/%s/%s/scale", ri.version, s->ns,
                 ri.resource, name);
    json_t *sc = NULL;
    rc = ctrl_client_request(s->c, "GET", path, NULL, NULL, &sc, NULL);
    if (ctrl_err_is_not_found(rc) || ctrl_err_is_method_not_supported(rc)) {
        /* No such object, or a kind without a scale subresource. */
        json_t *obj = NULL;
        int grc = ctrl_client_get(s->c, av, kind, s->ns, name, &obj, NULL);
        json_decref(obj);
        if (grc == 0)
            return sync_fail(s, "%s%s%s does not implement the scale subresource", ri.resource,
                             ri.group[0] ? "." : "", ri.group);
        return 0;
    }
    if (rc < 0)
        return sync_fail(s, "%s/%s scale: %s", ri.resource, name, ctrl_strerror(rc));
    const char *have = ctrl_obj_uid(sc);
    if (want && have && !strcmp(want, have)) {
        *found = true;
        snprintf(uid, uidlen, "%s", have);
        *scale = ctrl_obj_get_int(sc, "spec.replicas", 0);
    }
    json_decref(sc);
    return 0;
}

/*
 * The controller of one pod and its scale, trying the finders in
 * upstream's order. 0 with *found; -1 with s->err.
 */
static int controller_scale(pdb_sync *s, const json_t *ref, bool *found, char *uid, size_t uidlen,
                            int64_t *scale)
{
    static const char *const core[] = {"", NULL};
    static const char *const apps[] = {"apps", "extensions", NULL};
    static const char *const apps_only[] = {"apps", NULL};
    json_t *obj = NULL, *dep = NULL;
    *found = false;
    if (ref_is(ref, "ReplicationController", core)) {
        if (get_ref(s, "v1", "ReplicationController", ref, &obj) < 0)
            return -1;
    } else if (ref_is(ref, "ReplicaSet", apps)) {
        if (get_ref(s, "apps/v1", "ReplicaSet", ref, &obj) < 0)
            return -1;
        const json_t *owner = obj ? ctrl_get_controller_of(obj) : NULL;
        const char *okind = owner ? json_string_value(json_object_get(owner, "kind")) : NULL;
        if (owner && ref_is(owner, "Deployment", apps)) {
            /* A Deployment's ReplicaSet: the Deployment's scale counts. */
            int rc = get_ref(s, "apps/v1", "Deployment", owner, &dep);
            json_decref(obj);
            obj = dep;
            if (rc < 0)
                return -1;
        } else if (okind && !strcmp(okind, "Deployment")) {
            json_decref(obj);
            obj = NULL;
        }
        if (!obj && owner) /* its Deployment is gone: the scale subresource */
            return scale_of(s, ref, found, uid, uidlen, scale);
    } else if (ref_is(ref, "StatefulSet", apps_only)) {
        if (get_ref(s, "apps/v1", "StatefulSet", ref, &obj) < 0)
            return -1;
    } else {
        return scale_of(s, ref, found, uid, uidlen, scale);
    }
    if (obj) {
        *found = true;
        snprintf(uid, uidlen, "%s", ctrl_obj_uid(obj));
        *scale = replicas_of(obj);
        json_decref(obj);
    }
    return 0;
}

/* getExpectedScale: the sum of the pods' controllers' scales. *unmanaged
 * counts the pods with no controller. */
static int expected_scale(pdb_sync *s, const json_t *pods, int64_t *out, size_t *unmanaged)
{
    json_t *seen = json_object();
    int64_t sum = 0;
    *unmanaged = 0;
    if (!seen)
        return sync_fail(s, "out of memory");
    size_t i;
    json_t *pod;
    int rc = 0;
    json_array_foreach(pods, i, pod)
    {
        const json_t *ref = ctrl_get_controller_of(pod);
        if (!ref) {
            (*unmanaged)++;
            continue;
        }
        const char *ruid = json_string_value(json_object_get(ref, "uid"));
        if (ruid && json_object_get(seen, ruid))
            continue;
        bool found;
        char uid[128] = "";
        int64_t scale = 0;
        if ((rc = controller_scale(s, ref, &found, uid, sizeof uid, &scale)) < 0)
            break;
        if (!found) {
            rc = sync_fail(s, "found no controllers for pod \"%s\"", ctrl_obj_name(pod));
            break;
        }
        if (!json_object_get(seen, uid)) {
            json_object_set_new(seen, uid, json_true());
            sum += scale;
        }
        if (ruid)
            json_object_set_new(seen, ruid, json_true());
    }
    json_decref(seen);
    if (rc == 0)
        *out = sum;
    return rc;
}

/* intstr.GetScaledValueFromIntOrPercent(v, total, roundUp true). */
static int scaled(pdb_sync *s, const json_t *v, int64_t total, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return 0;
    }
    const char *str = json_string_value(v);
    size_t n = str ? strlen(str) : 0;
    if (!str || !n || str[n - 1] != '%')
        return sync_fail(s, "invalid value for IntOrString: invalid type: string is not a "
                            "percentage");
    char *end;
    long long pct = strtoll(str, &end, 10);
    if (end == str || end != str + n - 1 || pct < -1000000 || pct > 1000000)
        return sync_fail(s, "invalid value \"%s\": strconv.Atoi: parsing \"%.*s\": invalid syntax",
                         str, (int)(n - 1), str);
    int64_t prod = (int64_t)pct * total;
    *out = prod >= 0 ? (prod + 99) / 100 : -((-prod) / 100);
    return 0;
}

/* getExpectedPodCount. */
static int expected_count(pdb_sync *s, const json_t *pods, int64_t *expected, int64_t *desired,
                          size_t *unmanaged)
{
    const json_t *max = ctrl_obj_get(s->pdb, "spec.maxUnavailable");
    const json_t *min = ctrl_obj_get(s->pdb, "spec.minAvailable");
    *expected = *desired = 0;
    *unmanaged = 0;
    if (max && !json_is_null(max)) {
        int64_t m;
        if (expected_scale(s, pods, expected, unmanaged) < 0 || scaled(s, max, *expected, &m) < 0)
            return -1;
        *desired = *expected - m < 0 ? 0 : *expected - m;
    } else if (min && !json_is_null(min)) {
        if (json_is_integer(min)) {
            *desired = json_integer_value(min);
            *expected = (int64_t)json_array_size(pods);
        } else if (expected_scale(s, pods, expected, unmanaged) < 0 ||
                   scaled(s, min, *expected, desired) < 0) {
            return -1;
        }
    }
    return 0;
}

/* ---- status ---- */

static bool conditions_up_to_date(const json_t *st, bool allowed)
{
    const json_t *c = ctrl_condition_find(json_object_get(st, "conditions"), CONDITION);
    const char *status = json_string_value(json_object_get(c, "status"));
    return c &&
           json_integer_value(json_object_get(c, "observedGeneration")) ==
               json_integer_value(json_object_get(st, "observedGeneration")) &&
           status && !strcmp(status, allowed ? "True" : "False");
}

static int write_status(pdb_sync *s, json_t *copy)
{
    int rc = ctrl_client_update_status(s->c, copy, NULL, NULL, NULL);
    return ctrl_err_is_not_found(rc) ? 0 : rc;
}

/* failSafe: no disruptions while the numbers cannot be known. */
static int fail_safe(pdb_sync *s, int64_t now_wall)
{
    json_t *copy = json_deep_copy(s->pdb);
    json_t *st = copy ? json_object_get(copy, "status") : NULL;
    if (copy && !json_is_object(st))
        json_object_set_new(copy, "status", st = json_object());
    json_t *conds = copy ? ctrl_obj_conditions(copy) : NULL;
    if (!conds) {
        json_decref(copy);
        return CTRL_ERR_NOMEM;
    }
    bool changed = json_integer_value(json_object_get(st, "disruptionsAllowed")) != 0 ||
                   !json_object_get(st, "disruptionsAllowed");
    json_object_set_new(st, "disruptionsAllowed", json_integer(0));
    ctrl_condition c = {CONDITION,
                        "False",
                        "SyncFailed",
                        s->err,
                        json_integer_value(json_object_get(st, "observedGeneration")),
                        NULL};
    changed |= ctrl_condition_set(conds, &c, now_wall);
    int rc = changed ? write_status(s, copy) : 0;
    json_decref(copy);
    return rc;
}

/* updatePdbStatus: write when something differs. */
static int update_status(pdb_sync *s, int64_t healthy, int64_t desired, int64_t expected,
                         json_t *disrupted, int64_t now_wall)
{
    int64_t allowed = healthy - desired;
    if (expected <= 0 || allowed <= 0)
        allowed = 0;
    const json_t *st = ctrl_obj_get(s->pdb, "status");
    int64_t gen = ctrl_obj_generation(s->pdb);
    const json_t *have_dp = json_object_get(st, "disruptedPods");
    bool same_dp = json_object_size(have_dp) ? json_equal(have_dp, disrupted)
                                             : json_object_size(disrupted) == 0;
    if (json_is_object(st) && ctrl_obj_get_int(st, "currentHealthy", -1) == healthy &&
        ctrl_obj_get_int(st, "desiredHealthy", -1) == desired &&
        ctrl_obj_get_int(st, "expectedPods", -1) == expected &&
        ctrl_obj_get_int(st, "disruptionsAllowed", -1) == allowed && same_dp &&
        ctrl_obj_get_int(st, "observedGeneration", -1) == gen &&
        conditions_up_to_date(st, allowed > 0))
        return 0;
    json_t *copy = json_deep_copy(s->pdb);
    if (!copy)
        return CTRL_ERR_NOMEM;
    json_t *conds = json_object_get(st, "conditions");
    json_t *nst =
        json_pack("{s:I, s:I, s:I, s:I, s:I, s:o}", "observedGeneration", (json_int_t)gen,
                  "disruptionsAllowed", (json_int_t)allowed, "currentHealthy", (json_int_t)healthy,
                  "desiredHealthy", (json_int_t)desired, "expectedPods", (json_int_t)expected,
                  "conditions", json_is_array(conds) ? json_deep_copy(conds) : json_array());
    if (!nst) {
        json_decref(copy);
        return CTRL_ERR_NOMEM;
    }
    if (json_object_size(disrupted))
        json_object_set(nst, "disruptedPods", disrupted);
    json_object_set_new(copy, "status", nst);
    ctrl_condition c = {CONDITION,
                        allowed > 0 ? "True" : "False",
                        allowed > 0 ? "SufficientPods" : "InsufficientPods",
                        "",
                        gen,
                        NULL};
    ctrl_condition_set(json_object_get(nst, "conditions"), &c, now_wall);
    int rc = write_status(s, copy);
    json_decref(copy);
    return rc;
}

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    dis_ctl *d = user;
    json_t *pdb = NULL, *all = NULL, *pods = NULL, *disrupted = NULL;
    ctrl_result res = ctrl_done();
    int rc = ctrl_informer_get(d->pdbs, req->ns, req->name, &pdb);
    if (ctrl_err_is_not_found(rc))
        return ctrl_done();
    if (rc < 0)
        return ctrl_err(rc);
    pdb_sync s = {.ctx = ctx, .c = ctrl_ctx_client(ctx), .pdb = pdb, .ns = req->ns};
    int64_t now_wall = ctrl_clock_wall_ns(ctrl_ctx_clock(ctx));
    ctrl_recorder *rec = ctrl_ctx_recorder(ctx);
    const json_t *sel = ctrl_obj_get(pdb, "spec.selector");
    pods = json_array();
    disrupted = json_object();
    /* The selector as a list filter (the cache then builds only the
     * matching pods); kc__selector_matches below stays the judge. */
    char *selstr = json_is_object(sel) ? kc__selector_string(sel) : NULL;
    rc = ctrl_informer_list(d->pods, req->ns, selstr && *selstr ? selstr : NULL, &all);
    if (rc == CTRL_ERR_ARG)
        rc = ctrl_informer_list(d->pods, req->ns, NULL, &all);
    free(selstr);
    if (rc == 0 && (!pods || !disrupted))
        rc = CTRL_ERR_NOMEM;
    if (rc < 0) {
        res = ctrl_err(rc);
        goto out;
    }
    size_t i;
    json_t *pod;
    json_array_foreach(all, i, pod)
    {
        if (kc__selector_matches(sel, ctrl_obj_get(pod, "metadata.labels")) == 1)
            json_array_append(pods, pod);
    }
    if (!json_array_size(pods) && rec)
        ctrl_recorder_event(rec, pdb, "Normal", "NoPods", "No matching pods found");

    int64_t expected, desired;
    size_t unmanaged;
    if (expected_count(&s, pods, &expected, &desired, &unmanaged) < 0) {
        if (rec)
            ctrl_recorder_event(rec, pdb, "Warning", "CalculateExpectedPodCountFailed",
                                "Failed to calculate the number of expected pods: %s", s.err);
        rc = fail_safe(&s, now_wall);
        res = rc < 0 ? ctrl_err(rc) : ctrl_done();
        goto out;
    }
    if (unmanaged && rec) {
        char *text = kc__selector_string(sel);
        ctrl_recorder_event(rec, pdb, "Warning", "UnmanagedPods",
                            "Pods selected by this PodDisruptionBudget (selector: %s) were found "
                            "to be unmanaged. As a result, the status of the PDB cannot be "
                            "calculated correctly, which may result in undefined behavior. To "
                            "account for these pods please set \".spec.minAvailable\" field of "
                            "the PDB to an integer value.",
                            text ? text : "");
        free(text);
    }

    /* buildDisruptedPodMap and countHealthyPods. */
    const json_t *dp = ctrl_obj_get(pdb, "status.disruptedPods");
    int64_t recheck = -1, healthy = 0;
    json_array_foreach(pods, i, pod)
    {
        if (ctrl_obj_deleting(pod))
            continue;
        const char *name = ctrl_obj_name(pod);
        const json_t *when = name ? json_object_get(dp, name) : NULL;
        int64_t t = when ? kc__parse_time(json_string_value(when)) : -1;
        if (when && t >= 0) {
            int64_t due = t + DELETION_TIMEOUT;
            if (due < now_wall) {
                if (rec)
                    ctrl_recorder_event(rec, pod, "Warning", "NotDeleted",
                                        "Pod was expected by PDB %s/%s to be deleted but it "
                                        "wasn't",
                                        req->ns, req->ns);
            } else {
                json_object_set(disrupted, name, (json_t *)when);
                if (recheck < 0 || due < recheck)
                    recheck = due;
                continue; /* expected to go soon: not healthy */
            }
        }
        if (kc__pod_ready(pod))
            healthy++;
    }
    rc = update_status(&s, healthy, desired, expected, disrupted, now_wall);
    if (rc < 0)
        res = ctrl_err(rc);
    else if (recheck >= 0)
        res = ctrl_requeue_after(recheck - now_wall > 0 ? recheck - now_wall : 1);
out:
    json_decref(disrupted);
    json_decref(pods);
    json_decref(all);
    json_decref(pdb);
    return res;
}

/* ---- stale DisruptionTarget conditions ---- */

/* The pod's DisruptionTarget condition, when it is one this controller
 * resets: True, not the kubelet's, on a pod neither deleting nor terminal. */
static const json_t *stale_candidate(const json_t *pod)
{
    const json_t *c = kc__condition(pod, DISRUPTION_TARGET);
    const char *st = json_string_value(json_object_get(c, "status"));
    const char *reason = json_string_value(json_object_get(c, "reason"));
    const char *phase = kc__pod_phase(pod);
    if (!c || !st || strcmp(st, "True") || (reason && !strcmp(reason, "TerminationByKubelet")) ||
        ctrl_obj_deleting(pod) || !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))
        return NULL;
    return c;
}

static bool stale_event(const json_t *obj, void *user)
{
    (void)user;
    return stale_candidate(obj) != NULL;
}

static bool stale_update(const json_t *a, const json_t *b, void *user)
{
    (void)a;
    (void)user;
    return stale_candidate(b) != NULL;
}

static bool never(const json_t *obj, void *user)
{
    (void)obj;
    (void)user;
    return false;
}

static ctrl_result reconcile_stale(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    dis_ctl *d = user;
    json_t *pod = NULL;
    int rc = ctrl_informer_get(d->pods, req->ns, req->name, &pod);
    if (ctrl_err_is_not_found(rc))
        return ctrl_done();
    if (rc < 0)
        return ctrl_err(rc);
    ctrl_result res = ctrl_done();
    const json_t *c = stale_candidate(pod);
    const char *since = json_string_value(json_object_get(c, "lastTransitionTime"));
    int64_t now = ctrl_clock_wall_ns(ctrl_ctx_clock(ctx));
    int64_t t = since ? kc__parse_time(since) : -1;
    if (!c)
        goto out;
    if (t >= 0 && t + STALE_TIMEOUT > now) {
        res = ctrl_requeue_after(t + STALE_TIMEOUT - now);
        goto out;
    }
    char when[40];
    kc__rfc3339(now, when, sizeof when);
    json_t *apply = json_pack(
        "{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:[{s:s, s:s, s:s}]}}", "apiVersion", "v1", "kind", "Pod",
        "metadata", "name", req->name, "namespace", req->ns, "resourceVersion",
        ctrl_obj_resource_version(pod) ? ctrl_obj_resource_version(pod) : "", "status",
        "conditions", "type", DISRUPTION_TARGET, "status", "False", "lastTransitionTime", when);
    rc = apply ? ctrl_client_apply(ctrl_ctx_client(ctx), apply, FIELD_MANAGER,
                                   CTRL_APPLY_STATUS | CTRL_APPLY_FORCE, NULL, NULL)
               : CTRL_ERR_NOMEM;
    json_decref(apply);
    if (rc == 0)
        ctrl_log_info(ctx, "reset a stale DisruptionTarget condition to False");
    else if (!ctrl_err_is_not_found(rc))
        res = ctrl_err(rc);
out:
    json_decref(pod);
    return res;
}

int kc__disruption_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen)
{
    ctrl_cache *cache = ctrl_manager_cache(mgr);
    dis_ctl *d = calloc(1, sizeof *d);
    if (!d)
        return KC_ERR_NOMEM;
    d->refs = 1;
    int rc = ctrl_cache_informer(cache, POLICY, PDB_KIND, NULL, &d->pdbs, NULL);
    if (rc == 0)
        rc = ctrl_cache_informer(cache, "v1", "Pod", NULL, &d->pods, NULL);
    if (rc < 0) {
        dis_free(d);
        snprintf(errbuf, errlen, NAME ": informers: %d", rc);
        return rc;
    }
    d->cfg = kc_config_ref(cfg);
    char name[64];
    ctrl_builder *b = ctrl_builder_for(mgr, POLICY, PDB_KIND);
    ctrl_builder_named(b, kc__controller_name(NAME, name, sizeof name));
    ctrl_builder_watches(b, "v1", "Pod", ctrl_handler_from_map(pod_to_pdbs, d), NULL);
    ctrl_builder_watches(b, "v1", "ReplicationController", ctrl_handler_from_map(ns_to_pdbs, d),
                         ctrl_pred_generation_changed());
    ctrl_builder_watches(b, "apps/v1", "ReplicaSet", ctrl_handler_from_map(ns_to_pdbs, d),
                         ctrl_pred_generation_changed());
    ctrl_builder_watches(b, "apps/v1", "Deployment", ctrl_handler_from_map(ns_to_pdbs, d),
                         ctrl_pred_generation_changed());
    ctrl_builder_watches(b, "apps/v1", "StatefulSet", ctrl_handler_from_map(ns_to_pdbs, d),
                         ctrl_pred_generation_changed());
    ctrl_builder_with_user_free(b, dis_free);
    rc = ctrl_builder_complete(b, reconcile, d);
    if (rc < 0) {
        if (errbuf && errlen)
            snprintf(errbuf, errlen, NAME ": %s", ctrl_strerror(rc));
        return rc;
    }
    /* The stale-condition controller shares d: a reference of its own. */
    __atomic_add_fetch(&d->refs, 1, __ATOMIC_RELAXED);
    ctrl_predicate_funcs stale = {.create = stale_event, .update = stale_update, .remove = never};
    b = ctrl_builder_for(mgr, "v1", "Pod");
    ctrl_builder_named(b, "kc-" NAME "-stale-pods");
    ctrl_builder_with_predicates(b, ctrl_pred_funcs(&stale));
    ctrl_builder_with_user_free(b, dis_free);
    rc = ctrl_builder_complete(b, reconcile_stale, d);
    if (rc < 0 && errbuf && errlen)
        snprintf(errbuf, errlen, NAME ": %s", ctrl_strerror(rc));
    return rc;
}

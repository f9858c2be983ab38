/*
 * statefulset.c - the StatefulSet controller (kube-controller-manager's
 * statefulset controller): pods "<set>-<ordinal>" from spec.ordinals.start,
 * OrderedReady (one at a time, each waiting for the ones below it to be
 * Running and Ready; scale-down from the highest) and Parallel management,
 * ControllerRevisions (revision.h) with currentRevision / updateRevision,
 * RollingUpdate from the highest ordinal down to the partition, OnDelete,
 * PersistentVolumeClaims from volumeClaimTemplates with the retention
 * policy, and the status kubectl rollout status reads (docs/cluster.md,
 * "StatefulSet").
 *
 * DESIGN
 * - One libctrl controller "kc-statefulset": For(apps/v1 StatefulSet),
 *   Owns(v1 Pod), Owns(apps/v1 ControllerRevision). Pods and revisions come
 *   from the cache through the controller-owner index (workload.h).
 * - Each sync first decides what to do (creates and deletes, in upstream's
 *   order: replicas ascending, then condemned pods descending, then the
 *   rolling update descending), raises the expectations for all of it, then
 *   writes. Under OrderedReady at most one pod changes per sync; the pod
 *   events (and the expectations they settle) bring the next sync.
 * - Status counts what the cache showed at the start of the sync.
 * - Threads: reconciles on the controller's workers, never two for one
 *   StatefulSet; no state beyond the kc_wl.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_int.h"
#include "ctrl/controllerutil.h"
#include "ctrl/object.h"
#include "podutil.h"
#include "revision.h"
#include "workload.h"

#define POD_NAME_LABEL "statefulset.kubernetes.io/pod-name"
#define POD_INDEX_LABEL "apps.kubernetes.io/pod-index"
#define REVISION_LABEL "controller-revision-hash"
#define MAX_REPLICAS 100000
#define EXPECT_RECHECK (1 * CTRL_SECOND)
#define MAX_BURST 500 /* pod creates per sync (Parallel); the next sync does more */

typedef struct sts_sync {
    ctrl_ctx *ctx;
    kc_wl *wl;
    char key[512];
    json_t *set; /* as read, with apiVersion and kind */
    const char *name;
    const char *ns;
    int64_t start, replicas, partition, min_ready;
    bool monotonic, rolling;
    json_t *cur_rev, *upd_rev; /* borrowed from revisions / owned upd */
    json_t **slots;            /* replicas entries: the pod of each ordinal, or NULL */
    json_t *condemned;         /* pods with ordinals outside the range, highest first */
    json_t *creates;           /* ordinals (integers) to create */
    json_t *deletes;           /* pods to delete */
    int64_t wall;
    int64_t wait_ns; /* a pod becomes available after this (minReadySeconds) */
} sts_sync;

/* The ordinal of a pod named "<set>-<n>", or -1. */
static int64_t ordinal_of(const char *set, const char *pod)
{
    size_t n = strlen(set);
    if (!pod || strncmp(pod, set, n) || pod[n] != '-' || !pod[n + 1])
        return -1;
    int64_t v = 0;
    for (const char *p = pod + n + 1; *p; p++) {
        if (*p < '0' || *p > '9' || v > MAX_REPLICAS * 100)
            return -1;
        v = v * 10 + (*p - '0');
    }
    return v;
}

static bool running_ready(const json_t *pod)
{
    return !strcmp(kc__pod_phase(pod), "Running") && kc__pod_ready(pod);
}

static bool available(sts_sync *s, const json_t *pod)
{
    if (!running_ready(pod))
        return false;
    if (kc__pod_available(pod, s->min_ready, s->wall))
        return true;
    /* Ready, not yet for long enough: look again when it will be. */
    const char *t =
        json_string_value(json_object_get(kc__condition(pod, "Ready"), "lastTransitionTime"));
    int64_t since = kc__parse_time(t), at = since + s->min_ready * CTRL_SECOND - s->wall;
    if (since >= 0 && at > 0 && (s->wait_ns == 0 || at < s->wait_ns))
        s->wait_ns = at;
    return false;
}

static bool terminating(const json_t *pod)
{
    return ctrl_obj_deleting(pod);
}

static bool terminal(const json_t *pod)
{
    const char *p = kc__pod_phase(pod);
    return !strcmp(p, "Failed") || !strcmp(p, "Succeeded");
}

static bool healthy(sts_sync *s, const json_t *pod)
{
    return available(s, pod) && !terminating(pod);
}

static const char *revision_of(const json_t *pod)
{
    const char *r = ctrl_obj_label(pod, REVISION_LABEL);
    return r ? r : "";
}

static void claim_name(const char *claim, const char *set, int64_t ord, char *buf, size_t len)
{
    snprintf(buf, len, "%s-%s-%lld", claim, set, (long long)ord);
}

/* The pod of ordinal ord from template tmpl of revision rev. */
static json_t *pod_for(sts_sync *s, int64_t ord, const json_t *rev, const json_t *tmpl)
{
    char name[320];
    snprintf(name, sizeof name, "%s-%lld", s->name, (long long)ord);
    const json_t *tm = json_object_get(tmpl, "metadata");
    json_t *meta = json_object();
    const char *keep[] = {"labels", "annotations"};
    for (int k = 0; k < 2; k++) {
        const json_t *m = json_object_get(tm, keep[k]);
        json_object_set_new(meta, keep[k], json_is_object(m) ? json_deep_copy(m) : json_object());
    }
    json_object_set_new(meta, "name", json_string(name));
    json_object_set_new(meta, "namespace", json_string(s->ns));
    const json_t *ts = json_object_get(tmpl, "spec");
    json_t *pod = json_pack("{s:s, s:s, s:o, s:o}", "apiVersion", "v1", "kind", "Pod", "metadata",
                            meta, "spec", json_is_object(ts) ? json_deep_copy(ts) : json_object());
    if (!pod)
        return NULL;
    char ix[24];
    snprintf(ix, sizeof ix, "%lld", (long long)ord);
    ctrl_obj_set_label(pod, POD_NAME_LABEL, name);
    ctrl_obj_set_label(pod, POD_INDEX_LABEL, ix);
    ctrl_obj_set_label(pod, REVISION_LABEL, ctrl_obj_name(rev));
    json_t *spec = json_object_get(pod, "spec");
    json_object_set_new(spec, "hostname", json_string(name));
    const char *svc = ctrl_obj_get_string(s->set, "spec.serviceName");
    if (svc && *svc)
        json_object_set_new(spec, "subdomain", json_string(svc));
    /* A volume per claim template, naming this ordinal's claim. */
    size_t i;
    json_t *ct;
    json_array_foreach(ctrl_obj_get(s->set, "spec.volumeClaimTemplates"), i, ct)
    {
        const char *cn = ctrl_obj_name(ct);
        if (!cn)
            continue;
        json_t *vols = json_object_get(spec, "volumes");
        if (!json_is_array(vols)) {
            vols = json_array();
            json_object_set_new(spec, "volumes", vols);
        }
        char claim[512];
        claim_name(cn, s->name, ord, claim, sizeof claim);
        json_t *vol =
            json_pack("{s:s, s:{s:s}}", "name", cn, "persistentVolumeClaim", "claimName", claim);
        size_t j;
        json_t *v;
        bool replaced = false;
        json_array_foreach(vols, j, v)
        {
            const char *vn = json_string_value(json_object_get(v, "name"));
            if (vn && !strcmp(vn, cn)) {
                json_array_set(vols, j, vol);
                replaced = true;
                break;
            }
        }
        if (!replaced)
            json_array_append(vols, vol);
        json_decref(vol);
    }
    if (ctrl_set_controller_reference(s->set, pod, NULL) < 0) {
        json_decref(pod);
        return NULL;
    }
    return pod;
}

static const char *retention(const sts_sync *s, const char *when)
{
    char path[96];
    snprintf(path, sizeof path, "spec.persistentVolumeClaimRetentionPolicy.%s", when);
    const char *v = ctrl_obj_get_string(s->set, path);
    return v ? v : "Retain";
}

/* The claims of ordinal ord that do not exist yet. */
static int create_claims(sts_sync *s, int64_t ord)
{
    size_t i;
    json_t *ct;
    json_array_foreach(ctrl_obj_get(s->set, "spec.volumeClaimTemplates"), i, ct)
    {
        const char *cn = ctrl_obj_name(ct);
        if (!cn)
            continue;
        char claim[512];
        claim_name(cn, s->name, ord, claim, sizeof claim);
        const json_t *tl = ctrl_obj_get(ct, "metadata.labels");
        json_t *labels = json_is_object(tl) ? json_deep_copy(tl) : json_object();
        json_object_update(labels, ctrl_obj_get(s->set, "spec.selector.matchLabels"));
        const json_t *spec = json_object_get(ct, "spec");
        json_t *pvc = json_pack("{s:s, s:s, s:{s:s, s:s, s:o}, s:o}", "apiVersion", "v1", "kind",
                                "PersistentVolumeClaim", "metadata", "name", claim, "namespace",
                                s->ns, "labels", labels, "spec",
                                json_is_object(spec) ? json_deep_copy(spec) : json_object());
        if (!pvc)
            return CTRL_ERR_NOMEM;
        const json_t *ann = ctrl_obj_get(ct, "metadata.annotations");
        if (json_is_object(ann))
            ctrl_obj_set(pvc, "metadata.annotations", json_deep_copy(ann));
        if (!strcmp(retention(s, "whenDeleted"), "Delete"))
            ctrl_set_owner_reference(s->set, pvc, NULL);
        int rc = ctrl_client_create(ctrl_ctx_client(s->ctx), pvc, NULL, NULL, NULL);
        json_decref(pvc);
        if (rc == 0)
            kc__wl_event(s->ctx, s->set, "Normal", "SuccessfulCreate",
                         "create Claim %s Pod %s-%lld in StatefulSet %s success", claim, s->name,
                         (long long)ord, s->name);
        else if (!ctrl_err_is_already_exists(rc))
            return rc;
    }
    return 0;
}

/* whenScaled: Delete: a condemned pod's claims are handed to the pod, so
 * that they go with it (the garbage collector). */
static int hand_claims_to_pod(sts_sync *s, const json_t *pod, int64_t ord)
{
    if (strcmp(retention(s, "whenScaled"), "Delete"))
        return 0;
    json_t *owner = json_deep_copy(pod);
    json_object_set_new(owner, "apiVersion", json_string("v1"));
    json_object_set_new(owner, "kind", json_string("Pod"));
    int rc = 0;
    size_t i;
    json_t *ct;
    json_array_foreach(ctrl_obj_get(s->set, "spec.volumeClaimTemplates"), i, ct)
    {
        char claim[512];
        claim_name(ctrl_obj_name(ct) ? ctrl_obj_name(ct) : "", s->name, ord, claim, sizeof claim);
        json_t *pvc = NULL;
        int r = ctrl_client_get(ctrl_ctx_api_reader(s->ctx), "v1", "PersistentVolumeClaim", s->ns,
                                claim, &pvc, NULL);
        if (r == 0 && !ctrl_has_owner_reference(pvc, owner) &&
            ctrl_set_owner_reference(owner, pvc, NULL) == 0)
            r = ctrl_client_update(ctrl_ctx_client(s->ctx), pvc, NULL, NULL, NULL);
        json_decref(pvc);
        if (r < 0 && !ctrl_err_is_not_found(r) && rc == 0)
            rc = r;
    }
    json_decref(owner);
    return rc;
}

/* Decide the creates and deletes of this sync (upstream's order). */
static void plan(sts_sync *s)
{
    bool stop = false;
    for (int64_t i = 0; i < s->replicas && !stop; i++) {
        json_t *pod = s->slots[i];
        if (!pod) {
            json_array_append_new(s->creates, json_integer(s->start + i));
            stop = s->monotonic || json_array_size(s->creates) >= MAX_BURST;
        } else if (terminal(pod) && !terminating(pod)) {
            json_array_append(s->deletes, pod); /* recreated by a later sync */
            stop = s->monotonic;
        } else if (terminating(pod) || !available(s, pod)) {
            stop = s->monotonic;
        }
    }
    if (stop)
        return;
    size_t i;
    json_t *pod;
    json_array_foreach(s->condemned, i, pod)
    {
        if (terminating(pod)) {
            if (s->monotonic)
                return;
            continue;
        }
        json_array_append(s->deletes, pod);
        if (s->monotonic)
            return;
    }
    if (!s->rolling || json_array_size(s->deletes) || json_array_size(s->creates))
        return;
    for (int64_t t = s->replicas - 1; t >= s->partition && t >= 0; t--) {
        pod = s->slots[t];
        if (strcmp(revision_of(pod), ctrl_obj_name(s->upd_rev)) && !terminating(pod)) {
            json_array_append(s->deletes, pod);
            return;
        }
        if (!healthy(s, pod))
            return;
    }
}

static int act(sts_sync *s)
{
    size_t nc = json_array_size(s->creates), nd = json_array_size(s->deletes);
    if (!nc && !nd)
        return 0;
    kc__expect_set(s->wl->expect, s->key, (int)nc, (int)nd, ctrl_ctx_now(s->ctx));
    int rc = 0;
    size_t i;
    json_t *v;
    json_array_foreach(s->deletes, i, v)
    {
        int64_t ord = ordinal_of(s->name, ctrl_obj_name(v));
        if (ord >= 0 && (ord < s->start || ord >= s->start + s->replicas)) {
            int r = hand_claims_to_pod(s, v, ord);
            if (r < 0 && rc == 0)
                rc = r;
        }
        int r = kc__wl_delete(s->ctx, s->wl, s->key, v);
        if (r == 0)
            kc__wl_event(s->ctx, s->set, "Normal", "SuccessfulDelete",
                         "delete Pod %s in StatefulSet %s successful", ctrl_obj_name(v), s->name);
        else if (rc == 0)
            rc = r;
    }
    json_t *cur_tmpl = kc__rev_template(s->cur_rev), *upd_tmpl = kc__rev_template(s->upd_rev);
    json_array_foreach(s->creates, i, v)
    {
        int64_t ord = json_integer_value(v);
        /* Below the partition a new pod is of the current revision. */
        bool current = s->rolling && ord - s->start < s->partition;
        const json_t *rev = current ? s->cur_rev : s->upd_rev;
        json_t *pod = pod_for(s, ord, rev, current ? cur_tmpl : upd_tmpl);
        int r = pod ? create_claims(s, ord) : CTRL_ERR_NOMEM;
        if (r == 0)
            r = kc__wl_create(s->ctx, s->wl, s->key, pod, NULL);
        else
            kc__expect_observed_add(s->wl->expect, s->key);
        if (r == 0)
            kc__wl_event(s->ctx, s->set, "Normal", "SuccessfulCreate",
                         "create Pod %s in StatefulSet %s successful", ctrl_obj_name(pod), s->name);
        else if (!ctrl_err_is_already_exists(r) && rc == 0)
            rc = r;
        json_decref(pod);
    }
    json_decref(cur_tmpl);
    json_decref(upd_tmpl);
    return rc;
}

static int cmp_ordinal_desc(const void *a, const void *b)
{
    int64_t x = json_integer_value(json_object_get(*(const json_t *const *)a, "_ord"));
    int64_t y = json_integer_value(json_object_get(*(const json_t *const *)b, "_ord"));
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Slot the pods by ordinal; the others are condemned (highest first). */
static int classify(sts_sync *s, const json_t *pods)
{
    s->slots = calloc((size_t)s->replicas + 1, sizeof *s->slots);
    json_t *cond = json_array();
    if (!s->slots || !cond) {
        json_decref(cond);
        return CTRL_ERR_NOMEM;
    }
    size_t i;
    json_t *pod;
    json_array_foreach(pods, i, pod)
    {
        int64_t ord = ordinal_of(s->name, ctrl_obj_name(pod));
        if (ord < 0)
            continue; /* not one of ours by name: left alone */
        if (ord >= s->start && ord < s->start + s->replicas && !s->slots[ord - s->start]) {
            s->slots[ord - s->start] = pod;
        } else {
            json_t *c = json_copy(pod);
            json_object_set_new(c, "_ord", json_integer(ord));
            json_array_append_new(cond, c);
        }
    }
    size_t n = json_array_size(cond);
    json_t **v = malloc((n + 1) * sizeof *v);
    s->condemned = json_array();
    if (!v || !s->condemned) {
        free(v);
        json_decref(cond);
        return CTRL_ERR_NOMEM;
    }
    for (i = 0; i < n; i++)
        v[i] = json_array_get(cond, i);
    qsort(v, n, sizeof *v, cmp_ordinal_desc);
    for (i = 0; i < n; i++) {
        json_object_del(v[i], "_ord");
        json_array_append(s->condemned, v[i]);
    }
    free(v);
    json_decref(cond);
    return 0;
}

static void write_counts(sts_sync *s, json_t *upd, const json_t *pods)
{
    int64_t replicas = 0, ready = 0, avail = 0, current = 0, updated = 0;
    const char *cur = ctrl_obj_name(s->cur_rev), *up = ctrl_obj_name(s->upd_rev);
    size_t i;
    json_t *pod;
    json_array_foreach(pods, i, pod)
    {
        if (ordinal_of(s->name, ctrl_obj_name(pod)) < 0)
            continue;
        replicas++;
        if (running_ready(pod) && !terminating(pod)) {
            ready++;
            avail += kc__pod_available(pod, s->min_ready, s->wall);
        }
        current += !strcmp(revision_of(pod), cur);
        updated += !strcmp(revision_of(pod), up);
    }
    kc__wl_set_int(upd, "replicas", replicas, false);
    kc__wl_set_int(upd, "readyReplicas", ready, true);
    kc__wl_set_int(upd, "availableReplicas", avail, false);
    kc__wl_set_int(upd, "currentReplicas", current, true);
    kc__wl_set_int(upd, "updatedReplicas", updated, true);
    ctrl_obj_set(upd, "status.currentRevision", json_string(cur));
    ctrl_obj_set(upd, "status.updateRevision", json_string(up));
    /* completeRollingUpdate: every pod updated and ready. */
    if (s->rolling && updated == replicas && ready == replicas) {
        kc__wl_set_int(upd, "currentReplicas", updated, true);
        ctrl_obj_set(upd, "status.currentRevision", json_string(up));
    }
}

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    sts_sync s = {.ctx = ctx, .wl = user};
    kc__wl_key(req->ns, req->name, s.key, sizeof s.key);
    json_t *pods = NULL, *revisions = NULL, *upd = NULL;
    ctrl_result res = ctrl_done();
    int rc = ctrl_client_get(ctrl_ctx_client(ctx), "apps/v1", "StatefulSet", req->ns, req->name,
                             &s.set, NULL);
    if (ctrl_err_is_not_found(rc)) {
        kc__expect_delete(s.wl->expect, s.key);
        return ctrl_done();
    }
    if (rc < 0)
        return ctrl_err(rc);
    if (ctrl_obj_deleting(s.set))
        goto out; /* the garbage collector takes the pods */
    json_object_set_new(s.set, "apiVersion", json_string("apps/v1"));
    json_object_set_new(s.set, "kind", json_string("StatefulSet"));
    s.name = ctrl_obj_name(s.set);
    s.ns = ctrl_obj_namespace(s.set);
    s.wall = kc__wl_wall(ctx);
    s.start = ctrl_obj_get_int(s.set, "spec.ordinals.start", 0);
    s.replicas = ctrl_obj_get_int(s.set, "spec.replicas", 1);
    s.min_ready = ctrl_obj_get_int(s.set, "spec.minReadySeconds", 0);
    const char *pmp = ctrl_obj_get_string(s.set, "spec.podManagementPolicy");
    s.monotonic = !pmp || strcmp(pmp, "Parallel");
    const char *ust = ctrl_obj_get_string(s.set, "spec.updateStrategy.type");
    s.rolling = !ust || !strcmp(ust, "RollingUpdate");
    s.partition = ctrl_obj_get_int(s.set, "spec.updateStrategy.rollingUpdate.partition", 0);
    if (s.replicas < 0 || s.replicas > MAX_REPLICAS || s.start < 0) {
        res = ctrl_terminal(CTRL_ERR_ARG); /* the API server refuses these */
        goto out;
    }
    int64_t collision = ctrl_obj_get_int(s.set, "status.collisionCount", 0);
    json_t *update_rev = NULL;
    if ((rc = kc__rev_sync(ctx, s.set, &collision, &revisions, &update_rev)) < 0) {
        res = ctrl_err(rc);
        goto out;
    }
    s.upd_rev = update_rev;
    const json_t *cur =
        kc__rev_find(revisions, ctrl_obj_get_string(s.set, "status.currentRevision"));
    s.cur_rev = (json_t *)(cur ? cur : update_rev);

    bool satisfied = kc__expect_satisfied(s.wl->expect, s.key, ctrl_ctx_now(ctx));
    s.creates = json_array();
    s.deletes = json_array();
    if (!s.creates || !s.deletes || (rc = kc__wl_pods(ctx, ctrl_obj_uid(s.set), &pods)) < 0 ||
        (rc = classify(&s, pods)) < 0) {
        res = ctrl_err(rc < 0 ? rc : CTRL_ERR_NOMEM);
        goto out;
    }
    int act_rc = 0;
    if (satisfied) {
        plan(&s);
        act_rc = act(&s);
    }
    upd = json_deep_copy(s.set);
    write_counts(&s, upd, pods);
    kc__wl_set_int(upd, "observedGeneration", ctrl_obj_generation(s.set), false);
    kc__wl_set_int(upd, "collisionCount", collision, false);
    json_t *orig = json_deep_copy(s.set);
    rc = kc__wl_write_status(ctx, orig, upd, NULL);
    json_decref(orig);
    if (rc < 0 && !ctrl_err_is_not_found(rc)) {
        res = ctrl_err(rc);
        goto out;
    }
    /* Old revisions beyond the history limit, unless a pod still uses one. */
    json_t *live = json_object();
    json_object_set_new(live, ctrl_obj_name(s.cur_rev), json_true());
    json_object_set_new(live, ctrl_obj_name(s.upd_rev), json_true());
    size_t i;
    json_t *pod;
    json_array_foreach(pods, i, pod) json_object_set_new(live, revision_of(pod), json_true());
    rc = kc__rev_truncate(ctx, revisions, live,
                          ctrl_obj_get_int(s.set, "spec.revisionHistoryLimit", 10));
    json_decref(live);
    if (act_rc < 0)
        res = ctrl_err(act_rc);
    else if (rc < 0)
        res = ctrl_err(rc);
    else if (!satisfied)
        res = ctrl_requeue_after(EXPECT_RECHECK);
    else if (s.wait_ns > 0)
        res = kc__wl_after(ctx, s.wall, s.wait_ns);
out:
    free(s.slots);
    json_decref(s.condemned);
    json_decref(s.creates);
    json_decref(s.deletes);
    json_decref(s.upd_rev);
    json_decref(revisions);
    json_decref(upd);
    json_decref(pods);
    json_decref(s.set);
    return res;
}

int kc__statefulset_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen)
{
    kc_wl *wl = NULL;
    int rc = kc__wl_index(mgr, "apps/v1", "ControllerRevision");
    if (rc == 0)
        rc = kc__wl_setup(mgr, cfg, "apps", "StatefulSet", &wl);
    if (rc < 0) {
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "statefulset: %s", ctrl_strerror(rc));
        return rc;
    }
    char name[64];
    ctrl_builder *b = ctrl_builder_for(mgr, "apps/v1", "StatefulSet");
    ctrl_builder_owns(b, "v1", "Pod");
    ctrl_builder_owns(b, "apps/v1", "ControllerRevision");
    ctrl_builder_named(b, kc__controller_name("statefulset", name, sizeof name));
    ctrl_builder_with_user_free(b, kc__wl_free);
    rc = ctrl_builder_complete(b, reconcile, wl);
    if (rc < 0 && errbuf && errlen)
        snprintf(errbuf, errlen, "statefulset: %s", ctrl_strerror(rc));
    return rc;
}

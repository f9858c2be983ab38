/*
 * kubelet.c - the kubelet stand-in (the "kubelet" built-in): moves pods
 * bound to the configured nodes through their lives as the stage rules say
 * (stages.h), and finishes their graceful deletion.
 *
 * DESIGN
 * - One controller, "kc-kubelet", For Pod (only pods whose spec.nodeName is
 *   one of ours), with a watch of Nodes that requeues a node's pods when its
 *   readiness changes. WORKERS reconciles at once (one), never two for one
 *   pod.
 * - A pod's life is a function of clock time since the kubelet first saw it
 *   bound (t0), kept here per pod ("ns/name", checked against the uid):
 *     t0 .. t0+scheduledToRunning      Pending, containers ContainerCreating
 *     run .. run+readyAfter            Running, not Ready
 *     run+readyAfter ..                Running and Ready
 *     run+after (Succeed, Fail)        the containers exit: the pod ends
 *                                      (restartPolicy Never, or OnFailure
 *                                      and exit 0) or they restart after a
 *                                      back-off (10 s doubling to 300 s,
 *                                      CrashLoopBackOff), a new run
 *   Each reconcile computes the status for now, writes it when it differs,
 *   and requeues (ctrl_requeue_after) for the next transition. Wall-clock
 *   strings written to the object (startTime, startedAt) are taken once,
 *   when the transition happens, and kept in the pod's entry, so that every
 *   later pass computes the same status and writes nothing.
 * - A manager that starts over sees pods already Running: their clock
 *   starts again from that moment (times are this kubelet's, as a restarted
 *   kubelet's are).
 * - Pod IPs: the lowest free address of the node's /24 (.2 to .254), taken
 *   from an in-memory table per node, seeded from the cache (the podIPs of
 *   the node's pods) the first time the node is used; released when the pod
 *   ends or goes. mu protects pods and ips; it is a leaf lock.
 * - A node whose Ready condition is Unknown (or that is marked NotReady)
 *   freezes its pods, as a dead kubelet would: nothing changes on it,
 *   deletions included, until it comes back.
 * - Graceful deletion: a pod with a deletionTimestamp is deleted (grace 0,
 *   uid precondition) once min(deletionGracePeriodSeconds, the rule's
 *   terminationDelay) of clock time has passed since the kubelet saw it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrl/conditions.h"
#include "ctrl/object.h"
#include "nodes.h"
#include "podutil.h"
#include "stages.h"

/* One worker: pods are started in the order they were bound, so that their
 * IPs follow from that order, also under real time. */
#define WORKERS 1
#define BACKOFF_BASE (10 * CTRL_SECOND)
#define BACKOFF_MAX (300 * CTRL_SECOND)
#define FIRST_HOST 2
#define LAST_HOST 254

typedef struct kubelet_state {
    kc_config *cfg;
    pthread_mutex_t mu;
    json_t *pods; /* "ns/name" -> entry (see pass) */
    json_t *ips;  /* node -> {"10.244.0.2": "ns/name"} */
    ctrl_informer *pod_inf;
} kubelet_state;

/* ---- small helpers ---- */

static const char *str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static int64_t ival(const json_t *o, const char *k, int64_t def)
{
    const json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? json_integer_value(v) : def;
}

static void hex_of(const char *text, int n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    uint32_t h = 0;
    size_t tl = strlen(text);
    for (int i = 0; i < n; i += 8) {
        h = kc__fnv32(text, tl, h ^ ((uint32_t)(i + 7) * 2246822519u));
        for (int k = 0; k < 8 && i + k < n; k++) /* "%08x", cut at n */
            out[i + k] = digits[(h >> (28 - 4 * k)) & 15];
    }
    out[n] = 0;
}

static bool pod_terminal(const json_t *pod)
{
    const char *p = kc__pod_phase(pod);
    return !strcmp(p, "Succeeded") || !strcmp(p, "Failed");
}

/* ---- IPs (mu held) ---- */

static json_t *node_ips(kubelet_state *s, ctrl_informer *inf, const char *node)
{
    json_t *m = json_object_get(s->ips, node);
    if (m)
        return m;
    m = json_object();
    if (!m || json_object_set_new(s->ips, node, m) < 0)
        return NULL;
    json_t *pods = NULL;
    if (ctrl_informer_by_index(inf, KC_POD_NODE_INDEX, node, &pods) == 0) {
        size_t i;
        json_t *p;
        json_array_foreach(pods, i, p)
        {
            const char *ip = ctrl_obj_get_string(p, "status.podIP");
            char key[512];
            snprintf(key, sizeof key, "%s/%s", ctrl_obj_namespace(p), ctrl_obj_name(p));
            if (ip && !pod_terminal(p) && !ctrl_obj_get_bool(p, "spec.hostNetwork", false))
                json_object_set_new(m, ip, json_string(key));
        }
    }
    json_decref(pods);
    return m;
}

static void release_ip(kubelet_state *s, const char *key, const json_t *entry)
{
    const char *ip = json_string_value(json_object_get(entry, "ip"));
    const char *node = json_string_value(json_object_get(entry, "node"));
    json_t *m = node ? json_object_get(s->ips, node) : NULL;
    if (ip && m && !strcmp(str(m, ip), key))
        json_object_del(m, ip);
}

static void forget(kubelet_state *s, const char *key)
{
    pthread_mutex_lock(&s->mu);
    json_t *e = json_object_get(s->pods, key);
    if (e)
        release_ip(s, key, e);
    json_object_del(s->pods, key);
    pthread_mutex_unlock(&s->mu);
}

/* The pod's IP: kept, adopted from its status, or the lowest free one. */
static int pod_ip(kubelet_state *s, ctrl_informer *inf, const char *key, json_t *entry,
                  const json_t *pod, int idx, char *out, size_t len)
{
    const char *node = s->cfg->nodes[idx].name;
    int rc = 0;
    pthread_mutex_lock(&s->mu);
    json_t *m = node_ips(s, inf, node);
    const char *have = json_string_value(json_object_get(entry, "ip"));
    const char *st = ctrl_obj_get_string(pod, "status.podIP");
    if (!m) {
        rc = CTRL_ERR_NOMEM;
    } else if (have) {
        snprintf(out, len, "%s", have);
    } else if (st && (!json_object_get(m, st) || !strcmp(str(m, st), key))) {
        snprintf(out, len, "%s", st);
    } else {
        rc = CTRL_ERR_INTERNAL; /* the node's addresses are all taken */
        for (uint32_t h = FIRST_HOST; h <= LAST_HOST; h++) {
            kc__ipv4_string(s->cfg->nodes[idx].pod_net | h, out, len);
            if (!json_object_get(m, out)) {
                rc = 0;
                break;
            }
        }
    }
    if (rc == 0) {
        json_object_set_new(m, out, json_string(key));
        json_object_set_new(entry, "ip", json_string(out));
        json_object_set_new(entry, "node", json_string(node));
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

/* ---- the status ---- */

typedef enum cstate { C_CREATING, C_RUNNING, C_BACKOFF, C_EXITED } cstate;

/* A pod's life at one moment. The strings are borrowed from its entry. */
typedef struct life {
    cstate state;
    bool ready;
    int64_t restarts;                 /* restartCount */
    int exit_code;                    /* C_BACKOFF, C_EXITED: the current run's */
    const char *start;                /* startTime */
    const char *run_at, *exit_at;     /* the current run */
    const char *last_run, *last_exit; /* the run before (restarts > 0) */
    int last_code;
    int64_t backoff_ns; /* C_BACKOFF */
    const char *phase;  /* Pending, Running, Succeeded, Failed */
} life;

static void container_id(const json_t *pod, const char *name, const char *kind, int64_t run,
                         char *out, size_t len)
{
    char buf[600], hex[72];
    snprintf(buf, sizeof buf, "%s/%s/%s/%lld", str(json_object_get(pod, "metadata"), "uid"), name,
             kind, (long long)run);
    hex_of(buf, 64, hex);
    snprintf(out, len, "containerd://%s", hex);
}

static json_t *terminated(int code, const char *started, const char *finished, const char *cid)
{
    return json_pack("{s:{s:i, s:s, s:s, s:s, s:s}}", "terminated", "exitCode", code, "reason",
                     code ? "Error" : "Completed", "startedAt", started, "finishedAt", finished,
                     "containerID", cid);
}

static json_t *container_status(const json_t *pod, const json_t *c, const life *l, bool init)
{
    const char *name = str(c, "name"), *image = str(c, "image");
    char cid[128], last_cid[128], buf[600], imageid[700], hex[72], repo[512];
    snprintf(repo, sizeof repo, "%s", image);
    char *colon = strrchr(repo, ':');
    if (colon && !strchr(colon, '/'))
        *colon = 0;
    hex_of(image, 64, hex);
    snprintf(imageid, sizeof imageid, "%s%s@sha256:%s",
             strchr(repo, '/') ? "" : "docker.io/library/", repo, hex);
    json_t *cs = json_pack("{s:s, s:s, s:s, s:b, s:b, s:I, s:{}}", "name", name, "image", image,
                           "imageID", imageid, "ready", 0, "started", 0, "restartCount",
                           (json_int_t)(init ? 0 : l->restarts), "lastState");
    if (!cs)
        return NULL;
    json_t *state = NULL;
    if (init) {
        container_id(pod, name, "init", 0, cid, sizeof cid);
        if (l->state == C_CREATING) {
            state = json_pack("{s:{s:s}}", "waiting", "reason", "PodInitializing");
        } else {
            state = terminated(0, l->start, l->start, cid);
            json_object_set_new(cs, "containerID", json_string(cid));
        }
        json_object_set_new(cs, "state", state);
        return cs;
    }
    container_id(pod, name, "", l->restarts, cid, sizeof cid);
    container_id(pod, name, "", l->restarts - 1, last_cid, sizeof last_cid);
    switch (l->state) {
    case C_CREATING:
        state = json_pack("{s:{s:s}}", "waiting", "reason", "ContainerCreating");
        break;
    case C_RUNNING:
        state = json_pack("{s:{s:s}}", "running", "startedAt", l->run_at);
        json_object_set_new(cs, "ready", json_boolean(l->ready));
        json_object_set_new(cs, "started", json_true());
        break;
    case C_BACKOFF:
        snprintf(buf, sizeof buf, "back-off %llds restarting failed container=%s pod=%s_%s(%s)",
                 (long long)(l->backoff_ns / CTRL_SECOND), name, ctrl_obj_name(pod),
                 ctrl_obj_namespace(pod), ctrl_obj_uid(pod) ? ctrl_obj_uid(pod) : "");
        state =
            json_pack("{s:{s:s, s:s}}", "waiting", "reason", "CrashLoopBackOff", "message", buf);
        json_object_set_new(cs, "lastState", terminated(l->exit_code, l->run_at, l->exit_at, cid));
        break;
    case C_EXITED:
        state = terminated(l->exit_code, l->run_at, l->exit_at, cid);
        break;
    }
    if (l->state != C_CREATING)
        json_object_set_new(cs, "containerID", json_string(cid));
    if (l->state != C_BACKOFF && l->restarts > 0 && l->last_run && l->last_exit)
        json_object_set_new(cs, "lastState",
                            terminated(l->last_code, l->last_run, l->last_exit, last_cid));
    json_object_set_new(cs, "state", state);
    return cs;
}

static void set_cond(json_t *conds, const char *type, bool ok, const char *reason, const char *msg,
                     int64_t wall)
{
    ctrl_condition c = {type, ok ? "True" : "False", reason, msg, 0, NULL};
    ctrl_condition_set(conds, &c, wall);
    json_t *have = ctrl_condition_find(conds, type);
    json_object_set_new(have, "lastProbeTime", json_null());
    if (!reason)
        json_object_del(have, "reason");
    if (!msg)
        json_object_del(have, "message");
}

/* The kubelet's order (kubectl describe shows them so); others after. */
static void order_conditions(json_t *conds)
{
    static const char *const order[] = {"PodReadyToStartContainers", "Initialized", "Ready",
                                        "ContainersReady", "PodScheduled"};
    json_t *sorted = json_array();
    if (!sorted)
        return;
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        json_t *c = ctrl_condition_find(conds, order[k]);
        if (c)
            json_array_append(sorted, c);
    }
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c)
    {
        bool known = false;
        for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
            known |= !strcmp(str(c, "type"), order[k]);
        if (!known)
            json_array_append(sorted, c);
    }
    json_array_clear(conds);
    json_array_extend(conds, sorted);
    json_decref(sorted);
}

/* The pod's status for life l, written into copy (the pod, ours to change). */
static void build_status(json_t *copy, const life *l, const char *host_ip, const char *ip,
                         int64_t wall)
{
    json_t *st = json_object_get(copy, "status");
    if (!json_is_object(st))
        json_object_set_new(copy, "status", st = json_object());
    json_t *conds = ctrl_obj_conditions(copy);
    json_t *cstats = json_array(), *istats = json_array();
    char unready[2048] = "";
    size_t used = 0, i;
    json_t *c;
    json_array_foreach(ctrl_obj_get(copy, "spec.containers"), i, c)
    {
        json_array_append_new(cstats, container_status(copy, c, l, false));
        int w = snprintf(unready + used, sizeof unready - used, "%s%s", used ? " " : "",
                         str(c, "name"));
        if (w > 0 && (size_t)w < sizeof unready - used)
            used += (size_t)w;
    }
    json_array_foreach(ctrl_obj_get(copy, "spec.initContainers"), i, c)
    {
        json_array_append_new(istats, container_status(copy, c, l, true));
    }
    char msg[2100];
    snprintf(msg, sizeof msg, "containers with unready status: [%s]", unready);
    bool done = !strcmp(l->phase, "Succeeded") || !strcmp(l->phase, "Failed");
    const char *end_reason = !strcmp(l->phase, "Succeeded") ? "PodCompleted" : "PodFailed";
    bool ready = l->state == C_RUNNING && l->ready;
    if (!ctrl_condition_find(conds, "PodScheduled")) /* bound by hand, past the scheduler */
        set_cond(conds, "PodScheduled", true, NULL, NULL, wall);
    set_cond(conds, "PodReadyToStartContainers", l->state != C_CREATING && !done, NULL, NULL, wall);
    set_cond(conds, "Initialized", l->state != C_CREATING || json_array_size(istats) == 0,
             done ? end_reason
                  : (l->state == C_CREATING && json_array_size(istats) ? "ContainersNotInitialized"
                                                                       : NULL),
             NULL, wall);
    set_cond(conds, "Ready", ready,
             done    ? end_reason
             : ready ? NULL
                     : "ContainersNotReady",
             done || ready ? NULL : msg, wall);
    set_cond(conds, "ContainersReady", ready,
             done    ? end_reason
             : ready ? NULL
                     : "ContainersNotReady",
             done || ready ? NULL : msg, wall);
    order_conditions(conds);
    json_object_set_new(st, "phase", json_string(l->phase));
    json_object_set_new(st, "hostIP", json_string(host_ip));
    json_object_set_new(st, "hostIPs", json_pack("[{s:s}]", "ip", host_ip));
    if (ip) {
        json_object_set_new(st, "podIP", json_string(ip));
        json_object_set_new(st, "podIPs", json_pack("[{s:s}]", "ip", ip));
    }
    json_object_set_new(st, "startTime", json_string(l->start));
    json_object_set_new(st, "containerStatuses", cstats);
    if (json_array_size(istats))
        json_object_set_new(st, "initContainerStatuses", istats);
    else
        json_decref(istats);
}

/* ---- the reconcile ---- */

static void stamp(ctrl_ctx *ctx, int64_t mono, char *out, size_t len)
{
    /* Wall time of the clock instant mono (at or before now). */
    int64_t now = ctrl_ctx_now(ctx), wall = ctrl_clock_wall_ns(ctrl_ctx_clock(ctx));
    kc__rfc3339(wall - (now - mono), out, len);
}

static const char *stamp_once(ctrl_ctx *ctx, json_t *e, const char *k, int64_t mono)
{
    if (!json_string_value(json_object_get(e, k))) {
        char buf[40];
        stamp(ctx, mono, buf, sizeof buf);
        json_object_set_new(e, k, json_string(buf));
    }
    return json_string_value(json_object_get(e, k));
}

/*
 * Work out the pod's life at now from its entry e (advancing e through any
 * restarts that are due), and when the next change is (INT64_MAX: none).
 * Entry fields: t0 (first seen bound), start (startTime), run and runAt
 * (the current run's start), exitAt (its end), restarts, and the run
 * before: lastRun, lastExit, lastCode.
 */
static void live(ctrl_ctx *ctx, json_t *e, const kc_stage_rule *r, const json_t *pod, life *l,
                 int64_t *next)
{
    int64_t now = ctrl_ctx_now(ctx);
    int64_t t0 = ival(e, "t0", now);
    memset(l, 0, sizeof *l);
    *next = INT64_MAX;
    l->start = stamp_once(ctx, e, "start", t0);
    l->phase = "Pending";
    int64_t run = ival(e, "run", t0 + r->scheduled_to_running_ns);
    if (now < run) {
        l->state = C_CREATING;
        *next = run;
        return;
    }
    const char *policy = ctrl_obj_get_string(pod, "spec.restartPolicy");
    if (!policy)
        policy = "Always";
    for (;;) {
        l->restarts = ival(e, "restarts", 0);
        l->run_at = stamp_once(ctx, e, "runAt", run);
        l->last_run = json_string_value(json_object_get(e, "lastRun"));
        l->last_exit = json_string_value(json_object_get(e, "lastExit"));
        l->last_code = (int)ival(e, "lastCode", 0);
        l->phase = "Running";
        if (r->outcome == KC_OUTCOME_RUN || now < run + r->after_ns) {
            l->state = C_RUNNING;
            l->ready = now >= run + r->ready_after_ns;
            if (!l->ready)
                *next = run + r->ready_after_ns;
            if (r->outcome != KC_OUTCOME_RUN && run + r->after_ns < *next)
                *next = run + r->after_ns;
            return;
        }
        /* The containers exited at run + after. */
        int64_t exit_t = run + r->after_ns;
        l->exit_code = r->exit_code;
        l->exit_at = stamp_once(ctx, e, "exitAt", exit_t);
        if (!strcmp(policy, "Never") || (!strcmp(policy, "OnFailure") && !r->exit_code)) {
            l->state = C_EXITED;
            l->phase = r->exit_code ? "Failed" : "Succeeded";
            return;
        }
        int64_t backoff = BACKOFF_BASE;
        for (int64_t k = 0; k < l->restarts && backoff < BACKOFF_MAX; k++)
            backoff *= 2;
        if (backoff > BACKOFF_MAX)
            backoff = BACKOFF_MAX;
        if (now < exit_t + backoff) {
            l->state = C_BACKOFF;
            l->backoff_ns = backoff;
            *next = exit_t + backoff;
            return;
        }
        /* Restarted at exit_t + backoff: a new run. */
        json_object_set(e, "lastRun", json_object_get(e, "runAt"));
        json_object_set(e, "lastExit", json_object_get(e, "exitAt"));
        json_object_set_new(e, "lastCode", json_integer(r->exit_code));
        json_object_del(e, "runAt");
        json_object_del(e, "exitAt");
        json_object_set_new(e, "restarts", json_integer(l->restarts + 1));
        run = exit_t + backoff;
        json_object_set_new(e, "run", json_integer(run));
    }
}

/* A pod being deleted: delete it for good once its containers stopped. */
static ctrl_result finish_deletion(ctrl_ctx *ctx, kubelet_state *s, const char *key,
                                   const json_t *pod, json_t *e)
{
    int64_t now = ctrl_ctx_now(ctx);
    const kc_stage_rule *r = kc__stages_match(s->cfg->st, pod);
    int64_t grace = ctrl_obj_get_int(pod, "metadata.deletionGracePeriodSeconds", 0) * CTRL_SECOND;
    int64_t delay = r->termination_ns < grace ? r->termination_ns : grace;
    pthread_mutex_lock(&s->mu);
    int64_t seen = ival(e, "deleting", now);
    json_object_set_new(e, "deleting", json_integer(seen));
    pthread_mutex_unlock(&s->mu);
    if (now < seen + delay)
        return ctrl_requeue_after(seen + delay - now);
    ctrl_delete_options o = {
        .has_grace_period = true, .grace_period_seconds = 0, .precondition_uid = ctrl_obj_uid(pod)};
    int rc = ctrl_client_delete(ctrl_ctx_client(ctx), "v1", "Pod", ctrl_obj_namespace(pod),
                                ctrl_obj_name(pod), &o, NULL, NULL);
    if (rc < 0 && !ctrl_err_is_not_found(rc) && !ctrl_err_is_conflict(rc))
        return ctrl_err(rc);
    forget(s, key);
    return ctrl_done();
}

/* The node's kubelet is gone: no node, marked NotReady, or Ready Unknown
 * (Ready False is a kubelet that is there but unwell: it goes on). */
static bool node_down(const json_t *node)
{
    const char *ann = ctrl_obj_annotation(node, KC_NOT_READY_ANNOTATION);
    return !node || (ann && !strcmp(ann, "true")) ||
           !strcmp(kc__node_ready_status(node), "Unknown");
}

static ctrl_result reconcile(ctrl_ctx *ctx, const ctrl_request *req, void *user)
{
    kubelet_state *s = user;
    ctrl_client *c = ctrl_ctx_client(ctx);
    char key[512];
    snprintf(key, sizeof key, "%s/%s", req->ns, req->name);
    json_t *pod = NULL, *node = NULL, *copy = NULL;
    ctrl_result res = ctrl_done();
    int rc = ctrl_client_get(c, "v1", "Pod", req->ns, req->name, &pod, NULL);
    if (ctrl_err_is_not_found(rc)) {
        forget(s, key);
        return ctrl_done();
    }
    if (rc < 0)
        return ctrl_err(rc);
    const char *nn = ctrl_obj_get_string(pod, "spec.nodeName");
    int idx = kc__node_index(s->cfg, nn);
    if (idx < 0)
        goto out;
    rc = ctrl_client_get_shared(c, "v1", "Node", "", nn, &node, NULL); /* read only */
    if (rc < 0 && !ctrl_err_is_not_found(rc)) {
        res = ctrl_err(rc);
        goto out;
    }
    if (node_down(node))
        goto out; /* a dead kubelet does nothing; the node's return requeues */

    /* The pod's entry: new, or another pod's of the same name. */
    const char *uid = ctrl_obj_uid(pod);
    pthread_mutex_lock(&s->mu);
    json_t *e = json_object_get(s->pods, key);
    if (e && strcmp(str(e, "uid"), uid ? uid : "")) {
        release_ip(s, key, e);
        json_object_del(s->pods, key);
        e = NULL;
    }
    if (!e) {
        int64_t now = ctrl_ctx_now(ctx);
        e = json_pack("{s:s, s:I}", "uid", uid ? uid : "", "t0", (json_int_t)now);
        /* Already running (a kubelet that starts over): running from now. */
        if (e && !strcmp(kc__pod_phase(pod), "Running"))
            json_object_set_new(e, "run", json_integer(now));
        if (e && !strcmp(kc__pod_phase(pod), "Running") &&
            ctrl_obj_get_string(pod, "status.startTime"))
            json_object_set_new(e, "start",
                                json_string(ctrl_obj_get_string(pod, "status.startTime")));
        if (!e || json_object_set_new(s->pods, key, e) < 0) {
            pthread_mutex_unlock(&s->mu);
            res = ctrl_err(CTRL_ERR_NOMEM);
            goto out;
        }
    }
    json_incref(e);
    pthread_mutex_unlock(&s->mu);

    if (ctrl_obj_deleting(pod)) {
        res = finish_deletion(ctx, s, key, pod, e);
        json_decref(e);
        goto out;
    }
    if (pod_terminal(pod)) {
        pthread_mutex_lock(&s->mu);
        release_ip(s, key, e);
        pthread_mutex_unlock(&s->mu);
        json_decref(e);
        goto out;
    }
    const kc_stage_rule *r = kc__stages_match(s->cfg->st, pod);
    life l;
    int64_t next;
    pthread_mutex_lock(&s->mu);
    live(ctx, e, r, pod, &l, &next);
    /* l points into e: keep e alive and unchanged until the status is built. */
    pthread_mutex_unlock(&s->mu);
    /* On a node that is not Ready (False: the kubelet is there but unwell)
     * no pod is Ready, as the node lifecycle controller also says. */
    if (!kc__node_ready(node))
        l.ready = false;

    char host_ip[20], ip[20];
    kc__node_internal_ip((size_t)idx, host_ip, sizeof host_ip);
    const char *pip = NULL;
    if (l.state != C_CREATING) {
        if (ctrl_obj_get_bool(pod, "spec.hostNetwork", false)) {
            pip = host_ip;
        } else {
            ctrl_informer *inf = NULL;
            rc = kc__pod_node_index(ctrl_ctx_cache(ctx), &inf);
            if (rc == 0)
                rc = pod_ip(s, inf, key, e, pod, idx, ip, sizeof ip);
            if (rc < 0) {
                json_decref(e);
                res = ctrl_err(rc);
                goto out;
            }
            pip = ip;
        }
    }
    /* The pod read is ours (a cache read unpacks a copy): the new status is
     * built in it, against a copy of the old one. */
    json_t *had = json_object_get(pod, "status");
    if (had && !(copy = json_deep_copy(had))) {
        json_decref(e);
        res = ctrl_err(CTRL_ERR_NOMEM);
        goto out;
    }
    pthread_mutex_lock(&s->mu);
    build_status(pod, &l, host_ip, pip, ctrl_clock_wall_ns(ctrl_ctx_clock(ctx)));
    pthread_mutex_unlock(&s->mu);
    bool ended = !strcmp(l.phase, "Succeeded") || !strcmp(l.phase, "Failed");
    if (!json_equal(json_object_get(pod, "status"), copy)) {
        rc = ctrl_client_update_status(c, pod, NULL, NULL, NULL);
        if (rc < 0) {
            json_decref(e);
            res = ctrl_err(rc);
            goto out;
        }
    }
    if (ended) {
        pthread_mutex_lock(&s->mu);
        release_ip(s, key, e);
        pthread_mutex_unlock(&s->mu);
    }
    json_decref(e);
    if (next != INT64_MAX)
        res = ctrl_requeue_after(next - ctrl_ctx_now(ctx) > 0 ? next - ctrl_ctx_now(ctx) : 1);
out:
    json_decref(copy);
    json_decref(node);
    json_decref(pod);
    return res;
}

/* ---- predicates, maps, setup ---- */

static bool on_our_node(const json_t *pod, void *user)
{
    kubelet_state *s = user;
    return kc__node_index(s->cfg, ctrl_obj_get_string(pod, "spec.nodeName")) >= 0;
}

static bool ours_update(const json_t *old_obj, const json_t *new_obj, void *user)
{
    (void)old_obj;
    return on_our_node(new_obj, user);
}

static bool down_changed(const json_t *old_obj, const json_t *new_obj, void *user)
{
    (void)user;
    return node_down(old_obj) != node_down(new_obj);
}

static json_t *pods_of_node(const json_t *node, void *user)
{
    kubelet_state *s = user;
    json_t *reqs = json_array(), *pods = NULL;
    const char *nn = ctrl_obj_name(node);
    if (reqs && nn && ctrl_informer_by_index(s->pod_inf, KC_POD_NODE_INDEX, nn, &pods) == 0) {
        size_t i;
        json_t *p;
        json_array_foreach(pods, i, p)
        {
            json_array_append_new(reqs, json_pack("{s:s, s:s}", "namespace", ctrl_obj_namespace(p),
                                                  "name", ctrl_obj_name(p)));
        }
    }
    json_decref(pods);
    return reqs;
}

static void state_free(void *user)
{
    kubelet_state *s = user;
    if (!s)
        return;
    kc_config_free(s->cfg);
    json_decref(s->pods);
    json_decref(s->ips);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

int kc__kubelet_setup(ctrl_manager *mgr, kc_config *cfg, char *errbuf, size_t errlen)
{
    kubelet_state *s = calloc(1, sizeof *s);
    if (!s)
        return KC_ERR_NOMEM;
    pthread_mutex_init(&s->mu, NULL);
    s->cfg = kc_config_ref(cfg);
    s->pods = json_object();
    s->ips = json_object();
    ctrl_informer *inf = NULL;
    int rc = (!s->pods || !s->ips) ? CTRL_ERR_NOMEM : 0;
    if (rc == 0)
        rc = kc__pod_node_index(ctrl_manager_cache(mgr), &inf);
    s->pod_inf = inf;
    if (rc < 0) {
        state_free(s);
        if (errbuf && errlen)
            snprintf(errbuf, errlen, "kubelet: %s", ctrl_strerror(rc));
        return rc;
    }
    char name[64];
    ctrl_predicate_funcs ours = {on_our_node, ours_update, on_our_node, s};
    ctrl_predicate_funcs nodes = {NULL, down_changed, NULL, NULL};
    ctrl_controller_options o = {.max_concurrent_reconciles = WORKERS};
    ctrl_builder *b = ctrl_builder_for(mgr, "v1", "Pod");
    ctrl_builder_named(b, kc__controller_name("kubelet", name, sizeof name));
    ctrl_builder_with_predicates(b, ctrl_pred_funcs(&ours));
    ctrl_builder_watches(b, "v1", "Node", ctrl_handler_from_map(pods_of_node, s),
                         ctrl_pred_funcs(&nodes));
    ctrl_builder_with_options(b, &o);
    ctrl_builder_with_user_free(b, state_free);
    rc = ctrl_builder_complete(b, reconcile, s);
    if (rc < 0 && errbuf && errlen)
        snprintf(errbuf, errlen, "kubelet: %s", ctrl_strerror(rc));
    return rc;
}

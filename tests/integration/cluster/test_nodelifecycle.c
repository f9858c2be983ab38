/*
 * test_nodelifecycle.c - the node lifecycle controller
 * (cluster/nodelifecycle.c) with the simulated nodes, the scheduler and the
 * kubelet against an in-process fakeapi: taints that follow readiness and
 * cordoning, pods marked not Ready on a node that is not, evicted after
 * their tolerationSeconds (and at once without a toleration), kept with a
 * toleration without limit or the default 300 s.
 *
 * Every wait is a poll with a 10 s bound; nothing asserts on timing.
 * Set KH_TEST_LOG=1 to see the cluster's log lines.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctrl/object.h"
#include "fakeapi/fakeapi.h"
#include "kc/cluster.h"

#define WAIT_NS (10 * 1000000000LL)

static fakeapi_server *api;
static kc_cluster *cl;

static void log_sink(const char *line, void *user)
{
    (void)user;
    if (getenv("KH_TEST_LOG"))
        fprintf(stderr, "%s\n", line);
}

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Start a cluster from a JSON cluster document (fakeapi first, if needed). */
static void start(const char *doc_text)
{
    if (!api)
        cr_assert_eq(fakeapi_start(&(fakeapi_options){.seed = 5}, &api), 0);
    json_error_t jerr;
    json_t *doc = json_loads(doc_text, 0, &jerr);
    cr_assert(doc, "doc: %s", jerr.text);
    kc_config *cfg = NULL;
    char err[512];
    cr_assert_eq(kc_config_new(doc, NULL, &cfg, err, sizeof err), 0, "config: %s", err);
    json_decref(doc);
    kc_cluster_options o = {.config = cfg, .log_sink = log_sink};
    int rc = kc_cluster_start(fakeapi_url(api), &o, &cl, err, sizeof err);
    kc_config_free(cfg);
    cr_assert_eq(rc, 0, "cluster: %s", err);
}

static void teardown(void)
{
    kc_cluster_stop(cl);
    cl = NULL;
    fakeapi_stop(api);
    api = NULL;
}

TestSuite(lifecycle, .fini = teardown);

static void apply(const char *text)
{
    fakeapi_error err = {0};
    int rc = fakeapi_apply(api, text, strlen(text), &err);
    cr_assert_eq(rc, 0, "apply: %s", err.message);
}

static json_t *get(const char *api_version, const char *kind, const char *ns, const char *name)
{
    json_t *o = NULL;
    if (fakeapi_get(api, api_version, kind, ns, name, &o, NULL) != 0)
        return NULL;
    return o;
}

static json_t *pod(const char *name)
{
    return get("v1", "Pod", "default", name);
}

static const char *cond_field(const json_t *obj, const char *type, const char *field)
{
    size_t i;
    json_t *c;
    json_array_foreach(ctrl_obj_get(obj, "status.conditions"), i, c)
    {
        if (!strcmp(json_string_value(json_object_get(c, "type")), type))
            return json_string_value(json_object_get(c, field));
    }
    return NULL;
}

static bool cond_is(const json_t *obj, const char *type, const char *status)
{
    const char *s = cond_field(obj, type, "status");
    return s && !strcmp(s, status);
}

/* Poll until pred(object) holds (the object is re-read each time); the
 * last state read, a new reference (the caller frees), or a failed
 * assertion naming what. */
typedef bool (*pred_fn)(const json_t *obj);
static json_t *wait_for(const char *api_version, const char *kind, const char *ns, const char *name,
                        pred_fn pred, const char *what)
{
    int64_t t0 = mono_ns();
    for (;;) {
        json_t *o = get(api_version, kind, ns, name);
        if (o && pred(o))
            return o;
        if (mono_ns() - t0 > WAIT_NS) {
            char *dump = o ? json_dumps(o, JSON_INDENT(1)) : NULL;
            cr_assert_fail("%s/%s: never %s; last: %s", kind, name, what, dump ? dump : "(none)");
        }
        json_decref(o);
        sleep_ms(20);
    }
}

static bool pod_running_ready(const json_t *p)
{
    const char *ph = ctrl_obj_get_string(p, "status.phase");
    return ph && !strcmp(ph, "Running") && cond_is(p, "Ready", "True");
}

static bool node_ready(const json_t *n)
{
    return cond_is(n, "Ready", "True");
}

static void make_pod(const char *name, const char *extra_spec)
{
    char text[4096];
    snprintf(text, sizeof text,
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"default\",\"labels\":{\"app\":\"t\"}},\"spec\":{\"containers\":"
             "[{\"name\":\"c\",\"image\":\"nginx:1.27\"}]%s%s}}",
             name, extra_spec && *extra_spec ? "," : "", extra_spec ? extra_spec : "");
    apply(text);
}

static bool has_taint(const json_t *node, const char *key, const char *effect)
{
    size_t i;
    json_t *t;
    json_array_foreach(ctrl_obj_get(node, "spec.taints"), i, t)
    {
        if (!strcmp(json_string_value(json_object_get(t, "key")), key) &&
            !strcmp(json_string_value(json_object_get(t, "effect")), effect))
            return true;
    }
    return false;
}

static bool unreachable_tainted(const json_t *n)
{
    return has_taint(n, "node.kubernetes.io/unreachable", "NoSchedule") &&
           has_taint(n, "node.kubernetes.io/unreachable", "NoExecute");
}

static bool untainted(const json_t *n)
{
    return json_array_size(ctrl_obj_get(n, "spec.taints")) == 0 && cond_is(n, "Ready", "True");
}

static bool cordon_tainted(const json_t *n)
{
    return has_taint(n, "node.kubernetes.io/unschedulable", "NoSchedule");
}

static void set_not_ready(const char *node, bool on)
{
    char text[512];
    snprintf(text, sizeof text,
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\","
             "\"annotations\":{\"kube-harness.io/not-ready\":\"%s\"}}}",
             node, on ? "true" : "false");
    apply(text);
}

Test(lifecycle, taints_follow_readiness_and_cordon)
{
    start("{\"controllers\":[\"nodes\",\"nodelifecycle\"],\"nodes\":2}");
    json_decref(wait_for("v1", "Node", "", "node-1", node_ready, "Ready"));
    set_not_ready("node-1", true);
    json_t *n = wait_for("v1", "Node", "", "node-1", unreachable_tainted, "tainted unreachable");
    size_t i;
    json_t *t;
    json_array_foreach(ctrl_obj_get(n, "spec.taints"), i, t)
    {
        const char *eff = json_string_value(json_object_get(t, "effect"));
        cr_expect_eq(json_object_get(t, "timeAdded") != NULL, !strcmp(eff, "NoExecute"),
                     "timeAdded on NoExecute taints only");
    }
    cr_expect(!has_taint(n, "node.kubernetes.io/not-ready", "NoSchedule"));
    json_decref(n);
    set_not_ready("node-1", false);
    json_decref(wait_for("v1", "Node", "", "node-1", untainted, "untainted"));

    /* kubectl cordon / uncordon. */
    apply("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-0\"},"
          "\"spec\":{\"unschedulable\":true}}");
    json_decref(wait_for("v1", "Node", "", "node-0", cordon_tainted, "cordoned"));
    apply("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-0\"},"
          "\"spec\":{\"unschedulable\":false}}");
    json_decref(wait_for("v1", "Node", "", "node-0", untainted, "uncordoned"));
}

static bool deleting(const json_t *p)
{
    return ctrl_obj_get_string(p, "metadata.deletionTimestamp") != NULL;
}

static bool not_ready(const json_t *p)
{
    return cond_is(p, "Ready", "False");
}

static bool gone_pod(const char *name)
{
    json_t *p = pod(name);
    json_decref(p);
    return p == NULL;
}

#define ON_NODE_1 "\"nodeSelector\":{\"kubernetes.io/hostname\":\"node-1\"}"

Test(lifecycle, not_ready_node_evicts_after_toleration)
{
    start("{\"controllers\":[\"nodes\",\"scheduler\",\"kubelet\",\"nodelifecycle\"],\"nodes\":2}");
    make_pod("short", ON_NODE_1 ",\"tolerations\":[{\"key\":\"node.kubernetes.io/unreachable\","
                                "\"operator\":\"Exists\",\"effect\":\"NoExecute\","
                                "\"tolerationSeconds\":1}]");
    make_pod("forever", ON_NODE_1 ",\"tolerations\":[{\"key\":\"node.kubernetes.io/unreachable\","
                                  "\"operator\":\"Exists\",\"effect\":\"NoExecute\"}]");
    make_pod("default", ON_NODE_1);
    make_pod("elsewhere", "\"nodeSelector\":{\"kubernetes.io/hostname\":\"node-0\"}");
    const char *names[] = {"short", "forever", "default", "elsewhere"};
    for (int i = 0; i < 4; i++)
        json_decref(wait_for("v1", "Pod", "default", names[i], pod_running_ready, "Running"));

    set_not_ready("node-1", true);
    /* Every pod of the node goes not Ready at once. */
    json_decref(wait_for("v1", "Pod", "default", "default", not_ready, "not Ready"));
    json_decref(wait_for("v1", "Pod", "default", "forever", not_ready, "not Ready"));
    /* The one tolerating 1 s is evicted, gracefully: its kubelet is gone,
     * so it stays Terminating. */
    json_t *p = wait_for("v1", "Pod", "default", "short", deleting, "evicted");
    cr_expect_str_eq(cond_field(p, "DisruptionTarget", "reason"), "DeletionByTaintManager");
    json_decref(p);
    sleep_ms(300);
    cr_expect(gone_pod("short") == false, "a dead kubelet finishes nothing");
    const char *kept[] = {"forever", "default", "elsewhere"};
    for (int i = 0; i < 3; i++) {
        p = pod(kept[i]);
        cr_expect(p && !deleting(p), "%s is kept", kept[i]);
        json_decref(p);
    }
    p = pod("elsewhere");
    cr_expect(cond_is(p, "Ready", "True"), "the other node's pod stays Ready");
    json_decref(p);

    /* An eviction event was recorded. */
    json_t *events = NULL;
    cr_assert_eq(fakeapi_list(api, "v1", "Event", "default", NULL, &events, NULL), 0);
    bool found = false;
    size_t i;
    json_t *ev;
    json_array_foreach(events, i, ev)
    {
        const char *reason = json_string_value(json_object_get(ev, "reason"));
        const char *msg = json_string_value(json_object_get(ev, "message"));
        found |= reason && !strcmp(reason, "TaintManagerEviction") && msg &&
                 !strcmp(msg, "Marking for deletion Pod default/short");
    }
    json_decref(events);
    cr_expect(found, "a TaintManagerEviction event");

    /* The node comes back: its kubelet finishes the deletion, the rest are
     * Ready again. */
    set_not_ready("node-1", false);
    int64_t t0 = mono_ns();
    while (!gone_pod("short")) {
        cr_assert(mono_ns() - t0 < WAIT_NS, "short never went");
        sleep_ms(20);
    }
    json_decref(wait_for("v1", "Pod", "default", "forever", pod_running_ready, "Ready again"));
    json_decref(wait_for("v1", "Pod", "default", "default", pod_running_ready, "Ready again"));
}

Test(lifecycle, untolerated_no_execute_evicts_at_once)
{
    start("{\"controllers\":[\"nodes\",\"kubelet\",\"nodelifecycle\"],\"nodes\":[{\"name\":"
          "\"tainted\",\"taints\":[{\"key\":\"evict\",\"effect\":\"NoExecute\"}]}]}");
    json_decref(wait_for("v1", "Node", "", "tainted", node_ready, "Ready"));
    /* Bound by hand, past any scheduler. */
    make_pod("intruder", "\"nodeName\":\"tainted\"");
    make_pod("welcome", "\"nodeName\":\"tainted\",\"tolerations\":[{\"key\":\"evict\","
                        "\"operator\":\"Exists\"}]");
    int64_t t0 = mono_ns();
    while (!gone_pod("intruder")) {
        cr_assert(mono_ns() - t0 < WAIT_NS, "intruder never went");
        sleep_ms(20);
    }
    json_t *p = wait_for("v1", "Pod", "default", "welcome", pod_running_ready, "Running");
    cr_expect(!deleting(p));
    json_decref(p);
}

static bool running(const json_t *p)
{
    const char *ph = ctrl_obj_get_string(p, "status.phase");
    return ph && !strcmp(ph, "Running");
}

static bool not_ready_tainted(const json_t *n)
{
    return has_taint(n, "node.kubernetes.io/not-ready", "NoSchedule") &&
           has_taint(n, "node.kubernetes.io/not-ready", "NoExecute");
}

Test(lifecycle, ready_false_node_runs_pods_not_ready)
{
    /* A node whose kubelet is there but unwell (Ready False; no nodes
     * controller to set it right): its pods run, none Ready, and the
     * kubelet and this controller agree on that (no write fight). */
    cr_assert_eq(fakeapi_start(&(fakeapi_options){.seed = 5}, &api), 0);
    apply("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-0\"},"
          "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"16Gi\",\"pods\":\"110\"},"
          "\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\",\"reason\":\"Sick\"}]}}");
    start("{\"controllers\":[\"kubelet\",\"nodelifecycle\"],\"nodes\":1}");
    json_decref(wait_for("v1", "Node", "", "node-0", not_ready_tainted, "tainted not-ready"));
    make_pod("p", "\"nodeName\":\"node-0\"");
    json_t *p = wait_for("v1", "Pod", "default", "p", running, "Running");
    json_decref(p);
    sleep_ms(300);
    p = pod("p");
    cr_expect(cond_is(p, "Ready", "False"));
    char rv[32];
    snprintf(rv, sizeof rv, "%s", ctrl_obj_get_string(p, "metadata.resourceVersion"));
    json_decref(p);
    sleep_ms(500);
    p = pod("p");
    cr_expect_str_eq(ctrl_obj_get_string(p, "metadata.resourceVersion"), rv,
                     "the pod keeps being rewritten");
    cr_expect(!deleting(p), "300 s of default toleration");
    json_decref(p);
}

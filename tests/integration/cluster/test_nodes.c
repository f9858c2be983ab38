/*
 * test_nodes.c - the simulated nodes, the scheduler and the kubelet
 * stand-in (cluster/nodes.c, scheduler.c, kubelet.c) against an in-process
 * fakeapi with kc_cluster_start: Ready nodes with leases, NotReady on
 * demand, pods scheduled and Running/Ready with IPs from their node's /24,
 * unschedulable pods and their message, taints, tolerations, node
 * selectors and affinity, Job-like pods that succeed, stage rules.
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

TestSuite(nodes, .fini = teardown);

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

static bool pod_unschedulable(const json_t *p)
{
    return cond_is(p, "PodScheduled", "False");
}

static bool node_ready(const json_t *n)
{
    return cond_is(n, "Ready", "True");
}

static bool node_unknown(const json_t *n)
{
    return cond_is(n, "Ready", "Unknown");
}

static bool exists(const json_t *o)
{
    return o != NULL;
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

/* ---- nodes ---- */

Test(nodes, appear_ready_with_leases)
{
    start("{\"controllers\":[\"nodes\"],\"nodes\":3}");
    for (int i = 0; i < 3; i++) {
        char name[16], cidr[32];
        snprintf(name, sizeof name, "node-%d", i);
        snprintf(cidr, sizeof cidr, "10.244.%d.0/24", i);
        json_t *n = wait_for("v1", "Node", "", name, node_ready, "Ready");
        cr_expect_str_eq(cond_field(n, "Ready", "reason"), "KubeletReady");
        cr_expect_str_eq(cond_field(n, "MemoryPressure", "status"), "False");
        cr_expect_str_eq(cond_field(n, "DiskPressure", "status"), "False");
        cr_expect_str_eq(cond_field(n, "PIDPressure", "status"), "False");
        cr_expect_str_eq(ctrl_obj_get_string(n, "spec.podCIDR"), cidr);
        cr_expect_str_eq(ctrl_obj_get_string(n, "status.capacity.cpu"), "4");
        cr_expect(
            json_equal(ctrl_obj_get(n, "status.capacity"), ctrl_obj_get(n, "status.allocatable")));
        cr_expect_str_eq(ctrl_obj_label(n, "kubernetes.io/hostname"), name);
        json_t *addr = json_array_get(ctrl_obj_get(n, "status.addresses"), 0);
        cr_expect_str_eq(json_string_value(json_object_get(addr, "type")), "InternalIP");
        cr_expect_eq(ctrl_obj_get_int(n, "status.daemonEndpoints.kubeletEndpoint.Port", 0), 10250);
        cr_expect_str_eq(ctrl_obj_get_string(n, "status.nodeInfo.operatingSystem"), "linux");
        json_decref(n);
        json_t *lease =
            wait_for("coordination.k8s.io/v1", "Lease", "kube-node-lease", name, exists, "there");
        cr_expect_str_eq(ctrl_obj_get_string(lease, "spec.holderIdentity"), name);
        cr_expect_eq(ctrl_obj_get_int(lease, "spec.leaseDurationSeconds", 0), 40);
        cr_expect(ctrl_obj_get_string(lease, "spec.renewTime") != NULL);
        json_t *owner = json_array_get(ctrl_obj_get(lease, "metadata.ownerReferences"), 0);
        cr_expect_str_eq(json_string_value(json_object_get(owner, "kind")), "Node");
        json_decref(lease);
    }
}

Test(nodes, not_ready_on_demand_and_back)
{
    start("{\"controllers\":[\"nodes\"],\"nodes\":2}");
    json_decref(wait_for("v1", "Node", "", "node-1", node_ready, "Ready"));
    apply("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-1\","
          "\"annotations\":{\"kube-harness.io/not-ready\":\"true\"}}}");
    json_t *n = wait_for("v1", "Node", "", "node-1", node_unknown, "Ready=Unknown");
    cr_expect_str_eq(cond_field(n, "Ready", "reason"), "NodeStatusUnknown");
    cr_expect_str_eq(cond_field(n, "Ready", "message"), "Kubelet stopped posting node status.");
    cr_expect_str_eq(cond_field(n, "MemoryPressure", "status"), "Unknown");
    json_decref(n);
    json_t *other = get("v1", "Node", "", "node-0");
    cr_expect(cond_is(other, "Ready", "True"), "the other node stays Ready");
    json_decref(other);
    apply("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-1\","
          "\"annotations\":{\"kube-harness.io/not-ready\":\"false\"}}}");
    json_decref(wait_for("v1", "Node", "", "node-1", node_ready, "Ready again"));
}

/* ---- the scheduler and the kubelet ---- */

static bool in_cidr(const char *ip, int node)
{
    char prefix[32];
    snprintf(prefix, sizeof prefix, "10.244.%d.", node);
    return ip && !strncmp(ip, prefix, strlen(prefix));
}

Test(nodes, pods_scheduled_running_ready_with_ips)
{
    start("{\"controllers\":[\"nodes\",\"scheduler\",\"kubelet\"],\"nodes\":3}");
    char name[16];
    for (int i = 0; i < 6; i++) {
        snprintf(name, sizeof name, "p%d", i);
        make_pod(name, NULL);
        /* One at a time: each choice sees the pods before it. */
        json_decref(wait_for("v1", "Pod", "default", name, pod_running_ready, "Running+Ready"));
    }
    int per_node[3] = {0};
    json_t *ips = json_object();
    for (int i = 0; i < 6; i++) {
        snprintf(name, sizeof name, "p%d", i);
        json_t *p = pod(name);
        const char *node = ctrl_obj_get_string(p, "spec.nodeName");
        cr_assert(node && !strncmp(node, "node-", 5));
        int idx = atoi(node + 5);
        per_node[idx]++;
        const char *ip = ctrl_obj_get_string(p, "status.podIP");
        cr_expect(in_cidr(ip, idx), "%s: ip %s on %s", name, ip, node);
        cr_expect(!json_object_get(ips, ip), "ip %s twice", ip);
        json_object_set_new(ips, ip, json_true());
        char host[32];
        snprintf(host, sizeof host, "172.18.0.%d", idx + 2);
        cr_expect_str_eq(ctrl_obj_get_string(p, "status.hostIP"), host);
        cr_expect(ctrl_obj_get_string(p, "status.startTime") != NULL);
        json_t *cs = json_array_get(ctrl_obj_get(p, "status.containerStatuses"), 0);
        cr_expect(json_is_true(json_object_get(cs, "ready")));
        cr_expect(json_is_true(json_object_get(cs, "started")));
        cr_expect_eq(json_integer_value(json_object_get(cs, "restartCount")), 0);
        cr_expect(ctrl_obj_get_string(cs, "state.running.startedAt") != NULL);
        cr_expect(!strncmp(ctrl_obj_get_string(cs, "containerID"), "containerd://", 13));
        cr_expect(
            !strncmp(ctrl_obj_get_string(cs, "imageID"), "docker.io/library/nginx@sha256:", 31));
        cr_expect(cond_is(p, "PodScheduled", "True"));
        cr_expect(cond_is(p, "Initialized", "True"));
        cr_expect(cond_is(p, "ContainersReady", "True"));
        json_decref(p);
    }
    json_decref(ips);
    /* Least allocated: the pods spread evenly. */
    for (int i = 0; i < 3; i++)
        cr_expect_eq(per_node[i], 2, "node-%d has %d pods", i, per_node[i]);
    /* The first pod on each node took the node's lowest address. */
    json_t *p0 = pod("p0");
    cr_expect(!strcmp(ctrl_obj_get_string(p0, "status.podIP") + strlen("10.244.0."), "2"),
              "p0's ip %s", ctrl_obj_get_string(p0, "status.podIP"));
    json_decref(p0);
    /* The scheduler's Event. */
    json_t *events = NULL;
    cr_assert_eq(fakeapi_list(api, "v1", "Event", "default", NULL, &events, NULL), 0);
    bool found = false;
    size_t i;
    json_t *ev;
    json_array_foreach(events, i, ev)
    {
        const char *reason = json_string_value(json_object_get(ev, "reason"));
        const char *msg = json_string_value(json_object_get(ev, "message"));
        if (reason && !strcmp(reason, "Scheduled") && msg &&
            !strcmp(msg, "Successfully assigned default/p0 to node-0"))
            found = true;
    }
    json_decref(events);
    cr_expect(found, "a Scheduled event for p0");
}

Test(nodes, unschedulable_then_uncordoned)
{
    /* Cordoned before the scheduler starts, so that its first look sees it. */
    cr_assert_eq(fakeapi_start(&(fakeapi_options){.seed = 5}, &api), 0);
    apply("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-0\"},"
          "\"spec\":{\"unschedulable\":true},\"status\":{\"allocatable\":{\"cpu\":\"4\","
          "\"memory\":\"16Gi\",\"pods\":\"110\"}}}");
    start("{\"controllers\":[\"nodes\",\"scheduler\",\"kubelet\"],\"nodes\":1}");
    json_decref(wait_for("v1", "Node", "", "node-0", node_ready, "Ready"));
    make_pod("waits", NULL);
    json_t *p = wait_for("v1", "Pod", "default", "waits", pod_unschedulable, "Unschedulable");
    cr_expect_str_eq(cond_field(p, "PodScheduled", "reason"), "Unschedulable");
    cr_expect_str_eq(cond_field(p, "PodScheduled", "message"),
                     "0/1 nodes are available: 1 node(s) were unschedulable. preemption: 0/1 "
                     "nodes are available: 1 Preemption is not helpful for scheduling..");
    cr_expect_eq(ctrl_obj_get_string(p, "spec.nodeName"), NULL);
    json_decref(p);
    apply("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-0\"},"
          "\"spec\":{\"unschedulable\":false}}");
    p = wait_for("v1", "Pod", "default", "waits", pod_running_ready, "Running+Ready");
    cr_expect_str_eq(ctrl_obj_get_string(p, "spec.nodeName"), "node-0");
    json_decref(p);
}

Test(nodes, insufficient_cpu_then_node_added)
{
    start("{\"controllers\":[\"nodes\",\"scheduler\"],\"nodes\":2,\"node\":{\"cpu\":\"1\"}}");
    make_pod("big", "\"containers\":[{\"name\":\"c\",\"image\":\"busybox\",\"resources\":"
                    "{\"requests\":{\"cpu\":\"1500m\"}}}]");
    json_t *p = wait_for("v1", "Pod", "default", "big", pod_unschedulable, "Unschedulable");
    cr_expect_str_eq(cond_field(p, "PodScheduled", "message"),
                     "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are "
                     "available: 2 No preemption victims found for incoming pod..");
    json_decref(p);
    /* A FailedScheduling event says the same. */
    json_t *events = NULL;
    cr_assert_eq(fakeapi_list(api, "v1", "Event", "default", NULL, &events, NULL), 0);
    bool found = false;
    size_t i;
    json_t *ev;
    json_array_foreach(events, i, ev)
    {
        const char *reason = json_string_value(json_object_get(ev, "reason"));
        found |= reason && !strcmp(reason, "FailedScheduling") &&
                 !strcmp(json_string_value(json_object_get(ev, "type")), "Warning");
    }
    json_decref(events);
    cr_expect(found, "a FailedScheduling event");
    /* A bigger node joins (by hand: not one of the configured ones). */
    apply("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"big-node\"},"
          "\"status\":{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"32Gi\",\"pods\":\"110\"},"
          "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
    int64_t t0 = mono_ns();
    for (;;) {
        p = pod("big");
        const char *n = ctrl_obj_get_string(p, "spec.nodeName");
        if (n) {
            cr_expect_str_eq(n, "big-node");
            json_decref(p);
            break;
        }
        json_decref(p);
        cr_assert(mono_ns() - t0 < WAIT_NS, "never scheduled on the new node");
        sleep_ms(20);
    }
}

Test(nodes, taints_tolerations_selectors_affinity)
{
    start("{\"controllers\":[\"nodes\",\"scheduler\",\"kubelet\"],\"nodes\":["
          "{\"name\":\"a\",\"taints\":[{\"key\":\"dedicated\",\"value\":\"x\",\"effect\":"
          "\"NoSchedule\"}]},"
          "{\"name\":\"b\",\"labels\":{\"disk\":\"ssd\"}},"
          "{\"name\":\"c\"}]}");
    make_pod("ssd", "\"nodeSelector\":{\"disk\":\"ssd\"}");
    make_pod("tolerant",
             "\"tolerations\":[{\"key\":\"dedicated\",\"operator\":\"Equal\",\"value\":\"x\","
             "\"effect\":\"NoSchedule\"}],\"affinity\":{\"nodeAffinity\":{"
             "\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[{"
             "\"matchExpressions\":[{\"key\":\"kubernetes.io/hostname\",\"operator\":\"In\","
             "\"values\":[\"a\"]}]}]}}}");
    make_pod("nowhere",
             "\"affinity\":{\"nodeAffinity\":{"
             "\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[{"
             "\"matchExpressions\":[{\"key\":\"kubernetes.io/hostname\",\"operator\":\"NotIn\","
             "\"values\":[\"b\",\"c\"]}]}]}}}");
    make_pod("nossd",
             "\"affinity\":{\"nodeAffinity\":{"
             "\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":[{"
             "\"matchExpressions\":[{\"key\":\"disk\",\"operator\":\"DoesNotExist\"}]}]}}}");
    json_t *p = wait_for("v1", "Pod", "default", "ssd", pod_running_ready, "Running");
    cr_expect_str_eq(ctrl_obj_get_string(p, "spec.nodeName"), "b");
    json_decref(p);
    p = wait_for("v1", "Pod", "default", "tolerant", pod_running_ready, "Running");
    cr_expect_str_eq(ctrl_obj_get_string(p, "spec.nodeName"), "a");
    json_decref(p);
    p = wait_for("v1", "Pod", "default", "nossd", pod_running_ready, "Running");
    cr_expect_str_eq(ctrl_obj_get_string(p, "spec.nodeName"), "c");
    json_decref(p);
    p = wait_for("v1", "Pod", "default", "nowhere", pod_unschedulable, "Unschedulable");
    cr_expect_str_eq(cond_field(p, "PodScheduled", "message"),
                     "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: x}, 2 "
                     "node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes "
                     "are available: 3 Preemption is not helpful for scheduling..");
    json_decref(p);
}

/* ---- the kubelet's stages ---- */

static bool pod_succeeded(const json_t *p)
{
    const char *ph = ctrl_obj_get_string(p, "status.phase");
    return ph && !strcmp(ph, "Succeeded");
}

static bool pod_failed(const json_t *p)
{
    const char *ph = ctrl_obj_get_string(p, "status.phase");
    return ph && !strcmp(ph, "Failed");
}

Test(nodes, job_pod_succeeds)
{
    start("{\"controllers\":[\"nodes\",\"scheduler\",\"kubelet\"],\"nodes\":1}");
    apply("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"once\","
          "\"namespace\":\"default\",\"labels\":{\"job-name\":\"once\"}},\"spec\":{"
          "\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]}}");
    json_t *p = wait_for("v1", "Pod", "default", "once", pod_succeeded, "Succeeded");
    json_t *cs = json_array_get(ctrl_obj_get(p, "status.containerStatuses"), 0);
    cr_expect_eq(ctrl_obj_get_int(cs, "state.terminated.exitCode", -1), 0);
    cr_expect_str_eq(ctrl_obj_get_string(cs, "state.terminated.reason"), "Completed");
    cr_expect(json_is_false(json_object_get(cs, "ready")));
    cr_expect_str_eq(cond_field(p, "Ready", "reason"), "PodCompleted");
    cr_expect(cond_is(p, "Ready", "False"));
    json_decref(p);
}

Test(nodes, stage_rules_fail_delay_and_crashloop)
{
    start("{\"controllers\":[\"nodes\",\"scheduler\",\"kubelet\"],\"nodes\":1,\"stages\":["
          "{\"name\":\"broken\",\"match\":{\"images\":[\"broken:*\"]},\"outcome\":\"Fail\","
          "\"after\":\"100ms\",\"exitCode\":3},"
          "{\"name\":\"slow\",\"match\":{\"labels\":{\"matchLabels\":{\"speed\":\"slow\"}}},"
          "\"readyAfter\":\"1s\"}]}");
    apply("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"dies\","
          "\"namespace\":\"default\"},\"spec\":{\"restartPolicy\":\"Never\",\"containers\":"
          "[{\"name\":\"c\",\"image\":\"broken:1\"}]}}");
    apply("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"loops\","
          "\"namespace\":\"default\"},\"spec\":{\"containers\":"
          "[{\"name\":\"c\",\"image\":\"broken:1\"}]}}");
    apply("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"slow\","
          "\"namespace\":\"default\",\"labels\":{\"speed\":\"slow\"}},\"spec\":{\"containers\":"
          "[{\"name\":\"c\",\"image\":\"nginx\"}]}}");
    json_t *p = wait_for("v1", "Pod", "default", "dies", pod_failed, "Failed");
    json_t *cs = json_array_get(ctrl_obj_get(p, "status.containerStatuses"), 0);
    cr_expect_eq(ctrl_obj_get_int(cs, "state.terminated.exitCode", -1), 3);
    cr_expect_str_eq(ctrl_obj_get_string(cs, "state.terminated.reason"), "Error");
    cr_expect_str_eq(cond_field(p, "Ready", "reason"), "PodFailed");
    json_decref(p);

    /* restartPolicy Always: the container exits and backs off. */
    int64_t t0 = mono_ns();
    for (;;) {
        p = pod("loops");
        cs = json_array_get(ctrl_obj_get(p, "status.containerStatuses"), 0);
        const char *w = ctrl_obj_get_string(cs, "state.waiting.reason");
        if (w && !strcmp(w, "CrashLoopBackOff")) {
            cr_expect_str_eq(ctrl_obj_get_string(p, "status.phase"), "Running");
            cr_expect_eq(ctrl_obj_get_int(cs, "lastState.terminated.exitCode", -1), 3);
            cr_expect(cond_is(p, "Ready", "False"));
            json_decref(p);
            break;
        }
        json_decref(p);
        cr_assert(mono_ns() - t0 < WAIT_NS, "never CrashLoopBackOff");
        sleep_ms(20);
    }

    /* readyAfter: Running first, Ready a second later. */
    t0 = mono_ns();
    bool seen_unready = false;
    for (;;) {
        p = pod("slow");
        const char *ph = ctrl_obj_get_string(p, "status.phase");
        if (ph && !strcmp(ph, "Running") && cond_is(p, "Ready", "False")) {
            seen_unready = true;
            cr_expect_str_eq(cond_field(p, "Ready", "reason"), "ContainersNotReady");
            cr_expect_str_eq(cond_field(p, "Ready", "message"),
                             "containers with unready status: [c]");
        }
        if (pod_running_ready(p)) {
            json_decref(p);
            break;
        }
        json_decref(p);
        cr_assert(mono_ns() - t0 < WAIT_NS, "never Ready");
        sleep_ms(20);
    }
    cr_expect(seen_unready, "Running before Ready");
}

/* ---- graceful deletion ---- */

static bool gone_pod(const char *name)
{
    json_t *p = pod(name);
    json_decref(p);
    return p == NULL;
}

Test(nodes, graceful_deletion)
{
    start("{\"controllers\":[\"nodes\",\"scheduler\",\"kubelet\"],\"nodes\":1,\"stages\":["
          "{\"name\":\"slow-stop\",\"match\":{\"labels\":{\"matchLabels\":{\"stop\":\"slow\"}}},"
          "\"terminationDelay\":\"1s\"}]}");
    make_pod("quick", NULL);
    apply("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"slow\","
          "\"namespace\":\"default\",\"labels\":{\"stop\":\"slow\"}},\"spec\":{\"containers\":"
          "[{\"name\":\"c\",\"image\":\"nginx\"}]}}");
    json_decref(wait_for("v1", "Pod", "default", "quick", pod_running_ready, "Running"));
    json_decref(wait_for("v1", "Pod", "default", "slow", pod_running_ready, "Running"));

    /* The server keeps both (bound, grace 30); the kubelet ends them. */
    cr_assert_eq(fakeapi_delete(api, "v1", "Pod", "default", "slow", NULL), 0);
    json_t *p = pod("slow");
    cr_assert(p, "a bound pod is deleted gracefully");
    cr_expect(ctrl_obj_get_string(p, "metadata.deletionTimestamp") != NULL);
    cr_expect_eq(ctrl_obj_get_int(p, "metadata.deletionGracePeriodSeconds", 0), 30);
    json_decref(p);
    int64_t t0 = mono_ns();
    cr_assert_eq(fakeapi_delete(api, "v1", "Pod", "default", "quick", NULL), 0);
    while (!gone_pod("quick")) {
        cr_assert(mono_ns() - t0 < WAIT_NS, "quick never went");
        sleep_ms(10);
    }
    while (!gone_pod("slow")) {
        cr_assert(mono_ns() - t0 < WAIT_NS, "slow never went");
        sleep_ms(10);
    }
    /* The rule's terminationDelay (1 s of clock time) held it. */
    cr_expect(mono_ns() - t0 >= 900 * 1000000LL, "slow went after %lld ms",
              (long long)((mono_ns() - t0) / 1000000));
}

/* ---- lease renewal ---- */

Test(nodes, leases_renewed_on_the_configured_interval)
{
    start("{\"controllers\":[\"nodes\"],\"nodes\":1,\"nodeLeaseRenew\":\"200ms\"}");
    json_t *lease =
        wait_for("coordination.k8s.io/v1", "Lease", "kube-node-lease", "node-0", exists, "there");
    char first[64];
    snprintf(first, sizeof first, "%s", ctrl_obj_get_string(lease, "spec.renewTime"));
    json_decref(lease);
    int64_t t0 = mono_ns();
    for (;;) {
        lease = get("coordination.k8s.io/v1", "Lease", "kube-node-lease", "node-0");
        const char *now = ctrl_obj_get_string(lease, "spec.renewTime");
        bool renewed = now && strcmp(now, first) > 0;
        json_decref(lease);
        if (renewed)
            break;
        cr_assert(mono_ns() - t0 < WAIT_NS, "the lease was never renewed");
        sleep_ms(50);
    }
}

Test(nodes, bad_lease_interval_is_refused)
{
    cr_assert_eq(fakeapi_start(&(fakeapi_options){.seed = 5}, &api), 0);
    json_t *doc = json_pack("{s:[s], s:s}", "controllers", "nodes", "nodeLeaseRenew", "often");
    kc_config *cfg = NULL;
    char err[512] = "";
    cr_assert_eq(kc_config_new(doc, NULL, &cfg, err, sizeof err), 0, "%s", err);
    json_decref(doc);
    kc_cluster_options o = {.config = cfg, .quiet = true};
    cr_expect_eq(kc_cluster_start(fakeapi_url(api), &o, &cl, err, sizeof err), KC_ERR_INPUT);
    cr_expect_str_eq(err, "nodeLeaseRenew: a duration such as \"10s\" or \"1m\", or 0 for never");
    cr_expect_null(cl);
    kc_config_free(cfg);
}

/* ---- pod anti-affinity ---- */

static void spread_pod(const char *name, bool anti)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"namespace\":\"default\",\"labels\":{\"app\":\"spread\"}},\"spec\":{%s"
             "\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}]}}",
             name,
             anti ? "\"affinity\":{\"podAntiAffinity\":{"
                    "\"requiredDuringSchedulingIgnoredDuringExecution\":[{\"labelSelector\":{"
                    "\"matchLabels\":{\"app\":\"spread\"}},\"topologyKey\":"
                    "\"kubernetes.io/hostname\"}]}},"
                  : "");
    apply(text);
}

Test(nodes, pod_anti_affinity_on_hostname)
{
    start("{\"controllers\":[\"nodes\",\"scheduler\",\"kubelet\"],\"nodes\":3}");
    json_t *seen = json_object();
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "s%d", i);
        spread_pod(name, true);
        json_t *p = wait_for("v1", "Pod", "default", name, pod_running_ready, "Running");
        const char *node = ctrl_obj_get_string(p, "spec.nodeName");
        cr_expect(!json_object_get(seen, node), "%s shares %s", name, node);
        json_object_set_new(seen, node, json_true());
        json_decref(p);
    }
    json_decref(seen);
    spread_pod("s3", true);
    json_t *p = wait_for("v1", "Pod", "default", "s3", pod_unschedulable, "Unschedulable");
    cr_expect_str_eq(cond_field(p, "PodScheduled", "message"),
                     "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. "
                     "preemption: 0/3 nodes are available: 3 No preemption victims found for "
                     "incoming pod..");
    json_decref(p);
    /* Without rules of its own, the others' rules keep it out too. */
    spread_pod("plain", false);
    p = wait_for("v1", "Pod", "default", "plain", pod_unschedulable, "Unschedulable");
    cr_expect_str_eq(cond_field(p, "PodScheduled", "message"),
                     "0/3 nodes are available: 3 node(s) didn't satisfy existing pods "
                     "anti-affinity rules. preemption: 0/3 nodes are available: 3 No preemption "
                     "victims found for incoming pod..");
    json_decref(p);
    /* One goes: the first waiting pod takes its place. */
    cr_assert_eq(fakeapi_delete(api, "v1", "Pod", "default", "s1", NULL), 0);
    int64_t t0 = mono_ns();
    for (;;) {
        json_t *a = pod("s3"), *b = pod("plain");
        bool placed =
            ctrl_obj_get_string(a, "spec.nodeName") || ctrl_obj_get_string(b, "spec.nodeName");
        bool both =
            ctrl_obj_get_string(a, "spec.nodeName") && ctrl_obj_get_string(b, "spec.nodeName");
        json_decref(a);
        json_decref(b);
        cr_assert(!both, "both took the one free node");
        if (placed)
            break;
        cr_assert(mono_ns() - t0 < WAIT_NS, "nobody took the free node");
        sleep_ms(20);
    }
}

/* ---- the same run twice ---- */

/* Start a cluster, create 9 pods at once, and answer {pod: "node ip"}. */
static json_t *one_run(void)
{
    start("{\"controllers\":[\"nodes\",\"scheduler\",\"kubelet\"],\"nodes\":3}");
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "node-%d", i);
        json_decref(wait_for("v1", "Node", "", name, node_ready, "Ready"));
    }
    for (int i = 0; i < 9; i++) {
        char name[16];
        snprintf(name, sizeof name, "d%d", i);
        make_pod(name, NULL);
    }
    json_t *out = json_object();
    for (int i = 0; i < 9; i++) {
        char name[16], where[64];
        snprintf(name, sizeof name, "d%d", i);
        json_t *p = wait_for("v1", "Pod", "default", name, pod_running_ready, "Running");
        snprintf(where, sizeof where, "%s %s", ctrl_obj_get_string(p, "spec.nodeName"),
                 ctrl_obj_get_string(p, "status.podIP"));
        json_object_set_new(out, name, json_string(where));
        json_decref(p);
    }
    teardown();
    return out;
}

Test(nodes, same_choices_and_ips_every_run)
{
    json_t *a = one_run(), *b = one_run();
    char *ta = json_dumps(a, JSON_SORT_KEYS), *tb = json_dumps(b, JSON_SORT_KEYS);
    cr_expect_str_eq(ta, tb);
    /* Least allocated, ties by name: round robin over the nodes. */
    cr_expect_str_eq(json_string_value(json_object_get(a, "d0")), "node-0 10.244.0.2");
    cr_expect_str_eq(json_string_value(json_object_get(a, "d1")), "node-1 10.244.1.2");
    cr_expect_str_eq(json_string_value(json_object_get(a, "d3")), "node-0 10.244.0.3");
    free(ta);
    free(tb);
    json_decref(a);
    json_decref(b);
}

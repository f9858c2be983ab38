/*
 * table_cols_core.c - Table columns of the core/v1 kinds but Events
 * (table_cols_events.c). Column names, types, priorities and cell values
 * follow the real server's printers; see table_cells.h for the model.
 *
 * Thread-safety: reentrant; the printers are constant data.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table_cols.h"
#include "timefmt.h"

#define DIG fakeapi__dig
#define DIG_STR fakeapi__dig_str
#define DIG_INT fakeapi__dig_int

/* ---- pods ---- */

/* What the Ready, Status and Restarts cells are computed from (printPod). */
typedef struct pod_sum {
    size_t ready, total;
    json_int_t restarts;
    int64_t last_restart; /* ns; 0: never */
    char reason[160];
} pod_sum;

static bool restartable_init(const json_t *pod, const char *name)
{
    size_t i;
    const json_t *c;
    json_array_foreach(DIG(pod, "spec.initContainers"), i, c)
    {
        const char *n = json_string_value(json_object_get(c, "name"));
        if (n && name && !strcmp(n, name)) {
            const char *rp = json_string_value(json_object_get(c, "restartPolicy"));
            return rp && !strcmp(rp, "Always");
        }
    }
    return false;
}

static void later(int64_t *last, const json_t *cs)
{
    int64_t t;
    const char *fin = DIG_STR(cs, "lastState.terminated.finishedAt");
    if (fin && fakeapi__parse_time(fin, &t) == 0 && t > *last)
        *last = t;
}

static void terminated_reason(const json_t *term, const char *prefix, char *out, size_t len)
{
    const char *r = json_string_value(json_object_get(term, "reason"));
    json_int_t sig = DIG_INT(term, "signal", 0);
    if (r && *r)
        snprintf(out, len, "%s%s", prefix, r);
    else if (sig)
        snprintf(out, len, "%sSignal:%" JSON_INTEGER_FORMAT, prefix, sig);
    else
        snprintf(out, len, "%sExitCode:%" JSON_INTEGER_FORMAT, prefix,
                 DIG_INT(term, "exitCode", 0));
}

static void pod_summary(const json_t *pod, pod_sum *s)
{
    memset(s, 0, sizeof *s);
    const char *phase = DIG_STR(pod, "status.phase");
    const char *sreason = DIG_STR(pod, "status.reason");
    snprintf(s->reason, sizeof s->reason, "%s", sreason && *sreason ? sreason : phase ? phase : "");
    size_t i;
    const json_t *c;
    json_array_foreach(DIG(pod, "status.conditions"), i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        const char *r = json_string_value(json_object_get(c, "reason"));
        if (t && r && !strcmp(t, "PodScheduled") && !strcmp(r, "SchedulingGated"))
            snprintf(s->reason, sizeof s->reason, "SchedulingGated");
    }
    s->total = json_array_size(DIG(pod, "spec.containers"));
    json_array_foreach(DIG(pod, "spec.initContainers"), i, c)
    {
        const char *rp = json_string_value(json_object_get(c, "restartPolicy"));
        if (rp && !strcmp(rp, "Always"))
            s->total++;
    }

    json_int_t sidecar_restarts = 0;
    int64_t sidecar_last = 0;
    bool initializing = false;
    size_t ninit = json_array_size(DIG(pod, "spec.initContainers"));
    json_array_foreach(DIG(pod, "status.initContainerStatuses"), i, c)
    {
        const char *name = json_string_value(json_object_get(c, "name"));
        bool sidecar = restartable_init(pod, name);
        s->restarts += DIG_INT(c, "restartCount", 0);
        later(&s->last_restart, c);
        if (sidecar) {
            sidecar_restarts += DIG_INT(c, "restartCount", 0);
            later(&sidecar_last, c);
        }
        const json_t *term = DIG(c, "state.terminated");
        const char *waiting = DIG_STR(c, "state.waiting.reason");
        if (term && DIG_INT(term, "exitCode", 0) == 0)
            continue;
        if (sidecar && json_is_true(json_object_get(c, "started"))) {
            if (json_is_true(json_object_get(c, "ready")))
                s->ready++;
            continue;
        }
        if (term)
            terminated_reason(term, "Init:", s->reason, sizeof s->reason);
        else if (waiting && *waiting && strcmp(waiting, "PodInitializing") != 0)
            snprintf(s->reason, sizeof s->reason, "Init:%s", waiting);
        else
            snprintf(s->reason, sizeof s->reason, "Init:%zu/%zu", i, ninit);
        initializing = true;
        break;
    }

    if (!initializing || fakeapi__has_condition(pod, "status.conditions", "Initialized")) {
        s->restarts = sidecar_restarts;
        s->last_restart = sidecar_last;
        bool running = false;
        const json_t *list = DIG(pod, "status.containerStatuses");
        for (size_t j = json_array_size(list); j-- > 0;) {
            c = json_array_get(list, j);
            s->restarts += DIG_INT(c, "restartCount", 0);
            later(&s->last_restart, c);
            const char *waiting = DIG_STR(c, "state.waiting.reason");
            const json_t *term = DIG(c, "state.terminated");
            if (waiting && *waiting)
                snprintf(s->reason, sizeof s->reason, "%s", waiting);
            else if (term)
                terminated_reason(term, "", s->reason, sizeof s->reason);
            else if (json_is_true(json_object_get(c, "ready")) && DIG(c, "state.running")) {
                running = true;
                s->ready++;
            }
        }
        if (!strcmp(s->reason, "Completed") && running)
            snprintf(s->reason, sizeof s->reason, "%s",
                     fakeapi__has_condition(pod, "status.conditions", "Ready") ? "Running"
                                                                               : "NotReady");
    }

    if (DIG_STR(pod, "metadata.deletionTimestamp")) {
        bool terminal = phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
        if (sreason && !strcmp(sreason, "NodeLost"))
            snprintf(s->reason, sizeof s->reason, "Unknown");
        else if (!terminal)
            snprintf(s->reason, sizeof s->reason, "Terminating");
    }
}

static json_t *pod_ready(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    pod_sum s;
    pod_summary(o, &s);
    char buf[48];
    snprintf(buf, sizeof buf, "%zu/%zu", s.ready, s.total);
    return json_string(buf);
}

static json_t *pod_status(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    pod_sum s;
    pod_summary(o, &s);
    return json_string(s.reason);
}

static json_t *pod_restarts(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)arg;
    pod_sum s;
    pod_summary(o, &s);
    char buf[64], ago[32];
    if (s.restarts && s.last_restart) {
        fakeapi__human_duration(now_ns - s.last_restart, ago, sizeof ago);
        snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT " (%s ago)", s.restarts, ago);
    } else {
        snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT, s.restarts);
    }
    return json_string(buf);
}

static json_t *pod_ip(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    /* status.podIPs[0]; an old client's lone podIP converts to the same. */
    const char *ip =
        json_string_value(json_object_get(json_array_get(DIG(o, "status.podIPs"), 0), "ip"));
    if (!ip || !*ip)
        ip = DIG_STR(o, "status.podIP");
    return fakeapi__str_or(ip, "<none>");
}

static json_t *pod_gates(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    const json_t *gates = DIG(o, "spec.readinessGates");
    if (!json_array_size(gates))
        return json_string("<none>");
    size_t ok = 0, i;
    const json_t *g;
    json_array_foreach(gates, i, g)
    {
        const char *want = json_string_value(json_object_get(g, "conditionType"));
        if (want && fakeapi__has_condition(o, "status.conditions", want))
            ok++;
    }
    char buf[48];
    snprintf(buf, sizeof buf, "%zu/%zu", ok, json_array_size(gates));
    return json_string(buf);
}

/* A finished pod's row says so in its conditions (kubectl can hide such rows). */
static json_t *pod_conditions(const json_t *o)
{
    const char *phase = DIG_STR(o, "status.phase");
    if (!phase || (strcmp(phase, "Succeeded") != 0 && strcmp(phase, "Failed") != 0))
        return NULL;
    bool ok = !strcmp(phase, "Succeeded");
    return json_pack("[{s:s, s:s, s:s, s:s}]", "type", "Completed", "status", "True", "reason",
                     phase, "message",
                     ok ? "The pod has completed successfully." : "The pod failed.");
}

static const fakeapi__field f_pod_node = {"spec.nodeName", "<none>", 0};
static const fakeapi__field f_pod_nominated = {"status.nominatedNodeName", "<none>", 0};

static const fakeapi__colspec pod_cols[] = {
    FAKEAPI__COL_NAME,
    {"Ready", "string", "", 0, "The aggregate readiness state of this pod for accepting traffic.",
     pod_ready, NULL},
    {"Status", "string", "", 0, "The aggregate status of the containers in this pod.", pod_status,
     NULL},
    {"Restarts", "string", "", 0,
     "The number of times the containers in this pod have been restarted and when the last "
     "container in this pod has restarted.",
     pod_restarts, NULL},
    FAKEAPI__COL_AGE,
    {"IP", "string", "", 1, "IP address allocated to the pod.", pod_ip, NULL},
    {"Node", "string", "", 1, "NodeName is a request to schedule this pod onto a specific node.",
     fakeapi__cell_str, &f_pod_node},
    {"Nominated Node", "string", "", 1,
     "nominatedNodeName is set when this pod preempts other pods.", fakeapi__cell_str,
     &f_pod_nominated},
    {"Readiness Gates", "string", "", 1, "If specified, all readiness gates will be evaluated.",
     pod_gates, NULL},
};

static json_t *podtemplate_labels(const json_t *o, int64_t now_ns, const void *arg)
{
    return fakeapi__cell_labels(o, now_ns, arg);
}

static const fakeapi__colspec podtemplate_cols[] = {
    FAKEAPI__COL_NAME,
    {"Containers", "string", "", 0, "Names of each container in the template.", fakeapi__cell_names,
     "template.spec"},
    {"Images", "string", "", 0, "Images referenced by each container in the template.",
     fakeapi__cell_images, "template.spec"},
    {"Pod Labels", "string", "", 0, "The labels for the pod template.", podtemplate_labels,
     "template.metadata.labels"},
};

/* ---- services ---- */

static const char *svc_type(const json_t *o)
{
    const char *t = DIG_STR(o, "spec.type");
    return t && *t ? t : "ClusterIP"; /* the API default */
}

static json_t *svc_type_cell(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    return json_string(svc_type(o));
}

static json_t *svc_cluster_ip(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    const char *ip = json_string_value(json_array_get(DIG(o, "spec.clusterIPs"), 0));
    if (!ip || !*ip)
        ip = DIG_STR(o, "spec.clusterIP");
    return fakeapi__str_or(ip, "<none>");
}

static int cmp_cstr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static json_t *svc_external_ip(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    const char *type = svc_type(o);
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    size_t i;
    const json_t *v;
    if (!strcmp(type, "ExternalName"))
        return fakeapi__str_or(DIG_STR(o, "spec.externalName"), "");
    if (strcmp(type, "ClusterIP") != 0 && strcmp(type, "NodePort") != 0 &&
        strcmp(type, "LoadBalancer") != 0)
        return json_string("<unknown>");
    if (!strcmp(type, "LoadBalancer")) {
        /* The load balancer's addresses as a sorted set, then the external IPs. */
        const char *lb[64];
        size_t n = 0;
        json_array_foreach(DIG(o, "status.loadBalancer.ingress"), i, v)
        {
            const char *ip = json_string_value(json_object_get(v, "ip"));
            const char *host = json_string_value(json_object_get(v, "hostname"));
            const char *a = ip && *ip ? ip : host && *host ? host : NULL;
            if (a && n < sizeof lb / sizeof lb[0])
                lb[n++] = a;
        }
        qsort(lb, n, sizeof lb[0], cmp_cstr);
        for (size_t j = 0; j < n; j++)
            if (!j || strcmp(lb[j], lb[j - 1]) != 0)
                fakeapi__cb_join(&b, ",", lb[j]);
    }
    json_array_foreach(DIG(o, "spec.externalIPs"), i, v)
    {
        if (json_string_value(v))
            fakeapi__cb_join(&b, ",", json_string_value(v));
    }
    return fakeapi__cb_or(&b, !strcmp(type, "LoadBalancer") ? "<pending>" : "<none>");
}

static json_t *svc_ports(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    size_t i;
    const json_t *p;
    json_array_foreach(DIG(o, "spec.ports"), i, p)
    {
        const char *proto = json_string_value(json_object_get(p, "protocol"));
        json_int_t port = DIG_INT(p, "port", 0), node_port = DIG_INT(p, "nodePort", 0);
        if (b.len)
            fakeapi__cb_add(&b, ",");
        if (node_port > 0)
            fakeapi__cb_addf(&b, "%" JSON_INTEGER_FORMAT ":%" JSON_INTEGER_FORMAT "/%s", port,
                             node_port, proto ? proto : "TCP");
        else
            fakeapi__cb_addf(&b, "%" JSON_INTEGER_FORMAT "/%s", port, proto ? proto : "TCP");
    }
    return fakeapi__cb_or(&b, "<none>");
}

static const fakeapi__colspec svc_cols[] = {
    FAKEAPI__COL_NAME,
    {"Type", "string", "", 0, "type determines how the Service is exposed.", svc_type_cell, NULL},
    {"Cluster-IP", "string", "", 0, "clusterIP is the IP address of the service.", svc_cluster_ip,
     NULL},
    {"External-IP", "string", "", 0,
     "externalIPs is a list of IP addresses for which nodes in the cluster will also accept "
     "traffic for this service.",
     svc_external_ip, NULL},
    {"Port(s)", "string", "", 0, "The list of ports that are exposed by this service.", svc_ports,
     NULL},
    FAKEAPI__COL_AGE,
    {"Selector", "string", "", 1,
     "Route service traffic to pods with label keys and values matching this selector.",
     fakeapi__cell_labels, "spec.selector"},
};

/* ---- endpoints ---- */

static json_t *ep_endpoints(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    const json_t *subsets = json_object_get(o, "subsets");
    if (!json_array_size(subsets))
        return json_string("<none>");
    /* At most three host:port pairs, then "+ N more...". */
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    size_t shown = 0, count = 0, i;
    const json_t *ss;
    json_array_foreach(subsets, i, ss)
    {
        const json_t *addrs = json_object_get(ss, "addresses");
        const json_t *ports = json_object_get(ss, "ports");
        size_t nports = json_array_size(ports);
        for (size_t p = 0; p < (nports ? nports : 1); p++) {
            count += json_array_size(addrs);
            for (size_t a = 0; a < json_array_size(addrs); a++) {
                if (shown == 3)
                    break;
                const char *ip = json_string_value(json_object_get(json_array_get(addrs, a), "ip"));
                if (b.len)
                    fakeapi__cb_add(&b, ",");
                if (!nports)
                    fakeapi__cb_add(&b, ip ? ip : "");
                else if (ip && strchr(ip, ':'))
                    fakeapi__cb_addf(&b, "[%s]:%" JSON_INTEGER_FORMAT, ip,
                                     DIG_INT(json_array_get(ports, p), "port", 0));
                else
                    fakeapi__cb_addf(&b, "%s:%" JSON_INTEGER_FORMAT, ip ? ip : "",
                                     DIG_INT(json_array_get(ports, p), "port", 0));
                shown++;
            }
        }
    }
    if (count > 3)
        fakeapi__cb_addf(&b, " + %zu more...", count - 3);
    return json_string(b.s);
}

static const fakeapi__colspec ep_cols[] = {
    FAKEAPI__COL_NAME,
    {"Endpoints", "string", "", 0, "The set of all endpoints is the union of all subsets.",
     ep_endpoints, NULL},
    FAKEAPI__COL_AGE,
};

/* ---- nodes ---- */

static json_t *node_status(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    size_t i;
    const json_t *c, *ready = NULL;
    json_array_foreach(DIG(o, "status.conditions"), i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && !strcmp(t, "Ready"))
            ready = c; /* the last one wins, as in a map */
    }
    if (ready) {
        const char *st = json_string_value(json_object_get(ready, "status"));
        fakeapi__cb_add(&b, st && !strcmp(st, "True") ? "Ready" : "NotReady");
    } else {
        fakeapi__cb_add(&b, "Unknown");
    }
    if (json_is_true(DIG(o, "spec.unschedulable")))
        fakeapi__cb_add(&b, ",SchedulingDisabled");
    return json_string(b.s);
}

static json_t *node_roles(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    static const char prefix[] = "node-role.kubernetes.io/";
    const char *roles[64];
    size_t n = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)DIG(o, "metadata.labels"), k, v)
    {
        const char *role = NULL;
        if (!strncmp(k, prefix, sizeof prefix - 1) && k[sizeof prefix - 1])
            role = k + sizeof prefix - 1;
        else if (!strcmp(k, "kubernetes.io/role") && json_string_value(v) && *json_string_value(v))
            role = json_string_value(v);
        if (role && n < sizeof roles / sizeof roles[0])
            roles[n++] = role;
    }
    qsort(roles, n, sizeof roles[0], cmp_cstr);
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    for (size_t j = 0; j < n; j++)
        if (!j || strcmp(roles[j], roles[j - 1]) != 0)
            fakeapi__cb_join(&b, ",", roles[j]);
    return fakeapi__cb_or(&b, "<none>");
}

static json_t *node_address(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    size_t i;
    const json_t *a;
    json_array_foreach(DIG(o, "status.addresses"), i, a)
    {
        const char *t = json_string_value(json_object_get(a, "type"));
        const char *addr = json_string_value(json_object_get(a, "address"));
        if (t && addr && !strcmp(t, arg))
            return json_string(addr);
    }
    return json_string("<none>");
}

static const fakeapi__field f_node_version = {"status.nodeInfo.kubeletVersion", "", 0};
static const fakeapi__field f_node_os = {"status.nodeInfo.osImage", "<unknown>", 0};
static const fakeapi__field f_node_kernel = {"status.nodeInfo.kernelVersion", "<unknown>", 0};
static const fakeapi__field f_node_cri = {"status.nodeInfo.containerRuntimeVersion", "<unknown>",
                                          0};

static const fakeapi__colspec node_cols[] = {
    FAKEAPI__COL_NAME,
    {"Status", "string", "", 0, "The status of the node", node_status, NULL},
    {"Roles", "string", "", 0, "The roles of the node", node_roles, NULL},
    FAKEAPI__COL_AGE,
    {"Version", "string", "", 0, "Kubelet Version reported by the node.", fakeapi__cell_str,
     &f_node_version},
    {"Internal-IP", "string", "", 1, "List of addresses reachable to the node.", node_address,
     "InternalIP"},
    {"External-IP", "string", "", 1, "List of addresses reachable to the node.", node_address,
     "ExternalIP"},
    {"OS-Image", "string", "", 1, "OS Image reported by the node from /etc/os-release.",
     fakeapi__cell_str, &f_node_os},
    {"Kernel-Version", "string", "", 1, "Kernel Version reported by the node from 'uname -r'.",
     fakeapi__cell_str, &f_node_kernel},
    {"Container-Runtime", "string", "", 1, "ContainerRuntime Version reported by the node.",
     fakeapi__cell_str, &f_node_cri},
};

/* ---- config, secrets, namespaces, service accounts ---- */

static json_t *cm_data(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    size_t n = json_object_size(json_object_get(o, "data")) +
               json_object_size(json_object_get(o, "binaryData"));
    return json_integer((json_int_t)n);
}

static const fakeapi__colspec cm_cols[] = {
    FAKEAPI__COL_NAME,
    {"Data", "string", "", 0, "Data contains the configuration data.", cm_data, NULL},
    FAKEAPI__COL_AGE,
};

static const fakeapi__field f_secret_type = {"type", "Opaque", 0};
static const fakeapi__field f_secret_data = {"data", NULL, 0};

static const fakeapi__colspec secret_cols[] = {
    FAKEAPI__COL_NAME,
    {"Type", "string", "", 0, "Used to facilitate programmatic handling of secret data.",
     fakeapi__cell_str, &f_secret_type},
    {"Data", "string", "", 0, "Data contains the secret data.", fakeapi__cell_count,
     &f_secret_data},
    FAKEAPI__COL_AGE,
};

static const fakeapi__field f_ns_phase = {"status.phase", "Active", 0};

static const fakeapi__colspec ns_cols[] = {
    FAKEAPI__COL_NAME,
    {"Status", "string", "", 0, "The status of the namespace", fakeapi__cell_str, &f_ns_phase},
    FAKEAPI__COL_AGE,
};

static const fakeapi__field f_sa_secrets = {"secrets", NULL, 0};

static const fakeapi__colspec sa_cols[] = {
    FAKEAPI__COL_NAME,
    {"Secrets", "string", "", 0,
     "Secrets is a list of the secrets in the same namespace that "
     "pods running using this ServiceAccount are allowed to use.",
     fakeapi__cell_count, &f_sa_secrets},
    FAKEAPI__COL_AGE,
};

/* ---- volumes ---- */

/* GetAccessModesAsString: the short forms in a fixed order. */
static json_t *access_modes(const json_t *modes)
{
    static const char *const longs[] = {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany",
                                        "ReadWriteOncePod"};
    static const char *const shorts[] = {"RWO", "ROX", "RWX", "RWOP"};
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    for (size_t k = 0; k < 4; k++) {
        size_t i;
        const json_t *m;
        json_array_foreach(modes, i, m)
        {
            if (json_string_value(m) && !strcmp(json_string_value(m), longs[k])) {
                fakeapi__cb_join(&b, ",", shorts[k]);
                break;
            }
        }
    }
    return json_string(b.s);
}

static json_t *storage_class(const json_t *o, const char *spec_field)
{
    const char *beta = json_string_value(
        json_object_get(DIG(o, "metadata.annotations"), "volume.beta.kubernetes.io/storage-class"));
    if (beta)
        return json_string(beta);
    return fakeapi__str_or(DIG_STR(DIG(o, "spec"), spec_field), "");
}

static json_t *pvc_phase(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    if (DIG_STR(o, "metadata.deletionTimestamp"))
        return json_string("Terminating");
    /* The API defaults a claim's and a volume's phase to Pending. */
    return fakeapi__str_or(DIG_STR(o, "status.phase"), "Pending");
}

static json_t *pvc_capacity(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    const char *vol = DIG_STR(o, "spec.volumeName");
    if (!vol || !*vol)
        return json_string("");
    return fakeapi__str_or(DIG_STR(o, "status.capacity.storage"), "0");
}

static json_t *pvc_modes(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    const char *vol = DIG_STR(o, "spec.volumeName");
    if (!vol || !*vol)
        return json_string("");
    return access_modes(DIG(o, "status.accessModes"));
}

static json_t *pvc_class(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    return storage_class(o, "storageClassName");
}

static const fakeapi__field f_vol_name = {"spec.volumeName", "", 0};
static const fakeapi__field f_vac = {"spec.volumeAttributesClassName", "<unset>", 0};
/* volumeMode is defaulted to Filesystem by the API; absent, print that. */
static const fakeapi__field f_vol_mode = {"spec.volumeMode", "Filesystem", 0};

static const fakeapi__colspec pvc_cols[] = {
    FAKEAPI__COL_NAME,
    {"Status", "string", "", 0, "phase represents the current phase of PersistentVolumeClaim.",
     pvc_phase, NULL},
    {"Volume", "string", "", 0,
     "volumeName is the binding reference to the PersistentVolume "
     "backing this claim.",
     fakeapi__cell_str, &f_vol_name},
    {"Capacity", "string", "", 0,
     "capacity represents the actual resources of the underlying "
     "volume.",
     pvc_capacity, NULL},
    {"Access Modes", "string", "", 0,
     "accessModes contains the actual access modes the volume "
     "backing the PVC has.",
     pvc_modes, NULL},
    {"StorageClass", "string", "", 0, "StorageClass of the pvc", pvc_class, NULL},
    {"VolumeAttributesClass", "string", "", 0, "VolumeAttributesClass of the pvc",
     fakeapi__cell_str, &f_vac},
    FAKEAPI__COL_AGE,
    {"VolumeMode", "string", "", 1,
     "volumeMode defines what type of volume is required by the "
     "claim.",
     fakeapi__cell_str, &f_vol_mode},
};

static json_t *pv_capacity(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    return fakeapi__str_or(DIG_STR(o, "spec.capacity.storage"), "0");
}

static json_t *pv_modes(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    return access_modes(DIG(o, "spec.accessModes"));
}

static json_t *pv_claim(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    const json_t *ref = DIG(o, "spec.claimRef");
    if (!json_is_object(ref))
        return json_string("");
    const char *ns = json_string_value(json_object_get(ref, "namespace"));
    const char *name = json_string_value(json_object_get(ref, "name"));
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    fakeapi__cb_addf(&b, "%s/%s", ns ? ns : "", name ? name : "");
    return json_string(b.s);
}

static json_t *pv_class(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    (void)arg;
    return storage_class(o, "storageClassName");
}

static const fakeapi__field f_pv_reclaim = {"spec.persistentVolumeReclaimPolicy", "", 0};
static const fakeapi__field f_pv_reason = {"status.reason", "", 0};

static const fakeapi__colspec pv_cols[] = {
    FAKEAPI__COL_NAME,
    {"Capacity", "string", "", 0,
     "capacity is the description of the persistent volume's "
     "resources and capacity.",
     pv_capacity, NULL},
    {"Access Modes", "string", "", 0, "accessModes contains all ways the volume can be mounted.",
     pv_modes, NULL},
    {"Reclaim Policy", "string", "", 0,
     "persistentVolumeReclaimPolicy defines what happens to a "
     "persistent volume when released from its claim.",
     fakeapi__cell_str, &f_pv_reclaim},
    {"Status", "string", "", 0,
     "phase indicates if a volume is available, bound to a claim, or "
     "released by a claim.",
     pvc_phase, NULL},
    {"Claim", "string", "", 0,
     "claimRef is part of a bi-directional binding between "
     "PersistentVolume and PersistentVolumeClaim.",
     pv_claim, NULL},
    {"StorageClass", "string", "", 0, "StorageClass of the pv", pv_class, NULL},
    {"VolumeAttributesClass", "string", "", 0, "VolumeAttributesClass of the pv", fakeapi__cell_str,
     &f_vac},
    {"Reason", "string", "", 0, "reason is a brief CamelCase string that describes any failure.",
     fakeapi__cell_str, &f_pv_reason},
    FAKEAPI__COL_AGE,
    {"VolumeMode", "string", "", 1,
     "volumeMode defines if a volume is intended to be used with "
     "a formatted filesystem or to remain in raw block state.",
     fakeapi__cell_str, &f_vol_mode},
};

/* ---- quotas, component statuses ---- */

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "resource: used/hard, ..." over status.hard sorted; limits.* go to the Limit column. */
static json_t *quota_column(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    bool limits = arg != NULL;
    const json_t *hard = DIG(o, "status.hard");
    const json_t *used = DIG(o, "status.used");
    const char *keys[256];
    size_t n = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)hard, k, v)
    {
        if (n < sizeof keys / sizeof keys[0])
            keys[n++] = k;
    }
    qsort(keys, n, sizeof keys[0], cmp_key);
    fakeapi__cellbuf b;
    fakeapi__cb_init(&b);
    for (size_t i = 0; i < n; i++) {
        bool is_limit = !strncmp(keys[i], "limits.", 7);
        if (is_limit != limits)
            continue;
        const char *h = json_string_value(json_object_get(hard, keys[i]));
        const char *u = json_string_value(json_object_get(used, keys[i]));
        if (b.len)
            fakeapi__cb_add(&b, ", ");
        fakeapi__cb_addf(&b, "%s: %s/%s", keys[i], u ? u : "0", h ? h : "0");
    }
    return json_string(b.s);
}

static const fakeapi__colspec quota_cols[] = {
    FAKEAPI__COL_NAME,
    {"Request", "string", "", 0,
     "Request represents a minimum amount of cpu/memory that a container may consume.",
     quota_column, NULL},
    {"Limit", "string", "", 0,
     "Limits control the maximum amount of cpu/memory that a container may use independent of "
     "contention on the node.",
     quota_column, "limits"},
    FAKEAPI__COL_AGE,
};

/* The Healthy condition: Status, Message, Error (arg picks which). */
static json_t *cs_cell(const json_t *o, int64_t now_ns, const void *arg)
{
    (void)now_ns;
    const char *which = arg;
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(o, "conditions"), i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (!t || strcmp(t, "Healthy") != 0)
            continue;
        if (!strcmp(which, "status")) {
            const char *st = json_string_value(json_object_get(c, "status"));
            return json_string(st && !strcmp(st, "True") ? "Healthy" : "Unhealthy");
        }
        return fakeapi__str_or(json_string_value(json_object_get(c, which)), "");
    }
    return json_string(!strcmp(which, "status") ? "Unknown" : "");
}

static const fakeapi__colspec cs_cols[] = {
    FAKEAPI__COL_NAME,
    {"Status", "string", "", 0, "Status of the component conditions", cs_cell, "status"},
    {"Message", "string", "", 0, "Message of the component conditions", cs_cell, "message"},
    {"Error", "string", "", 0, "Error of the component conditions", cs_cell, "error"},
};

const fakeapi__printer fakeapi__printers_core[] = {
    {"", "Pod", FAKEAPI__COLS(pod_cols), pod_conditions, NULL},
    {"", "PodTemplate", FAKEAPI__COLS(podtemplate_cols), NULL, NULL},
    {"", "Service", FAKEAPI__COLS(svc_cols), NULL, NULL},
    {"", "Endpoints", FAKEAPI__COLS(ep_cols), NULL, NULL},
    {"", "Node", FAKEAPI__COLS(node_cols), NULL, NULL},
    {"", "ConfigMap", FAKEAPI__COLS(cm_cols), NULL, NULL},
    {"", "Secret", FAKEAPI__COLS(secret_cols), NULL, NULL},
    {"", "Namespace", FAKEAPI__COLS(ns_cols), NULL, NULL},
    {"", "ServiceAccount", FAKEAPI__COLS(sa_cols), NULL, NULL},
    {"", "PersistentVolumeClaim", FAKEAPI__COLS(pvc_cols), NULL, NULL},
    {"", "PersistentVolume", FAKEAPI__COLS(pv_cols), NULL, NULL},
    {"", "ResourceQuota", FAKEAPI__COLS(quota_cols), NULL, NULL},
    {"", "ComponentStatus", FAKEAPI__COLS(cs_cols), NULL, NULL},
};
const size_t fakeapi__printers_core_n =
    sizeof fakeapi__printers_core / sizeof fakeapi__printers_core[0];

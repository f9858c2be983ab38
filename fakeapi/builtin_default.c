/*
 * builtin_default.c - defaults of the built-in kinds (builtin_default.h).
 *
 * The rules are the facts of upstream's SetDefaults_* functions for the
 * group-versions served (core/v1, apps/v1, batch/v1), applied to the JSON:
 * a string field is unset when absent, null or empty (Go's zero value); a
 * pointer field when absent or null. A struct that Go always has (a
 * non-pointer spec, template, strategy) is created when absent, so its
 * defaults appear as they would in the server's answer.
 *
 * Called from the write verbs (any request thread); the cluster IP
 * allocator reads the store and needs its lock.
 */
#include "builtin_default.h"
#include "webhook_config.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SERVICE_NET 0x0a600000u /* 10.96.0.0/12 */
#define SERVICE_MASK 0xfff00000u
#define SERVICE_CIDR "10.96.0.0/12"
#define NODE_PORT_MIN 30000
#define NODE_PORT_MAX 32767

/* ---- JSON helpers ------------------------------------------------------------ */

static bool unset(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return !v || json_is_null(v) || (json_is_string(v) && json_string_length(v) == 0);
}

/* The object at o[key], created when absent or null; NULL if it is not an object. */
static json_t *child(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (json_is_object(v))
        return v;
    if (!o || (v && !json_is_null(v)))
        return NULL;
    v = json_object();
    if (!v || json_object_set_new(o, key, v) < 0)
        return NULL;
    return v;
}

static int def_str(json_t *o, const char *key, const char *val)
{
    if (!json_is_object(o) || !unset(o, key))
        return 0;
    return json_object_set_new(o, key, json_string(val));
}

static int def_int(json_t *o, const char *key, json_int_t val)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_object(o) || (v && !json_is_null(v)))
        return 0;
    return json_object_set_new(o, key, json_integer(val));
}

static int def_bool(json_t *o, const char *key, bool val)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_object(o) || (v && !json_is_null(v)))
        return 0;
    return json_object_set_new(o, key, json_boolean(val));
}

static int def_new(json_t *o, const char *key, json_t *val)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_object(o) || (v && !json_is_null(v))) {
        json_decref(val);
        return 0;
    }
    return json_object_set_new(o, key, val);
}

static bool is_kind(const fakeapi__resource *res, const char *group, const char *kind)
{
    return !res->custom && !strcmp(res->group, group) && !strcmp(res->kind, kind);
}

/* ---- pod specs ----------------------------------------------------------------- */

/* Always for :latest or no tag, else IfNotPresent (a digest counts as a tag). */
static const char *pull_policy(const char *image)
{
    if (!image)
        return "Always";
    if (strchr(image, '@'))
        return "IfNotPresent";
    const char *slash = strrchr(image, '/');
    const char *colon = strrchr(slash ? slash : image, ':');
    if (!colon || !strcmp(colon + 1, "latest"))
        return "Always";
    return "IfNotPresent";
}

static int default_probe(json_t *p)
{
    if (!json_is_object(p))
        return 0;
    int rc = def_int(p, "timeoutSeconds", 1) | def_int(p, "periodSeconds", 10) |
             def_int(p, "successThreshold", 1) | def_int(p, "failureThreshold", 3);
    json_t *get = json_object_get(p, "httpGet");
    if (json_is_object(get))
        rc |= def_str(get, "scheme", "HTTP");
    return rc;
}

static int default_container(json_t *ctr)
{
    if (!json_is_object(ctr))
        return 0;
    int rc = def_str(ctr, "terminationMessagePath", "/dev/termination-log") |
             def_str(ctr, "terminationMessagePolicy", "File") |
             def_str(ctr, "imagePullPolicy",
                     pull_policy(json_string_value(json_object_get(ctr, "image"))));
    if (!child(ctr, "resources"))
        rc = -1;
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(ctr, "ports"), i, e)
    {
        rc |= def_str(e, "protocol", "TCP");
    }
    json_array_foreach(json_object_get(ctr, "env"), i, e)
    {
        json_t *ref = json_object_get(json_object_get(e, "valueFrom"), "fieldRef");
        if (json_is_object(ref))
            rc |= def_str(ref, "apiVersion", "v1");
    }
    static const char *const probes[] = {"livenessProbe", "readinessProbe", "startupProbe"};
    for (size_t k = 0; k < 3; k++)
        rc |= default_probe(json_object_get(ctr, probes[k]));
    return rc;
}

/* A volume with no source is an emptyDir; projected files default to 0644. */
static int default_volume(json_t *vol)
{
    if (!json_is_object(vol))
        return 0;
    static const char *const moded[] = {"secret", "configMap", "downwardAPI", "projected"};
    bool source = false;
    const char *k;
    json_t *v;
    json_object_foreach(vol, k, v)
    {
        if (strcmp(k, "name") && !json_is_null(v))
            source = true;
    }
    if (!source)
        return json_object_set_new(vol, "emptyDir", json_object());
    int rc = 0;
    for (size_t i = 0; i < 4; i++) {
        json_t *s = json_object_get(vol, moded[i]);
        if (json_is_object(s))
            rc |= def_int(s, "defaultMode", 0644);
    }
    return rc;
}

static int default_pod_spec(json_t *spec)
{
    if (!spec)
        return -1;
    int rc = def_str(spec, "dnsPolicy", "ClusterFirst") | def_str(spec, "restartPolicy", "Always") |
             def_int(spec, "terminationGracePeriodSeconds", 30) |
             def_str(spec, "schedulerName", "default-scheduler");
    if (!child(spec, "securityContext"))
        rc = -1;
    static const char *const lists[] = {"containers", "initContainers", "ephemeralContainers"};
    size_t i;
    json_t *e;
    for (size_t k = 0; k < 3; k++)
        json_array_foreach(json_object_get(spec, lists[k]), i, e)
        {
            rc |= default_container(e);
        }
    json_array_foreach(json_object_get(spec, "volumes"), i, e)
    {
        rc |= default_volume(e);
    }
    return rc;
}

/* template.spec of a workload (its template is created when absent, as Go's struct). */
static int default_template(json_t *spec)
{
    json_t *tmpl = child(spec, "template");
    return default_pod_spec(child(tmpl, "spec"));
}

static bool has_toleration(const json_t *tols, const char *key)
{
    size_t i;
    json_t *t;
    json_array_foreach(tols, i, t)
    {
        const char *k = json_string_value(json_object_get(t, "key"));
        const char *eff = json_string_value(json_object_get(t, "effect"));
        const char *op = json_string_value(json_object_get(t, "operator"));
        if ((!k || !*k) && op && !strcmp(op, "Exists"))
            return true;
        if (k && !strcmp(k, key) && (!eff || !*eff || !strcmp(eff, "NoExecute")))
            return true;
    }
    return false;
}

/* What the admission plugins add to every Pod: DefaultTolerationSeconds,
 * ServiceAccount, Priority. */
static int admit_pod(json_t *spec)
{
    static const char *const keys[] = {"node.kubernetes.io/not-ready",
                                       "node.kubernetes.io/unreachable"};
    json_t *tols = json_object_get(spec, "tolerations");
    if (!json_is_array(tols)) {
        tols = json_array();
        if (!tols || json_object_set_new(spec, "tolerations", tols) < 0)
            return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < 2; i++)
        if (!has_toleration(tols, keys[i]))
            rc |= json_array_append_new(tols, json_pack("{s:s, s:s, s:s, s:i}", "key", keys[i],
                                                        "operator", "Exists", "effect", "NoExecute",
                                                        "tolerationSeconds", 300));
    const char *sa = json_string_value(json_object_get(spec, "serviceAccountName"));
    if (!sa || !*sa)
        sa = json_string_value(json_object_get(spec, "serviceAccount"));
    rc |= def_str(spec, "serviceAccountName", sa && *sa ? sa : "default");
    rc |= def_str(spec, "serviceAccount",
                  json_string_value(json_object_get(spec, "serviceAccountName")));
    if (unset(spec, "priorityClassName"))
        rc |= def_int(spec, "priority", 0);
    rc |= def_str(spec, "preemptionPolicy", "PreemptLowerPriority");
    return rc;
}

/* ---- kinds ---------------------------------------------------------------------- */

static int default_pvc_spec(json_t *spec)
{
    return def_str(spec, "volumeMode", "Filesystem");
}

static int default_deployment(json_t *spec)
{
    int rc = def_int(spec, "replicas", 1) | def_int(spec, "revisionHistoryLimit", 10) |
             def_int(spec, "progressDeadlineSeconds", 600);
    json_t *strategy = child(spec, "strategy");
    rc |= def_str(strategy, "type", "RollingUpdate");
    const char *type = json_string_value(json_object_get(strategy, "type"));
    if (type && !strcmp(type, "RollingUpdate")) {
        json_t *ru = child(strategy, "rollingUpdate");
        rc |= def_new(ru, "maxUnavailable", json_string("25%")) |
              def_new(ru, "maxSurge", json_string("25%"));
    }
    return rc | default_template(spec);
}

static int default_statefulset(json_t *spec)
{
    int rc = def_int(spec, "replicas", 1) | def_int(spec, "revisionHistoryLimit", 10) |
             def_str(spec, "podManagementPolicy", "OrderedReady");
    json_t *us = child(spec, "updateStrategy");
    if (unset(us, "type")) {
        rc |= def_str(us, "type", "RollingUpdate");
        child(us, "rollingUpdate");
    }
    const char *type = json_string_value(json_object_get(us, "type"));
    json_t *ru = json_object_get(us, "rollingUpdate");
    if (type && !strcmp(type, "RollingUpdate") && json_is_object(ru))
        rc |= def_int(ru, "partition", 0);
    json_t *ret = child(spec, "persistentVolumeClaimRetentionPolicy");
    rc |= def_str(ret, "whenDeleted", "Retain") | def_str(ret, "whenScaled", "Retain");
    size_t i;
    json_t *pvc;
    json_array_foreach(json_object_get(spec, "volumeClaimTemplates"), i, pvc)
    {
        rc |= default_pvc_spec(child(pvc, "spec"));
        rc |= def_str(child(pvc, "status"), "phase", "Pending");
    }
    return rc | default_template(spec);
}

static int default_daemonset(json_t *spec)
{
    int rc = def_int(spec, "revisionHistoryLimit", 10);
    json_t *us = child(spec, "updateStrategy");
    rc |= def_str(us, "type", "RollingUpdate");
    const char *type = json_string_value(json_object_get(us, "type"));
    if (type && !strcmp(type, "RollingUpdate")) {
        json_t *ru = child(us, "rollingUpdate");
        rc |= def_new(ru, "maxUnavailable", json_integer(1)) |
              def_new(ru, "maxSurge", json_integer(0));
    }
    return rc | default_template(spec);
}

static int default_job(json_t *job, json_t *spec)
{
    int rc = 0;
    if (unset(spec, "completions") && unset(spec, "parallelism"))
        rc |= def_int(spec, "completions", 1);
    rc |= def_int(spec, "parallelism", 1);
    rc |= def_int(spec, "backoffLimit", unset(spec, "backoffLimitPerIndex") ? 6 : INT32_MAX);
    json_t *labels =
        json_object_get(json_object_get(json_object_get(spec, "template"), "metadata"), "labels");
    json_t *meta = json_object_get(job, "metadata");
    if (json_is_object(labels) && json_object_size(labels) &&
        json_object_size(json_object_get(meta, "labels")) == 0)
        rc |= json_object_set_new(meta, "labels", json_deep_copy(labels));
    rc |= def_str(spec, "completionMode", "NonIndexed") | def_bool(spec, "suspend", false);
    rc |= def_str(spec, "podReplacementPolicy",
                  unset(spec, "podFailurePolicy") ? "TerminatingOrFailed" : "Failed");
    return rc | default_template(spec);
}

static int default_cronjob(json_t *spec)
{
    int rc = def_str(spec, "concurrencyPolicy", "Allow") | def_bool(spec, "suspend", false) |
             def_int(spec, "successfulJobsHistoryLimit", 3) |
             def_int(spec, "failedJobsHistoryLimit", 1);
    json_t *jt = child(spec, "jobTemplate");
    return rc | default_template(child(jt, "spec"));
}

/* A ReplicationController takes its selector and labels from its template. */
static int default_rc(json_t *rc_obj, json_t *spec)
{
    int rc = def_int(spec, "replicas", 1);
    json_t *labels =
        json_object_get(json_object_get(json_object_get(spec, "template"), "metadata"), "labels");
    if (json_is_object(labels) && json_object_size(labels)) {
        if (json_object_size(json_object_get(spec, "selector")) == 0)
            rc |= json_object_set_new(spec, "selector", json_deep_copy(labels));
        json_t *meta = json_object_get(rc_obj, "metadata");
        if (json_object_size(json_object_get(meta, "labels")) == 0)
            rc |= json_object_set_new(meta, "labels", json_deep_copy(labels));
    }
    return rc | default_template(spec);
}

static bool target_port_unset(const json_t *port)
{
    const json_t *t = json_object_get(port, "targetPort");
    return !t || json_is_null(t) || (json_is_integer(t) && json_integer_value(t) == 0) ||
           (json_is_string(t) && json_string_length(t) == 0);
}

static int default_service(json_t *spec)
{
    int rc = def_str(spec, "type", "ClusterIP") | def_str(spec, "sessionAffinity", "None");
    const char *type = json_string_value(json_object_get(spec, "type"));
    const char *aff = json_string_value(json_object_get(spec, "sessionAffinity"));
    if (aff && !strcmp(aff, "ClientIP"))
        rc |= def_new(spec, "sessionAffinityConfig",
                      json_pack("{s:{s:i}}", "clientIP", "timeoutSeconds", 10800));
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(spec, "ports"), i, p)
    {
        if (!json_is_object(p))
            continue;
        rc |= def_str(p, "protocol", "TCP");
        json_t *port = json_object_get(p, "port");
        if (target_port_unset(p) && json_is_integer(port))
            rc |= json_object_set_new(p, "targetPort", json_integer(json_integer_value(port)));
    }
    bool external = type && !strcmp(type, "ExternalName");
    bool lb = type && !strcmp(type, "LoadBalancer");
    if (lb || (type && !strcmp(type, "NodePort")))
        rc |= def_str(spec, "externalTrafficPolicy", "Cluster");
    if (lb)
        rc |= def_bool(spec, "allocateLoadBalancerNodePorts", true);
    if (!external) {
        rc |= def_str(spec, "internalTrafficPolicy", "Cluster");
        rc |= def_str(spec, "ipFamilyPolicy", "SingleStack");
        if (json_array_size(json_object_get(spec, "ipFamilies")) == 0)
            rc |= json_object_set_new(spec, "ipFamilies", json_pack("[s]", "IPv4"));
    }
    return rc;
}

int fakeapi__builtin_default(const fakeapi__resource *res, json_t *obj)
{
    if (res->custom || !json_is_object(obj))
        return 0;
    const char *g = res->group, *k = res->kind;
    int rc = 0;
    if (!strcmp(g, "")) {
        if (!strcmp(k, "Pod")) {
            json_t *spec = child(obj, "spec");
            rc = default_pod_spec(spec) | def_bool(spec, "enableServiceLinks", true) |
                 (spec ? admit_pod(spec) : -1);
        } else if (!strcmp(k, "PodTemplate")) {
            rc = default_pod_spec(child(child(obj, "template"), "spec"));
        } else if (!strcmp(k, "ReplicationController")) {
            rc = default_rc(obj, child(obj, "spec"));
        } else if (!strcmp(k, "Service")) {
            rc = default_service(child(obj, "spec"));
        } else if (!strcmp(k, "PersistentVolumeClaim")) {
            rc = default_pvc_spec(child(obj, "spec"));
        } else if (!strcmp(k, "PersistentVolume")) {
            json_t *spec = child(obj, "spec");
            rc = def_str(spec, "persistentVolumeReclaimPolicy", "Retain") |
                 def_str(spec, "volumeMode", "Filesystem");
        } else if (!strcmp(k, "Secret")) {
            rc = def_str(obj, "type", "Opaque");
        } else if (!strcmp(k, "Namespace")) {
            /* The label is the name, always (NamespaceDefaultLabelName). */
            const char *name =
                json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
            json_t *labels = child(child(obj, "metadata"), "labels");
            if (name && labels)
                rc = json_object_set_new(labels, "kubernetes.io/metadata.name", json_string(name));
        }
    } else if (!strcmp(g, "apps")) {
        json_t *spec = child(obj, "spec");
        if (!strcmp(k, "Deployment"))
            rc = default_deployment(spec);
        else if (!strcmp(k, "ReplicaSet"))
            rc = def_int(spec, "replicas", 1) | default_template(spec);
        else if (!strcmp(k, "StatefulSet"))
            rc = default_statefulset(spec);
        else if (!strcmp(k, "DaemonSet"))
            rc = default_daemonset(spec);
    } else if (!strcmp(g, "batch")) {
        if (!strcmp(k, "Job"))
            rc = default_job(obj, child(obj, "spec"));
        else if (!strcmp(k, "CronJob"))
            rc = default_cronjob(child(obj, "spec"));
    } else if (!strcmp(g, "admissionregistration.k8s.io") &&
               (!strcmp(k, "MutatingWebhookConfiguration") ||
                !strcmp(k, "ValidatingWebhookConfiguration"))) {
        rc = fakeapi__webhook_config_default(!strcmp(k, "MutatingWebhookConfiguration"), obj);
    }
    return rc < 0 ? -1 : 0;
}

/* ---- generation ---------------------------------------------------------------- */

bool fakeapi__builtin_has_generation(const fakeapi__resource *res)
{
    static const char *const kinds[][2] = {
        {"apps", "Deployment"},
        {"apps", "ReplicaSet"},
        {"apps", "StatefulSet"},
        {"apps", "DaemonSet"},
        {"batch", "Job"},
        {"batch", "CronJob"},
        {"", "ReplicationController"},
        {"policy", "PodDisruptionBudget"},
        {"networking.k8s.io", "Ingress"},
        {"networking.k8s.io", "NetworkPolicy"},
        {"apiextensions.k8s.io", "CustomResourceDefinition"},
        {"admissionregistration.k8s.io", "ValidatingWebhookConfiguration"},
        {"admissionregistration.k8s.io", "MutatingWebhookConfiguration"},
        {"admissionregistration.k8s.io", "ValidatingAdmissionPolicy"},
        {"admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"},
        {"flowcontrol.apiserver.k8s.io", "FlowSchema"},
        {"flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"},
    };
    if (res->custom)
        return true;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (is_kind(res, kinds[i][0], kinds[i][1]))
            return true;
    return false;
}

/* ---- the Job's selector ----------------------------------------------------------- */

static void label_default(json_t *labels, const char *k, const char *v)
{
    /* Labels the user set are kept: a conflict is validation's to find. */
    if (!json_object_get(labels, k))
        json_object_set_new(labels, k, json_string(v));
}

void fakeapi__builtin_after_stamp(const fakeapi__resource *res, json_t *obj)
{
    if (!is_kind(res, "batch", "Job"))
        return;
    json_t *spec = json_object_get(obj, "spec");
    if (json_is_true(json_object_get(spec, "manualSelector")))
        return;
    json_t *meta = json_object_get(obj, "metadata");
    const char *uid = json_string_value(json_object_get(meta, "uid"));
    const char *name = json_string_value(json_object_get(meta, "name"));
    json_t *labels = child(child(child(spec, "template"), "metadata"), "labels");
    json_t *ml = child(child(spec, "selector"), "matchLabels");
    if (!uid || !name || !labels || !ml)
        return;
    label_default(labels, "batch.kubernetes.io/controller-uid", uid);
    label_default(labels, "batch.kubernetes.io/job-name", name);
    label_default(labels, "controller-uid", uid);
    label_default(labels, "job-name", name);
    label_default(ml, "batch.kubernetes.io/controller-uid", uid);
    /* The server's read of the stored Job defaults its labels from the
     * template's again, generated ones included: what every GET shows. */
    if (json_object_size(json_object_get(meta, "labels")) == 0)
        json_object_set_new(meta, "labels", json_deep_copy(labels));
}

/* ---- cluster IPs and node ports --------------------------------------------------------- */

typedef struct allocated {
    uint32_t *ips;
    size_t nips;
    int *ports;
    size_t nports, cap_ports;
} allocated;

static bool parse_ip(const char *s, uint32_t *out)
{
    struct in_addr a;
    if (!s || inet_pton(AF_INET, s, &a) != 1)
        return false;
    *out = ntohl(a.s_addr);
    return true;
}

/* The IPs and node ports every stored Service (but self) holds. */
static int load_allocated(fakeapi__store *store, const fakeapi__resource *res, const json_t *self,
                          allocated *al)
{
    json_t *all = json_array();
    if (!all || fakeapi__store_load_all(store, res->store_key, NULL, all) < 0) {
        json_decref(all);
        return -1;
    }
    size_t n = json_array_size(all);
    al->ips = calloc(n * 2 + 1, sizeof *al->ips);
    al->cap_ports = n * 8 + 64;
    al->ports = calloc(al->cap_ports, sizeof *al->ports);
    const char *self_uid =
        json_string_value(json_object_get(json_object_get(self, "metadata"), "uid"));
    size_t i;
    json_t *svc;
    json_array_foreach(all, i, svc)
    {
        const char *uid =
            json_string_value(json_object_get(json_object_get(svc, "metadata"), "uid"));
        if (!al->ips || !al->ports || (self_uid && uid && !strcmp(uid, self_uid)))
            continue;
        json_t *spec = json_object_get(svc, "spec");
        uint32_t ip;
        if (parse_ip(json_string_value(json_object_get(spec, "clusterIP")), &ip) &&
            al->nips < n * 2)
            al->ips[al->nips++] = ip;
        size_t j;
        json_t *p;
        json_array_foreach(json_object_get(spec, "ports"), j, p)
        {
            json_int_t np = json_integer_value(json_object_get(p, "nodePort"));
            if (np > 0 && al->nports < al->cap_ports)
                al->ports[al->nports++] = (int)np;
        }
    }
    json_decref(all);
    if (!al->ips || !al->ports)
        return -1;
    return 0;
}

static bool ip_taken(const allocated *al, uint32_t ip)
{
    for (size_t i = 0; i < al->nips; i++)
        if (al->ips[i] == ip)
            return true;
    return false;
}

static bool port_taken(const allocated *al, int port)
{
    for (size_t i = 0; i < al->nports; i++)
        if (al->ports[i] == port)
            return true;
    return false;
}

static void fmt_ip(uint32_t ip, char *buf, size_t len)
{
    snprintf(buf, len, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
}

/* Node ports for NodePort and LoadBalancer services: requested ones must be free. */
static int node_ports(json_t *spec, allocated *al, char *field, size_t flen, char *msg, size_t mlen)
{
    const char *type = json_string_value(json_object_get(spec, "type"));
    bool lb = type && !strcmp(type, "LoadBalancer");
    if (!type || (strcmp(type, "NodePort") && !lb))
        return 0;
    if (lb && json_is_false(json_object_get(spec, "allocateLoadBalancerNodePorts")))
        return 0;
    size_t i;
    json_t *p;
    /* Requested ports first, so an allocated one never takes them. */
    json_array_foreach(json_object_get(spec, "ports"), i, p)
    {
        json_int_t np = json_integer_value(json_object_get(p, "nodePort"));
        if (np == 0)
            continue;
        snprintf(field, flen, "spec.ports[%zu].nodePort", i);
        if (np < NODE_PORT_MIN || np > NODE_PORT_MAX) {
            snprintf(msg, mlen,
                     "Invalid value: %lld: provided port is not in the valid range. The range of "
                     "valid ports is %d-%d",
                     (long long)np, NODE_PORT_MIN, NODE_PORT_MAX);
            return -1;
        }
        if (port_taken(al, (int)np)) {
            snprintf(msg, mlen, "Invalid value: %lld: provided port is already allocated",
                     (long long)np);
            return -1;
        }
        if (al->nports < al->cap_ports)
            al->ports[al->nports++] = (int)np;
    }
    json_array_foreach(json_object_get(spec, "ports"), i, p)
    {
        if (json_integer_value(json_object_get(p, "nodePort")) != 0)
            continue;
        int port = NODE_PORT_MIN;
        while (port <= NODE_PORT_MAX && port_taken(al, port))
            port++;
        if (port > NODE_PORT_MAX) {
            snprintf(field, flen, "spec.ports[%zu].nodePort", i);
            snprintf(msg, mlen, "Invalid value: 0: range is full");
            return -1;
        }
        json_object_set_new(p, "nodePort", json_integer(port));
        if (al->nports < al->cap_ports)
            al->ports[al->nports++] = port;
    }
    return 0;
}

/* Carry over what an update leaves out; refuse a changed cluster IP. */
static int keep_allocated(json_t *spec, const json_t *cur_spec, char *field, size_t flen, char *msg,
                          size_t mlen)
{
    const char *old = json_string_value(json_object_get(cur_spec, "clusterIP"));
    const char *now = json_string_value(json_object_get(spec, "clusterIP"));
    if (old && *old && (!now || !*now)) {
        json_object_set(spec, "clusterIP", json_object_get(cur_spec, "clusterIP"));
        json_t *ips = json_object_get(cur_spec, "clusterIPs");
        if (ips)
            json_object_set_new(spec, "clusterIPs", json_deep_copy(ips));
    } else if (old && *old && now && strcmp(old, now)) {
        snprintf(field, flen, "spec.clusterIPs[0]");
        snprintf(msg, mlen, "Invalid value: []string{\"%s\"}: may not change once set", now);
        return -1;
    }
    /* Node ports the update leaves out keep their values, port by port. */
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(spec, "ports"), i, p)
    {
        json_t *q = json_array_get(json_object_get(cur_spec, "ports"), i);
        if (json_integer_value(json_object_get(p, "nodePort")) == 0 &&
            json_integer_value(json_object_get(q, "nodePort")) > 0 &&
            json_equal(json_object_get(p, "port"), json_object_get(q, "port")))
            json_object_set(p, "nodePort", json_object_get(q, "nodePort"));
    }
    return 0;
}

int fakeapi__builtin_cluster_ip(fakeapi__store *store, const fakeapi__resource *res, json_t *obj,
                                const json_t *cur, char *field, size_t flen, char *msg, size_t mlen)
{
    if (!is_kind(res, "", "Service"))
        return 0;
    json_t *spec = json_object_get(obj, "spec");
    const char *type = json_string_value(json_object_get(spec, "type"));
    if (!json_is_object(spec) || (type && !strcmp(type, "ExternalName")))
        return 0;
    if (cur && keep_allocated(spec, json_object_get(cur, "spec"), field, flen, msg, mlen) < 0)
        return -1;
    allocated al = {0};
    int rc = 0;
    if (load_allocated(store, res, cur ? cur : obj, &al) < 0) {
        rc = -2;
        goto out;
    }
    const char *want = json_string_value(json_object_get(spec, "clusterIP"));
    if (!want || !*want)
        want = json_string_value(json_array_get(json_object_get(spec, "clusterIPs"), 0));
    uint32_t ip = 0;
    char text[20];
    if (want && *want && strcmp(want, "None")) {
        if (!parse_ip(want, &ip)) {
            snprintf(field, flen, "spec.clusterIPs[0]");
            snprintf(msg, mlen,
                     "Invalid value: \"%s\": must be a valid IP address, (e.g. 10.9.8.7 or "
                     "2001:db8::ffff)",
                     want);
            rc = -1;
            goto out;
        }
        const char *old =
            cur ? json_string_value(json_object_get(json_object_get(cur, "spec"), "clusterIP"))
                : NULL;
        bool kept = old && !strcmp(old, want);
        if (!kept && ((ip & SERVICE_MASK) != SERVICE_NET || ip == SERVICE_NET ||
                      ip == (SERVICE_NET | ~SERVICE_MASK))) {
            snprintf(field, flen, "spec.clusterIPs");
            snprintf(msg, mlen,
                     "Invalid value: []string{\"%s\"}: failed to allocate IP %s: the provided IP "
                     "(%s) is not in the valid range. The range of valid IPs is %s",
                     want, want, want, SERVICE_CIDR);
            rc = -1;
            goto out;
        }
        if (!kept && ip_taken(&al, ip)) {
            snprintf(field, flen, "spec.clusterIPs");
            snprintf(msg, mlen,
                     "Invalid value: []string{\"%s\"}: failed to allocate IP %s: provided IP is "
                     "already allocated",
                     want, want);
            rc = -1;
            goto out;
        }
        fmt_ip(ip, text, sizeof text);
    } else if (want && !strcmp(want, "None")) {
        snprintf(text, sizeof text, "None");
    } else {
        /* The lowest free address, so a run is deterministic. */
        for (ip = SERVICE_NET + 1; ip < (SERVICE_NET | ~SERVICE_MASK) && ip_taken(&al, ip); ip++)
            ;
        if (ip >= (SERVICE_NET | ~SERVICE_MASK)) {
            snprintf(field, flen, "spec.clusterIPs");
            snprintf(msg, mlen, "Invalid value: []string(nil): range is full");
            rc = -1;
            goto out;
        }
        fmt_ip(ip, text, sizeof text);
    }
    json_object_set_new(spec, "clusterIP", json_string(text));
    json_object_set_new(spec, "clusterIPs", json_pack("[s]", text));
    rc = node_ports(spec, &al, field, flen, msg, mlen);
out:
    free(al.ips);
    free(al.ports);
    return rc;
}

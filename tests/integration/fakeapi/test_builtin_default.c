/*
 * test_builtin_default.c - the defaults the real server fills in on built-in
 * objects, over HTTP: pod specs and every pod template, the workloads,
 * Jobs' generated selectors, Services and their cluster IPs and node ports,
 * PVCs, Namespaces, Secrets; defaults on update and patch too; and which
 * kinds keep metadata.generation.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakeapi/fakeapi.h"
#include "apitest.h"

TestSuite(builtin_default, .init = setup, .fini = teardown);

#define PODS "/api/v1/namespaces/default/pods"
#define SVCS "/api/v1/namespaces/default/services"
#define MERGE "application/merge-patch+json"
#define CTR "'containers':[{'name':'c','image':'nginx:1.27','ports':[{'containerPort':80}]}]"
#define SEL "'selector':{'matchLabels':{'app':'web'}},"
#define TMPL(spec) "'template':{'metadata':{'labels':{'app':'web'}},'spec':{" spec "}}"

typedef struct want {
    const char *path; /* jget path */
    const char *str;  /* a string value, or NULL for */
    long long num;    /* a number (or a boolean: 0/1 with is_bool) */
    int is_bool;
} want;

static void check(const json_t *obj, const want *w, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++) {
        const json_t *v = jget(obj, w[i].path);
        cr_assert_not_null(v, "%s: %s missing", what, w[i].path);
        if (w[i].str)
            cr_assert_str_eq(json_string_value(v), w[i].str, "%s: %s", what, w[i].path);
        else if (w[i].is_bool)
            cr_assert_eq(json_is_true(v), w[i].num != 0, "%s: %s", what, w[i].path);
        else
            cr_assert_eq(json_integer_value(v), w[i].num, "%s: %s", what, w[i].path);
    }
}

/* The defaults of a pod spec at prefix ("spec." or "spec.template.spec."). */
static void check_pod_spec(const json_t *obj, const char *prefix, const char *restart)
{
    char p[16][160];
    const char *keys[] = {"dnsPolicy",
                          "restartPolicy",
                          "schedulerName",
                          "containers.0.terminationMessagePath",
                          "containers.0.terminationMessagePolicy",
                          "containers.0.imagePullPolicy",
                          "containers.0.ports.0.protocol"};
    const char *vals[] = {
        "ClusterFirst", restart, "default-scheduler", "/dev/termination-log", "File",
        "IfNotPresent", "TCP"};
    want w[8];
    for (size_t i = 0; i < 7; i++) {
        snprintf(p[i], sizeof p[i], "%s%s", prefix, keys[i]);
        w[i] = (want){p[i], vals[i], 0, 0};
    }
    snprintf(p[7], sizeof p[7], "%sterminationGracePeriodSeconds", prefix);
    w[7] = (want){p[7], NULL, 30, 0};
    check(obj, w, 8, prefix);
    snprintf(p[8], sizeof p[8], "%ssecurityContext", prefix);
    cr_assert(json_is_object(jget(obj, p[8])), "%s", p[8]);
    snprintf(p[9], sizeof p[9], "%scontainers.0.resources", prefix);
    cr_assert(json_is_object(jget(obj, p[9])), "%s", p[9]);
}

Test(builtin_default, pods_get_spec_and_admission_defaults)
{
    json_t *p = req(201, "POST", PODS, "{'metadata':{'name':'p'},'spec':{" CTR "}}");
    check_pod_spec(p, "spec.", "Always");
    static const want w[] = {
        {"spec.enableServiceLinks", NULL, 1, 1},
        {"spec.serviceAccountName", "default", 0, 0},
        {"spec.serviceAccount", "default", 0, 0},
        {"spec.priority", NULL, 0, 0},
        {"spec.preemptionPolicy", "PreemptLowerPriority", 0, 0},
        {"spec.tolerations.0.key", "node.kubernetes.io/not-ready", 0, 0},
        {"spec.tolerations.0.operator", "Exists", 0, 0},
        {"spec.tolerations.0.effect", "NoExecute", 0, 0},
        {"spec.tolerations.0.tolerationSeconds", NULL, 300, 0},
        {"spec.tolerations.1.key", "node.kubernetes.io/unreachable", 0, 0},
        {"spec.tolerations.1.tolerationSeconds", NULL, 300, 0},
    };
    check(p, w, sizeof w / sizeof w[0], "pod");
    cr_assert_eq(json_array_size(jget(p, "spec.tolerations")), 2);
    cr_assert_null(jget(p, "metadata.generation"), "Pods keep no generation (1.32)");
    json_t *got = req(200, "GET", PODS "/p", NULL);
    cr_assert(json_equal(got, p), "stored as answered");
    json_decref(got);
    json_decref(p);

    /* Given values are kept: a toleration of its own, a service account. */
    p = req(201, "POST", PODS,
            "{'metadata':{'name':'q'},'spec':{'serviceAccountName':'robot','restartPolicy':'Never',"
            "'tolerations':[{'key':'node.kubernetes.io/not-ready','operator':'Exists',"
            "'effect':'NoExecute','tolerationSeconds':5}]," CTR "}}");
    cr_assert_str_eq(jstr(p, "spec.serviceAccountName"), "robot");
    cr_assert_str_eq(jstr(p, "spec.serviceAccount"), "robot");
    cr_assert_str_eq(jstr(p, "spec.restartPolicy"), "Never");
    cr_assert_eq(json_array_size(jget(p, "spec.tolerations")), 2);
    cr_assert_eq(jint(p, "spec.tolerations.0.tolerationSeconds"), 5);
    json_decref(p);
}

Test(builtin_default, image_pull_policy_follows_the_tag)
{
    static const struct {
        const char *image, *policy;
    } cases[] = {
        {"nginx", "Always"},
        {"nginx:latest", "Always"},
        {"nginx:1.27", "IfNotPresent"},
        {"registry:5000/team/app", "Always"},
        {"registry:5000/team/app:v2", "IfNotPresent"},
        {"nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
         "IfNotPresent"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *p = req(201, "POST", PODS,
                        S("{'metadata':{'name':'p%zu'},'spec':{'containers':[{'name':'c','image':"
                          "'%s'}],'volumes':[{'name':'v'},{'name':'s','secret':{'secretName':'x'}}]"
                          "}}",
                          i, cases[i].image));
        cr_assert_str_eq(jstr(p, "spec.containers.0.imagePullPolicy"), cases[i].policy, "%s",
                         cases[i].image);
        cr_assert(json_is_object(jget(p, "spec.volumes.0.emptyDir")), "a volume without source");
        cr_assert_eq(jint(p, "spec.volumes.1.secret.defaultMode"), 0644);
        json_decref(p);
    }
}

Test(builtin_default, workloads)
{
    json_t *d = req(201, "POST", DEPLOYS, "{'metadata':{'name':'d'},'spec':{" SEL TMPL(CTR) "}}");
    static const want dw[] = {
        {"spec.replicas", NULL, 1, 0},
        {"spec.revisionHistoryLimit", NULL, 10, 0},
        {"spec.progressDeadlineSeconds", NULL, 600, 0},
        {"spec.strategy.type", "RollingUpdate", 0, 0},
        {"spec.strategy.rollingUpdate.maxUnavailable", "25%", 0, 0},
        {"spec.strategy.rollingUpdate.maxSurge", "25%", 0, 0},
        {"metadata.generation", NULL, 1, 0},
    };
    check(d, dw, sizeof dw / sizeof dw[0], "deployment");
    check_pod_spec(d, "spec.template.spec.", "Always");
    cr_assert_null(jget(d, "spec.template.spec.enableServiceLinks"), "Pods only");
    cr_assert_null(jget(d, "spec.template.spec.tolerations"), "admission is for Pods only");
    json_decref(d);
    /* Recreate strategy gets no rollingUpdate. */
    d = req(201, "POST", DEPLOYS,
            "{'metadata':{'name':'r'},'spec':{'strategy':{'type':'Recreate'}," SEL TMPL(CTR) "}}");
    cr_assert_null(jget(d, "spec.strategy.rollingUpdate"));
    json_decref(d);

    json_t *s =
        req(201, "POST", "/apis/apps/v1/namespaces/default/statefulsets",
            "{'metadata':{'name':'s'},'spec':{'serviceName':'s'," SEL TMPL(
                CTR) ",'volumeClaimTemplates':[{'metadata':{'name':'data'},'spec':{'accessModes':["
                     "'ReadWriteOnce'],'resources':{'requests':{'storage':'1Gi'}}}}]}}");
    static const want sw[] = {
        {"spec.replicas", NULL, 1, 0},
        {"spec.revisionHistoryLimit", NULL, 10, 0},
        {"spec.podManagementPolicy", "OrderedReady", 0, 0},
        {"spec.updateStrategy.type", "RollingUpdate", 0, 0},
        {"spec.updateStrategy.rollingUpdate.partition", NULL, 0, 0},
        {"spec.persistentVolumeClaimRetentionPolicy.whenDeleted", "Retain", 0, 0},
        {"spec.persistentVolumeClaimRetentionPolicy.whenScaled", "Retain", 0, 0},
        {"spec.volumeClaimTemplates.0.spec.volumeMode", "Filesystem", 0, 0},
        {"spec.volumeClaimTemplates.0.status.phase", "Pending", 0, 0},
        {"metadata.generation", NULL, 1, 0},
    };
    check(s, sw, sizeof sw / sizeof sw[0], "statefulset");
    check_pod_spec(s, "spec.template.spec.", "Always");
    json_decref(s);

    json_t *ds = req(201, "POST", "/apis/apps/v1/namespaces/default/daemonsets",
                     "{'metadata':{'name':'ds'},'spec':{" SEL TMPL(CTR) "}}");
    static const want dsw[] = {
        {"spec.revisionHistoryLimit", NULL, 10, 0},
        {"spec.updateStrategy.type", "RollingUpdate", 0, 0},
        {"spec.updateStrategy.rollingUpdate.maxUnavailable", NULL, 1, 0},
        {"spec.updateStrategy.rollingUpdate.maxSurge", NULL, 0, 0},
    };
    check(ds, dsw, sizeof dsw / sizeof dsw[0], "daemonset");
    cr_assert_null(jget(ds, "spec.replicas"));
    json_decref(ds);

    json_t *rs = req(201, "POST", "/apis/apps/v1/namespaces/default/replicasets",
                     "{'metadata':{'name':'rs'},'spec':{" SEL TMPL(CTR) "}}");
    cr_assert_eq(jint(rs, "spec.replicas"), 1);
    check_pod_spec(rs, "spec.template.spec.", "Always");
    json_decref(rs);
}

Test(builtin_default, jobs_and_cronjobs)
{
    json_t *j = req(
        201, "POST", "/apis/batch/v1/namespaces/default/jobs",
        "{'metadata':{'name':'j'},'spec':{'template':{'spec':{'restartPolicy':'Never'," CTR "}}}}");
    static const want jw[] = {
        {"spec.completions", NULL, 1, 0},
        {"spec.parallelism", NULL, 1, 0},
        {"spec.backoffLimit", NULL, 6, 0},
        {"spec.completionMode", "NonIndexed", 0, 0},
        {"spec.suspend", NULL, 0, 1},
        {"spec.podReplacementPolicy", "TerminatingOrFailed", 0, 0},
        {"metadata.generation", NULL, 1, 0},
    };
    check(j, jw, sizeof jw / sizeof jw[0], "job");
    check_pod_spec(j, "spec.template.spec.", "Never");
    cr_assert_null(jget(j, "spec.manualSelector"));
    /* The generated selector and labels carry the Job's uid. */
    const char *uid = jstr(j, "metadata.uid");
    json_t *labels = jget(j, "spec.template.metadata.labels");
    cr_assert_str_eq(
        json_string_value(json_object_get(labels, "batch.kubernetes.io/controller-uid")), uid);
    cr_assert_str_eq(json_string_value(json_object_get(labels, "controller-uid")), uid);
    cr_assert_str_eq(json_string_value(json_object_get(labels, "batch.kubernetes.io/job-name")),
                     "j");
    cr_assert_str_eq(json_string_value(json_object_get(labels, "job-name")), "j");
    json_t *ml = jget(j, "spec.selector.matchLabels");
    cr_assert_eq(json_object_size(ml), 1);
    cr_assert_str_eq(json_string_value(json_object_get(ml, "batch.kubernetes.io/controller-uid")),
                     uid);
    json_decref(j);

    /* Parallelism alone leaves completions unset. */
    j = req(201, "POST", "/apis/batch/v1/namespaces/default/jobs",
            "{'metadata':{'name':'k'},'spec':{'parallelism':3,'template':{'spec':{"
            "'restartPolicy':'OnFailure'," CTR "}}}}");
    cr_assert_null(jget(j, "spec.completions"));
    cr_assert_eq(jint(j, "spec.parallelism"), 3);
    json_decref(j);

    json_t *cj = req(201, "POST", "/apis/batch/v1/namespaces/default/cronjobs",
                     "{'metadata':{'name':'cj'},'spec':{'schedule':'*/5 * * * *','jobTemplate':{"
                     "'spec':{'template':{'spec':{'restartPolicy':'OnFailure'," CTR "}}}}}}");
    static const want cw[] = {
        {"spec.concurrencyPolicy", "Allow", 0, 0},
        {"spec.suspend", NULL, 0, 1},
        {"spec.successfulJobsHistoryLimit", NULL, 3, 0},
        {"spec.failedJobsHistoryLimit", NULL, 1, 0},
    };
    check(cj, cw, sizeof cw / sizeof cw[0], "cronjob");
    check_pod_spec(cj, "spec.jobTemplate.spec.template.spec.", "OnFailure");
    cr_assert_null(jget(cj, "spec.jobTemplate.spec.backoffLimit"),
                   "a Job's defaults are the Job's");
    json_decref(cj);
}

Test(builtin_default, services_and_cluster_ips)
{
    json_t *a =
        req(201, "POST", SVCS,
            "{'metadata':{'name':'a'},'spec':{'selector':{'app':'web'},'ports':[{'port':80}]}}");
    static const want sw[] = {
        {"spec.type", "ClusterIP", 0, 0},
        {"spec.sessionAffinity", "None", 0, 0},
        {"spec.internalTrafficPolicy", "Cluster", 0, 0},
        {"spec.ipFamilyPolicy", "SingleStack", 0, 0},
        {"spec.ipFamilies.0", "IPv4", 0, 0},
        {"spec.ports.0.protocol", "TCP", 0, 0},
        {"spec.ports.0.targetPort", NULL, 80, 0},
        {"spec.clusterIP", "10.96.0.1", 0, 0},
        {"spec.clusterIPs.0", "10.96.0.1", 0, 0},
    };
    check(a, sw, sizeof sw / sizeof sw[0], "service");
    cr_assert_null(jget(a, "metadata.generation"), "Services keep no generation");
    cr_assert_null(jget(a, "spec.externalTrafficPolicy"), "ClusterIP has none");
    json_decref(a);

    /* The next free address; a requested one is kept; never one in use. */
    json_t *b = req(201, "POST", SVCS, "{'metadata':{'name':'b'},'spec':{'ports':[{'port':80}]}}");
    cr_assert_str_eq(jstr(b, "spec.clusterIP"), "10.96.0.2");
    json_decref(b);
    json_t *c =
        req(201, "POST", SVCS,
            "{'metadata':{'name':'c'},'spec':{'clusterIP':'10.96.0.3','ports':[{'port':80}]}}");
    cr_assert_str_eq(jstr(c, "spec.clusterIPs.0"), "10.96.0.3");
    json_decref(c);
    json_t *st = req_fail(422, "Invalid", "POST", SVCS,
                          "{'metadata':{'name':'x'},'spec':{'clusterIP':'10.96.0.2','ports':[{"
                          "'port':80}]}}");
    cr_assert_str_eq(jstr(st, "message"),
                     "Service \"x\" is invalid: spec.clusterIPs: Invalid value: "
                     "[]string{\"10.96.0.2\"}: failed to allocate IP 10.96.0.2: provided IP is "
                     "already allocated");
    json_decref(st);
    json_t *d = req(201, "POST", SVCS, "{'metadata':{'name':'d'},'spec':{'ports':[{'port':80}]}}");
    cr_assert_str_eq(jstr(d, "spec.clusterIP"), "10.96.0.4");
    json_decref(d);
    /* Freed when the Service goes. */
    json_decref(req(200, "DELETE", SVCS "/b", NULL));
    json_t *e = req(201, "POST", SVCS, "{'metadata':{'name':'e'},'spec':{'ports':[{'port':80}]}}");
    cr_assert_str_eq(jstr(e, "spec.clusterIP"), "10.96.0.2");
    json_decref(e);

    /* Headless keeps None; ExternalName gets no IP and no families. */
    json_t *h = req(201, "POST", SVCS, "{'metadata':{'name':'h'},'spec':{'clusterIP':'None'}}");
    cr_assert_str_eq(jstr(h, "spec.clusterIP"), "None");
    cr_assert_str_eq(jstr(h, "spec.clusterIPs.0"), "None");
    json_decref(h);
    json_t *x =
        req(201, "POST", SVCS,
            "{'metadata':{'name':'ext'},'spec':{'type':'ExternalName','externalName':'a.b'}}");
    cr_assert_null(jget(x, "spec.clusterIP"));
    cr_assert_null(jget(x, "spec.ipFamilies"));
    cr_assert_null(jget(x, "spec.internalTrafficPolicy"));
    json_decref(x);

    /* NodePort: node ports from 30000, a named targetPort kept. */
    json_t *np = req(201, "POST", SVCS,
                     "{'metadata':{'name':'np'},'spec':{'type':'NodePort','sessionAffinity':"
                     "'ClientIP','ports':[{'name':'a','port':80,'targetPort':'http'},{'name':'b',"
                     "'port':81,'nodePort':30000}]}}");
    cr_assert_eq(jint(np, "spec.ports.1.nodePort"), 30000);
    cr_assert_eq(jint(np, "spec.ports.0.nodePort"), 30001, "30000 was asked for");
    cr_assert_str_eq(jstr(np, "spec.ports.0.targetPort"), "http");
    cr_assert_str_eq(jstr(np, "spec.externalTrafficPolicy"), "Cluster");
    cr_assert_eq(jint(np, "spec.sessionAffinityConfig.clientIP.timeoutSeconds"), 10800);
    json_decref(np);
    st = req_fail(422, "Invalid", "POST", SVCS,
                  "{'metadata':{'name':'np2'},'spec':{'type':'NodePort','ports':[{'port':80,"
                  "'nodePort':30001}]}}");
    cr_assert_str_eq(jstr(st, "details.causes.0.message"),
                     "Invalid value: 30001: provided port is already allocated");
    json_decref(st);
}

Test(builtin_default, other_kinds)
{
    json_t *pvc = req(201, "POST", "/api/v1/namespaces/default/persistentvolumeclaims",
                      "{'metadata':{'name':'c'},'spec':{'accessModes':['ReadWriteOnce'],"
                      "'resources':{'requests':{'storage':'1Gi'}}}}");
    cr_assert_str_eq(jstr(pvc, "spec.volumeMode"), "Filesystem");
    json_decref(pvc);
    json_t *ns = req(201, "POST", "/api/v1/namespaces", "{'metadata':{'name':'team'}}");
    cr_assert_str_eq(json_string_value(json_object_get(jget(ns, "metadata.labels"),
                                                       "kubernetes.io/metadata.name")),
                     "team");
    cr_assert_str_eq(jstr(ns, "spec.finalizers.0"), "kubernetes");
    cr_assert_null(jget(ns, "metadata.generation"));
    json_decref(ns);
    json_t *s = req(201, "POST", "/api/v1/namespaces/default/secrets", "{'metadata':{'name':'s'}}");
    cr_assert_str_eq(jstr(s, "type"), "Opaque");
    cr_assert_null(jget(s, "metadata.generation"));
    json_decref(s);
}

Test(builtin_default, defaults_on_update_and_patch)
{
    json_t *d = req(201, "POST", DEPLOYS, "{'metadata':{'name':'d'},'spec':{" SEL TMPL(CTR) "}}");
    /* A PUT without the defaults gets them again: no spec change, no new generation. */
    json_t *u =
        req(200, "PUT", DEPLOYS "/d", "{'metadata':{'name':'d'},'spec':{" SEL TMPL(CTR) "}}");
    cr_assert_eq(jint(u, "spec.revisionHistoryLimit"), 10);
    cr_assert_str_eq(jstr(u, "spec.template.spec.dnsPolicy"), "ClusterFirst");
    cr_assert_eq(jint(u, "metadata.generation"), 1);
    cr_assert_eq(rv_of(u), rv_of(d), "the same object: a no-op");
    json_decref(u);
    /* A patch that removes a default gets it back. */
    json_t *p = req_ct(200, "PATCH", DEPLOYS "/d", MERGE,
                       "{'spec':{'progressDeadlineSeconds':null,'replicas':3}}");
    cr_assert_eq(jint(p, "spec.progressDeadlineSeconds"), 600);
    cr_assert_eq(jint(p, "metadata.generation"), 2);
    json_decref(p);
    /* A ConfigMap update never grows a generation. */
    json_decref(mk_cm("default", "cm", NULL));
    json_t *c = req_ct(200, "PATCH", "/api/v1/namespaces/default/configmaps/cm", MERGE,
                       "{'data':{'k':'changed'}}");
    cr_assert_null(jget(c, "metadata.generation"));
    json_decref(c);
    json_decref(d);
}

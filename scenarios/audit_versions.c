/*
 * audit_versions.c - group/versions an audit log may name that fakeapi
 * does not serve (removed beta versions), and their GA versions when the
 * conversion is trivial (see audit_versions.h).
 *
 * Pure functions over a constant table; any thread.
 */
#include "audit_versions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const scn__gv_map deprecated[] = {
    {"extensions", "v1beta1", "deployments", "apps", "v1"},
    {"extensions", "v1beta1", "daemonsets", "apps", "v1"},
    {"extensions", "v1beta1", "replicasets", "apps", "v1"},
    {"extensions", "v1beta1", "networkpolicies", "networking.k8s.io", "v1"},
    {"extensions", "v1beta1", NULL, NULL, NULL}, /* ingresses, podsecuritypolicies */
    {"apps", "v1beta1", NULL, "apps", "v1"},
    {"apps", "v1beta2", NULL, "apps", "v1"},
    {"batch", "v1beta1", "cronjobs", "batch", "v1"},
    {"policy", "v1beta1", "poddisruptionbudgets", "policy", "v1"},
    {"policy", "v1beta1", NULL, NULL, NULL},
    {"rbac.authorization.k8s.io", "v1beta1", NULL, "rbac.authorization.k8s.io", "v1"},
    {"rbac.authorization.k8s.io", "v1alpha1", NULL, "rbac.authorization.k8s.io", "v1"},
    {"coordination.k8s.io", "v1beta1", NULL, "coordination.k8s.io", "v1"},
    {"scheduling.k8s.io", "v1beta1", NULL, "scheduling.k8s.io", "v1"},
    {"storage.k8s.io", "v1beta1", NULL, "storage.k8s.io", "v1"},
    {"events.k8s.io", "v1beta1", NULL, "events.k8s.io", "v1"},
    {"node.k8s.io", "v1beta1", NULL, "node.k8s.io", "v1"},
    {"networking.k8s.io", "v1beta1", "ingressclasses", "networking.k8s.io", "v1"},
    {"networking.k8s.io", "v1beta1", NULL, NULL, NULL},
    {"autoscaling", "v2beta2", NULL, "autoscaling", "v2"},
    {"autoscaling", "v2beta1", NULL, NULL, NULL},
    {"apiextensions.k8s.io", "v1beta1", NULL, NULL, NULL},
    {"admissionregistration.k8s.io", "v1beta1", NULL, "admissionregistration.k8s.io", "v1"},
    {"discovery.k8s.io", "v1beta1", NULL, NULL, NULL},
    {"certificates.k8s.io", "v1beta1", NULL, NULL, NULL},
};

const scn__gv_map *scn__gv_find(const char *group, const char *version, const char *resource)
{
    if (!version)
        return NULL;
    for (size_t i = 0; i < sizeof deprecated / sizeof deprecated[0]; i++) {
        const scn__gv_map *m = &deprecated[i];
        if (!strcmp(m->group, group ? group : "") && !strcmp(m->version, version) &&
            (!m->resource || (resource && !strcmp(m->resource, resource))))
            return m;
    }
    return NULL;
}

void scn__gv_convert(json_t *obj, const scn__gv_map *m)
{
    char av[128];
    json_t *spec = json_object_get(obj, "spec");
    const char *kind = json_string_value(json_object_get(obj, "kind"));

    if (!json_is_object(obj))
        return;
    snprintf(av, sizeof av, "%s/%s", m->to_group, m->to_version);
    if (json_object_get(obj, "apiVersion"))
        json_object_set_new(obj, "apiVersion", json_string(av));
    /* extensions/v1beta1 and apps/v1beta1 defaulted the selector from the
     * template's labels; apps/v1 requires it. */
    if (kind && json_is_object(spec) && !json_object_get(spec, "selector") &&
        (!strcmp(kind, "Deployment") || !strcmp(kind, "DaemonSet") || !strcmp(kind, "ReplicaSet") ||
         !strcmp(kind, "StatefulSet"))) {
        json_t *labels = json_object_get(
            json_object_get(json_object_get(spec, "template"), "metadata"), "labels");
        if (json_is_object(labels))
            json_object_set_new(spec, "selector", json_pack("{s:O}", "matchLabels", labels));
    }
    if (json_is_object(spec))
        json_object_del(spec, "rollbackTo");
}

char *scn__gv_map_uri(const char *uri, const scn__gv_map *m)
{
    char from[160];
    char *out = NULL;
    size_t n;

    snprintf(from, sizeof from, "/apis/%s/%s/", m->group, m->version);
    n = strlen(from);
    if (strncmp(uri, from, n) != 0)
        return strdup(uri);
    if (asprintf(&out, "/apis/%s/%s/%s", m->to_group, m->to_version, uri + n) < 0)
        return NULL;
    return out;
}

/*
 * nodematch.c - pod-to-node fit: selectors, node affinity, taints
 * (nodematch.h), as the scheduler's NodeAffinity and TaintToleration
 * plugins decide the simple cases.
 */
#include "nodematch.h"

#include <stdlib.h>
#include <string.h>

#include "ctrl/object.h"
#include "podutil.h"
#include "scheduler.h"

static const char *str(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static bool in_values(const json_t *values, const char *v)
{
    size_t i;
    json_t *x;
    json_array_foreach(values, i, x) if (v && json_is_string(x) &&
                                         !strcmp(json_string_value(x), v)) return true;
    return false;
}

static bool number(const char *s, long long *out)
{
    char *end = NULL;
    if (!s || !*s)
        return false;
    *out = strtoll(s, &end, 10);
    return !*end;
}

/* One NodeSelectorRequirement against a value (NULL: the key is absent). */
static bool requirement(const json_t *req, const char *have)
{
    const char *op = str(req, "operator");
    const json_t *values = json_object_get(req, "values");
    if (!op)
        return false;
    if (!strcmp(op, "In"))
        return have && in_values(values, have);
    if (!strcmp(op, "NotIn"))
        return !have || !in_values(values, have);
    if (!strcmp(op, "Exists"))
        return have != NULL;
    if (!strcmp(op, "DoesNotExist"))
        return have == NULL;
    if (!strcmp(op, "Gt") || !strcmp(op, "Lt")) {
        long long a, b;
        if (!number(have, &a) || json_array_size(values) != 1 ||
            !number(json_string_value(json_array_get(values, 0)), &b))
            return false;
        return !strcmp(op, "Gt") ? a > b : a < b;
    }
    return false;
}

/* A NodeSelectorTerm: every requirement holds; an empty term matches
 * nothing. */
static bool term(const json_t *t, const json_t *node)
{
    const json_t *exprs = json_object_get(t, "matchExpressions");
    const json_t *fields = json_object_get(t, "matchFields");
    if (json_array_size(exprs) + json_array_size(fields) == 0)
        return false;
    const json_t *labels = ctrl_obj_get(node, "metadata.labels");
    size_t i;
    json_t *r;
    json_array_foreach(exprs, i, r)
    {
        const char *key = str(r, "key");
        if (!key || !requirement(r, str(labels, key)))
            return false;
    }
    json_array_foreach(fields, i, r)
    {
        const char *key = str(r, "key");
        if (!key || strcmp(key, "metadata.name") || !requirement(r, ctrl_obj_name(node)))
            return false;
    }
    return true;
}

bool kc__node_fits_selectors(const json_t *pod_spec, const json_t *node)
{
    const json_t *labels = ctrl_obj_get(node, "metadata.labels");
    if (!kc__map_matches(json_object_get(pod_spec, "nodeSelector"), labels))
        return false;
    const json_t *req = ctrl_obj_get(pod_spec, "affinity.nodeAffinity."
                                               "requiredDuringSchedulingIgnoredDuringExecution");
    if (!json_is_object(req))
        return true;
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(req, "nodeSelectorTerms"), i,
                       t) if (term(t, node)) return true;
    return false;
}

bool kc__tolerations_allow(const json_t *tolerations, const json_t *taint)
{
    size_t i;
    json_t *tol;
    json_array_foreach(tolerations, i, tol)
    {
        if (kc__tolerates(tol, taint))
            return true;
    }
    return false;
}

bool kc__tolerates_taints(const json_t *tolerations, const json_t *node, const char *effect)
{
    size_t i;
    json_t *taint;
    json_array_foreach(ctrl_obj_get(node, "spec.taints"), i, taint)
    {
        const char *e = str(taint, "effect");
        if (e && !strcmp(e, effect) && !kc__tolerations_allow(tolerations, taint))
            return false;
    }
    return true;
}

const char *kc__pod_target_node(const json_t *pod)
{
    const char *n = ctrl_obj_get_string(pod, "spec.nodeName");
    if (n && *n)
        return n;
    const json_t *req = ctrl_obj_get(pod, "spec.affinity.nodeAffinity."
                                          "requiredDuringSchedulingIgnoredDuringExecution");
    size_t i, j;
    json_t *t, *f;
    json_array_foreach(json_object_get(req, "nodeSelectorTerms"), i, t)
    {
        json_array_foreach(json_object_get(t, "matchFields"), j, f)
        {
            const json_t *values = json_object_get(f, "values");
            if (str(f, "key") && !strcmp(str(f, "key"), "metadata.name") && str(f, "operator") &&
                !strcmp(str(f, "operator"), "In") && json_array_size(values) == 1)
                return json_string_value(json_array_get(values, 0));
        }
    }
    return NULL;
}

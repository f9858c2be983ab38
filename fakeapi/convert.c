/*
 * convert.c - built-in objects between their storage version and the version
 * asked for (convert.h). The only kind with differing fields is
 * HorizontalPodAutoscaler: stored as autoscaling/v2, served as v1 too.
 *
 * The mapping follows the real server's conversion between v1 and its
 * internal version (which has v2's shape): v1's CPU target is v2's CPU
 * Utilization metric; other metrics, the current metrics, the conditions and
 * the scaling behavior travel in annotations, in v1's metric shapes.
 */
#include "convert.h"

#include <string.h>

#define ANN_METRICS "autoscaling.alpha.kubernetes.io/metrics"
#define ANN_CURRENT "autoscaling.alpha.kubernetes.io/current-metrics"
#define ANN_CONDITIONS "autoscaling.alpha.kubernetes.io/conditions"
#define ANN_BEHAVIOR "autoscaling.alpha.kubernetes.io/behavior"

static bool is_hpa_v1(const fakeapi__resource *res)
{
    return !res->custom && !strcmp(res->group, "autoscaling") &&
           !strcmp(res->kind, "HorizontalPodAutoscaler") && !strcmp(res->version, "v1");
}

/* events.k8s.io/v1 Event: a view, with other field names, of the core Events. */
static bool is_events_v1(const fakeapi__resource *res)
{
    return !res->custom && !strcmp(res->group, "events.k8s.io") && !strcmp(res->kind, "Event");
}

bool fakeapi__convert_needed(const fakeapi__resource *res)
{
    return is_hpa_v1(res) || is_events_v1(res);
}

/* ---- small helpers ---------------------------------------------------------- */

static json_t *get(json_t *o, const char *k)
{
    return json_object_get(o, k);
}

/* dst[dk] = src[sk] when present. */
static void cp(json_t *dst, const char *dk, json_t *src, const char *sk)
{
    json_t *v = get(src, sk);
    if (v)
        json_object_set(dst, dk, v);
}

/* A non-pointer Quantity in Go: written as "0" when unset. */
static void cp_quantity(json_t *dst, const char *dk, json_t *src, const char *sk)
{
    json_t *v = get(src, sk);
    json_object_set_new(dst, dk, v ? json_incref(v) : json_string("0"));
}

static bool str_is(json_t *o, const char *k, const char *want)
{
    const char *s = json_string_value(get(o, k));
    return s && !strcmp(s, want);
}

/* Annotations object of obj, created when create is set. */
static json_t *annotations(json_t *obj, bool create)
{
    json_t *meta = get(obj, "metadata");
    if (!json_is_object(meta)) {
        if (!create)
            return NULL;
        meta = json_object();
        json_object_set_new(obj, "metadata", meta);
    }
    json_t *a = get(meta, "annotations");
    if (!json_is_object(a) && create) {
        a = json_object();
        json_object_set_new(meta, "annotations", a);
    }
    return json_is_object(a) ? a : NULL;
}

static void annotate(json_t *obj, const char *key, json_t *value)
{
    char *text = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(value);
    if (text)
        json_object_set_new(annotations(obj, true), key, json_string(text));
    free(text);
}

/* Take annotation key out of obj, parsed; NULL when absent; *bad on invalid JSON. */
static json_t *take_annotation(json_t *obj, const char *key, bool *bad)
{
    json_t *a = annotations(obj, false);
    const char *text = json_string_value(get(a, key));
    if (!text)
        return NULL;
    json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
    if (!v) {
        *bad = true;
        return NULL;
    }
    json_object_del(a, key);
    if (!json_object_size(a))
        json_object_del(get(obj, "metadata"), "annotations");
    return v;
}

static json_t *metric_id(json_t *name, json_t *selector)
{
    json_t *m = json_object();
    if (name)
        json_object_set(m, "name", name);
    if (selector)
        json_object_set(m, "selector", selector);
    return m;
}

static bool is_cpu_utilization(json_t *m)
{
    json_t *r = get(m, "resource");
    return str_is(m, "type", "Resource") && str_is(r, "name", "cpu") &&
           get(get(r, "target"), "averageUtilization");
}

/*
 * A metric spec (the "target" side) and a metric status (the "current" side)
 * have the same shapes in both versions, with "target"/"current" in the key
 * names; one pair of functions converts both. v1 writes some quantities as
 * plain values (Go non-pointers, "0" when unset) where v2 has pointers.
 */
typedef struct side {
    bool status;
    const char *inner;      /* v2: "target" or "current" */
    const char *value;      /* v1: "targetValue" or "currentValue" */
    const char *avg_value;  /* v1: "targetAverageValue" or "currentAverageValue" */
    const char *avg_util;   /* v1: "targetAverageUtilization" or "currentAverageUtilization" */
} side;

static const side spec_side = {false, "target", "targetValue", "targetAverageValue",
                               "targetAverageUtilization"};
static const side status_side = {true, "current", "currentValue", "currentAverageValue",
                                 "currentAverageUtilization"};

/* ---- metrics: v2 -> v1 ------------------------------------------------------ */

static json_t *described_ref(json_t *s)
{
    json_t *ref = json_object(), *d = get(s, "describedObject");
    cp(ref, "kind", d, "kind");
    cp(ref, "name", d, "name");
    cp(ref, "apiVersion", d, "apiVersion");
    return ref;
}

static json_t *metric_v2_to_v1(json_t *m, const side *sd)
{
    json_t *out = json_object(), *s, *t;
    cp(out, "type", m, "type");
    if ((s = get(m, "object"))) {
        json_t *o = json_object();
        t = get(s, sd->inner);
        json_object_set_new(o, "target", described_ref(s));
        cp(o, "metricName", get(s, "metric"), "name");
        cp_quantity(o, sd->value, t, "value");
        cp(o, "selector", get(s, "metric"), "selector");
        cp(o, "averageValue", t, "averageValue");
        json_object_set_new(out, "object", o);
    }
    if ((s = get(m, "pods"))) {
        json_t *o = json_object();
        cp(o, "metricName", get(s, "metric"), "name");
        cp_quantity(o, sd->avg_value, get(s, sd->inner), "averageValue");
        cp(o, "selector", get(s, "metric"), "selector");
        json_object_set_new(out, "pods", o);
    }
    const char *const res_keys[] = {"resource", "containerResource"};
    for (int i = 0; i < 2; i++) {
        if (!(s = get(m, res_keys[i])))
            continue;
        json_t *o = json_object();
        t = get(s, sd->inner);
        cp(o, "name", s, "name");
        cp(o, sd->avg_util, t, "averageUtilization");
        (sd->status ? cp_quantity : cp)(o, sd->avg_value, t, "averageValue");
        cp(o, "container", s, "container");
        json_object_set_new(out, res_keys[i], o);
    }
    if ((s = get(m, "external"))) {
        json_t *o = json_object();
        t = get(s, sd->inner);
        cp(o, "metricName", get(s, "metric"), "name");
        cp(o, "metricSelector", get(s, "metric"), "selector");
        (sd->status ? cp_quantity : cp)(o, sd->value, t, "value");
        cp(o, sd->avg_value, t, "averageValue");
        json_object_set_new(out, "external", o);
    }
    return out;
}

/* ---- metrics: v1 -> v2 ------------------------------------------------------ */

/* v2's target (with its type) or current (without). */
static json_t *inner(const side *sd, const char *type, json_t *value, json_t *avg_value,
                     json_t *avg_util)
{
    json_t *t = sd->status ? json_object() : json_pack("{s:s}", "type", type);
    if (value)
        json_object_set(t, "value", value);
    if (avg_value)
        json_object_set(t, "averageValue", avg_value);
    if (avg_util)
        json_object_set(t, "averageUtilization", avg_util);
    return t;
}

static json_t *metric_v1_to_v2(json_t *m, const side *sd)
{
    json_t *out = json_object(), *s;
    cp(out, "type", m, "type");
    if ((s = get(m, "object"))) {
        json_t *o = json_object();
        json_object_set_new(o, "metric", metric_id(get(s, "metricName"), get(s, "selector")));
        json_object_set_new(o, sd->inner,
                            inner(sd, get(s, "averageValue") ? "AverageValue" : "Value",
                                  get(s, sd->value), get(s, "averageValue"), NULL));
        if (get(s, "target"))
            json_object_set(o, "describedObject", get(s, "target"));
        json_object_set_new(out, "object", o);
    }
    if ((s = get(m, "pods"))) {
        json_t *o = json_object();
        json_object_set_new(o, "metric", metric_id(get(s, "metricName"), get(s, "selector")));
        json_object_set_new(o, sd->inner,
                            inner(sd, "AverageValue", NULL, get(s, sd->avg_value), NULL));
        json_object_set_new(out, "pods", o);
    }
    const char *const res_keys[] = {"resource", "containerResource"};
    for (int i = 0; i < 2; i++) {
        if (!(s = get(m, res_keys[i])))
            continue;
        json_t *o = json_object(), *util = get(s, sd->avg_util);
        cp(o, "name", s, "name");
        json_object_set_new(o, sd->inner, inner(sd, util ? "Utilization" : "AverageValue", NULL,
                                                get(s, sd->avg_value), util));
        cp(o, "container", s, "container");
        json_object_set_new(out, res_keys[i], o);
    }
    if ((s = get(m, "external"))) {
        json_t *o = json_object();
        json_object_set_new(o, "metric",
                            metric_id(get(s, "metricName"), get(s, "metricSelector")));
        json_object_set_new(o, sd->inner,
                            inner(sd, get(s, sd->value) ? "Value" : "AverageValue",
                                  get(s, sd->value), get(s, sd->avg_value), NULL));
        json_object_set_new(out, "external", o);
    }
    return out;
}

/* ---- the object ------------------------------------------------------------- */

static const char *const common_status[] = {"observedGeneration", "lastScaleTime",
                                            "currentReplicas", "desiredReplicas", NULL};

static int hpa_v2_to_v1(json_t *obj)
{
    json_t *spec = get(obj, "spec"), *status = get(obj, "status");
    json_t *s1 = json_object(), *st1 = json_object();
    cp(s1, "scaleTargetRef", spec, "scaleTargetRef");
    cp(s1, "minReplicas", spec, "minReplicas");
    cp(s1, "maxReplicas", spec, "maxReplicas");
    json_t *others = json_array(), *m;
    size_t i;
    bool cpu_seen = false;
    json_array_foreach(get(spec, "metrics"), i, m)
    {
        json_t *r = get(m, "resource");
        if (!cpu_seen && str_is(m, "type", "Resource") && str_is(r, "name", "cpu")) {
            cpu_seen = true;
            cp(s1, "targetCPUUtilizationPercentage", get(r, "target"), "averageUtilization");
        }
        if (!is_cpu_utilization(m))
            json_array_append_new(others, metric_v2_to_v1(m, &spec_side));
    }
    json_t *cur = json_array();
    json_array_foreach(get(status, "currentMetrics"), i, m)
    {
        json_t *r = get(m, "resource");
        if (str_is(m, "type", "Resource") && str_is(r, "name", "cpu"))
            cp(st1, "currentCPUUtilizationPercentage", get(r, "current"), "averageUtilization");
        json_array_append_new(cur, metric_v2_to_v1(m, &status_side));
    }
    for (const char *const *k = common_status; *k; k++)
        cp(st1, *k, status, *k);
    if (json_array_size(others))
        annotate(obj, ANN_METRICS, json_incref(others));
    if (json_array_size(cur))
        annotate(obj, ANN_CURRENT, json_incref(cur));
    if (json_array_size(get(status, "conditions")))
        annotate(obj, ANN_CONDITIONS, json_incref(get(status, "conditions")));
    if (get(spec, "behavior"))
        annotate(obj, ANN_BEHAVIOR, json_incref(get(spec, "behavior")));
    json_decref(others);
    json_decref(cur);
    if (spec)
        json_object_set_new(obj, "spec", s1);
    else
        json_decref(s1);
    if (status)
        json_object_set_new(obj, "status", st1);
    else
        json_decref(st1);
    return 0;
}

static int hpa_v1_to_v2(json_t *obj)
{
    bool bad = false;
    json_t *spec = get(obj, "spec"), *status = get(obj, "status");
    json_t *others = take_annotation(obj, ANN_METRICS, &bad);
    json_t *cur = take_annotation(obj, ANN_CURRENT, &bad);
    json_t *conds = take_annotation(obj, ANN_CONDITIONS, &bad);
    json_t *behavior = take_annotation(obj, ANN_BEHAVIOR, &bad);
    json_t *s2 = json_object(), *st2 = json_object();
    cp(s2, "scaleTargetRef", spec, "scaleTargetRef");
    cp(s2, "minReplicas", spec, "minReplicas");
    cp(s2, "maxReplicas", spec, "maxReplicas");
    json_t *metrics = json_array(), *m;
    size_t i;
    json_array_foreach(others, i, m) json_array_append_new(metrics, metric_v1_to_v2(m, &spec_side));
    json_t *cpu = get(spec, "targetCPUUtilizationPercentage");
    if (cpu || !json_array_size(metrics)) {
        /* v1's CPU target; without any metric, the implicit default of 80%. */
        json_t *util = cpu ? json_incref(cpu) : json_integer(80);
        json_array_append_new(
            metrics, json_pack("{s:s, s:{s:s, s:o}}", "type", "Resource", "resource", "name", "cpu",
                               "target", inner(&spec_side, "Utilization", NULL, NULL, util)));
        json_decref(util);
    }
    json_object_set_new(s2, "metrics", metrics);
    if (behavior)
        json_object_set_new(s2, "behavior", behavior);
    for (const char *const *k = common_status; *k; k++)
        cp(st2, *k, status, *k);
    if (cur) {
        json_t *list = json_array();
        json_array_foreach(cur, i, m) json_array_append_new(list, metric_v1_to_v2(m, &status_side));
        json_object_set_new(st2, "currentMetrics", list);
    } else if (get(status, "currentCPUUtilizationPercentage")) {
        json_object_set_new(
            st2, "currentMetrics",
            json_pack("[{s:s, s:{s:s, s:{s:O}}}]", "type", "Resource", "resource", "name", "cpu",
                      "current", "averageUtilization",
                      get(status, "currentCPUUtilizationPercentage")));
    }
    if (conds)
        json_object_set_new(st2, "conditions", conds);
    json_decref(others);
    json_decref(cur);
    json_object_set_new(obj, "spec", s2);
    if (status || json_object_size(st2))
        json_object_set_new(obj, "status", st2);
    else
        json_decref(st2);
    return bad ? -1 : 0;
}

/* ---- Events: core/v1 <-> events.k8s.io/v1 ---------------------------------- */

/* {core name, events.k8s.io name}, in the events.k8s.io type's field order. */
static const char *const event_fields[][2] = {
    {"eventTime", "eventTime"},
    {"series", "series"},
    {"reportingComponent", "reportingController"},
    {"reportingInstance", "reportingInstance"},
    {"action", "action"},
    {"reason", "reason"},
    {"involvedObject", "regarding"},
    {"related", "related"},
    {"message", "note"},
    {"type", "type"},
    {"source", "deprecatedSource"},
    {"firstTimestamp", "deprecatedFirstTimestamp"},
    {"lastTimestamp", "deprecatedLastTimestamp"},
    {"count", "deprecatedCount"},
};

/* Rename obj's event fields from column from to column to (0 core, 1 events). */
static void event_rename(json_t *obj, int from, int to)
{
    json_t *moved = json_object();
    size_t n = sizeof event_fields / sizeof event_fields[0];
    for (size_t i = 0; i < n; i++) {
        json_t *v = get(obj, event_fields[i][from]);
        if (v) {
            json_object_set(moved, event_fields[i][to], v);
            json_object_del(obj, event_fields[i][from]);
        }
    }
    json_object_update(obj, moved);
    json_decref(moved);
}

int fakeapi__convert_out(const fakeapi__resource *res, json_t *obj)
{
    if (is_events_v1(res))
        event_rename(obj, 0, 1);
    int rc = is_hpa_v1(res) ? hpa_v2_to_v1(obj) : 0;
    json_object_set_new(obj, "apiVersion", json_string(res->group_version));
    return rc;
}

int fakeapi__convert_in(const fakeapi__resource *res, json_t *obj)
{
    if (is_events_v1(res)) {
        event_rename(obj, 1, 0);
        json_object_set_new(obj, "apiVersion", json_string("v1"));
        return 0;
    }
    if (!is_hpa_v1(res))
        return 0;
    int rc = hpa_v1_to_v2(obj);
    json_object_set_new(obj, "apiVersion", json_string("autoscaling/v2"));
    return rc;
}

/*
 * test_convert.c - HorizontalPodAutoscaler between autoscaling/v2 (stored)
 * and autoscaling/v1 (convert.h): the CPU target, the annotations that carry
 * what v1 cannot say, and round trips that lose nothing.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "registry.h"

static fakeapi__registry *reg;
static fakeapi__resource *v1, *v2;

static void init(void)
{
    reg = fakeapi__registry_new();
    v1 = fakeapi__registry_find(reg, "autoscaling", "v1", "horizontalpodautoscalers");
    v2 = fakeapi__registry_find(reg, "autoscaling", "v2", "horizontalpodautoscalers");
    cr_assert(v1 && v2);
}

static void fini(void)
{
    fakeapi__resource_unref(v1);
    fakeapi__resource_unref(v2);
    fakeapi__registry_free(reg);
}

TestSuite(convert, .init = init, .fini = fini);

static json_t *load(const char *single_quoted)
{
    char *s = strdup(single_quoted);
    for (char *p = s; *p; p++)
        if (*p == '\'')
            *p = '"';
    json_error_t e;
    json_t *v = json_loads(s, 0, &e);
    cr_assert_not_null(v, "%s: %s", e.text, s);
    free(s);
    return v;
}

static void assert_json(json_t *got, const char *want)
{
    json_t *w = load(want);
    char *g = json_dumps(got, JSON_SORT_KEYS | JSON_COMPACT);
    char *ws = json_dumps(w, JSON_SORT_KEYS | JSON_COMPACT);
    cr_assert_str_eq(g, ws);
    free(g);
    free(ws);
    json_decref(w);
}

Test(convert, only_hpa_v1_needs_it)
{
    cr_assert(fakeapi__convert_needed(v1));
    cr_assert_not(fakeapi__convert_needed(v2));
    fakeapi__resource *cm = fakeapi__registry_find(reg, "", "v1", "configmaps");
    cr_assert_not(fakeapi__convert_needed(cm));
    json_t *o = load("{'apiVersion':'v1','kind':'ConfigMap','data':{'a':'b'}}");
    cr_assert_eq(fakeapi__convert_in(cm, o), 0);
    assert_json(o, "{'apiVersion':'v1','kind':'ConfigMap','data':{'a':'b'}}");
    json_decref(o);
    fakeapi__resource_unref(cm);
}

Test(convert, v1_cpu_target_is_a_v2_metric)
{
    json_t *o = load("{'apiVersion':'autoscaling/v1','kind':'HorizontalPodAutoscaler','metadata':"
                     "{'name':'h'},'spec':{'scaleTargetRef':{'kind':'Deployment','name':'web',"
                     "'apiVersion':'apps/v1'},'minReplicas':2,'maxReplicas':5,"
                     "'targetCPUUtilizationPercentage':70}}");
    cr_assert_eq(fakeapi__convert_in(v1, o), 0);
    assert_json(o, "{'apiVersion':'autoscaling/v2','kind':'HorizontalPodAutoscaler','metadata':"
                   "{'name':'h'},'spec':{'scaleTargetRef':{'kind':'Deployment','name':'web',"
                   "'apiVersion':'apps/v1'},'minReplicas':2,'maxReplicas':5,'metrics':[{'type':"
                   "'Resource','resource':{'name':'cpu','target':{'type':'Utilization',"
                   "'averageUtilization':70}}}]}}");
    cr_assert_eq(fakeapi__convert_out(v1, o), 0);
    assert_json(o, "{'apiVersion':'autoscaling/v1','kind':'HorizontalPodAutoscaler','metadata':"
                   "{'name':'h'},'spec':{'scaleTargetRef':{'kind':'Deployment','name':'web',"
                   "'apiVersion':'apps/v1'},'minReplicas':2,'maxReplicas':5,"
                   "'targetCPUUtilizationPercentage':70}}");
    json_decref(o);
}

Test(convert, v1_without_target_gets_the_implicit_80_percent)
{
    json_t *o = load("{'spec':{'scaleTargetRef':{'kind':'Deployment','name':'web'},'maxReplicas':3}}");
    cr_assert_eq(fakeapi__convert_in(v1, o), 0);
    assert_json(json_object_get(json_object_get(o, "spec"), "metrics"),
                "[{'type':'Resource','resource':{'name':'cpu','target':{'type':'Utilization',"
                "'averageUtilization':80}}}]");
    json_decref(o);
}

/* What v1 cannot express goes into annotations and comes back unchanged. */
Test(convert, v2_round_trips_through_v1)
{
    const char *v2doc =
        "{'apiVersion':'autoscaling/v2','kind':'HorizontalPodAutoscaler','metadata':{'name':'h',"
        "'annotations':{'keep':'me'}},'spec':{'scaleTargetRef':{'kind':'Deployment','name':'web'},"
        "'minReplicas':1,'maxReplicas':9,'metrics':[{'type':'Pods','pods':{'metric':{'name':'qps'},"
        "'target':{'type':'AverageValue','averageValue':'10'}}},{'type':'Resource','resource':{"
        "'name':'memory','target':{'type':'AverageValue','averageValue':'100Mi'}}},{'type':"
        "'External','external':{'metric':{'name':'queue'},'target':{'type':'Value','value':'5'}}},"
        "{'type':'Resource','resource':{'name':'cpu','target':{'type':'Utilization',"
        "'averageUtilization':60}}}],'behavior':{'scaleDown':{'stabilizationWindowSeconds':30}}},"
        "'status':{'currentReplicas':2,'desiredReplicas':3,'currentMetrics':[{'type':'Resource',"
        "'resource':{'name':'cpu','current':{'averageUtilization':55,'averageValue':'120m'}}}],"
        "'conditions':[{'type':'AbleToScale','status':'True','reason':'ReadyForNewScale'}]}}";
    json_t *o = load(v2doc);
    cr_assert_eq(fakeapi__convert_out(v1, o), 0);
    json_t *spec = json_object_get(o, "spec"), *st = json_object_get(o, "status");
    cr_assert_eq(json_integer_value(json_object_get(spec, "targetCPUUtilizationPercentage")), 60);
    cr_assert_null(json_object_get(spec, "metrics"));
    cr_assert_eq(json_integer_value(json_object_get(st, "currentCPUUtilizationPercentage")), 55);
    json_t *ann = json_object_get(json_object_get(o, "metadata"), "annotations");
    const char *metrics =
        json_string_value(json_object_get(ann, "autoscaling.alpha.kubernetes.io/metrics"));
    cr_assert_not_null(metrics);
    /* v1's shapes inside the annotation. */
    cr_assert_not_null(strstr(metrics, "\"metricName\":\"qps\""), "%s", metrics);
    cr_assert_not_null(strstr(metrics, "\"targetAverageValue\":\"100Mi\""), "%s", metrics);
    cr_assert_null(strstr(metrics, "cpu"), "%s", metrics);
    cr_assert_not_null(json_object_get(ann, "autoscaling.alpha.kubernetes.io/current-metrics"));
    cr_assert_not_null(json_object_get(ann, "autoscaling.alpha.kubernetes.io/conditions"));
    cr_assert_not_null(json_object_get(ann, "autoscaling.alpha.kubernetes.io/behavior"));
    cr_assert_eq(fakeapi__convert_in(v1, o), 0);
    /* Back in v2: the CPU metric now comes last (after the annotation's), as upstream. */
    assert_json(o,
                "{'apiVersion':'autoscaling/v2','kind':'HorizontalPodAutoscaler','metadata':{'name':"
                "'h','annotations':{'keep':'me'}},'spec':{'scaleTargetRef':{'kind':'Deployment',"
                "'name':'web'},'minReplicas':1,'maxReplicas':9,'metrics':[{'type':'Pods','pods':{"
                "'metric':{'name':'qps'},'target':{'type':'AverageValue','averageValue':'10'}}},{"
                "'type':'Resource','resource':{'name':'memory','target':{'type':'AverageValue',"
                "'averageValue':'100Mi'}}},{'type':'External','external':{'metric':{'name':'queue'},"
                "'target':{'type':'Value','value':'5'}}},{'type':'Resource','resource':{'name':"
                "'cpu','target':{'type':'Utilization','averageUtilization':60}}}],'behavior':{"
                "'scaleDown':{'stabilizationWindowSeconds':30}}},'status':{'currentReplicas':2,"
                "'desiredReplicas':3,'currentMetrics':[{'type':'Resource','resource':{'name':'cpu',"
                "'current':{'averageUtilization':55,'averageValue':'120m'}}}],'conditions':[{'type':"
                "'AbleToScale','status':'True','reason':'ReadyForNewScale'}]}}");
    json_decref(o);
}

Test(convert, a_bad_annotation_is_an_error)
{
    json_t *o = load("{'metadata':{'annotations':{'autoscaling.alpha.kubernetes.io/metrics':"
                     "'not json'}},'spec':{'maxReplicas':3}}");
    cr_assert_eq(fakeapi__convert_in(v1, o), -1);
    json_decref(o);
}

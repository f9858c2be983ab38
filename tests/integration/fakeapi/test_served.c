/*
 * test_served.c - every built-in resource the type tables list is served
 * over HTTP as the real server serves it: discovery (scope, verbs, short
 * names, categories, subresources and their kinds), group order and
 * preferred versions, the verbs enforced (405 for the others), and a
 * round trip of an object of each stored kind.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakeapi/fakeapi.h"
#include "apitest.h"
#include "strbuf.h"
#include "types.h"

TestSuite(served, .init = setup, .fini = teardown);

static const char *gv_path(const fakeapi__tres *t)
{
    return *t->group ? S("/apis/%s/%s", t->group, t->version) : S("/api/%s", t->version);
}

static json_t *entry(json_t *list, const char *name)
{
    size_t i;
    json_t *e;
    json_array_foreach(jget(list, "resources"), i, e) if (!strcmp(jstr(e, "name"), name)) return e;
    return NULL;
}

static char *verbs_csv(const json_t *e)
{
    static char buf[256];
    buf[0] = '\0';
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(e, "verbs"), i, v)
    {
        if (i)
            strcat(buf, ",");
        strcat(buf, json_string_value(v));
    }
    return buf;
}

Test(served, every_table_row_is_in_discovery)
{
    for (size_t i = 0; i < fakeapi__ntress; i++) {
        const fakeapi__tres *t = &fakeapi__tress[i];
        json_t *list = req(200, "GET", gv_path(t), NULL);
        json_t *e = entry(list, t->resource);
        cr_assert_not_null(e, "%s %s not in discovery", gv_path(t), t->resource);
        cr_assert_str_eq(jstr(e, "kind"), t->kind, "%s", t->resource);
        cr_assert_eq(json_is_true(json_object_get(e, "namespaced")), t->namespaced, "%s",
                     t->resource);
        cr_assert_str_eq(verbs_csv(e), t->verbs, "%s", t->resource);
        json_decref(list);
    }
}

Test(served, subresource_kinds_and_short_names)
{
    json_t *core = req(200, "GET", "/api/v1", NULL);
    json_t *ev = entry(core, "pods/eviction");
    cr_assert_str_eq(jstr(ev, "group"), "policy");
    cr_assert_str_eq(jstr(ev, "version"), "v1");
    cr_assert_str_eq(jstr(ev, "kind"), "Eviction");
    cr_assert_str_eq(verbs_csv(ev), "create");
    cr_assert_str_eq(jstr(entry(core, "serviceaccounts/token"), "group"), "authentication.k8s.io");
    cr_assert_str_eq(verbs_csv(entry(core, "pods/log")), "get");
    cr_assert_str_eq(jstr(entry(core, "pods"), "shortNames.0"), "po");
    cr_assert_str_eq(jstr(entry(core, "pods"), "categories.0"), "all");
    cr_assert_null(json_object_get(entry(core, "secrets"), "shortNames"));
    json_decref(core);
    json_t *apps = req(200, "GET", "/apis/apps/v1", NULL);
    cr_assert_str_eq(jstr(entry(apps, "deployments/scale"), "group"), "autoscaling");
    json_decref(apps);
}

Test(served, groups_and_preferred_versions)
{
    json_t *g = req(200, "GET", "/apis/autoscaling", NULL);
    cr_assert_str_eq(jstr(g, "preferredVersion.version"), "v2");
    cr_assert_str_eq(jstr(g, "versions.0.version"), "v2");
    cr_assert_str_eq(jstr(g, "versions.1.version"), "v1");
    json_decref(g);
    static const char *const want[] = {
        "policy", "networking.k8s.io", "discovery.k8s.io", "storage.k8s.io",
        "scheduling.k8s.io", "node.k8s.io", "certificates.k8s.io",
        "admissionregistration.k8s.io", "flowcontrol.apiserver.k8s.io",
        "authentication.k8s.io", "authorization.k8s.io", "apiregistration.k8s.io"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        json_t *d = req(200, "GET", S("/apis/%s", want[i]), NULL);
        cr_assert_str_eq(jstr(d, "kind"), "APIGroup");
        json_decref(d);
    }
}

Test(served, verbs_outside_the_list_are_405)
{
    json_decref(req_fail(405, "MethodNotAllowed", "POST", "/api/v1/componentstatuses",
                         "{'metadata':{'name':'x'}}"));
    json_decref(req_fail(405, "MethodNotAllowed", "DELETE", "/api/v1/namespaces", NULL));
    json_decref(req_fail(405, "MethodNotAllowed", "GET",
                         "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", NULL));
    json_decref(req_fail(405, "MethodNotAllowed", "GET", "/api/v1/namespaces/default/bindings",
                         NULL));
    /* What the list allows still works. */
    json_decref(req(200, "GET", "/api/v1/componentstatuses", NULL));
    json_decref(req(200, "GET", "/api/v1/namespaces", NULL));
}

Test(served, kinds_of_new_groups_round_trip)
{
    json_t *o = req(201, "POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
                    "{'apiVersion':'policy/v1','kind':'PodDisruptionBudget','metadata':{'name':"
                    "'web'},'spec':{'minAvailable':1,'selector':{'matchLabels':{'app':'web'}}}}");
    json_decref(o);
    o = req(200, "GET", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/web", NULL);
    cr_assert_eq(jint(o, "spec.minAvailable"), 1);
    json_decref(o);
    o = req(201, "POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
            "{'apiVersion':'scheduling.k8s.io/v1','kind':'PriorityClass','metadata':{'name':"
            "'high'},'value':1000}");
    json_decref(o);
    o = req(200, "GET", "/apis/scheduling.k8s.io/v1/priorityclasses/high", NULL);
    cr_assert_eq(jint(o, "value"), 1000);
    json_decref(o);
}

#define HPA1 "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers"
#define HPA2 "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers"

/* Stored once as v2, read and written through either version, converted. */
Test(served, hpa_is_converted_between_v1_and_v2)
{
    json_t *o = req(201, "POST", HPA1,
                    "{'apiVersion':'autoscaling/v1','kind':'HorizontalPodAutoscaler','metadata':{"
                    "'name':'h'},'spec':{'scaleTargetRef':{'apiVersion':'apps/v1','kind':"
                    "'Deployment','name':'web'},'minReplicas':2,'maxReplicas':5,"
                    "'targetCPUUtilizationPercentage':70}}");
    cr_assert_str_eq(jstr(o, "apiVersion"), "autoscaling/v1");
    cr_assert_eq(jint(o, "spec.targetCPUUtilizationPercentage"), 70);
    json_decref(o);
    o = req(200, "GET", S("%s/h", HPA2), NULL);
    cr_assert_str_eq(jstr(o, "apiVersion"), "autoscaling/v2");
    cr_assert_str_eq(jstr(o, "spec.metrics.0.resource.name"), "cpu");
    cr_assert_eq(jint(o, "spec.metrics.0.resource.target.averageUtilization"), 70);
    cr_assert_null(jget(o, "spec.targetCPUUtilizationPercentage"));
    json_decref(o);
    /* A v1 watch sees v1 objects. */
    wstream *w = ws_start_ok(S("%s?watch=true&resourceVersion=0", HPA1), NULL, 2000);
    json_t *ev = ws_next(w, 2000);
    cr_assert_not_null(ev);
    cr_assert_str_eq(jstr(ev, "object.apiVersion"), "autoscaling/v1");
    cr_assert_eq(jint(ev, "object.spec.targetCPUUtilizationPercentage"), 70);
    json_decref(ev);
    /* A merge patch through v1 changes the v2 metric. */
    json_decref(req_ct(200, "PATCH", S("%s/h", HPA1), "application/merge-patch+json",
                       "{'spec':{'targetCPUUtilizationPercentage':40}}"));
    ev = ws_next(w, 2000);
    cr_assert_not_null(ev);
    cr_assert_str_eq(jstr(ev, "type"), "MODIFIED");
    cr_assert_eq(jint(ev, "object.spec.targetCPUUtilizationPercentage"), 40);
    json_decref(ev);
    ws_close(w);
    o = req(200, "GET", S("%s/h", HPA2), NULL);
    cr_assert_eq(jint(o, "spec.metrics.0.resource.target.averageUtilization"), 40);
    json_decref(o);
    /* v2-only metrics survive a v1 read-modify-write. */
    json_decref(req_ct(200, "PATCH", S("%s/h", HPA2), "application/merge-patch+json",
                       "{'spec':{'metrics':[{'type':'Pods','pods':{'metric':{'name':'qps'},"
                       "'target':{'type':'AverageValue','averageValue':'10'}}}]}}"));
    o = req(200, "GET", S("%s/h", HPA1), NULL);
    cr_assert_null(jget(o, "spec.targetCPUUtilizationPercentage"));
    const char *ann = json_string_value(json_object_get(
        jget(o, "metadata.annotations"), "autoscaling.alpha.kubernetes.io/metrics"));
    cr_assert_not_null(ann);
    cr_assert_not_null(strstr(ann, "\"metricName\":\"qps\""), "%s", ann);
    /* Written back whole through v1 (kubectl edit): the v2 object is unchanged. */
    char *body = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    json_decref(req(200, "PUT", S("%s/h", HPA1), body));
    free(body);
    o = req(200, "GET", S("%s/h", HPA2), NULL);
    cr_assert_str_eq(jstr(o, "spec.metrics.0.pods.metric.name"), "qps");
    cr_assert_eq(json_array_size(jget(o, "spec.metrics")), 1);
    cr_assert_null(jget(o, "metadata.annotations"));
    json_decref(o);
}

#define PARTIAL "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
#define PARTIAL_LIST                                                                     \
    "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1," \
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"

static size_t collect(char *p, size_t size, size_t n, void *ud)
{
    fakeapi__strbuf_add(ud, p, size * n);
    return size * n;
}

/* GET path with an Accept header; asserts the status, returns the JSON body. */
static json_t *get_accept(long want, const char *path, const char *accept)
{
    char url[1024], hdr[512];
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", fakeapi_port(srv), path);
    snprintf(hdr, sizeof hdr, "Accept: %s", accept);
    CURL *h = curl_easy_init();
    struct curl_slist *hl = curl_slist_append(NULL, hdr);
    fakeapi__strbuf b = {.max = 1u << 24};
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    cr_assert_eq(curl_easy_perform(h), CURLE_OK);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_slist_free_all(hl);
    curl_easy_cleanup(h);
    size_t len;
    char *body = fakeapi__strbuf_take(&b, &len);
    cr_assert_eq(status, want, "%s: %ld %s", path, status, body ? body : "");
    json_t *j = body ? json_loadb(body, len, 0, NULL) : NULL;
    free(body);
    return j;
}

Test(served, metadata_only_clients_get_partial_objects)
{
    json_decref(mk_cm("default", "p1", "{'a':'b'}"));
    json_t *o = get_accept(200, "/api/v1/namespaces/default/configmaps/p1", PARTIAL);
    cr_assert_str_eq(jstr(o, "kind"), "PartialObjectMetadata");
    cr_assert_str_eq(jstr(o, "apiVersion"), "meta.k8s.io/v1");
    cr_assert_str_eq(jstr(o, "metadata.name"), "p1");
    cr_assert_null(json_object_get(o, "data"));
    json_decref(o);
    o = get_accept(200, "/api/v1/namespaces/default/configmaps", PARTIAL_LIST);
    cr_assert_str_eq(jstr(o, "kind"), "PartialObjectMetadataList");
    cr_assert_str_eq(jstr(o, "apiVersion"), "meta.k8s.io/v1");
    cr_assert_str_eq(jstr(o, "items.0.kind"), "PartialObjectMetadata");
    cr_assert_not_null(jstr(o, "metadata.resourceVersion"));
    json_decref(o);
}

Test(served, unwritable_media_types_are_406)
{
    json_t *st = get_accept(406, "/api/v1/namespaces/default/configmaps",
                            "application/vnd.kubernetes.protobuf");
    assert_failure(st, 406, "NotAcceptable");
    json_decref(st);
    json_decref(get_accept(406, "/apis", "application/yaml"));
    json_decref(get_accept(200, "/apis", "application/json"));
}

/* events.k8s.io/v1 is a view of the core Events under other field names. */
Test(served, events_are_one_store_under_two_groups)
{
    wstream *w = ws_start_ok("/apis/events.k8s.io/v1/namespaces/default/events?watch=true", NULL,
                             2000);
    json_t *o = req(201, "POST", "/apis/events.k8s.io/v1/namespaces/default/events",
                    "{'apiVersion':'events.k8s.io/v1','kind':'Event','metadata':{'name':'e1'},"
                    "'eventTime':'2026-01-02T03:04:05.000000Z','reportingController':'ctl',"
                    "'reportingInstance':'ctl-1','action':'Sync','reason':'Synced','regarding':{"
                    "'kind':'Pod','name':'p','namespace':'default'},'note':'all good','type':"
                    "'Normal'}");
    cr_assert_str_eq(jstr(o, "note"), "all good");
    cr_assert_str_eq(jstr(o, "regarding.name"), "p");
    json_decref(o);
    o = req(200, "GET", "/api/v1/namespaces/default/events/e1", NULL);
    cr_assert_str_eq(jstr(o, "apiVersion"), "v1");
    cr_assert_str_eq(jstr(o, "message"), "all good");
    cr_assert_str_eq(jstr(o, "involvedObject.name"), "p");
    cr_assert_str_eq(jstr(o, "reportingComponent"), "ctl");
    cr_assert_null(jget(o, "note"));
    json_decref(o);
    /* A core Event (what `kubectl get events` and older recorders use) reads through the new group. */
    json_decref(req(201, "POST", "/api/v1/namespaces/default/events",
                    "{'metadata':{'name':'e2'},'involvedObject':{'kind':'Pod','name':'q'},"
                    "'reason':'Started','message':'started','count':3,'source':{'component':"
                    "'kubelet'},'type':'Normal'}"));
    o = req(200, "GET", "/apis/events.k8s.io/v1/namespaces/default/events", NULL);
    cr_assert_eq(json_array_size(jget(o, "items")), 2);
    cr_assert_str_eq(jstr(o, "items.1.regarding.name"), "q");
    cr_assert_eq(jint(o, "items.1.deprecatedCount"), 3);
    cr_assert_str_eq(jstr(o, "items.1.deprecatedSource.component"), "kubelet");
    json_decref(o);
    json_t *ev = ws_next(w, 2000);
    cr_assert_str_eq(jstr(ev, "object.apiVersion"), "events.k8s.io/v1");
    cr_assert_str_eq(jstr(ev, "object.note"), "all good");
    json_decref(ev);
    ev = ws_next(w, 2000);
    cr_assert_str_eq(jstr(ev, "object.note"), "started");
    json_decref(ev);
    ws_close(w);
}

#define TABLE "application/json;as=Table;v=v1;g=meta.k8s.io"

Test(served, table_rows_carry_what_include_object_asks)
{
    json_decref(mk_cm("default", "t1", NULL));
    json_t *t = get_accept(200, "/api/v1/namespaces/default/configmaps?includeObject=Object", TABLE);
    cr_assert_str_eq(jstr(t, "kind"), "Table");
    cr_assert_str_eq(jstr(t, "rows.0.object.kind"), "ConfigMap");
    json_decref(t);
    t = get_accept(200, "/api/v1/namespaces/default/configmaps?includeObject=None", TABLE);
    cr_assert_null(jget(t, "rows.0.object"));
    json_decref(t);
    t = get_accept(200, "/api/v1/namespaces/default/configmaps/t1", TABLE);
    cr_assert_str_eq(jstr(t, "rows.0.object.kind"), "PartialObjectMetadata");
    json_decref(t);
    t = get_accept(400, "/api/v1/namespaces/default/configmaps?includeObject=Bogus", TABLE);
    assert_failure(t, 400, "BadRequest");
    json_decref(t);
}

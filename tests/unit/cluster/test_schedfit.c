/*
 * test_schedfit.c - the scheduler's pure parts (cluster/schedfit.c):
 * quantities, pod requests, tolerations, node affinity, the filters'
 * reasons, the LeastAllocated score and the FitError message.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler.h"

static json_t *js(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    cr_assert(v, "%s: %s", text, e.text);
    return v;
}

static int64_t q(const char *s)
{
    int64_t v = -42;
    return kc__quantity_milli(s, &v) ? v : -1;
}

Test(schedfit, quantities)
{
    cr_expect_eq(q("100m"), 100);
    cr_expect_eq(q("1"), 1000);
    cr_expect_eq(q("1.5"), 1500);
    cr_expect_eq(q("2k"), 2000000);
    cr_expect_eq(q("1Ki"), 1024000);
    cr_expect_eq(q("16Gi"), 16LL * 1024 * 1024 * 1024 * 1000);
    cr_expect_eq(q("1e3"), 1000000);
    cr_expect_eq(q("1M"), 1000000000);
    cr_expect_eq(q("0.1m"), 1); /* rounded up */
    cr_expect_eq(q("1E"), INT64_MAX);
    cr_expect_eq(q(""), -1);
    cr_expect_eq(q("abc"), -1);
    cr_expect_eq(q("1Qi"), -1);
    cr_expect_eq(q("1 Gi"), -1);
}

Test(schedfit, requests)
{
    json_t *pod = js("{\"spec\":{\"containers\":["
                     "{\"resources\":{\"requests\":{\"cpu\":\"250m\",\"memory\":\"64Mi\"}}},"
                     "{\"resources\":{\"limits\":{\"cpu\":\"1\"}}},"
                     "{}],"
                     "\"initContainers\":[{\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]}}");
    kc_sched_res r;
    kc__pod_requests(pod, &r);
    cr_expect_eq(r.cpu_m, 2000, "the init container is larger");
    cr_expect_eq(r.mem, 64LL * 1024 * 1024);
    cr_expect_eq(r.pods, 1);
    cr_expect_eq(r.cpu_m_nz, 2000);
    cr_expect_eq(r.mem_nz, 64LL * 1024 * 1024 + 2 * 200LL * 1024 * 1024);
    json_decref(pod);
}

Test(schedfit, tolerations)
{
    json_t *taint = js("{\"key\":\"k\",\"value\":\"v\",\"effect\":\"NoSchedule\"}");
    const char *yes[] = {
        "{\"key\":\"k\",\"value\":\"v\",\"effect\":\"NoSchedule\"}",
        "{\"key\":\"k\",\"operator\":\"Equal\",\"value\":\"v\"}",
        "{\"key\":\"k\",\"operator\":\"Exists\"}",
        "{\"operator\":\"Exists\"}",
    };
    const char *no[] = {
        "{\"key\":\"k\",\"value\":\"w\"}",
        "{\"key\":\"k\",\"value\":\"v\",\"effect\":\"NoExecute\"}",
        "{\"key\":\"j\",\"operator\":\"Exists\"}",
        "{\"key\":\"k\",\"operator\":\"Sometimes\",\"value\":\"v\"}",
    };
    for (size_t i = 0; i < 4; i++) {
        json_t *t = js(yes[i]);
        cr_expect(kc__tolerates(t, taint), "%s", yes[i]);
        json_decref(t);
        t = js(no[i]);
        cr_expect(!kc__tolerates(t, taint), "%s", no[i]);
        json_decref(t);
    }
    json_decref(taint);
}

static json_t *node(const char *extra_meta, const char *extra_spec, const char *alloc,
                    const char *ready)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"metadata\":{\"name\":\"n\"%s},\"spec\":{%s},\"status\":{\"allocatable\":%s,"
             "\"conditions\":[{\"type\":\"Ready\",\"status\":\"%s\"}]}}",
             extra_meta, extra_spec, alloc, ready);
    return js(text);
}

#define ALLOC "{\"cpu\":\"2\",\"memory\":\"4Gi\",\"pods\":\"3\"}"

static const char *only_reason(json_t *pod, json_t *n, const kc_sched_res *used, bool *unres)
{
    static char buf[600];
    json_t *reasons = json_array();
    int rc = kc__sched_filter(pod, n, used, reasons, unres);
    char *all = json_dumps(reasons, JSON_COMPACT);
    snprintf(buf, sizeof buf, "%s", rc ? all : "fits");
    free(all);
    json_decref(reasons);
    return buf;
}

Test(schedfit, filters)
{
    kc_sched_res none = {0};
    bool unres;
    json_t *plain = js("{\"spec\":{\"containers\":[{}]}}");
    json_t *n = node("", "", ALLOC, "True");
    cr_expect_str_eq(only_reason(plain, n, &none, &unres), "fits");
    json_decref(n);

    n = node("", "\"unschedulable\":true", ALLOC, "True");
    cr_expect_str_eq(only_reason(plain, n, &none, &unres), "[\"node(s) were unschedulable\"]");
    cr_expect(unres);
    json_decref(n);

    n = node("",
             "\"taints\":[{\"key\":\"a\",\"value\":\"b\",\"effect\":\"NoExecute\"},"
             "{\"key\":\"soft\",\"effect\":\"PreferNoSchedule\"}]",
             ALLOC, "True");
    cr_expect_str_eq(only_reason(plain, n, &none, &unres),
                     "[\"node(s) had untolerated taint {a: b}\"]");
    json_decref(n);

    /* Not Ready without the taint written yet: as if it were there. */
    n = node("", "", ALLOC, "Unknown");
    cr_expect_str_eq(only_reason(plain, n, &none, &unres),
                     "[\"node(s) had untolerated taint {node.kubernetes.io/unreachable: }\"]");
    json_decref(n);
    n = node("", "", ALLOC, "False");
    json_t *tolerant = js("{\"spec\":{\"containers\":[{}],\"tolerations\":[{\"key\":"
                          "\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\"}]}}");
    cr_expect_str_eq(only_reason(tolerant, n, &none, &unres), "fits");
    json_decref(tolerant);
    json_decref(n);

    n = node(",\"labels\":{\"zone\":\"a\",\"gen\":\"5\"}", "", ALLOC, "True");
    json_t *sel = js("{\"spec\":{\"nodeSelector\":{\"zone\":\"b\"}}}");
    cr_expect_str_eq(only_reason(sel, n, &none, &unres),
                     "[\"node(s) didn't match Pod's node affinity/selector\"]");
    json_decref(sel);
    const char *terms[][2] = {
        {"{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"a\",\"c\"]}", "fits"},
        {"{\"key\":\"zone\",\"operator\":\"NotIn\",\"values\":[\"a\"]}", "no"},
        {"{\"key\":\"gen\",\"operator\":\"Gt\",\"values\":[\"4\"]}", "fits"},
        {"{\"key\":\"gen\",\"operator\":\"Lt\",\"values\":[\"4\"]}", "no"},
        {"{\"key\":\"gpu\",\"operator\":\"DoesNotExist\"}", "fits"},
        {"{\"key\":\"gpu\",\"operator\":\"Exists\"}", "no"},
    };
    for (size_t i = 0; i < sizeof terms / sizeof terms[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"spec\":{\"affinity\":{\"nodeAffinity\":{"
                 "\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":["
                 "{\"matchExpressions\":[%s]}]}}}}}",
                 terms[i][0]);
        json_t *p = js(text);
        cr_expect_eq(kc__node_affinity_matches(p, n), !strcmp(terms[i][1], "fits"), "%s",
                     terms[i][0]);
        json_decref(p);
    }
    /* matchFields on the node's name. */
    json_t *byname = js("{\"spec\":{\"affinity\":{\"nodeAffinity\":{"
                        "\"requiredDuringSchedulingIgnoredDuringExecution\":{\"nodeSelectorTerms\":"
                        "[{\"matchFields\":[{\"key\":\"metadata.name\",\"operator\":\"In\","
                        "\"values\":[\"n\"]}]}]}}}}}");
    cr_expect(kc__node_affinity_matches(byname, n));
    json_decref(byname);
    json_decref(n);

    /* Resources: every shortage is named. */
    n = node("", "", ALLOC, "True");
    json_t *big = js("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":"
                     "{\"cpu\":\"1500m\",\"memory\":\"3Gi\"}}}]}}");
    kc_sched_res used = {.cpu_m = 1000, .mem = 2LL << 30, .pods = 3};
    cr_expect_str_eq(only_reason(big, n, &used, &unres),
                     "[\"Too many pods\",\"Insufficient cpu\",\"Insufficient memory\"]");
    cr_expect(!unres);
    used = (kc_sched_res){.cpu_m = 500, .mem = 1LL << 30, .pods = 1};
    cr_expect_str_eq(only_reason(big, n, &used, &unres), "fits");
    json_decref(big);
    json_decref(n);
    json_decref(plain);
}

Test(schedfit, least_allocated_score)
{
    json_t *n = node("", "", "{\"cpu\":\"4\",\"memory\":\"4Gi\",\"pods\":\"110\"}", "True");
    json_t *p = js("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":"
                   "{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]}}");
    kc_sched_res empty = {0}, half = {.cpu_m_nz = 1000, .mem_nz = 1LL << 30};
    cr_expect_eq(kc__sched_score(p, n, &empty), 75);
    cr_expect_eq(kc__sched_score(p, n, &half), 50);
    json_t *bare = js("{\"spec\":{\"containers\":[{}]}}");
    /* 100m and 200Mi count for a container without requests. */
    cr_expect_eq(kc__sched_score(bare, n, &empty), (97 + 95) / 2);
    json_decref(bare);
    json_decref(p);
    json_decref(n);
}

Test(schedfit, message)
{
    json_t *reasons = js("{\"Insufficient cpu\":2,\"node(s) had untolerated taint {a: }\":1,"
                         "\"Insufficient memory\":1}");
    json_t *pre = js("{\"No preemption victims found for incoming pod\":2,"
                     "\"Preemption is not helpful for scheduling\":1}");
    char *m = kc__sched_message(3, reasons, pre);
    cr_expect_str_eq(m, "0/3 nodes are available: 1 Insufficient memory, 1 node(s) had "
                        "untolerated taint {a: }, 2 Insufficient cpu. preemption: 0/3 nodes are "
                        "available: 1 Preemption is not helpful for scheduling, 2 No preemption "
                        "victims found for incoming pod..");
    free(m);
    json_decref(reasons);
    json_decref(pre);
}

Test(schedfit, anti_affinity_terms)
{
    json_t *pod = js("{\"spec\":{\"affinity\":{\"podAntiAffinity\":{"
                     "\"requiredDuringSchedulingIgnoredDuringExecution\":[{\"labelSelector\":"
                     "{\"matchLabels\":{\"app\":\"a\"}},\"topologyKey\":\"kubernetes.io/hostname\"}"
                     "]}}}}");
    const json_t *terms = kc__anti_affinity_terms(pod);
    cr_assert_eq(json_array_size(terms), 1);
    const json_t *t = json_array_get(terms, 0);
    json_t *la = js("{\"app\":\"a\"}"), *lb = js("{\"app\":\"b\"}");
    cr_expect(kc__term_selects(t, "ns1", "ns1", la));
    cr_expect(!kc__term_selects(t, "ns1", "ns1", lb));
    cr_expect(!kc__term_selects(t, "ns1", "ns2", la), "its own namespace only");
    json_t *listed = js("{\"namespaces\":[\"ns2\"],\"labelSelector\":{\"matchLabels\":"
                        "{\"app\":\"a\"}}}");
    cr_expect(kc__term_selects(listed, "ns1", "ns2", la));
    cr_expect(!kc__term_selects(listed, "ns1", "ns1", la));
    json_t *everywhere = js("{\"namespaceSelector\":{},\"labelSelector\":{}}");
    cr_expect(kc__term_selects(everywhere, "ns1", "ns9", lb));
    json_t *none = js("{\"spec\":{}}");
    cr_expect_null(kc__anti_affinity_terms(none));
    json_decref(none);
    json_decref(everywhere);
    json_decref(listed);
    json_decref(la);
    json_decref(lb);
    json_decref(pod);
}

/*
 * test_svcutil.c - what the Endpoints and EndpointSlice controllers share:
 * Service selection, endpoint eligibility, hostnames, FindPort and the
 * trigger-time tracker.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "podutil.h"
#include "svcutil.h"

static json_t *J(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    cr_assert_not_null(v, "%s: %s", text, e.text);
    return v;
}

Test(svcutil, selection)
{
    json_t *svc = J("{\"metadata\":{\"name\":\"web\",\"namespace\":\"a\"},"
                    "\"spec\":{\"selector\":{\"app\":\"web\"}}}");
    json_t *pod = J("{\"metadata\":{\"name\":\"p\",\"namespace\":\"a\",\"labels\":{\"app\":\"web\","
                    "\"x\":\"y\"}}}");
    json_t *other_ns = J("{\"metadata\":{\"name\":\"p\",\"namespace\":\"b\",\"labels\":"
                         "{\"app\":\"web\"}}}");
    json_t *no_sel = J("{\"metadata\":{\"name\":\"ext\",\"namespace\":\"a\"},\"spec\":"
                       "{\"selector\":{}}}");
    cr_assert(kc__svc_has_selector(svc));
    cr_assert(kc__svc_selects(svc, pod));
    cr_assert_not(kc__svc_selects(svc, other_ns));
    /* An empty selector selects nothing: the endpoints are made by hand. */
    cr_assert_not(kc__svc_has_selector(no_sel));
    cr_assert_not(kc__svc_selects(no_sel, pod));
    json_decref(svc);
    json_decref(pod);
    json_decref(other_ns);
    json_decref(no_sel);
}

Test(svcutil, eligibility_and_hostname)
{
    json_t *pod = J("{\"metadata\":{\"name\":\"db-0\",\"namespace\":\"a\"},\"spec\":"
                    "{\"hostname\":\"db-0\",\"subdomain\":\"db\"},\"status\":{\"phase\":"
                    "\"Running\",\"podIP\":\"10.0.0.1\"}}");
    json_t *svc = J("{\"metadata\":{\"name\":\"db\",\"namespace\":\"a\"}}");
    json_t *other = J("{\"metadata\":{\"name\":\"web\",\"namespace\":\"a\"}}");
    cr_assert(kc__pod_in_endpoints(pod, false));
    cr_assert_str_eq(kc__pod_ip(pod), "10.0.0.1");
    cr_assert(kc__pod_hostname_for(pod, svc));
    cr_assert_not(kc__pod_hostname_for(pod, other));
    /* Being deleted: in only when terminating pods are wanted. */
    json_object_set_new(json_object_get(pod, "metadata"), "deletionTimestamp",
                        json_string("2026-01-01T00:00:00Z"));
    cr_assert_not(kc__pod_in_endpoints(pod, false));
    cr_assert(kc__pod_in_endpoints(pod, true));
    /* Terminal, or no IP: never. */
    json_object_set_new(json_object_get(pod, "status"), "phase", json_string("Succeeded"));
    cr_assert_not(kc__pod_in_endpoints(pod, true));
    json_t *noip = J("{\"metadata\":{\"name\":\"x\"},\"status\":{\"phase\":\"Running\"}}");
    cr_assert_not(kc__pod_in_endpoints(noip, true));
    cr_assert_null(kc__pod_ip(noip));
    json_t *ips = J("{\"status\":{\"podIPs\":[{\"ip\":\"fd00::1\"}]}}");
    cr_assert_str_eq(kc__pod_ip(ips), "fd00::1");
    json_decref(pod);
    json_decref(svc);
    json_decref(other);
    json_decref(noip);
    json_decref(ips);
}

Test(svcutil, find_port)
{
    json_t *pod = J("{\"spec\":{\"containers\":[{\"name\":\"a\",\"ports\":["
                    "{\"name\":\"http\",\"containerPort\":8080},"
                    "{\"name\":\"dns\",\"containerPort\":5353,\"protocol\":\"UDP\"}]}],"
                    "\"initContainers\":[{\"name\":\"side\",\"restartPolicy\":\"Always\","
                    "\"ports\":[{\"name\":\"proxy\",\"containerPort\":15001}]},"
                    "{\"name\":\"init\",\"ports\":[{\"name\":\"once\",\"containerPort\":1}]}]}}");
    struct {
        const char *port;
        int rc;
        int64_t want;
    } cases[] = {
        {"{\"port\":80,\"targetPort\":\"http\"}", 0, 8080},
        {"{\"port\":80,\"targetPort\":9000}", 0, 9000},
        {"{\"port\":80}", 0, 80},
        {"{\"port\":53,\"targetPort\":\"dns\",\"protocol\":\"UDP\"}", 0, 5353},
        {"{\"port\":53,\"targetPort\":\"dns\"}", -1, 0}, /* TCP: no such port */
        {"{\"port\":1,\"targetPort\":\"proxy\"}", 0, 15001},
        {"{\"port\":1,\"targetPort\":\"once\"}", -1, 0}, /* not a sidecar */
        {"{\"port\":1,\"targetPort\":\"nope\"}", -1, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *sp = J(cases[i].port);
        int64_t got = 0;
        int rc = kc__find_port(pod, sp, &got);
        cr_assert_eq(rc, cases[i].rc, "%s: rc %d", cases[i].port, rc);
        if (rc == 0)
            cr_assert_eq(got, cases[i].want, "%s: %lld", cases[i].port, (long long)got);
        json_decref(sp);
    }
    json_decref(pod);
}

static json_t *ready_pod(const char *name, const char *since)
{
    json_t *p =
        json_pack("{s:{s:s}, s:{s:[{s:s, s:s, s:s}]}}", "metadata", "name", name, "status",
                  "conditions", "type", "Ready", "status", "True", "lastTransitionTime", since);
    cr_assert_not_null(p);
    return p;
}

Test(svcutil, trigger_time)
{
    kc_trigger *t = kc__trigger_new();
    cr_assert_not_null(t);
    json_t *svc =
        J("{\"metadata\":{\"name\":\"s\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\"}}");
    json_t *pods = json_pack("[o, o]", ready_pod("a", "2026-01-01T00:01:00Z"),
                             ready_pod("b", "2026-01-01T00:02:00Z"));
    /* First sync: everything changed; the earliest is the Service. */
    cr_assert_eq(kc__trigger_compute(t, "ns/s", svc, pods), kc__parse_time("2026-01-01T00:00:00Z"));
    /* Nothing changed. */
    cr_assert_eq(kc__trigger_compute(t, "ns/s", svc, pods), -1);
    /* b transitions again: its time. */
    json_array_set_new(pods, 1, ready_pod("b", "2026-01-01T00:05:00Z"));
    cr_assert_eq(kc__trigger_compute(t, "ns/s", svc, pods), kc__parse_time("2026-01-01T00:05:00Z"));
    /* A new pod c and b again: the earlier of the two. */
    json_array_set_new(pods, 1, ready_pod("b", "2026-01-01T00:09:00Z"));
    json_array_append_new(pods, ready_pod("c", "2026-01-01T00:07:00Z"));
    cr_assert_eq(kc__trigger_compute(t, "ns/s", svc, pods), kc__parse_time("2026-01-01T00:07:00Z"));
    /* Forgotten: all new again. */
    kc__trigger_delete(t, "ns/s");
    cr_assert_eq(kc__trigger_compute(t, "ns/s", svc, pods), kc__parse_time("2026-01-01T00:00:00Z"));
    json_decref(pods);
    json_decref(svc);
    kc__trigger_free(t);
}

/*
 * test_subresources.c - /scale (autoscaling/v1 Scale) and /status over HTTP
 * (K8S-API.md item 13).
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fakeapi/fakeapi.h"
#include "httpc.h"

/* ---- helpers (each integration test file carries its own copy) ------------ */

static fakeapi_server *srv;

static void setup(void)
{
    fakeapi_options o = {.seed = 4242};
    cr_assert_eq(fakeapi_start(&o, &srv), 0, "fakeapi_start");
    cr_assert_neq(fakeapi_port(srv), 0);
}

static void teardown(void)
{
    fakeapi_stop(srv);
    srv = NULL;
}

/* A printf into one of a ring of static buffers (tests only). */
__attribute__((format(printf, 1, 2), unused)) static const char *S(const char *fmt, ...)
{
    static char ring[8][16384];
    static int next;
    char *b = ring[next++ % 8];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof ring[0], fmt, ap);
    va_end(ap);
    return b;
}

/* Percent-encode a query value. */
__attribute__((unused)) static const char *enc(const char *v)
{
    static char ring[4][4096];
    static int next;
    char *b = ring[next++ % 4], *o = b;
    for (const unsigned char *p = (const unsigned char *)v; *p && o < b + sizeof ring[0] - 4; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("-_.~", *p))
            *o++ = (char)*p;
        else
            o += sprintf(o, "%%%02X", *p);
    }
    *o = '\0';
    return b;
}

/*
 * Send method to path on the test server; body is JSON written with single
 * quotes for readability (turned into double quotes), or NULL. Asserts the
 * HTTP status is want (unless want is 0) and returns the parsed body (new
 * reference, may be NULL if not JSON).
 */
__attribute__((unused)) static json_t *req_ct(long want, const char *method, const char *path,
                                              const char *ctype, const char *body)
{
    char url[4096];
    snprintf(url, sizeof url, "%s%s", fakeapi_url(srv), path);
    char *b = body ? strdup(body) : NULL;
    for (char *p = b; p && *p; p++)
        if (*p == '\'')
            *p = '"';
    httpc_resp r;
    int rc = httpc_do(method, url, ctype, b, &r);
    free(b);
    json_t *v = json_loads(r.body, 0, NULL);
    if (want)
        cr_assert_eq(r.status, want, "%s %s: want %ld, got %ld (rc %d): %.600s", method, path, want,
                     r.status, rc, r.body);
    httpc_resp_free(&r);
    return v;
}

__attribute__((unused)) static json_t *req(long want, const char *method, const char *path,
                                           const char *body)
{
    return req_ct(want, method, path, body ? "application/json" : NULL, body);
}

/* Follow a dotted path ("metadata.labels.app", "items.0.metadata.name"). Borrowed. */
__attribute__((unused)) static json_t *jget(const json_t *v, const char *path)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    json_t *cur = (json_t *)v;
    for (char *save = NULL, *p = strtok_r(buf, ".", &save); p && cur;
         p = strtok_r(NULL, ".", &save)) {
        if (json_is_array(cur))
            cur = json_array_get(cur, strtoul(p, NULL, 10));
        else
            cur = json_object_get(cur, p);
    }
    return cur;
}

__attribute__((unused)) static const char *jstr(const json_t *v, const char *path)
{
    return json_string_value(jget(v, path));
}

__attribute__((unused)) static long long jint(const json_t *v, const char *path)
{
    return json_integer_value(jget(v, path));
}

/* metadata.resourceVersion as a number (asserting it is a decimal > 0). */
__attribute__((unused)) static unsigned long long rv_of(const json_t *obj)
{
    const char *rv = jstr(obj, "metadata.resourceVersion");
    cr_assert_not_null(rv, "no resourceVersion");
    char *end;
    unsigned long long n = strtoull(rv, &end, 10);
    cr_assert(*rv && !*end && n > 0, "bad resourceVersion '%s'", rv);
    return n;
}

/* Every error body: a complete Status with this code and reason. */
__attribute__((unused)) static void assert_failure(const json_t *st, long code, const char *reason)
{
    cr_assert_not_null(st, "error body is not JSON");
    cr_assert_str_eq(jstr(st, "kind"), "Status");
    cr_assert_str_eq(jstr(st, "apiVersion"), "v1");
    cr_assert_str_eq(jstr(st, "status"), "Failure");
    cr_assert(json_is_object(jget(st, "metadata")));
    cr_assert_eq(jint(st, "code"), code);
    cr_assert_str_eq(jstr(st, "reason"), reason);
    cr_assert(jstr(st, "message") && *jstr(st, "message"));
}

/* Expect an error: status, reason and full Status shape. Returns the body. */
__attribute__((unused)) static json_t *req_fail_ct(long code, const char *reason,
                                                   const char *method, const char *path,
                                                   const char *ctype, const char *body)
{
    json_t *st = req_ct(code, method, path, ctype, body);
    assert_failure(st, code, reason);
    return st;
}

__attribute__((unused)) static json_t *req_fail(long code, const char *reason, const char *method,
                                                const char *path, const char *body)
{
    return req_fail_ct(code, reason, method, path, body ? "application/json" : NULL, body);
}

/* Does a GET of path answer 404? */
__attribute__((unused)) static bool gone(const char *path)
{
    json_t *v = req(0, "GET", path, NULL);
    bool g = v && jint(v, "code") == 404 && jstr(v, "kind") && !strcmp(jstr(v, "kind"), "Status");
    json_decref(v);
    return g;
}

/* Poll until path answers 404 (true) or timeout_ms passes (false). */
__attribute__((unused)) static bool wait_gone(const char *path, int timeout_ms)
{
    for (int t = 0; t <= timeout_ms; t += 20) {
        if (gone(path))
            return true;
        usleep(20 * 1000);
    }
    return false;
}

#define CM(ns) S("/api/v1/namespaces/%s/configmaps", ns)
#define DEPLOYS "/apis/apps/v1/namespaces/default/deployments"

/* A Deployment manifest (single-quoted JSON) named n with one container. */
__attribute__((unused)) static const char *deploy_body(const char *n)
{
    return S("{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':'%s'},"
             "'spec':{'replicas':1,'selector':{'matchLabels':{'app':'%s'}},"
             "'template':{'metadata':{'labels':{'app':'%s'}},"
             "'spec':{'containers':[{'name':'a','image':'nginx:1'}]}}}}",
             n, n, n);
}

/* Create a ConfigMap in ns; returns the stored object. */
__attribute__((unused)) static json_t *mk_cm(const char *ns, const char *name, const char *labels)
{
    return req(
        201, "POST", CM(ns),
        S("{'metadata':{'name':'%s','labels':%s},'data':{'k':'v'}}", name, labels ? labels : "{}"));
}

/* Create a namespace. */
__attribute__((unused)) static void mk_ns(const char *name)
{
    json_decref(req(201, "POST", "/api/v1/namespaces", S("{'metadata':{'name':'%s'}}", name)));
}

TestSuite(subresources, .init = setup, .fini = teardown);

#define DP DEPLOYS "/d"

static json_t *mk_deploy(void)
{
    return req(201, "POST", DEPLOYS, deploy_body("d"));
}

Test(subresources, scale_get)
{
    json_t *d = mk_deploy();
    json_t *sc = req(200, "GET", DP "/scale", NULL);
    cr_assert_str_eq(jstr(sc, "kind"), "Scale");
    cr_assert_str_eq(jstr(sc, "apiVersion"), "autoscaling/v1");
    cr_assert_str_eq(jstr(sc, "metadata.name"), "d");
    cr_assert_str_eq(jstr(sc, "metadata.namespace"), "default");
    cr_assert_str_eq(jstr(sc, "metadata.uid"), jstr(d, "metadata.uid"));
    cr_assert_str_eq(jstr(sc, "metadata.resourceVersion"), jstr(d, "metadata.resourceVersion"));
    cr_assert_eq(jint(sc, "spec.replicas"), 1);
    cr_assert_eq(jint(sc, "status.replicas"), 0);
    cr_assert_str_eq(jstr(sc, "status.selector"), "app=d");
    json_decref(sc);
    json_decref(d);
    json_decref(req_fail(404, "NotFound", "GET", DEPLOYS "/none/scale", NULL));
    /* Kinds without /scale. */
    json_decref(mk_cm("default", "c", NULL));
    json_decref(
        req_fail(404, "NotFound", "GET", "/api/v1/namespaces/default/configmaps/c/scale", NULL));
    json_decref(
        req_fail(404, "NotFound", "GET", "/api/v1/namespaces/default/configmaps/c/status", NULL));
    /* A method /scale does not take. */
    json_decref(req_fail(405, "MethodNotAllowed", "DELETE", DP "/scale", NULL));
}

Test(subresources, scale_put_and_patch)
{
    json_t *d = mk_deploy();
    json_t *sc = req(200, "PUT", DP "/scale",
                     "{'apiVersion':'autoscaling/v1','kind':'Scale','metadata':{'name':'d',"
                     "'namespace':'default'},'spec':{'replicas':5}}");
    cr_assert_str_eq(jstr(sc, "kind"), "Scale");
    cr_assert_eq(jint(sc, "spec.replicas"), 5);
    cr_assert_gt(rv_of(sc), rv_of(d));
    cr_assert_eq(rv_of(sc), fakeapi_revision(srv));
    json_decref(sc);
    json_t *g = req(200, "GET", DP, NULL);
    cr_assert_eq(jint(g, "spec.replicas"), 5);
    cr_assert_eq(jint(g, "metadata.generation"), 2, "a scale changes spec");
    cr_assert_str_eq(jstr(g, "spec.template.spec.containers.0.image"), "nginx:1");
    unsigned long long r = rv_of(g);
    json_decref(g);

    /* kubectl scale sends a merge patch. */
    sc = req_ct(200, "PATCH", DP "/scale", "application/merge-patch+json",
                "{'spec':{'replicas':3}}");
    cr_assert_eq(jint(sc, "spec.replicas"), 3);
    json_decref(sc);
    sc = req_ct(200, "PATCH", DP "/scale", "application/json-patch+json",
                "[{'op':'replace','path':'/spec/replicas','value':4}]");
    cr_assert_eq(jint(sc, "spec.replicas"), 4);
    json_decref(sc);
    g = req(200, "GET", DP, NULL);
    cr_assert_eq(jint(g, "spec.replicas"), 4);
    json_decref(g);

    /* A stale resourceVersion on the Scale conflicts. */
    unsigned long long before = fakeapi_revision(srv);
    json_decref(req_fail(409, "Conflict", "PUT", DP "/scale",
                         S("{'metadata':{'name':'d','resourceVersion':'%llu'},"
                           "'spec':{'replicas':9}}",
                           r)));
    /* Negative or missing replicas are invalid. */
    json_decref(req_fail(422, "Invalid", "PUT", DP "/scale",
                         "{'metadata':{'name':'d'},'spec':{'replicas':-1}}"));
    json_decref(
        req_fail(422, "Invalid", "PUT", DP "/scale", "{'metadata':{'name':'d'},'spec':{}}"));
    cr_assert_eq(fakeapi_revision(srv), before);
    json_decref(d);

    /* The same on a StatefulSet and a ReplicaSet. */
    json_decref(req(201, "POST", "/apis/apps/v1/namespaces/default/statefulsets",
                    "{'metadata':{'name':'s'},'spec':{'replicas':1,'serviceName':'s','selector':"
                    "{'matchLabels':{'app':'s'}},'template':{'metadata':{'labels':{'app':'s'}},"
                    "'spec':{'containers':[{'name':'a','image':'i'}]}}}}"));
    sc = req_ct(200, "PATCH", "/apis/apps/v1/namespaces/default/statefulsets/s/scale",
                "application/merge-patch+json", "{'spec':{'replicas':2}}");
    cr_assert_eq(jint(sc, "spec.replicas"), 2);
    json_decref(sc);
    json_decref(req(201, "POST", "/apis/apps/v1/namespaces/default/replicasets",
                    "{'metadata':{'name':'r'},'spec':{'replicas':1,'selector':"
                    "{'matchLabels':{'app':'r'}},'template':{'metadata':{'labels':{'app':'r'}},"
                    "'spec':{'containers':[{'name':'a','image':'i'}]}}}}"));
    sc = req(200, "GET", "/apis/apps/v1/namespaces/default/replicasets/r/scale", NULL);
    cr_assert_eq(jint(sc, "spec.replicas"), 1);
    json_decref(sc);
}

Test(subresources, status_put_changes_only_status)
{
    json_t *d = mk_deploy();
    json_t *s = req(200, "PUT", DP "/status",
                    S("{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':'d',"
                      "'resourceVersion':'%s','labels':{'sneaky':'yes'}},'spec':{'replicas':9},"
                      "'status':{'replicas':1,'readyReplicas':1}}",
                      jstr(d, "metadata.resourceVersion")));
    cr_assert_eq(jint(s, "status.replicas"), 1);
    cr_assert_eq(jint(s, "status.readyReplicas"), 1);
    cr_assert_eq(jint(s, "spec.replicas"), 1, "spec unchanged by /status");
    cr_assert_null(jget(s, "metadata.labels.sneaky"), "metadata unchanged by /status");
    cr_assert_eq(jint(s, "metadata.generation"), 1);
    cr_assert_gt(rv_of(s), rv_of(d));
    json_t *g = req(200, "GET", DP, NULL);
    cr_assert(json_equal(g, s));
    json_decref(g);

    /* GET on /status returns the whole object. */
    g = req(200, "GET", DP "/status", NULL);
    cr_assert_str_eq(jstr(g, "kind"), "Deployment");
    cr_assert_eq(jint(g, "status.replicas"), 1);
    json_decref(g);

    /* Stale resourceVersion: 409; missing object: 404. */
    json_decref(req_fail(409, "Conflict", "PUT", DP "/status",
                         S("{'metadata':{'name':'d','resourceVersion':'%s'},'status':{}}",
                           jstr(d, "metadata.resourceVersion"))));
    json_decref(req_fail(404, "NotFound", "PUT", DEPLOYS "/none/status",
                         "{'metadata':{'name':'none'},'status':{}}"));
    json_decref(s);
    json_decref(d);
}

Test(subresources, status_patch)
{
    json_decref(mk_deploy());
    json_t *s = req_ct(200, "PATCH", DP "/status", "application/merge-patch+json",
                       "{'spec':{'replicas':7},'status':{'replicas':2,'conditions':[{'type':"
                       "'Available','status':'True'}]}}");
    cr_assert_eq(jint(s, "status.replicas"), 2);
    cr_assert_eq(jint(s, "spec.replicas"), 1);
    json_decref(s);
    /* Strategic merge on status: conditions merge by type. */
    s = req_ct(200, "PATCH", DP "/status", "application/strategic-merge-patch+json",
               "{'status':{'conditions':[{'type':'Progressing','status':'True'}]}}");
    cr_assert_eq(json_array_size(jget(s, "status.conditions")), 2, "merged by type");
    json_decref(s);
    s = req_ct(200, "PATCH", DP "/status", "application/json-patch+json",
               "[{'op':'replace','path':'/status/replicas','value':3}]");
    cr_assert_eq(jint(s, "status.replicas"), 3);
    json_decref(s);
    /* Pods: the kubelet's phase. */
    json_decref(req(201, "POST", "/api/v1/namespaces/default/pods",
                    "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','image':'i'}]},"
                    "'status':{'phase':'Running'}}"));
    json_t *p = req(200, "GET", "/api/v1/namespaces/default/pods/p", NULL);
    cr_assert_null(jget(p, "status.phase"), "status dropped on create");
    json_decref(p);
    p = req_ct(200, "PATCH", "/api/v1/namespaces/default/pods/p/status",
               "application/merge-patch+json", "{'status':{'phase':'Running'}}");
    cr_assert_str_eq(jstr(p, "status.phase"), "Running");
    json_decref(p);
    /* A no-op status patch keeps the resourceVersion. */
    unsigned long long before = fakeapi_revision(srv);
    p = req_ct(200, "PATCH", "/api/v1/namespaces/default/pods/p/status",
               "application/merge-patch+json", "{'status':{'phase':'Running'}}");
    json_decref(p);
    cr_assert_eq(fakeapi_revision(srv), before);
}

/*
 * test_patch.c - PATCH over HTTP (K8S-API.md section 7): merge, JSON and
 * strategic merge patches, media types, server-side apply, conflicts.
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

/* A namespaced CRD widgets.example.com/v1 Widget with a schema, defaults,
 * and status and scale subresources. */
#define WIDGETS "/apis/example.com/v1/namespaces/default/widgets"
static const char crd_widgets[] =
    "{'apiVersion':'apiextensions.k8s.io/v1','kind':'CustomResourceDefinition',"
    "'metadata':{'name':'widgets.example.com'},"
    "'spec':{'group':'example.com','scope':'Namespaced',"
    "'names':{'plural':'widgets','singular':'widget','kind':'Widget','listKind':'WidgetList',"
    "'shortNames':['wd']},"
    "'versions':[{'name':'v1','served':true,'storage':true,"
    "'schema':{'openAPIV3Schema':{'type':'object','properties':{"
    "'spec':{'type':'object','required':['color'],'properties':{"
    "'size':{'type':'integer','minimum':1,'default':3},"
    "'color':{'type':'string','enum':['red','blue']},"
    "'replicas':{'type':'integer'},"
    "'tags':{'type':'array','items':{'type':'string'}}}},"
    "'status':{'type':'object','properties':{'ready':{'type':'boolean'},"
    "'replicas':{'type':'integer'},'selector':{'type':'string'}}}}}},"
    "'subresources':{'status':{},'scale':{'specReplicasPath':'.spec.replicas',"
    "'statusReplicasPath':'.status.replicas','labelSelectorPath':'.status.selector'}}}]}}";

__attribute__((unused)) static json_t *mk_crd(void)
{
    return req(201, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd_widgets);
}

TestSuite(patch, .init = setup, .fini = teardown);

#define MERGE "application/merge-patch+json"
#define JSONP "application/json-patch+json"
#define SMP "application/strategic-merge-patch+json"
#define APPLY "application/apply-patch+yaml"
#define CMX "/api/v1/namespaces/default/configmaps/x"

/* The container names of a Deployment, comma-joined, with images. */
static const char *containers_of(const json_t *d)
{
    static char out[1024];
    size_t off = 0, i;
    json_t *c;
    out[0] = '\0';
    json_array_foreach(jget(d, "spec.template.spec.containers"), i, c)
    {
        off += (size_t)snprintf(out + off, sizeof out - off, "%s%s=%s", i ? "," : "",
                                jstr(c, "name"), jstr(c, "image"));
    }
    return out;
}

Test(patch, merge_patch)
{
    json_t *a =
        req(201, "POST", CM("default"),
            "{'metadata':{'name':'x','labels':{'a':'1','b':'2'}},'data':{'k':'v','gone':'x'}}");
    json_t *p = req_ct(200, "PATCH", CMX, MERGE,
                       "{'metadata':{'labels':{'b':null,'c':'3'}},'data':{'k':'v2','gone':null,"
                       "'new':'n'}}");
    cr_assert_str_eq(jstr(p, "data.k"), "v2");
    cr_assert_str_eq(jstr(p, "data.new"), "n");
    cr_assert_null(jget(p, "data.gone"));
    cr_assert_str_eq(jstr(p, "metadata.labels.a"), "1");
    cr_assert_null(jget(p, "metadata.labels.b"));
    cr_assert_str_eq(jstr(p, "metadata.labels.c"), "3");
    cr_assert_gt(rv_of(p), rv_of(a));
    cr_assert_eq(rv_of(p), fakeapi_revision(srv));
    cr_assert_str_eq(jstr(p, "metadata.uid"), jstr(a, "metadata.uid"));
    json_t *g = req(200, "GET", CMX, NULL);
    cr_assert(json_equal(g, p));
    json_decref(g);
    json_decref(p);
    json_decref(a);

    /* Lists are replaced whole by a merge patch, even on built-in kinds. */
    json_decref(req(201, "POST", DEPLOYS, deploy_body("d")));
    p = req_ct(200, "PATCH", DEPLOYS "/d", MERGE,
               "{'spec':{'template':{'spec':{'containers':[{'name':'b','image':'redis'}]}}}}");
    cr_assert_str_eq(containers_of(p), "b=redis");
    json_decref(p);
}

Test(patch, patch_missing_object)
{
    json_decref(req_fail_ct(404, "NotFound", "PATCH", CMX, MERGE, "{'data':{}}"));
    json_decref(req_fail_ct(404, "NotFound", "PATCH", CMX, JSONP, "[]"));
    json_decref(req_fail_ct(404, "NotFound", "PATCH", CMX, SMP, "{}"));
    cr_assert(gone(CMX));
}

Test(patch, json_patch)
{
    json_decref(req(201, "POST", CM("default"),
                    "{'metadata':{'name':'x'},'data':{'a':'1','b':'2','c':'3'}}"));
    json_t *p = req_ct(200, "PATCH", CMX, JSONP,
                       "[{'op':'test','path':'/data/a','value':'1'},"
                       "{'op':'replace','path':'/data/a','value':'one'},"
                       "{'op':'add','path':'/data/d','value':'4'},"
                       "{'op':'remove','path':'/data/b'},"
                       "{'op':'move','from':'/data/c','path':'/data/m'},"
                       "{'op':'copy','from':'/data/d','path':'/data/e'},"
                       "{'op':'add','path':'/metadata/labels','value':{'x_y':'z'}}]");
    cr_assert_str_eq(jstr(p, "data.a"), "one");
    cr_assert_null(jget(p, "data.b"));
    cr_assert_null(jget(p, "data.c"));
    cr_assert_str_eq(jstr(p, "data.m"), "3");
    cr_assert_str_eq(jstr(p, "data.d"), "4");
    cr_assert_str_eq(jstr(p, "data.e"), "4");
    cr_assert_str_eq(jstr(p, "metadata.labels.x_y"), "z");
    json_decref(p);

    /* A failed test op: 422, nothing written (the replace before it neither). */
    unsigned long long before = fakeapi_revision(srv);
    json_t *st = req_fail_ct(422, "Invalid", "PATCH", CMX, JSONP,
                             "[{'op':'replace','path':'/data/a','value':'changed'},"
                             "{'op':'test','path':'/data/a','value':'wrong'}]");
    json_decref(st);
    cr_assert_eq(fakeapi_revision(srv), before);
    json_t *g = req(200, "GET", CMX, NULL);
    cr_assert_str_eq(jstr(g, "data.a"), "one");
    json_decref(g);

    /* Removing what is not there, and unknown ops. */
    json_decref(
        req_fail_ct(422, "Invalid", "PATCH", CMX, JSONP, "[{'op':'remove','path':'/data/nope'}]"));
    json_decref(req_ct(0, "PATCH", CMX, JSONP, "[{'op':'frobnicate','path':'/data/a'}]"));
    g = req(200, "GET", CMX, NULL);
    cr_assert_str_eq(jstr(g, "data.a"), "one");
    json_decref(g);
    /* A JSON patch must be an array. */
    st = req_ct(0, "PATCH", CMX, JSONP, "{'op':'add'}");
    cr_assert(jint(st, "code") == 400 || jint(st, "code") == 422, "code %lld", jint(st, "code"));
    json_decref(st);
    cr_assert_eq(fakeapi_revision(srv), before);
}

Test(patch, strategic_merge_on_deployment)
{
    json_decref(req(201, "POST", DEPLOYS,
                    "{'metadata':{'name':'d'},'spec':{'replicas':1,'selector':{'matchLabels':"
                    "{'app':'d'}},'template':{'metadata':{'labels':{'app':'d'}},'spec':"
                    "{'containers':[{'name':'a','image':'nginx:1','env':[{'name':'X','value':"
                    "'1'}]},{'name':'b','image':'redis:1'}]}}}}"));
    const char *path = DEPLOYS "/d";

    /* Containers merge by name: a new one is added, a named one is updated in place. */
    json_t *p = req_ct(200, "PATCH", path, SMP,
                       "{'spec':{'template':{'spec':{'containers':[{'name':'b','image':'redis:2'},"
                       "{'name':'c','image':'busybox'}]}}}}");
    cr_assert_str_eq(containers_of(p), "a=nginx:1,b=redis:2,c=busybox");
    /* Fields of a merged container not in the patch are kept. */
    cr_assert_str_eq(jstr(p, "spec.template.spec.containers.0.env.0.value"), "1");
    json_decref(p);

    /* env merges by name too. */
    p = req_ct(200, "PATCH", path, SMP,
               "{'spec':{'template':{'spec':{'containers':[{'name':'a','env':[{'name':'Y',"
               "'value':'2'}]}]}}}}");
    json_t *env = jget(p, "spec.template.spec.containers.0.env");
    cr_assert_eq(json_array_size(env), 2, "env merged by name");
    json_decref(p);

    /* What kubectl apply sends: $setElementOrder plus $patch: delete. */
    p = req_ct(200, "PATCH", path, SMP,
               "{'spec':{'template':{'spec':{'$setElementOrder/containers':[{'name':'c'},"
               "{'name':'a'}],'containers':[{'image':'nginx:2','name':'a'},"
               "{'$patch':'delete','name':'b'}]}}}}");
    cr_assert_str_eq(containers_of(p), "c=busybox,a=nginx:2");
    cr_assert_null(jget(p, "spec.template.spec.$setElementOrder/containers"));
    cr_assert_eq(jint(p, "metadata.generation"), 4);
    json_t *g = req(200, "GET", path, NULL);
    cr_assert_str_eq(containers_of(g), "c=busybox,a=nginx:2");
    json_decref(g);
    json_decref(p);

    /* $patch: replace on a map. */
    p = req_ct(200, "PATCH", path, SMP,
               "{'spec':{'template':{'metadata':{'labels':{'$patch':'replace','app':'d',"
               "'only':'this'}}}}}");
    cr_assert_str_eq(jstr(p, "spec.template.metadata.labels.only"), "this");
    json_decref(p);
    /* null deletes a map key, as in a merge patch. */
    p = req_ct(200, "PATCH", path, SMP,
               "{'spec':{'template':{'metadata':{'labels':{'only':null}}}}}");
    cr_assert_null(jget(p, "spec.template.metadata.labels.only"));
    json_decref(p);
}

Test(patch, strategic_merge_on_custom_resource_is_415)
{
    json_decref(mk_crd());
    json_decref(req(201, "POST", WIDGETS, "{'metadata':{'name':'w'},'spec':{'color':'red'}}"));
    unsigned long long before = fakeapi_revision(srv);
    json_t *st = req_fail_ct(415, "UnsupportedMediaType", "PATCH", WIDGETS "/w", SMP,
                             "{'spec':{'color':'blue'}}");
    json_decref(st);
    cr_assert_eq(fakeapi_revision(srv), before);
    /* A merge patch works on it. */
    json_t *p = req_ct(200, "PATCH", WIDGETS "/w", MERGE, "{'spec':{'color':'blue'}}");
    cr_assert_str_eq(jstr(p, "spec.color"), "blue");
    json_decref(p);
}

Test(patch, unknown_content_type_is_415)
{
    json_decref(mk_cm("default", "x", NULL));
    json_decref(req_fail_ct(415, "UnsupportedMediaType", "PATCH", CMX, "text/plain", "{}"));
    json_decref(req_fail_ct(415, "UnsupportedMediaType", "PATCH", CMX, "application/json",
                            "{'data':{'k':'z'}}"));
    json_decref(req_fail_ct(415, "UnsupportedMediaType", "PATCH", CMX, "application/xml",
                            "{'data':{'k':'z'}}"));
    json_t *g = req(200, "GET", CMX, NULL);
    cr_assert_str_eq(jstr(g, "data.k"), "v");
    json_decref(g);
    /* Parameters on the media type are fine. */
    json_t *p = req_ct(200, "PATCH", CMX, "application/merge-patch+json; charset=utf-8",
                       "{'data':{'k':'p'}}");
    cr_assert_str_eq(jstr(p, "data.k"), "p");
    json_decref(p);
}

Test(patch, malformed_patch_is_400)
{
    json_decref(mk_cm("default", "x", NULL));
    unsigned long long before = fakeapi_revision(srv);
    json_decref(req_fail_ct(400, "BadRequest", "PATCH", CMX, MERGE, "{'data':"));
    json_decref(req_fail_ct(400, "BadRequest", "PATCH", CMX, JSONP, "[{"));
    json_decref(req_fail_ct(400, "BadRequest", "PATCH", CMX, SMP, "nope"));
    cr_assert_eq(fakeapi_revision(srv), before);
}

Test(patch, server_side_apply)
{
    /* Without fieldManager: 422. */
    json_t *st = req_fail_ct(422, "Invalid", "PATCH", CMX, APPLY,
                             "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'x'}}");
    json_decref(st);
    cr_assert(gone(CMX));

    /* Creates when absent: 201. */
    json_t *a = req_ct(201, "PATCH", CMX "?fieldManager=kubectl&force=true", APPLY,
                       "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'x'},"
                       "'data':{'a':'1'}}");
    cr_assert_str_eq(jstr(a, "data.a"), "1");
    cr_assert_not_null(jstr(a, "metadata.uid"));
    cr_assert_eq(jint(a, "metadata.generation"), 1);
    /* Then updates: 200. */
    json_t *b = req_ct(200, "PATCH", CMX "?fieldManager=kubectl", APPLY,
                       "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  b: '2'\n");
    cr_assert_str_eq(jstr(b, "data.b"), "2");
    cr_assert_gt(rv_of(b), rv_of(a));
    cr_assert_str_eq(jstr(b, "metadata.uid"), jstr(a, "metadata.uid"));
    json_decref(a);
    json_decref(b);

    /* Apply creating a Deployment (a built-in kind), YAML body. */
    json_t *d = req_ct(201, "PATCH", DEPLOYS "/ad?fieldManager=me", APPLY,
                       "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ad\nspec:\n"
                       "  replicas: 2\n  selector:\n    matchLabels: {app: ad}\n  template:\n"
                       "    metadata:\n      labels: {app: ad}\n    spec:\n      containers:\n"
                       "      - name: a\n        image: nginx\n");
    cr_assert_eq(jint(d, "spec.replicas"), 2);
    cr_assert_str_eq(containers_of(d), "a=nginx");
    json_decref(d);

    /* Apply into a missing namespace: 404. */
    json_decref(req_fail_ct(404, "NotFound", "PATCH",
                            "/api/v1/namespaces/nope/configmaps/x?fieldManager=m", APPLY,
                            "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'x'}}"));
}

Test(patch, stale_resource_version_conflicts)
{
    json_t *a = mk_cm("default", "x", NULL);
    unsigned long long r1 = rv_of(a);
    json_decref(a);
    json_t *p = req_ct(200, "PATCH", CMX, MERGE,
                       S("{'metadata':{'resourceVersion':'%llu'},'data':{'k':'1'}}", r1));
    unsigned long long r2 = rv_of(p);
    json_decref(p);
    unsigned long long before = fakeapi_revision(srv);
    json_t *st = req_fail_ct(409, "Conflict", "PATCH", CMX, MERGE,
                             S("{'metadata':{'resourceVersion':'%llu'},'data':{'k':'2'}}", r1));
    cr_assert(strstr(jstr(st, "message"), "the object has been modified"));
    json_decref(st);
    st = req_fail_ct(409, "Conflict", "PATCH", CMX, JSONP,
                     S("[{'op':'replace','path':'/metadata/resourceVersion','value':'%llu'},"
                       "{'op':'replace','path':'/data/k','value':'3'}]",
                       r1));
    json_decref(st);
    cr_assert_eq(fakeapi_revision(srv), before);
    /* The current one passes. */
    p = req_ct(200, "PATCH", CMX, MERGE,
               S("{'metadata':{'resourceVersion':'%llu'},'data':{'k':'4'}}", r2));
    cr_assert_str_eq(jstr(p, "data.k"), "4");
    json_decref(p);
}

Test(patch, patch_cannot_change_identity)
{
    json_t *a = mk_cm("default", "x", NULL);
    json_t *p = req_ct(200, "PATCH", CMX, MERGE,
                       "{'metadata':{'uid':'hacked','creationTimestamp':'2001-01-01T00:00:00Z'}}");
    cr_assert_str_eq(jstr(p, "metadata.uid"), jstr(a, "metadata.uid"));
    cr_assert_str_eq(jstr(p, "metadata.creationTimestamp"), jstr(a, "metadata.creationTimestamp"));
    json_decref(p);
    json_decref(a);
    /* Changing kind via a patch is refused. */
    json_decref(req_fail_ct(400, "BadRequest", "PATCH", CMX, MERGE, "{'kind':'Secret'}"));
}

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
#include "apitest.h"

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
    cr_assert_null(jget(a, "metadata.generation"), "ConfigMaps keep no generation");
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

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
#include "apitest.h"

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
    cr_assert_str_eq(jstr(p, "status.phase"), "Pending",
                     "the client's status dropped on create: a pod starts Pending");
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

/* The names of obj's members, in order, as one string. */
static char *member_names(const json_t *obj)
{
    char *out = calloc(1, 1);
    size_t len = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v)
    {
        out = realloc(out, len + strlen(k) + 2);
        len += (size_t)sprintf(out + len, "%s,", k);
    }
    return out;
}

/* The entry of manager in obj's managedFields, or NULL. */
static json_t *entry_of(const json_t *obj, const char *manager)
{
    size_t i;
    json_t *e;
    json_array_foreach(jget(obj, "metadata.managedFields"), i, e)
    {
        if (!strcmp(jstr(e, "manager"), manager))
            return e;
    }
    return NULL;
}

/* A /status write copies the object but for status and managedFields:
 * members keep their places, the other managers' entries stay as they
 * were. */
/* obj's members in the opposite order (values shared). */
static json_t *reversed(const json_t *obj)
{
    const char *keys[64];
    size_t n = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v)
    {
        cr_assert_lt(n, 64);
        keys[n++] = k;
    }
    json_t *out = json_object();
    while (n-- > 0)
        json_object_set(out, keys[n], json_object_get(obj, keys[n]));
    return out;
}

static json_t *put_status(const json_t *body)
{
    char *text = json_dumps(body, JSON_COMPACT);
    cr_assert(text);
    json_t *s = req(200, "PUT", DP "/status", text);
    free(text);
    return s;
}

/*
 * A client sending back the whole object it read, as it read it or in
 * another order: only status changes, the stored members keep their order.
 */
Test(subresources, status_put_of_the_whole_object)
{
    json_decref(mk_deploy());
    json_t *d = req(200, "GET", DP, NULL);
    json_t *body = json_deep_copy(d);
    json_object_set_new(body, "status", json_pack("{s:i}", "replicas", 1));
    json_t *s = put_status(body);
    json_decref(body);
    cr_assert_eq(jint(s, "status.replicas"), 1);
    cr_assert(json_equal(jget(s, "spec"), jget(d, "spec")));
    char *top = member_names(s), *meta = member_names(jget(s, "metadata"));

    /* As read, status changed. */
    body = json_deep_copy(s);
    json_object_set_new(json_object_get(body, "status"), "readyReplicas", json_integer(1));
    json_t *s2 = put_status(body);
    json_decref(body);
    cr_assert_eq(jint(s2, "status.readyReplicas"), 1);
    char *top2 = member_names(s2), *meta2 = member_names(jget(s2, "metadata"));
    cr_assert_str_eq(top2, top);
    cr_assert_str_eq(meta2, meta);
    cr_assert(json_equal(jget(s2, "spec"), jget(d, "spec")));
    free(top2);
    free(meta2);

    /* In another order, with another spec: the stored spec and order stay. */
    body = reversed(s2);
    json_object_set_new(body, "metadata", reversed(jget(s2, "metadata")));
    json_object_set_new(body, "spec", json_pack("{s:i}", "replicas", 7));
    json_object_set_new(body, "status", json_pack("{s:i}", "replicas", 2));
    json_t *s3 = put_status(body);
    json_decref(body);
    cr_assert_eq(jint(s3, "status.replicas"), 2);
    cr_assert_eq(jint(s3, "spec.replicas"), 1);
    cr_assert(json_equal(jget(s3, "spec"), jget(d, "spec")));
    top2 = member_names(s3);
    meta2 = member_names(jget(s3, "metadata"));
    cr_assert_str_eq(top2, top);
    cr_assert_str_eq(meta2, meta);
    json_t *g = req(200, "GET", DP, NULL);
    cr_assert(json_equal(g, s3));
    json_decref(g);
    free(top);
    free(meta);
    free(top2);
    free(meta2);
    json_decref(s3);
    json_decref(s2);
    json_decref(s);
    json_decref(d);
}

Test(subresources, status_write_keeps_order_and_other_managers)
{
    json_decref(mk_deploy());
    json_t *d = req(200, "PUT", DP "/status?fieldManager=statusbot",
                    "{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':'d'},"
                    "'status':{'replicas':1}}");
    char *top = member_names(d), *meta = member_names(jget(d, "metadata"));
    json_t *mine = json_deep_copy(entry_of(d, "statusbot"));
    cr_assert(mine);
    json_t *s = req(200, "PUT", DP "/status?fieldManager=other",
                    S("{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':'d',"
                      "'resourceVersion':'%s'},'status':{'replicas':1,'readyReplicas':1}}",
                      jstr(d, "metadata.resourceVersion")));
    char *top2 = member_names(s), *meta2 = member_names(jget(s, "metadata"));
    cr_assert_str_eq(top2, top, "top-level members keep their order: %s, %s", top, top2);
    cr_assert_str_eq(meta2, meta, "metadata's members keep their order: %s, %s", meta, meta2);
    cr_assert_eq(json_array_size(jget(s, "metadata.managedFields")), 3);
    cr_assert(json_equal(entry_of(s, "statusbot"), mine), "statusbot's entry unchanged");
    cr_assert_str_eq(jstr(entry_of(s, "other"), "subresource"), "status");
    /* What is stored is what was answered. */
    json_t *g = req(200, "GET", DP, NULL);
    cr_assert(json_equal(g, s));
    json_decref(g);
    free(top);
    free(meta);
    free(top2);
    free(meta2);
    json_decref(mine);
    json_decref(s);
    json_decref(d);
}

/*
 * test_delete.c - DELETE over HTTP (K8S-API.md section 6): Status bodies,
 * finalizers and deletionTimestamp, preconditions, DeleteOptions in body and
 * query, propagation policies and garbage collection, namespace deletion,
 * deletecollection.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fakeapi/fakeapi.h"
#include "apitest.h"

TestSuite(delete, .init = setup, .fini = teardown);

#define CMP(name) S("/api/v1/namespaces/default/configmaps/%s", name)

/* A ConfigMap owned by the given owners ("name:uid" pairs, NULL-terminated). */
static json_t *mk_dependent(const char *name, const char *finalizer, ...)
{
    char refs[2048] = "";
    va_list ap;
    va_start(ap, finalizer);
    for (const json_t *owner; (owner = va_arg(ap, const json_t *));) {
        size_t off = strlen(refs);
        snprintf(refs + off, sizeof refs - off,
                 "%s{'apiVersion':'v1','kind':'ConfigMap','name':'%s','uid':'%s',"
                 "'blockOwnerDeletion':true}",
                 off ? "," : "", jstr(owner, "metadata.name"), jstr(owner, "metadata.uid"));
    }
    va_end(ap);
    return req(201, "POST", CM("default"),
               S("{'metadata':{'name':'%s','ownerReferences':[%s]%s%s%s}}", name, refs,
                 finalizer ? ",'finalizers':['" : "", finalizer ? finalizer : "",
                 finalizer ? "']" : ""));
}

static bool exists(const char *path)
{
    return !gone(path);
}

/* Remove every finalizer of a ConfigMap with an unconditional merge patch. */
static void clear_finalizers(const char *path)
{
    json_decref(req_ct(200, "PATCH", path, "application/merge-patch+json",
                       "{'metadata':{'finalizers':null}}"));
}

Test(delete, immediate_delete_status_body)
{
    json_t *a = mk_cm("default", "a", NULL);
    unsigned long long before = fakeapi_revision(srv);
    json_t *st = req(200, "DELETE", CMP("a"), NULL);
    cr_assert_str_eq(jstr(st, "kind"), "Status");
    cr_assert_str_eq(jstr(st, "apiVersion"), "v1");
    cr_assert_str_eq(jstr(st, "status"), "Success");
    cr_assert_str_eq(jstr(st, "details.name"), "a");
    cr_assert_str_eq(jstr(st, "details.kind"), "configmaps");
    cr_assert_null(jget(st, "details.group"));
    cr_assert_str_eq(jstr(st, "details.uid"), jstr(a, "metadata.uid"));
    json_decref(st);
    json_decref(a);
    cr_assert_gt(fakeapi_revision(srv), before, "a delete is a write");
    cr_assert(gone(CMP("a")));
    json_t *nf = req_fail(404, "NotFound", "DELETE", CMP("a"), NULL);
    cr_assert_str_eq(jstr(nf, "message"), "configmaps \"a\" not found");
    json_decref(nf);

    /* A grouped kind names its group. */
    json_decref(req(201, "POST", DEPLOYS, deploy_body("d")));
    st = req(200, "DELETE", DEPLOYS "/d", NULL);
    cr_assert_str_eq(jstr(st, "status"), "Success");
    cr_assert_str_eq(jstr(st, "details.group"), "apps");
    cr_assert_str_eq(jstr(st, "details.kind"), "deployments");
    json_decref(st);
}

Test(delete, pod_delete_returns_the_object)
{
    json_t *p = req(201, "POST", "/api/v1/namespaces/default/pods",
                    "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','image':'i'}]}}");
    json_t *d = req(200, "DELETE", "/api/v1/namespaces/default/pods/p", NULL);
    cr_assert_str_eq(jstr(d, "kind"), "Pod");
    cr_assert_str_eq(jstr(d, "metadata.name"), "p");
    cr_assert_str_eq(jstr(d, "metadata.uid"), jstr(p, "metadata.uid"));
    cr_assert_str_eq(jstr(d, "spec.containers.0.name"), "c");
    json_decref(d);
    json_decref(p);
    cr_assert(gone("/api/v1/namespaces/default/pods/p"));
}

/* Seconds since the epoch of an RFC 3339 time in whole seconds. */
static long long epoch_s(const char *ts)
{
    struct tm tm = {0};
    cr_assert(ts && strptime(ts, "%Y-%m-%dT%H:%M:%SZ", &tm), "time %s", ts ? ts : "(none)");
    return (long long)timegm(&tm);
}

#define GP(name) S("/api/v1/namespaces/default/pods/%s", name)

static json_t *mk_pod(const char *name, const char *spec_extra, const char *meta_extra)
{
    return req(201, "POST", "/api/v1/namespaces/default/pods",
               S("{'metadata':{'name':'%s'%s},'spec':{'containers':[{'name':'c','image':'i'}]%s}}",
                 name, meta_extra, spec_extra));
}

Test(delete, graceful_pod_deletion)
{
    /* A bound pod: kept with deletionTimestamp = now + its grace (30). */
    json_t *p = mk_pod("p", ",'nodeName':'n1'", "");
    long long created = epoch_s(jstr(p, "metadata.creationTimestamp"));
    json_t *d = req(200, "DELETE", GP("p"), NULL);
    cr_assert_str_eq(jstr(d, "kind"), "Pod");
    cr_assert_eq(jint(d, "metadata.deletionGracePeriodSeconds"), 30);
    long long when = epoch_s(jstr(d, "metadata.deletionTimestamp"));
    cr_assert(when - created >= 29 && when - created <= 32, "deletionTimestamp %lld s on",
              when - created);
    json_decref(d);
    json_t *g = req(200, "GET", GP("p"), NULL);
    cr_assert_eq(jint(g, "metadata.deletionGracePeriodSeconds"), 30);
    json_decref(g);

    /* A shorter grace shortens it (from the first request's time); a longer
     * one changes nothing. */
    d = req(200, "DELETE", GP("p"), "{'gracePeriodSeconds':10}");
    cr_assert_eq(jint(d, "metadata.deletionGracePeriodSeconds"), 10);
    cr_assert_eq(epoch_s(jstr(d, "metadata.deletionTimestamp")), when - 20);
    json_decref(d);
    d = req(200, "DELETE", S("%s?gracePeriodSeconds=20", GP("p")), NULL);
    cr_assert_eq(jint(d, "metadata.deletionGracePeriodSeconds"), 10);
    json_decref(d);

    /* Its kubelet writes status meanwhile: the pod stays. */
    json_decref(req_ct(200, "PATCH", S("%s/status", GP("p")), "application/merge-patch+json",
                       "{'status':{'phase':'Running'}}"));
    cr_assert(exists(GP("p")));

    /* Grace 0 (the kubelet's final delete) removes it. */
    d = req(200, "DELETE", S("%s?gracePeriodSeconds=0", GP("p")), NULL);
    json_decref(d);
    cr_assert(gone(GP("p")));
    json_decref(p);

    /* Deleted at once: never bound, already ended, no grace of its own. */
    json_decref(mk_pod("unbound", "", ""));
    json_decref(req(200, "DELETE", GP("unbound"), NULL));
    cr_assert(gone(GP("unbound")));
    json_decref(mk_pod("ended", ",'nodeName':'n1'", ""));
    json_decref(req_ct(200, "PATCH", S("%s/status", GP("ended")), "application/merge-patch+json",
                       "{'status':{'phase':'Succeeded'}}"));
    json_decref(req(200, "DELETE", GP("ended"), NULL));
    cr_assert(gone(GP("ended")));
    json_decref(mk_pod("quick", ",'nodeName':'n1','terminationGracePeriodSeconds':0", ""));
    json_decref(req(200, "DELETE", GP("quick"), NULL));
    cr_assert(gone(GP("quick")));

    /* A finalizer outlasts grace 0; its removal then ends the pod. */
    json_decref(mk_pod("held", ",'nodeName':'n1'", ",'finalizers':['example.com/hold']"));
    json_decref(req(200, "DELETE", GP("held"), "{'gracePeriodSeconds':5}"));
    d = req(200, "DELETE", GP("held"), "{'gracePeriodSeconds':0}");
    cr_assert_eq(jint(d, "metadata.deletionGracePeriodSeconds"), 0);
    json_decref(d);
    cr_assert(exists(GP("held")));
    clear_finalizers(GP("held"));
    cr_assert(gone(GP("held")));

    /* An eviction deletes gracefully too. */
    json_decref(mk_pod("ev", ",'nodeName':'n1'", ""));
    json_decref(req(201, "POST", S("%s/eviction", GP("ev")),
                    "{'apiVersion':'policy/v1','kind':'Eviction','metadata':{'name':'ev'}}"));
    g = req(200, "GET", GP("ev"), NULL);
    cr_assert_eq(jint(g, "metadata.deletionGracePeriodSeconds"), 30);
    json_decref(g);
    json_decref(req(201, "POST", S("%s/eviction", GP("ev")),
                    "{'apiVersion':'policy/v1','kind':'Eviction','metadata':{'name':'ev'},"
                    "'deleteOptions':{'gracePeriodSeconds':0}}"));
    cr_assert(gone(GP("ev")));
}

Test(delete, finalizers_defer_deletion)
{
    json_t *a = req(201, "POST", CM("default"),
                    "{'metadata':{'name':'f','finalizers':['example.com/a','example.com/b']}}");
    json_t *d = req(200, "DELETE", CMP("f"), NULL);
    cr_assert_str_eq(jstr(d, "kind"), "ConfigMap", "the object, not a Status");
    cr_assert_not_null(jstr(d, "metadata.deletionTimestamp"));
    cr_assert_eq(jint(d, "metadata.deletionGracePeriodSeconds"), 0);
    cr_assert_null(jget(d, "metadata.generation"), "a ConfigMap has no generation to bump");
    cr_assert_gt(rv_of(d), rv_of(a));
    cr_assert_eq(rv_of(d), fakeapi_revision(srv));
    json_decref(a);

    /* Still there, as written. */
    json_t *g = req(200, "GET", CMP("f"), NULL);
    cr_assert(json_equal(g, d));
    json_decref(g);

    /* Deleting again changes nothing. */
    unsigned long long before = fakeapi_revision(srv);
    json_t *d2 = req(200, "DELETE", CMP("f"), NULL);
    cr_assert_str_eq(jstr(d2, "metadata.deletionTimestamp"), jstr(d, "metadata.deletionTimestamp"));
    json_decref(d2);
    cr_assert_eq(fakeapi_revision(srv), before);

    /* Adding a finalizer now is forbidden. */
    json_t *st = req_fail(422, "Invalid", "PUT", CMP("f"),
                          S("{'metadata':{'name':'f','resourceVersion':'%llu','finalizers':"
                            "['example.com/a','example.com/b','example.com/c']}}",
                            rv_of(d)));
    cr_assert_str_eq(jstr(st, "details.causes.0.field"), "metadata.finalizers");
    json_decref(st);
    json_decref(req_fail_ct(422, "Invalid", "PATCH", CMP("f"), "application/json-patch+json",
                            "[{'op':'add','path':'/metadata/finalizers/-','value':'x/y'}]"));
    cr_assert_eq(fakeapi_revision(srv), before);

    /* Removing one keeps it; removing the last removes the object. */
    json_t *u = req(200, "PUT", CMP("f"),
                    S("{'metadata':{'name':'f','resourceVersion':'%llu','finalizers':"
                      "['example.com/b']}}",
                      rv_of(d)));
    cr_assert_not_null(jstr(u, "metadata.deletionTimestamp"));
    cr_assert(exists(CMP("f")));
    u = (json_decref(u), req(200, "PUT", CMP("f"), "{'metadata':{'name':'f','finalizers':[]}}"));
    json_decref(u);
    cr_assert(gone(CMP("f")), "gone once the finalizers are");
    json_decref(d);
}

Test(delete, preconditions)
{
    json_t *a = mk_cm("default", "p", NULL);
    json_t *st = req_fail(409, "Conflict", "DELETE", CMP("p"),
                          "{'kind':'DeleteOptions','apiVersion':'v1','preconditions':"
                          "{'uid':'00000000-0000-0000-0000-000000000000'}}");
    cr_assert(strstr(jstr(st, "message"), "Precondition failed"), "%s", jstr(st, "message"));
    json_decref(st);
    json_decref(req_fail(409, "Conflict", "DELETE", CMP("p"),
                         S("{'preconditions':{'resourceVersion':'%llu'}}", rv_of(a) + 1000)));
    cr_assert(exists(CMP("p")));
    json_t *ok = req(200, "DELETE", CMP("p"),
                     S("{'preconditions':{'uid':'%s','resourceVersion':'%s'}}",
                       jstr(a, "metadata.uid"), jstr(a, "metadata.resourceVersion")));
    cr_assert_str_eq(jstr(ok, "status"), "Success");
    json_decref(ok);
    json_decref(a);
    cr_assert(gone(CMP("p")));
}

Test(delete, bad_delete_options)
{
    json_decref(mk_cm("default", "b", NULL));
    json_decref(req_fail(400, "BadRequest", "DELETE", CMP("b"), "{'propagationPolicy':"));
    json_decref(req_fail(422, "Invalid", "DELETE", CMP("b"), "{'propagationPolicy':'Sideways'}"));
    json_decref(
        req_fail(422, "Invalid", "DELETE", S("%s?propagationPolicy=Sideways", CMP("b")), NULL));
    cr_assert(exists(CMP("b")));
}

Test(delete, background_collects_dependents)
{
    json_t *owner = mk_cm("default", "owner", NULL);
    json_t *dep = mk_dependent("dep", NULL, owner, NULL);
    json_t *dep2 = mk_dependent("dep2", NULL, owner, NULL);
    json_decref(mk_cm("default", "bystander", NULL));
    json_decref(req(200, "DELETE", CMP("owner"), "{'propagationPolicy':'Background'}"));
    cr_assert(gone(CMP("owner")), "background deletes the owner at once");
    cr_assert(wait_gone(CMP("dep"), 2000), "dependent collected");
    cr_assert(wait_gone(CMP("dep2"), 2000), "dependent collected");
    cr_assert(exists(CMP("bystander")));
    json_decref(owner);
    json_decref(dep);
    json_decref(dep2);

    /* The default policy is Background too, and chains: grandchildren go. */
    owner = mk_cm("default", "o2", NULL);
    dep = mk_dependent("child", NULL, owner, NULL);
    dep2 = mk_dependent("grandchild", NULL, dep, NULL);
    json_decref(req(200, "DELETE", CMP("o2"), NULL));
    cr_assert(wait_gone(CMP("child"), 2000));
    cr_assert(wait_gone(CMP("grandchild"), 2000));
    json_decref(owner);
    json_decref(dep);
    json_decref(dep2);
}

Test(delete, foreground_waits_for_dependents)
{
    json_t *owner = mk_cm("default", "owner", NULL);
    json_t *dep = mk_dependent("dep", "example.com/hold", owner, NULL);
    json_t *d = req(200, "DELETE", CMP("owner"), "{'propagationPolicy':'Foreground'}");
    cr_assert_not_null(jstr(d, "metadata.deletionTimestamp"));
    json_t *fins = jget(d, "metadata.finalizers");
    cr_assert_eq(json_array_size(fins), 1);
    cr_assert_str_eq(json_string_value(json_array_get(fins, 0)), "foregroundDeletion");
    json_decref(d);

    /* The dependent starts deleting; its finalizer holds it, and it holds the owner. */
    bool dep_deleting = false;
    for (int i = 0; i < 100 && !dep_deleting; i++) {
        json_t *g = req(200, "GET", CMP("dep"), NULL);
        dep_deleting = jstr(g, "metadata.deletionTimestamp") != NULL;
        json_decref(g);
        if (!dep_deleting)
            usleep(20 * 1000);
    }
    cr_assert(dep_deleting, "the garbage collector deletes the dependent first");
    usleep(100 * 1000);
    cr_assert(exists(CMP("owner")), "the owner waits for its dependents");

    clear_finalizers(CMP("dep"));
    cr_assert(gone(CMP("dep")));
    cr_assert(wait_gone(CMP("owner"), 2000), "then the owner goes");
    json_decref(owner);
    json_decref(dep);
}

Test(delete, foreground_without_dependents)
{
    json_decref(mk_cm("default", "lonely", NULL));
    json_decref(req(200, "DELETE", S("%s?propagationPolicy=Foreground", CMP("lonely")), NULL));
    cr_assert(wait_gone(CMP("lonely"), 2000));
}

Test(delete, orphan_keeps_dependents)
{
    json_t *owner = mk_cm("default", "owner", NULL);
    json_t *other = mk_cm("default", "other", NULL);
    json_t *dep = mk_dependent("dep", NULL, owner, other, NULL);
    json_t *solo = mk_dependent("solo", NULL, owner, NULL);
    /* DeleteOptions as query parameters (as the Python client sends them). */
    json_t *d = req(200, "DELETE", S("%s?propagationPolicy=Orphan", CMP("owner")), NULL);
    cr_assert_not_null(jstr(d, "metadata.deletionTimestamp"));
    cr_assert_str_eq(jstr(d, "metadata.finalizers.0"), "orphan");
    json_decref(d);
    cr_assert(wait_gone(CMP("owner"), 2000));
    usleep(100 * 1000);
    json_t *g = req(200, "GET", CMP("solo"), NULL);
    cr_assert_null(jget(g, "metadata.ownerReferences"), "the reference to the owner is removed");
    json_decref(g);
    g = req(200, "GET", CMP("dep"), NULL);
    cr_assert_eq(json_array_size(jget(g, "metadata.ownerReferences")), 1);
    cr_assert_str_eq(jstr(g, "metadata.ownerReferences.0.uid"), jstr(other, "metadata.uid"));
    json_decref(g);
    json_decref(owner);
    json_decref(other);
    json_decref(dep);
    json_decref(solo);

    /* orphanDependents: true in the body means the same. */
    owner = mk_cm("default", "o2", NULL);
    dep = mk_dependent("d2", NULL, owner, NULL);
    json_decref(req(200, "DELETE", CMP("o2"), "{'orphanDependents':true}"));
    cr_assert(wait_gone(CMP("o2"), 2000));
    usleep(100 * 1000);
    cr_assert(exists(CMP("d2")));
    json_decref(owner);
    json_decref(dep);
}

Test(delete, dependent_with_two_owners_survives_one)
{
    json_t *o1 = mk_cm("default", "o1", NULL);
    json_t *o2 = mk_cm("default", "o2", NULL);
    json_t *dep = mk_dependent("dep", NULL, o1, o2, NULL);
    json_decref(req(200, "DELETE", CMP("o1"), NULL));
    usleep(200 * 1000);
    json_t *g = req(200, "GET", CMP("dep"), NULL);
    json_t *refs = jget(g, "metadata.ownerReferences");
    cr_assert_geq(json_array_size(refs), 1);
    bool has_o2 = false;
    for (size_t i = 0; i < json_array_size(refs); i++)
        has_o2 |= !strcmp(jstr(json_array_get(refs, i), "uid"), jstr(o2, "metadata.uid"));
    cr_assert(has_o2);
    json_decref(g);
    /* When the last owner goes, so does the dependent. */
    json_decref(req(200, "DELETE", CMP("o2"), NULL));
    cr_assert(wait_gone(CMP("dep"), 2000));
    json_decref(o1);
    json_decref(o2);
    json_decref(dep);
}

Test(delete, cross_kind_owner)
{
    /* A ReplicaSet owned by a Deployment goes with it. */
    json_t *d = req(201, "POST", DEPLOYS, deploy_body("web"));
    json_decref(
        req(201, "POST", "/apis/apps/v1/namespaces/default/replicasets",
            S("{'metadata':{'name':'web-1','ownerReferences':[{'apiVersion':'apps/v1',"
              "'kind':'Deployment','name':'web','uid':'%s','controller':true}]},"
              "'spec':{'selector':{'matchLabels':{'app':'web'}},'template':{'metadata':"
              "{'labels':{'app':'web'}},'spec':{'containers':[{'name':'a','image':'i'}]}}}}",
              jstr(d, "metadata.uid"))));
    json_decref(req(200, "DELETE", DEPLOYS "/web", NULL));
    cr_assert(wait_gone("/apis/apps/v1/namespaces/default/replicasets/web-1", 2000));
    json_decref(d);
}

Test(delete, namespace_deletion)
{
    mk_ns("doomed");
    json_decref(req(201, "POST", CM("doomed"),
                    "{'metadata':{'name':'held','finalizers':['example.com/hold']}}"));
    json_decref(mk_cm("doomed", "plain", NULL));
    json_decref(req(201, "POST", "/apis/apps/v1/namespaces/doomed/deployments", deploy_body("d")));
    json_decref(mk_cm("default", "safe", NULL));

    json_t *ns = req(200, "DELETE", "/api/v1/namespaces/doomed", NULL);
    cr_assert_str_eq(jstr(ns, "kind"), "Namespace");
    cr_assert_str_eq(jstr(ns, "status.phase"), "Terminating");
    cr_assert_not_null(jstr(ns, "metadata.deletionTimestamp"));
    json_decref(ns);

    /* Creating in a terminating namespace: 403 Forbidden. */
    json_t *st = req_fail(403, "Forbidden", "POST", CM("doomed"), "{'metadata':{'name':'new'}}");
    cr_assert_str_eq(jstr(st, "message"),
                     "configmaps \"new\" is forbidden: unable to create new content in namespace "
                     "doomed because it is being terminated");
    json_decref(st);

    /* Contents go; the held one starts deleting and holds the namespace. */
    cr_assert(wait_gone("/api/v1/namespaces/doomed/configmaps/plain", 2000));
    cr_assert(wait_gone("/apis/apps/v1/namespaces/doomed/deployments/d", 2000));
    usleep(100 * 1000);
    json_t *g = req(200, "GET", "/api/v1/namespaces/doomed/configmaps/held", NULL);
    cr_assert_not_null(jstr(g, "metadata.deletionTimestamp"));
    json_decref(g);
    g = req(200, "GET", "/api/v1/namespaces/doomed", NULL);
    cr_assert_str_eq(jstr(g, "status.phase"), "Terminating");
    json_decref(g);

    clear_finalizers("/api/v1/namespaces/doomed/configmaps/held");
    cr_assert(wait_gone("/api/v1/namespaces/doomed", 2000), "the namespace goes last");
    cr_assert(exists(CMP("safe")), "other namespaces are untouched");
    /* And the name can be used again. */
    mk_ns("doomed");
    json_decref(mk_cm("doomed", "again", NULL));
}

Test(delete, deletecollection_with_selector)
{
    json_decref(mk_cm("default", "x1", "{'app':'x'}"));
    json_decref(mk_cm("default", "x2", "{'app':'x'}"));
    json_decref(mk_cm("default", "x3", "{'app':'x'}"));
    json_decref(mk_cm("default", "y1", "{'app':'y'}"));
    json_decref(mk_cm("default", "n1", NULL));
    mk_ns("other");
    json_decref(mk_cm("other", "x9", "{'app':'x'}"));

    json_t *l = req(200, "DELETE", S("%s?labelSelector=%s", CM("default"), enc("app=x")), NULL);
    cr_assert_str_eq(jstr(l, "kind"), "ConfigMapList");
    cr_assert_eq(json_array_size(jget(l, "items")), 3);
    json_decref(l);
    l = req(200, "GET", CM("default"), NULL);
    cr_assert_eq(json_array_size(jget(l, "items")), 2);
    cr_assert_str_eq(jstr(l, "items.0.metadata.name"), "n1");
    cr_assert_str_eq(jstr(l, "items.1.metadata.name"), "y1");
    json_decref(l);
    cr_assert(exists("/api/v1/namespaces/other/configmaps/x9"), "only the namespace asked for");

    /* With a field selector. */
    l = req(200, "DELETE", S("%s?fieldSelector=%s", CM("default"), enc("metadata.name=y1")), NULL);
    cr_assert_eq(json_array_size(jget(l, "items")), 1);
    json_decref(l);
    cr_assert(gone(CMP("y1")));
    cr_assert(exists(CMP("n1")));

    /* A bad selector deletes nothing. */
    json_decref(req_fail(400, "BadRequest", "DELETE",
                         S("%s?labelSelector=%s", CM("default"), enc("a in (")), NULL));
    cr_assert(exists(CMP("n1")));

    /* No selector: everything in the namespace. */
    l = req(200, "DELETE", CM("default"), NULL);
    cr_assert_eq(json_array_size(jget(l, "items")), 1);
    json_decref(l);
    cr_assert(gone(CMP("n1")));
}

Test(delete, dry_run_delete)
{
    json_decref(req(201, "POST", CM("default"),
                    "{'metadata':{'name':'f','finalizers':['example.com/a']}}"));
    json_decref(mk_cm("default", "p", NULL));
    unsigned long long before = fakeapi_revision(srv);
    json_decref(req(200, "DELETE", S("%s?dryRun=All", CMP("f")), NULL));
    json_decref(req(200, "DELETE", S("%s?dryRun=All", CMP("p")), NULL));
    json_decref(req(200, "DELETE", S("%s?dryRun=All", CM("default")), NULL));
    cr_assert_eq(fakeapi_revision(srv), before);
    json_t *g = req(200, "GET", CMP("f"), NULL);
    cr_assert_null(jget(g, "metadata.deletionTimestamp"));
    json_decref(g);
    cr_assert(exists(CMP("p")));
}

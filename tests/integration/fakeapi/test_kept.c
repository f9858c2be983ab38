/*
 * test_kept.c - the store keeps the objects its last writes stored, parsed
 * (store.h, fakeapi__store_keep), for the next update to start from: every
 * write path that replaces, rolls back or removes an object must leave the
 * next update starting from what is stored, never from an older state.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "apitest.h"

TestSuite(kept, .init = setup, .fini = teardown);

#define CMS "/api/v1/namespaces/default/configmaps"
#define MERGE "application/merge-patch+json"

/* A ConfigMap's PUT body: data.v at resourceVersion rv (0: none). */
static const char *cm_body(const char *name, const char *v, unsigned long long rv)
{
    if (!rv)
        return S("{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'%s'},"
                 "'data':{'v':'%s'}}",
                 name, v);
    return S("{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'%s',"
             "'resourceVersion':'%llu'},'data':{'v':'%s'}}",
             name, rv, v);
}

/* A merge patch adding a label: the answer is the stored state it started from, plus it. */
static json_t *touch(const char *path, const char *label)
{
    return req_ct(200, "PATCH", path, MERGE, S("{'metadata':{'labels':{'%s':'y'}}}", label));
}

Test(kept, updates_in_a_row_start_from_the_last_one)
{
    json_t *o = req(201, "POST", CMS, cm_body("a", "0", 0));
    for (int i = 1; i <= 5; i++) {
        unsigned long long rv = rv_of(o);
        json_decref(o);
        o = req(200, "PUT", CMS "/a", cm_body("a", S("%d", i), rv));
        cr_assert_gt(rv_of(o), rv);
        cr_assert_str_eq(jstr(o, "data.v"), S("%d", i));
    }
    /* The same state again is a no-op write: no new revision. */
    unsigned long long rv = rv_of(o);
    json_t *same = req(200, "PUT", CMS "/a", cm_body("a", "5", rv));
    cr_assert_eq(rv_of(same), rv);
    /* A stale resourceVersion is a conflict, then the current one goes through. */
    json_decref(req_fail(409, "Conflict", "PUT", CMS "/a", cm_body("a", "x", rv - 1)));
    json_t *p = touch(CMS "/a", "after-conflict");
    cr_assert_str_eq(jstr(p, "data.v"), "5");
    cr_assert_str_eq(jstr(p, "metadata.labels.after-conflict"), "y");
    json_decref(p);
    json_decref(same);
    json_decref(o);
}

Test(kept, a_status_write_keeps_the_latest_spec)
{
    json_t *d = req(201, "POST", DEPLOYS, deploy_body("web"));
    unsigned long long rv = rv_of(d);
    /* The main object changes (a label) after the status writer read it. */
    json_t *l = touch(DEPLOYS "/web", "team");
    json_decref(req_fail(409, "Conflict", "PUT", DEPLOYS "/web/status",
                         S("{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':'web',"
                           "'resourceVersion':'%llu'},'status':{'replicas':1}}",
                           rv)));
    json_t *s = req(200, "PUT", DEPLOYS "/web/status",
                    S("{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':'web',"
                      "'resourceVersion':'%llu'},'status':{'replicas':1}}",
                      rv_of(l)));
    cr_assert_str_eq(jstr(s, "metadata.labels.team"), "y");
    cr_assert_eq(jint(s, "status.replicas"), 1);
    json_t *g = req(200, "GET", DEPLOYS "/web", NULL);
    cr_assert_str_eq(jstr(g, "metadata.resourceVersion"), jstr(s, "metadata.resourceVersion"));
    cr_assert_str_eq(jstr(g, "metadata.labels.team"), "y");
    json_decref(g);
    json_decref(s);
    json_decref(l);
    json_decref(d);
}

Test(kept, a_dry_run_or_a_refused_write_leaves_the_stored_state)
{
    json_t *o = req(201, "POST", CMS, cm_body("b", "stored", 0));
    json_t *u = req(200, "PUT", CMS "/b", cm_body("b", "kept", rv_of(o)));
    /* A dry run writes and rolls back. */
    json_t *dry = req(200, "PUT", CMS "/b?dryRun=All", cm_body("b", "dry", rv_of(u)));
    cr_assert_str_eq(jstr(dry, "data.v"), "dry");
    json_t *p = touch(CMS "/b", "one");
    cr_assert_str_eq(jstr(p, "data.v"), "kept");
    /* A write the API refuses (an invalid label value). */
    long got = 0;
    json_t *bad = req_full(0, "PATCH", CMS "/b", MERGE,
                           "{'metadata':{'labels':{'bad':'-no-'}},'data':{'v':'refused'}}", &got);
    cr_assert_eq(got, 422);
    json_t *q = touch(CMS "/b", "two");
    cr_assert_str_eq(jstr(q, "data.v"), "kept");
    cr_assert_str_eq(jstr(q, "metadata.labels.one"), "y");
    json_decref(q);
    json_decref(bad);
    json_decref(p);
    json_decref(dry);
    json_decref(u);
    json_decref(o);
}

Test(kept, deleted_and_created_again_under_the_same_name)
{
    json_t *o = req(201, "POST", CMS, cm_body("c", "first", 0));
    json_t *u = req(200, "PUT", CMS "/c", cm_body("c", "first-updated", rv_of(o)));
    json_decref(req(200, "DELETE", CMS "/c", NULL));
    json_t *again = req(201, "POST", CMS, cm_body("c", "second", 0));
    cr_assert_str_neq(jstr(again, "metadata.uid"), jstr(u, "metadata.uid"));
    json_t *p = touch(CMS "/c", "x");
    cr_assert_str_eq(jstr(p, "data.v"), "second");
    cr_assert_str_eq(jstr(p, "metadata.uid"), jstr(again, "metadata.uid"));
    json_decref(p);
    json_decref(again);
    json_decref(u);
    json_decref(o);
}

Test(kept, updates_after_a_compaction)
{
    json_t *o = req(201, "POST", CMS, cm_body("d", "1", 0));
    json_t *u = req(200, "PUT", CMS "/d", cm_body("d", "2", rv_of(o)));
    cr_assert_eq(fakeapi_compact(srv, 0), 0);
    json_t *v = req(200, "PUT", CMS "/d", cm_body("d", "3", rv_of(u)));
    cr_assert_str_eq(jstr(v, "data.v"), "3");
    json_t *p = touch(CMS "/d", "x");
    cr_assert_str_eq(jstr(p, "data.v"), "3");
    cr_assert_str_eq(jstr(p, "metadata.uid"), jstr(o, "metadata.uid"));
    json_decref(p);
    json_decref(v);
    json_decref(u);
    json_decref(o);
}

Test(kept, a_delete_that_only_marks_the_object)
{
    json_t *o = req(201, "POST", CMS,
                    "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'e',"
                    "'finalizers':['example.com/hold']},'data':{'v':'1'}}");
    json_t *u = touch(CMS "/e", "before");
    /* The answer is the object as stored, deletionTimestamp set. */
    json_t *d = req(200, "DELETE", CMS "/e", NULL);
    json_t *g = req(200, "GET", CMS "/e", NULL);
    cr_assert_not_null(jget(d, "metadata.deletionTimestamp"));
    cr_assert(json_equal(d, g), "a delete answers what a get reads");
    json_decref(d);
    json_decref(g);
    json_t *p = touch(CMS "/e", "after");
    cr_assert_not_null(jget(p, "metadata.deletionTimestamp"));
    cr_assert_gt(rv_of(p), rv_of(u));
    /* Dropping the finalizer lets it go. */
    json_decref(req_ct(200, "PATCH", CMS "/e", MERGE, "{'metadata':{'finalizers':null}}"));
    cr_assert(gone(CMS "/e"));
    json_decref(p);
    json_decref(u);
    json_decref(o);
}

Test(kept, a_bound_pod_reports_its_status_on_its_node)
{
    const char *pods = "/api/v1/namespaces/default/pods";
    json_t *p = req(201, "POST", pods,
                    "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
                    "'spec':{'containers':[{'name':'c','image':'nginx'}]}}");
    json_t *t = touch(S("%s/p", pods), "x");
    json_decref(req(201, "POST", S("%s/p/binding", pods),
                    "{'apiVersion':'v1','kind':'Binding','metadata':{'name':'p'},"
                    "'target':{'apiVersion':'v1','kind':'Node','name':'node-1'}}"));
    json_t *s = req(200, "PUT", S("%s/p/status", pods),
                    "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},"
                    "'status':{'phase':'Running'}}");
    cr_assert_str_eq(jstr(s, "spec.nodeName"), "node-1");
    cr_assert_str_eq(jstr(s, "status.phase"), "Running");
    json_decref(s);
    json_decref(t);
    json_decref(p);
}

/* A bind keeps the bound pod for the status write that follows; a dry-run
 * bind keeps nothing, and a second bind is refused from the kept state. */
Test(kept, a_dry_run_bind_leaves_the_pod_unbound)
{
    const char *pods = "/api/v1/namespaces/default/pods";
    json_t *p = req(201, "POST", pods,
                    "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'q'},"
                    "'spec':{'containers':[{'name':'c','image':'nginx'}]}}");
    const char *binding = "{'apiVersion':'v1','kind':'Binding','metadata':{'name':'q'},"
                          "'target':{'apiVersion':'v1','kind':'Node','name':'node-1'}}";
    json_decref(req(201, "POST", S("%s/q/binding?dryRun=All", pods), binding));
    json_t *s = req(200, "PUT", S("%s/q/status", pods),
                    "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'q'},"
                    "'status':{'phase':'Pending'}}");
    cr_assert_null(jstr(s, "spec.nodeName"));
    json_decref(req(201, "POST", S("%s/q/binding", pods), binding));
    json_decref(req(409, "POST", S("%s/q/binding", pods), binding));
    json_t *r = req(200, "PUT", S("%s/q/status", pods),
                    "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'q'},"
                    "'status':{'phase':'Running'}}");
    cr_assert_str_eq(jstr(r, "spec.nodeName"), "node-1");
    json_decref(r);
    json_decref(s);
    json_decref(p);
}

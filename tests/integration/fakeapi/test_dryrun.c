/*
 * test_dryrun.c - ?dryRun=All over HTTP on create, update, patch, the status
 * subresource, delete and deletecollection: every check still runs (409,
 * 422, 404, preconditions, schemas), the answer is what would be stored
 * (kube-apiserver's DryRunnableStorage and dryrun.ResetMetadata): an update
 * keeps the stored resourceVersion, a create has neither resourceVersion nor
 * uid, a delete answers the object as it would be and keeps it. Nothing is
 * stored, the revision does not move, and no watch sees an event.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "fakeapi/fakeapi.h"
#include "apitest.h"

#define MERGE "application/merge-patch+json"
#define DRY "?dryRun=All"

/* A watch on every ConfigMap from now, which must stay quiet. */
static wstream *quiet_watch(void)
{
    return ws_start_ok(S("/api/v1/configmaps?watch=true&resourceVersion=%llu", rev()),
                       "test_dryrun/1.0", 2000);
}

static void expect_quiet(wstream *w)
{
    char *line = ws_line(w, 300);
    cr_assert_null(line, "a dry run sent an event: %.300s", line);
    ws_close(w);
}

/* The stored object, its text compared with before (what a dry run must
 * leave untouched). */
static void expect_unchanged(const char *path, const json_t *before)
{
    json_t *now = req(200, "GET", path, NULL);
    cr_assert(json_equal(now, before), "a dry run changed %s", path);
    json_decref(now);
}

TestSuite(dryrun, .init = setup, .fini = teardown, .timeout = 60);

Test(dryrun, create)
{
    wstream *w = quiet_watch();
    unsigned long long r0 = rev();
    json_t *o = req(201, "POST", S("%s" DRY, CM("default")),
                    "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'c'},"
                    "'data':{'k':'v'}}");
    cr_assert_str_eq(jstr(o, "metadata.name"), "c");
    cr_assert_str_eq(jstr(o, "metadata.namespace"), "default");
    cr_assert_str_eq(jstr(o, "data.k"), "v");
    cr_assert_null(jget(o, "metadata.resourceVersion"), "no resourceVersion on a dry-run create");
    cr_assert_null(jget(o, "metadata.uid"), "no uid on a dry-run create");
    cr_assert_not_null(jstr(o, "metadata.creationTimestamp"), "creationTimestamp as a create");
    json_decref(o);
    cr_assert_eq(rev(), r0, "the revision did not move");
    cr_assert(gone(S("%s/c", CM("default"))), "nothing was stored");

    /* generateName: no name is promised either. */
    o = req(201, "POST", S("%s" DRY, CM("default")),
            "{'metadata':{'generateName':'gen-'},'data':{'k':'v'}}");
    cr_assert_str_eq(jstr(o, "metadata.name"), "");
    cr_assert_str_eq(jstr(o, "metadata.generateName"), "gen-");
    cr_assert_null(jget(o, "metadata.uid"));
    json_decref(o);
    json_t *list = req(200, "GET", CM("default"), NULL);
    cr_assert_eq(json_array_size(jget(list, "items")), 0);
    json_decref(list);

    /* A Deployment: the answer is what a create would store. */
    o = req(201, "POST", DEPLOYS DRY, deploy_body("d"));
    cr_assert_str_eq(jstr(o, "kind"), "Deployment");
    cr_assert_eq(jint(o, "metadata.generation"), 1);
    cr_assert_null(jget(o, "metadata.resourceVersion"));
    json_decref(o);
    cr_assert(gone(DEPLOYS "/d"));
    cr_assert_eq(rev(), r0);
    expect_quiet(w);
}

/* Every check a create runs still runs. */
Test(dryrun, create_checks)
{
    json_t *c = mk_cm("default", "taken", NULL);
    unsigned long long r0 = rev();
    json_decref(req_fail(409, "AlreadyExists", "POST", S("%s" DRY, CM("default")),
                         "{'metadata':{'name':'taken'}}"));
    json_decref(req_fail(422, "Invalid", "POST", S("%s" DRY, CM("default")),
                         "{'metadata':{'name':'Not_Valid'}}"));
    json_decref(req_fail(422, "Invalid", "POST", S("%s" DRY, CM("default")),
                         "{'metadata':{'name':'x','resourceVersion':'3'}}"));
    json_decref(
        req_fail(404, "NotFound", "POST", S("%s" DRY, CM("nowhere")), "{'metadata':{'name':'x'}}"));
    json_decref(req_fail(400, "BadRequest", "POST", S("%s" DRY, CM("default")),
                         "{'metadata':{'name':'x'},'data':'not a map'}"));
    json_decref(req_fail(422, "Invalid", "POST", S("%s?dryRun=all", CM("default")),
                         "{'metadata':{'name':'x'}}"));
    /* A custom resource's schema. */
    json_decref(mk_crd());
    unsigned long long r1 = rev();
    json_decref(req_fail(422, "Invalid", "POST", WIDGETS DRY,
                         "{'apiVersion':'example.com/v1','kind':'Widget','metadata':{'name':'w'},"
                         "'spec':{'color':'green'}}"));
    json_t *w = req(201, "POST", WIDGETS DRY,
                    "{'apiVersion':'example.com/v1','kind':'Widget','metadata':{'name':'w'},"
                    "'spec':{'color':'red'}}");
    cr_assert_eq(jint(w, "spec.size"), 3, "defaulted as a create would be");
    json_decref(w);
    cr_assert(gone(WIDGETS "/w"));
    cr_assert_eq(rev(), r1);
    cr_assert(r1 > r0);
    json_decref(c);
}

/* PUT and PATCH: the answer is the new state at the stored resourceVersion;
 * a real write of the same gives the same object at a new one. */
Test(dryrun, update_and_patch)
{
    json_decref(req(201, "POST", DEPLOYS, deploy_body("d")));
    json_t *cur = req(200, "GET", DEPLOYS "/d", NULL);
    const char *rv = jstr(cur, "metadata.resourceVersion");
    unsigned long long r0 = rev();
    wstream *w = quiet_watch();
    wstream *wd = ws_start_ok(S(DEPLOYS "?watch=true&resourceVersion=%llu", r0), "t", 2000);

    json_t *p = req_ct(200, "PATCH", DEPLOYS "/d" DRY, MERGE, "{'spec':{'replicas':7}}");
    cr_assert_eq(jint(p, "spec.replicas"), 7);
    cr_assert_str_eq(jstr(p, "metadata.resourceVersion"), rv, "the stored resourceVersion");
    cr_assert_str_eq(jstr(p, "metadata.uid"), jstr(cur, "metadata.uid"));
    cr_assert_eq(jint(p, "metadata.generation"), jint(cur, "metadata.generation") + 1,
                 "generation as the write would make it");
    expect_unchanged(DEPLOYS "/d", cur);

    /* PUT of the object as read (its JSON has no single quotes for req to turn). */
    json_t *next = json_deep_copy(cur);
    json_object_set_new(jget(next, "spec"), "replicas", json_integer(4));
    char *body = json_dumps(next, JSON_COMPACT);
    json_t *u = req_ct(200, "PUT", DEPLOYS "/d" DRY, "application/json", body);
    cr_assert_eq(jint(u, "spec.replicas"), 4);
    cr_assert_str_eq(jstr(u, "metadata.resourceVersion"), rv);
    json_decref(u);
    free(body);
    expect_unchanged(DEPLOYS "/d", cur);

    /* A stale resourceVersion is still a conflict. */
    json_object_set_new(jget(next, "metadata"), "resourceVersion", json_string("1"));
    body = json_dumps(next, JSON_COMPACT);
    json_decref(req_fail_ct(409, "Conflict", "PUT", DEPLOYS "/d" DRY, "application/json", body));
    free(body);
    json_decref(next);

    /* The status subresource. */
    json_t *s =
        req_ct(200, "PATCH", DEPLOYS "/d/status" DRY, MERGE, "{'status':{'readyReplicas':1}}");
    cr_assert_eq(jint(s, "status.readyReplicas"), 1);
    cr_assert_str_eq(jstr(s, "metadata.resourceVersion"), rv);
    json_decref(s);
    expect_unchanged(DEPLOYS "/d", cur);
    cr_assert_eq(rev(), r0);

    /* The same patch for real: the dry run's object at a new resourceVersion. */
    json_t *real = req_ct(200, "PATCH", DEPLOYS "/d", MERGE, "{'spec':{'replicas':7}}");
    cr_assert_str_neq(jstr(real, "metadata.resourceVersion"), rv);
    json_object_del(jget(real, "metadata"), "resourceVersion");
    json_object_del(jget(p, "metadata"), "resourceVersion");
    cr_assert(json_equal(real, p), "the dry run answered what is now stored");
    json_decref(real);
    json_decref(p);
    json_t *ev = ws_next(wd, 3000);
    cr_assert_not_null(ev);
    cr_assert_str_eq(jstr(ev, "type"), "MODIFIED", "the real patch is the first event");
    cr_assert_eq(jint(ev, "object.spec.replicas"), 7);
    json_decref(ev);
    ws_close(wd);
    expect_quiet(w);
    json_decref(cur);
}

Test(dryrun, delete)
{
    json_decref(mk_cm("default", "plain", NULL));
    json_decref(req(201, "POST", CM("default"),
                    "{'metadata':{'name':'held','finalizers':['example.com/hold']}}"));
    json_t *plain = req(200, "GET", S("%s/plain", CM("default")), NULL);
    json_t *held = req(200, "GET", S("%s/held", CM("default")), NULL);
    unsigned long long r0 = rev();
    wstream *w = quiet_watch();

    json_t *st = req(200, "DELETE", S("%s/plain" DRY, CM("default")), NULL);
    cr_assert_str_eq(jstr(st, "kind"), "Status");
    cr_assert_str_eq(jstr(st, "status"), "Success");
    cr_assert_str_eq(jstr(st, "details.uid"), jstr(plain, "metadata.uid"));
    json_decref(st);
    expect_unchanged(S("%s/plain", CM("default")), plain);

    /* With finalizers: the object as the delete would leave it. */
    json_t *o = req(200, "DELETE", S("%s/held" DRY, CM("default")), NULL);
    cr_assert_not_null(jstr(o, "metadata.deletionTimestamp"));
    cr_assert_str_eq(jstr(o, "metadata.resourceVersion"), jstr(held, "metadata.resourceVersion"));
    json_decref(o);
    expect_unchanged(S("%s/held", CM("default")), held);

    /* DeleteOptions in the body, as kubectl sends them. */
    o = req(200, "DELETE", S("%s/held", CM("default")),
            "{'kind':'DeleteOptions','apiVersion':'v1','dryRun':['All'],"
            "'propagationPolicy':'Foreground'}");
    cr_assert_not_null(jstr(o, "metadata.deletionTimestamp"));
    cr_assert_str_eq(jstr(o, "metadata.resourceVersion"), jstr(held, "metadata.resourceVersion"));
    json_decref(o);
    expect_unchanged(S("%s/held", CM("default")), held);

    /* Any other dryRun value is refused, not taken for a real delete. */
    st = req_fail(422, "Invalid", "DELETE", S("%s/plain", CM("default")),
                  "{'kind':'DeleteOptions','apiVersion':'v1','dryRun':['all']}");
    cr_assert_str_eq(jstr(st, "details.causes.0.field"), "dryRun");
    json_decref(st);
    expect_unchanged(S("%s/plain", CM("default")), plain);

    /* Preconditions are still checked; a missing object is still 404. */
    json_decref(req_fail(409, "Conflict", "DELETE", S("%s/plain" DRY, CM("default")),
                         "{'preconditions':{'resourceVersion':'1'}}"));
    json_decref(req_fail(404, "NotFound", "DELETE", S("%s/none" DRY, CM("default")), NULL));

    /* deletecollection: the objects, each as its delete would answer. */
    json_t *l = req(200, "DELETE", S("%s" DRY, CM("default")), NULL);
    cr_assert_eq(json_array_size(jget(l, "items")), 2);
    for (size_t i = 0; i < 2; i++) {
        json_t *it = json_array_get(jget(l, "items"), i);
        json_t *was = !strcmp(jstr(it, "metadata.name"), "held") ? held : plain;
        cr_assert_str_eq(jstr(it, "metadata.resourceVersion"),
                         jstr(was, "metadata.resourceVersion"));
    }
    json_decref(l);
    expect_unchanged(S("%s/plain", CM("default")), plain);
    expect_unchanged(S("%s/held", CM("default")), held);
    cr_assert_eq(rev(), r0);
    expect_quiet(w);
    json_decref(plain);
    json_decref(held);
}

/* A dry-run delete of a CRD leaves its kind served and its objects there. */
Test(dryrun, crd_delete)
{
    json_decref(mk_crd());
    json_decref(req(201, "POST", WIDGETS,
                    "{'apiVersion':'example.com/v1','kind':'Widget','metadata':{'name':'w'},"
                    "'spec':{'color':'red'}}"));
    unsigned long long r0 = rev();
    json_decref(req(
        200, "DELETE",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com" DRY, NULL));
    json_t *w = req(200, "GET", WIDGETS "/w", NULL);
    cr_assert_str_eq(jstr(w, "spec.color"), "red");
    json_decref(w);
    json_t *disc = req(200, "GET", "/apis/example.com/v1", NULL);
    cr_assert_str_eq(jstr(disc, "resources.0.name"), "widgets");
    json_decref(disc);
    cr_assert_eq(rev(), r0);
}

/* The in-process API runs the same handlers: fakeapi_request with
 * ?dryRun=All answers the same and stores nothing. */
Test(dryrun, in_process)
{
    json_t *cur = mk_cm("default", "ip", NULL);
    unsigned long long r0 = rev();
    int status = 0;
    json_t *out = NULL;
    cr_assert_eq(fakeapi_request(srv, "POST", "/api/v1/namespaces/default/configmaps?dryRun=All",
                                 "application/json", "{\"metadata\":{\"name\":\"ip2\"}}", &status,
                                 &out),
                 0);
    cr_assert_eq(status, 201);
    cr_assert_null(jget(out, "metadata.uid"));
    cr_assert_null(jget(out, "metadata.resourceVersion"));
    json_decref(out);
    cr_assert_eq(
        fakeapi_request(srv, "PATCH", "/api/v1/namespaces/default/configmaps/ip?dryRun=All",
                        "application/merge-patch+json", "{\"data\":{\"k\":\"v\"}}", &status, &out),
        0);
    cr_assert_eq(status, 200);
    cr_assert_str_eq(jstr(out, "data.k"), "v");
    cr_assert_str_eq(jstr(out, "metadata.resourceVersion"), jstr(cur, "metadata.resourceVersion"));
    json_decref(out);
    cr_assert_eq(fakeapi_request(srv, "DELETE",
                                 "/api/v1/namespaces/default/configmaps/ip?dryRun=All", NULL, NULL,
                                 &status, NULL),
                 0);
    cr_assert_eq(status, 200);
    cr_assert_eq(rev(), r0);
    cr_assert(gone(S("%s/ip2", CM("default"))));
    expect_unchanged(S("%s/ip", CM("default")), cur);
    json_decref(cur);
}

/*
 * test_apply.c - server-side apply and managedFields over HTTP: apply
 * patches (JSON and YAML bodies, fieldManager, force, dryRun, creation,
 * subresources), the entries every write records (Update from fieldManager
 * or the User-Agent), conflicts as 409 with causes, removal of dropped
 * fields, no-op applies, before-first-apply, resetting managedFields.
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakeapi/fakeapi.h"
#include "apitest.h"

TestSuite(apply, .init = setup, .fini = teardown);

#define APPLY "application/apply-patch+yaml"
#define MERGE "application/merge-patch+json"
#define CMX "/api/v1/namespaces/default/configmaps/x"

/* An apply of body (single-quoted JSON) to CMX as manager, with extra query. */
static json_t *apply_cm(long want, const char *manager, const char *query, const char *body)
{
    return req_ct(want, "PATCH", S(CMX "?fieldManager=%s%s", manager, query ? query : ""), APPLY,
                  body);
}

#define CMBODY(data)                                                                               \
    "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'x'},'data':" data "}"

/* The managedFields entry of obj for manager and operation, or NULL. */
static json_t *entry(const json_t *obj, const char *manager, const char *op)
{
    size_t i;
    json_t *e;
    json_array_foreach(jget(obj, "metadata.managedFields"), i, e)
    {
        if (!strcmp(jstr(e, "manager"), manager) && !strcmp(jstr(e, "operation"), op))
            return e;
    }
    return NULL;
}

static void assert_fields(const json_t *obj, const char *manager, const char *op, const char *want)
{
    json_t *e = entry(obj, manager, op);
    char *all = json_dumps(jget(obj, "metadata.managedFields"), JSON_COMPACT);
    cr_assert_not_null(e, "no %s %s entry: %s", manager, op, all);
    free(all);
    char *got = json_dumps(json_object_get(e, "fieldsV1"), JSON_COMPACT);
    char *w = strdup(want);
    for (char *p = w; *p; p++)
        if (*p == '\'')
            *p = '"';
    cr_assert_str_eq(got, w);
    free(got);
    free(w);
}

/* A request with a User-Agent header (the helpers send none). */
static json_t *req_ua(long want, const char *method, const char *path, const char *ua,
                      const char *body)
{
    char url[4096];
    snprintf(url, sizeof url, "%s%s", fakeapi_url(srv), path);
    char *b = strdup(body);
    for (char *p = b; *p; p++)
        if (*p == '\'')
            *p = '"';
    CURL *h = curl_easy_init();
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    FILE *mem;
    char *out = NULL;
    size_t outlen = 0;
    mem = open_memstream(&out, &outlen);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, b);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_USERAGENT, ua);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, mem);
    CURLcode rc = curl_easy_perform(h);
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    fclose(mem);
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    free(b);
    cr_assert_eq(rc, CURLE_OK);
    cr_assert_eq(status, want, "%s %s: %ld %s", method, path, status, out);
    json_t *v = json_loads(out, 0, NULL);
    free(out);
    return v;
}

Test(apply, creates_and_records_an_apply_entry)
{
    json_t *o = apply_cm(201, "alice", NULL, CMBODY("{'a':'1','b':'2'}"));
    cr_assert_str_eq(jstr(o, "data.a"), "1");
    json_t *e = entry(o, "alice", "Apply");
    cr_assert_not_null(e);
    cr_assert_str_eq(jstr(e, "apiVersion"), "v1");
    cr_assert_str_eq(jstr(e, "fieldsType"), "FieldsV1");
    /* The server clock, as creationTimestamp is written. */
    cr_assert_str_eq(jstr(e, "time"), jstr(o, "metadata.creationTimestamp"));
    cr_assert_null(jget(e, "subresource"));
    assert_fields(o, "alice", "Apply", "{'f:data':{'f:a':{},'f:b':{}}}");
    /* And a GET shows the same. */
    json_t *g = req(200, "GET", CMX, NULL);
    cr_assert(json_equal(jget(g, "metadata.managedFields"), jget(o, "metadata.managedFields")));
    json_decref(g);
    json_decref(o);
}

Test(apply, yaml_body)
{
    json_t *o = req_ct(201, "PATCH", CMX "?fieldManager=y", APPLY,
                       "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  k: v\n");
    cr_assert_str_eq(jstr(o, "data.k"), "v");
    assert_fields(o, "y", "Apply", "{'f:data':{'f:k':{}}}");
    json_decref(o);
}

Test(apply, field_manager_is_required_and_force_is_apply_only)
{
    json_t *st = req_fail_ct(422, "Invalid", "PATCH", CMX, APPLY, CMBODY("{'a':'1'}"));
    cr_assert(strstr(jstr(st, "message"), "fieldManager: Required value"), "%s",
              jstr(st, "message"));
    json_decref(st);
    json_decref(req(201, "POST", CM("default"), "{'metadata':{'name':'x'}}"));
    st = req_fail_ct(422, "Invalid", "PATCH", CMX "?force=true", MERGE, "{'data':{'a':'1'}}");
    cr_assert(
        strstr(jstr(st, "message"), "force: Forbidden: may not be specified for non-apply patch"),
        "%s", jstr(st, "message"));
    json_decref(st);
}

Test(apply, a_dropped_field_goes)
{
    json_decref(
        apply_cm(201, "helm", NULL,
                 "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'x','annotations':"
                 "{'keep':'1','drop':'2'}},'data':{'a':'1','b':'2'}}"));
    json_t *o =
        apply_cm(200, "helm", NULL,
                 "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'x','annotations':"
                 "{'keep':'1'}},'data':{'a':'1'}}");
    cr_assert_null(jget(o, "data.b"));
    cr_assert_null(jget(o, "metadata.annotations.drop"));
    cr_assert_str_eq(jstr(o, "metadata.annotations.keep"), "1");
    assert_fields(o, "helm", "Apply",
                  "{'f:data':{'f:a':{}},'f:metadata':{'f:annotations':{'f:keep':{}}}}");
    json_decref(o);
}

Test(apply, conflicts_are_409_with_causes_and_force_wins)
{
    json_decref(apply_cm(201, "alice", NULL, CMBODY("{'a':'x','b':'x'}")));
    json_t *st =
        req_fail_ct(409, "Conflict", "PATCH", CMX "?fieldManager=bob", APPLY, CMBODY("{'a':'y'}"));
    cr_assert_str_eq(jstr(st, "message"),
                     "Apply failed with 1 conflict: conflict with \"alice\": .data.a");
    cr_assert_str_eq(jstr(st, "details.causes.0.reason"), "FieldManagerConflict");
    cr_assert_str_eq(jstr(st, "details.causes.0.field"), ".data.a");
    cr_assert_str_eq(jstr(st, "details.causes.0.message"), "conflict with \"alice\"");
    json_decref(st);
    /* Nothing was written. */
    json_t *g = req(200, "GET", CMX, NULL);
    cr_assert_str_eq(jstr(g, "data.a"), "x");
    json_decref(g);
    /* The same value is shared ownership, not a conflict. */
    json_t *o = apply_cm(200, "carol", NULL, CMBODY("{'b':'x'}"));
    assert_fields(o, "carol", "Apply", "{'f:data':{'f:b':{}}}");
    assert_fields(o, "alice", "Apply", "{'f:data':{'f:a':{},'f:b':{}}}");
    json_decref(o);
    o = apply_cm(200, "bob", "&force=true", CMBODY("{'a':'y'}"));
    cr_assert_str_eq(jstr(o, "data.a"), "y");
    assert_fields(o, "alice", "Apply", "{'f:data':{'f:b':{}}}");
    assert_fields(o, "bob", "Apply", "{'f:data':{'f:a':{}}}");
    json_decref(o);
}

Test(apply, conflict_with_an_update_manager)
{
    json_decref(req(201, "POST", "/api/v1/namespaces/default/configmaps?fieldManager=alice",
                    "{'metadata':{'name':'x'},'data':{'a':'x'}}"));
    json_t *st =
        req_fail_ct(409, "Conflict", "PATCH", CMX "?fieldManager=bob", APPLY, CMBODY("{'a':'y'}"));
    cr_assert_str_eq(jstr(st, "message"),
                     "Apply failed with 1 conflict: conflict with \"alice\" using v1: .data.a");
    json_decref(st);
}

Test(apply, no_op_apply_keeps_the_revision_and_sends_no_event)
{
    json_t *a = apply_cm(201, "alice", NULL, CMBODY("{'a':'1'}"));
    wstream *w =
        ws_start_ok(S("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=%s",
                      jstr(a, "metadata.resourceVersion")),
                    NULL, 2000);
    json_t *b = apply_cm(200, "alice", NULL, CMBODY("{'a':'1'}"));
    cr_assert_str_eq(jstr(b, "metadata.resourceVersion"), jstr(a, "metadata.resourceVersion"));
    cr_assert(json_equal(jget(b, "metadata.managedFields"), jget(a, "metadata.managedFields")));
    json_t *ev = ws_next(w, 300);
    cr_assert_null(ev, "an event for a no-op apply");
    /* A real change is one event. */
    json_decref(apply_cm(200, "alice", NULL, CMBODY("{'a':'2'}")));
    ev = ws_next(w, 2000);
    cr_assert_not_null(ev);
    cr_assert_str_eq(jstr(ev, "type"), "MODIFIED");
    cr_assert_str_eq(jstr(ev, "object.data.a"), "2");
    json_decref(ev);
    ws_close(w);
    json_decref(a);
    json_decref(b);
}

Test(apply, dry_run_stores_nothing)
{
    json_t *o = apply_cm(201, "alice", "&dryRun=All", CMBODY("{'a':'1'}"));
    cr_assert_not_null(entry(o, "alice", "Apply"));
    json_decref(o);
    cr_assert(gone(CMX));
    json_decref(apply_cm(201, "alice", NULL, CMBODY("{'a':'1'}")));
    o = apply_cm(200, "alice", "&dryRun=All", CMBODY("{'a':'2'}"));
    cr_assert_str_eq(jstr(o, "data.a"), "2");
    json_decref(o);
    o = req(200, "GET", CMX, NULL);
    cr_assert_str_eq(jstr(o, "data.a"), "1");
    json_decref(o);
}

Test(apply, writes_record_update_entries)
{
    /* POST with fieldManager. */
    json_t *o = req(201, "POST", "/api/v1/namespaces/default/configmaps?fieldManager=creator",
                    "{'metadata':{'name':'x','labels':{'app':'x'}},'data':{'a':'1'}}");
    assert_fields(o, "creator", "Update",
                  "{'f:data':{'.':{},'f:a':{}},'f:metadata':{'f:labels':{'.':{},'f:app':{}}}}");
    json_decref(o);
    /* PUT without one: the User-Agent's first token. */
    o = req_ua(200, "PUT", CMX, "kubectl-edit/v1.32.0 (linux/amd64) kubernetes/abcdef",
               "{'metadata':{'name':'x','labels':{'app':'x'}},'data':{'a':'2'}}");
    assert_fields(o, "kubectl-edit", "Update", "{'f:data':{'f:a':{}}}");
    assert_fields(o, "creator", "Update",
                  "{'f:data':{},'f:metadata':{'f:labels':{'.':{},'f:app':{}}}}");
    json_decref(o);
    /* A merge patch adds its own. */
    o = req_ct(200, "PATCH", CMX "?fieldManager=patcher", MERGE, "{'data':{'b':'1'}}");
    assert_fields(o, "patcher", "Update", "{'f:data':{'f:b':{}}}");
    cr_assert_eq(json_array_size(jget(o, "metadata.managedFields")), 3);
    json_decref(o);
}

Test(apply, managed_fields_can_be_cleared_and_bad_ones_are_ignored)
{
    json_decref(apply_cm(201, "alice", NULL, CMBODY("{'a':'1'}")));
    /* An invalid list in an update is ignored. */
    json_t *o = req_ct(200, "PATCH", CMX, MERGE,
                       "{'metadata':{'managedFields':[{'manager':'m','operation':'Bogus'}]}}");
    cr_assert_not_null(entry(o, "alice", "Apply"));
    json_decref(o);
    /* [{}] clears them. */
    o = req_ct(200, "PATCH", CMX, MERGE, "{'metadata':{'managedFields':[{}]}}");
    cr_assert_null(jget(o, "metadata.managedFields"));
    json_decref(o);
    /* The next applier then meets before-first-apply. */
    json_t *st =
        req_fail_ct(409, "Conflict", "PATCH", CMX "?fieldManager=bob", APPLY, CMBODY("{'a':'2'}"));
    cr_assert_str_eq(jstr(st, "message"), "Apply failed with 1 conflict: conflict with "
                                          "\"before-first-apply\" using v1: .data.a");
    json_decref(st);
    o = apply_cm(200, "bob", NULL, CMBODY("{'a':'1','b':'1'}"));
    assert_fields(o, "before-first-apply", "Update", "{'f:data':{'.':{},'f:a':{}}}");
    assert_fields(o, "bob", "Apply", "{'f:data':{'f:a':{},'f:b':{}}}");
    json_decref(o);
    /* managedFields in an apply body are refused. */
    st = req_fail_ct(400, "BadRequest", "PATCH", CMX "?fieldManager=bob", APPLY,
                     "{'metadata':{'name':'x','managedFields':[{'manager':'x'}]}}");
    cr_assert_str_eq(jstr(st, "message"), "metadata.managedFields must be nil");
    json_decref(st);
}

Test(apply, lists_by_type_on_a_deployment)
{
    const char *d = "/apis/apps/v1/namespaces/default/deployments/web?fieldManager=";
#define base                                                                                       \
    "{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':'web'},"                       \
    "'spec':{'selector':{'matchLabels':{'app':'web'}},'template':{'metadata':{"                    \
    "'labels':{'app':'web'}},'spec':{'containers':[%s]}}}}"
    json_decref(req_ct(201, "PATCH", S("%salice", d), APPLY,
                       S(base, "{'name':'a','image':'nginx:1','args':['x']}")));
    /* Another manager adds a container: merged by name. */
    json_t *o =
        req_ct(200, "PATCH", S("%sbob", d), APPLY, S(base, "{'name':'b','image':'busybox'}"));
    cr_assert_eq(json_array_size(jget(o, "spec.template.spec.containers")), 2);
    json_decref(o);
    /* Changing alice's image or her atomic args list conflicts, with upstream's paths. */
    json_t *st = req_fail_ct(409, "Conflict", "PATCH", S("%sbob", d), APPLY,
                             S(base, "{'name':'a','image':'nginx:2','args':['y']}"));
    cr_assert_str_eq(jstr(st, "message"),
                     "Apply failed with 2 conflicts: conflicts with \"alice\":\n"
                     "- .spec.template.spec.containers[name=\"a\"].args\n"
                     "- .spec.template.spec.containers[name=\"a\"].image");
    json_decref(st);
    /* bob drops his container: it goes, alice's stays. */
    o = req_ct(200, "PATCH", S("%sbob", d), APPLY, S(base, ""));
    cr_assert_eq(json_array_size(jget(o, "spec.template.spec.containers")), 1);
    cr_assert_str_eq(jstr(o, "spec.template.spec.containers.0.name"), "a");
    json_decref(o);
    /* A duplicate key in a configuration is a bad request. */
    st = req_fail_ct(400, "BadRequest", "PATCH", S("%salice", d), APPLY,
                     S(base, "{'name':'a','image':'x'},{'name':'a','image':'y'}"));
    cr_assert(strstr(jstr(st, "message"), "duplicate entries for key [name=\"a\"]"), "%s",
              jstr(st, "message"));
    json_decref(st);
#undef base
}

Test(apply, finalizers_removed_by_applying_an_empty_list)
{
    json_decref(
        apply_cm(201, "pepr", NULL,
                 "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'x','finalizers':"
                 "['example.com/f']}}"));
    json_t *o =
        apply_cm(200, "pepr", "&force=true",
                 "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'x','finalizers':[]}}");
    cr_assert_eq(json_array_size(jget(o, "metadata.finalizers")), 0);
    json_decref(o);
    /* With no finalizer left, a delete removes it at once. */
    json_decref(req(200, "DELETE", CMX, NULL));
    cr_assert(wait_gone(CMX, 2000));
}

Test(apply, status_subresource_of_a_custom_resource)
{
    json_decref(mk_crd());
    const char *w = WIDGETS "/w1";
    const char *body = "{'apiVersion':'example.com/v1','kind':'Widget','metadata':{'name':'w1'},"
                       "'spec':{'color':'red','tags':['a']},'status':{'ready':true}}";
    json_t *o = NULL;
    for (int i = 0; i < 50; i++) {
        long got;
        o = req_full(0, "PATCH", S("%s?fieldManager=owner", w), APPLY, body, &got);
        if (got == 201)
            break;
        json_decref(o);
        o = NULL;
        sleep_ms(50);
    }
    cr_assert_not_null(o);
    /* The main resource owns no status; the default (size) belongs to nobody. */
    assert_fields(o, "owner", "Apply", "{'f:spec':{'f:color':{},'f:tags':{}}}");
    cr_assert_eq(jint(o, "spec.size"), 3);
    json_decref(o);
    o = req_ct(200, "PATCH", S("%s/status?fieldManager=ctrl", w), APPLY,
               "{'apiVersion':'example.com/v1','kind':'Widget','metadata':{'name':'w1'},"
               "'status':{'ready':true,'replicas':2}}");
    json_t *e = entry(o, "ctrl", "Apply");
    cr_assert_not_null(e);
    cr_assert_str_eq(jstr(e, "subresource"), "status");
    assert_fields(o, "ctrl", "Apply", "{'f:status':{'f:ready':{},'f:replicas':{}}}");
    cr_assert_eq(jint(o, "status.replicas"), 2);
    json_decref(o);
    /* A scale write is recorded as its own subresource. */
    o = req_ct(200, "PATCH", S("%s/scale?fieldManager=hpa", w), MERGE, "{'spec':{'replicas':4}}");
    json_decref(o);
    o = req(200, "GET", w, NULL);
    e = entry(o, "hpa", "Update");
    cr_assert_not_null(e);
    cr_assert_str_eq(jstr(e, "subresource"), "scale");
    assert_fields(o, "hpa", "Update", "{'f:spec':{'f:replicas':{}}}");
    json_decref(o);
}

Test(apply, an_apply_to_scale_is_recorded_on_the_scale_subresource)
{
    json_decref(req_ct(201, "PATCH",
                       "/apis/apps/v1/namespaces/default/deployments/web?fieldManager=me", APPLY,
                       deploy_body("web")));
    json_t *o =
        req_ct(200, "PATCH",
               "/apis/apps/v1/namespaces/default/deployments/web/scale?fieldManager=hpa", APPLY,
               "{'apiVersion':'autoscaling/v1','kind':'Scale','metadata':{'name':'web'},"
               "'spec':{'replicas':3}}");
    cr_assert_eq(jint(o, "spec.replicas"), 3);
    json_decref(o);
    o = req(200, "GET", "/apis/apps/v1/namespaces/default/deployments/web", NULL);
    json_t *e = entry(o, "hpa", "Update");
    cr_assert_not_null(e);
    cr_assert_str_eq(jstr(e, "subresource"), "scale");
    assert_fields(o, "hpa", "Update", "{'f:spec':{'f:replicas':{}}}");
    /* The applier of the Deployment lost .spec.replicas to it. */
    json_t *me = entry(o, "me", "Apply");
    cr_assert_not_null(me);
    cr_assert_null(jget(me, "fieldsV1.f:spec.f:replicas"));
    json_decref(o);
}

Test(apply, field_manager_is_checked)
{
    char long_name[200];
    memset(long_name, 'm', 129);
    long_name[129] = 0;
    json_t *st = req_fail_ct(422, "Invalid", "PATCH", S(CMX "?fieldManager=%s", long_name), APPLY,
                             CMBODY("{'a':'1'}"));
    cr_assert(strstr(jstr(st, "message"), "fieldManager: Too long: may not be more than 128 bytes"),
              "%s", jstr(st, "message"));
    json_decref(st);
    st =
        req_fail(422, "Invalid", "POST", "/api/v1/namespaces/default/configmaps?fieldManager=a%01b",
                 "{'metadata':{'name':'x'}}");
    cr_assert(strstr(jstr(st, "message"), "fieldManager: Invalid value"), "%s",
              jstr(st, "message"));
    json_decref(st);
    /* 128 bytes is fine. */
    long_name[128] = 0;
    json_t *o = apply_cm(201, long_name, NULL, CMBODY("{'a':'1'}"));
    cr_assert_not_null(entry(o, long_name, "Apply"));
    json_decref(o);
}

/*
 * test_protobuf.c - protobuf request bodies over HTTP: the bodies kubectl
 * 1.32 sent for `kubectl create deployment|job|cronjob|service
 * clusterip|role|rolebinding|clusterrole|clusterrolebinding`, `create job
 * --from=cronjob` and `drain` (tests/fixtures/protobuf) are POSTed as
 * captured and the stored objects checked; DELETE and deletecollection take
 * protobuf DeleteOptions; a body that does not decode is 400 naming the
 * kind and stores nothing; a custom resource's protobuf body is 415 (its
 * scale subresource's, a built-in Scale, is not).
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakeapi/fakeapi.h"
#include "apitest.h"
#include "pbenc.h"

TestSuite(protobuf, .init = setup, .fini = teardown);

#define PB "application/vnd.kubernetes.protobuf"

static size_t collect(char *p, size_t size, size_t n, void *ud)
{
    char **buf = ud;
    size_t have = *buf ? strlen(*buf) : 0, add = size * n;
    char *q = realloc(*buf, have + add + 1);
    cr_assert_not_null(q);
    memcpy(q + have, p, add);
    q[have + add] = '\0';
    *buf = q;
    return add;
}

/* method path with a binary body of type ctype; the answer parsed (NULL if
 * not JSON), the status in *status. */
static json_t *send_bin(const char *method, const char *path, const char *ctype, const void *body,
                        size_t len, long *status)
{
    char url[1024], hdr[256];
    char *out = NULL;
    CURL *h = curl_easy_init();
    struct curl_slist *hs = NULL;
    cr_assert_not_null(h);
    snprintf(url, sizeof url, "%s%s", fakeapi_url(srv), path);
    snprintf(hdr, sizeof hdr, "Content-Type: %s", ctype);
    hs = curl_slist_append(hs, hdr);
    hs = curl_slist_append(hs, "Accept: application/json");
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hs);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)len);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &out);
    cr_assert_eq(curl_easy_perform(h), CURLE_OK);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    curl_slist_free_all(hs);
    curl_easy_cleanup(h);
    json_t *j = out ? json_loads(out, 0, NULL) : NULL;
    free(out);
    return j;
}

static void *slurp(const char *name, const char *ext, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s.%s", PB_FIXTURES, name, ext);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    char *buf = malloc(1 << 16);
    cr_assert_not_null(buf);
    *len = fread(buf, 1, 1 << 16, f);
    fclose(f);
    return buf;
}

static json_t *fixture_json(const char *name)
{
    size_t n;
    char *s = slurp(name, "json", &n);
    json_t *j = json_loadb(s, n, 0, NULL);
    cr_assert_not_null(j, "%s.json", name);
    free(s);
    return j;
}

/* Is every value of want in got (objects by key, arrays element by element)? */
static bool subset(const json_t *want, const json_t *got, char *where, size_t wlen)
{
    const char *key;
    json_t *v;
    size_t i, off = strlen(where);
    if (json_is_object(want)) {
        if (!json_is_object(got))
            return false;
        json_object_foreach((json_t *)want, key, v)
        {
            snprintf(where + off, wlen - off, ".%s", key);
            if (!subset(v, json_object_get(got, key), where, wlen))
                return false;
            where[off] = '\0';
        }
        return true;
    }
    if (json_is_array(want)) {
        if (!json_is_array(got) || json_array_size(got) != json_array_size(want))
            return false;
        json_array_foreach(want, i, v)
        {
            snprintf(where + off, wlen - off, "[%zu]", i);
            if (!subset(v, json_array_get(got, i), where, wlen))
                return false;
            where[off] = '\0';
        }
        return true;
    }
    return json_equal(want, got);
}

/* POST the captured body to collection; the object created (the answer,
 * which is what was stored) must hold every value of the fixture's JSON but
 * its status. Returns it. (The answer, not a GET: the Job made from a
 * CronJob names an owner uid from the server it was captured on, so the
 * garbage collector here removes it soon after.) */
static json_t *post_captured(const char *name, const char *collection, const char *obj_name)
{
    size_t n;
    void *pb = slurp(name, "pb", &n);
    long st = 0;
    json_t *created =
        send_bin("POST", S("%s?fieldManager=kubectl-create&fieldValidation=Strict", collection), PB,
                 pb, n, &st);
    cr_assert_eq(st, 201, "%s: POST answered %ld: %s", name, st,
                 created ? json_dumps(created, JSON_COMPACT) : "(not JSON)");
    free(pb);
    cr_assert_str_eq(jstr(created, "metadata.name"), obj_name);
    cr_assert(jstr(created, "metadata.uid") && jstr(created, "metadata.resourceVersion"));
    json_t *want = fixture_json(name);
    json_object_del(want, "status"); /* create ignores the status a client sends */
    char where[512] = "";
    cr_assert(subset(want, created, where, sizeof where), "%s: stored object differs at %s: %s",
              name, where, json_dumps(created, JSON_COMPACT));
    json_decref(want);
    return created;
}

Test(protobuf, kubectl_create_deployment)
{
    json_decref(post_captured("create_deployment", DEPLOYS, "web"));
    json_t *d = req(200, "GET", S("%s/web", DEPLOYS), NULL);
    cr_assert_eq(jint(d, "spec.replicas"), 3);
    cr_assert_str_eq(jstr(d, "spec.template.spec.containers.0.image"), "nginx:1.27");
    cr_assert_str_eq(jstr(d, "spec.selector.matchLabels.app"), "web");
    cr_assert_str_eq(jstr(d, "kind"), "Deployment");
    json_decref(d);
}

Test(protobuf, kubectl_create_job_and_cronjob_and_job_from_cronjob)
{
    json_t *j = post_captured("create_job", "/apis/batch/v1/namespaces/default/jobs", "pi");
    cr_assert_str_eq(jstr(j, "spec.template.spec.containers.0.command.0"), "perl");
    cr_assert_str_eq(jstr(j, "spec.template.spec.restartPolicy"), "Never");
    json_decref(j);
    json_t *cj =
        post_captured("create_cronjob", "/apis/batch/v1/namespaces/default/cronjobs", "nightly");
    cr_assert_str_eq(jstr(cj, "spec.schedule"), "*/5 * * * *");
    json_decref(cj);
    json_t *m = post_captured("create_job_from_cronjob", "/apis/batch/v1/namespaces/default/jobs",
                              "manual");
    cr_assert_str_eq(jstr(m, "metadata.ownerReferences.0.kind"), "CronJob");
    cr_assert_eq(json_is_true(jget(m, "metadata.ownerReferences.0.controller")), true);
    cr_assert_str_eq(json_string_value(json_object_get(jget(m, "metadata.annotations"),
                                                       "cronjob.kubernetes.io/instantiate")),
                     "manual");
    json_decref(m);
}

Test(protobuf, kubectl_create_service_clusterip)
{
    json_t *s =
        post_captured("create_service_clusterip", "/api/v1/namespaces/default/services", "web");
    cr_assert_eq(jint(s, "spec.ports.0.port"), 80);
    /* targetPort is an IntOrString: a bare number in JSON. */
    cr_assert(json_is_integer(jget(s, "spec.ports.0.targetPort")));
    cr_assert_eq(jint(s, "spec.ports.0.targetPort"), 8080);
    json_decref(s);
}

Test(protobuf, kubectl_create_rbac)
{
    const char *rbac = "/apis/rbac.authorization.k8s.io/v1";
    json_t *r = post_captured("create_role", S("%s/namespaces/default/roles", rbac), "reader");
    cr_assert_str_eq(jstr(r, "rules.0.verbs.1"), "list");
    json_decref(r);
    r = post_captured("create_rolebinding", S("%s/namespaces/default/rolebindings", rbac),
                      "reader-b");
    cr_assert_str_eq(jstr(r, "subjects.0.name"), "alice");
    cr_assert_str_eq(jstr(r, "roleRef.name"), "reader");
    json_decref(r);
    r = post_captured("create_clusterrole", S("%s/clusterroles", rbac), "creader");
    cr_assert_str_eq(jstr(r, "rules.0.resources.0"), "nodes");
    json_decref(r);
    r = post_captured("create_clusterrolebinding", S("%s/clusterrolebindings", rbac), "creader-b");
    cr_assert_str_eq(jstr(r, "subjects.0.kind"), "Group");
    json_decref(r);
}

Test(protobuf, kubectl_drain_deletes_with_protobuf_delete_options)
{
    json_decref(req(201, "POST", "/api/v1/namespaces/default/pods",
                    "{'metadata':{'name':'p1'},'spec':{'containers':[{'name':'c','image':'x'}]}}"));
    size_t n;
    void *pb = slurp("drain_delete_pod", "pb", &n);
    long st = 0;
    json_t *r = send_bin("DELETE", "/api/v1/namespaces/default/pods/p1", PB, pb, n, &st);
    cr_assert_eq(st, 200, "DELETE answered %ld: %s", st, r ? json_dumps(r, JSON_COMPACT) : "");
    json_decref(r);
    free(pb);
}

static void encode(const char *json, uint8_t **out, size_t *len)
{
    char *s = strdup(json), err[256];
    for (char *p = s; *p; p++)
        if (*p == '\'')
            *p = '"';
    json_t *j = json_loads(s, 0, NULL);
    cr_assert_not_null(j, "%s", s);
    cr_assert_eq(fakeapi__pb_encode(j, out, len, err, sizeof err), 0, "%s", err);
    json_decref(j);
    free(s);
}

Test(protobuf, delete_options_preconditions_and_policy_are_honoured)
{
    json_t *cm = mk_cm("default", "keep", NULL);
    uint8_t *pb;
    size_t n;
    long st = 0;
    /* A DeleteOptions may name any group-version: it is registered in all. */
    encode("{'apiVersion':'apps/v1','kind':'DeleteOptions','preconditions':{'uid':'wrong'}}", &pb,
           &n);
    json_t *r = send_bin("DELETE", S("%s/keep", CM("default")), PB, pb, n, &st);
    cr_assert_eq(st, 409, "got %ld", st);
    assert_failure(r, 409, "Conflict");
    json_decref(r);
    free(pb);
    cr_assert(!gone(S("%s/keep", CM("default"))));

    encode("{'apiVersion':'meta.k8s.io/v1','kind':'DeleteOptions','propagationPolicy':'Sideways'}",
           &pb, &n);
    r = send_bin("DELETE", S("%s/keep", CM("default")), PB, pb, n, &st);
    cr_assert_eq(st, 422);
    json_decref(r);
    free(pb);

    encode(S("{'apiVersion':'v1','kind':'DeleteOptions','preconditions':{'uid':'%s'}}",
             jstr(cm, "metadata.uid")),
           &pb, &n);
    r = send_bin("DELETE", S("%s/keep", CM("default")), PB, pb, n, &st);
    cr_assert_eq(st, 200, "got %ld", st);
    json_decref(r);
    free(pb);
    cr_assert(gone(S("%s/keep", CM("default"))));
    json_decref(cm);
}

Test(protobuf, deletecollection_takes_protobuf_delete_options)
{
    json_decref(mk_cm("default", "a", "{'x':'1'}"));
    json_decref(mk_cm("default", "b", "{'x':'1'}"));
    uint8_t *pb;
    size_t n;
    long st = 0;
    encode("{'apiVersion':'v1','kind':'DeleteOptions','propagationPolicy':'Background'}", &pb, &n);
    json_t *r = send_bin("DELETE", S("%s?labelSelector=x%%3D1", CM("default")), PB, pb, n, &st);
    cr_assert_eq(st, 200, "got %ld: %s", st, r ? json_dumps(r, JSON_COMPACT) : "");
    json_decref(r);
    free(pb);
    cr_assert(gone(S("%s/a", CM("default"))));
    cr_assert(gone(S("%s/b", CM("default"))));
}

Test(protobuf, bad_bodies_are_400_naming_the_kind_and_store_nothing)
{
    size_t n;
    void *pb = slurp("create_deployment", "pb", &n);
    long st = 0;
    /* Cut inside the Deployment's message: the envelope names the kind. */
    json_t *r = send_bin("POST", DEPLOYS, PB, pb, n - 20, &st);
    cr_assert_eq(st, 400);
    assert_failure(r, 400, "BadRequest");
    cr_assert(strstr(jstr(r, "message"), "Deployment"), "%s", jstr(r, "message"));
    json_decref(r);
    cr_assert(gone(S("%s/web", DEPLOYS)));

    /* A body of another kind than the resource's. */
    size_t rn;
    void *role = slurp("create_role", "pb", &rn);
    r = send_bin("POST", DEPLOYS, PB, role, rn, &st);
    cr_assert_eq(st, 400, "got %ld", st);
    assert_failure(r, 400, "BadRequest");
    cr_assert(strstr(jstr(r, "message"), "Deployment"), "%s", jstr(r, "message"));
    json_decref(r);
    free(role);
    cr_assert(gone(S("%s/reader", DEPLOYS)));

    r = send_bin("POST", DEPLOYS, PB, "k8s\0\x0a", 6, &st);
    cr_assert_eq(st, 400);
    assert_failure(r, 400, "BadRequest");
    json_decref(r);

    /* A DELETE body that does not decode. */
    json_decref(mk_cm("default", "stay", NULL));
    r = send_bin("DELETE", S("%s/stay", CM("default")), PB, "k8s\0\x12\x05", 6, &st);
    cr_assert_eq(st, 400);
    assert_failure(r, 400, "BadRequest");
    json_decref(r);
    /* ... or is not a DeleteOptions. */
    r = send_bin("DELETE", S("%s/stay", CM("default")), PB, pb, n, &st);
    cr_assert_eq(st, 400);
    cr_assert(strstr(jstr(r, "message"), "not DeleteOptions"), "%s", jstr(r, "message"));
    json_decref(r);
    cr_assert(!gone(S("%s/stay", CM("default"))));
    free(pb);
}

/* client-go's scale client PUTs an autoscaling/v1 Scale, as protobuf to a
 * built-in; a custom resource's scale is that built-in Scale too. */
Test(protobuf, scale_bodies_for_builtins_and_custom_resources)
{
    json_decref(req(201, "POST", DEPLOYS, deploy_body("web")));
    uint8_t *pb;
    size_t n;
    long st = 0;
    encode("{'apiVersion':'autoscaling/v1','kind':'Scale','metadata':{'name':'web',"
           "'namespace':'default'},'spec':{'replicas':4}}",
           &pb, &n);
    json_t *r = send_bin("PUT", S("%s/web/scale", DEPLOYS), PB, pb, n, &st);
    cr_assert_eq(st, 200, "got %ld: %s", st, r ? json_dumps(r, JSON_COMPACT) : "");
    cr_assert_eq(jint(r, "spec.replicas"), 4);
    json_decref(r);
    free(pb);
    json_t *d = req(200, "GET", S("%s/web", DEPLOYS), NULL);
    cr_assert_eq(jint(d, "spec.replicas"), 4);
    json_decref(d);

    json_decref(mk_crd());
    json_decref(
        req(201, "POST", WIDGETS, "{'metadata':{'name':'w'},'spec':{'color':'red','replicas':2}}"));
    encode("{'apiVersion':'autoscaling/v1','kind':'Scale','metadata':{'name':'w',"
           "'namespace':'default'},'spec':{'replicas':6}}",
           &pb, &n);
    r = send_bin("PUT", S("%s/w/scale", WIDGETS), PB, pb, n, &st);
    cr_assert_eq(st, 200, "got %ld: %s", st, r ? json_dumps(r, JSON_COMPACT) : "");
    json_decref(r);
    free(pb);
    json_t *w = req(200, "GET", S("%s/w", WIDGETS), NULL);
    cr_assert_eq(jint(w, "spec.replicas"), 6);
    json_decref(w);
}

Test(protobuf, custom_resources_stay_json_only)
{
    json_decref(mk_crd());
    uint8_t *pb;
    size_t n;
    long st = 0;
    encode("{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'w'}}", &pb, &n);
    json_t *r = send_bin("POST", WIDGETS, PB, pb, n, &st);
    cr_assert_eq(st, 415, "got %ld", st);
    assert_failure(r, 415, "UnsupportedMediaType");
    json_decref(r);
    free(pb);
}

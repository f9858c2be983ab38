/*
 * test_crud.c - create, get and update over HTTP (K8S-API.md sections 2 and 3):
 * server-owned metadata, resourceVersion, generateName, names, conflicts,
 * generation, status separation, error bodies, paths, methods, dry runs.
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

TestSuite(crud, .init = setup, .fini = teardown);

/* ---- create ---------------------------------------------------------------- */

static bool is_uuid(const char *s)
{
    if (!s || strlen(s) != 36)
        return false;
    for (int i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-')
                return false;
        } else if (!strchr("0123456789abcdef", s[i]) || !s[i]) {
            return false;
        }
    }
    return true;
}

/* RFC 3339 in whole seconds with Z: 2006-01-02T15:04:05Z */
static bool is_rfc3339_seconds(const char *s)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";
    if (!s || strlen(s) != sizeof shape - 1)
        return false;
    for (size_t i = 0; i < sizeof shape - 1; i++) {
        if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i])
            return false;
    }
    return true;
}

Test(crud, create_sets_server_fields)
{
    unsigned long long before = fakeapi_revision(srv);
    json_t *a = mk_cm("default", "a", NULL);
    cr_assert_str_eq(jstr(a, "kind"), "ConfigMap");
    cr_assert_str_eq(jstr(a, "apiVersion"), "v1");
    cr_assert_str_eq(jstr(a, "metadata.name"), "a");
    cr_assert_str_eq(jstr(a, "metadata.namespace"), "default");
    cr_assert(is_uuid(jstr(a, "metadata.uid")), "uid %s", jstr(a, "metadata.uid"));
    cr_assert(is_rfc3339_seconds(jstr(a, "metadata.creationTimestamp")), "ts %s",
              jstr(a, "metadata.creationTimestamp"));
    /* A ConfigMap's strategy keeps no generation (Deployments do). */
    cr_assert_null(jget(a, "metadata.generation"));
    cr_assert_str_eq(jstr(a, "data.k"), "v");
    unsigned long long ra = rv_of(a);
    cr_assert_gt(ra, before);
    cr_assert_eq(ra, fakeapi_revision(srv), "the create is the latest write");

    json_t *b = mk_cm("default", "b", NULL);
    cr_assert_gt(rv_of(b), ra, "resourceVersion strictly increases");
    cr_assert_str_neq(jstr(a, "metadata.uid"), jstr(b, "metadata.uid"));

    /* What GET returns is what create returned. */
    json_t *g = req(200, "GET", "/api/v1/namespaces/default/configmaps/a", NULL);
    cr_assert(json_equal(g, a));
    json_decref(a);
    json_decref(b);
    json_decref(g);
}

Test(crud, create_ignores_client_server_fields)
{
    json_t *a = req(201, "POST", CM("default"),
                    "{'metadata':{'name':'x','uid':'mine','generation':7,"
                    "'creationTimestamp':'2001-01-01T00:00:00Z',"
                    "'deletionTimestamp':'2001-01-01T00:00:00Z'}}");
    cr_assert_str_neq(jstr(a, "metadata.uid"), "mine");
    cr_assert_null(jget(a, "metadata.generation"), "a ConfigMap has no generation, even if sent");
    cr_assert_str_neq(jstr(a, "metadata.creationTimestamp"), "2001-01-01T00:00:00Z");
    cr_assert_null(jget(a, "metadata.deletionTimestamp"));
    json_decref(a);
}

Test(crud, generate_name)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    char seen[2][64];
    for (int i = 0; i < 2; i++) {
        json_t *o = req(201, "POST", CM("default"), "{'metadata':{'generateName':'web-'}}");
        const char *n = jstr(o, "metadata.name");
        cr_assert_not_null(n);
        cr_assert_eq(strlen(n), 9, "prefix + 5: %s", n);
        cr_assert(!strncmp(n, "web-", 4), "%s", n);
        for (int k = 4; k < 9; k++)
            cr_assert(strchr(alphabet, n[k]), "char '%c' of %s not in the alphabet", n[k], n);
        cr_assert_str_eq(jstr(o, "metadata.generateName"), "web-");
        snprintf(seen[i], sizeof seen[i], "%s", n);
        json_t *g = req(200, "GET", S("/api/v1/namespaces/default/configmaps/%s", n), NULL);
        json_decref(g);
        json_decref(o);
    }
    cr_assert_str_neq(seen[0], seen[1]);

    /* A long prefix is cut to 58 characters. */
    char prefix[71];
    memset(prefix, 'p', 70);
    prefix[70] = '\0';
    json_t *o = req(201, "POST", CM("default"), S("{'metadata':{'generateName':'%s'}}", prefix));
    const char *n = jstr(o, "metadata.name");
    cr_assert_eq(strlen(n), 63, "%s", n);
    cr_assert(!strncmp(n, prefix, 58));
    cr_assert(strchr(alphabet, n[58]));
    json_decref(o);

    /* An explicit name wins over generateName. */
    o = req(201, "POST", CM("default"), "{'metadata':{'name':'fixed','generateName':'g-'}}");
    cr_assert_str_eq(jstr(o, "metadata.name"), "fixed");
    json_decref(o);
}

Test(crud, create_with_resource_version_is_invalid)
{
    unsigned long long before = fakeapi_revision(srv);
    json_t *st = req_fail(422, "Invalid", "POST", CM("default"),
                          "{'metadata':{'name':'x','resourceVersion':'5'}}");
    cr_assert_str_eq(jstr(st, "details.causes.0.field"), "metadata.resourceVersion");
    json_decref(st);
    cr_assert_eq(fakeapi_revision(srv), before, "nothing written");
    cr_assert(gone("/api/v1/namespaces/default/configmaps/x"));
}

Test(crud, invalid_names)
{
    /* DNS-1123 subdomain for configmaps. */
    json_t *st =
        req_fail(422, "Invalid", "POST", CM("default"), "{'metadata':{'name':'Bad_Name'}}");
    cr_assert(!strncmp(jstr(st, "message"),
                       "ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: "
                       "\"Bad_Name\": ",
                       strlen("ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: "
                              "\"Bad_Name\": ")),
              "%s", jstr(st, "message"));
    json_t *causes = jget(st, "details.causes");
    cr_assert_eq(json_array_size(causes), 1);
    cr_assert_str_eq(jstr(st, "details.causes.0.field"), "metadata.name");
    cr_assert_str_eq(jstr(st, "details.causes.0.reason"), "FieldValueInvalid");
    cr_assert(strstr(jstr(st, "details.causes.0.message"), "Invalid value"));
    cr_assert_str_eq(jstr(st, "details.name"), "Bad_Name");
    json_decref(st);

    char longname[260];
    memset(longname, 'a', 254);
    longname[254] = '\0';
    json_decref(
        req_fail(422, "Invalid", "POST", CM("default"), S("{'metadata':{'name':'%s'}}", longname)));
    json_decref(req_fail(422, "Invalid", "POST", CM("default"), "{'metadata':{'name':'-a'}}"));
    /* 253 characters is fine for a subdomain, and dots are allowed. */
    longname[253] = '\0';
    json_decref(req(201, "POST", CM("default"), S("{'metadata':{'name':'%s'}}", longname)));
    json_decref(req(201, "POST", CM("default"), "{'metadata':{'name':'a.b-c'}}"));

    /* Namespaces and services need a DNS-1123 label: no dots, at most 63. */
    st = req_fail(422, "Invalid", "POST", "/api/v1/namespaces", "{'metadata':{'name':'a.b'}}");
    cr_assert_str_eq(jstr(st, "details.causes.0.field"), "metadata.name");
    json_decref(st);
    memset(longname, 'a', 64);
    longname[64] = '\0';
    json_decref(req_fail(422, "Invalid", "POST", "/api/v1/namespaces",
                         S("{'metadata':{'name':'%s'}}", longname)));
    json_decref(req_fail(422, "Invalid", "POST", "/api/v1/namespaces/default/services",
                         "{'metadata':{'name':'a.b'},'spec':{}}"));

    /* No name at all. */
    st = req_fail(422, "Invalid", "POST", CM("default"), "{'metadata':{}}");
    cr_assert_str_eq(jstr(st, "details.causes.0.reason"), "FieldValueRequired");
    json_decref(st);
}

Test(crud, create_in_missing_namespace)
{
    json_t *st = req_fail(404, "NotFound", "POST", CM("nope"), "{'metadata':{'name':'x'}}");
    cr_assert_str_eq(jstr(st, "message"), "namespaces \"nope\" not found");
    cr_assert_str_eq(jstr(st, "details.name"), "nope");
    cr_assert_str_eq(jstr(st, "details.kind"), "namespaces");
    json_decref(st);
}

Test(crud, already_exists)
{
    json_decref(mk_cm("default", "dup", NULL));
    unsigned long long before = fakeapi_revision(srv);
    json_t *st =
        req_fail(409, "AlreadyExists", "POST", CM("default"), "{'metadata':{'name':'dup'}}");
    cr_assert_str_eq(jstr(st, "message"), "configmaps \"dup\" already exists");
    cr_assert_str_eq(jstr(st, "details.name"), "dup");
    cr_assert_str_eq(jstr(st, "details.kind"), "configmaps");
    cr_assert_null(jget(st, "details.group"));
    json_decref(st);
    cr_assert_eq(fakeapi_revision(srv), before);

    /* A grouped resource names its group. */
    json_decref(req(201, "POST", DEPLOYS, deploy_body("d")));
    st = req_fail(409, "AlreadyExists", "POST", DEPLOYS, deploy_body("d"));
    cr_assert_str_eq(jstr(st, "message"), "deployments.apps \"d\" already exists");
    cr_assert_str_eq(jstr(st, "details.group"), "apps");
    cr_assert_str_eq(jstr(st, "details.kind"), "deployments");
    json_decref(st);

    /* The same name in another namespace is another object. */
    mk_ns("other");
    json_decref(mk_cm("other", "dup", NULL));
}

/* ---- get --------------------------------------------------------------------- */

Test(crud, get_not_found_status_is_exact)
{
    json_t *st = req(404, "GET", "/api/v1/namespaces/default/configmaps/x", NULL);
    json_t *want = json_loads("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
                              "\"status\":\"Failure\",\"message\":\"configmaps \\\"x\\\" not "
                              "found\",\"reason\":\"NotFound\",\"details\":{\"name\":\"x\","
                              "\"kind\":\"configmaps\"},\"code\":404}",
                              0, NULL);
    cr_assert_not_null(want);
    char *got = json_dumps(st, JSON_SORT_KEYS);
    cr_assert(json_equal(st, want), "got %s", got);
    free(got);
    json_decref(st);
    json_decref(want);

    st = req_fail(404, "NotFound", "GET", "/apis/apps/v1/namespaces/default/deployments/y", NULL);
    cr_assert_str_eq(jstr(st, "message"), "deployments.apps \"y\" not found");
    cr_assert_str_eq(jstr(st, "details.group"), "apps");
    json_decref(st);
}

Test(crud, content_type_is_json)
{
    char url[256];
    httpc_resp r;
    snprintf(url, sizeof url, "%s/api/v1/namespaces/default", fakeapi_url(srv));
    cr_assert_eq(httpc_do("GET", url, NULL, NULL, &r), 0);
    cr_assert_eq(r.status, 200);
    cr_assert(!strncmp(r.ctype, "application/json", 16), "%s", r.ctype);
    httpc_resp_free(&r);
    snprintf(url, sizeof url, "%s/api/v1/namespaces/default/configmaps/none", fakeapi_url(srv));
    cr_assert_eq(httpc_do("GET", url, NULL, NULL, &r), 0);
    cr_assert_eq(r.status, 404);
    cr_assert(!strncmp(r.ctype, "application/json", 16), "%s", r.ctype);
    httpc_resp_free(&r);
}

/* ---- update ------------------------------------------------------------------ */

Test(crud, update_returns_new_resource_version)
{
    json_t *a = mk_cm("default", "u", NULL);
    unsigned long long r1 = rv_of(a);
    json_t *b = req(200, "PUT", "/api/v1/namespaces/default/configmaps/u",
                    S("{'metadata':{'name':'u','resourceVersion':'%llu'},'data':{'k':'v2'}}", r1));
    unsigned long long r2 = rv_of(b);
    cr_assert_gt(r2, r1);
    cr_assert_eq(r2, fakeapi_revision(srv));
    cr_assert_str_eq(jstr(b, "data.k"), "v2");
    cr_assert_str_eq(jstr(b, "metadata.uid"), jstr(a, "metadata.uid"));
    cr_assert_str_eq(jstr(b, "metadata.creationTimestamp"), jstr(a, "metadata.creationTimestamp"));
    json_t *g = req(200, "GET", "/api/v1/namespaces/default/configmaps/u", NULL);
    cr_assert(json_equal(g, b));
    json_decref(a);
    json_decref(b);
    json_decref(g);
}

Test(crud, stale_update_conflict_exact)
{
    const char *leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases";
    json_t *l = req(201, "POST", leases,
                    "{'apiVersion':'coordination.k8s.io/v1','kind':'Lease',"
                    "'metadata':{'name':'x'},'spec':{'holderIdentity':'a'}}");
    unsigned long long r1 = rv_of(l);
    json_decref(l);
    const char *path = "/apis/coordination.k8s.io/v1/namespaces/default/leases/x";
    json_decref(req(200, "PUT", path,
                    S("{'metadata':{'name':'x','resourceVersion':'%llu'},"
                      "'spec':{'holderIdentity':'b'}}",
                      r1)));
    unsigned long long before = fakeapi_revision(srv);
    json_t *st = req(409, "PUT", path,
                     S("{'metadata':{'name':'x','resourceVersion':'%llu'},"
                       "'spec':{'holderIdentity':'c'}}",
                       r1));
    json_t *want = json_loads(
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
        "\"message\":\"Operation cannot be fulfilled on leases.coordination.k8s.io \\\"x\\\": "
        "the object has been modified; please apply your changes to the latest version and try "
        "again\",\"reason\":\"Conflict\",\"details\":{\"name\":\"x\",\"group\":"
        "\"coordination.k8s.io\",\"kind\":\"leases\"},\"code\":409}",
        0, NULL);
    cr_assert_not_null(want);
    char *got = json_dumps(st, JSON_SORT_KEYS);
    cr_assert(json_equal(st, want), "got %s", got);
    free(got);
    json_decref(st);
    json_decref(want);
    cr_assert_eq(fakeapi_revision(srv), before, "a conflict writes nothing");
    json_t *g = req(200, "GET", path, NULL);
    cr_assert_str_eq(jstr(g, "spec.holderIdentity"), "b");
    json_decref(g);

    /* The same on a ConfigMap (core group: no group in details). */
    json_t *c = mk_cm("default", "c", NULL);
    unsigned long long cr1 = rv_of(c);
    json_decref(c);
    json_decref(req(200, "PUT", "/api/v1/namespaces/default/configmaps/c",
                    S("{'metadata':{'name':'c','resourceVersion':'%llu'},'data':{}}", cr1)));
    st = req_fail(409, "Conflict", "PUT", "/api/v1/namespaces/default/configmaps/c",
                  S("{'metadata':{'name':'c','resourceVersion':'%llu'},'data':{'z':'z'}}", cr1));
    cr_assert_str_eq(jstr(st, "message"),
                     "Operation cannot be fulfilled on configmaps \"c\": the object has been "
                     "modified; please apply your changes to the latest version and try again");
    cr_assert_str_eq(jstr(st, "details.kind"), "configmaps");
    json_decref(st);
}

Test(crud, put_without_resource_version)
{
    json_decref(mk_cm("default", "p", NULL));
    json_t *b = req(200, "PUT", "/api/v1/namespaces/default/configmaps/p",
                    "{'metadata':{'name':'p'},'data':{'k':'unconditional'}}");
    cr_assert_str_eq(jstr(b, "data.k"), "unconditional");
    cr_assert_eq(rv_of(b), fakeapi_revision(srv));
    json_decref(b);

    /* A Lease demands one. */
    const char *leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases";
    json_decref(req(201, "POST", leases, "{'metadata':{'name':'l'},'spec':{}}"));
    unsigned long long before = fakeapi_revision(srv);
    json_t *st = req_fail(422, "Invalid", "PUT", S("%s/l", leases),
                          "{'metadata':{'name':'l'},'spec':{'holderIdentity':'me'}}");
    cr_assert_str_eq(jstr(st, "details.causes.0.field"), "metadata.resourceVersion");
    json_decref(st);
    cr_assert_eq(fakeapi_revision(srv), before);
}

Test(crud, put_missing_and_name_mismatch)
{
    json_t *st = req_fail(404, "NotFound", "PUT", "/api/v1/namespaces/default/configmaps/ghost",
                          "{'metadata':{'name':'ghost'},'data':{}}");
    cr_assert_str_eq(jstr(st, "message"), "configmaps \"ghost\" not found");
    json_decref(st);
    cr_assert(gone("/api/v1/namespaces/default/configmaps/ghost"), "PUT does not create");

    json_decref(mk_cm("default", "m", NULL));
    json_decref(req_fail(400, "BadRequest", "PUT", "/api/v1/namespaces/default/configmaps/m",
                         "{'metadata':{'name':'other'},'data':{}}"));
    /* A namespace in the body that differs from the URL's. */
    json_decref(req_fail(400, "BadRequest", "PUT", "/api/v1/namespaces/default/configmaps/m",
                         "{'metadata':{'name':'m','namespace':'kube-system'},'data':{}}"));
    json_decref(req_fail(400, "BadRequest", "POST", CM("default"),
                         "{'metadata':{'name':'n2','namespace':'kube-system'}}"));
}

Test(crud, generation_bumps_only_on_spec)
{
    json_t *d = req(201, "POST", DEPLOYS, deploy_body("g"));
    cr_assert_eq(jint(d, "metadata.generation"), 1);
    const char *path = DEPLOYS "/g";

    /* Labels and annotations: metadata only. */
    json_t *p = req_ct(200, "PATCH", path, "application/merge-patch+json",
                       "{'metadata':{'labels':{'x':'y'},'annotations':{'a':'b'}}}");
    cr_assert_eq(jint(p, "metadata.generation"), 1);
    cr_assert_gt(rv_of(p), rv_of(d));
    json_decref(p);

    /* A status write leaves generation alone too. */
    p = req_ct(200, "PATCH", S("%s/status", path), "application/merge-patch+json",
               "{'status':{'replicas':3}}");
    cr_assert_eq(jint(p, "metadata.generation"), 1);
    json_decref(p);

    /* A spec change bumps it, each time. */
    p = req_ct(200, "PATCH", path, "application/merge-patch+json", "{'spec':{'replicas':4}}");
    cr_assert_eq(jint(p, "metadata.generation"), 2);
    json_decref(p);
    p = req_ct(200, "PATCH", path, "application/merge-patch+json", "{'spec':{'replicas':5}}");
    cr_assert_eq(jint(p, "metadata.generation"), 3);
    json_decref(p);

    /* A client cannot set it. */
    p = req_ct(200, "PATCH", path, "application/merge-patch+json",
               "{'metadata':{'generation':99}}");
    cr_assert_eq(jint(p, "metadata.generation"), 3);
    json_decref(p);
    json_decref(d);
}

Test(crud, noop_update_keeps_resource_version)
{
    json_t *a = mk_cm("default", "n", "{'x':'1'}");
    unsigned long long r = rv_of(a);
    unsigned long long before = fakeapi_revision(srv);
    char *text = json_dumps(a, JSON_COMPACT);
    json_t *b = req(200, "PUT", "/api/v1/namespaces/default/configmaps/n", text);
    free(text);
    cr_assert_eq(rv_of(b), r, "no-op update keeps the resourceVersion");
    cr_assert_eq(fakeapi_revision(srv), before, "and writes no revision");
    cr_assert_null(jget(b, "metadata.generation"));
    json_decref(b);
    /* Same without a resourceVersion. */
    b = req(200, "PUT", "/api/v1/namespaces/default/configmaps/n",
            "{'metadata':{'name':'n','labels':{'x':'1'}},'data':{'k':'v'}}");
    cr_assert_eq(rv_of(b), r);
    json_decref(b);
    /* An empty merge patch too. */
    b = req_ct(200, "PATCH", "/api/v1/namespaces/default/configmaps/n",
               "application/merge-patch+json", "{}");
    cr_assert_eq(rv_of(b), r);
    json_decref(b);
    cr_assert_eq(fakeapi_revision(srv), before);
    json_decref(a);
}

Test(crud, status_ignored_on_main_resource)
{
    /* Create drops a status for kinds with a status subresource. */
    json_t *body = json_loads(strchr(deploy_body("s"), '{'), 0, NULL);
    (void)body;
    json_decref(body);
    json_t *d = req(201, "POST", DEPLOYS,
                    "{'metadata':{'name':'s'},'spec':{'replicas':1,'selector':{'matchLabels':"
                    "{'app':'s'}},'template':{'metadata':{'labels':{'app':'s'}},'spec':"
                    "{'containers':[{'name':'a','image':'i'}]}}},'status':{'replicas':7}}");
    cr_assert_null(jget(d, "status.replicas"), "status dropped on create");
    const char *path = DEPLOYS "/s";

    /* Controllers write it through /status. */
    json_t *s = req(200, "PUT", S("%s/status", path),
                    S("{'metadata':{'name':'s','resourceVersion':'%llu'},'spec':{'replicas':50},"
                      "'status':{'replicas':3}}",
                      rv_of(d)));
    cr_assert_eq(jint(s, "status.replicas"), 3);
    cr_assert_eq(jint(s, "spec.replicas"), 1, "/status leaves spec alone");

    /* A write to the main resource leaves status as it was. */
    json_t *u = req(200, "PUT", path,
                    "{'metadata':{'name':'s'},'spec':{'replicas':2,'selector':{'matchLabels':"
                    "{'app':'s'}},'template':{'metadata':{'labels':{'app':'s'}},'spec':"
                    "{'containers':[{'name':'a','image':'i'}]}}},'status':{'replicas':9}}");
    cr_assert_eq(jint(u, "status.replicas"), 3);
    cr_assert_eq(jint(u, "spec.replicas"), 2);
    json_decref(u);
    u = req_ct(200, "PATCH", path, "application/merge-patch+json", "{'status':null}");
    cr_assert_eq(jint(u, "status.replicas"), 3);
    json_decref(u);

    /* A ConfigMap has no status subresource: nothing to protect, data is kept. */
    json_decref(d);
    json_decref(s);
}

/* ---- malformed requests ------------------------------------------------------- */

Test(crud, malformed_json)
{
    unsigned long long before = fakeapi_revision(srv);
    json_decref(req_fail(400, "BadRequest", "POST", CM("default"), "{'metadata':"));
    json_decref(req_fail(400, "BadRequest", "POST", CM("default"), "[1,2]"));
    json_decref(req_fail(400, "BadRequest", "POST", CM("default"), "not json"));
    json_decref(req_fail(400, "BadRequest", "POST", CM("default"),
                         "{'metadata':{'name':'x','labels':{'a':1}}}"));
    json_decref(mk_cm("default", "mj", NULL));
    before = fakeapi_revision(srv);
    json_decref(req_fail(400, "BadRequest", "PUT", "/api/v1/namespaces/default/configmaps/mj",
                         "{'metadata':{'name':'mj'"));
    cr_assert_eq(fakeapi_revision(srv), before);
}

Test(crud, wrong_api_version_or_kind)
{
    json_decref(req_fail(400, "BadRequest", "POST", CM("default"),
                         "{'apiVersion':'apps/v1','kind':'ConfigMap','metadata':{'name':'x'}}"));
    json_decref(req_fail(400, "BadRequest", "POST", CM("default"),
                         "{'apiVersion':'v1','kind':'Secret','metadata':{'name':'x'}}"));
    json_decref(req_fail(400, "BadRequest", "POST", DEPLOYS,
                         "{'apiVersion':'apps/v2','kind':'Deployment','metadata':{'name':'x'}}"));
    cr_assert(gone("/api/v1/namespaces/default/configmaps/x"));
    /* Omitted apiVersion and kind are filled in. */
    json_t *o = req(201, "POST", CM("default"), "{'metadata':{'name':'x'}}");
    cr_assert_str_eq(jstr(o, "kind"), "ConfigMap");
    cr_assert_str_eq(jstr(o, "apiVersion"), "v1");
    json_decref(o);
    json_decref(mk_cm("default", "w", NULL));
    json_decref(req_fail(400, "BadRequest", "PUT", "/api/v1/namespaces/default/configmaps/w",
                         "{'apiVersion':'v1','kind':'Secret','metadata':{'name':'w'}}"));
}

Test(crud, body_too_large)
{
    size_t n = 3 * 1024 * 1024 + 100;
    char *body = malloc(n + 64);
    cr_assert_not_null(body);
    int off = sprintf(body, "{\"metadata\":{\"name\":\"big\"},\"data\":{\"k\":\"");
    memset(body + off, 'x', n);
    strcpy(body + off + n, "\"}}");
    char url[256];
    snprintf(url, sizeof url, "%s/api/v1/namespaces/default/configmaps", fakeapi_url(srv));
    httpc_resp r;
    httpc_do("POST", url, "application/json", body, &r);
    free(body);
    cr_assert_eq(r.status, 413, "got %ld", r.status);
    json_t *st = json_loads(r.body, 0, NULL);
    assert_failure(st, 413, "RequestEntityTooLarge");
    json_decref(st);
    httpc_resp_free(&r);
    cr_assert(gone("/api/v1/namespaces/default/configmaps/big"));

    /* Just under 3 MiB is read in full (the unknown resource answers 404, not
     * 413), without paying for parsing and storing it. */
    n = 3 * 1024 * 1024 - 1024;
    body = malloc(n + 1);
    cr_assert_not_null(body);
    memset(body, 'y', n);
    body[n] = '\0';
    snprintf(url, sizeof url, "%s/api/v1/namespaces/default/nothings", fakeapi_url(srv));
    cr_assert_eq(httpc_do("POST", url, "application/json", body, &r), 0);
    free(body);
    cr_assert_eq(r.status, 404, "got %ld", r.status);
    httpc_resp_free(&r);

    /* A 1 MiB ConfigMap is stored. */
    n = 1024 * 1024;
    body = malloc(n + 64);
    cr_assert_not_null(body);
    off = sprintf(body, "{\"metadata\":{\"name\":\"ok\"},\"data\":{\"k\":\"");
    memset(body + off, 'y', n);
    strcpy(body + off + n, "\"}}");
    snprintf(url, sizeof url, "%s/api/v1/namespaces/default/configmaps", fakeapi_url(srv));
    cr_assert_eq(httpc_do("POST", url, "application/json", body, &r), 0);
    free(body);
    cr_assert_eq(r.status, 201);
    httpc_resp_free(&r);
}

Test(crud, unknown_path)
{
    static const char *const paths[] = {
        "/nothing",
        "/api/v1/foos",
        "/api/v2/namespaces/default/configmaps",
        "/apis/nope.example.com/v1/things",
        "/apis/apps/v1/namespaces/default/widgets/x",
        "/api/v1/namespaces/default/configmaps/a/b/c",
        "/api/v1/namespaces/default/configmaps/a/nosuchsub",
    };
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        json_t *st = req_fail(404, "NotFound", "GET", paths[i], NULL);
        cr_assert_str_eq(jstr(st, "message"), "the server could not find the requested resource",
                         "%s", paths[i]);
        json_decref(st);
    }
}

Test(crud, wrong_method)
{
    json_decref(mk_cm("default", "wm", NULL));
    json_t *st =
        req_fail(405, "MethodNotAllowed", "POST", "/api/v1/namespaces/default/configmaps/wm", "{}");
    cr_assert_eq(json_integer_value(json_object_get(st, "code")), 405);
    cr_assert_str_eq(json_string_value(json_object_get(st, "kind")), "Status");
    json_decref(st);
    json_decref(req_fail(405, "MethodNotAllowed", "PUT", CM("default"), "{}"));
    json_decref(req_fail(405, "MethodNotAllowed", "PATCH", CM("default"), "{}"));
    json_decref(req_fail(405, "MethodNotAllowed", "DELETE", "/version", NULL));
    /* Writes need a namespace for namespaced kinds. */
    json_decref(req_fail(405, "MethodNotAllowed", "POST", "/api/v1/configmaps",
                         "{'metadata':{'name':'x'}}"));
}

Test(crud, cluster_scoped_and_namespaced_paths)
{
    /* A Node is cluster-scoped: a namespace in the body is dropped. */
    json_t *n =
        req(201, "POST", "/api/v1/nodes", "{'metadata':{'name':'node1','namespace':'default'}}");
    cr_assert_null(jget(n, "metadata.namespace"));
    json_decref(n);
    json_decref(req(200, "GET", "/api/v1/nodes/node1", NULL));
    json_decref(req_fail(404, "NotFound", "GET", "/api/v1/namespaces/default/nodes/node1", NULL));
    json_decref(req_fail(404, "NotFound", "GET", "/api/v1/namespaces/default/nodes", NULL));

    /* Namespaces are cluster-scoped, and /namespaces/<ns> is the object itself. */
    json_t *ns = req(200, "GET", "/api/v1/namespaces/default", NULL);
    cr_assert_str_eq(jstr(ns, "kind"), "Namespace");
    cr_assert_str_eq(jstr(ns, "status.phase"), "Active");
    json_decref(ns);
    json_decref(req(200, "GET", "/api/v1/namespaces/kube-system", NULL));
    json_decref(req(200, "GET", "/api/v1/namespaces/kube-public", NULL));

    /* A namespaced object needs its namespace in the path. */
    json_decref(mk_cm("default", "c1", NULL));
    json_decref(req_fail(404, "NotFound", "GET", "/api/v1/configmaps/c1", NULL));
    json_decref(
        req_fail(404, "NotFound", "GET", "/api/v1/namespaces/kube-system/configmaps/c1", NULL));
    /* ...but lists across namespaces without it. */
    json_t *l = req(200, "GET", "/api/v1/configmaps", NULL);
    cr_assert_str_eq(jstr(l, "kind"), "ConfigMapList");
    cr_assert_eq(json_array_size(jget(l, "items")), 1);
    json_decref(l);

    /* A cluster-scoped kind of a named group. */
    json_t *cr = req(201, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
                     "{'metadata':{'name':'reader'},'rules':[]}");
    cr_assert_null(jget(cr, "metadata.namespace"));
    json_decref(cr);
    json_decref(req(200, "GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/reader", NULL));
}

Test(crud, dry_run_writes_nothing)
{
    unsigned long long before = fakeapi_revision(srv);
    json_t *o = req(201, "POST", S("%s?dryRun=All", CM("default")),
                    "{'metadata':{'name':'dry'},'data':{'k':'v'}}");
    cr_assert_str_eq(jstr(o, "metadata.name"), "dry");
    cr_assert_null(jget(o, "metadata.uid"), "a dry-run create promises no uid");
    json_decref(o);
    cr_assert_eq(fakeapi_revision(srv), before);
    cr_assert(gone("/api/v1/namespaces/default/configmaps/dry"));

    json_t *a = mk_cm("default", "real", NULL);
    before = fakeapi_revision(srv);
    o = req(200, "PUT", "/api/v1/namespaces/default/configmaps/real?dryRun=All",
            "{'metadata':{'name':'real'},'data':{'k':'changed'}}");
    cr_assert_str_eq(jstr(o, "data.k"), "changed");
    json_decref(o);
    o = req_ct(200, "PATCH", "/api/v1/namespaces/default/configmaps/real?dryRun=All",
               "application/merge-patch+json", "{'data':{'k':'patched'}}");
    cr_assert_str_eq(jstr(o, "data.k"), "patched");
    json_decref(o);
    json_decref(req(200, "DELETE", "/api/v1/namespaces/default/configmaps/real?dryRun=All", NULL));
    cr_assert_eq(fakeapi_revision(srv), before);
    json_t *g = req(200, "GET", "/api/v1/namespaces/default/configmaps/real", NULL);
    cr_assert(json_equal(g, a), "dry runs left the object alone");
    json_decref(g);
    json_decref(a);

    /* A dry-run namespace create leaves no namespace behind. */
    json_decref(req(201, "POST", "/api/v1/namespaces?dryRun=All", "{'metadata':{'name':'dryns'}}"));
    cr_assert(gone("/api/v1/namespaces/dryns"));
}

Test(crud, unknown_query_parameters_ignored)
{
    json_t *o = req(201, "POST", S("%s?timeout=32s&fieldManager=kubectl&whatever=1", CM("default")),
                    "{'metadata':{'name':'q'}}");
    cr_assert_str_eq(jstr(o, "metadata.name"), "q");
    json_decref(o);
    o = req(200, "GET", "/api/v1/namespaces/default/configmaps/q?timeout=32s&zz=1", NULL);
    cr_assert_str_eq(jstr(o, "metadata.name"), "q");
    json_decref(o);
}

Test(crud, yaml_body)
{
    json_t *o = req_ct(201, "POST", CM("default"), "application/yaml",
                       "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fromyaml\ndata:\n  "
                       "a: b\n");
    cr_assert_str_eq(jstr(o, "data.a"), "b");
    json_decref(o);
}

/*
 * DISABLED: server bug, left open. Label keys and values are not validated:
 * a key like "bad key!" or a 64-character value is stored (201) where the
 * API server answers 422 with a metadata.labels cause. Needs qualified-name
 * and label-value checks in the admission path (verbs_write.c).
 */
Test(crud, invalid_labels_rejected)
{
    json_t *st = req_fail(422, "Invalid", "POST", CM("default"),
                          "{'metadata':{'name':'l1','labels':{'bad key!':'v'}}}");
    cr_assert(!strncmp(jstr(st, "details.causes.0.field"), "metadata.labels", 15));
    json_decref(st);
    char v[70];
    memset(v, 'v', 64);
    v[64] = '\0';
    json_decref(req_fail(422, "Invalid", "POST", CM("default"),
                         S("{'metadata':{'name':'l2','labels':{'k':'%s'}}}", v)));
    cr_assert(gone("/api/v1/namespaces/default/configmaps/l1"));
}

/* A new pod starts Pending with its QoS class, whatever status it was sent
 * with (the pod strategy's PrepareForCreate). */
Test(crud, new_pod_is_pending_with_qos_class)
{
    const char *cases[][2] = {
        {"{'name':'c','image':'i'}", "BestEffort"},
        {"{'name':'c','image':'i','resources':{'requests':{'cpu':'100m'}}}", "Burstable"},
        {"{'name':'c','image':'i','resources':{'limits':{'cpu':'1','memory':'1Gi'}}}",
         "Guaranteed"},
        {"{'name':'c','image':'i','resources':{'limits':{'cpu':'1','memory':'1Gi'},"
         "'requests':{'cpu':'1','memory':'512Mi'}}}",
         "Burstable"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *p = req(201, "POST", "/api/v1/namespaces/default/pods",
                        S("{'metadata':{'name':'q%zu'},'spec':{'containers':[%s]},"
                          "'status':{'phase':'Running','podIP':'1.2.3.4'}}",
                          i, cases[i][0]));
        cr_expect_str_eq(jstr(p, "status.phase"), "Pending");
        cr_expect_str_eq(jstr(p, "status.qosClass"), cases[i][1], "case %zu", i);
        cr_expect_null(jget(p, "status.podIP"));
        json_decref(p);
    }
}

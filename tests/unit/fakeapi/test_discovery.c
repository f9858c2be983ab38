/*
 * test_discovery.c - discovery documents, OpenAPI v3 and Tables, all generated
 * from a registry holding the built-in kinds plus a two-version CronTab CRD.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "discovery.h"
#include "openapi.h"
#include "registry.h"
#include "table.h"
#include "timefmt.h"

/* ---- helpers --------------------------------------------------------------------- */

/* JSON with ' for " so test documents stay readable; no test string needs a '. */
static json_t *J(const char *text)
{
    char *buf = strdup(text);
    for (char *p = buf; *p; p++)
        if (*p == '\'')
            *p = '"';
    json_error_t err;
    json_t *v = json_loads(buf, JSON_DECODE_ANY, &err);
    cr_assert_not_null(v, "bad test JSON: %s: %s", err.text, buf);
    free(buf);
    return v;
}

static const char crontab_crd[] =
    "{'apiVersion':'apiextensions.k8s.io/v1','kind':'CustomResourceDefinition',"
    " 'metadata':{'name':'crontabs.stable.example.com'},"
    " 'spec':{'group':'stable.example.com','scope':'Namespaced',"
    "  'names':{'plural':'crontabs','singular':'crontab','kind':'CronTab',"
    "           'listKind':'CronTabList','shortNames':['ct'],'categories':['all','cron']},"
    "  'versions':["
    "   {'name':'v1beta1','served':true,'storage':false,"
    "    'schema':{'openAPIV3Schema':{'type':'object','properties':{'spec':{'type':'object'}}}}},"
    "   {'name':'v1','served':true,'storage':true,"
    "    'schema':{'openAPIV3Schema':{'type':'object',"
    "      'description':'CronTab runs a command on a schedule.',"
    "      'properties':{"
    "        'spec':{'type':'object','description':'The desired schedule.',"
    "          'properties':{'cronSpec':{'type':'string','description':'In cron format.'},"
    "                        'replicas':{'type':'integer'},"
    "                        'containers':{'type':'array','items':{'type':'object',"
    "                          'x-kubernetes-preserve-unknown-fields':true}}}},"
    "        'status':{'type':'object','properties':{'replicas':{'type':'integer'}}}}}},"
    "    'subresources':{'status':{},'scale':{'specReplicasPath':'.spec.replicas',"
    "       'statusReplicasPath':'.status.replicas','labelSelectorPath':'.status.selector'}},"
    "    'additionalPrinterColumns':["
    "      {'name':'Spec','type':'string','jsonPath':'.spec.cronSpec'},"
    "      {'name':'Replicas','type':'integer','jsonPath':'.spec.replicas'},"
    "      {'name':'Images','type':'string','jsonPath':'.spec.containers[*].image',"
    "       'priority':1,'description':'all images'},"
    "      {'name':'First','type':'string','jsonPath':'.spec.containers[0].name'},"
    "      {'name':'Labelled','type':'string',"
    "       'jsonPath':'.metadata.labels[\\'app.kubernetes.io/name\\']'},"
    "      {'name':'Age','type':'date','jsonPath':'.metadata.creationTimestamp'}]}]}}";

static fakeapi__registry *reg;

static void add_crd_text(const char *text)
{
    json_t *crd = J(text);
    char err[256] = "";
    cr_assert_eq(fakeapi__registry_add_crd(reg, crd, err, sizeof err), 0, "add_crd: %s", err);
    json_decref(crd);
}

static void setup(void)
{
    reg = fakeapi__registry_new();
    cr_assert_not_null(reg);
    add_crd_text(crontab_crd);
}

static void teardown(void)
{
    fakeapi__registry_free(reg);
    reg = NULL;
}

TestSuite(discovery, .init = setup, .fini = teardown);
TestSuite(openapi, .init = setup, .fini = teardown);
TestSuite(table, .init = setup, .fini = teardown);
TestSuite(duration);
TestSuite(accept);

/* The element of array arr whose key equals val, or NULL. */
static json_t *find_by(const json_t *arr, const char *key, const char *val)
{
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e)
    {
        const char *s = json_string_value(json_object_get(e, key));
        if (s && !strcmp(s, val))
            return e;
    }
    return NULL;
}

static const char *str_at(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

/* Compare a JSON value with expected JSON text. */
static void assert_json(const json_t *got, const char *expected_text, const char *what)
{
    json_t *want = J(expected_text);
    char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    cr_assert(json_equal((json_t *)got, want), "%s: got %s, want %s", what, g ? g : "NULL",
              expected_text);
    free(g);
    json_decref(want);
}

/* 2026-12-02T09:35:36Z in ns, and offsets from it. */
#define T0_NS (INT64_C(1796204136) * 1000000000)
#define SEC INT64_C(1000000000)

/* ---- /version, /api ------------------------------------------------------------------ */

Test(discovery, version_is_fixed_and_complete)
{
    json_t *v = fakeapi__disc_version();
    assert_json(v,
                "{'major':'1','minor':'32','gitVersion':'v1.32.0-fakeapi',"
                "'gitCommit':'0000000000000000000000000000000000000000','gitTreeState':'clean',"
                "'buildDate':'2024-12-11T00:00:00Z','goVersion':'n/a','compiler':'gcc',"
                "'platform':'linux/amd64'}",
                "version");
    json_t *again = fakeapi__disc_version();
    cr_assert(json_equal(v, again), "version must not depend on time");
    json_decref(v);
    json_decref(again);
}

Test(discovery, api_versions)
{
    json_t *a = fakeapi__disc_api();
    assert_json(a,
                "{'kind':'APIVersions','versions':['v1'],'serverAddressByClientCIDRs':"
                "[{'clientCIDR':'0.0.0.0/0','serverAddress':'127.0.0.1'}]}",
                "api");
    json_decref(a);
}

/* ---- /apis ------------------------------------------------------------------------- */

Test(discovery, apis_lists_builtin_groups_without_core)
{
    json_t *doc = fakeapi__disc_apis(reg);
    cr_assert_not_null(doc);
    cr_assert_str_eq(str_at(doc, "kind"), "APIGroupList");
    cr_assert_str_eq(str_at(doc, "apiVersion"), "v1");
    json_t *groups = json_object_get(doc, "groups");
    cr_assert_null(find_by(groups, "name", ""), "core group must not be in /apis");
    assert_json(find_by(groups, "name", "apps"),
                "{'name':'apps','versions':[{'groupVersion':'apps/v1','version':'v1'}],"
                "'preferredVersion':{'groupVersion':'apps/v1','version':'v1'}}",
                "apps");
    cr_assert_not_null(find_by(groups, "name", "batch"));
    cr_assert_not_null(find_by(groups, "name", "coordination.k8s.io"));
    cr_assert_not_null(find_by(groups, "name", "apiextensions.k8s.io"));
    json_decref(doc);
}

Test(discovery, apis_groups_in_registration_order_once_each)
{
    json_t *doc = fakeapi__disc_apis(reg);
    json_t *groups = json_object_get(doc, "groups");
    /* The real server's order (its group priorities). */
    cr_assert_str_eq(str_at(json_array_get(groups, 0), "name"), "apiregistration.k8s.io");
    cr_assert_str_eq(str_at(json_array_get(groups, 1), "name"), "apps");
    cr_assert_str_eq(str_at(json_array_get(groups, 2), "name"), "events.k8s.io");
    /* The CRD group was registered last. */
    json_t *last = json_array_get(groups, json_array_size(groups) - 1);
    cr_assert_str_eq(str_at(last, "name"), "stable.example.com");
    size_t i, apps = 0;
    json_t *g;
    json_array_foreach(groups, i, g) apps += !strcmp(str_at(g, "name"), "apps");
    cr_assert_eq(apps, 1);
    json_decref(doc);
}

Test(discovery, apis_crd_group_prefers_storage_version)
{
    json_t *doc = fakeapi__disc_apis(reg);
    json_t *g = find_by(json_object_get(doc, "groups"), "name", "stable.example.com");
    cr_assert_not_null(g);
    assert_json(g,
                "{'name':'stable.example.com','versions':["
                "{'groupVersion':'stable.example.com/v1beta1','version':'v1beta1'},"
                "{'groupVersion':'stable.example.com/v1','version':'v1'}],"
                "'preferredVersion':{'groupVersion':'stable.example.com/v1','version':'v1'}}",
                "crd group");
    json_decref(doc);
}

Test(discovery, apis_without_storage_version_prefers_first)
{
    add_crd_text("{'metadata':{'name':'widgets.acme.io'},'spec':{'group':'acme.io',"
                 "'names':{'plural':'widgets','kind':'Widget'},'versions':["
                 "{'name':'v2','served':true,'storage':false},"
                 "{'name':'v1','served':true,'storage':false}]}}");
    json_t *g = fakeapi__disc_group(reg, "acme.io");
    cr_assert_not_null(g);
    assert_json(json_object_get(g, "preferredVersion"),
                "{'groupVersion':'acme.io/v2','version':'v2'}", "preferred");
    json_decref(g);
}

Test(discovery, group_document)
{
    json_t *g = fakeapi__disc_group(reg, "coordination.k8s.io");
    assert_json(g,
                "{'kind':'APIGroup','apiVersion':'v1','name':'coordination.k8s.io',"
                "'versions':[{'groupVersion':'coordination.k8s.io/v1','version':'v1'}],"
                "'preferredVersion':{'groupVersion':'coordination.k8s.io/v1','version':'v1'}}",
                "group");
    json_decref(g);
}

Test(discovery, group_unknown_or_core_is_null)
{
    cr_assert_null(fakeapi__disc_group(reg, "nope.example.com"));
    cr_assert_null(fakeapi__disc_group(reg, ""));
    cr_assert_null(fakeapi__disc_group(reg, NULL));
}

Test(discovery, removed_crd_disappears)
{
    fakeapi__registry_remove_crd(reg, "crontabs.stable.example.com");
    json_t *doc = fakeapi__disc_apis(reg);
    cr_assert_null(find_by(json_object_get(doc, "groups"), "name", "stable.example.com"));
    json_decref(doc);
    cr_assert_null(fakeapi__disc_group(reg, "stable.example.com"));
    cr_assert_null(fakeapi__disc_resources(reg, "stable.example.com", "v1"));
    cr_assert_null(fakeapi__openapi_v3_gv(reg, "stable.example.com", "v1"));
}

/* ---- resource lists ------------------------------------------------------------------ */

Test(discovery, core_v1_pods_entry)
{
    json_t *doc = fakeapi__disc_resources(reg, "", "v1");
    cr_assert_not_null(doc);
    cr_assert_str_eq(str_at(doc, "kind"), "APIResourceList");
    cr_assert_str_eq(str_at(doc, "apiVersion"), "v1");
    cr_assert_str_eq(str_at(doc, "groupVersion"), "v1");
    assert_json(find_by(json_object_get(doc, "resources"), "name", "pods"),
                "{'name':'pods','singularName':'pod','namespaced':true,'kind':'Pod',"
                "'verbs':['create','delete','deletecollection','get','list','patch','update',"
                "'watch'],'shortNames':['po'],'categories':['all']}",
                "pods");
    json_decref(doc);
}

Test(discovery, core_v1_pods_status_entry)
{
    json_t *doc = fakeapi__disc_resources(reg, "", "v1");
    assert_json(find_by(json_object_get(doc, "resources"), "name", "pods/status"),
                "{'name':'pods/status','singularName':'','namespaced':true,'kind':'Pod',"
                "'verbs':['get','patch','update']}",
                "pods/status");
    json_decref(doc);
}

Test(discovery, empty_lists_are_omitted)
{
    json_t *doc = fakeapi__disc_resources(reg, "", "v1");
    json_t *res = json_object_get(doc, "resources");
    json_t *cm = find_by(res, "name", "configmaps");
    cr_assert_null(json_object_get(cm, "categories"), "configmaps have no categories");
    assert_json(json_object_get(cm, "shortNames"), "['cm']", "cm short names");
    json_t *secrets = find_by(res, "name", "secrets");
    cr_assert_null(json_object_get(secrets, "shortNames"));
    json_t *ns = find_by(res, "name", "namespaces");
    cr_assert(json_is_false(json_object_get(ns, "namespaced")));
    cr_assert_null(find_by(res, "name", "configmaps/status"), "configmaps have no status");
    cr_assert_null(find_by(res, "name", "deployments"), "apps kinds are not in v1");
    json_decref(doc);
}

Test(discovery, apps_v1_deployments_scale)
{
    json_t *doc = fakeapi__disc_resources(reg, "apps", "v1");
    cr_assert_not_null(doc);
    cr_assert_str_eq(str_at(doc, "groupVersion"), "apps/v1");
    json_t *res = json_object_get(doc, "resources");
    assert_json(find_by(res, "name", "deployments/scale"),
                "{'name':'deployments/scale','singularName':'','namespaced':true,"
                "'group':'autoscaling','version':'v1','kind':'Scale',"
                "'verbs':['get','patch','update']}",
                "deployments/scale");
    cr_assert_not_null(find_by(res, "name", "deployments/status"));
    cr_assert_null(find_by(res, "name", "daemonsets/scale"));
    json_decref(doc);
}

Test(discovery, unknown_group_version_is_null)
{
    cr_assert_null(fakeapi__disc_resources(reg, "", "v2"));
    cr_assert_null(fakeapi__disc_resources(reg, "apps", "v1beta1"));
    cr_assert_null(fakeapi__disc_resources(reg, "nope.io", "v1"));
    cr_assert_null(fakeapi__disc_resources(reg, NULL, "v1"));
}

Test(discovery, crd_resources_follow_the_crd)
{
    json_t *doc = fakeapi__disc_resources(reg, "stable.example.com", "v1");
    cr_assert_not_null(doc);
    cr_assert_str_eq(str_at(doc, "groupVersion"), "stable.example.com/v1");
    json_t *res = json_object_get(doc, "resources");
    assert_json(find_by(res, "name", "crontabs"),
                "{'name':'crontabs','singularName':'crontab','namespaced':true,'kind':'CronTab',"
                "'verbs':['create','delete','deletecollection','get','list','patch','update',"
                "'watch'],'shortNames':['ct'],'categories':['all','cron']}",
                "crontabs");
    cr_assert_not_null(find_by(res, "name", "crontabs/status"));
    json_t *scale = find_by(res, "name", "crontabs/scale");
    cr_assert_str_eq(str_at(scale, "kind"), "Scale");
    cr_assert_str_eq(str_at(scale, "group"), "autoscaling");
    json_decref(doc);

    /* Subresources are per version: v1beta1 declares none. */
    doc = fakeapi__disc_resources(reg, "stable.example.com", "v1beta1");
    cr_assert_not_null(doc);
    cr_assert_eq(json_array_size(json_object_get(doc, "resources")), 1);
    json_decref(doc);
}

/* Registries share the built-in kinds (the same entries, in the same order)
 * while the CRD kinds stay each registry's own, and outlive a freed registry. */
Test(discovery, registries_share_builtins_not_crds)
{
    fakeapi__registry *other = fakeapi__registry_new();
    cr_assert_not_null(other);
    size_t n1 = 0, n2 = 0;
    fakeapi__resource **a = fakeapi__registry_all(reg, &n1);
    fakeapi__resource **b = fakeapi__registry_all(other, &n2);
    size_t builtin = 0;
    while (builtin < n1 && !a[builtin]->custom)
        builtin++;
    cr_assert_gt(builtin, 20);
    cr_assert_eq(n2, builtin, "a fresh registry holds the built-in kinds only");
    cr_assert_eq(n1, builtin + 2, "the CronTab CRD's two versions follow them");
    for (size_t i = 0; i < n2; i++)
        cr_assert_eq(b[i], a[i], "built-in %zu (%s) is shared", i, a[i]->kind);
    cr_assert_eq(fakeapi__registry_generation(other), n2);
    fakeapi__registry_release(a, n1);
    fakeapi__registry_release(b, n2);
    fakeapi__resource *ct = fakeapi__registry_find_kind(other, "stable.example.com/v1", "CronTab");
    cr_assert_null(ct, "a CRD of one registry is not in another");
    fakeapi__resource_unref(ct);
    ct = fakeapi__registry_find_kind(reg, "stable.example.com/v1", "CronTab");
    cr_assert_not_null(ct);
    fakeapi__resource_unref(ct);
    fakeapi__registry_free(other);
    /* Freeing one registry leaves the shared entries whole for the others. */
    fakeapi__resource *pods = fakeapi__registry_find(reg, "", "v1", "pods");
    cr_assert_not_null(pods);
    cr_assert_str_eq(pods->kind, "Pod");
    cr_assert_str_eq(pods->store_key, "/pods");
    cr_assert(fakeapi__resource_allows(pods, "list"));
    fakeapi__resource_unref(pods);
    other = fakeapi__registry_new();
    fakeapi__resource *d = fakeapi__registry_find_kind(other, "apps/v1", "Deployment");
    cr_assert_not_null(d);
    cr_assert_str_eq(d->list_kind, "DeploymentList");
    fakeapi__resource_unref(d);
    fakeapi__registry_free(other);
}

/* ---- OpenAPI v3 -------------------------------------------------------------------- */

/* The number of distinct group-versions in the registry. */
static size_t count_gvs(void)
{
    size_t n = 0, gvs = 0;
    fakeapi__resource **all = fakeapi__registry_all(reg, &n);
    for (size_t i = 0; i < n; i++) {
        bool dup = false;
        for (size_t j = 0; j < i; j++)
            dup = dup || !strcmp(all[i]->group_version, all[j]->group_version);
        gvs += !dup;
    }
    fakeapi__registry_release(all, n);
    return gvs;
}

static const char *root_url(const json_t *root, const char *key)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(root, "paths"), key), "serverRelativeURL"));
}

Test(openapi, root_lists_every_group_version)
{
    json_t *root = fakeapi__openapi_v3_root(reg);
    cr_assert_not_null(root);
    json_t *paths = json_object_get(root, "paths");
    cr_assert_eq(json_object_size(paths), count_gvs());
    const char *keys[] = {"api/v1",
                          "apis/apps/v1",
                          "apis/batch/v1",
                          "apis/coordination.k8s.io/v1",
                          "apis/apiextensions.k8s.io/v1",
                          "apis/stable.example.com/v1",
                          "apis/stable.example.com/v1beta1"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *url = root_url(root, keys[i]);
        cr_assert_not_null(url, "%s missing", keys[i]);
        char prefix[128];
        snprintf(prefix, sizeof prefix, "/openapi/v3/%s?hash=", keys[i]);
        cr_assert_eq(strncmp(url, prefix, strlen(prefix)), 0, "url %s", url);
        cr_assert_gt(strlen(url), strlen(prefix), "empty hash in %s", url);
    }
    json_decref(root);
}

Test(openapi, root_hash_tracks_the_document)
{
    json_t *before = fakeapi__openapi_v3_root(reg);
    cr_assert_null(root_url(before, "apis/acme.io/v1"));
    char *crd = strdup(crontab_crd);
    /* Same CRD, changed description: only its group-versions' hashes move. */
    char *p = strstr(crd, "CronTab runs a command");
    memcpy(p, "CronTab RUNS", 12);
    add_crd_text(crd);
    free(crd);
    add_crd_text("{'metadata':{'name':'widgets.acme.io'},'spec':{'group':'acme.io',"
                 "'names':{'plural':'widgets','kind':'Widget'},'versions':["
                 "{'name':'v1','served':true,'storage':true}]}}");
    json_t *after = fakeapi__openapi_v3_root(reg);
    cr_assert_str_neq(root_url(before, "apis/stable.example.com/v1"),
                      root_url(after, "apis/stable.example.com/v1"));
    cr_assert_str_eq(root_url(before, "api/v1"), root_url(after, "api/v1"));
    cr_assert_str_eq(root_url(before, "apis/stable.example.com/v1beta1"),
                     root_url(after, "apis/stable.example.com/v1beta1"));
    cr_assert_not_null(root_url(after, "apis/acme.io/v1"));
    json_decref(before);
    json_decref(after);
}

/* The parameter named name in an operation's parameters, or NULL. */
static json_t *op_param(const json_t *op, const char *name)
{
    return find_by(json_object_get(op, "parameters"), "name", name);
}

Test(openapi, crd_patch_operation_declares_field_validation)
{
    json_t *doc = fakeapi__openapi_v3_gv(reg, "stable.example.com", "v1");
    cr_assert_not_null(doc);
    cr_assert_str_eq(str_at(doc, "openapi"), "3.0.0");
    cr_assert(json_is_object(json_object_get(doc, "info")));
    json_t *item =
        json_object_get(json_object_get(doc, "paths"),
                        "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}");
    cr_assert_not_null(item, "item path missing");
    json_t *patch = json_object_get(item, "patch");
    cr_assert_not_null(patch);
    assert_json(json_object_get(patch, "x-kubernetes-group-version-kind"),
                "{'group':'stable.example.com','version':'v1','kind':'CronTab'}", "patch gvk");
    cr_assert_str_eq(str_at(patch, "x-kubernetes-action"), "patch");
    json_t *fv = op_param(patch, "fieldValidation");
    cr_assert_not_null(fv, "no fieldValidation on PATCH");
    cr_assert_str_eq(str_at(fv, "in"), "query");
    assert_json(json_object_get(fv, "schema"), "{'type':'string','uniqueItems':true}", "schema");
    cr_assert_not_null(str_at(fv, "description"));
    /* A CRD has no strategic merge patch. */
    json_t *content = json_object_get(json_object_get(patch, "requestBody"), "content");
    cr_assert_not_null(json_object_get(content, "application/merge-patch+json"));
    cr_assert_null(json_object_get(content, "application/strategic-merge-patch+json"));
    /* Path parameters live on the path item. */
    cr_assert_not_null(find_by(json_object_get(item, "parameters"), "name", "namespace"));
    cr_assert_not_null(find_by(json_object_get(item, "parameters"), "name", "name"));
    json_decref(doc);
}

Test(openapi, crd_collection_and_item_operations)
{
    json_t *doc = fakeapi__openapi_v3_gv(reg, "stable.example.com", "v1");
    json_t *paths = json_object_get(doc, "paths");
    json_t *coll =
        json_object_get(paths, "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs");
    cr_assert_not_null(coll);
    cr_assert_str_eq(str_at(json_object_get(coll, "get"), "x-kubernetes-action"), "list");
    cr_assert_not_null(op_param(json_object_get(coll, "post"), "fieldValidation"));
    cr_assert_str_eq(str_at(json_object_get(coll, "delete"), "x-kubernetes-action"),
                     "deletecollection");
    json_t *item = json_object_get(
        paths, "/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}");
    cr_assert_not_null(op_param(json_object_get(item, "put"), "fieldValidation"));
    cr_assert_str_eq(str_at(json_object_get(item, "get"), "x-kubernetes-action"), "get");
    cr_assert_str_eq(str_at(json_object_get(item, "delete"), "x-kubernetes-action"), "delete");
    cr_assert_not_null(json_object_get(paths, "/apis/stable.example.com/v1/crontabs"),
                       "all-namespaces list path");
    json_t *get_ref = json_object_get(
        json_object_get(
            json_object_get(json_object_get(json_object_get(item, "get"), "responses"), "200"),
            "content"),
        "application/json");
    assert_json(json_object_get(get_ref, "schema"),
                "{'$ref':'#/components/schemas/com.example.stable.v1.CronTab'}", "get response");
    json_decref(doc);
}

/* kubectl stops at the first PATCH operation of a GVK: every one must carry the parameter. */
Test(openapi, every_patch_in_every_document_has_field_validation)
{
    json_t *root = fakeapi__openapi_v3_root(reg);
    const char *key;
    json_t *entry;
    size_t patches = 0;
    json_object_foreach(json_object_get(root, "paths"), key, entry)
    {
        char group[128] = "", version[32] = "";
        if (!strncmp(key, "apis/", 5)) {
            const char *slash = strchr(key + 5, '/');
            snprintf(group, sizeof group, "%.*s", (int)(slash - key - 5), key + 5);
            snprintf(version, sizeof version, "%s", slash + 1);
        } else {
            snprintf(version, sizeof version, "%s", key + 4);
        }
        json_t *doc = fakeapi__openapi_v3_gv(reg, group, version);
        cr_assert_not_null(doc, "%s has no document", key);
        const char *path;
        json_t *item;
        json_object_foreach(json_object_get(doc, "paths"), path, item)
        {
            json_t *patch = json_object_get(item, "patch");
            if (!patch)
                continue;
            patches++;
            cr_assert_not_null(op_param(patch, "fieldValidation"), "%s PATCH", path);
            cr_assert(json_is_object(json_object_get(patch, "x-kubernetes-group-version-kind")),
                      "%s PATCH gvk", path);
        }
        json_decref(doc);
    }
    cr_assert_gt(patches, 40);
    json_decref(root);
}

Test(openapi, crd_schema_in_components)
{
    json_t *doc = fakeapi__openapi_v3_gv(reg, "stable.example.com", "v1");
    json_t *schemas = json_object_get(json_object_get(doc, "components"), "schemas");
    json_t *ct = json_object_get(schemas, "com.example.stable.v1.CronTab");
    cr_assert_not_null(ct);
    cr_assert_str_eq(str_at(ct, "type"), "object");
    cr_assert_str_eq(str_at(ct, "description"), "CronTab runs a command on a schedule.");
    assert_json(json_object_get(ct, "x-kubernetes-group-version-kind"),
                "[{'group':'stable.example.com','version':'v1','kind':'CronTab'}]", "gvk");
    json_t *props = json_object_get(ct, "properties");
    json_t *spec = json_object_get(props, "spec");
    cr_assert_str_eq(str_at(spec, "description"), "The desired schedule.");
    cr_assert_str_eq(
        str_at(json_object_get(json_object_get(spec, "properties"), "cronSpec"), "description"),
        "In cron format.");
    cr_assert_not_null(json_object_get(props, "status"));
    cr_assert_str_eq(str_at(json_object_get(props, "apiVersion"), "type"), "string");
    cr_assert_str_eq(str_at(json_object_get(props, "kind"), "type"), "string");
    assert_json(json_object_get(json_object_get(props, "metadata"), "allOf"),
                "[{'$ref':'#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'}]",
                "metadata");
    json_t *om = json_object_get(schemas, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
    cr_assert_not_null(json_object_get(json_object_get(om, "properties"), "name"));
    json_t *list = json_object_get(schemas, "com.example.stable.v1.CronTabList");
    cr_assert_not_null(list);
    assert_json(json_object_get(list, "x-kubernetes-group-version-kind"),
                "[{'group':'stable.example.com','version':'v1','kind':'CronTabList'}]", "list gvk");
    assert_json(
        json_object_get(json_object_get(json_object_get(list, "properties"), "items"), "items"),
        "{'$ref':'#/components/schemas/com.example.stable.v1.CronTab'}", "list items");
    json_decref(doc);
}

Test(openapi, crd_without_schema_preserves_unknown_fields)
{
    add_crd_text("{'metadata':{'name':'widgets.acme.io'},'spec':{'group':'acme.io',"
                 "'scope':'Cluster','names':{'plural':'widgets','kind':'Widget'},'versions':["
                 "{'name':'v1','served':true,'storage':true}]}}");
    json_t *doc = fakeapi__openapi_v3_gv(reg, "acme.io", "v1");
    cr_assert_not_null(doc);
    json_t *w = json_object_get(json_object_get(json_object_get(doc, "components"), "schemas"),
                                "io.acme.v1.Widget");
    cr_assert_not_null(w);
    cr_assert(json_is_true(json_object_get(w, "x-kubernetes-preserve-unknown-fields")));
    cr_assert_not_null(json_object_get(json_object_get(w, "properties"), "metadata"));
    /* Cluster-scoped paths have no namespace segment. */
    json_t *paths = json_object_get(doc, "paths");
    cr_assert_not_null(json_object_get(paths, "/apis/acme.io/v1/widgets/{name}"));
    cr_assert_null(json_object_get(paths, "/apis/acme.io/v1/namespaces/{namespace}/widgets"));
    json_decref(doc);
}

Test(openapi, builtin_schema_names_and_paths)
{
    json_t *doc = fakeapi__openapi_v3_gv(reg, "", "v1");
    cr_assert_not_null(doc);
    json_t *schemas = json_object_get(json_object_get(doc, "components"), "schemas");
    json_t *pod = json_object_get(schemas, "io.k8s.api.core.v1.Pod");
    cr_assert_not_null(pod);
    assert_json(json_object_get(pod, "x-kubernetes-group-version-kind"),
                "[{'group':'','version':'v1','kind':'Pod'}]", "pod gvk");
    /* Typed from the tables: spec refers to PodSpec. */
    assert_json(json_object_get(json_object_get(pod, "properties"), "spec"),
                "{'allOf':[{'$ref':'#/components/schemas/io.k8s.api.core.v1.PodSpec'}]}", "pod spec");
    cr_assert_not_null(json_object_get(schemas, "io.k8s.api.core.v1.PodList"));
    /* ConfigMaps have data, not spec. */
    json_t *cm =
        json_object_get(json_object_get(schemas, "io.k8s.api.core.v1.ConfigMap"), "properties");
    cr_assert_not_null(json_object_get(cm, "data"));
    cr_assert_null(json_object_get(cm, "spec"));
    json_t *paths = json_object_get(doc, "paths");
    json_t *pod_item = json_object_get(paths, "/api/v1/namespaces/{namespace}/pods/{name}");
    cr_assert_not_null(pod_item);
    json_t *content = json_object_get(
        json_object_get(json_object_get(pod_item, "patch"), "requestBody"), "content");
    cr_assert_not_null(json_object_get(content, "application/strategic-merge-patch+json"));
    cr_assert_not_null(json_object_get(paths, "/api/v1/namespaces/{name}"), "namespace item");
    cr_assert_not_null(json_object_get(paths, "/api/v1/namespaces/{namespace}/pods/{name}/status"));
    json_decref(doc);

    doc = fakeapi__openapi_v3_gv(reg, "coordination.k8s.io", "v1");
    cr_assert_not_null(
        json_object_get(json_object_get(json_object_get(doc, "components"), "schemas"),
                        "io.k8s.api.coordination.v1.Lease"));
    json_decref(doc);
    doc = fakeapi__openapi_v3_gv(reg, "apiextensions.k8s.io", "v1");
    cr_assert_not_null(json_object_get(
        json_object_get(json_object_get(doc, "components"), "schemas"),
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"));
    json_decref(doc);
}

Test(openapi, scale_subresource_uses_autoscaling_scale)
{
    json_t *doc = fakeapi__openapi_v3_gv(reg, "apps", "v1");
    json_t *scale =
        json_object_get(json_object_get(doc, "paths"),
                        "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale");
    cr_assert_not_null(scale);
    assert_json(json_object_get(json_object_get(scale, "patch"), "x-kubernetes-group-version-kind"),
                "{'group':'autoscaling','version':'v1','kind':'Scale'}", "scale gvk");
    json_t *s = json_object_get(json_object_get(json_object_get(doc, "components"), "schemas"),
                                "io.k8s.api.autoscaling.v1.Scale");
    cr_assert_not_null(s);
    cr_assert_not_null(json_object_get(s, "x-kubernetes-group-version-kind"));
    json_decref(doc);
}

/* Every "$ref" under v points at a schema present in schemas. */
static size_t check_refs(const json_t *v, const json_t *schemas)
{
    size_t n = 0;
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x)
        {
            if (!strcmp(k, "$ref")) {
                const char *ref = json_string_value(x);
                const char *prefix = "#/components/schemas/";
                cr_assert_eq(strncmp(ref, prefix, strlen(prefix)), 0, "ref %s", ref);
                cr_assert_not_null(json_object_get(schemas, ref + strlen(prefix)),
                                   "dangling ref %s", ref);
                n++;
            } else {
                n += check_refs(x, schemas);
            }
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) n += check_refs(x, schemas);
    }
    return n;
}

Test(openapi, all_refs_resolve)
{
    const char *gvs[][2] = {{"", "v1"},
                            {"apps", "v1"},
                            {"stable.example.com", "v1"},
                            {"rbac.authorization.k8s.io", "v1"}};
    for (size_t i = 0; i < sizeof gvs / sizeof gvs[0]; i++) {
        json_t *doc = fakeapi__openapi_v3_gv(reg, gvs[i][0], gvs[i][1]);
        cr_assert_not_null(doc);
        json_t *schemas = json_object_get(json_object_get(doc, "components"), "schemas");
        cr_assert_gt(check_refs(doc, schemas), 10);
        json_decref(doc);
    }
}

Test(openapi, unknown_group_version_is_null)
{
    cr_assert_null(fakeapi__openapi_v3_gv(reg, "", "v2"));
    cr_assert_null(fakeapi__openapi_v3_gv(reg, "nope.io", "v1"));
    cr_assert_null(fakeapi__openapi_v3_gv(reg, "apps", NULL));
}

/* ---- tables ------------------------------------------------------------------------- */

/* A Table for group/version/plural over items given as JSON text. */
static json_t *table_for(const char *group, const char *plural, const char *version,
                         const char *items, int64_t now)
{
    fakeapi__resource *r = fakeapi__registry_find(reg, group, version, plural);
    cr_assert_not_null(r, "%s/%s not served", group, plural);
    json_t *arr = J(items);
    json_t *t = fakeapi__table_new(r, arr, "42", NULL, now);
    cr_assert_not_null(t);
    cr_assert_eq(arr->refcount, 1, "items must be borrowed");
    json_decref(arr);
    fakeapi__resource_unref(r);
    return t;
}

static json_t *col_names(const json_t *t)
{
    json_t *names = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(t, "columnDefinitions"), i, c)
        json_array_append(names, json_object_get(c, "name"));
    return names;
}

static json_t *cells(const json_t *t, size_t row)
{
    return json_object_get(json_array_get(json_object_get(t, "rows"), row), "cells");
}

static const char pod_json[] =
    "[{'metadata':{'name':'web-1','namespace':'default','uid':'u1','resourceVersion':'7',"
    "  'creationTimestamp':'2026-12-02T09:30:36Z','labels':{'app':'web'}},"
    " 'spec':{'nodeName':'node-a','containers':[{'name':'a'},{'name':'b'}]},"
    " 'status':{'phase':'Running','podIP':'10.0.0.5',"
    "  'containerStatuses':["
    "   {'name':'a','ready':true,'restartCount':2,'state':{'running':{}},"
    "    'lastState':{'terminated':{'exitCode':1,'finishedAt':'2026-12-02T09:34:36Z'}}},"
    "   {'name':'b','ready':false,'restartCount':1,"
    "    'state':{'waiting':{'reason':'CrashLoopBackOff'}}}]}},"
    " {'metadata':{'name':'fresh','creationTimestamp':'2026-12-02T09:35:31Z'},"
    "  'spec':{'containers':[{'name':'a'}]},'status':{'phase':'Pending'}},"
    " {'metadata':{'name':'going','creationTimestamp':'2026-11-30T05:35:36Z',"
    "  'deletionTimestamp':'2026-12-02T09:35:30Z'},"
    "  'spec':{'containers':[{'name':'a'}]},"
    "  'status':{'phase':'Running','containerStatuses':[{'name':'a','ready':true,"
    "   'restartCount':0,'state':{'running':{}}}]}}]";

Test(table, pod_columns)
{
    json_t *t = table_for("", "pods", "v1", pod_json, T0_NS);
    cr_assert_str_eq(str_at(t, "kind"), "Table");
    cr_assert_str_eq(str_at(t, "apiVersion"), "meta.k8s.io/v1");
    json_t *names = col_names(t);
    assert_json(names,
                "['Name','Ready','Status','Restarts','Age','IP','Node','Nominated Node',"
                "'Readiness Gates']",
                "pod columns");
    json_decref(names);
    json_t *defs = json_object_get(t, "columnDefinitions");
    cr_assert_str_eq(str_at(json_array_get(defs, 0), "format"), "name");
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(defs, 4), "priority")), 0);
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(defs, 5), "priority")), 1);
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(defs, 6), "priority")), 1);
    for (size_t i = 0; i < json_array_size(defs); i++) {
        json_t *d = json_array_get(defs, i);
        cr_assert(json_is_string(json_object_get(d, "type")) &&
                      json_is_string(json_object_get(d, "description")) &&
                      json_is_string(json_object_get(d, "format")),
                  "column %zu incomplete", i);
    }
    json_decref(t);
}

Test(table, pod_cells)
{
    json_t *t = table_for("", "pods", "v1", pod_json, T0_NS);
    cr_assert_eq(json_array_size(json_object_get(t, "rows")), 3);
    assert_json(cells(t, 0),
                "['web-1','1/2','CrashLoopBackOff','3 (60s ago)','5m','10.0.0.5','node-a',"
                "'<none>','<none>']",
                "web-1");
    assert_json(cells(t, 1),
                "['fresh','0/1','Pending','0','5s','<none>','<none>','<none>',"
                "'<none>']",
                "fresh");
    cr_assert_str_eq(json_string_value(json_array_get(cells(t, 2), 2)), "Terminating");
    cr_assert_str_eq(json_string_value(json_array_get(cells(t, 2), 4)), "2d4h");
    json_decref(t);
}

Test(table, rows_carry_partial_object_metadata)
{
    json_t *t = table_for("", "pods", "v1", pod_json, T0_NS);
    json_t *obj = json_object_get(json_array_get(json_object_get(t, "rows"), 0), "object");
    cr_assert_str_eq(str_at(obj, "kind"), "PartialObjectMetadata");
    cr_assert_str_eq(str_at(obj, "apiVersion"), "meta.k8s.io/v1");
    json_t *meta = json_object_get(obj, "metadata");
    cr_assert_str_eq(str_at(meta, "name"), "web-1");
    cr_assert_str_eq(str_at(meta, "uid"), "u1");
    cr_assert_str_eq(str_at(json_object_get(meta, "labels"), "app"), "web");
    cr_assert_null(json_object_get(obj, "spec"));
    json_decref(t);
}

Test(table, list_metadata)
{
    fakeapi__resource *r = fakeapi__registry_find(reg, "", "v1", "configmaps");
    json_t *items = J("[]");
    json_t *t = fakeapi__table_new(r, items, "99", "tok", T0_NS);
    assert_json(json_object_get(t, "metadata"), "{'resourceVersion':'99','continue':'tok'}",
                "meta");
    assert_json(json_object_get(t, "rows"), "[]", "no rows");
    json_decref(t);
    t = fakeapi__table_new(r, items, "100", NULL, T0_NS);
    assert_json(json_object_get(t, "metadata"), "{'resourceVersion':'100'}", "meta");
    json_decref(t);
    json_t *notarray = J("{}");
    cr_assert_null(fakeapi__table_new(r, notarray, "1", NULL, T0_NS));
    json_decref(notarray);
    json_decref(items);
    fakeapi__resource_unref(r);
}

Test(table, configmaps_and_secrets)
{
    json_t *t = table_for("", "configmaps", "v1",
                          "[{'metadata':{'name':'cfg','creationTimestamp':'2026-12-02T06:35:36Z'},"
                          "  'data':{'a':'1','b':'2'},'binaryData':{'c':'AA=='}},"
                          " {'metadata':{'name':'empty'}}]",
                          T0_NS);
    json_t *names = col_names(t);
    assert_json(names, "['Name','Data','Age']", "cm columns");
    json_decref(names);
    assert_json(cells(t, 0), "['cfg',3,'3h']", "cfg");
    assert_json(cells(t, 1), "['empty',0,'<unknown>']", "empty");
    json_decref(t);

    t = table_for("", "secrets", "v1",
                  "[{'metadata':{'name':'s','creationTimestamp':'2026-12-02T09:35:36Z'},"
                  "  'type':'kubernetes.io/tls','data':{'tls.crt':'', 'tls.key':''}}]",
                  T0_NS);
    assert_json(cells(t, 0), "['s','kubernetes.io/tls',2,'0s']", "secret");
    json_decref(t);
}

Test(table, deployments_and_services)
{
    json_t *t =
        table_for("apps", "deployments", "v1",
                  "[{'metadata':{'name':'web','creationTimestamp':'2026-12-02T09:25:36Z'},"
                  "  'spec':{'replicas':3,'selector':{'matchLabels':{'tier':'fe','app':'web'}},"
                  "   'template':{'spec':{'containers':[{'name':'c1','image':'nginx:1'},"
                  "                                     {'name':'c2','image':'busybox'}]}}},"
                  "  'status':{'readyReplicas':2,'updatedReplicas':3,'availableReplicas':2}}]",
                  T0_NS);
    json_t *names = col_names(t);
    assert_json(names,
                "['Name','Ready','Up-to-date','Available','Age','Containers','Images','Selector']",
                "deploy columns");
    json_decref(names);
    assert_json(cells(t, 0), "['web','2/3',3,2,'10m','c1,c2','nginx:1,busybox','app=web,tier=fe']",
                "deploy");
    json_decref(t);

    t = table_for("", "services", "v1",
                  "[{'metadata':{'name':'svc','creationTimestamp':'2026-12-02T09:35:00Z'},"
                  "  'spec':{'type':'NodePort','clusterIP':'10.96.0.10','selector':{'app':'web'},"
                  "   'ports':[{'port':80,'nodePort':30080},{'port':53,'protocol':'UDP'}]}},"
                  " {'metadata':{'name':'lb'},'spec':{'type':'LoadBalancer'}}]",
                  T0_NS);
    assert_json(cells(t, 0),
                "['svc','NodePort','10.96.0.10','<none>','80:30080/TCP,53/UDP','36s',"
                "'app=web']",
                "svc");
    assert_json(cells(t, 1),
                "['lb','LoadBalancer','<none>','<pending>','<none>','<unknown>',"
                "'<none>']",
                "lb");
    json_decref(t);
}

Test(table, nodes_namespaces_leases_jobs)
{
    json_t *t = table_for("", "nodes", "v1",
                          "[{'metadata':{'name':'n1','creationTimestamp':'2026-12-02T09:35:36Z',"
                          "  "
                          "'labels':{'node-role.kubernetes.io/worker':'','node-role.kubernetes.io/"
                          "control-plane':''}},"
                          "  'spec':{'unschedulable':true},"
                          "  'status':{'conditions':[{'type':'Ready','status':'True'}],"
                          "   'nodeInfo':{'kubeletVersion':'v1.32.0'},"
                          "   'addresses':[{'type':'InternalIP','address':'192.168.1.2'}]}}]",
                          T0_NS);
    assert_json(cells(t, 0),
                "['n1','Ready,SchedulingDisabled','control-plane,worker','0s','v1.32.0',"
                "'192.168.1.2','<none>','<unknown>','<unknown>','<unknown>']",
                "node");
    json_decref(t);

    t = table_for("", "namespaces", "v1",
                  "[{'metadata':{'name':'ns1'},'status':{'phase':'Terminating'}},"
                  " {'metadata':{'name':'ns2'}}]",
                  T0_NS);
    assert_json(cells(t, 0), "['ns1','Terminating','<unknown>']", "ns1");
    assert_json(cells(t, 1), "['ns2','Active','<unknown>']", "ns2");
    json_decref(t);

    t = table_for("coordination.k8s.io", "leases", "v1",
                  "[{'metadata':{'name':'l'},'spec':{'holderIdentity':'me'}}]", T0_NS);
    assert_json(cells(t, 0), "['l','me','<unknown>']", "lease");
    json_decref(t);

    t = table_for("batch", "jobs", "v1",
                  "[{'metadata':{'name':'j'},'spec':{'completions':3},"
                  "  'status':{'succeeded':1,'startTime':'2026-12-02T09:34:36Z'}},"
                  " {'metadata':{'name':'k'},'spec':{'parallelism':2},"
                  "  'status':{'startTime':'2026-12-02T09:00:00Z',"
                  "   'completionTime':'2026-12-02T09:00:45Z',"
                  "   'conditions':[{'type':'Complete','status':'True'}]}}]",
                  T0_NS);
    json_t *names = col_names(t);
    assert_json(names,
                "['Name','Status','Completions','Duration','Age','Containers','Images',"
                "'Selector']",
                "job columns");
    json_decref(names);
    assert_json(cells(t, 0), "['j','Running','1/3','60s','<unknown>','','','<none>']", "j");
    cr_assert_str_eq(json_string_value(json_array_get(cells(t, 1), 1)), "Complete");
    cr_assert_str_eq(json_string_value(json_array_get(cells(t, 1), 2)), "0/1 of 2");
    cr_assert_str_eq(json_string_value(json_array_get(cells(t, 1), 3)), "45s");
    json_decref(t);

    t = table_for(
        "batch", "cronjobs", "v1",
        "[{'metadata':{'name':'cj','creationTimestamp':'2026-12-02T09:35:36Z'},"
        "  'spec':{'schedule':'@hourly','suspend':true,'jobTemplate':{'spec':{"
        "   'template':{'spec':{'containers':[{'name':'c','image':'i'}]}}}}},"
        "  'status':{'active':[{'name':'x'}],'lastScheduleTime':'2026-12-02T09:35:06Z'}}]",
        T0_NS);
    assert_json(cells(t, 0), "['cj','@hourly','<none>','True',1,'30s','0s','c','i','<none>']", "cj");
    json_decref(t);
}

Test(table, crds_print_created_at_and_others_age)
{
    json_t *t = table_for(
        "apiextensions.k8s.io", "customresourcedefinitions", "v1",
        "[{'metadata':{'name':'x.y.z','creationTimestamp':'2026-01-01T00:00:00Z'}}]", T0_NS);
    json_t *names = col_names(t);
    assert_json(names, "['Name','Created At']", "crd columns");
    json_decref(names);
    assert_json(cells(t, 0), "['x.y.z','2026-01-01T00:00:00Z']", "crd");
    json_decref(t);

    /* A built-in kind the real server has no printer for: the default convertor's columns. */
    t = table_for("rbac.authorization.k8s.io", "roles", "v1",
                  "[{'metadata':{'name':'r','creationTimestamp':'2026-12-01T09:35:36.5Z'}}]",
                  T0_NS);
    names = col_names(t);
    assert_json(names, "['Name','Created At']", "default columns");
    json_decref(names);
    assert_json(cells(t, 0), "['r','2026-12-01T09:35:36Z']", "role");
    json_decref(t);
}

Test(table, crd_printer_columns_with_jsonpath)
{
    json_t *t = table_for(
        "stable.example.com", "crontabs", "v1",
        "[{'metadata':{'name':'ct1','creationTimestamp':'2026-12-02T09:33:36Z',"
        "  'labels':{'app.kubernetes.io/name':'cron'}},"
        "  'spec':{'cronSpec':'*/5 * * * *','replicas':2.0,"
        "   'containers':[{'name':'first','image':'img:1'},{'name':'second','image':'img:2'}]}},"
        " {'metadata':{'name':'bare'}}]",
        T0_NS);
    json_t *names = col_names(t);
    assert_json(names, "['Name','Spec','Replicas','Images','First','Labelled','Age']", "crd cols");
    json_decref(names);
    json_t *defs = json_object_get(t, "columnDefinitions");
    json_t *images = json_array_get(defs, 3);
    cr_assert_eq(json_integer_value(json_object_get(images, "priority")), 1);
    cr_assert_str_eq(str_at(images, "description"), "all images");
    cr_assert_str_eq(str_at(json_array_get(defs, 1), "description"),
                     "Custom resource definition column (in JSONPath format): .spec.cronSpec");
    cr_assert_str_eq(str_at(json_array_get(defs, 6), "type"), "date");
    assert_json(cells(t, 0), "['ct1','*/5 * * * *',2,'img:1,img:2','first','cron','2m']", "ct1");
    assert_json(cells(t, 1), "['bare',null,null,null,null,null,null]", "missing values");
    json_decref(t);
}

Test(table, crd_without_columns_shows_age)
{
    json_t *t = table_for(
        "stable.example.com", "crontabs", "v1beta1",
        "[{'metadata':{'name':'old','creationTimestamp':'2026-12-02T08:35:36Z'}}]", T0_NS);
    json_t *names = col_names(t);
    assert_json(names, "['Name','Age']", "columns");
    json_decref(names);
    assert_json(cells(t, 0), "['old','60m']", "cells");
    json_decref(t);
}

Test(table, crd_jsonpath_variants)
{
    add_crd_text(
        "{'metadata':{'name':'gadgets.acme.io'},'spec':{'group':'acme.io',"
        "'names':{'plural':'gadgets','kind':'Gadget'},'versions':[{'name':'v1','served':true,"
        "'storage':true,'additionalPrinterColumns':["
        "{'name':'Last','type':'string','jsonPath':'.spec.items[-1].n'},"
        "{'name':'Obj','type':'string','jsonPath':'.spec.obj'},"
        "{'name':'Ok','type':'boolean','jsonPath':'.status.ok'},"
        "{'name':'Ratio','type':'number','jsonPath':'.status.ratio'},"
        "{'name':'Num','type':'string','jsonPath':'.status.n'},"
        "{'name':'Braced','type':'integer','jsonPath':'{.status.n}'},"
        "{'name':'When','type':'date','jsonPath':'.status.when'}]}]}}");
    json_t *t = table_for("acme.io", "gadgets", "v1",
                          "[{'metadata':{'name':'g'},'spec':{'items':[{'n':'x'},{'n':'y'}],"
                          "  'obj':{'k':1}},"
                          "  'status':{'ok':true,'ratio':0.5,'n':7,'when':'not a time'}}]",
                          T0_NS);
    assert_json(cells(t, 0), "['g','y','{\\'k\\':1}',true,0.5,'7',7,'<invalid>']", "variants");
    json_decref(t);
}

/* ---- durations and time ------------------------------------------------------------- */

typedef struct dcase {
    int64_t secs;
    char want[16];
} dcase;

ParameterizedTestParameters(duration, human)
{
    static dcase cases[] = {
        {-5, "<invalid>"},
        {-1, "0s"},
        {0, "0s"},
        {5, "5s"},
        {119, "119s"},
        {120, "2m"},
        {200, "3m20s"},
        {599, "9m59s"},
        {600, "10m"},
        {179 * 60, "179m"},
        {3 * 3600, "3h"},
        {3 * 3600 + 300, "3h5m"},
        {8 * 3600, "8h"},
        {47 * 3600, "47h"},
        {48 * 3600, "2d"},
        {52 * 3600, "2d4h"},
        {191 * 3600, "7d23h"},
        {8 * 86400, "8d"},
        {729 * 86400, "729d"},
        {730 * 86400, "2y"},
        {731 * 86400, "2y1d"},
        {9 * 365 * 86400, "9y"},
    };
    return cr_make_param_array(dcase, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(dcase *c, duration, human)
{
    char buf[32];
    fakeapi__human_duration(c->secs * SEC, buf, sizeof buf);
    cr_assert_str_eq(buf, c->want, "%lld s", (long long)c->secs);
}

Test(duration, parse_time_forms)
{
    int64_t ns = 0;
    cr_assert_eq(fakeapi__parse_time("2026-12-02T09:35:36Z", &ns), 0);
    cr_assert_eq(ns, T0_NS);
    cr_assert_eq(fakeapi__parse_time("2026-12-02T09:35:36.123456Z", &ns), 0);
    cr_assert_eq(ns, T0_NS + 123456000);
    cr_assert_eq(fakeapi__parse_time("2026-12-02T11:35:36+02:00", &ns), 0);
    cr_assert_eq(ns, T0_NS);
    cr_assert_eq(fakeapi__parse_time("1970-01-01T00:00:00Z", &ns), 0);
    cr_assert_eq(ns, 0);
    ns = 77;
    cr_assert_eq(fakeapi__parse_time("2026-12-02 09:35:36Z", &ns), -1);
    cr_assert_eq(fakeapi__parse_time("2026-12-02T09:35:36", &ns), -1);
    cr_assert_eq(fakeapi__parse_time("2026-13-02T09:35:36Z", &ns), -1);
    cr_assert_eq(fakeapi__parse_time("2026-12-02T09:35:36Zjunk", &ns), -1);
    cr_assert_eq(fakeapi__parse_time(NULL, &ns), -1);
    cr_assert_eq(ns, 77, "output untouched on error");
}

/* ---- Accept negotiation -------------------------------------------------------------- */

Test(accept, kubectl_get_wants_table)
{
    cr_assert(fakeapi__table_wanted("application/json;as=Table;v=v1;g=meta.k8s.io,"
                                    "application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
                                    "application/json"));
    cr_assert(fakeapi__table_wanted("application/json; as=Table; g=meta.k8s.io; v=v1"));
}

Test(accept, plain_json_does_not)
{
    cr_assert_not(fakeapi__table_wanted("application/json"));
    cr_assert_not(fakeapi__table_wanted("*/*"));
    cr_assert_not(fakeapi__table_wanted(""));
    cr_assert_not(fakeapi__table_wanted(NULL));
    cr_assert_not(fakeapi__table_wanted("application/json, application/json;as=Table;v=v1;"
                                        "g=meta.k8s.io"));
}

Test(accept, skips_what_the_server_cannot_produce)
{
    /* protobuf first (client-go defaults), then the JSON table. */
    cr_assert(fakeapi__table_wanted("application/vnd.kubernetes.protobuf;as=Table;v=v1;"
                                    "g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io"));
    cr_assert_not(fakeapi__table_wanted("application/json;as=Table;v=v1beta1;g=meta.k8s.io"));
    cr_assert_not(fakeapi__table_wanted("application/json;as=Table;v=v1;g=other.io"));
    cr_assert_not(fakeapi__table_wanted("application/json;as=PartialObjectMetadataList;v=v1;"
                                        "g=meta.k8s.io,application/json"));
}

/* The text of a resource list: the document, written as JSON_COMPACT. */
static void assert_text_is_doc(fakeapi__registry *r, const char *group, const char *version)
{
    size_t len = 0;
    char *text = fakeapi__disc_resources_text(r, group, version, &len);
    json_t *doc = fakeapi__disc_resources(r, group, version);
    cr_assert_not_null(text, "%s/%s", group, version);
    cr_assert_not_null(doc);
    char *want = json_dumps(doc, JSON_COMPACT);
    cr_assert_eq(len, strlen(text));
    cr_assert_str_eq(text, want, "%s/%s", group, version);
    free(want);
    free(text);
    json_decref(doc);
}

/* Lists of built-in group-versions are written once per process; every
 * registry gets the same text, and a group-version where a CRD adds a kind
 * is written from that registry's own kinds. */
Test(discovery, resource_list_text_follows_each_registry)
{
    fakeapi__registry *other = fakeapi__registry_new();
    cr_assert_not_null(other);
    for (int round = 0; round < 2; round++) {
        assert_text_is_doc(reg, "", "v1");
        assert_text_is_doc(other, "apps", "v1");
        assert_text_is_doc(reg, "apps", "v1");
        assert_text_is_doc(reg, "stable.example.com", "v1");
    }
    size_t len = 0;
    cr_assert_null(fakeapi__disc_resources_text(other, "stable.example.com", "v1", &len));
    cr_assert_null(fakeapi__disc_resources_text(reg, "nothing.example.com", "v1", &len));
    /* A custom kind in a built-in group-version: that registry's list has it. */
    json_t *crd = J("{'apiVersion':'apiextensions.k8s.io/v1','kind':'CustomResourceDefinition',"
                    " 'metadata':{'name':'gizmos.apps'},"
                    " 'spec':{'group':'apps','scope':'Namespaced',"
                    "  'names':{'plural':'gizmos','singular':'gizmo','kind':'Gizmo'},"
                    "  'versions':[{'name':'v1','served':true,'storage':true,"
                    "   'schema':{'openAPIV3Schema':{'type':'object'}}}]}}");
    char err[256] = "";
    cr_assert_eq(fakeapi__registry_add_crd(other, crd, err, sizeof err), 0, "%s", err);
    json_decref(crd);
    char *text = fakeapi__disc_resources_text(other, "apps", "v1", &len);
    cr_assert_not_null(strstr(text, "\"gizmos\""));
    free(text);
    assert_text_is_doc(other, "apps", "v1");
    text = fakeapi__disc_resources_text(reg, "apps", "v1", &len);
    cr_assert_null(strstr(text, "\"gizmos\""));
    free(text);
    fakeapi__registry_free(other);
}
